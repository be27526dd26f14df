"""Para los ejercicios de la lección 05: recibir, admitir, la condición que activa al padre, e integrar por evidencia.

Un solo fichero porque son los casos de los ejercicios de una lección, y cada caso es la frase de lo
que esa lección pidió; partirlo separaría un ejercicio de su pista.

Cada caso prepara su estado por el camino de verdad, con `recibir` y `admitir`: los del punto de
control 05 para todo lo que no es el ejercicio que se comprueba, y la función del alumno para lo
que sí. Así un caso escrito para un error concreto es el que lo pilla, y el fallo de un ejercicio
no se cuela en la comprobación de otro.
"""
import sqlite3

from curso import rutas
from curso.rutas import cargar_modulo
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual
from curso.explorables.carreras.escenarios.carreras_del_buzon import Caida, ConexionQueCae
from curso.material.incidente import INCIDENTE

HALLAZGO = {"hallazgo": "la API conecta al 5433"}


def referencia():
    """El buzon.py del punto de control 05, cargado de nuevo: con él se prepara cada caso."""
    return cargar_modulo(rutas.puntos_de_control()[5] / "buzon.py", "_buzon_de_referencia")


def base(hijos=("logs", "config")):
    """(referencia, bd, ruta): un buzón nuevo en un fichero de verdad, con el padre «p»
    esperando a `hijos`, hecho con el buzon.py de referencia."""
    ref = referencia()
    ruta = carpeta_temporal("ejercicio-5-") / "buzon.db"
    bd = ref.abrir_buzon(ruta)
    ref.crear_padre(bd, "p", list(hijos))
    return ref, bd, ruta


def volcado(bd):
    return "\n".join(bd.iterdump())


def padre(bd):
    """El estado del padre «p», leído con SQL directo y con sus nombres."""
    estado, version = bd.execute("SELECT estado, version FROM ejecuciones WHERE id='p'").fetchone()
    return {"estado": estado, "versión": version}


def trayectoria(bd):
    """Los mensajes del padre «p»: [(seq, entrega), ...], leídos con SQL directo."""
    return bd.execute("SELECT seq, entrega FROM mensajes WHERE padre='p' ORDER BY seq").fetchall()


def entrega_en_el_buzon(bd, entrega):
    """Cómo está `entrega` en el buzón, con sus nombres (o None si no está)."""
    fila = bd.execute("SELECT disposicion, seq_admitida FROM buzon WHERE entrega=?", (entrega,)).fetchone()
    return None if fila is None else {"disposición": fila[0], "seq_admitida": fila[1]}


def lanza(excepcion, funcion, *args):
    try:
        funcion(*args)
    except excepcion:
        return
    except Exception as e:  # noqa: BLE001
        raise Fallo(excepcion.__name__, f"{type(e).__name__}: {e}") from e
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
        "Lo que dice su docstring y a veces se olvida: un padre que no existe es un ValueError (no un "
        "PermissionError), y si el hijo tiene encargo (la columna encargo de hijos_esperados, de ESE "
        "padre), lo que entrega tiene que cumplirlo: validar_entrega(json.loads(encargo), carga).",
    ],
)


@caso("la primera vez «recibida»; la misma entrega otra vez, «duplicada»")
def _(buzon):
    _, bd, _ = base()
    igual(buzon.recibir(bd, "p", "logs", "e1", HALLAZGO), "recibida", "la primera vez")
    igual(buzon.recibir(bd, "p", "logs", "e1", HALLAZGO), "duplicada", "la segunda vez, idéntica")


