"""El buzón durable de la lección 05, en PostgreSQL (psycopg 3), y cómo despertar al padre.

Lo introduce la lección 07. Las mismas tablas, funciones y promesas que `buzon.py` (los tests
del punto de control corren el mismo contrato sobre los dos), sobre la base de `resumenes_pg.py`.
Lo que cambia:

- **Un padre, un turno.** En SQLite, `admitir` corre entera con el turno de escritura de la base.
  En PostgreSQL, en READ COMMITTED, dos admisiones a la vez verían las dos que al padre le falta
  el otro hijo y ninguna lo activaría; una admisión y un `terminar` a la vez meterían un mensaje
  en un padre ya terminado. Por eso `admitir` y `terminar` bloquean primero la fila del padre
  (`SELECT … FOR UPDATE`): lo que hacen con un mismo padre va de uno en uno, y lo de padres
  distintos, a la vez. Tras el cerrojo se vuelve a leer la entrega: mientras esperábamos, otro
  pudo admitirla.
- **Duplicados.** `INSERT … ON CONFLICT DO NOTHING` en vez de `INSERT OR IGNORE`: si el transporte
  repite una entrega mientras la primera aún se está guardando, el segundo INSERT espera a que la
  primera confirme y no inserta nada (0 filas). Luego se compara con lo guardado: «duplicada» o,
  si trae otros datos, un error.
- **Despertar al padre.** Cuando un padre pasa a 'en_cola', `admitir` avisa con
  `pg_notify('buzon_en_cola', padre)`. PostgreSQL entrega el aviso solo si la transacción confirma
  (y al confirmar), a las conexiones que en ese momento estén escuchando (`escuchar`). El aviso
  no es durable: quien no escuchaba no lo recibe nunca. Así que el aviso solo ahorra sondeos; el
  trabajo se encuentra consultando (`padres_en_cola`), también al arrancar: primero LISTEN,
  después la consulta, y luego esperar avisos (en el otro orden, uno que llegue entre la
  consulta y el LISTEN se perdería).
- **Una conexión que cae durante el COMMIT.** El cliente no puede saber si la transacción se
  confirmó. Reintentar es seguro porque la entrega lleva su identidad: recibir otra vez da
  «duplicada» y admitir otra vez devuelve lo que ya se decidió.

Los encargos, las entregas y las identidades se comprueban con las funciones de `buzon.py`,
importadas: misma entrada, mismo error.
"""
import json

from buzon import (ACCIONES_DELEGABLES, ADMITIDA, CAMPOS_DEL_ENTREGABLE, CLAVES_DEL_ENCARGO,  # noqa: F401
                   DUPLICADA, EN_COLA, EN_MARCHA, ESPERANDO, ESTADOS, LARGO_MAXIMO_DE_IDENTIDAD, MAXIMO_DE_HIJOS,
                   PLAZO_MAXIMO_S, PROFUNDIDAD_MAXIMA_DE_JSON, RECIBIDA, TARDIA, TERMINALES, _exigir_identidad,
                   _json_canonico, validar_encargo, validar_entrega)
from resumenes import muestra
from resumenes_pg import CERROJO_DEL_ESQUEMA, _exigir_sin_nulos, abrir, transaccion

# El canal de los avisos: el nombre de un padre que acaba de pasar a 'en_cola'.
CANAL = "buzon_en_cola"

COLUMNAS_NUEVAS = (
    # Las ejecuciones que ya existían (las de la lección 04) quedan 'en_marcha', con versión 0.
    """ALTER TABLE ejecuciones ADD COLUMN IF NOT EXISTS estado TEXT NOT NULL DEFAULT 'en_marcha'
        CHECK (estado IN ('esperando', 'en_cola', 'en_marcha', 'completada', 'fallida', 'cancelada'))""",
    "ALTER TABLE ejecuciones ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0 CHECK (version >= 0)",
)

