"""Los padres y los hijos que esperan, en la base de la lección 04: las tablas del buzón, crear un
padre, su estado, su trayectoria y terminarlo.

Lección 05. Un padre es una ejecución de la lección 04 que reparte trabajo de solo lectura entre
unos hijos y los espera. Las entregas de los hijos no le llegan en memoria: pasan por el buzón
(`buzon.py`), unas tablas en la misma base de datos, que siguen ahí aunque el proceso caiga:

- `ejecuciones` (de la lección 04) gana dos columnas: `estado` y `version`;
- `hijos_esperados`: a qué hijos espera cada padre, y el encargo de cada uno;
- `buzon`: cada entrega recibida, tal cual llegó, y qué se decidió de ella;
- `mensajes`: la trayectoria del padre, numerada, con una fila por entrega admitida.
"""
import json

from encargos import validar_encargo
from exigencias import exigir_identidad, json_canonico
from historial import abrir, transaccion
from validacion import muestra

# --- Los estados de un padre -------------------------------------------------------------------

ESPERANDO = "esperando"    # el padre espera a sus hijos: no hay nada que hacer con él
EN_COLA = "en_cola"        # cada hijo tiene una entrega admitida: un trabajador puede reclamarlo
EN_MARCHA = "en_marcha"    # alguien lo está ejecutando (lo que tienen las ejecuciones de la lección 04)
TERMINALES = ("completada", "fallida", "cancelada")   # de aquí ya no se sale
ESTADOS = (ESPERANDO, EN_COLA, EN_MARCHA) + TERMINALES

# Un coordinador no delega sin límite: cuántos hijos puede esperar un padre es un control del
# harness, no algo que decida el modelo. En la lección bastan dos.
MAXIMO_DE_HIJOS = 8

# --- El esquema ------------------------------------------------------------------------------

# Las columnas que la lección 05 añade a `ejecuciones`. Las ejecuciones que ya existían (las de
# la lección 04) quedan 'en_marcha', con versión 0.
COLUMNAS_NUEVAS = (
    ("estado",
     "ALTER TABLE ejecuciones ADD COLUMN estado TEXT NOT NULL DEFAULT 'en_marcha' CHECK (estado IN "
     "('esperando', 'en_cola', 'en_marcha', 'completada', 'fallida', 'cancelada'))"),
    # Sube en cada cambio de estado: quien leyó una versión antigua puede notarlo.
    ("version",
     "ALTER TABLE ejecuciones ADD COLUMN version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0)"),
)

TABLAS_NUEVAS = (
    # A quién espera cada padre. Se escribe al repartir el trabajo: la condición «han llegado
    # todos» se calcula sobre esta lista, nunca contando lo que llega.
    """CREATE TABLE IF NOT EXISTS hijos_esperados (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        hijo TEXT NOT NULL,
        encargo TEXT,                 -- el encargo del hijo en JSON canónico, o NULL si no tiene
        PRIMARY KEY (padre, hijo)
    )""",
    # Cada entrega recibida. `entrega` identifica la entrega, no cada intento del transporte.
    # La clave foránea (padre, hijo) impide guardar la entrega de un hijo que nadie espera.
    """CREATE TABLE IF NOT EXISTS buzon (
        entrega TEXT PRIMARY KEY,
        padre TEXT NOT NULL,
        hijo TEXT NOT NULL,
        carga TEXT NOT NULL,          -- JSON canónico: claves ordenadas, sin espacios
        disposicion TEXT NOT NULL DEFAULT 'recibida'
            CHECK (disposicion IN ('recibida', 'admitida', 'tardia')),
        seq_admitida INTEGER,         -- el número de su mensaje en la trayectoria del padre
        CHECK ((disposicion = 'admitida') = (seq_admitida IS NOT NULL)),
        FOREIGN KEY (padre, hijo) REFERENCES hijos_esperados(padre, hijo)
    )""",
    # Para buscar deprisa «¿tiene este hijo alguna entrega admitida?».
    "CREATE INDEX IF NOT EXISTS buzon_por_hijo ON buzon(padre, hijo, disposicion)",
    # La trayectoria del padre: lo que verá al reanudarse. UNIQUE en `entrega`: una misma
    # entrega no puede aparecer dos veces, pase lo que pase con el código de arriba.
    """CREATE TABLE IF NOT EXISTS mensajes (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        seq INTEGER NOT NULL CHECK (seq >= 1),
        entrega TEXT NOT NULL UNIQUE REFERENCES buzon(entrega),
        carga TEXT NOT NULL,
        PRIMARY KEY (padre, seq)
    )""",
)


def abrir_buzon(ruta):
    """Abre la base de `ruta` con `abrir()` de la lección 04 y se asegura de que tenga el buzón."""
    bd = abrir(ruta)
    if not _esquema_completo(bd):
        crear_esquema(bd)
    return bd


