"""Las comprobaciones de la entrada de `historial.py` y `resumenes.py`, con sus mensajes de error en castellano.

Lección 04. Una llamada mal hecha se rechaza con un ValueError que dice qué se
esperaba y qué llegó, antes de escribir nada: la base de datos queda como estaba. Están aparte
para que `historial.py` y `resumenes.py` se lean como lo que hacen; el buzón de la lección 05
usa también `muestra`.
"""
import math
import os
import reprlib
import sqlite3

# Cuánto espera una conexión a que otra termine su transacción de escritura antes de rendirse
# con «database is locked». Instalar dura milisegundos: diez segundos sobran aunque haya
# muchos escritores en cola.
ESPERA_POR_OTRO_ESCRITOR_S = 10.0

# Los enteros de SQLite tienen 64 bits con signo: uno mayor ni siquiera se puede consultar.
MAYOR_ENTERO_SQLITE = 2**63 - 1

# Un mensaje de error cita el valor que rechaza, pero corto: lo justo para reconocerlo.
LARGO_DE_MUESTRA = 60

# El identificador de una ejecución la nombra: no es un documento. Con un límite, el mismo en los dos
# motores: PostgreSQL (lección 07) no guarda en un índice una clave de más de unos 2700 bytes, y cien
# caracteres son, como mucho, 400 bytes en UTF-8.
LARGO_MAXIMO_DE_EJECUCION = 100


def conectar(ruta):
    """sqlite3.connect() con los errores de una ruta que no sirve dichos en castellano.

    SQLite no lee el fichero hasta la primera consulta, y sus errores no dicen qué se esperaba
    («unable to open database file», «file is not a database»): por eso se lee aquí, antes de
    escribir nada, y una carpeta o un fichero de texto se rechazan tal como estaban.
    """
    if not isinstance(ruta, (str, os.PathLike)):
        raise ValueError(f"La ruta de la base de datos debe ser un texto o un Path, no {muestra(ruta)}.")
    if os.path.isdir(ruta):
        raise ValueError(f"La ruta {str(ruta)!r} es una carpeta: abrir() espera la de un fichero de "
                         "base de datos, que puede no existir todavía (p. ej. «carpeta/resumenes.db»).")
    try:
        bd = sqlite3.connect(ruta, isolation_level=None, timeout=ESPERA_POR_OTRO_ESCRITOR_S)
    except ValueError:  # un carácter nulo, o uno que no se puede codificar
        raise ValueError(f"La ruta {muestra(ruta)} no es un nombre de fichero válido.") from None
    except sqlite3.OperationalError as error:
        if error.sqlite_errorname != "SQLITE_CANTOPEN":
            raise
        raise ValueError(f"No se puede abrir ni crear {str(ruta)!r}: comprueba que su carpeta exista "
                         "y que puedas escribir en ella.") from None
    try:
        bd.execute("SELECT COUNT(*) FROM sqlite_master")  # la primera lectura del fichero
    except sqlite3.DatabaseError as error:
        bd.close()
        if error.sqlite_errorname != "SQLITE_NOTADB":
            raise
        raise ValueError(f"{str(ruta)!r} no es una base de datos SQLite (¿un fichero de texto?): no se "
                         "ha tocado. Usa la ruta de una base de datos o la de un fichero nuevo.") from None
    return bd


def exigir_ejecucion(ejecucion):
    """El identificador de una ejecución: un texto no vacío, de como mucho LARGO_MAXIMO_DE_EJECUCION
    caracteres, que se pueda guardar."""
    if not isinstance(ejecucion, str) or not ejecucion:
        raise ValueError(f"La ejecución debe ser un texto no vacío, no {muestra(ejecucion)}.")
    if len(ejecucion) > LARGO_MAXIMO_DE_EJECUCION:
        raise ValueError(f"El identificador de la ejecución tiene {len(ejecucion)} caracteres "
                         f"({muestra(ejecucion)}): como mucho, {LARGO_MAXIMO_DE_EJECUCION}.")
    exigir_texto(ejecucion, "La ejecución")


def exigir_texto(valor, que, vacio_permitido=False):
    """Un texto que se pueda guardar en UTF-8; vacío (o solo espacios), si `vacio_permitido`."""
    if not isinstance(valor, str):
        raise ValueError(f"{que} debe ser un texto, no {muestra(valor)}.")
    if not vacio_permitido and not valor.strip():
        raise ValueError(f"{que} está vacío: escribe qué se afirma.")
    try:
        valor.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{que} contiene caracteres que no se pueden guardar en UTF-8.") from None


def exigir_entero_positivo(valor, que):
    """Un id o un número de mensaje: un int de 1 a MAYOR_ENTERO_SQLITE."""
    # type(...) is int descarta bool: True == 1 y pasaría por un mensaje de verdad.
    if type(valor) is not int or not 1 <= valor <= MAYOR_ENTERO_SQLITE:
        raise ValueError(f"{que} debe ser un entero positivo (no un bool) que quepa en SQLite "
                         f"(hasta 2**63 - 1), no {muestra(valor)}.")


def exigir_base(base):
    """La base de un compare-and-swap: None (aún no había resumen) o el id de un resumen."""
    if base is not None:
        exigir_entero_positivo(base, "La base")


def exigir_que_exista(bd, ejecucion):
    """ValueError si `ejecucion` no está registrada en `bd`."""
    if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone():
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")


def exigir_resumen_de(bd, ejecucion, resumen, que):
    """La cobertura de `resumen`; ValueError si no es un resumen de `ejecucion`."""
    fila = bd.execute(
        "SELECT cobertura FROM resumenes WHERE id=? AND ejecucion=?", (resumen, ejecucion)
    ).fetchone()
    if fila is None:
        raise ValueError(f"{que} {resumen} no es un resumen de la ejecución {ejecucion!r}: una "
                         "ejecución solo parte de sus propios resúmenes, y solo a ellos señala.")
    return fila[0]


def nombre_del_resumen(id_resumen):
    """Cómo cita un mensaje de error un resumen (o su falta)."""
    return "ningún resumen" if id_resumen is None else f"el resumen {id_resumen}"


class _Muestrario(reprlib.Repr):
    """El repr() acotado de reprlib (corta los textos, las listas y lo muy anidado, donde repr()
    agotaría la pila), que además describe los enteros largos en vez de escribirlos: Python no
    escribe en decimal los de más de 4300 cifras, y sus cifras no caben en una muestra."""

    def repr_int(self, valor, nivel):
        cifras = int(valor.bit_length() * math.log10(2)) + 1  # exactas, o una de más
        return repr(valor) if cifras <= LARGO_DE_MUESTRA else f"un entero de unas {cifras} cifras"


_MUESTRARIO = _Muestrario()
_MUESTRARIO.maxstring = _MUESTRARIO.maxother = LARGO_DE_MUESTRA


def muestra(valor):
    """Una muestra corta de cualquier valor, para citarlo en un mensaje de error (también la usa
    el buzón de la lección 05). El mensaje de un rechazo no puede fallar por el valor que cita."""
    texto = _MUESTRARIO.repr(valor)
    return texto if len(texto) <= LARGO_DE_MUESTRA else texto[:LARGO_DE_MUESTRA - 3] + "..."
