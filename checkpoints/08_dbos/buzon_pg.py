"""El buzón durable de la lección 05, en PostgreSQL (psycopg 3), y cómo despertar al padre.

Lección 07. Las mismas funciones y promesas que `buzon.py`, sobre la base de `historial_pg.py`;
las tablas y el ciclo del padre están en `padres_pg.py`, como en SQLite están en `padres.py`. Lo
que cambia:

- **Un padre, un turno.** En READ COMMITTED, dos admisiones a la vez verían las dos que al padre
  le falta el otro hijo, y una admisión y un `terminar` a la vez meterían un mensaje en un padre
  terminado. `admitir` y `terminar` bloquean primero la fila del padre (`SELECT … FOR NO KEY
  UPDATE`: cambian su estado, no su clave): con un mismo padre, de una en una; con padres
  distintos, a la vez.
- **Duplicados.** `INSERT … ON CONFLICT DO NOTHING`: si el transporte repite una entrega mientras
  la primera aún se guarda, el segundo INSERT espera a que la primera confirme y no inserta nada.
- **Despertar al padre.** Al pasar un padre a 'en_cola', `pg_notify`. El aviso sale solo si la
  transacción confirma, y no es durable: quien no escuchaba no lo recibe nunca. El trabajo se
  encuentra consultando (`padres_en_cola`); el aviso solo ahorra sondeos.
- **Una conexión que cae durante el COMMIT.** El cliente no sabe si se confirmó. Reintentar es
  seguro por la identidad de la entrega: recibir otra vez da «duplicada», y admitir otra vez
  devuelve lo que ya se decidió.
"""
import json

from buzon import ADMITIDA, DUPLICADA, RECIBIDA, TARDIA  # noqa: F401  (los mismos nombres)
from encargos import validar_entrega
from exigencias import json_canonico
from historial_pg import abrir, transaccion
from padres_pg import (EN_COLA, EN_MARCHA, ESPERANDO, ESTADOS, MAXIMO_DE_HIJOS, TERMINALES,  # noqa: F401
                       abrir_buzon, crear_esquema, crear_padre, estado, exigir_nombre, mensajes, terminar)

# El canal de los avisos: lleva el nombre del padre que acaba de pasar a 'en_cola'.
CANAL = "buzon_en_cola"


def recibir(bd, padre, hijo, entrega, carga):
    """Guarda en el buzón la entrega `entrega` del hijo `hijo` para `padre`.

    Como en buzon.py: "recibida" la primera vez y "duplicada" si ya estaba, idéntica; ValueError
    si algo está mal formado, si el padre no existe o si la misma identidad llega con otros datos;
    PermissionError si `padre` no espera a `hijo`. Un rechazo no cambia nada. No admite.
    """
    exigir_nombre(entrega, "La identidad de la entrega")
    exigir_nombre(padre, "El padre")
    exigir_nombre(hijo, "El hijo")
    cuerpo = json_canonico(carga, "La carga de la entrega")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=%s", (padre,)).fetchone() is None:
            raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")
        esperado = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=%s AND hijo=%s",
                              (padre, hijo)).fetchone()
        if esperado is None:
            raise PermissionError(f"El padre {padre!r} no espera ninguna entrega de {hijo!r}: solo "
                                  "aceptamos resultados de los hijos que el padre creó.")
        if esperado[0] is not None:
            validar_entrega(json.loads(esperado[0]), carga)
        # Si otra conexión guarda la misma entrega a la vez, este INSERT espera a que confirme y no
        # inserta nada (0 filas): en vez de un error de clave duplicada, se mira lo que guardó.
        guardada = bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s) "
                              "ON CONFLICT (entrega) DO NOTHING", (entrega, padre, hijo, cuerpo))
        if guardada.rowcount == 1:
            return RECIBIDA
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if anterior == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError(f"La entrega {entrega!r} ya se recibió con otros datos: una corrección es una "
                         "entrega nueva, con otra identidad; no reescribas la que ya llegó.")


def activar_si_estan_todos(bd, padre):
    """Pasa a `padre` de 'esperando' a 'en_cola' (versión + 1) si cada hijo esperado tiene una
    entrega admitida, y entonces avisa por el CANAL. Va dentro de la transacción de `admitir`,
    que tiene bloqueada la fila del padre: el NOT EXISTS ve todo lo admitido antes.
    El aviso (pg_notify) sale al confirmar la transacción; si se deshace, no sale."""
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
    "tardia" si el padre ya había terminado; admitir otra vez devuelve lo mismo; ValueError si la
    entrega no está en el buzón.
    """
    exigir_nombre(entrega, "La identidad de la entrega")
    with transaccion(bd):
        fila = bd.execute("SELECT padre FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if fila is None:
            raise ValueError(f"No hay ninguna entrega {entrega!r} en el buzón: recíbela antes con recibir().")
        (padre,) = fila
        # El turno del padre: admitir y terminar, con un mismo padre, de uno en uno.
        (estado_del_padre,) = bd.execute("SELECT estado FROM ejecuciones WHERE id=%s FOR NO KEY UPDATE",
                                         (padre,)).fetchone()
        # Con el cerrojo, otra vez: mientras esperábamos, otro pudo admitir esta misma entrega.
        cuerpo, disposicion = bd.execute("SELECT carga, disposicion FROM buzon WHERE entrega=%s",
                                         (entrega,)).fetchone()
        if disposicion != RECIBIDA:
            return disposicion  # ya se decidió: admitir otra vez (un reintento) no cambia nada
        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=%s", (entrega,))
            return TARDIA
        (seq,) = bd.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=%s", (padre,)).fetchone()
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (%s, %s, %s, %s)",
                   (padre, seq, entrega, cuerpo))
        bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=%s WHERE entrega=%s", (seq, entrega))
        activar_si_estan_todos(bd, padre)
    return ADMITIDA


def pendientes(bd):
    """Las entregas recibidas y aún sin decidir, en el orden en que llegaron."""
    return [entrega for (entrega,) in bd.execute(
        "SELECT entrega FROM buzon WHERE disposicion='recibida' ORDER BY llegada")]


# --- Despertar al padre: LISTEN/NOTIFY -------------------------------------------------------------

def escuchar(conexion):
    """Una conexión nueva, solo para escuchar los avisos del CANAL (LISTEN). Ciérrala al acabar.

    Escucha desde ahora: lo avisado antes no llega nunca. Por eso, primero escuchar y después
    consultar `padres_en_cola` (en el otro orden, un aviso entre la consulta y el LISTEN se perdería).
    """
    escucha = abrir(conexion)
    escucha.execute(f"LISTEN {CANAL}")
    return escucha


def esperar_avisos(escucha, segundos):
    """Los padres avisados en los próximos `segundos` como mucho: vuelve con el primer aviso y los
    que llegaron con él, o con [] si no llega ninguno. Un aviso es una pista para consultar antes,
    no un registro: la verdad está en la tabla."""
    avisados = [aviso.payload for aviso in escucha.notifies(timeout=segundos, stop_after=1)]
    if avisados:
        avisados += [aviso.payload for aviso in escucha.notifies(timeout=0)]
    return avisados


def padres_en_cola(bd):
    """Los padres en 'en_cola': lo que encuentra quien consulta, escuchara o no los avisos."""
    return [padre for (padre,) in bd.execute("SELECT id FROM ejecuciones WHERE estado='en_cola' ORDER BY id")]
