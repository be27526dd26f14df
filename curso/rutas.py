"""Para todo el paquete: dónde está cada cosa, qué trae cada lección y cómo cargar un módulo del arnés.

La carpeta del curso (RAIZ: la que tiene checkpoints/, notebooks/, recetario/ y curso/) se busca
la primera vez que alguien la pide, no al importar este módulo, y así:

1. la variable CURSO_RAIZ, si está (y entonces solo esa: si no es la del curso, se dice);
2. la carpeta que contiene al paquete `curso`, si es la del curso: el repositorio, instalado con
   `pip install -e .` (lo que hace requirements.txt) o sin instalar;
3. la carpeta de trabajo y las de encima, hasta dar con la del curso. JupyterLab arranca el núcleo
   de cada cuaderno en la carpeta del cuaderno (notebooks/), así que desde un cuaderno se llega.

Con `pip install .`, sin `-e` (lo que hacen repo2docker al ver pyproject.toml y una imagen de
JupyterHub), el paquete vive en site-packages y la 2 no sirve: quedan la 1 y la 3. Si ninguna
encuentra el curso, `CursoNoEncontrado` dice en castellano qué hacer.

Y cómo se carga un módulo del arnés desde su fichero (`cargar_modulo`): los de los puntos de
control y los del espacio del alumno se llaman igual (`historial`, `buzon`...), así que no se
importan por su nombre, sino por su ruta.

Los nombres RAIZ, PUNTOS, SOLUCIONES, CUADERNOS, RECETARIO y ESPACIO_POR_DEFECTO se calculan al
pedir el primero (`rutas.RAIZ`, `from curso.rutas import PUNTOS`); después son variables del
módulo como cualquier otra, y los tests las pueden cambiar.
"""
import argparse
import importlib.util
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from tempfile import gettempdir

VARIABLE_RAIZ = "CURSO_RAIZ"
# Lo que tiene la carpeta del curso. La copia que arma `comprobar` en una carpeta temporal tiene
# checkpoints/ y recetario/, pero no notebooks/ ni curso/: no se confunde con el curso.
MARCAS = ("checkpoints", "notebooks", "recetario", "curso")

# El espacio de trabajo del alumno. Los tests lo cambian por uno temporal con esta variable,
# para no tocar nunca el del alumno.
VARIABLE_ESPACIO = "CURSO_ESPACIO"
NOMBRE_DEL_ESPACIO = "mi_agente"

# Lo que no es código del alumno: no se compara, no se copia al restaurar.
IGNORADOS = {"tests", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".copias",
             ".hypothesis"}  # la caché que deja hypothesis donde se corren sus tests


class CursoNoEncontrado(RuntimeError):
    """No se sabe dónde está la carpeta del curso (ver el docstring del módulo)."""


def es_el_curso(carpeta):
    """¿Tiene `carpeta` lo que tiene la del curso (MARCAS)?"""
    carpeta = Path(carpeta)
    return all((carpeta / marca).is_dir() for marca in MARCAS)


def buscar_raiz(entorno=None, trabajo=None, paquete=None):
    """La carpeta del curso, buscada como dice el docstring del módulo, o CursoNoEncontrado.

    entorno: las variables (os.environ si no se da); trabajo: la carpeta de trabajo (la actual);
    paquete: la carpeta del paquete `curso` (la de este fichero)."""
    entorno = os.environ if entorno is None else entorno
    trabajo = Path(os.getcwd() if trabajo is None else trabajo).resolve()
    paquete = Path(paquete or Path(__file__).parent).resolve()
    dada = entorno.get(VARIABLE_RAIZ)
    if dada:
        carpeta = Path(dada).expanduser().resolve()
        if es_el_curso(carpeta):
            return carpeta
        faltan = [f"{m}/" for m in MARCAS if not (carpeta / m).is_dir()]
        raise CursoNoEncontrado(
            f"{VARIABLE_RAIZ}={dada} no es la carpeta del curso: le falta {', '.join(faltan)}. "
            f"Pon en {VARIABLE_RAIZ} la carpeta del repositorio (la que tiene checkpoints/ y "
            f"notebooks/), o quítala y abre los cuadernos desde el curso.")
    if es_el_curso(paquete.parent):
        return paquete.parent
    for carpeta in (trabajo, *trabajo.parents):
        if es_el_curso(carpeta):
            return carpeta
    raise CursoNoEncontrado(
        "No encuentro la carpeta del curso «Construye tu agente» (la que tiene checkpoints/, "
        "notebooks/ y recetario/). He mirado la variable "
        f"{VARIABLE_RAIZ} (no está puesta), junto al paquete curso ({paquete.parent}: está "
        "instalado sin -e) y desde la carpeta de trabajo "
        f"({trabajo}) hacia arriba.\n"
        "Qué hacer, una de tres:\n"
        "  · abre JupyterLab desde la carpeta del curso: cd construye-tu-agente && jupyter lab notebooks/\n"
        f"  · di dónde está: export {VARIABLE_RAIZ}=/ruta/a/construye-tu-agente "
        f"(en un cuaderno, antes de la primera celda: %env {VARIABLE_RAIZ}=/ruta/a/construye-tu-agente)\n"
        "  · o instala el curso editable desde su carpeta: python -m pip install -e .")


