"""Resúmenes durables en SQLite: el historial entero, resúmenes versionados y un puntero.

Lo introduce la lección 04. Guardamos tres cosas por separado:

- `historial`: cada mensaje de una ejecución, numerado (`seq`) y nunca borrado;
- `resumenes`: cada versión de resumen, con su `cobertura` (el último `seq` que resume) y la
  versión de la que partió (`anterior`);
- `ejecuciones`: un único puntero por ejecución, `resumen_activo`.

Instalar un resumen (`instalar`) es comprobar el candidato (`validar_candidato`), añadir una
versión y mover el puntero (`mover_puntero`), todo en una transacción (`transaccion`). El
puntero solo se mueve si sigue señalando la base de la que partió quien preparó el resumen
(compare-and-swap): si otro instaló antes, el resumen llega tarde y se rechaza con
`BaseObsoleta`. Mover el puntero no borra nada.

La petición siguiente se arma con `contexto()`: el resumen activo más la cola del historial
posterior a su cobertura. Lo que llegó mientras se preparaba el resumen está en esa cola.
"""
import json
import math
import os
import reprlib
import sqlite3
from contextlib import contextmanager

# Cuánto espera una conexión a que otra termine su transacción de escritura antes de rendirse
# con «database is locked». Instalar dura milisegundos: diez segundos sobran aunque haya
# muchos escritores en cola.
ESPERA_POR_OTRO_ESCRITOR_S = 10.0

# Los enteros de SQLite tienen 64 bits con signo: uno mayor ni siquiera se puede consultar.
MAYOR_ENTERO_SQLITE = 2**63 - 1

# Una afirmación del resumen: qué se afirma y qué mensaje del historial lo respalda.
CLAVES_DE_AFIRMACION = {"texto", "fuente"}

# Las dos claves foráneas compuestas, (ejecución, resumen), hacen que ni el puntero de una
# ejecución ni la versión de la que parte un resumen puedan ser un resumen de OTRA ejecución.
# (Una clave con algún NULL no se comprueba: sin resumen activo, o sin anterior, vale.)
ESQUEMA = (
    """CREATE TABLE IF NOT EXISTS ejecuciones (
        id TEXT PRIMARY KEY,
        resumen_activo INTEGER,
        FOREIGN KEY (id, resumen_activo) REFERENCES resumenes(ejecucion, id)
    )""",
    """CREATE TABLE IF NOT EXISTS historial (
        ejecucion TEXT NOT NULL REFERENCES ejecuciones(id),
        seq INTEGER NOT NULL CHECK (seq >= 1),
        texto TEXT NOT NULL,
        PRIMARY KEY (ejecucion, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS resumenes (
        id INTEGER PRIMARY KEY,
        ejecucion TEXT NOT NULL REFERENCES ejecuciones(id),
        cobertura INTEGER NOT NULL CHECK (cobertura >= 1),
        cuerpo TEXT NOT NULL,
        anterior INTEGER,
        UNIQUE (ejecucion, id),  -- a lo que apuntan las claves compuestas
        FOREIGN KEY (ejecucion, anterior) REFERENCES resumenes(ejecucion, id)
    )""",
)


class BaseObsoleta(Exception):
    """El resumen partió de una base que ya no es la activa: otro instaló antes."""


@contextmanager
def transaccion(bd):
    """Una transacción de escritura: COMMIT si el bloque termina bien, ROLLBACK si no.

    BEGIN IMMEDIATE pide el turno de escritura al empezar, no a mitad de camino: así, con
    varios escritores, los demás esperan su turno en vez de fallar con «database is locked».
    Se deshace ante cualquier excepción, también KeyboardInterrupt.
    """
    bd.execute("BEGIN IMMEDIATE")
    try:
        yield bd
        bd.execute("COMMIT")
    except BaseException:
        if bd.in_transaction:
            bd.execute("ROLLBACK")
        raise


