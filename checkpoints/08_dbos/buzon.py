"""El buzón durable: los hijos entregan, el padre admite, y nada se pierde ni se repite.

Lección 05. Cuando un hijo acaba, puede que nadie del lado del padre esté escuchando (ocupado en
otra cosa, parado o a medio arrancar): por eso entregar no es llamar a una función del padre en
memoria, sino escribir una fila en la base de datos. Dos pasos separados:

- `recibir()` guarda la entrega en el `buzon` y contesta al transporte. Si el transporte la
  repite (perdió la respuesta), la identidad estable de la entrega la reconoce: «duplicada».
- `admitir()` la incorpora a la trayectoria del padre (`mensajes`), la marca como admitida y,
  si con ella cada hijo esperado tiene ya una entrega admitida (recibida no basta), pasa al
  padre de 'esperando' a 'en_cola'. Las tres cosas en UNA transacción: si el proceso cae a
  mitad, no queda ninguna. A un padre terminado no se le añade nada: su entrega se guarda como
  'tardia'.

Las tablas y el ciclo del padre (abrirlo, crearlo, su estado, su trayectoria, terminarlo) están
en padres.py. buzon.py los importa también para quien lo usa: así los hijos, el explorador de
carreras y los tests tienen el buzón entero en un solo módulo.
"""
import json

from encargos import validar_entrega
from exigencias import exigir_identidad, json_canonico
from historial import transaccion
from padres import (EN_COLA, EN_MARCHA, ESPERANDO, ESTADOS, MAXIMO_DE_HIJOS, TERMINALES,  # noqa: F401
                    abrir_buzon, crear_esquema, crear_padre, estado, mensajes, terminar)

RECIBIDA = "recibida"      # en el buzón, todavía fuera de la trayectoria del padre
ADMITIDA = "admitida"      # en la trayectoria del padre, con su número (`seq_admitida`)
TARDIA = "tardia"          # llegó cuando el padre ya había terminado: se guarda, no se admite
DUPLICADA = "duplicada"    # lo que contesta recibir() a una entrega que ya tenía


# --- Recibir: guardar lo que llega ---------------------------------------------------------------

def recibir(bd, padre, hijo, entrega, carga):
    """Guarda en el buzón la entrega `entrega` del hijo `hijo` para `padre`.

    Devuelve "recibida" la primera vez y "duplicada" si ya estaba, idéntica (el transporte la
    repitió). Lanza ValueError si algo está mal formado, si el padre no existe o si la misma
    identidad llega con otros datos; PermissionError si `padre` no espera a `hijo`. Un rechazo
    no cambia nada en la base de datos. Recibir no admite: eso lo hace `admitir()`.
    """
    # Primero lo que se puede comprobar sin leer la base de datos.
    exigir_identidad(entrega, "La identidad de la entrega")
    exigir_identidad(padre, "El padre")
    exigir_identidad(hijo, "El hijo")
    cuerpo = json_canonico(carga, "La carga de la entrega")

    with transaccion(bd):
        if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")
        esperado = bd.execute(
            "SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?", (padre, hijo)
        ).fetchone()
        if esperado is None:
            raise PermissionError(
                f"El padre {padre!r} no espera ninguna entrega de {hijo!r}: solo aceptamos "
                "resultados de los hijos que el padre creó."
            )
        anterior = bd.execute(
            "SELECT padre, hijo, carga FROM buzon WHERE entrega=?", (entrega,)
        ).fetchone()
        if anterior is not None:
            if anterior == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError(
                f"La entrega {entrega!r} ya se recibió con otros datos: una corrección es una "
                "entrega nueva, con otra identidad; no reescribas la que ya llegó."
            )
        if esperado[0] is not None:
            validar_entrega(json.loads(esperado[0]), carga)
        bd.execute(
            "INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (?, ?, ?, ?)",
            (entrega, padre, hijo, cuerpo),
        )
    return RECIBIDA


# --- Admitir: la entrega entra en la trayectoria del padre ------------------------------------------

# El padre pasa a la cola solo si está esperando y NO EXISTE ningún hijo esperado sin una
# entrega admitida. Contar mensajes no sirve: dos entregas de un mismo hijo (un resultado y su
# corrección) también son dos mensajes. Y una entrega solo recibida no cuenta: aún no está en la
# trayectoria del padre.
def activar_si_estan_todos(bd, padre):
    """Pasa a `padre` de 'esperando' a 'en_cola' (versión + 1) si cada hijo esperado tiene una
    entrega admitida. Se llama dentro de la transacción de `admitir`.

    La condición es un NOT EXISTS sobre los hijos esperados, nunca una cuenta de mensajes: dos
    mensajes del mismo hijo no son uno de cada uno. Y `estado = 'esperando'` hace que un padre se
    active una sola vez, y que uno terminado no se mueva.
    """
    bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = ? AND estado = 'esperando'
             AND NOT EXISTS (
                 SELECT 1 FROM hijos_esperados h
                 WHERE h.padre = ejecuciones.id
                   AND NOT EXISTS (
                       SELECT 1 FROM buzon b
                       WHERE b.padre = h.padre AND b.hijo = h.hijo
                         AND b.disposicion = 'admitida'))""",
        (padre,),
    )


def admitir(bd, entrega):
    """Incorpora la entrega `entrega` del buzón a la trayectoria de su padre.

    Todo en una transacción: añadir el mensaje, marcar la entrega como admitida con su número
    y, si ya hay una entrega admitida de cada hijo esperado, pasar al padre de 'esperando' a
    'en_cola' (versión + 1). Si el proceso cae a mitad, no queda nada hecho y la entrega sigue
    'recibida', lista para admitirla otra vez.

    Devuelve "admitida", o "tardia" si el padre ya había terminado (la entrega se guarda, pero
    ni entra en la trayectoria ni despierta al padre). Admitir dos veces no cambia nada: la
    segunda devuelve lo mismo que la primera. Lanza ValueError si la entrega no está en el buzón.
    """
    exigir_identidad(entrega, "La identidad de la entrega")
    with transaccion(bd):
        fila = bd.execute(
            "SELECT b.padre, b.carga, b.disposicion, e.estado "
            "FROM buzon b JOIN ejecuciones e ON e.id = b.padre WHERE b.entrega=?",
            (entrega,),
        ).fetchone()
        if fila is None:
            raise ValueError(f"No hay ninguna entrega {entrega!r} en el buzón: recíbela antes con recibir().")
        padre, cuerpo, disposicion, estado_del_padre = fila
        if disposicion != RECIBIDA:
            return disposicion  # ya se decidió: admitir otra vez no cambia nada
        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=?", (entrega,))
            return TARDIA  # el return confirma (COMMIT) la marca, como el final del bloque
        # El número siguiente se calcula dentro del turno de escritura (BEGIN IMMEDIATE): nadie
        # más puede elegir el mismo entre esta lectura y el INSERT.
        (seq,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)
        ).fetchone()
        bd.execute(
            "INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
            (padre, seq, entrega, cuerpo),
        )
        bd.execute(
            "UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?", (seq, entrega)
        )
        activar_si_estan_todos(bd, padre)
    return ADMITIDA


def pendientes(bd):
    """Las entregas recibidas y aún sin decidir, en el orden en que llegaron.

    Tras un reinicio basta con admitirlas: lo que se recibió no depende de ningún aviso en memoria.
    """
    return [entrega for (entrega,) in bd.execute(
        "SELECT entrega FROM buzon WHERE disposicion='recibida' ORDER BY rowid")]
