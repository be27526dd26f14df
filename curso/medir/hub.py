"""Para `medir hub`: ¿aguantan los veredictos una máquina cargada como la de un hub de clase?

En un hub, varios alumnos corren `comprobar N` a la vez mientras quien da el curso califica, todos
en la misma máquina. Esta medida lo hace con espacios correctos (copias de los puntos de control,
cada una con su nombre en un comentario: como alumnos distintos), cada orden en su proceso, como
la lanzaría cada uno desde su terminal:

1. tres `python -m curso comprobar 7` a la vez;
2. `python -m curso calificar` de una clase de dos (uno en la 07 y otro en la 06, los dos con su
   cuaderno de la 02 resuelto al lado) mientras corren dos `python -m curso comprobar 6`.

Con `--stress`, además, las dos otra vez bajo `stress-ng --cpu 12 --io 1` (la carga de fuera:
doce procesos que queman CPU y uno que hace sync sin parar). Todo correcto debe salir en verde y
con 0 colgados: cada `comprobar` sale con 0, y cada celda de `calificar` es ✔ (o gris: la 07 de
quien va por la 06) y no pasó por la vuelta a solas (`otra_vez_a_solas`: nada se colgó la primera vez).

Dice además, de todos los tests, los que más gastaron en un tramo (de una señal de vida a la
siguiente: lo que mide la regla de `curso/comprobaciones/colgados.py`): de reloj, de CPU y parados,
frente a los límites. Esas son las cifras de los límites de colgados.py. Carga la máquina varios
minutos: en una compartida, una vez, no en bucle.

    python -m curso medir hub [--stress] [--solo comprobar|calificar]
"""
import argparse
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from curso import rutas
from curso.clase.calificar import SIN_EMPEZAR
from curso.comprobaciones import aparte, colgados
from curso.medir.clase_de_treinta import escribir_cuaderno_02

STRESS = ["stress-ng", "--cpu", "12", "--io", "1", "--quiet"]
LOS_QUE_MAS = 5  # tests que se enseñan por cada cifra


def escribir_espacio(espacio, punto, nombre):
    """Los módulos del punto de control `punto` en `espacio`, cada uno con `# nombre` al final."""
    espacio.mkdir(parents=True)
    for modulo in sorted(punto.glob("*.py")):
        (espacio / modulo.name).write_text(modulo.read_text(encoding="utf-8") + f"\n# {nombre}\n",
                                           encoding="utf-8")
    return espacio


def lanzar(orden, salida, entorno):
    """Un proceso de `python -m curso ...` con su salida en el fichero `salida`; (proceso, salida)."""
    with open(salida, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", "curso", *orden], stdout=f, stderr=subprocess.STDOUT,
                                env=entorno, stdin=subprocess.DEVNULL), salida


def carga():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def esperar(procesos):
    """Espera a todos los {nombre: (proceso, salida)}; {nombre: (código, segundos, texto de su
    salida)} en el orden de `procesos`, y la carga más alta que se vio mientras."""
    inicio, hechos, pico = time.monotonic(), {}, 0.0
    while len(hechos) < len(procesos):
        pico = max(pico, carga())
        for nombre, (proceso, _) in procesos.items():
            if nombre not in hechos and proceso.poll() is not None:
                hechos[nombre] = (proceso.returncode, time.monotonic() - inicio)
        time.sleep(0.5)
    return {n: (*hechos[n], s.read_text(encoding="utf-8", errors="replace")) for n, (_, s) in procesos.items()}, pico


def cifras_de_comprobar(nombre, codigo, segundos, texto):
    return {"orden": nombre, "codigo": codigo, "segundos": segundos, "colgados": colgados_en(texto),
            "verde": codigo == 0, "final": texto.strip().splitlines()[-1] if texto.strip() else ""}


def colgados_en(texto):
    return sum(1 for linea in texto.splitlines() if "colgado" in linea)


def celdas_de(csv_texto):
    """{alumno: [estados de sus celdas]} del CSV de calificar."""
    filas = csv.DictReader(io.StringIO(csv_texto))
    return {f["alumno"]: [v for k, v in f.items() if k.endswith(" estado") or k == "todo junto estado"]
            for f in filas}


def mala(celda):
    """¿Roja o ámbar? (Una lección que el alumno aún no ha empezado es gris: no cuenta.)"""
    return celda != "✔" and celda != SIN_EMPEZAR


def comprobar_a_la_vez(carpeta, entorno, salidas):
    """Tres comprobar 7 a la vez; las cifras de cada uno."""
    punto = rutas.puntos_de_control()[7]
    procesos = {}
    for i in range(1, 4):
        espacio = escribir_espacio(carpeta / f"alumno{i}" / "mi_agente", punto, f"alumno{i}")
        procesos[f"comprobar 7 (alumno{i})"] = lanzar(["comprobar", "7", "--espacio", str(espacio)],
                                                      salidas / f"comprobar7-{i}.txt", entorno)
    hechos, pico = esperar(procesos)
    return [cifras_de_comprobar(nombre, *hecho) for nombre, hecho in hechos.items()], pico


