"""Para `medir calificar`: cuánto tarda `calificar` con una clase de 30, en esta máquina.

Arma una clase de 30 alumnos en una carpeta temporal, a partir de los puntos de control: unos con
todo hecho, otros que se quedaron en la lección 00, 01, 03 o 05, y otros con los errores típicos
(un `permitido` que acepta cualquier cosa que parezca un sí, un `corte` que se pasa en uno, un
error de sintaxis, el ejercicio 3.2 sin hacer, un compare-and-swap que no compara, un bucle que no acaba, un módulo que
deja un `setsid sleep 301` en marcha, un reintento de los 400, un buzón en PostgreSQL sin
`ON CONFLICT`, el «Download ZIP» de GitHub con el espacio una carpeta más abajo y una carpeta sin
espacio, y uno con un mi_agente/ vacío). Algunos traen su cuaderno de la lección 02 al lado (bien,
sin tocar o con el 2.1 mal). Cada alumno lleva su nombre en un comentario al final de cada módulo (y
de cada celda de ejercicio): no hay dos espacios iguales y no comparten la caché, como en una
clase de verdad.

Califica la clase dos veces: la primera, con la caché vacía; la segunda, sin cambiar nada (lo que
tarda volver a calificar). Dice el tiempo y la CPU de todo (esta orden y sus procesos, también los
servidores PostgreSQL de los tests) y por alumno-lección: 30 alumnos × las lecciones que se
califican. La CPU la da el sistema (`getrusage`) de los procesos ya recogidos.
"""
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from curso import rutas

ALUMNOS = 30

# (nombre, punto de control del que sale, [(módulo, texto de referencia, texto del error)], dónde)
# «dónde»: la ruta de su espacio dentro de su carpeta; None: no tiene espacio.
AVISO_32 = ('raise NotImplementedError("Ejercicio 3.2 pendiente: completa corte() en su celda, '
            'ejecútala y comprueba con comprobar(\\"3.2\\").")')
ERRORES = {
    "permitido_sin_is_true": ("permisos", "return usuario(nombre, entrada) is True",
                              "return bool(usuario(nombre, entrada))"),
    "corte_de_mas": ("compactar", "return len(M) - (2 * k - 1)", "return len(M) - 2 * k"),
    "ejercicio_32_sin_hacer": ("compactar", "return len(M) - (2 * k - 1)", AVISO_32),
    "cas_que_no_compara": ("resumenes", 'WHERE id=? AND resumen_activo IS ?",\n        (nuevo, ejecucion, base),',
                           'WHERE id=?",\n        (nuevo, ejecucion),'),
    "bucle_sin_fin": ("bucle", "    M = list(inicio)\n", "    M = list(inicio)\n    while True:\n        pass\n"),
    "deja_un_setsid": ("api", "import json\n", "import json\nimport subprocess as _sp\n"
                                               "_sp.Popen(['setsid', 'sleep', '301'])\n"),
    "reintenta_los_400": ("reintentos", "REINTENTABLES = {408, 409, 429}", "REINTENTABLES = {400, 408, 409, 429}"),
    "sintaxis": ("compactar", "def corte(M, k):", "def corte(M, k)"),
    "sin_on_conflict": ("buzon_pg", '"ON CONFLICT (entrega) DO NOTHING", (entrega', '"", (entrega'),
}
MI_AGENTE = "mi_agente"
CLASE = (
    [(f"completo{i}", 7, [], MI_AGENTE) for i in range(1, 9)]
    + [(f"en_la_03_{i}", 3, [], MI_AGENTE) for i in range(1, 5)]
    + [(f"en_la_05_{i}", 5, [], MI_AGENTE) for i in range(1, 4)]
    + [(f"en_la_01_{i}", 1, [], MI_AGENTE) for i in range(1, 3)]
    + [("en_la_00_1", 0, [], MI_AGENTE), ("vacio", None, [], MI_AGENTE)]
    + [("permitido", 7, ["permitido_sin_is_true"], MI_AGENTE),
       ("corte", 4, ["corte_de_mas"], MI_AGENTE),
       ("pendiente_32", 3, ["ejercicio_32_sin_hacer"], MI_AGENTE),
       ("cas", 5, ["cas_que_no_compara"], MI_AGENTE),
       ("colgado", 3, ["bucle_sin_fin"], MI_AGENTE),
       ("setsid", 1, ["deja_un_setsid"], MI_AGENTE),
       ("reintentos", 6, ["reintenta_los_400"], MI_AGENTE),
       ("buzon_pg", 7, ["sin_on_conflict"], MI_AGENTE),
       ("sintaxis", 3, ["sintaxis"], MI_AGENTE),
       ("ivan", 4, [], f"construye-tu-agente-main/{MI_AGENTE}"),
       ("sin_espacio", 0, [], None)]
)


# Quién trae su cuaderno de la lección 02 al lado de su mi_agente/, y cómo: "bien" (las celdas de
# solutions/), "esbozo" (como lo da el curso: sin empezar) o "sin_cache" (2.1 sin lo de la caché).
CUADERNOS_02 = {**{f"completo{i}": "bien" for i in range(1, 9)}, "en_la_03_1": "esbozo",
                "en_la_05_1": "sin_cache", "en_la_05_2": "bien"}