_DERIVADAS = {
    "RAIZ": lambda raiz: raiz,
    "PUNTOS": lambda raiz: raiz / "checkpoints",
    "SOLUCIONES": lambda raiz: raiz / "solutions",
    "CUADERNOS": lambda raiz: raiz / "notebooks",
    "RECETARIO": lambda raiz: raiz / "recetario",
    "ESPACIO_POR_DEFECTO": lambda raiz: raiz / NOMBRE_DEL_ESPACIO,
}


def _cargar():
    """Calcula las rutas de _DERIVADAS la primera vez (las que ya estén, p. ej. cambiadas por
    un test, se respetan)."""
    globales = globals()
    if all(nombre in globales for nombre in _DERIVADAS):
        return
    raiz = globales["RAIZ"] if "RAIZ" in globales else buscar_raiz()
    for nombre, calcular in _DERIVADAS.items():
        globales.setdefault(nombre, calcular(raiz))


def __getattr__(nombre):
    """`rutas.RAIZ` y las demás de _DERIVADAS, calculadas al pedirlas por primera vez."""
    if nombre in _DERIVADAS:
        _cargar()
        return globals()[nombre]
    raise AttributeError(f"module {__name__!r} has no attribute {nombre!r}")


def _derivada(nombre):
    """RAIZ, PUNTOS... (las de _DERIVADAS) desde dentro de este módulo, como `rutas.RAIZ` desde fuera."""
    return __getattr__(nombre)


def espacio():
    """La carpeta donde las celdas de ejercicio escriben los módulos del alumno."""
    variable = os.environ.get(VARIABLE_ESPACIO)
    if variable:
        return Path(variable).resolve()
    _cargar()
    return Path(ESPACIO_POR_DEFECTO).resolve()  # noqa: F821 - la pone _cargar()


def puntos_de_control():
    """{número: carpeta} de cada punto de control, en el orden del curso, p. ej.
    {0: .../checkpoints/00_antes_de_empezar, ..., 3: .../03_compactar, TRES_B: .../03b_limpiar_lo_viejo}."""
    _cargar()
    puntos = {}
    for carpeta in Path(PUNTOS).glob("[0-9][0-9]*_*"):  # noqa: F821 - la pone _cargar()
        numero = numero_de_leccion(carpeta.name)
        if carpeta.is_dir() and numero is not None:
            puntos[numero] = carpeta
    return dict(sorted(puntos.items()))


def ficheros(carpeta):
    """{ruta relativa (con /): fichero} de lo que es código del alumno en `carpeta` (sin tests/,
    cachés ni copias), por orden de ruta: se recorre como la lista de las rutas relativas."""
    carpeta = Path(carpeta)
    if not carpeta.is_dir():
        return {}
    return {p.relative_to(carpeta).as_posix(): p
            for p in sorted(carpeta.rglob("*"), key=lambda p: p.relative_to(carpeta).as_posix())
            if p.is_file() and not IGNORADOS.intersection(p.relative_to(carpeta).parts)
            and not p.name.endswith(".pyc")}


