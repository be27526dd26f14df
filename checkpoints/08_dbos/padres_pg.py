"""Los padres y los hijos que esperan, en PostgreSQL: las tablas del buzón, crear un padre, su
estado, su trayectoria y terminarlo.

Lección 07. Lo mismo que `padres.py` (las mismas tablas, funciones y promesas), sobre la base
de `historial_pg.py`. Los estados, los encargos y las identidades se comprueban con lo de la
lección 05, importado. Lo que cambia: crear un padre que ya existe se sabe por el número de filas
de `INSERT … ON CONFLICT DO NOTHING` (dos que lo crean a la vez no chocan), y `terminar` bloquea
la fila del padre, como `admitir` en `buzon_pg.py`, para que no se cuele en medio de una admisión.
"""
import json

from encargos import validar_encargo
from exigencias import exigir_identidad, json_canonico
from historial_pg import CERROJO_DEL_ESQUEMA, abrir, exigir_sin_nulos, existen, transaccion
from padres import EN_COLA, EN_MARCHA, ESPERANDO, ESTADOS, MAXIMO_DE_HIJOS, TERMINALES  # noqa: F401
from validacion import muestra

# Las columnas que la lección 05 añade a `ejecuciones`; las que ya existían quedan 'en_marcha'.
COLUMNAS_NUEVAS = (
    """ALTER TABLE ejecuciones ADD COLUMN IF NOT EXISTS estado TEXT NOT NULL DEFAULT 'en_marcha'
        CHECK (estado IN ('esperando', 'en_cola', 'en_marcha', 'completada', 'fallida', 'cancelada'))""",
    "ALTER TABLE ejecuciones ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0 CHECK (version >= 0)",
)

# Las de padres.py. `llegada` ordena las entregas como el rowid de SQLite, que aquí no existe.
TABLAS_NUEVAS = (
    """CREATE TABLE IF NOT EXISTS hijos_esperados (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        hijo TEXT NOT NULL,
        encargo TEXT,
        PRIMARY KEY (padre, hijo)
    )""",
    """CREATE TABLE IF NOT EXISTS buzon (
        entrega TEXT PRIMARY KEY,
        padre TEXT NOT NULL,
        hijo TEXT NOT NULL,
        carga TEXT NOT NULL,
        disposicion TEXT NOT NULL DEFAULT 'recibida' CHECK (disposicion IN ('recibida', 'admitida', 'tardia')),
        seq_admitida BIGINT,
        llegada BIGINT GENERATED ALWAYS AS IDENTITY,
        CHECK ((disposicion = 'admitida') = (seq_admitida IS NOT NULL)),
        FOREIGN KEY (padre, hijo) REFERENCES hijos_esperados(padre, hijo)
    )""",
    "CREATE INDEX IF NOT EXISTS buzon_por_hijo ON buzon(padre, hijo, disposicion)",
    """CREATE TABLE IF NOT EXISTS mensajes (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        seq BIGINT NOT NULL CHECK (seq >= 1),
        entrega TEXT NOT NULL UNIQUE REFERENCES buzon(entrega),
        carga TEXT NOT NULL,
        PRIMARY KEY (padre, seq)
    )""",
)
TABLAS = ("hijos_esperados", "buzon", "mensajes")


def abrir_buzon(conexion):
    """Conecta con `abrir()` de historial_pg y se asegura de que la base tenga el buzón."""
    bd = abrir(conexion)
    if not _esquema_completo(bd):
        crear_esquema(bd)
    return bd


def crear_esquema(bd):
    """Añade las columnas y tablas del buzón: todo o nada (en PostgreSQL también ALTER y CREATE se
    deshacen). Con el cerrojo del esquema, dos procesos que abren a la vez no chocan."""
    with transaccion(bd):
        bd.execute("SELECT pg_advisory_xact_lock(%s)", (CERROJO_DEL_ESQUEMA,))
        if not _esquema_completo(bd):
            for sentencia in COLUMNAS_NUEVAS + TABLAS_NUEVAS:
                bd.execute(sentencia)


