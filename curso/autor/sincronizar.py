"""Para quien escribe el curso: lleva un fichero editado en un punto de control a sus copias siguientes.

    python -m curso sincronizar              # lleva cada cambio a las copias que lo esperan
    python -m curso sincronizar --comprobar  # no escribe nada; sale con 1 si algo falta por llevar
    python -m curso sincronizar --comprobar --desde main  # lo mismo, con lo que cambió desde main

Cada punto de control es una carpeta completa que se lee (y que `comprobar` copia) entera, así
que un test o un módulo que no cambia de una lección a otra está repetido en todas las siguientes.
Esta orden mira, con git, qué ficheros de checkpoints/NN_*/ (los tests/ y los módulos; no las
cachés, que git no guarda) difieren de su versión en HEAD, y lleva cada cambio a los puntos de
control posteriores cuya copia era exactamente la de HEAD: la misma regla, y el mismo código
(`ejecutar.con_la_version_vieja`), que `ejecutar --sincronizar` usa con los módulos de un cuaderno.
Donde un punto de control posterior tiene su propia versión, se detiene y lo dice. Nunca toca un
punto de control anterior al editado: el cambio va siempre hacia delante.

Un módulo cambiado a mano también se lleva, pero su fuente es la celda `%%modulo` de su cuaderno
resuelto: la orden lo recuerda, porque si no el cuaderno dejaría el espacio distinto del punto de
control.

No lleva un fichero nuevo (que no está en HEAD), ni borra copias de uno borrado: lo dice y sigue.
Un fichero nuevo no tiene «versión vieja» que buscar en los siguientes, y si un test nuevo debe
estar en las lecciones de después depende de si lo que prueba sigue igual en ellas (una lección
posterior puede haber reescrito el módulo): lo decide quien lo escribe, copiándolo donde toque
(`test_un_punto_de_control_no_pierde_tests_del_anterior` avisa si falta en uno).

Sin `--desde`, la versión vieja es la de HEAD: sirve antes de hacer commit. En CI, con el trabajo
ya en commits, `--comprobar --desde main` (o la rama de la que salió) mira lo cambiado desde ahí.

No escribe nada, y lo dice en castellano, si la carpeta del curso no está en un repositorio git
con algún commit, si la revisión de `--desde` no existe, o si el mismo fichero, con la misma
versión vieja, está editado de dos maneras distintas en dos puntos de control de la misma cadena
(no se sabe cuál debe llegar a los demás).
"""
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas
from curso.autor.ejecutar import con_la_version_vieja, tiene_su_version

NADA_QUE_LLEVAR = 0
FALTA_LLEVAR = 1  # con --comprobar: alguien editó una copia y no las demás
ERROR = 2         # no es un repositorio git, o dos ediciones distintas de la misma cadena

# Los estados de `git diff --name-status`: cambiado, añadido, borrado.
CAMBIADO, ANADIDO, BORRADO = "M", "A", "D"

# Lo que no se lleva aunque git lo guarde por error: las cachés (las mismas que no se copian al
# restaurar, salvo tests/, que aquí sí cuenta).
CACHES = rutas.IGNORADOS - {"tests"}


class NoSeSincroniza(Exception):
    """Algo impide sincronizar; el mensaje dice qué y qué hacer. No se ha escrito nada."""


@dataclass
class Cambio:
    """Un fichero de un punto de control que difiere de HEAD, y adónde hay que llevarlo."""
    numero: int
    relativa: str                 # dentro del punto de control, p. ej. "tests/test_bucle.py"
    viejo: bytes                  # su versión en HEAD (o en la revisión de --desde)
    nuevo: bytes                  # la de la carpeta
    destinos: list = field(default_factory=list)  # números de los puntos de control a escribir
    propia: int | None = None     # el primero de después con su propia versión, si lo hay