class Intercalada(float):
    """El número de una lección que va entre dos: la 03b, entre la 03 y la 04.

    Se ordena entre ellas (vale 3.5) y se escribe como se llama: `str` da «3b» y `f"{n:02d}"`
    da «03b», igual que el nombre de su carpeta y de su cuaderno. Lo que cuenta lecciones con
    `n - 1` no sirve con ella: la anterior de una lección es `anterior(n)`.
    """

    def __new__(cls, entera, letra):
        numero = super().__new__(cls, entera + 0.5)
        numero.entera, numero.letra = entera, letra
        return numero

    def __str__(self):
        return f"{self.entera}{self.letra}"

    __repr__ = __str__

    def __format__(self, formato):
        if formato.endswith("d"):  # «02d»: las cifras como las de una lección entera, y la letra
            return format(self.entera, formato) + self.letra
        return format(str(self), formato)

    def __reduce__(self):
        return (Intercalada, (self.entera, self.letra))


TRES_B = Intercalada(3, "b")  # «limpiar lo viejo», entre compactar (03) y los resúmenes (04)
INTERCALADAS = {str(TRES_B): TRES_B}


def numero_de_leccion(nombre):
    """El número de una lección a partir del nombre de su cuaderno o carpeta ('03_compactar' → 3,
    '03b_limpiar_lo_viejo' → TRES_B)."""
    m = re.match(r"(\d\d)([a-z]?)_", Path(nombre).name)
    if not m:
        return None
    if m.group(2):
        return INTERCALADAS.get(f"{int(m.group(1))}{m.group(2)}")
    return int(m.group(1))


class LeccionDesconocida(ValueError, argparse.ArgumentTypeError):
    """Lo escrito no es una lección del curso (argparse enseña su mensaje tal cual)."""


def leccion_escrita(texto):
    """El número que alguien escribe en una orden, sin mirar si existe: «4», «04» → 4; «3b» → TRES_B."""
    limpio = str(texto).strip().lower()
    m = re.fullmatch(r"0*(\d+)([a-z]?)", limpio)
    if m and m.group(2):
        numero = INTERCALADAS.get(f"{int(m.group(1))}{m.group(2)}")
        if numero is not None:
            return numero
    elif m and len(m.group(1)) <= 6:
        return int(m.group(1))
    raise LeccionDesconocida(f"«{texto}» no es el número de una lección (p. ej. 4, 04 o 3b).")


def leccion_pedida(texto):
    """Como `leccion_escrita`, y además tiene que ser una lección del curso: si no, LeccionDesconocida
    (un ValueError) en castellano, que argparse enseña tal cual si se usa como `type=`."""
    numero = leccion_escrita(texto)
    if numero not in LECCIONES:
        validas = ", ".join(f"{n:02d}" for n in LECCIONES)
        raise LeccionDesconocida(f"«{texto}» no es una lección del curso; las lecciones son {validas}.")
    return numero


def anterior(numero):
    """La lección de antes en el orden del curso (anterior(4) → TRES_B, anterior(TRES_B) → 3),
    o None para la primera."""
    orden, posicion = _en_el_orden(numero)
    return orden[posicion - 1] if posicion else None


def siguiente(numero):
    """La lección de después en el orden del curso (siguiente(3) → TRES_B), o None para la última."""
    orden, posicion = _en_el_orden(numero)
    return orden[posicion + 1] if posicion + 1 < len(orden) else None


def _en_el_orden(numero):
    """Las lecciones en orden y el sitio de `numero` entre ellas; LeccionDesconocida si no está."""
    orden = sorted(LECCIONES)
    if numero not in orden:
        validas = ", ".join(f"{n:02d}" for n in orden)
        raise LeccionDesconocida(f"La lección {numero:02d} no es del curso; las lecciones son {validas}.")
    return orden, orden.index(numero)


# --- Cargar un módulo del arnés desde su fichero ------------------------------------------------

# ---------------------------------------------------------------- qué punto de control es
# (lo usan las órdenes del alumno: comparar, restaurar, preparar y comprobar N)

ARGUMENTO_INVALIDO = 2  # el código de salida de una orden con un número que no es de ningún punto (el de diff)


class PuntoDeControlDesconocido(ValueError):
    """El número pedido no corresponde a ningún punto de control; el mensaje lista los que hay."""


# Ningún punto de control tiene un número tan largo. Mirarlo antes de convertir evita el límite
# de Python para pasar textos larguísimos a int (4300 cifras), que lanzaría un ValueError en inglés.
CIFRAS_COMO_MUCHO = 6


