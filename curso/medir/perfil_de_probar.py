"""Para `medir probar` (quien escribe el curso): dónde se va la CPU de `python -m curso probar`, parte a parte, fichero a fichero y test a test.

`python -m curso medir probar` corre la suite entera, como `probar`, con este módulo cargado en
cada pytest como complemento (`-p curso.medir.perfil_de_probar`), y escribe el perfil en
`perfil_de_probar.md` (en la carpeta desde la que se llama) además de imprimirlo, y cada test
en `perfil_de_probar.json`:

- la CPU de cada parte (usuario + sistema de todo su árbol de procesos, de `os.wait4`) y su tiempo;
- los 15 ficheros y los 15 tests que más CPU gastan, y lo que arrancan;
- lo que arranca la suite entera, contado: núcleos de Jupyter, intérpretes de Python (por su
  módulo o su guion), servidores (JupyterLab, el de ensayo), clusters de PostgreSQL (`initdb`),
  navegadores (el controlador de Playwright, que abre Chromium) y procesos hechos con `fork`.

La CPU de un test es lo que suben, de su preparación a su recogida, la del propio pytest y la de
sus hijos ya recogidos (`getrusage` de RUSAGE_SELF y RUSAGE_CHILDREN). Lo que arranca un test se
cuenta en el pytest de su parte (cada `subprocess.Popen` y cada `fork`); lo que arrancan a su vez
esos hijos no se cuenta aparte, pero su CPU sí está en la del test. Lo que arranca una fixture de
sesión (un JupyterLab, un cluster) se apunta al test que la pidió primero, y su CPU al test en
cuya recogida se para (el último): por eso el perfil suma también por fichero. Lo que gasta cada
pytest fuera de los tests (arrancar, importar, recoger) sale como «fuera de los tests».
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest

from curso.autor.niveles import fixtures_compartidas  # lo que comparte un test, como lo ven los niveles

VARIABLE = "CURSO_PERFIL"  # la carpeta donde cada pytest de la parte deja su parte del perfil
RAPIDO, PROFUNDO = "rápido · ", "profundo · "  # delante del nombre de cada parte, su nivel
CUANTOS = 15
ORDEN_DE_SHELL = "orden de shell (sh -c)"


# --- El complemento de pytest --------------------------------------------------------------------

def cpu_ahora():
    """Los segundos de CPU de este proceso y de sus hijos ya recogidos, hasta ahora."""
    yo = resource.getrusage(resource.RUSAGE_SELF)
    hijos = resource.getrusage(resource.RUSAGE_CHILDREN)
    return yo.ru_utime + yo.ru_stime + hijos.ru_utime + hijos.ru_stime


def que_arranca(argumentos):
    """Un nombre corto para lo que arranca una orden: «núcleo de Jupyter», «python -m curso…»,
    «python guion.py», «initdb», «JupyterLab», «navegador (Playwright)»... Una orden en un solo
    texto (`shell=True`) es «orden de shell»: su texto lleva datos de cada test (`sleep 300.27…`) y
    no diría qué clase de cosa es."""
    if isinstance(argumentos, (str, bytes)):
        return ORDEN_DE_SHELL
    partes = [os.fsdecode(a) for a in argumentos]
    if not partes:
        return "?"
    programa = os.path.basename(partes[0])
    texto = " ".join(partes)
    if "ipykernel" in texto:
        return "núcleo de Jupyter"
    if "jupyter-lab" in texto or "jupyterlab" in texto or programa == "jupyter":
        return "JupyterLab"
    if "playwright" in texto:
        return "navegador (Playwright)"
    if programa.startswith("python"):
        resto = partes[1:]
        while resto and resto[0].startswith("-") and resto[0] not in ("-m", "-c"):
            resto = resto[1:]
        if resto[:1] == ["-m"] and len(resto) > 1:
            return f"python -m {resto[1]}"
        if resto[:1] == ["-c"]:
            return "python -c"
        return f"python {os.path.basename(resto[0])}" if resto else "python"
    return programa


class Perfil:
    """Lo que apunta el complemento en un pytest: por test, su CPU, su tiempo y lo que arranca."""

    def __init__(self):
        self.pruebas = {}
        self.actual = None
        self.cpu_al_empezar = cpu_ahora()
        self.arranques = Counter()  # lo que se arranca fuera de un test (recogida, sesión)
        self.vistas = set()  # las fixtures compartidas que ya pidió algún test de este pytest

    def apuntar_arranque(self, que):
        (self.pruebas[self.actual]["arranca"] if self.actual else self.arranques)[que] += 1


_perfil = None


def _envolver_popen(perfil):
    original = subprocess.Popen.__init__

    def __init__(self, args, *resto, **claves):
        perfil.apuntar_arranque(que_arranca(args))
        original(self, args, *resto, **claves)

    subprocess.Popen.__init__ = __init__
    os.register_at_fork(after_in_parent=lambda: perfil.apuntar_arranque("fork"))


def pytest_configure(config):
    global _perfil
    if os.environ.get(VARIABLE) and _perfil is None:
        _perfil = Perfil()
        _envolver_popen(_perfil)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _perfil is None:
        yield
        return
    compartidas = fixtures_compartidas(item)
    _perfil.pruebas[item.nodeid] = {"cpu": 0.0, "segundos": 0.0, "arranca": Counter(), "preparacion": 0.0,
                                    "compartidas": compartidas,
                                    "nuevas": [f for f in compartidas if f not in _perfil.vistas]}
    _perfil.vistas.update(compartidas)
    _perfil.actual = item.nodeid
    cpu, t = cpu_ahora(), time.monotonic()
    yield
    _perfil.pruebas[item.nodeid]["cpu"] = cpu_ahora() - cpu
    _perfil.pruebas[item.nodeid]["segundos"] = time.monotonic() - t
    _perfil.actual = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    """Lo que tarda y gasta la preparación sola: si es mucho, lo lento (o lo profundo) son las
    fixtures compartidas que se prepararon en ella (`nuevas`), y lo son para todos los tests que
    las piden."""
    cpu, t = cpu_ahora(), time.monotonic()
    yield
    if _perfil is not None and item.nodeid in _perfil.pruebas:
        _perfil.pruebas[item.nodeid]["preparacion"] = time.monotonic() - t
        _perfil.pruebas[item.nodeid]["cpu_preparacion"] = cpu_ahora() - cpu


def pytest_unconfigure(config):
    carpeta = os.environ.get(VARIABLE)
    if _perfil is None or not carpeta:
        return
    datos = {"fuera_de_los_tests": {"arranca": dict(_perfil.arranques)},
             "cpu_de_la_sesion": cpu_ahora() - _perfil.cpu_al_empezar,
             "pruebas": {n: {**p, "arranca": dict(p["arranca"])} for n, p in _perfil.pruebas.items()}}
    Path(carpeta, f"{uuid.uuid4().hex}.json").write_text(json.dumps(datos), encoding="utf-8")


# --- El perfil: juntar lo de cada parte ------------------------------------------------------------

def leer(carpeta):
    """Lo que dejaron los pytest de una parte en `carpeta`, junto: (pruebas, arranques fuera de
    los tests, CPU de sus sesiones de pytest)."""
    pruebas, fuera, sesiones = {}, Counter(), 0.0
    for fichero in sorted(Path(carpeta).glob("*.json")):
        datos = json.loads(fichero.read_text(encoding="utf-8"))
        pruebas.update(datos["pruebas"])
        fuera.update(datos["fuera_de_los_tests"]["arranca"])
        sesiones += datos["cpu_de_la_sesion"]
    return pruebas, fuera, sesiones


def por_fichero(pruebas):
    """{fichero: {"cpu", "segundos", "tests", "arranca"}} sumando los tests de cada fichero."""
    ficheros = {}
    for nodeid, p in pruebas.items():
        f = ficheros.setdefault(nodeid.split("::")[0], {"cpu": 0.0, "segundos": 0.0, "tests": 0,
                                                        "arranca": Counter()})
        f["cpu"] += p["cpu"]
        f["segundos"] += p["segundos"]
        f["tests"] += 1
        f["arranca"].update(p["arranca"])
    return ficheros


def arranques_en_texto(arranca):
    return ", ".join(f"{n} {que}" for que, n in Counter(arranca).most_common()) or "nada"


def informe(partes, pruebas, fuera):
    """El perfil en Markdown. `partes`: [(nombre, segundos, cpu, cpu de sus tests)]."""
    lineas = ["# Perfil de `python -m curso probar`", ""]
    cpu_total = sum(p[2] for p in partes)
    lineas += [f"CPU de todas las partes: {cpu_total:.0f} s; tests: {len(pruebas)}."]
    for nivel, prefijo in (("el nivel rápido (`probar`)", RAPIDO), ("el resto (`probar --profundo`)", PROFUNDO)):
        del_nivel = [p for p in partes if p[0].startswith(prefijo)]
        if del_nivel:
            lineas.append(f"De {nivel}: {sum(p[2] for p in del_nivel):.0f} s de CPU en {len(del_nivel)} partes.")
    lineas += ["",
               "| parte | segundos | CPU (s) | CPU de sus tests (s) | fuera de los tests (s) |", "|---|---|---|---|---|"]
    for nombre, segundos, cpu, de_tests in sorted(partes, key=lambda p: -p[2]):
        lineas.append(f"| {nombre} | {segundos:.0f} | {cpu:.1f} | {de_tests:.1f} | {cpu - de_tests:.1f} |")
    ficheros = por_fichero(pruebas)
    lineas += ["", f"## Los {CUANTOS} ficheros que más CPU gastan", "",
               "| fichero | tests | CPU (s) | segundos | arranca |", "|---|---|---|---|---|"]
    for f, d in sorted(ficheros.items(), key=lambda x: -x[1]["cpu"])[:CUANTOS]:
        lineas.append(f"| {f} | {d['tests']} | {d['cpu']:.1f} | {d['segundos']:.1f} | {arranques_en_texto(d['arranca'])} |")
    lineas += ["", f"## Los {CUANTOS} tests que más CPU gastan", "",
               "| test | CPU (s) | segundos | arranca |", "|---|---|---|---|"]
    for n, d in sorted(pruebas.items(), key=lambda x: -x[1]["cpu"])[:CUANTOS]:
        lineas.append(f"| {n} | {d['cpu']:.1f} | {d['segundos']:.1f} | {arranques_en_texto(d['arranca'])} |")
    total = Counter(fuera)
    for p in pruebas.values():
        total.update(p["arranca"])
    lineas += ["", "## Lo que arranca la suite entera (desde el pytest de cada parte)", "",
               "| qué | veces |", "|---|---|"]
    lineas += [f"| {que} | {n} |" for que, n in total.most_common()]
    return "\n".join(lineas) + "\n"


def main():
    """Corre `probar --todo` (los dos niveles) con el complemento y escribe el perfil en
    perfil_de_probar.md."""
    from curso.autor import probar
    # Los dos niveles, cada uno con sus partes, como los corre .ci/run (uno y después el otro): así
    # el perfil dice también lo que gasta cada nivel.
    lista = ([(f"{RAPIDO}{nombre}", argumentos) for nombre, argumentos in probar.nivel_rapido()]
             + [(f"{PROFUNDO}{nombre}", argumentos) for nombre, argumentos in probar.nivel_profundo()])
    resultados = []
    with tempfile.TemporaryDirectory(prefix="curso-perfil-") as carpeta:
        def una(parte):
            nombre, argumentos = parte
            suya = Path(carpeta, f"parte-{lista.index(parte)}")
            suya.mkdir()
            hecho = probar.correr(nombre, argumentos, ["-p", "curso.medir.perfil_de_probar"], {VARIABLE: str(suya)})
            return hecho, suya

        inicio = time.monotonic()
        hechas = probar.en_paralelo(una, lista)
        pared = time.monotonic() - inicio
        todas, fuera, de_cada_nivel = {}, Counter(), {RAPIDO: set(), PROFUNDO: set()}
        for (nombre, _), ((salida, codigo, segundos, _, cpu), suya) in zip(lista, hechas, strict=True):
            if codigo != 0:  # lo que falló, entero: el perfil solo no diría por qué
                print("\n" + salida, end="")
            pruebas, arranques, _ = leer(suya)
            todas.update(pruebas)
            de_cada_nivel[RAPIDO if nombre.startswith(RAPIDO) else PROFUNDO].update(pruebas)
            fuera.update(arranques)
            resultados.append((nombre + ("" if codigo == 0 else " (✘)"), segundos, cpu,
                               sum(p["cpu"] for p in pruebas.values())))
    texto = informe(resultados, todas, fuera)
    cpu = sum(r[2] for r in resultados)
    texto += f"\nTiempo total: {pared:.0f} s; CPU total: {cpu:.0f} s.\n"
    Path("perfil_de_probar.md").write_text(texto, encoding="utf-8")
    datos = {"partes": resultados, "pruebas": todas, "fuera_de_los_tests": dict(fuera)}
    Path("perfil_de_probar.json").write_text(json.dumps(datos, ensure_ascii=False, indent=0), encoding="utf-8")
    print(texto)
    print("Escrito en perfil_de_probar.md (y cada test en perfil_de_probar.json).", file=sys.stderr)
    if all(not r[0].endswith("(✘)") for r in resultados):  # con una parte rota, sus tiempos no valen
        from curso import rutas
        cuantos = probar.apuntar_lentos(todas)
        print(f"Apuntados {cuantos} tests lentos en {probar.LENTOS.relative_to(rutas.RAIZ)} "
              "(--rapido no los corre).", file=sys.stderr)
        from curso.autor import niveles
        cuantos = niveles.apuntar_profundos(todas)
        print(f"Apuntados {cuantos} tests profundos por lo que gastan en {niveles.PROFUNDOS.relative_to(rutas.RAIZ)} "
              "(probar los deja para probar --todo).", file=sys.stderr)
        for nivel, prefijo in (("rapido", RAPIDO), ("profundo", PROFUNDO)):
            del_nivel = {n: p for n, p in todas.items() if n in de_cada_nivel[prefijo]}
            probar.apuntar_tiempos({f: d["segundos"] for f, d in por_fichero(del_nivel).items()}, nivel=nivel)
        print(f"Y lo que tardó cada fichero en {probar.TIEMPOS.relative_to(rutas.RAIZ)} "
              "(para repartir los tests del curso en sus partes).", file=sys.stderr)
    return {"segundos": pared, "cpu": cpu}
