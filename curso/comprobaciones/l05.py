"""Lección 05: recibir, admitir y la condición que activa al padre."""

from curso.ejercicios import Fallo, carpeta_temporal, ejercicio, igual


def base(buzon, hijos=("logs", "config")):
    """Un buzón nuevo en un fichero de verdad, con el padre «p» esperando a `hijos`."""
    ruta = carpeta_temporal("ejercicio-5-") / "buzon.db"
    bd = buzon.abrir_buzon(ruta)
    buzon.crear_padre(bd, "p", list(hijos))
    return bd


def volcado(bd):
    return "\n".join(bd.iterdump())


def lanza(excepcion, funcion, *args):
    try:
        funcion(*args)
    except excepcion:
        return
    except Exception as e:  # noqa: BLE001
        raise Fallo(excepcion.__name__, f"{type(e).__name__}: {e}")
    raise Fallo(excepcion.__name__, "ninguna excepción")


# --- 5.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.1", leccion=5, titulo="recibir: guardar una entrega una sola vez",
    nombre=None, modulo="buzon",
    pistas=[
        "Todo dentro de `with transaccion(bd):`. Primero, que el padre exista y que espere a ese "
        "hijo (la tabla hijos_esperados): si no lo espera, PermissionError.",
        "Después busca la entrega por su identidad en la tabla buzon. Si ya está con el mismo "
        "padre, hijo y carga, es un duplicado: return DUPLICADA. Si está con otros datos, ValueError.",
        "Si no estaba, INSERT INTO buzon(entrega, padre, hijo, carga) con la carga canónica "
        "(`cuerpo`) y return RECIBIDA. La disposición empieza en 'recibida' por defecto.",
    ],
)


@caso("la primera vez «recibida»; la misma entrega otra vez, «duplicada»")
def _(buzon):
    bd = base(buzon)
    igual(buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"}), "recibida")
    igual(buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"}), "duplicada")


@caso("la misma identidad con otros datos es un ValueError, y no cambia nada")
def _(buzon):
    bd = base(buzon)
    buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"})
    antes = volcado(bd)
    lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", {"hallazgo": "otro"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("un hijo que el padre no espera es un PermissionError, y no cambia nada")
def _(buzon):
    bd = base(buzon)
    antes = volcado(bd)
    lanza(PermissionError, buzon.recibir, bd, "p", "intruso", "e9", {"hallazgo": "x"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("recibir no admite: la entrega queda «recibida» y el padre, esperando")
def _(buzon):
    bd = base(buzon)
    buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"})
    igual(bd.execute("SELECT disposicion FROM buzon WHERE entrega='e1'").fetchone()[0], "recibida")
    igual(buzon.estado(bd, "p")[0], "esperando")


# --- 5.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.2", leccion=5, titulo="admitir: el mensaje, la marca y la activación, en una transacción",
    nombre=None, modulo="buzon",
    pistas=[
        "Dentro de `with transaccion(bd):` lee la entrega y el estado de su padre. Si no está, "
        "ValueError. Si ya no está «recibida», devuelve su disposición: admitir dos veces no cambia nada.",
        "Si el padre está en un estado terminal (TERMINALES), marca la entrega como 'tardia' y "
        "devuelve TARDIA: se guarda, pero no entra en la trayectoria.",
        "Si no: el seq siguiente del padre (MAX(seq) + 1), INSERT INTO mensajes, UPDATE buzon a "
        "'admitida' con ese seq, activar_si_estan_todos(bd, padre), y return ADMITIDA. Todo en la "
        "misma transacción: si algo cae a mitad, no queda nada hecho.",
    ],
)


@caso("admitir añade el mensaje con seq 1 y marca la entrega como admitida")
def _(buzon):
    bd = base(buzon)
    buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"})
    igual(buzon.admitir(bd, "e1"), "admitida")
    igual([(seq, entrega) for seq, entrega, _ in buzon.mensajes(bd, "p")], [(1, "e1")])
    igual(bd.execute("SELECT disposicion, seq_admitida FROM buzon WHERE entrega='e1'").fetchone(),
          ("admitida", 1))


@caso("admitir dos veces es inofensivo: un solo mensaje")
def _(buzon):
    bd = base(buzon)
    buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"})
    buzon.admitir(bd, "e1")
    igual(buzon.admitir(bd, "e1"), "admitida")
    igual(len(buzon.mensajes(bd, "p")), 1)


@caso("a un padre terminado, la entrega llega «tardia»: se guarda y el padre no cambia")
def _(buzon):
    bd = base(buzon)
    buzon.recibir(bd, "p", "logs", "e1", {"hallazgo": "5433"})
    buzon.terminar(bd, "p", "cancelada")
    antes = buzon.estado(bd, "p")
    igual(buzon.admitir(bd, "e1"), "tardia")
    igual((buzon.estado(bd, "p"), buzon.mensajes(bd, "p")), (antes, []))


@caso("una entrega que no está en el buzón es un ValueError")
def _(buzon):
    lanza(ValueError, buzon.admitir, base(buzon), "no-existe")


# --- 5.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.3", leccion=5, titulo="activar_si_estan_todos: NOT EXISTS, no una cuenta",
    nombre=None, modulo="buzon",
    pistas=[
        "Es un solo UPDATE de ejecuciones: estado = 'en_cola' y version = version + 1, sólo para "
        "el padre `padre` y sólo si su estado es 'esperando' (así se activa una vez).",
        "La condición: que NO EXISTA ningún hijo esperado (hijos_esperados) para el que NO EXISTA "
        "una entrega suya en el buzón con disposicion = 'admitida'. Dos NOT EXISTS anidados.",
        "No cuentes mensajes: dos entregas admitidas del mismo hijo no son una de cada hijo.",
    ],
)


def admitida_a_mano(bd, entrega, hijo, seq):
    """Una entrega admitida escrita directamente, sin pasar por recibir ni admitir."""
    bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga, disposicion, seq_admitida) "
               "VALUES (?, 'p', ?, '{}', 'admitida', ?)", (entrega, hijo, seq))


@caso("con un solo hijo admitido, el padre sigue esperando")
def _(buzon):
    bd = base(buzon)
    admitida_a_mano(bd, "e1", "logs", 1)
    buzon.activar_si_estan_todos(bd, "p")
    igual(buzon.estado(bd, "p"), ("esperando", 0))


@caso("dos entregas admitidas del mismo hijo no activan al padre")
def _(buzon):
    bd = base(buzon)
    admitida_a_mano(bd, "e1", "logs", 1)
    admitida_a_mano(bd, "e2", "logs", 2)
    buzon.activar_si_estan_todos(bd, "p")
    igual(buzon.estado(bd, "p"), ("esperando", 0))


@caso("con los dos hijos admitidos, pasa a la cola una sola vez (versión + 1)")
def _(buzon):
    bd = base(buzon)
    admitida_a_mano(bd, "e1", "logs", 1)
    admitida_a_mano(bd, "e2", "config", 2)
    buzon.activar_si_estan_todos(bd, "p")
    buzon.activar_si_estan_todos(bd, "p")
    igual(buzon.estado(bd, "p"), ("en_cola", 1))


@caso("un padre terminado no se activa")
def _(buzon):
    bd = base(buzon)
    buzon.terminar(bd, "p", "fallida")
    antes = buzon.estado(bd, "p")
    admitida_a_mano(bd, "e1", "logs", 1)
    admitida_a_mano(bd, "e2", "config", 2)
    buzon.activar_si_estan_todos(bd, "p")
    igual(buzon.estado(bd, "p"), antes)