def como_numero(n):
    """El número que representa `n` (3, "3", "03"; "3b", "03b" o TRES_B para la 03b), o None
    si no es el número de ningún punto de control posible (negativo, no entero, o de más de
    CIFRAS_COMO_MUCHO cifras)."""
    if isinstance(n, bool):
        return None
    if isinstance(n, Intercalada):
        return n
    if isinstance(n, int):
        return n if 0 <= n < 10 ** CIFRAS_COMO_MUCHO else None
    texto = str(n).strip()
    intercalada = INTERCALADAS.get(texto.lower().lstrip("0"))
    if intercalada is not None:
        return intercalada
    if not (texto.isascii() and texto.isdigit()):
        return None
    texto = texto.lstrip("0") or "0"
    return int(texto) if len(texto) <= CIFRAS_COMO_MUCHO else None


def como_se_escribio(n, ancho=20):
    """`n` para repetirlo en un mensaje, recortado si es muy largo (un int enorme no se puede ni
    pasar a texto)."""
    if isinstance(n, int) and not isinstance(n, bool) and abs(n) >= 10 ** ancho:
        return f"un número de más de {ancho} cifras"
    texto = str(n)
    return texto if len(texto) <= ancho else f"{texto[:ancho]}… ({len(texto)} caracteres)"


def lista_de_puntos():
    """Las líneas «  01  el_bucle» de los puntos de control que hay, para mostrarlas."""
    puntos = puntos_de_control()
    if not puntos:
        return [f"No hay puntos de control en {mostrar(_derivada('PUNTOS'))}/."]
    lineas = ["Los puntos de control que hay son:"]
    for numero, carpeta in puntos.items():
        lineas.append(f"  {numero:02d}  {carpeta.name.split('_', 1)[1]}")
    return lineas


def punto_de_control(n, orden="comparar"):
    """(número, carpeta) del punto de control `n`; si no existe, PuntoDeControlDesconocido
    (con un ejemplo de cómo usar `orden` con un número que sí existe)."""
    numero = como_numero(n)
    puntos = puntos_de_control()
    if numero is None or numero not in puntos:
        mensaje = [f"No hay ningún punto de control «{como_se_escribio(n)}»."] + lista_de_puntos()
        if puntos:
            mensaje.append(f"Usa su número, por ejemplo: python -m curso {orden} "
                           f"{min(puntos):02d}")
        raise PuntoDeControlDesconocido("\n".join(mensaje))
    return numero, puntos[numero]


def mostrar(ruta):
    """Una ruta para enseñarla: relativa al repositorio si está dentro, entera si no."""
    ruta = Path(ruta)
    try:
        return ruta.relative_to(_derivada("RAIZ")).as_posix()
    except ValueError:
        return str(ruta)


def describir_espacio(carpeta=None):
    """Tu espacio (o `carpeta`) para enseñarlo sin rutas que cambien de una máquina a otra:
    relativo al repositorio (`mi_agente/`) o, si lo fijó CURSO_ESPACIO fuera de él, dicho así."""
    carpeta = Path(carpeta or espacio())
    try:
        return carpeta.relative_to(_derivada("RAIZ")).as_posix() + "/"
    except ValueError:
        pass
    if carpeta.is_relative_to(Path(gettempdir()).resolve()):
        return f"una carpeta temporal, de {VARIABLE_ESPACIO}"
    return f"{carpeta}/, de {VARIABLE_ESPACIO}"


@contextmanager
def carpeta_aparte(carpeta, salvo=()):
    """Mientras dura el bloque, los módulos de `carpeta` se importan de ella: la carpeta va la
    primera de sys.path, y los nombres de sus ficheros .py (menos los de `salvo`) se apartan de
    sys.modules, para que un `import historial` lea el de la carpeta aunque ya hubiera otro. Al
    salir, sys.path y esos nombres de sys.modules quedan como estaban."""
    carpeta = Path(carpeta).resolve()
    nombres = {fichero.stem for fichero in carpeta.glob("*.py")} - set(salvo)
    apartados = {nombre: sys.modules.pop(nombre) for nombre in nombres if nombre in sys.modules}
    sys.path.insert(0, str(carpeta))
    try:
        yield carpeta
    finally:
        sys.path.remove(str(carpeta))  # la primera aparición: la que acabamos de poner
        for nombre in nombres:
            sys.modules.pop(nombre, None)
        sys.modules.update(apartados)