def calificar_con_dos_comprobar(carpeta, entorno, salidas):
    """calificar de una clase de dos (07 y 06) mientras corren dos comprobar 6; las cifras."""
    puntos = rutas.puntos_de_control()
    clase = carpeta / "clase"
    for nombre, n in (("ana", 7), ("beto", 6)):
        escribir_espacio(clase / nombre / "mi_agente", puntos[n], nombre)
        escribir_cuaderno_02(clase / nombre, nombre, "bien")  # la 02 se califica por su cuaderno
    procesos = {"calificar (2 alumnos)": lanzar(["calificar", str(clase), "--salida", str(carpeta / "notas")],
                                                salidas / "calificar.txt", entorno)}
    for i in range(1, 3):
        espacio = escribir_espacio(carpeta / f"otro{i}" / "mi_agente", puntos[6], f"otro{i}")
        procesos[f"comprobar 6 (otro{i})"] = lanzar(["comprobar", "6", "--espacio", str(espacio)],
                                                    salidas / f"comprobar6-{i}.txt", entorno)
    hechos, pico = esperar(procesos)
    cifras = []
    for nombre, (codigo, segundos, texto) in hechos.items():
        if nombre.startswith("calificar"):
            tabla = carpeta / "notas" / "calificaciones.csv"
            celdas = celdas_de(tabla.read_text(encoding="utf-8-sig")) if tabla.exists() else {}
            malas = {a: [c for c in cs if mala(c)] for a, cs in celdas.items()}
            cifras.append({"orden": nombre, "codigo": codigo, "segundos": segundos,
                           "colgados": colgados_en(texto), "a_solas": "a solas]" in texto,
                           "verde": codigo == 0 and bool(celdas) and not any(malas.values()),
                           "final": "; ".join(f"{a}: {', '.join(m) or 'todo ✔'}" for a, m in malas.items())})
        else:
            cifras.append(cifras_de_comprobar(nombre, codigo, segundos, texto))
    return cifras, pico


def los_que_mas(gasto):
    """De lo apuntado por aparte (un tramo por línea), el máximo de cada test en cada cifra."""
    maximos = {}
    for linea in gasto.read_text(encoding="utf-8").splitlines() if gasto.exists() else []:
        e = json.loads(linea)
        m = maximos.setdefault(e["test"], {"reloj": 0.0, "cpu": 0.0, "parado": 0.0, "hueco": 0.0})
        for cifra in m:
            m[cifra] = max(m[cifra], e[cifra])
    return {cifra: sorted(((m[cifra], t) for t, m in maximos.items()), reverse=True)[:LOS_QUE_MAS]
            for cifra in ("reloj", "cpu", "parado", "hueco")}


def escenario(nombre, hacer, con_stress):
    """Corre un escenario (con stress-ng alrededor si `con_stress`); sus cifras."""
    with tempfile.TemporaryDirectory(prefix="curso-medir-hub-") as tmp:
        carpeta = Path(tmp)
        salidas = carpeta / "salidas"
        salidas.mkdir()
        entorno = {**os.environ, aparte.VARIABLE_GASTO: str(carpeta / "gasto.jsonl")}
        stress = subprocess.Popen(STRESS, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True) if con_stress else None
        print(f"\n=== {nombre}{' bajo stress-ng' if con_stress else ''} (carga al empezar {carga():.1f})",
              flush=True)
        try:
            cifras, pico = hacer(carpeta, entorno, salidas)
        finally:
            if stress is not None:
                os.killpg(stress.pid, signal.SIGTERM)
                stress.wait()
        for c in cifras:
            print(f"  {'✔' if c['verde'] else '✘'} {c['orden']}: salió con {c['codigo']} en {c['segundos']:.0f} s, "
                  f"{c['colgados']} colgados{'; pasó por la vuelta a solas' if c.get('a_solas') else ''}"
                  f" · {c['final']}", flush=True)
        print(f"  carga más alta mientras: {pico:.1f}")
        mas = los_que_mas(carpeta / "gasto.jsonl")
        for cifra, unidad in (("reloj", "s de reloj"), ("cpu", "s de CPU"), ("parado", "s seguidos parado"),
                              ("hueco", "s entre dos lecturas de /proc")):
            print(f"  los que más {unidad} en un tramo:")
            for valor, test in mas[cifra]:
                print(f"    {valor:6.1f}  {test}")
        return {"escenario": nombre, "stress": con_stress, "ordenes": cifras, "carga_maxima": pico,
                "los_que_mas": mas}


ESCENARIOS = {"comprobar": ("tres comprobar 7 a la vez", comprobar_a_la_vez),
              "calificar": ("calificar (07 y 06) con dos comprobar 6 a la vez", calificar_con_dos_comprobar)}


def main(argumentos=()):
    analizador = argparse.ArgumentParser(prog="python -m curso medir hub")
    analizador.add_argument("--stress", action="store_true", help="además, todo otra vez bajo stress-ng")
    analizador.add_argument("--solo", choices=list(ESCENARIOS), help="solo este escenario")
    args = analizador.parse_args(list(argumentos))
    if args.stress and shutil.which("stress-ng") is None:
        print("✘ --stress necesita stress-ng (en Debian: apt-get install -y stress-ng).")
        return 2
    print(f"Límites de colgados.py: {aparte.LIMITE_TEST} s de CPU, {aparte.LIMITE_TEST} s parado, "
          f"{aparte.LIMITE_TEST * colgados.RELOJ_POR_LIMITE} s de reloj, por test; {os.cpu_count()} núcleos.")
    resultados = []
    for con_stress in ([False, True] if args.stress else [False]):
        for clave, (nombre, hacer) in ESCENARIOS.items():
            if args.solo in (None, clave):
                resultados.append(escenario(nombre, hacer, con_stress))
    todo_verde = all(c["verde"] and not c["colgados"] and not c.get("a_solas")
                     for r in resultados for c in r["ordenes"])
    print(f"\n{'✔' if todo_verde else '✘'} {'Todo en verde y 0 colgados' if todo_verde else 'Algo no salió en verde o se colgó'}.")
    return {"escenarios": resultados, "cumple_objetivo": todo_verde}
