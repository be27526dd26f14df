"""Para el alumno: comparar su espacio con un punto de control, restaurarlo y preparar una lección.

Las tres órdenes con que el alumno mueve su espacio respecto a un punto de control, con una misma
idea de qué es un fichero del alumno, qué es uno de referencia y qué lección va por delante.

Lo presenta la lección 00. Un punto de control `checkpoints/NN_nombre/` es el código del
alumno tal como queda al terminar la lección NN; la lección NN empieza desde el NN-1.

Tres órdenes, que también se usan desde Python (los cuadernos llaman a `restaurar(0)` o
`preparar(3)`):

- `comparar(n)`: una línea por fichero (igual, cambiado, falta o sobra) y un diff unificado
  de cada uno cambiado. Devuelve 0 si coinciden y 1 si no, como `diff`.
- `restaurar(n)`: pone en tu espacio el punto de control n. Si ya había trabajo, primero lo
  mueve entero a una copia con fecha al lado (`mi_agente.copia-20261202-113005`): nunca se
  pierde nada. Con `fichero` («herramientas.py»), solo ese fichero (el código que da el curso que
  falta o se rompió, como dice `comprobar N`); el tuyo, si lo había, queda en `.copias/`, y los
  demás no se tocan.
- `preparar(n)`: deja tu espacio listo para la lección n, copiando del punto de control n-1
  solo los ficheros que falten (nunca sobrescribe uno tuyo).

Un número que no es de ningún punto de control no toca nada: se listan los que hay y se
devuelve 2. Las partes puras (`resumen_diferencias`, `diff_de`, `nombre_de_copia`) no leen
ni escriben el disco, para poder probarlas por separado.

`restaurar` y `preparar` cambian tu espacio con un cerrojo (`fcntl.flock` sobre el fichero
`.mi_agente.cerrojo`, al lado del espacio, que solo existe mientras dura la orden): si se
ejecutan dos a la vez, la segunda espera a que acabe la primera, y lo que cada una dice de tu
trabajo es verdad.
"""
import contextlib
import difflib
import fcntl
import os
import re
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from curso import rutas
# Qué punto de control es un número, y cómo se enseña tu espacio: viven en rutas.py (también los usa
# `comprobar N`, que no es de este paquete).
from curso.rutas import PuntoDeControlDesconocido, describir_espacio, punto_de_control
from curso.comprobaciones import ejercicios
from curso.comprobaciones.esbozos import ejercicio_del_aviso

# Cómo aparece el esbozo de un ejercicio en el código: el texto de su NotImplementedError.
AVISO_EN_EL_CODIGO = re.compile(r'raise NotImplementedError\(["\'](Ejercicio [0-9]+[a-z]?[0-9.]+ pendiente:)')

# Códigos de salida, los de `diff`: 0 iguales, 1 distintos, 2 problema con los argumentos.
COINCIDEN = 0
DIFIEREN = 1
ARGUMENTO_INVALIDO = rutas.ARGUMENTO_INVALIDO  # el mismo de comprobar N
NO_SE_PUDO = 1  # `restaurar` no pudo poner a salvo tu trabajo, y por eso no copió nada

# Cómo se llama la copia de seguridad de tu espacio antes de restaurar encima.
SUFIJO_COPIA = ".copia-"
FORMATO_FECHA_COPIA = "%Y%m%d-%H%M%S"


# ---------------------------------------------------------------- leer y mostrar


def _leer(carpeta):
    """{ruta relativa: contenido} del código del alumno en `carpeta` (texto; bytes si es binario)."""
    contenidos = {}
    for relativa in rutas.ficheros(carpeta):
        datos = (Path(carpeta) / relativa).read_bytes()
        try:
            contenidos[relativa] = datos.decode("utf-8")
        except UnicodeDecodeError:
            contenidos[relativa] = datos
    return contenidos


# ---------------------------------------------------------------- comparar (lo puro)


IGUAL = "igual"
CAMBIADO = "cambiado"
FALTA = "falta"
SOBRA = "sobra"