def abrir(ruta):
    """Abre (o crea) la base de datos de `ruta`, lista para varios procesos a la vez.

    Lanza ValueError si `ruta` no sirve (ver `_conectar`), sin tocar lo que haya en ella.
    """
    bd = _conectar(ruta)
    bd.execute("PRAGMA foreign_keys=ON")  # se activa en cada conexión: SQLite las trae apagadas
    bd.execute("PRAGMA journal_mode=WAL")  # lectores sin esperar al escritor; queda en el fichero
    # En modo WAL, FULL sincroniza el WAL con el disco en cada COMMIT: lo confirmado sobrevive
    # también a un corte de luz. NORMAL solo sincroniza en los checkpoints: la base nunca queda
    # corrupta, pero un corte de luz puede deshacer los últimos COMMIT. (Si solo muere el
    # proceso, con SIGKILL por ejemplo, ninguno de los dos pierde nada confirmado.)
    bd.execute("PRAGMA synchronous=FULL")
    tablas = bd.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE type='table' "
        "AND name IN ('ejecuciones', 'historial', 'resumenes')"
    ).fetchone()[0]
    if tablas < len(ESQUEMA):
        # Sentencia a sentencia con execute(), dentro de una transacción: o las tres tablas o
        # ninguna. No uses executescript() aquí: confirma (COMMIT) cualquier transacción abierta
        # antes de empezar, también con isolation_level=None, y rompería la atomicidad.
        with transaccion(bd):
            for sentencia in ESQUEMA:
                bd.execute(sentencia)
    return bd


def _conectar(ruta):
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


def crear_ejecucion(bd, ejecucion):
    """Registra una ejecución nueva, todavía sin resumen activo."""
    _exigir_ejecucion_valida(ejecucion)
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone():
            raise ValueError(f"La ejecución {ejecucion!r} ya existe: usa otro identificador.")
        bd.execute("INSERT INTO ejecuciones(id) VALUES (?)", (ejecucion,))


def anotar(bd, ejecucion, texto):
    """Añade `texto` al final del historial de `ejecucion` y devuelve su número (`seq`)."""
    _exigir_ejecucion_valida(ejecucion)
    _exigir_texto(texto, "El texto del mensaje", vacio_permitido=True)
    with transaccion(bd):
        _exigir_que_exista(bd, ejecucion)
        (ultimo,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM historial WHERE ejecucion=?", (ejecucion,)
        ).fetchone()
        bd.execute("INSERT INTO historial(ejecucion, seq, texto) VALUES (?, ?, ?)",
                   (ejecucion, ultimo + 1, texto))
    return ultimo + 1


def activo(bd, ejecucion):
    """(id, cobertura) del resumen activo de `ejecucion`, o (None, 0) si aún no tiene."""
    _exigir_ejecucion_valida(ejecucion)
    fila = bd.execute(
        "SELECT e.resumen_activo, COALESCE(r.cobertura, 0) FROM ejecuciones e "
        "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=?",
        (ejecucion,),
    ).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
    return fila


def instalar(bd, ejecucion, base, corte, candidato):
    """Instala `candidato` como resumen de `ejecucion` hasta `corte`, partiendo de `base`.

    `base` es el id del resumen activo que se leyó al preparar el candidato (None si no había
    ninguno); `corte`, el último mensaje del historial que el candidato resume. El candidato es
    una lista de afirmaciones {"texto": str, "fuente": seq}; la fuente puede ser cualquier
    mensaje de la ejecución hasta el corte, también uno que ya citaba un resumen anterior.

    Devuelve el id del resumen nuevo. Lanza ValueError si algo está mal formado y
    BaseObsoleta si el activo ya no es `base`. Un rechazo no cambia nada en la base de datos.
    """
    # Primero lo que se puede comprobar sin leer la base de datos.
    _exigir_ejecucion_valida(ejecucion)
    _exigir_base(base)
    _exigir_entero_positivo(corte, "El corte")

    with transaccion(bd):
        # Lo que depende de la base de datos, dentro del turno de escritura: nadie lo cambia
        # entre la comprobación y la escritura.
        _exigir_que_exista(bd, ejecucion)
        cobertura_base = _cobertura(bd, ejecucion, base)
        if corte <= cobertura_base:
            raise ValueError(
                f"El corte {corte} no amplía la cobertura de la base ({cobertura_base}): "
                "un resumen nuevo debe cubrir más mensajes que aquel del que parte."
            )
        if not _en_historial(bd, ejecucion, corte):
            raise ValueError(
                f"El corte {corte} no es un mensaje del historial de {ejecucion!r}: "
                "corta en un mensaje que exista."
            )
        validar_candidato(bd, ejecucion, corte, candidato)

        nuevo = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, ?, ?, ?)",
            (ejecucion, corte, json.dumps(candidato, ensure_ascii=False), base),
        ).lastrowid
        # Si el puntero ya no está en la base, mover_puntero lanza BaseObsoleta, y la excepción
        # deshace también el INSERT de arriba: no queda ninguna versión suelta.
        mover_puntero(bd, ejecucion, base, nuevo)
    return nuevo