TABLAS_NUEVAS = (
    """CREATE TABLE IF NOT EXISTS hijos_esperados (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        hijo TEXT NOT NULL,
        encargo TEXT,                 -- el encargo del hijo en JSON canónico, o NULL si no tiene
        PRIMARY KEY (padre, hijo)
    )""",
    # `llegada` ordena las entregas como las ordena el rowid en SQLite (aquí no hay rowid).
    """CREATE TABLE IF NOT EXISTS buzon (
        entrega TEXT PRIMARY KEY,
        padre TEXT NOT NULL,
        hijo TEXT NOT NULL,
        carga TEXT NOT NULL,          -- JSON canónico, el mismo texto que en SQLite
        disposicion TEXT NOT NULL DEFAULT 'recibida'
            CHECK (disposicion IN ('recibida', 'admitida', 'tardia')),
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
    """Conecta con `abrir()` de resumenes_pg y se asegura de que la base tenga el buzón."""
    bd = abrir(conexion)
    if not _esquema_completo(bd):
        crear_esquema(bd)
    return bd


def crear_esquema(bd):
    """Añade las columnas y tablas del buzón: todo o nada (en PostgreSQL, también ALTER y CREATE
    se deshacen). Con el cerrojo del esquema, dos procesos que abren a la vez no chocan."""
    with transaccion(bd):
        bd.execute("SELECT pg_advisory_xact_lock(%s)", (CERROJO_DEL_ESQUEMA,))
        if _esquema_completo(bd):
            return
        for sentencia in COLUMNAS_NUEVAS + TABLAS_NUEVAS:
            bd.execute(sentencia)


def _esquema_completo(bd):
    (columnas,) = bd.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'ejecuciones' AND column_name IN ('estado', 'version')").fetchone()
    (tablas,) = bd.execute(
        "SELECT count(*) FROM unnest(%s::text[]) AS t(nombre) WHERE to_regclass(t.nombre) IS NOT NULL",
        (list(TABLAS),)).fetchone()
    return columnas == 2 and tablas == len(TABLAS)


# --- Repartir el trabajo -----------------------------------------------------------------------

def crear_padre(bd, padre, hijos):
    """Crea la ejecución `padre`, en 'esperando', y la lista de hijos que espera (como en buzon.py)."""
    _exigir_identidad_pg(padre, "El padre")
    if isinstance(hijos, dict):
        encargos = dict(hijos)
    elif isinstance(hijos, (list, tuple)):
        for hijo in hijos:
            _exigir_identidad_pg(hijo, "El nombre de un hijo")
        encargos = dict.fromkeys(hijos)
        if len(encargos) != len(hijos):
            raise ValueError(f"La lista de hijos tiene nombres repetidos: {muestra(hijos)}.")
    else:
        raise ValueError(f"Los hijos deben ser una lista de nombres o un dict {{hijo: encargo}}, no {muestra(hijos)}.")
    if not 1 <= len(encargos) <= MAXIMO_DE_HIJOS:
        raise ValueError(f"Un padre espera entre 1 y {MAXIMO_DE_HIJOS} hijos, no {len(encargos)}.")
    filas = []
    for hijo, encargo in encargos.items():
        _exigir_identidad_pg(hijo, "El nombre de un hijo")
        if encargo is not None:
            validar_encargo(encargo)
            encargo = _json_canonico(encargo, f"El encargo de {hijo!r}")
        filas.append((padre, hijo, encargo))
    with transaccion(bd):
        creado = bd.execute("INSERT INTO ejecuciones(id, estado, version) VALUES (%s, 'esperando', 0) "
                            "ON CONFLICT (id) DO NOTHING", (padre,))
        if creado.rowcount == 0:
            raise ValueError(f"La ejecución {padre!r} ya existe: un padre nuevo necesita un nombre nuevo.")
        for fila in filas:
            bd.execute("INSERT INTO hijos_esperados(padre, hijo, encargo) VALUES (%s, %s, %s)", fila)


# --- Recibir -------------------------------------------------------------------------------------

def recibir(bd, padre, hijo, entrega, carga):
    """Guarda en el buzón la entrega `entrega` del hijo `hijo` para `padre`.

    Como en buzon.py: "recibida" la primera vez y "duplicada" si ya estaba, idéntica; ValueError
    si algo está mal formado, si el padre no existe o si la misma identidad llega con otros datos;
    PermissionError si `padre` no espera a `hijo`. Un rechazo no cambia nada. No admite.
    """
    _exigir_identidad_pg(entrega, "La identidad de la entrega")
    _exigir_identidad_pg(padre, "El padre")
    _exigir_identidad_pg(hijo, "El hijo")
    cuerpo = _json_canonico(carga, "La carga de la entrega")

    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=%s", (padre,)).fetchone() is None:
            raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")
        esperado = bd.execute(
            "SELECT encargo FROM hijos_esperados WHERE padre=%s AND hijo=%s", (padre, hijo)).fetchone()
        if esperado is None:
            raise PermissionError(
                f"El padre {padre!r} no espera ninguna entrega de {hijo!r}: solo aceptamos "
                "resultados de los hijos que el padre creó.")
        anterior = _guardada(bd, entrega)
        if anterior is None:
            if esperado[0] is not None:
                validar_entrega(json.loads(esperado[0]), carga)
            guardada = bd.execute(
                "INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (entrega) DO NOTHING", (entrega, padre, hijo, cuerpo))
            if guardada.rowcount == 1:
                return RECIBIDA
            # Otra conexión la guardó entre nuestra lectura y el INSERT, y ya confirmó: la
            # sentencia siguiente (READ COMMITTED) la ve.
            anterior = _guardada(bd, entrega)
        if anterior == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError(
            f"La entrega {entrega!r} ya se recibió con otros datos: una corrección es una "
            "entrega nueva, con otra identidad; no reescribas la que ya llegó.")


def _guardada(bd, entrega):
    return bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()


# --- Admitir -------------------------------------------------------------------------------------

def activar_si_estan_todos(bd, padre):
    """Pasa a `padre` de 'esperando' a 'en_cola' (versión + 1) si cada hijo esperado tiene una
    entrega admitida, y entonces avisa por el CANAL. Va dentro de la transacción de `admitir`,
    que ya tiene bloqueada la fila del padre: el NOT EXISTS ve todo lo confirmado antes.

    El aviso (pg_notify) sale al confirmar la transacción; si se deshace, no sale.
    """
    activado = bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = %s AND estado = 'esperando'
             AND NOT EXISTS (
                 SELECT 1 FROM hijos_esperados h
                 WHERE h.padre = ejecuciones.id
                   AND NOT EXISTS (
                       SELECT 1 FROM buzon b
                       WHERE b.padre = h.padre AND b.hijo = h.hijo
                         AND b.disposicion = 'admitida'))""",
        (padre,))
    if activado.rowcount == 1:
        bd.execute("SELECT pg_notify(%s, %s)", (CANAL, padre))


