"""Para quien escribe el curso (`python -m curso medir celdas`): cuánto tarda cada celda de los cuadernos resueltos y cuánto calla.

`python -m curso medir celdas [N ...] [--umbral S]` corre cada cuaderno resuelto de arriba abajo en
un núcleo de Jupyter de verdad, desde su punto de control anterior (como un alumno, con
`notebooks/` como directorio de trabajo), y de cada celda de código apunta:

- lo que tardó (reloj) y la CPU que gastó el núcleo con sus procesos hijos;
- su **silencio más largo**: el rato más largo sin que la celda escriba nada (desde que empieza
  hasta su primera salida, entre dos salidas, o desde la última hasta que acaba). Una celda lenta
  que enseña su progreso calla poco aunque tarde mucho;
- si avisa: su texto de antes (la celda de texto que la precede) dice que tarda («tarda», «unos
  segundos»), o lo primero que escribe lo dice o es una línea que acaba en «…» («Trabajando…»).

Imprime las que pasan del umbral (3 s si no se dice), con esas cifras y la calibración de la
máquina (la cuenta de `../shared/herramientas/calibrar.py`: con la máquina cargada, todo tarda más,
y así se ve lo que tardaría en una máquina lenta). Devuelve 1 si alguna calla más que el umbral sin
avisar: una celda así deja al alumno mirando una pantalla quieta sin saber si sigue viva.

Es una medida, no un test: los tiempos dependen de la máquina y de su carga.
"""
import re
import tempfile
import time
from dataclasses import dataclass, field
from itertools import pairwise

from curso import rutas
from curso.medir import de_los_tests

UMBRAL_S = 3.0  # lo que un alumno espera sin saber si la celda sigue viva
# Lo que cuenta como aviso de que una celda tarda, en su texto de antes o en lo primero que escribe.
AVISO = re.compile(r"tarda|unos segundos", re.IGNORECASE)


@dataclass
class Tiempo:
    """Lo medido de una celda."""
    indice: int        # su posición en el cuaderno (contando las de texto), como la numera nbval
    id: str
    primera_linea: str
    segundos: float
    cpu: float
    silencio: float    # el rato más largo sin salida
    avisa: bool
    error: str = ""    # si lanzó: su excepción (la medida de las de detrás ya no vale)
    salidas: list = field(default_factory=list)  # (instante desde el principio, texto)


def silencio_mas_largo(instantes, segundos):
    """El rato más largo sin salida de una celda que tardó `segundos` y escribió en `instantes`
    (segundos desde que empezó): del principio a la primera, entre dos, o de la última al final."""
    puntos = [0.0] + sorted(instantes) + [segundos]
    return max(b - a for a, b in pairwise(puntos))


def avisa(texto_de_antes, escrito):
    """¿Dice la celda que tarda? En su texto de antes, o en la primera línea que escribe (`escrito`,
    lo que escribió con print, en orden: la representación de un widget o una figura no cuenta)."""
    primera = next((t.strip().split("\n")[0] for t in escrito if t.strip()), "")
    return bool(AVISO.search(texto_de_antes) or AVISO.search(primera) or primera.rstrip().endswith("…"))


def calibracion():
    """Los segundos de un bucle de 20 millones de sumas (el mejor de 3): la de calibrar.py."""
    mejor = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        s = 0
        for i in range(20_000_000):
            s += i
        mejor = min(mejor, time.perf_counter() - t)
    return mejor


def _cpu_del_arbol(proceso):
    """Segundos de CPU de `proceso`, de sus hijos ya esperados y de los que siguen vivos."""
    import psutil
    try:
        t = proceso.cpu_times()
        total = t.user + t.system + t.children_user + t.children_system
        for hijo in proceso.children(recursive=True):
            try:
                h = hijo.cpu_times()
                total += h.user + h.system
            except psutil.Error:
                pass
        return total
    except psutil.Error:
        return 0.0


def _texto_de_antes(celdas, i):
    """El texto de la celda de texto justo encima de la celda `i` (o "")."""
    for c in reversed(celdas[:i]):
        if c.tipo == "markdown":
            return c.resuelta
        if c.tipo == "code":
            return ""
    return ""


