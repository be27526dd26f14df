"""Resúmenes durables en SQLite: el historial entero, resúmenes versionados y un puntero.

Lección 04. Guardamos tres cosas por separado:

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
from contextlib import contextmanager

from validacion import (conectar, exigir_base, exigir_ejecucion, exigir_entero_positivo, exigir_que_exista,
                        exigir_resumen_de, exigir_texto, muestra, nombre_del_resumen)

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

    Lanza ValueError si `ruta` no sirve (ver `validacion.conectar`), sin tocar lo que haya en ella.
    """
    bd = conectar(ruta)
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


def crear_ejecucion(bd, ejecucion):
    """Registra una ejecución nueva, todavía sin resumen activo."""
    exigir_ejecucion(ejecucion)
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone():
            raise ValueError(f"La ejecución {ejecucion!r} ya existe: usa otro identificador.")
        bd.execute("INSERT INTO ejecuciones(id) VALUES (?)", (ejecucion,))


def anotar(bd, ejecucion, texto):
    """Añade `texto` al final del historial de `ejecucion` y devuelve su número (`seq`)."""
    exigir_ejecucion(ejecucion)
    exigir_texto(texto, "El texto del mensaje", vacio_permitido=True)
    with transaccion(bd):
        exigir_que_exista(bd, ejecucion)
        (ultimo,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM historial WHERE ejecucion=?", (ejecucion,)
        ).fetchone()
        bd.execute("INSERT INTO historial(ejecucion, seq, texto) VALUES (?, ?, ?)",
                   (ejecucion, ultimo + 1, texto))
    return ultimo + 1


def activo(bd, ejecucion):
    """(id, cobertura) del resumen activo de `ejecucion`, o (None, 0) si aún no tiene."""
    exigir_ejecucion(ejecucion)
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
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(corte, "El corte")

    with transaccion(bd):
        # Lo que depende de la base de datos, dentro del turno de escritura: nadie lo cambia
        # entre la comprobación y la escritura.
        exigir_que_exista(bd, ejecucion)
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
    exigir_ejecucion(ejecucion)
    exigir_entero_positivo(corte, "El corte")
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
        exigir_texto(afirmacion["texto"], f"El texto de la afirmación {numero}")
        exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {numero}")
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
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
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
            f"La base de este resumen era {nombre_del_resumen(base)}, pero el activo ya es "
            f"{nombre_del_resumen(ahora)}: vuelve a leer el activo y prepara el resumen desde él."
        )


def contexto(bd, ejecucion):
    """Lo que necesita la petición siguiente: el resumen activo y la cola posterior.

    Devuelve {"activo": id o None, "resumen": lista de afirmaciones o None,
    "cobertura": n, "cola": [(seq, texto), ...]}, leído todo en una sola instantánea.
    """
    exigir_ejecucion(ejecucion)
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


# --- Consultas de apoyo -----------------------------------------------------------------------

def _cobertura(bd, ejecucion, base):
    return 0 if base is None else exigir_resumen_de(bd, ejecucion, base, "La base")


def _en_historial(bd, ejecucion, seq):
    return bd.execute(
        "SELECT 1 FROM historial WHERE ejecucion=? AND seq=?", (ejecucion, seq)
    ).fetchone() is not None