def cargar_modulo(ruta, nombre, *, aislado=True):
    """Ejecuta el fichero `ruta` como un módulo nuevo llamado `nombre` y lo devuelve. Mientras se
    ejecuta, su carpeta va la primera de sys.path: sus `from historial import abrir` encuentran a
    sus vecinos.

    aislado=True (el explorador de carreras, las comprobaciones, los tests): el módulo recibe los
    vecinos de su carpeta, cargados de nuevo aunque sys.modules ya tuviera otros con esos nombres,
    y al terminar sys.path y esos nombres quedan como estaban (`carpeta_aparte`): los vecinos solo
    los conserva el módulo cargado. Él queda en sys.modules con `nombre`, que por eso ha de ser uno
    propio (p. ej. `_buzon_05`), no el de un módulo del arnés.

    aislado=False (la comprobación de un ejercicio en el espacio del alumno): el módulo ve
    sys.modules tal como está, es decir, lo que el núcleo del cuaderno sirve ahora (también la
    versión de referencia de un ejercicio pendiente); lo que importe por primera vez se queda
    importado, y él no se registra en sys.modules (no sustituye al módulo que usa el cuaderno).
    """
    ruta = Path(ruta)
    especificacion = importlib.util.spec_from_file_location(nombre, ruta)
    if especificacion is None or not ruta.is_file():
        raise ImportError(f"No encuentro el módulo {ruta}.")
    modulo = importlib.util.module_from_spec(especificacion)
    if not aislado:
        carpeta = str(ruta.resolve().parent)
        sys.path.insert(0, carpeta)
        try:
            especificacion.loader.exec_module(modulo)
        finally:
            sys.path.remove(carpeta)
        return modulo
    with carpeta_aparte(ruta.parent, salvo={ruta.stem}):
        sys.modules[nombre] = modulo
        try:
            especificacion.loader.exec_module(modulo)
        except BaseException:
            del sys.modules[nombre]
            raise
    return modulo


# El mapa de las lecciones: cada una, su cuaderno y los ficheros que añade o cambia en el harness.
# Cada punto de control se llama como su cuaderno, salvo que la lección diga otro nombre en
# "punto". Lo usan `preparar`, `calificar`, los tests de coherencia y checkpoints/README.md.
LECCIONES = {
    0: {"cuaderno": "00_antes_de_empezar", "ficheros": ["calentamiento.py"]},
    1: {"cuaderno": "01_el_bucle",
        "ficheros": ["entorno.py", "procesos.py", "herramientas.py", "permisos.py", "bucle.py", "agente.py",
                     "api.py", "correr.py"]},
    2: {"cuaderno": "02_la_ventana", "ficheros": []},
    3: {"cuaderno": "03_compactar",
        "ficheros": ["compactar.py", "bucle.py", "agente.py", "correr.py", "herramientas.py", "entorno.py",
                     "permisos.py"]},
    TRES_B: {"cuaderno": "03b_limpiar_lo_viejo", "ficheros": ["limpiar.py", "bucle.py", "agente.py", "correr.py"]},
    4: {"cuaderno": "04_resumenes_en_sqlite", "ficheros": ["validacion.py", "historial.py", "resumenes.py", "durable.py"]},
    5: {"cuaderno": "05_el_buzon",
        "ficheros": ["entorno.py", "procesos.py", "herramientas.py", "permisos.py", "exigencias.py", "encargos.py",
                     "padres.py", "buzon.py", "hijos.py", "subagentes.py"]},
    6: {"cuaderno": "06_todo_junto",
        "ficheros": ["herramientas.py", "pasos.py", "registro.py", "efectos.py", "agentes.py", "api.py",
                     "reintentos.py", "reanudar.py", "correr.py", "todo_junto.py"]},
    # Las dos cuyo punto de control no se llama como su cuaderno: lo que dejan es PostgreSQL y DBOS.
    7: {"cuaderno": "07_cuando_una_maquina_no_basta", "punto": "07_postgresql",
        "ficheros": ["historial_pg.py", "resumenes_pg.py", "padres_pg.py", "buzon_pg.py"]},
    8: {"cuaderno": "08_el_motor_de_verdad", "punto": "08_dbos",
        "ficheros": ["motor.py", "efectos_dbos.py", "flujos.py", "todo_junto_dbos.py"]},
}