@caso("la misma identidad con otros datos es un ValueError, y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    antes = volcado(bd)
    lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", {"hallazgo": "otro"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("un hijo que el padre no espera es un PermissionError, y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    antes = volcado(bd)
    lanza(PermissionError, buzon.recibir, bd, "p", "intruso", "e9", {"hallazgo": "x"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


# Lo pilla un mutante del SQL (`medir mutantes 5.1 --operadores CambioEnSQL`): buscar el hijo
# esperado sin mirar de qué padre (`WHERE hijo=?`).
@caso("un hijo que espera otro padre tampoco vale: PermissionError, y no cambia nada")
def _(buzon):
    ref, bd, _ = base()
    ref.crear_padre(bd, "q", ["intruso"])
    antes = volcado(bd)
    lanza(PermissionError, buzon.recibir, bd, "p", "intruso", "e9", {"hallazgo": "x"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("recibir no admite: la entrega queda «recibida» y el padre, esperando")
def _(buzon):
    _, bd, _ = base(hijos=("logs",))
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    igual({"entrega e1": entrega_en_el_buzon(bd, "e1"), "padre": padre(bd), "trayectoria": trayectoria(bd)},
          {"entrega e1": {"disposición": "recibida", "seq_admitida": None},
           "padre": {"estado": "esperando", "versión": 0}, "trayectoria": []})


# Los tres siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 5.1`): comparar
# la entrega anterior con >= (según cómo se ordenen los datos, pasa por duplicada), no mirar que el
# padre exista, y no aplicar el encargo del hijo a lo que entrega.
@caso("la misma identidad y otra carga, sea cual sea (también las que se ordenan antes o después): ValueError")
def _(buzon):
    _, bd, _ = base()
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    antes = volcado(bd)
    for otra in ({"a": 1}, {"zzz": 1}, {"hallazgo": ""}, {"hallazgo": "zzz"}):
        lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", otra)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("un padre que no existe es un ValueError (no un PermissionError), y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    antes = volcado(bd)
    lanza(ValueError, buzon.recibir, bd, "nadie", "logs", "e1", HALLAZGO)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("con un encargo, lo que entrega el hijo tiene que cumplirlo (validar_entrega): si no, ValueError")
def _(buzon):
    from curso.material.incidente import encargos_del_incidente
    ref = referencia()
    bd = ref.abrir_buzon(carpeta_temporal("ejercicio-5-") / "buzon.db")
    encargos = cargar_modulo(rutas.puntos_de_control()[5] / "encargos.py", "_encargos_de_referencia")
    ref.crear_padre(bd, "p", encargos_del_incidente(encargos))
    antes = volcado(bd)
    sin_evidencia = {"hallazgos": ["La API no llega a la base."], "referencias": [], "incertidumbres": []}
    lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", sin_evidencia)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


# --- 5.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.2", leccion=5, titulo="admitir: el mensaje, la marca y la activación, en una transacción",
    nombre=None, modulo="buzon", usa=["5.3"],
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


def admitir_del_alumno(buzon, ref):
    """El `admitir` del alumno, con la activación de referencia: aquí se comprueba admitir, y
    `activar_si_estan_todos` tiene su propio ejercicio (el 5.3)."""
    buzon.activar_si_estan_todos = ref.activar_si_estan_todos
    return buzon.admitir


@caso("admitir añade el mensaje con seq 1 y marca la entrega como admitida")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    igual(admitir(bd, "e1"), "admitida", "lo que devuelve admitir")
    igual({"trayectoria": trayectoria(bd), "entrega e1": entrega_en_el_buzon(bd, "e1")},
          {"trayectoria": [(1, "e1")], "entrega e1": {"disposición": "admitida", "seq_admitida": 1}},
          "la trayectoria es [(seq, entrega), ...]")


@caso("admitir dos veces es inofensivo: un solo mensaje")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    admitir(bd, "e1")
    igual(admitir(bd, "e1"), "admitida", "lo que devuelve la segunda vez")
    igual(len(trayectoria(bd)), 1, "mensajes en la trayectoria del padre")


@caso("con la entrega del último hijo, el padre pasa a la cola en esa misma admisión")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    admitir(bd, "e1")
    igual(padre(bd), {"estado": "esperando", "versión": 0}, "el padre, con solo logs admitido")
    ref.recibir(bd, "p", "config", "e2", HALLAZGO)
    admitir(bd, "e2")
    igual(padre(bd), {"estado": "en_cola", "versión": 1}, "el padre, con los dos hijos admitidos")


@caso("a un padre terminado, la entrega llega «tardía»: se guarda y el padre no cambia")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    ref.terminar(bd, "p", "cancelada")
    antes = padre(bd)
    igual(admitir(bd, "e1"), "tardia", "lo que devuelve admitir")
    igual({"padre": padre(bd), "trayectoria": trayectoria(bd),
           "disposición de e1": entrega_en_el_buzon(bd, "e1")["disposición"]},
          {"padre": antes, "trayectoria": [], "disposición de e1": "tardia"})


@caso("si el proceso cae entre sus dos escrituras, no queda nada y la entrega sigue «recibida»")
def _(buzon):
    ref, bd, ruta = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    try:
        admitir(ConexionQueCae(bd), "e1")
    except Caida:
        pass
    else:
        raise Fallo("dos escrituras: añadir el mensaje y marcar la entrega",
                    "admitir terminó sin hacer las dos")
    bd.close()  # el proceso muere: ni COMMIT ni ROLLBACK
    otra = sqlite3.connect(ruta, isolation_level=None)
    try:
        igual({"trayectoria": trayectoria(otra), "entrega e1": entrega_en_el_buzon(otra, "e1")},
              {"trayectoria": [], "entrega e1": {"disposición": "recibida", "seq_admitida": None}},
              "lo que queda en la base tras la caída")
    finally:
        otra.close()


@caso("una entrega que no está en el buzón es un ValueError")
def _(buzon):
    ref, bd, _ = base()
    lanza(ValueError, admitir_del_alumno(buzon, ref), bd, "no-existe")


# --- 5.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.3", leccion=5, titulo="activar_si_estan_todos: NOT EXISTS, no una cuenta",
    nombre=None, modulo="buzon",
    pistas=[
        "Es un solo UPDATE de ejecuciones: estado = 'en_cola' y version = version + 1, solo para "
        "el padre `padre` y solo si su estado es 'esperando' (así se activa una vez).",
        "La condición: que NO EXISTA ningún hijo esperado (hijos_esperados) para el que NO EXISTA "
        "una entrega suya en el buzón con disposicion = 'admitida'. Dos NOT EXISTS anidados.",
        "No cuentes mensajes: dos entregas admitidas del mismo hijo no son una de cada hijo. Y "
        "una entrega recibida y sin admitir no cuenta: mira la disposición.",
    ],
)


def con_activar_del_alumno(buzon):
    """(ref, bd): el buzón de referencia con la activación del alumno en su sitio. El `admitir`
    de referencia la llama en su transacción, como la llamará el tuyo."""
    ref, bd, _ = base()
    ref.activar_si_estan_todos = buzon.activar_si_estan_todos
    return ref, bd


def entrega(ref, bd, hijo, entrega):
    """Una entrega de `hijo` para «p», recibida y admitida."""
    ref.recibir(bd, "p", hijo, entrega, HALLAZGO)
    return ref.admitir(bd, entrega)


@caso("con un solo hijo admitido, el padre sigue esperando")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0}, "el padre, con solo logs admitido")


@caso("una entrega recibida y sin admitir no cuenta")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    ref.recibir(bd, "p", "config", "e2", HALLAZGO)  # recibida, pero nadie la ha admitido
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0},
          "el padre, con logs admitido y config solo recibido")