@dataclass(frozen=True)
class Fila:
    """Cómo está un fichero de tu espacio respecto al punto de control."""
    ruta: str
    estado: str            # IGUAL, CAMBIADO, FALTA (no está en tu espacio) o SOBRA (solo en tu espacio)
    anadidas: int = 0      # líneas que tu espacio tiene y el punto de control no
    quitadas: int = 0      # líneas que el punto de control tiene y tu espacio no
    binario: bool = False

    def texto(self):
        """La palabra de su estado, la misma que dicen el README y la lección 00; si cambió,
        cuántas líneas (o que es binario)."""
        if self.estado != CAMBIADO:
            return self.estado
        if self.binario:
            return "cambiado (binario)"
        return f"cambiado (+{self.anadidas} \u2212{self.quitadas})"


# Lo que quiere decir cada palabra que no se explica sola, para decirlo una vez bajo la tabla.
SIGNIFICADO = {FALTA: "falta: está en el punto de control y no en tu espacio",
               SOBRA: "sobra: está en tu espacio y no en el punto de control"}


def _lineas_cambiadas(antes, despues):
    """(añadidas, quitadas) para pasar de las líneas `antes` a las líneas `despues`."""
    anadidas = quitadas = 0
    emparejador = difflib.SequenceMatcher(None, antes, despues, autojunk=False)
    for operacion, i1, i2, j1, j2 in emparejador.get_opcodes():
        if operacion != "equal":
            quitadas += i2 - i1
            anadidas += j2 - j1
    return anadidas, quitadas


def resumen_diferencias(punto, tuyo):
    """Una Fila por fichero, en orden alfabético, de `punto` (el punto de control) frente a
    `tuyo` (tu espacio); ambos {ruta: contenido}."""
    filas = []
    for ruta in sorted(set(punto) | set(tuyo)):
        if ruta not in tuyo:
            filas.append(Fila(ruta, FALTA))
        elif ruta not in punto:
            filas.append(Fila(ruta, SOBRA))
        elif punto[ruta] == tuyo[ruta]:
            filas.append(Fila(ruta, IGUAL))
        elif isinstance(punto[ruta], bytes) or isinstance(tuyo[ruta], bytes):
            filas.append(Fila(ruta, CAMBIADO, binario=True))
        else:
            # Con el salto de línea, como el diff: quitarlo de la última línea es cambiarla.
            anadidas, quitadas = _lineas_cambiadas(punto[ruta].splitlines(keepends=True),
                                                   tuyo[ruta].splitlines(keepends=True))
            filas.append(Fila(ruta, CAMBIADO, anadidas, quitadas))
    return filas


def diff_de(ruta, antes, despues, numero):
    """El diff unificado de un fichero: `antes` en el punto de control, `despues` en tu espacio."""
    if isinstance(antes, bytes) or isinstance(despues, bytes):
        return f"Los ficheros binarios {ruta} difieren.\n"
    lineas = difflib.unified_diff(
        antes.splitlines(keepends=True), despues.splitlines(keepends=True),
        fromfile=f"punto de control {numero:02d}/{ruta}", tofile=f"tu espacio/{ruta}")
    texto = ""
    for linea in lineas:
        # Una última línea sin salto de línea se marca como lo hace diff.
        texto += linea if linea.endswith("\n") else linea + "\n\\ No hay salto de línea al final\n"
    return texto


# ---------------------------------------------------------------- comparar (la orden)


def esbozos_en(texto):
    """Los ejercicios cuyo esbozo sigue en `texto` (el de un fichero de tu espacio), en orden."""
    if not isinstance(texto, str):
        return []
    return ejercicios.ordenados({ejercicio_del_aviso(m) for m in AVISO_EN_EL_CODIGO.findall(texto)})