def _git(*argumentos):
    """La salida (bytes) de `git argumentos` en la carpeta del curso, o NoSeSincroniza."""
    hecho = subprocess.run(["git", *argumentos], cwd=rutas.RAIZ, capture_output=True)
    if hecho.returncode != 0:
        raise NoSeSincroniza(f"git {' '.join(argumentos)} falló: "
                             f"{hecho.stderr.decode(errors='replace').strip()}")
    return hecho.stdout


def editados(desde="HEAD"):
    """[(estado, ruta desde la carpeta del curso)] de lo que difiere de la revisión `desde` bajo
    checkpoints/. Si la carpeta del curso no está en un repositorio git con algún commit, o no
    tiene esa revisión, NoSeSincroniza."""
    dentro = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=rutas.RAIZ,
                            capture_output=True, text=True)
    if dentro.stdout.strip() != "true":
        raise NoSeSincroniza(f"{rutas.RAIZ} no está en un repositorio git: sin la versión de HEAD "
                             "no sé qué copias tenían la versión vieja. No he escrito nada.")
    if subprocess.run(["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=rutas.RAIZ,
                      capture_output=True).returncode != 0:
        raise NoSeSincroniza("El repositorio aún no tiene ningún commit: sin la versión de HEAD no "
                             "sé qué copias tenían la versión vieja. No he escrito nada.")
    if subprocess.run(["git", "rev-parse", "--verify", "-q", f"{desde}^{{commit}}"], cwd=rutas.RAIZ,
                      capture_output=True).returncode != 0:
        raise NoSeSincroniza(f"El repositorio no tiene ninguna revisión «{desde}» (usa una rama, "
                             "una etiqueta o un commit que exista). No he escrito nada.")
    # Con -z, git no entrecomilla las rutas con tildes: «estado\0ruta\0» por fichero.
    campos = _git("diff", "--name-status", "-z", "--no-renames", "--relative", desde, "--",
                  Path(rutas.PUNTOS).relative_to(rutas.RAIZ).as_posix()).decode().split("\0")[:-1]
    return list(zip(campos[::2], campos[1::2], strict=True))


def plan(desde="HEAD"):
    """(los Cambio por llevar, las líneas de lo que no se lleva), con la versión vieja de cada
    fichero en la revisión `desde`. No escribe nada.

    Si dos ediciones distintas del mismo fichero están en la misma cadena de copias (el segundo
    punto de control tenía en `desde` la misma versión vieja que el primero), NoSeSincroniza."""
    puntos = rutas.puntos_de_control()
    carpeta_de = {carpeta.name: numero for numero, carpeta in puntos.items()}
    cambios, avisos = [], []
    for estado, ruta in editados(desde):
        partes = Path(ruta).relative_to(Path(rutas.PUNTOS).relative_to(rutas.RAIZ)).parts
        if len(partes) < 2 or partes[0] not in carpeta_de or CACHES.intersection(partes):
            continue
        numero, relativa = carpeta_de[partes[0]], "/".join(partes[1:])
        if estado == ANADIDO:
            avisos.append(f"    ({ruta} es nuevo: no se lleva; cópialo tú a los puntos de control "
                          "donde deba estar)")
        elif estado == BORRADO:
            avisos.append(f"    ({ruta} está borrado: no se borran sus copias)")
        elif estado == CAMBIADO:
            viejo = _git("show", f"{desde}:./{ruta}")
            nuevo = (rutas.RAIZ / ruta).read_bytes()
            if nuevo != viejo:
                cambios.append(Cambio(numero, relativa, viejo, nuevo))
    _comprobar_cadenas(cambios, puntos)
    return [c for c in cambios if c.destinos or c.propia is not None], avisos


def _comprobar_cadenas(cambios, puntos):
    """Pone a cada Cambio sus destinos y su versión propia; NoSeSincroniza si dos chocan.

    La cadena se recorre sobre el disco (`con_la_version_vieja`): un punto de control ya editado
    con otra cosa corta la cadena como si tuviera su propia versión. Aquí se mira si esa «versión
    propia» es en realidad otra edición de la misma versión vieja, y si un destino es un fichero
    editado (eso se respeta: no se escribe encima)."""
    por_sitio = {(c.numero, c.relativa): c for c in cambios}
    for cambio in cambios:
        destinos, propia = con_la_version_vieja(puntos, cambio.numero, cambio.relativa,
                                                cambio.viejo, cambio.nuevo)
        for i, destino in enumerate(destinos):
            if (destino, cambio.relativa) in por_sitio:  # tiene la vieja, pero es una edición suya
                destinos, propia = destinos[:i], destino
                break
        otro = por_sitio.get((propia, cambio.relativa))
        if otro is not None and otro.viejo == cambio.viejo and otro.nuevo != cambio.nuevo:
            raise NoSeSincroniza(
                f"{cambio.relativa} está editado de dos maneras distintas en los puntos de control "
                f"{cambio.numero:02d} y {propia:02d}, que tenían la misma versión: no sé cuál llevar "
                "a los siguientes. Deja una sola edición (o las dos iguales) y repite; si el "
                f"{propia:02d} debe tener su propia versión, sincroniza primero sin ella y edítalo "
                "después. No he escrito nada.")
        cambio.destinos, cambio.propia = destinos, propia


def describir(cambio, llevado):
    """Las líneas de un Cambio: qué se lleva de dónde adónde, y dónde se detiene."""
    lineas = []
    if cambio.destinos:
        hacia = ", ".join(f"{n:02d}" for n in cambio.destinos)
        lineas.append(f"  {cambio.relativa}: del punto de control {cambio.numero:02d} "
                      f"{'llevado' if llevado else 'sin llevar'} a {hacia}")
        if not cambio.relativa.startswith("tests/"):
            lineas.append(f"    (es un módulo: cambia también la celda %%modulo {Path(cambio.relativa).stem} "
                          "de los cuadernos resueltos que lo escriben)")
    if cambio.propia is not None:
        lineas.append(tiene_su_version(cambio.propia, cambio.relativa))
    return lineas


def sincronizar(comprobar=False, desde="HEAD"):
    """Lleva los cambios desde la revisión `desde` (o, con `comprobar`, solo los lista) e imprime
    lo hecho. Devuelve NADA_QUE_LLEVAR, FALTA_LLEVAR (solo con `comprobar`) o, si no se pudo, ERROR."""
    try:
        cambios, avisos = plan(desde)
    except NoSeSincroniza as error:
        print(f"✘ {error}", file=sys.stderr)
        return ERROR
    puntos = rutas.puntos_de_control()
    lineas = []
    for cambio in cambios:
        if not comprobar:
            for destino in cambio.destinos:
                (puntos[destino] / cambio.relativa).write_bytes(cambio.nuevo)
        lineas += describir(cambio, llevado=not comprobar)
    por_llevar = any(c.destinos for c in cambios)
    if not por_llevar:
        print("Nada que llevar: ningún fichero editado en un punto de control falta en sus "
              "copias siguientes.")
    elif comprobar:
        print("Hay ficheros editados en un punto de control y no en sus copias siguientes "
              "(python -m curso sincronizar los lleva):")
    else:
        print("Llevados a los puntos de control siguientes:")
    print("\n".join(lineas + avisos), end="\n" if lineas or avisos else "")
    return FALTA_LLEVAR if comprobar and por_llevar else NADA_QUE_LLEVAR


def argumentos_sincronizar(analizador):
    analizador.add_argument("--comprobar", action="store_true",
                            help="no escribe nada: lista lo que llevaría y sale con 1 si hay algo")
    analizador.add_argument("--desde", metavar="REVISION", default="HEAD",
                            help="la versión vieja es la de esa revisión de git, no la de HEAD "
                                 "(en CI: --comprobar --desde main)")


def orden_sincronizar(args):
    return sincronizar(comprobar=args.comprobar, desde=args.desde)