@caso("dos entregas admitidas del mismo hijo no activan al padre")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "logs", "e2")  # un resultado y su corrección: dos mensajes, un solo hijo
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0},
          "el padre, con dos entregas de logs y ninguna de config")


@caso("con los dos hijos admitidos, pasa a la cola una sola vez (versión + 1)")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "config", "e2")
    buzon.activar_si_estan_todos(bd, "p")  # otra vez: ya no está esperando
    igual(padre(bd), {"estado": "en_cola", "versión": 1},
          "el padre, tras admitir a los dos y activar otra vez")


# Lo pilla un mutante del SQL (`medir mutantes 5.3 --operadores CambioEnSQL`): el UPDATE sin
# `id = ?`, que activa a todos los padres que ya tienen sus entregas, no solo a `padre`.
@caso("activar a un padre no activa a otro: el UPDATE es solo para `padre`")
def _(buzon):
    ref, bd, _ = base()
    ref.crear_padre(bd, "q", ["solo"])
    ref.activar_si_estan_todos = lambda bd, padre: None  # q queda con su entrega admitida y sin activar
    ref.recibir(bd, "q", "solo", "eq", HALLAZGO)
    ref.admitir(bd, "eq")
    buzon.activar_si_estan_todos(bd, "p")
    igual(tuple(bd.execute("SELECT estado, version FROM ejecuciones WHERE id='q'").fetchone()), ("esperando", 0),
          "(estado, versión) de «q» tras activar a «p»")