def _medir_celda(cuaderno, celdas, i, proceso, limite):
    """Corre la celda `i` en `cuaderno` y devuelve su Tiempo."""
    celda = celdas[i]
    salidas, escrito, errores = [], [], []
    inicio = time.monotonic()

    def gancho(msg):
        tipo, contenido = msg["msg_type"], msg["content"]
        if tipo == "stream":
            texto = contenido["text"]
            escrito.append(texto)
        elif tipo in ("execute_result", "display_data"):
            texto = contenido["data"].get("text/plain", "")
        elif tipo == "error":
            texto = f"{contenido['ename']}: {contenido['evalue']}"
            errores.append(texto)
        else:
            return
        salidas.append((time.monotonic() - inicio, texto))

    cpu = _cpu_del_arbol(proceso)
    cuaderno.kc.execute_interactive(celda.resuelta, timeout=limite, output_hook=gancho, allow_stdin=False)
    segundos = time.monotonic() - inicio
    return Tiempo(i, celda.id, celda.resuelta.strip().split("\n")[0][:60], segundos,
                  _cpu_del_arbol(proceso) - cpu, silencio_mas_largo([t for t, _ in salidas], segundos),
                  avisa(_texto_de_antes(celdas, i), escrito), "; ".join(errores), salidas)


def medir_leccion(numero):
    """[Tiempo] de cada celda de código de la lección `numero`, corrida entera como un alumno."""
    import psutil
    de_los_tests("caminos")
    import alumno

    with tempfile.TemporaryDirectory(prefix="medir-celdas-") as carpeta:
        quien = alumno.Alumno(carpeta)
        if numero != 0:
            quien.orden("restaurar", str(rutas.anterior(numero)))
        with quien.abrir(numero) as cuaderno:
            proceso = psutil.Process(cuaderno.km.provisioner.process.pid)
            return [_medir_celda(cuaderno, cuaderno.celdas, i, proceso, alumno.SEGUNDOS_POR_CELDA)
                    for i, celda in enumerate(cuaderno.celdas) if celda.tipo == "code"]


def main(argumentos=()):
    from curso.__main__ import Analizador
    analizador = Analizador(prog="python -m curso medir celdas")
    analizador.add_argument("lecciones", nargs="*", type=rutas.leccion_pedida, metavar="N",
                            help="las lecciones (si no se dicen, todas)")
    analizador.add_argument("--umbral", type=float, default=UMBRAL_S,
                            help=f"segundos a partir de los que una celda es lenta ({UMBRAL_S:g} si no se dice)")
    args = analizador.parse_args(list(argumentos))
    lecciones = args.lecciones or sorted(rutas.LECCIONES)
    print(f"Calibración de la máquina: {calibracion():.2f} s (referencia 1,00 s). Celdas de más de "
          f"{args.umbral:g} s, con su CPU y su silencio más largo:", flush=True)
    mudas = 0
    for numero in lecciones:
        inicio = time.monotonic()
        tiempos = medir_leccion(numero)
        lentas = [t for t in tiempos if t.segundos > args.umbral]
        print(f"Lección {numero:02d} ({time.monotonic() - inicio:.0f} s en total, "
              f"{sum(t.cpu for t in tiempos):.0f} s de CPU): "
              + ("ninguna celda lenta." if not lentas else f"{len(lentas)} lenta(s)"), flush=True)
        for t in (t for t in tiempos if t.error):
            print(f"  ⚠ celda {t.indice} ({t.id}) lanzó {t.error[:200]}: lo que viene detrás no se ha "
                  "medido como lo corre un alumno.", flush=True)
        for t in lentas:
            muda = t.silencio > args.umbral and not t.avisa
            mudas += muda
            print(f"  {'✘' if muda else '·'} celda {t.indice} ({t.id}, «{t.primera_linea}»): {t.segundos:.1f} s, "
                  f"CPU {t.cpu:.1f} s, silencio más largo {t.silencio:.1f} s, "
                  f"{'avisa' if t.avisa else 'sin aviso'}", flush=True)
    print(f"Calibración al acabar: {calibracion():.2f} s.")
    if mudas:
        print(f"✘ {mudas} celda(s) callan más de {args.umbral:g} s sin avisar.")
    return 1 if mudas else 0