def validar_candidato(bd, ejecucion, corte, candidato):
    """Lanza ValueError si `candidato` no es un resumen válido de `ejecucion` hasta `corte`.

    Válido es una lista no vacía de afirmaciones {"texto": texto no vacío, "fuente": seq} cuyas
    fuentes son mensajes del historial de `ejecucion` no posteriores a `corte`; también los que
    ya citaba un resumen anterior (una referencia heredada sigue siendo válida). Encontrar la
    fila prueba que la referencia existe, no que la frase diga lo que dice el mensaje.

    No escribe nada. `instalar` la llama dentro de su transacción. Como es pública, comprueba
    también la ejecución y el corte: con un corte NaN, ninguna fuente sería «posterior».
    """
    _exigir_ejecucion_valida(ejecucion)
    _exigir_entero_positivo(corte, "El corte")
    if not isinstance(candidato, list):
        raise ValueError(f"El resumen debe ser una lista de afirmaciones, no {muestra(candidato)}.")
    if not candidato:
        raise ValueError("El resumen está vacío: debe conservar al menos una afirmación con su fuente.")
    for numero, afirmacion in enumerate(candidato, 1):
        if not isinstance(afirmacion, dict) or set(afirmacion) != CLAVES_DE_AFIRMACION:
            raise ValueError(
                f"La afirmación {numero} debe ser un dict con exactamente las claves "
                f"'texto' y 'fuente', no {muestra(afirmacion)}."
            )
        _exigir_texto(afirmacion["texto"], f"El texto de la afirmación {numero}")
        _exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {numero}")
    for fuente in sorted({afirmacion["fuente"] for afirmacion in candidato}):
        if fuente > corte or not _en_historial(bd, ejecucion, fuente):
            raise ValueError(
                f"La fuente {fuente} no es un mensaje de {ejecucion!r} anterior o igual al "
                f"corte {corte}: cita solo mensajes que el resumen cubre."
            )