@caso("un padre terminado no se activa")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "config", "e2")
    ref.terminar(bd, "p", "fallida")
    antes = padre(bd)
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), antes, "el padre terminado, tras activar otra vez")


# --- 5.4 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.4", leccion=5, titulo="por_que_no y verificar: integrar comprobando la evidencia",
    nombre=None, modulo="subagentes",
    pistas=[
        "Primero lo que no hace falta abrir: las citas del hallazgo (CITA.findall) y la referencia "
        "(REFERENCIA.fullmatch, con su ruta y su línea). Sin cita, sin referencia o sin línea, "
        "devuelve un texto que diga por qué.",
        "Abre el fichero como lo abre leer: herramientas.contenido(proyecto, ruta) no sale del "
        "proyecto, y si no puede lanza ErrorDeHerramienta (su mensaje es un buen motivo). "
        "herramientas.lineas(texto) da sus líneas: la n es lineas[n - 1], si hay tantas.",
        "Cada cita tiene que estar en ESA línea, no en otra del fichero. En verificar, el hallazgo "
        "i va con la referencia i (None si hay menos referencias), y cada descartado lleva su motivo.",
    ],
)

CIERTO = "La base escucha en el 5432: «puerto = 5432»"  # config/db.toml:6 lo dice
OTRO_CIERTO = "La base admite cien conexiones: «max_conexiones = 100»"  # config/db.toml:7


def descartado(subagentes, hallazgo, referencia, proyecto=INCIDENTE):
    """El motivo que da `por_que_no`: tiene que ser un texto, no None ni una excepción."""
    motivo = subagentes.por_que_no(hallazgo, referencia, proyecto)
    igual(isinstance(motivo, str) and bool(motivo.strip()), True,
          f"por_que_no({hallazgo!r}, {referencia!r}) devolvió {motivo!r}: tenía que decir por qué no")


@caso("un hallazgo cuyas citas están en su línea se da por bueno (None)")
def _(subagentes):
    igual(subagentes.por_que_no(CIERTO, "config/db.toml:6", INCIDENTE), None, "config/db.toml:6")
    dos = "La API no llega: «connect to db:5433» «connection refused»"
    igual(subagentes.por_que_no(dos, "logs/api.log:7", INCIDENTE), None, "dos citas, las dos en logs/api.log:7")


@caso("sin cita entre « » no hay nada que comprobar: se descarta")
def _(subagentes):
    descartado(subagentes, "La base escucha en el 5432.", "config/db.toml:6")


@caso("sin referencia, se descarta")
def _(subagentes):
    descartado(subagentes, CIERTO, None)


@caso("una referencia sin número de línea se descarta")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/db.toml")


@caso("la cita tiene que estar en la línea citada, no en otra del fichero")
def _(subagentes):
    descartado(subagentes, OTRO_CIERTO, "config/db.toml:6")