def escribir_cuaderno_02(carpeta, nombre, como):
    """notebooks/02_la_ventana.ipynb en `carpeta`: el del curso con sus celdas de ejercicio escritas
    `como`, y el nombre del alumno en un comentario (no hay dos iguales)."""
    import json
    from curso.clase import cuadernos_de_la_clase as cuadernos
    buenas = cuadernos.celdas_de_ejercicios(rutas.SOLUCIONES / "02_la_ventana.ipynb")
    if como == "sin_cache":
        buenas["2.1"] = cambiar(buenas["2.1"], ' + usage.get("cache_read_input_tokens", 0)', "")
    datos = json.loads((rutas.CUADERNOS / "02_la_ventana.ipynb").read_text(encoding="utf-8"))
    for celda in datos["cells"]:
        id = celda.get("metadata", {}).get("curso", {}).get("ejercicio")
        if id in buenas and como != "esbozo":
            celda["source"] = buenas[id] + f"\n# {nombre}\n"
    (carpeta / "notebooks").mkdir(parents=True, exist_ok=True)
    (carpeta / "notebooks" / "02_la_ventana.ipynb").write_text(json.dumps(datos, ensure_ascii=False),
                                                                encoding="utf-8")


def cambiar(texto, viejo, nuevo):
    if texto.count(viejo) != 1:
        raise ValueError(f"no encuentro una sola vez {viejo!r}: ¿ha cambiado el punto de control?")
    return texto.replace(viejo, nuevo)


def escribir_espacio(espacio, punto, nombre, errores=()):
    """Copia en `espacio` los módulos del punto de control `punto`, cada uno con `# nombre` al final
    (así no hay dos espacios iguales ni dos entradas iguales en la caché), y mete cada error
    `(modulo, viejo, nuevo)` de `errores`."""
    for modulo in sorted(punto.glob("*.py")):
        (espacio / modulo.name).write_text(modulo.read_text(encoding="utf-8") + f"\n# {nombre}\n",
                                           encoding="utf-8")
    for modulo, viejo, nuevo in errores:
        fichero = espacio / f"{modulo}.py"
        fichero.write_text(cambiar(fichero.read_text(encoding="utf-8"), viejo, nuevo), encoding="utf-8")


def armar_clase(carpeta, alumnos=CLASE):
    """Escribe la clase en `carpeta` (una subcarpeta por alumno); devuelve cuántos alumnos."""
    puntos = rutas.puntos_de_control()
    carpeta = Path(carpeta)
    for nombre, numero, errores, donde in alumnos:
        suya = carpeta / nombre
        suya.mkdir(parents=True)
        if donde is None:
            (suya / "LEEME.txt").write_text("Aquí no hay ningún espacio.\n", encoding="utf-8")
            continue
        espacio = suya / donde
        espacio.mkdir(parents=True)
        if numero is None:
            continue  # un mi_agente/ vacío: la primera celda lo creó y no se escribió nada más
        if nombre in CUADERNOS_02:
            escribir_cuaderno_02(espacio.parent, nombre, CUADERNOS_02[nombre])
        escribir_espacio(espacio, puntos[numero], nombre, [ERRORES[error] for error in errores])
        if donde != MI_AGENTE:  # un «Download ZIP»: con el curso al lado, puntos de control incluidos
            shutil.copytree(puntos[0], espacio.parent / "checkpoints" / puntos[0].name)
            shutil.copytree(puntos[1], espacio.parent / "checkpoints" / puntos[1].name)
    return len(alumnos)


def _cpu():
    yo = resource.getrusage(resource.RUSAGE_SELF)
    hijos = resource.getrusage(resource.RUSAGE_CHILDREN)
    return yo.ru_utime + yo.ru_stime + hijos.ru_utime + hijos.ru_stime


def medir(alumnos=CLASE, a_la_vez=None, lecciones=None):
    """Califica la clase dos veces; las cifras."""
    from curso.clase import calificar
    with tempfile.TemporaryDirectory(prefix="curso-medir-calificar-") as tmp:
        clase, salida = Path(tmp) / "clase", Path(tmp) / "notas"
        n = armar_clase(clase, alumnos)
        todas = calificar.lecciones_que_se_califican()
        numero_de_lecciones = len(lecciones) if lecciones else len(todas)
        cifras = {"alumnos": n, "lecciones": numero_de_lecciones,
                  "alumno_leccion": n * numero_de_lecciones, "nucleos": os.cpu_count(),
                  "a_la_vez": a_la_vez or os.cpu_count()}
        for vuelta in ("primera", "segunda"):
            print(f"\n=== {vuelta} vez {'(caché vacía)' if vuelta == 'primera' else '(sin cambiar nada)'}",
                  flush=True)
            t, cpu = time.monotonic(), _cpu()
            codigo = calificar.calificar(clase, salida=salida, lecciones=lecciones, a_la_vez=a_la_vez)
            cifras[f"{vuelta}_segundos"] = time.monotonic() - t
            cifras[f"{vuelta}_cpu"] = _cpu() - cpu
            if codigo != 0:
                cifras["codigo"] = codigo
                return cifras
        cifras["csv"] = (salida / "calificaciones.csv").read_text(encoding="utf-8-sig")
    return cifras


def main():
    cifras = medir()
    if "codigo" in cifras:
        print(f"✘ calificar salió con {cifras['codigo']}")
        return cifras["codigo"]
    al = cifras["alumno_leccion"]
    print(f"\nCalificar una clase de {cifras['alumnos']} × {cifras['lecciones']} lecciones "
          f"({al} alumno-lección), {cifras['a_la_vez']} a la vez en {cifras['nucleos']} núcleos:")
    print(f"  primera vez:  {cifras['primera_segundos']:.0f} s ({cifras['primera_segundos'] / 60:.1f} min), "
          f"CPU {cifras['primera_cpu']:.0f} s; por alumno-lección {cifras['primera_segundos'] / al:.2f} s "
          f"y CPU {cifras['primera_cpu'] / al:.2f} s")
    print(f"  segunda vez (nada cambiado, todo de la caché): {cifras['segunda_segundos']:.1f} s, "
          f"CPU {cifras['segunda_cpu']:.1f} s")
    return cifras