def admitir(bd, entrega):
    """Incorpora la entrega `entrega` del buzón a la trayectoria de su padre.

    Como en buzon.py: en una transacción, el mensaje, la marca y la activación; "admitida", o
    "tardia" si el padre ya había terminado; admitir otra vez devuelve lo mismo; ValueError si
    la entrega no está en el buzón.
    """
    _exigir_identidad_pg(entrega, "La identidad de la entrega")
    with transaccion(bd):
        fila = bd.execute("SELECT padre FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if fila is None:
            raise ValueError(f"No hay ninguna entrega {entrega!r} en el buzón: recíbela antes con recibir().")
        (padre,) = fila
        # El turno del padre: admitir y terminar, con un mismo padre, de uno en uno.
        (estado_del_padre,) = bd.execute(
            "SELECT estado FROM ejecuciones WHERE id=%s FOR UPDATE", (padre,)).fetchone()
        # Con el cerrojo, otra vez: mientras esperábamos, otro pudo admitir esta misma entrega.
        cuerpo, disposicion = bd.execute(
            "SELECT carga, disposicion FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if disposicion != RECIBIDA:
            return disposicion
        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=%s", (entrega,))
            return TARDIA
        (seq,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=%s", (padre,)).fetchone()
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (%s, %s, %s, %s)",
                   (padre, seq, entrega, cuerpo))
        bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=%s WHERE entrega=%s", (seq, entrega))
        activar_si_estan_todos(bd, padre)
    return ADMITIDA


def pendientes(bd):
    """Las entregas recibidas y aún sin decidir, en el orden en que llegaron."""
    return [entrega for (entrega,) in bd.execute(
        "SELECT entrega FROM buzon WHERE disposicion='recibida' ORDER BY llegada")]


# --- Consultar y terminar ----------------------------------------------------------------------

def estado(bd, padre):
    """(estado, versión) de la ejecución `padre`."""
    _exigir_identidad_pg(padre, "El padre")
    fila = bd.execute("SELECT estado, version FROM ejecuciones WHERE id=%s", (padre,)).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {padre!r}.")
    return fila


def mensajes(bd, padre):
    """La trayectoria de `padre`: [(seq, entrega, carga), ...] en orden, con la carga ya leída."""
    _exigir_identidad_pg(padre, "El padre")
    return [(seq, entrega, json.loads(cuerpo)) for seq, entrega, cuerpo in bd.execute(
        "SELECT seq, entrega, carga FROM mensajes WHERE padre=%s ORDER BY seq", (padre,))]


def terminar(bd, padre, estado):
    """Lleva a `padre` al estado terminal `estado`; terminarlo otra vez es un error (como en buzon.py).
    Con la fila del padre bloqueada, como `admitir`: una admisión a medias acaba antes, o espera."""
    if estado not in TERMINALES:
        raise ValueError(f"El estado final debe ser uno de {', '.join(TERMINALES)}, no {muestra(estado)}.")
    _exigir_identidad_pg(padre, "El padre")
    with transaccion(bd):
        fila = bd.execute("SELECT estado FROM ejecuciones WHERE id=%s FOR UPDATE", (padre,)).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {padre!r}.")
        if fila[0] in TERMINALES:
            raise ValueError(f"La ejecución {padre!r} ya terminó como {fila[0]!r}: un padre terminado sigue terminado.")
        bd.execute("UPDATE ejecuciones SET estado=%s, version=version+1 WHERE id=%s", (estado, padre))


# --- Despertar al padre: LISTEN/NOTIFY -------------------------------------------------------------

def escuchar(conexion):
    """Una conexión nueva, solo para escuchar los avisos del CANAL (LISTEN). Ciérrala al acabar.

    Escucha desde ahora: lo que se avisó antes no llega nunca. Después de escuchar, consulta
    `padres_en_cola` para encontrar lo que ya estaba esperando.
    """
    escucha = abrir(conexion)
    escucha.execute(f"LISTEN {CANAL}")
    return escucha


def esperar_avisos(escucha, segundos):
    """Los padres avisados en los próximos `segundos` como mucho: vuelve con el primer aviso y
    los que hayan llegado con él, o con [] si no llega ninguno. Un aviso es una pista para
    consultar antes, no un registro: la verdad está en la tabla."""
    avisados = [aviso.payload for aviso in escucha.notifies(timeout=segundos, stop_after=1)]
    if avisados:  # los que llegaron juntos, sin esperar más
        avisados += [aviso.payload for aviso in escucha.notifies(timeout=0)]
    return avisados


def padres_en_cola(bd):
    """Los padres en 'en_cola': lo que encuentra quien consulta, escuchara o no los avisos."""
    return [padre for (padre,) in bd.execute("SELECT id FROM ejecuciones WHERE estado='en_cola' ORDER BY id")]


# --- Comprobaciones ----------------------------------------------------------------------------

def _exigir_identidad_pg(valor, que):
    _exigir_identidad(valor, que)
    _exigir_sin_nulos(valor, que)
