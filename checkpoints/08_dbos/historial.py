"""El historial de una ejecución en SQLite: el esquema, la transacción de escritura y lo que se anota.

Lección 04. Cada mensaje de una ejecución se guarda numerado (`seq`) y no se borra nunca.
`abrir` crea las tres tablas del almacén de una vez; `crear_ejecucion` registra una ejecución
y `anotar` añade un mensaje al final de su historial. Todo lo que escribe en la base, aquí y
en `resumenes.py`, pasa por `transaccion` (BEGIN IMMEDIATE: el turno de escritura se pide al
empezar).

El esquema vive aquí entero, también la tabla de los resúmenes que usa `resumenes.py`: las
tablas se apuntan unas a otras (el puntero de una ejecución señala uno de sus resúmenes), así
que se crean juntas, en una sola transacción.
"""
from contextlib import contextmanager

from validacion import conectar, exigir_ejecucion, exigir_que_exista, exigir_texto

# Tres tablas:
# - `ejecuciones`: un único puntero por ejecución, `resumen_activo`;
# - `historial`: cada mensaje de una ejecución, numerado y nunca borrado;
# - `resumenes`: cada versión de resumen, con su `cobertura` (el último `seq` que resume) y la
#   versión de la que partió (`anterior`).
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


def en_historial(bd, ejecucion, seq):
    """¿Es `seq` un mensaje del historial de `ejecucion`? Solo consulta: no comprueba la entrada."""
    return bd.execute(
        "SELECT 1 FROM historial WHERE ejecucion=? AND seq=?", (ejecucion, seq)
    ).fetchone() is not None