def crear_esquema(bd):
    """Añade las columnas y tablas del buzón a la base de la lección 04: todo o nada.

    Abre su propia transacción: llámala fuera de cualquier otra. Sentencia a sentencia con
    execute(); executescript() confirmaría (COMMIT) lo que hubiera a medias antes de empezar.
    Lo comprueba todo dentro del turno de escritura: si dos procesos abren a la vez una base
    nueva, el segundo encuentra el trabajo hecho y no añade nada.
    """
    with transaccion(bd):
        columnas = {fila[1] for fila in bd.execute("PRAGMA table_info(ejecuciones)")}
        for columna, sentencia in COLUMNAS_NUEVAS:
            if columna not in columnas:
                bd.execute(sentencia)
        for sentencia in TABLAS_NUEVAS:
            bd.execute(sentencia)


def _esquema_completo(bd):
    columnas = {fila[1] for fila in bd.execute("PRAGMA table_info(ejecuciones)")}
    tablas = {nombre for (nombre,) in bd.execute(
        "SELECT name FROM sqlite_master WHERE name IN ('hijos_esperados', 'buzon', 'buzon_por_hijo', 'mensajes')")}
    return {c for c, _ in COLUMNAS_NUEVAS} <= columnas and len(tablas) == 4


# --- Crear un padre con sus hijos -------------------------------------------------------------

def crear_padre(bd, padre, hijos):
    """Crea la ejecución `padre`, en 'esperando', y la lista de hijos que espera.

    `hijos` es una lista de nombres o un dict {hijo: encargo}; cada encargo se valida con
    `validar_encargo()` y se guarda, para que `recibir()` lo aplique a lo que entregue ese hijo.
    """
    exigir_identidad(padre, "El padre")
    if isinstance(hijos, dict):
        encargos = dict(hijos)
    elif isinstance(hijos, (list, tuple)):
        for hijo in hijos:
            exigir_identidad(hijo, "El nombre de un hijo")
        encargos = dict.fromkeys(hijos)
        if len(encargos) != len(hijos):
            raise ValueError(f"La lista de hijos tiene nombres repetidos: {muestra(hijos)}.")
    else:
        raise ValueError(f"Los hijos deben ser una lista de nombres o un dict {{hijo: encargo}}, no {muestra(hijos)}.")
    if not 1 <= len(encargos) <= MAXIMO_DE_HIJOS:
        raise ValueError(f"Un padre espera entre 1 y {MAXIMO_DE_HIJOS} hijos, no {len(encargos)}.")
    filas = []
    for hijo, encargo in encargos.items():
        exigir_identidad(hijo, "El nombre de un hijo")
        if encargo is not None:
            validar_encargo(encargo)
            encargo = json_canonico(encargo, f"El encargo de {hijo!r}")
        filas.append((padre, hijo, encargo))
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError(f"La ejecución {padre!r} ya existe: un padre nuevo necesita un nombre nuevo.")
        bd.execute("INSERT INTO ejecuciones(id, estado, version) VALUES (?, 'esperando', 0)", (padre,))
        for fila in filas:
            bd.execute("INSERT INTO hijos_esperados(padre, hijo, encargo) VALUES (?, ?, ?)", fila)



# --- Consultar y terminar ---------------------------------------------------------------------

def estado(bd, padre):
    """(estado, versión) de la ejecución `padre`."""
    exigir_identidad(padre, "El padre")
    fila = bd.execute("SELECT estado, version FROM ejecuciones WHERE id=?", (padre,)).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {padre!r}.")
    return fila


def mensajes(bd, padre):
    """La trayectoria de `padre`: [(seq, entrega, carga), ...] en orden, con la carga ya leída."""
    exigir_identidad(padre, "El padre")
    return [(seq, entrega, json.loads(cuerpo)) for seq, entrega, cuerpo in bd.execute(
        "SELECT seq, entrega, carga FROM mensajes WHERE padre=? ORDER BY seq", (padre,))]


def terminar(bd, padre, estado):
    """Lleva a `padre` al estado terminal `estado` ('completada', 'fallida' o 'cancelada').

    Sube la versión. Un padre terminado sigue terminado: terminarlo otra vez es un error.
    """
    if estado not in TERMINALES:
        raise ValueError(f"El estado final debe ser uno de {', '.join(TERMINALES)}, no {muestra(estado)}.")
    exigir_identidad(padre, "El padre")
    with transaccion(bd):
        fila = bd.execute("SELECT estado FROM ejecuciones WHERE id=?", (padre,)).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {padre!r}.")
        if fila[0] in TERMINALES:
            raise ValueError(f"La ejecución {padre!r} ya terminó como {fila[0]!r}: un padre terminado sigue terminado.")
        bd.execute("UPDATE ejecuciones SET estado=?, version=version+1 WHERE id=?", (estado, padre))
