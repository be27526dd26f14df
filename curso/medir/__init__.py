"""Para quien escribe o da el curso (`python -m curso medir QUE`): cuánto tarda de verdad cada pieza, en esta máquina.

Los tests no miden tiempos (un test que depende de la velocidad de la máquina falla a ratos);
las cifras de velocidad salen de aquí, con `python -m curso medir QUE`. `MEDICIONES` es la tabla:
cada medida, el módulo de este paquete que la hace (su `main()` imprime lo medido en castellano
y devuelve las cifras) y qué mide. Lo que escribe cada medida queda además en `mediciones/QUE.md`
(`apuntar`), con la fecha, los núcleos y la carga: es lo que enlazan los README en vez de copiar
cifras que cambian con la máquina. Importar el paquete no mide nada, ni carga ningún módulo de
medida: cada uno se importa al pedir su medida.
"""
import importlib
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Medicion:
    modulo: str        # el módulo de curso/medir/ con su main()
    descripcion: str   # lo que dice la ayuda de `python -m curso medir`
    con_argumentos: bool = False  # su main(argumentos) toma lo que venga detrás de QUE


MEDICIONES = {
    "servidor": Medicion("velocidad_del_servidor", "el servidor de ensayo: el recorrido arregla por HTTP y 200 "
                                     "peticiones de 8000 tokens (lección 01)"),
    "harness": Medicion("parte_del_harness", "con un modelo de verdad (ANTHROPIC_BASE_URL): la parte de cada "
                                          "turno de la tarea de la lección 01 que es del harness y no del modelo"),
    "ventana": Medicion("redibujo_de_la_ventana", "cuánto tarda en redibujarse el explorable de la ventana (lección 02)"),
    "resumenes": Medicion("coste_de_los_resumenes", "explorar las carreras de los resúmenes e instalar con "
                                       "synchronous=FULL, frente a fsync (lección 04)"),
    "buzon": Medicion("coste_del_buzon", "explorar las carreras del buzón y admitir con synchronous=FULL, "
                               "frente a fsync (lección 05)"),
    "todo": Medicion("todo", "el simulacro entero: una caída tras cada paso y cien al azar (lección 06)"),
    "postgres": Medicion("postgres_frente_a_sqlite", "admisiones por segundo con 1, 2, 4 y 8 trabajadores en PostgreSQL y "
                                     "en SQLite, explorar las carreras en PostgreSQL y el simulacro con "
                                     "SIGKILL y cortes: perdidas y repetidas (lección 07)"),
    "dbos": Medicion("dbos_frente_al_curso", "el simulacro de la 08 en los dos motores (una caída tras cada paso y cien al azar, "
                             "con y sin el 8.1), de una caída a la vuelta, y pasos duraderos por segundo del "
                             "harness y de DBOS en SQLite y PostgreSQL (lección 08)"),
    "replica": Medicion("replica", "la espera a la réplica síncrona de la celda del COMMIT, 30 veces con un "
                                   "CHECKPOINT en marcha durante la recarga: SHOW frente a la sonda (lección 07)"),
    "caminos": Medicion("caminos", "caminos al azar de un alumno por los cuadernos, en núcleos de verdad "
                                   "(--semilla S --n N); con --otra-vez N, cada celda de la lección N dos "
                                   "veces seguidas", con_argumentos=True),
    "celdas": Medicion("celdas", "cada celda de los cuadernos resueltos, corridos como un alumno: lo que tarda, "
                                 "su CPU y su silencio más largo; las lentas que no avisan (N ... --umbral S)",
                       con_argumentos=True),
    "modelo": Medicion("modelo_de_verdad", "SmolLM2 en llama-server (python -m curso modelo): tokens por segundo "
                                       "al leer y al generar, con 1000 y 7000 tokens de entrada"),
    "calificar": Medicion("clase_de_treinta", "calificar una clase de 30 (correctos, a medias y con los errores "
                                       "típicos): el tiempo y la CPU por alumno-lección, y al repetirlo"),
    "mutantes": Medicion("mutantes", "pruebas de mutación de la solución de cada ejercicio contra su comprobación "
                                     "del cuaderno: muertos, vivos, equivalentes y la puntuación (lento; "
                                     "`medir mutantes 6.2 --muestra 20`)", con_argumentos=True),
    "hub": Medicion("hub", "veredictos en una máquina cargada como un hub: tres comprobar 7 a la vez, y "
                           "calificar con dos comprobar 6, con espacios correctos (--stress: también bajo "
                           "stress-ng); 0 colgados y todo en verde, y lo que más gasta cada test frente "
                           "a los límites de colgado", con_argumentos=True),
    "metamorfosis": Medicion("metamorfosis", "cada solución de referencia reescrita sin cambiar lo que hace "
                                             "(mensajes, SQL con nombres, nombres, bucles, else, ayudas), por el "
                                             "cuaderno, comprobar N y calificar: verde o el primer test que objeta "
                                             "(lento; `medir metamorfosis 4.2 --solo-cuaderno`)", con_argumentos=True),
    "probar": Medicion("perfil_de_probar", "la suite entera de `probar` con su perfil: la CPU de cada parte, los 15 "
                                 "ficheros y los 15 tests que más gastan y lo que arrancan (núcleos, "
                                 "intérpretes, servidores, clusters, navegadores)"),
}