def _esquema_completo(bd):
    (columnas,) = bd.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'ejecuciones' AND column_name IN ('estado', 'version')").fetchone()
    return columnas == 2 and existen(bd, TABLAS)


def crear_padre(bd, padre, hijos):
    """Crea la ejecución `padre`, en 'esperando', y la lista de hijos que espera (como padres.py).

    `hijos` es una lista de nombres o un dict {hijo: encargo}; cada encargo se valida y se guarda.
    """
    exigir_nombre(padre, "El padre")
    if isinstance(hijos, dict):
        encargos = dict(hijos)
    elif isinstance(hijos, (list, tuple)):
        for hijo in hijos:
            exigir_nombre(hijo, "El nombre de un hijo")
        encargos = dict.fromkeys(hijos)
        if len(encargos) != len(hijos):
            raise ValueError(f"La lista de hijos tiene nombres repetidos: {muestra(hijos)}.")
    else:
        raise ValueError(f"Los hijos deben ser una lista de nombres o un dict {{hijo: encargo}}, no {muestra(hijos)}.")
    if not 1 <= len(encargos) <= MAXIMO_DE_HIJOS:
        raise ValueError(f"Un padre espera entre 1 y {MAXIMO_DE_HIJOS} hijos, no {len(encargos)}.")
    filas = []
    for hijo, encargo in encargos.items():
        exigir_nombre(hijo, "El nombre de un hijo")
        if encargo is not None:
            validar_encargo(encargo)
            encargo = json_canonico(encargo, f"El encargo de {hijo!r}")
        filas.append((padre, hijo, encargo))
    with transaccion(bd):
        creado = bd.execute("INSERT INTO ejecuciones(id, estado, version) VALUES (%s, 'esperando', 0) "
                            "ON CONFLICT (id) DO NOTHING", (padre,))
        if creado.rowcount == 0:
            raise ValueError(f"La ejecución {padre!r} ya existe: un padre nuevo necesita un nombre nuevo.")
        for fila in filas:
            bd.execute("INSERT INTO hijos_esperados(padre, hijo, encargo) VALUES (%s, %s, %s)", fila)


def estado(bd, padre):
    """(estado, versión) de la ejecución `padre`."""
    exigir_nombre(padre, "El padre")
    fila = bd.execute("SELECT estado, version FROM ejecuciones WHERE id=%s", (padre,)).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {padre!r}.")
    return fila


def mensajes(bd, padre):
    """La trayectoria de `padre`: [(seq, entrega, carga), ...] en orden, con la carga ya leída."""
    exigir_nombre(padre, "El padre")
    return [(seq, entrega, json.loads(cuerpo)) for seq, entrega, cuerpo in bd.execute(
        "SELECT seq, entrega, carga FROM mensajes WHERE padre=%s ORDER BY seq", (padre,))]


def terminar(bd, padre, estado):
    """Lleva a `padre` al estado terminal `estado`; terminarlo otra vez es un error (como padres.py).
    Con la fila del padre bloqueada, como en `admitir`: una admisión a medias acaba antes, o espera."""
    if estado not in TERMINALES:
        raise ValueError(f"El estado final debe ser uno de {', '.join(TERMINALES)}, no {muestra(estado)}.")
    exigir_nombre(padre, "El padre")
    with transaccion(bd):
        fila = bd.execute("SELECT estado FROM ejecuciones WHERE id=%s FOR NO KEY UPDATE", (padre,)).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {padre!r}.")
        if fila[0] in TERMINALES:
            raise ValueError(f"La ejecución {padre!r} ya terminó como {fila[0]!r}: un padre terminado sigue terminado.")
        bd.execute("UPDATE ejecuciones SET estado=%s, version=version+1 WHERE id=%s", (estado, padre))


def exigir_nombre(valor, que):
    """Una identidad de `exigencias.exigir_identidad`, y además sin carácter nulo."""
    exigir_identidad(valor, que)
    exigir_sin_nulos(valor, que)