@caso("con dos citas cuentan las dos, no solo la primera")
def _(subagentes):
    descartado(subagentes, "«puerto = 5432» y «max_conexiones = 20»", "config/db.toml:6")


@caso("una línea que el fichero no tiene se descarta, sin romper nada")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/db.toml:999")


@caso("la línea 0 no existe: no es la última del fichero")
def _(subagentes):
    descartado(subagentes, "Guarda las copias una semana: «conservar_dias = 7»", "config/db.toml:0")


@caso("una referencia que sale del proyecto no se lee")
def _(subagentes):
    carpeta = carpeta_temporal("ejercicio-5-")
    (carpeta / "proyecto").mkdir()
    (carpeta / "proyecto" / "notas.txt").write_text("nada\n", encoding="utf-8")
    (carpeta / "fuera.txt").write_text("secreto = 1\n", encoding="utf-8")
    descartado(subagentes, "Hay un secreto: «secreto = 1»", "../fuera.txt:1", carpeta / "proyecto")


@caso("un fichero que no está en el proyecto se descarta, sin romper nada")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/otra.toml:6")


def verificar(subagentes, hallazgos, referencias):
    """El `verificar` del alumno sobre esa entrega, con el `por_que_no` de referencia mientras
    corre: así un fallo de uno no se cuela en los casos del otro."""
    suyo = subagentes.por_que_no
    subagentes.por_que_no = cargar_modulo(rutas.puntos_de_control()[5] / "subagentes.py",
                                          "_subagentes_de_referencia").por_que_no
    try:
        return subagentes.verificar({"hallazgos": hallazgos, "referencias": referencias,
                                     "incertidumbres": []}, INCIDENTE)
    finally:
        subagentes.por_que_no = suyo


@caso("verificar: cada hallazgo va con la referencia de su mismo orden")
def _(subagentes):
    verificados, _ = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:6", "config/db.toml:7"])
    igual([f["referencia"] for f in verificados], ["config/db.toml:6", "config/db.toml:7"],
          "las referencias de los verificados")


@caso("verificar: con las referencias cambiadas de orden, ninguno se da por bueno")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:7", "config/db.toml:6"])
    igual({"verificados": len(verificados), "descartados": len(descartados)},
          {"verificados": 0, "descartados": 2})


# Los dos siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 5.4`): `>=` en
# vez de `>` con el número de líneas, e `i != len(referencias)` en vez de `<`.
@caso("la última línea del fichero sí existe: una cita que está en ella se da por buena")
def _(subagentes):
    igual(subagentes.por_que_no("Guarda las copias una semana: «conservar_dias = 7»", "config/db.toml:17",
                                INCIDENTE), None, "config/db.toml:17, su última línea")


@caso("verificar: con menos referencias que hallazgos, los que sobran van con None")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO, CIERTO], ["config/db.toml:6"])
    igual(([f["referencia"] for f in verificados], [f["referencia"] for f in descartados]),
          (["config/db.toml:6"], [None, None]), "(referencias de los verificados, de los descartados)")


@caso("verificar: un hallazgo sin su referencia se descarta con su motivo, sin romper nada")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:6"])
    igual(verificados, [{"hallazgo": CIERTO, "referencia": "config/db.toml:6"}], "los verificados")
    igual([(f["hallazgo"], f["referencia"]) for f in descartados], [(OTRO_CIERTO, None)], "los descartados")
    igual(bool(str(descartados[0].get("motivo") or "").strip()), True, "el descartado lleva su motivo")


@caso("verificar: sin votar, lo que se repite no por eso es cierto")
def _(subagentes):
    falso = "La base escucha en el 5433: «puerto = 5433»"
    verificados, _ = verificar(subagentes, [falso, falso, CIERTO], ["config/db.toml:6"] * 3)
    igual([f["hallazgo"] for f in verificados], [CIERTO], "los verificados")