def de_los_tests(*subcarpetas):
    """Pone en sys.path tests/ (y sus `subcarpetas`, como «caminos»): lo que algunas medidas leen de
    los tests (las variantes y los mutantes equivalentes, los caminos del alumno) vive allí, fuera
    del paquete, y solo está en el repositorio."""
    import sys
    from curso import rutas
    for carpeta in [rutas.RAIZ / "tests", *(rutas.RAIZ / "tests" / s for s in subcarpetas)][::-1]:
        if str(carpeta) not in sys.path:
            sys.path.insert(0, str(carpeta))


def codigo_de_salida(resultado):
    """El código de salida de una medida: el suyo si devuelve un entero; 1 si devuelve cifras con
    un objetivo que no cumple; 0 en otro caso."""
    if isinstance(resultado, int) and not isinstance(resultado, bool):
        return resultado
    if isinstance(resultado, dict) and resultado.get("cumple_objetivo") is False:
        return 1
    return 0


def main(que, argumentos=()):
    """`python -m curso medir QUE [ARGUMENTOS]`: hace la medida `que`, apunta lo que dijo en
    mediciones/QUE.md (`apuntar`) y devuelve el código de salida."""
    medicion = MEDICIONES.get(que)
    if medicion is None:
        print(f"No sé medir «{que}»: elige entre {', '.join(MEDICIONES)}.")
        return 2
    if argumentos and not medicion.con_argumentos:
        print(f"La medida «{que}» no toma más argumentos (llegó «{' '.join(argumentos)}»).")
        return 2
    modulo = importlib.import_module(f"curso.medir.{medicion.modulo}")
    return apuntar(que, argumentos, lambda: codigo_de_salida(modulo.main(argumentos) if medicion.con_argumentos
                                                            else modulo.main()))


# --- Lo medido, en mediciones/ ----------------------------------------------------------------------
# Las cifras que cambian con la máquina no van en la prosa de los README: van aquí, con la fecha, los
# núcleos y la carga de cuando se midieron, y los README enlazan el fichero de cada medida.

CARPETA = "mediciones"  # en la raíz del curso


class _Copia:
    """Un stdout que escribe en el de verdad y se queda con una copia de lo escrito."""

    def __init__(self, de_verdad):
        self.de_verdad, self.partes = de_verdad, []

    def write(self, texto):
        self.partes.append(texto)
        return self.de_verdad.write(texto)

    def flush(self):
        self.de_verdad.flush()


def _carga():
    try:
        return f"{os.getloadavg()[0]:.1f}".replace(".", ",")
    except OSError:
        return "?"


def apuntar(que, argumentos, medir, carpeta=None):
    """Corre `medir()` (devuelve el código de salida) copiando lo que escribe, y lo deja en
    `carpeta/QUE.md` (mediciones/ del curso si no se dice) con la orden, la fecha, los núcleos y la
    carga al empezar y al acabar. Una medida que se interrumpe o falla con una excepción no apunta
    nada: el fichero de la anterior queda como estaba."""
    import contextlib
    import sys
    from datetime import datetime, timezone
    from curso import rutas
    inicio, carga = datetime.now(timezone.utc), _carga()
    copia = _Copia(sys.stdout)
    with contextlib.redirect_stdout(copia):
        codigo = medir()
    orden = " ".join(["python -m curso medir", que, *argumentos])
    cabecera = (f"# `{orden}`\n\nMedido el {inicio:%Y-%m-%d} a las {inicio:%H:%M} UTC, en {os.cpu_count()} núcleos "
                f"(carga media {carga} al empezar y {_carga()} al acabar); salió con {codigo}. Es lo que "
                "escribió la medida, tal cual: la siguiente lo sustituye.\n\n")
    fichero = Path(carpeta or rutas.RAIZ / CARPETA) / f"{que}.md"
    fichero.parent.mkdir(parents=True, exist_ok=True)
    fichero.write_text(cabecera + "```\n" + "".join(copia.partes).rstrip("\n") + "\n```\n", encoding="utf-8")
    return codigo


# --- python -m curso medir --------------------------------------------------------------------

def argumentos_medir(analizador):
    import argparse
    analizador.formatter_class = argparse.RawDescriptionHelpFormatter
    analizador.description = ("Las medidas del curso (la velocidad va aquí, no en los tests):\n\n"
                              + "\n".join(f"  {nombre:10} {m.descripcion}" for nombre, m in MEDICIONES.items()))
    analizador.add_argument("que", metavar="QUE", choices=list(MEDICIONES),
                            help=f"qué medir: {', '.join(MEDICIONES)}")
    analizador.add_argument("argumentos", nargs=argparse.REMAINDER,
                            help="los de la medida, si toma (p. ej. caminos --semilla 3 --n 2)")


def orden_medir(args):
    return main(args.que, args.argumentos)