def comparar(n, con_soluciones=False):
    """Compara tu espacio con el punto de control `n` y lo imprime. 0 si coinciden, 1 si no,
    2 si `n` no es un punto de control.

    Un fichero con el esbozo de un ejercicio pendiente no se enseña como diff (sería enseñar la
    solución sin que la pidas): se dice qué ejercicios faltan y cómo ver su solución. Con
    `con_soluciones`, se enseña el diff de todos."""
    try:
        numero, carpeta = punto_de_control(n)
    except PuntoDeControlDesconocido as error:
        print(error, file=sys.stderr)
        return ARGUMENTO_INVALIDO

    espacio = rutas.espacio()
    if not espacio.is_dir():
        print(f"Tu espacio de trabajo ({describir_espacio(espacio)}) todavía no existe, así que "
              f"no hay nada que comparar.\nPara crearlo a partir de un punto de control: "
              f"python -m curso restaurar {numero:02d}")
        return DIFIEREN

    punto, tuyo = _leer(carpeta), _leer(espacio)
    filas = resumen_diferencias(punto, tuyo)
    print(f"Tu espacio ({describir_espacio(espacio)}) frente al punto de control {carpeta.name}:")
    ancho = max((len(fila.ruta) for fila in filas), default=0)
    for fila in filas:
        print(f"  {fila.ruta:<{ancho}}  {fila.texto()}")
    significados = [SIGNIFICADO[e] for e in (FALTA, SOBRA) if any(f.estado == e for f in filas)]
    if significados:
        print(f"  ({'; '.join(significados)})")

    for fila in filas:
        if fila.estado != CAMBIADO:
            continue
        print()
        pendientes = esbozos_en(tuyo[fila.ruta])
        if pendientes and not con_soluciones:
            # El diff de un esbozo frente al punto de control es la solución entera: no se
            # enseña sin pedirla.
            como_verla = " o ".join(f'solucion("{i}")' for i in pendientes)
            print(f"{fila.ruta}: {ejercicios.siguen_pendientes(pendientes)} (su esbozo está en tu "
                  f"fichero). El diff enseñaría la solución, así que no lo muestro.\n"
                  f"  Para verla: {como_verla} en el cuaderno, o "
                  f"python -m curso comparar {numero:02d} --con-soluciones.")
            continue
        print(diff_de(fila.ruta, punto[fila.ruta], tuyo[fila.ruta], numero), end="")

    distintos = [fila for fila in filas if fila.estado != IGUAL]
    print()
    if not distintos:
        print(f"Tu espacio coincide con el punto de control {numero:02d}.")
        return COINCIDEN
    cuantos = "1 fichero difiere" if len(distintos) == 1 else f"{len(distintos)} ficheros difieren"
    print(f"{cuantos} del punto de control {numero:02d}.")
    if any(fila.estado == FALTA for fila in distintos):
        print(f"Los que faltan están en {rutas.mostrar(carpeta)}/; para empezar de nuevo desde él: "
              f"python -m curso restaurar {numero:02d}")
    return DIFIEREN


# ---------------------------------------------------------------- restaurar


def nombre_de_copia(espacio, ahora):
    """La carpeta hermana de `espacio` donde guardar su contenido: `<nombre>.copia-<fecha>`,
    con `-2`, `-3`… si ya existe una con ese nombre."""
    espacio = Path(espacio)
    base = f"{espacio.name}{SUFIJO_COPIA}{ahora.strftime(FORMATO_FECHA_COPIA)}"
    copia = espacio.with_name(base)
    intento = 2
    while copia.exists() or copia.is_symlink():
        copia = espacio.with_name(f"{base}-{intento}")
        intento += 1
    return copia


def _tiene_trabajo(espacio):
    """Si en `espacio` hay algo que perder (un fichero en su lugar cuenta)."""
    if espacio.is_dir():
        return any(espacio.iterdir())
    return espacio.exists() or espacio.is_symlink()


def _copiar(origen, destino, relativas):
    for relativa in relativas:
        (destino / relativa).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origen / relativa, destino / relativa)