def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap: el resumen activo de `ejecucion` pasa a ser `nuevo` solo si aún es `base`.

    Si otro lo movió antes, lanza BaseObsoleta y no cambia nada. Va dentro de la transacción de
    `instalar`, para que su excepción deshaga también la versión recién insertada.

    `nuevo` tiene que ser un resumen de `ejecucion` (ValueError si no): el puntero de una
    ejecución nunca señala el resumen de otra. El esquema tampoco lo deja (ver ESQUEMA).
    """
    _exigir_ejecucion_valida(ejecucion)
    _exigir_base(base)
    _exigir_entero_positivo(nuevo, "El resumen nuevo")
    _exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    # `IS` compara también NULL (sin resumen previo), cosa que `=` no hace.
    movido = bd.execute(
        "UPDATE ejecuciones SET resumen_activo=? WHERE id=? AND resumen_activo IS ?",
        (nuevo, ejecucion, base),
    )
    if movido.rowcount == 0:
        (ahora,) = bd.execute(
            "SELECT resumen_activo FROM ejecuciones WHERE id=?", (ejecucion,)
        ).fetchone()
        raise BaseObsoleta(
            f"La base de este resumen era {_nombre(base)}, pero el activo ya es {_nombre(ahora)}: "
            "vuelve a leer el activo y prepara el resumen desde él."
        )


def contexto(bd, ejecucion):
    """Lo que necesita la petición siguiente: el resumen activo y la cola posterior.

    Devuelve {"activo": id o None, "resumen": lista de afirmaciones o None,
    "cobertura": n, "cola": [(seq, texto), ...]}, leído todo en una sola instantánea.
    """
    _exigir_ejecucion_valida(ejecucion)
    bd.execute("BEGIN")  # una transacción de lectura: el resumen y la cola, del mismo instante
    try:
        fila = bd.execute(
            "SELECT e.resumen_activo, COALESCE(r.cobertura, 0), r.cuerpo FROM ejecuciones e "
            "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=?",
            (ejecucion,),
        ).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
        id_activo, cobertura, cuerpo = fila
        cola = bd.execute(
            "SELECT seq, texto FROM historial WHERE ejecucion=? AND seq>? ORDER BY seq",
            (ejecucion, cobertura),
        ).fetchall()
    finally:
        bd.execute("COMMIT")
    return {
        "activo": id_activo,
        "resumen": None if cuerpo is None else json.loads(cuerpo),
        "cobertura": cobertura,
        "cola": cola,
    }


# --- Comprobaciones -------------------------------------------------------------------------

def _exigir_ejecucion_valida(ejecucion):
    if not isinstance(ejecucion, str) or not ejecucion:
        raise ValueError(f"La ejecución debe ser un texto no vacío, no {muestra(ejecucion)}.")
    _exigir_texto(ejecucion, "La ejecución")


def _exigir_texto(valor, que, vacio_permitido=False):
    if not isinstance(valor, str):
        raise ValueError(f"{que} debe ser un texto, no {muestra(valor)}.")
    if not vacio_permitido and not valor.strip():
        raise ValueError(f"{que} está vacío: escribe qué se afirma.")
    try:
        valor.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{que} contiene caracteres que no se pueden guardar en UTF-8.") from None


def _exigir_entero_positivo(valor, que):
    """Un id o un número de mensaje: un int de 1 a MAYOR_ENTERO_SQLITE."""
    # type(...) is int descarta bool: True == 1 y pasaría por un mensaje de verdad.
    if type(valor) is not int or not 1 <= valor <= MAYOR_ENTERO_SQLITE:
        raise ValueError(f"{que} debe ser un entero positivo (no un bool) que quepa en SQLite "
                         f"(hasta 2**63 - 1), no {muestra(valor)}.")


def _exigir_base(base):
    """La base de un compare-and-swap: None (aún no había resumen) o el id de un resumen."""
    if base is not None:
        _exigir_entero_positivo(base, "La base")


def _exigir_que_exista(bd, ejecucion):
    if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone():
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")


def _exigir_resumen_de(bd, ejecucion, resumen, que):
    """La cobertura de `resumen`; ValueError si no es un resumen de `ejecucion`."""
    fila = bd.execute(
        "SELECT cobertura FROM resumenes WHERE id=? AND ejecucion=?", (resumen, ejecucion)
    ).fetchone()
    if fila is None:
        raise ValueError(f"{que} {resumen} no es un resumen de la ejecución {ejecucion!r}: una "
                         "ejecución solo parte de sus propios resúmenes, y solo a ellos señala.")
    return fila[0]


def _cobertura(bd, ejecucion, base):
    return 0 if base is None else _exigir_resumen_de(bd, ejecucion, base, "La base")


def _en_historial(bd, ejecucion, seq):
    return bd.execute(
        "SELECT 1 FROM historial WHERE ejecucion=? AND seq=?", (ejecucion, seq)
    ).fetchone() is not None


def _nombre(id_resumen):
    return "ningún resumen" if id_resumen is None else f"el resumen {id_resumen}"


# Un mensaje de error cita el valor que rechaza, pero corto: lo justo para reconocerlo.
LARGO_DE_MUESTRA = 60


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