def ruta_del_cerrojo(espacio):
    """El fichero del cerrojo de `espacio`: oculto, a su lado (el espacio entero se mueve al
    restaurar, así que no puede estar dentro)."""
    espacio = Path(espacio)
    return espacio.with_name(f".{espacio.name}.cerrojo")


@contextlib.contextmanager
def cerrojo_del_espacio(espacio, orden):
    """Solo una orden a la vez cambia `espacio`; la que llega segunda espera, y lo dice.

    El fichero del cerrojo se borra al terminar, para no dejar nada al lado de tu espacio. Por
    eso, quien consigue el cerrojo mira que su fichero sigue siendo el que está en la ruta: si
    otro lo borró mientras esperaba, lo que tiene es el cerrojo de un fichero que ya no existe, y
    vuelve a empezar."""
    ruta = ruta_del_cerrojo(espacio)
    ruta.parent.mkdir(parents=True, exist_ok=True)
    avisado = False
    while True:
        fichero = open(ruta, "a")
        try:
            fcntl.flock(fichero, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not avisado:
                print(f"Otra orden está cambiando tu espacio ({rutas.mostrar(espacio)}); {orden} espera "
                      "a que termine.", file=sys.stderr, flush=True)
                avisado = True
            fcntl.flock(fichero, fcntl.LOCK_EX)
        try:
            sigue = os.stat(ruta).st_ino == os.fstat(fichero.fileno()).st_ino
        except FileNotFoundError:
            sigue = False
        if sigue:
            break
        fichero.close()
    try:
        yield
    finally:
        ruta.unlink(missing_ok=True)  # antes de soltarlo: nadie más puede estar usándolo
        fichero.close()  # cerrar suelta el cerrojo


def restaurar(n, fichero=None):
    """Pone en tu espacio el código del punto de control `n` (o solo su `fichero`). Si tu espacio
    tenía algo, antes lo mueve entero a una copia al lado y dice dónde (el `fichero` tuyo, a
    `.copias/`). 0 si todo fue bien; 1 si no se pudo poner a salvo tu trabajo (y entonces no se
    copia nada); 2 si `n` no es un punto de control o no tiene `fichero`."""
    try:
        numero, carpeta = punto_de_control(n, "restaurar")
    except PuntoDeControlDesconocido as error:
        print(error, file=sys.stderr)
        return ARGUMENTO_INVALIDO
    if fichero is not None and fichero not in rutas.ficheros(carpeta):
        print(f"El punto de control {carpeta.name} no tiene ningún {fichero}; tiene: "
              f"{', '.join(rutas.ficheros(carpeta))}.", file=sys.stderr)
        return ARGUMENTO_INVALIDO

    espacio = rutas.espacio()
    try:
        with cerrojo_del_espacio(espacio, "restaurar"):
            if fichero is not None:
                return _restaurar_fichero(carpeta, espacio, fichero)
            return _restaurar(carpeta, espacio)
    except OSError as error:  # el cerrojo no se pudo crear: nada se ha movido ni copiado
        print(f"No he podido tomar el cerrojo de tu espacio ({rutas.mostrar(ruta_del_cerrojo(espacio))}): "
              f"{error.strerror or error}. No he tocado nada.", file=sys.stderr)
        return NO_SE_PUDO


def _restaurar(carpeta, espacio):
    """Restaurar, ya con el cerrojo: nadie más mueve ni cambia el espacio mientras tanto."""
    copia = None
    if _tiene_trabajo(espacio):
        copia = nombre_de_copia(espacio, datetime.now())
        try:
            espacio.rename(copia)
        except OSError as error:
            sigue = ("tu trabajo sigue donde estaba" if _tiene_trabajo(espacio) else
                     f"tu espacio ya no está en {rutas.mostrar(espacio)}: algo lo ha movido o borrado "
                     "mientras tanto (busca sus copias al lado)")
            print(f"No he podido mover tu espacio ({rutas.mostrar(espacio)}) a {rutas.mostrar(copia)}: "
                  f"{error.strerror or error}.\nNo he copiado nada: {sigue}. Cierra lo que lo "
                  f"esté usando o muévelo tú a otro sitio y repite.", file=sys.stderr)
            return NO_SE_PUDO
        print(f"Tu trabajo anterior está a salvo en la carpeta {copia.name}, junto a tu espacio.")

    relativas = rutas.ficheros(carpeta)
    try:
        espacio.mkdir(parents=True, exist_ok=True)
        _copiar(carpeta, espacio, relativas)
    except OSError as error:
        a_salvo = f" Tu trabajo anterior sigue a salvo en {copia.name}." if copia else ""
        print(f"No he podido copiar el punto de control {carpeta.name} en tu espacio: "
              f"{error.strerror or error}.{a_salvo}", file=sys.stderr)
        return NO_SE_PUDO
    cuantos = "1 fichero" if len(relativas) == 1 else f"{len(relativas)} ficheros"
    print(f"Restaurado el punto de control {carpeta.name} en tu espacio ({cuantos}).")
    return COINCIDEN


def _restaurar_fichero(carpeta, espacio, fichero):
    """Restaurar un solo fichero, ya con el cerrojo: el tuyo, si existe, va antes a .copias/."""
    destino = espacio / fichero
    try:
        if destino.exists() or destino.is_symlink():
            if destino.is_file() and destino.read_bytes() == (carpeta / fichero).read_bytes():
                print(f"Tu {fichero} ya es el del punto de control {carpeta.name}: no hacía falta copiar nada.")
                return COINCIDEN
            copia = espacio / ".copias" / f"{fichero}.antes-de-restaurar-{datetime.now().strftime(FORMATO_FECHA_COPIA)}"
            copia.parent.mkdir(parents=True, exist_ok=True)
            destino.rename(copia)
            print(f"Tu {fichero} anterior está a salvo en {rutas.mostrar(copia)}.")
        espacio.mkdir(parents=True, exist_ok=True)
        _copiar(carpeta, espacio, [fichero])
    except OSError as error:
        print(f"No he podido restaurar {fichero}: {error.strerror or error}.", file=sys.stderr)
        return NO_SE_PUDO
    print(f"Restaurado {fichero} del punto de control {carpeta.name} en tu espacio; lo demás, como estaba.")
    return COINCIDEN


# ---------------------------------------------------------------- preparar


def preparar(n):
    """Deja tu espacio listo para empezar la lección `n` desde el punto de control n-1: copia los
    ficheros que te falten y pone al día los que son exactamente la versión de un punto de control
    anterior (te saltaste la lección que los cambió; esa versión queda en .copias/). Un fichero
    distinto de todas las versiones de los puntos de control es tuyo y no se toca. Devuelve la
    lista de los copiados y puestos al día."""
    numero = rutas.como_numero(n)
    if numero is None:
        raise PuntoDeControlDesconocido(f"«{rutas.como_se_escribio(n)}» no es un número de lección.")
    espacio = rutas.espacio()
    with cerrojo_del_espacio(espacio, "preparar"):
        return _preparar(numero, espacio)


def _preparar(numero, espacio):
    """Preparar, ya con el cerrojo."""
    if espacio.exists() and not espacio.is_dir():
        raise NotADirectoryError(f"Tu espacio ({rutas.mostrar(espacio)}) es un fichero, no una "
                                 "carpeta. Muévelo o bórralo tú y vuelve a ejecutar esta celda.")
    espacio.mkdir(parents=True, exist_ok=True)
    if numero == 0:
        print("Tu espacio está listo; la lección 00 empieza sin código.")
        return []

    try:
        _, carpeta = punto_de_control(rutas.anterior(numero), "restaurar")
    except PuntoDeControlDesconocido as error:
        raise PuntoDeControlDesconocido(
            f"La lección {numero:02d} empieza desde el punto de control {rutas.anterior(numero):02d}, "
            f"que no está.\n" + "\n".join(rutas.lista_de_puntos())) from error
    faltan = [relativa for relativa in rutas.ficheros(carpeta)
              if not (espacio / relativa).exists()]
    _copiar(carpeta, espacio, faltan)
    atrasados = _atrasados(espacio, carpeta, rutas.anterior(numero))
    for relativa in atrasados:  # una versión de un punto de control anterior: nada tuyo se pierde
        copia = espacio / ".copias" / f"{relativa}.antes-de-la-leccion-{numero:02d}"
        copia.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(espacio / relativa, copia)
    _copiar(carpeta, espacio, atrasados)
    if faltan:
        print(f"Copiados de {carpeta.name} a tu espacio: {', '.join(faltan)}.")
    if atrasados:
        print(f"Puestos al día con {carpeta.name} (tenías la versión de un punto de control "
              f"anterior, que queda en .copias/): {', '.join(atrasados)}.")
    if not faltan and not atrasados:
        print(f"Tu espacio ya tiene todos los ficheros de {carpeta.name}; no hacía falta "
              "copiar nada.")
    return faltan + atrasados


def por_delante(numero, espacio=None):
    """{fichero: lección} de los ficheros de tu espacio que cambió una lección posterior a
    `numero` que ya has hecho: vuelves a una lección con el espacio por delante.

    Una lección cuenta como hecha si tu espacio tiene alguno de los ficheros que ella crea (la 03,
    `compactar.py`); la 02, que no crea ni cambia nada, no cuenta. De cada fichero se dice la
    última lección que lo cambió."""
    from curso.rutas import LECCIONES
    espacio = Path(espacio or rutas.espacio())
    puntos = rutas.puntos_de_control()
    delante = {}
    for k in sorted((k for k in LECCIONES if k > numero), reverse=True):
        anterior = puntos.get(rutas.anterior(k))
        crea = [f for f in LECCIONES[k]["ficheros"] if anterior is None or not (anterior / f).exists()]
        if not any((espacio / f).is_file() for f in crea):
            continue
        for f in LECCIONES[k]["ficheros"]:
            if (espacio / f).is_file():
                delante.setdefault(f, k)
    return delante


def _atrasados(espacio, carpeta, numero):
    """Los ficheros de tu espacio que son, byte a byte, la versión de un punto de control anterior
    a `numero` y no la de `carpeta`: te saltaste la lección que los cambió. Un fichero que no es
    igual a ninguna versión de los puntos de control es tuyo, y no se toca."""
    anteriores = [c for k, c in sorted(rutas.puntos_de_control().items()) if k < numero]
    atrasados = []
    for relativa in rutas.ficheros(carpeta):
        tuyo = espacio / relativa
        if not tuyo.is_file():
            continue
        datos = tuyo.read_bytes()
        if datos == (carpeta / relativa).read_bytes():
            continue
        if any((c / relativa).is_file() and (c / relativa).read_bytes() == datos for c in anteriores):
            atrasados.append(relativa)
    return atrasados


# --- python -m curso comparar / restaurar -----------------------------------------------------

def argumentos_comparar(analizador):
    analizador.description = ("Muestra en qué se diferencia tu espacio de trabajo del punto de "
                              "control N (un diff por fichero). Sale con 0 si coinciden y 1 si no.")
    analizador.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 03")
    analizador.add_argument("--con-soluciones", action="store_true",
                            help="enseña también el diff de los ficheros con ejercicios pendientes "
                                 "(que es su solución)")


def orden_comparar(args):
    return comparar(args.n, con_soluciones=args.con_soluciones)


def argumentos_restaurar(analizador):
    analizador.description = ("Copia el punto de control N a tu espacio de trabajo. Si ya tenías "
                              "algo, antes lo mueve a una copia con fecha al lado: no se pierde nada.")
    analizador.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 02")
    analizador.add_argument("--fichero", metavar="FICHERO",
                            help="solo ese fichero (p. ej. herramientas.py); el tuyo, si lo había, "
                                 "queda en .copias/ y lo demás no se toca")


def orden_restaurar(args):
    return restaurar(args.n, fichero=args.fichero)
