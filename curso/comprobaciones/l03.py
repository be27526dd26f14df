"""Para los ejercicios de la lección 03: el umbral, el punto de corte y la compactación con sus invariantes.

Cada caso está hecho para un error concreto y su mensaje lo nombra; los casos que no son el de
«no modifica la M» comparan con una copia de M tomada antes de llamar a compactar, para que
modificar M en su sitio caiga solo en su caso (tests/lecciones/test_errores_l02_l03.py lo comprueba).
"""
import copy
from types import SimpleNamespace

from hypothesis import strategies as st

from curso.comprobaciones.diferencial import Maquina, al_empezar, intento, regla
from curso.comprobaciones.ejercicios import Fallo, ejercicio, igual

# --- 3.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.1", leccion=3, titulo="umbral: la mitad de la ventana tiene dueño",
    nombre="umbral",
    pistas=[
        "Al compactar todavía faltan dos cosas por llegar, y las dos necesitan sitio en la "
        "ventana: la respuesta del modelo y las observaciones del turno en curso.",
        "El umbral es lo que queda de la ventana cuando apartas esas dos reservas.",
        "Si no queda nada (cero o menos), ningún umbral tiene sentido: lanza ValueError con un "
        "mensaje que diga qué reservas no caben en qué ventana.",
    ],
)


@caso("con la ventana del curso, 8192 − 1024 − 3072 = 4096")
def _(umbral):
    igual(umbral(8192, 1024, 3072), 4096, "tokens que puede ocupar M antes de compactar")


@caso("una ventana mayor deja más sitio antes de compactar")
def _(umbral):
    igual(umbral(12288, 1024, 3072), 8192, "tokens antes de compactar, con una ventana de 12288")


@caso("si las reservas se comen la ventana, ValueError")
def _(umbral):
    try:
        devuelto = umbral(4096, 1024, 3072)
    except ValueError:
        return
    raise Fallo("ValueError", f"devolvió {devuelto!r}",
                "1024 + 3072 = 4096 no dejan ningún token de una ventana de 4096")


# Los pillan dos mutantes de las pruebas de mutación (`medir mutantes 3.1`): `resto == 0`, que deja
# pasar un umbral negativo, y `resto <= 1`, que rechaza un umbral de un token.
@caso("si las reservas pasan de la ventana, también ValueError; si dejan un solo token, ese es el umbral")
def _(umbral):
    try:
        devuelto = umbral(4000, 1024, 3072)
    except ValueError:
        devuelto = "ValueError"
    igual(devuelto, "ValueError", "1024 + 3072 = 4096 pasan de una ventana de 4000")
    try:
        devuelto = umbral(4097, 1024, 3072)
    except ValueError as e:
        devuelto = f"ValueError: {e}"
    igual(devuelto, 1, "1024 + 3072 = 4096 dejan 1 token de una ventana de 4097")


# El diferencial: las reservas justo alrededor de la ventana (no dejan nada, dejan un token, dejan
# varios) y lejos, en la ventana del curso y en otras.
def _reservas(ventana, respuesta, cuanto):
    return ventana, respuesta, max(ventana - respuesta - cuanto, 0)


@caso.diferencial(entradas=st.builds(_reservas, st.sampled_from([8192, 4096, 12288, 1, 2]) | st.integers(1, 20000),
                                     st.sampled_from([1024, 0, 512]) | st.integers(0, 4096),
                                     st.sampled_from([0, 1, 2, -1, -2, 4096])),
                  ejemplos=150, contar=lambda e: f"umbral{e}",
                  pistas={"lo que devuelve": "ventana − reserva_respuesta − reserva_turno; ValueError si eso no "
                                             "deja ningún token (0 o menos)"})
def _(umbral, entrada):
    return {"lo que devuelve": intento(umbral, *entrada)}


# --- Una M de prueba, tal como le llega a compactar desde el bucle -------------------------------

def pide_leer(turno):
    """La llamada del turno `turno`: leer f<turno>.py, con el id t<turno>."""
    return {"type": "tool_use", "id": f"t{turno}", "name": "leer", "input": {"ruta": f"f{turno}.py"}}


def lo_que_volvio(turno):
    """La observación que contesta a `pide_leer(turno)`."""
    return {"type": "tool_result", "tool_use_id": f"t{turno}", "content": f"el fichero {turno}"}


def con_turnos(n):
    """Una M de n turnos, cortada donde la ve compactar: tras la respuesta del turno n.

    Cada turno anterior tiene su respuesta (una llamada) y sus observaciones; el turno n, solo la
    respuesta."""
    M = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla f1.py.")]
    for turno in range(1, n):
        M += [("asistente", [pide_leer(turno)]), ("usuario", [lo_que_volvio(turno)])]
    return M + [("asistente", [pide_leer(n)])]


def turno_de(mensaje):
    """El número de turno de una respuesta de `con_turnos`: el de su llamada."""
    return int(mensaje[1][0]["id"][1:])


def donde_cae(M, c):
    """(rol, turno) del mensaje M[c] de una M de `con_turnos`, dicho también cuando el corte está
    mal: en unas observaciones, en el inicio o fuera de M (el caso cuenta el error del alumno, no
    se rompe con él)."""
    if type(c) is not int:
        return f"{c!r}, que no es una posición de M"
    if not 0 <= c < len(M):
        return f"la posición {c}, fuera de M (tiene {len(M)} mensajes, del 0 al {len(M) - 1})"
    rol, contenido = M[c]
    if c < 2:
        return (rol, "el inicio: " + ("el prompt de sistema" if c == 0 else "el pedido"))
    bloque = contenido[0]
    if bloque.get("type") == "tool_use":
        return (rol, turno_de(M[c]))
    return (rol, f"las observaciones del turno {int(bloque['tool_use_id'][1:])}")


# --- 3.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.2", leccion=3, titulo="corte: dónde empiezan los k turnos recientes",
    nombre=None, modulo="compactar",
    pistas=[
        "Mira M desde el final. El último mensaje es la respuesta del turno en curso, sola: sus "
        "observaciones aún no han llegado. Cada turno de antes son dos mensajes.",
        "Los k turnos recientes son, pues, esa respuesta y k − 1 turnos de dos mensajes.",
        "El corte es la posición del primero de esos mensajes: len(M) menos cuántos son. Debe "
        "caer siempre en una respuesta del asistente.",
    ],
)


@caso("con 5 turnos y k = 2, el corte cae en la respuesta del turno 4")
def _(compactar):
    M = con_turnos(5)
    c = compactar.corte(M, 2)
    igual(donde_cae(M, c), ("asistente", 4), "(rol, turno) del mensaje donde cae el corte")


@caso("con k = 1, el corte es la respuesta del turno en curso")
def _(compactar):
    M = con_turnos(5)
    igual(compactar.corte(M, 1), len(M) - 1, f"posición del corte en una M de {len(M)} mensajes")


@caso("con 6 turnos y k = 3, el corte cae en la respuesta del turno 4")
def _(compactar):
    M = con_turnos(6)
    c = compactar.corte(M, 3)
    igual(donde_cae(M, c), ("asistente", 4), "(rol, turno) del mensaje donde cae el corte")


def con_nota(n):
    """Una M de n turnos ya compactada una vez: entre el pedido y los turnos, la nota de un resumen."""
    M = con_turnos(n)
    return M[:2] + [("usuario", NOTA_DE_PRUEBA)] + M[2:]


NOTA_DE_PRUEBA = "Resumen que escribiste al compactar, en vez de tus turnos anteriores:\n\nLeí f1.py."


@caso.diferencial(entradas=st.builds(lambda n, k, nota: (n, min(k, n), nota), st.integers(1, 7), st.integers(1, 7),
                                     st.booleans()),
                  ejemplos=100,
                  contar=lambda e: f"corte(M, {e[1]}) con M de {e[0]} turnos" + (", ya compactada" if e[2] else ""),
                  pistas={"lo que devuelve": "len(M) − (2k − 1): el turno en curso es un mensaje y cada uno de los "
                                             "k − 1 anteriores, dos"})
def _(compactar, entrada):
    n, k, nota = entrada
    M = con_nota(n) if nota else con_turnos(n)
    return {"lo que devuelve": compactar.corte(M, k), "M tras el corte": M}


# --- 3.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.3", leccion=3, titulo="compactar: el contrato entero",
    nombre=None, modulo="compactar", usa=["3.2"],
    pistas=[
        "Empieza por los casos en que no se hace nada: si tokens(modelo) no pasa del umbral, o "
        "si entre el inicio (inicio_de) y el corte (corte) no hay ni un turno entero, devuelve "
        "la misma M, el mismo objeto.",
        "No modifiques M: ni append, ni del, ni asignar a un trozo. Si el modelo falla al "
        "resumir, o contesta sin texto, la M que recibiste tiene que seguir entera. Todo lo que "
        "devuelvas o mandes se construye con trozos de M (M[a:b]) y listas nuevas.",
        "La petición del resumen son los mensajes hasta el corte y, detrás, un mensaje del "
        "usuario con INSTRUCCION, con HERRAMIENTAS como cualquier otra. texto_de saca el texto "
        "de la respuesta; si sale vacío, devuelve M. Si no, la M nueva: el inicio, un mensaje del "
        "usuario con NOTA seguida del resumen, y lo que va desde el corte hasta el final.",
    ],
)


class Contado:
    """Un modelo de mentira: dice que la última petición ocupó `n` tokens, contesta siempre
    `respuesta` y guarda una copia de cada petición que le llega, con sus herramientas."""

    def __init__(self, n, respuesta):
        self.usage = {"input_tokens": n, "output_tokens": 0}
        self.respuesta, self.pedidas, self.herramientas = respuesta, [], []

    def __call__(self, peticion, herramientas=()):
        self.pedidas.append(copy.deepcopy(list(peticion)))
        self.herramientas.append(herramientas)
        return self.respuesta


RESUMEN = [{"type": "text", "text": "Ya leí f1.py y f2.py; el error está en f2.py."}]


def compactada(compactar, n, k, respuesta=RESUMEN, tokens=None):
    """(M como estaba, lo que devolvió compactar, el modelo). La copia se toma antes de llamar:
    estos casos miran el resultado, no si M se tocó (eso es cosa de su propio caso)."""
    M = con_turnos(n)
    antes = copy.deepcopy(M)
    modelo = Contado(compactar.UMBRAL + 1 if tokens is None else tokens, respuesta)
    return antes, compactar.compactar(modelo, M, k=k), modelo


@caso("justo en el umbral, sin pasarlo, M vuelve tal cual y no se pide nada")
def _(compactar):
    M, modelo = con_turnos(5), Contado(compactar.UMBRAL, RESUMEN)
    if compactar.compactar(modelo, M) is not M:
        raise Fallo("la misma lista M", "otra lista",
                    f"tokens = {compactar.UMBRAL}, justo el umbral: no se compacta y se devuelve M")
    igual(len(modelo.pedidas), 0, "peticiones de resumen por debajo del umbral")


@caso("el resumen se pide con el inicio, los turnos viejos y la instrucción, y con las herramientas")
def _(compactar):
    antes, _, modelo = compactada(compactar, 5, 2)
    igual(len(modelo.pedidas), 1, "peticiones de resumen")
    igual(modelo.pedidas[0], antes[:-3] + [("usuario", compactar.INSTRUCCION)],
          "la petición del resumen: M hasta el corte y la instrucción")
    igual(modelo.herramientas[0], compactar.HERRAMIENTAS,
          "las herramientas de la petición del resumen: las de siempre, para que empiece como la "
          "anterior y el servidor aproveche su caché")


@caso("el inicio no se toca y los k turnos recientes quedan tal cual")
def _(compactar):
    antes, nuevo, _ = compactada(compactar, 5, 2)
    igual(len(nuevo), 6, "mensajes en la M nueva: 2 del inicio, 1 del resumen y 3 de los turnos 4 y 5")
    igual(nuevo[:2], antes[:2], "el inicio: el prompt de sistema y el pedido")
    rol, nota = nuevo[2]
    igual((rol, isinstance(nota, str) and nota.endswith(RESUMEN[0]["text"])), ("usuario", True),
          "el mensaje del resumen: del usuario, y acabado en el texto del modelo")
    igual(nuevo[3:], antes[-3:], "los turnos 4 y 5, palabra por palabra")


@caso("ninguna llamada pierde su observación (salvo la del turno en curso)")
def _(compactar):
    _, nuevo, _ = compactada(compactar, 6, 3)
    bloques = [bloque for _, contenido in nuevo if isinstance(contenido, list) for bloque in contenido]
    igual([x["id"] for x in bloques if x["type"] == "tool_use"], ["t4", "t5", "t6"],
          "ids de las llamadas que quedan en M")
    igual([x["tool_use_id"] for x in bloques if x["type"] == "tool_result"], ["t4", "t5"],
          "ids de las observaciones que quedan en M (la de t6 aún no ha llegado)")


@caso("si el modelo contesta sin texto (solo una llamada), no se quita nada")
def _(compactar):
    M = con_turnos(5)
    modelo = Contado(compactar.UMBRAL + 1, [pide_leer(9)])
    if compactar.compactar(modelo, M) is not M:
        raise Fallo("la misma lista M", "otra lista",
                    "sin resumen no hay nada que poner en lugar de los turnos viejos")


@caso("sin ningún turno viejo entero, no se quita nada ni se pide resumen")
def _(compactar):
    M = con_turnos(2)
    modelo = Contado(compactar.UMBRAL + 1, RESUMEN)
    if compactar.compactar(modelo, M, k=2) is not M:
        raise Fallo("la misma lista M", "otra lista",
                    "con 2 turnos y k = 2, todos son recientes: no hay nada que resumir")
    igual(len(modelo.pedidas), 0, "peticiones de resumen sin turnos viejos")


@caso("no modifica la M que le pasan")
def _(compactar):
    M = con_turnos(5)
    antes = copy.deepcopy(M)
    nuevo = compactar.compactar(Contado(compactar.UMBRAL + 1, RESUMEN), M)
    if M != antes:
        raise Fallo(f"la M que recibió, sin cambios ({len(antes)} mensajes)",
                    f"una M cambiada ({len(M)} mensajes)",
                    "modificaste M en su sitio" + (" y la devolviste" if nuevo is M else "")
                    + ": construye una lista nueva con trozos de M y deja la que recibes como estaba")


# Los tres siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 3.3`): la
# comparación con el umbral (`==` por `<=`) y la cuenta de los turnos viejos (`<= 2`, `< 3`, `< 1`
# en vez de `< 2`).
@caso("muy por debajo del umbral (la mitad), tampoco se compacta")
def _(compactar):
    M, modelo = con_turnos(5), Contado(compactar.UMBRAL // 2, RESUMEN)
    if compactar.compactar(modelo, M) is not M:
        raise Fallo("la misma lista M", "otra lista", f"tokens = {compactar.UMBRAL // 2}, la mitad del umbral")
    igual(len(modelo.pedidas), 0, "peticiones de resumen por debajo del umbral")


@caso("con un solo turno viejo entero ya se compacta: se resume ese turno")
def _(compactar):
    antes, nuevo, modelo = compactada(compactar, 3, 2)
    igual(len(modelo.pedidas), 1, "peticiones de resumen con 3 turnos y k = 2 (el turno 1 es viejo)")
    igual(len(nuevo), len(antes) - 1, "mensajes en la M nueva: el turno 1 (2 mensajes) cambiado por el resumen (1)")


@caso("tras compactar, con solo la nota entre el pedido y los recientes, no se resume otra vez")
def _(compactar):
    M = con_turnos(2)
    M = M[:2] + [("usuario", compactar.NOTA + RESUMEN[0]["text"])] + M[2:]
    modelo = Contado(compactar.UMBRAL + 1, RESUMEN)
    if compactar.compactar(modelo, M, k=2) is not M:
        raise Fallo("la misma lista M", "otra lista",
                    "entre el pedido y los 2 turnos recientes solo está la nota del resumen anterior: "
                    "no hay ningún turno entero que resumir")
    igual(len(modelo.pedidas), 0, "peticiones de resumen de una nota sola")


# --- El diferencial del 3.3: historiales con compactaciones ----------------------------------------
#
# Cada secuencia empieza con una M de 1 a 6 turnos (a veces con varias llamadas en un turno) y la
# compacta; después añade turnos y compacta otra vez, ya con la nota del resumen anterior dentro. En
# cada compactación, lo que ocupa M va por debajo, justo en y por encima del umbral (y el umbral, el
# del curso o uno dado), k va de 1 a los turnos que hay, y el modelo contesta un resumen, un texto
# en blanco, solo una llamada, texto y una llamada, o falla (su excepción tiene que salir tal cual).

RESPUESTAS_DEL_MODELO = {
    "un resumen": [{"type": "text", "text": "Leí los ficheros; el error está en f2.py."}],
    "un texto vacío": [{"type": "text", "text": ""}],
    "un texto en blanco": [{"type": "text", "text": "  \n"}],
    "solo una llamada": [pide_leer(90)],
    "texto y una llamada": [{"type": "text", "text": "Resumo y sigo."}, pide_leer(91)],
    "un fallo (ConnectionError)": ConnectionError("el servidor cortó la conexión"),
}


class ModeloDelDiferencial:
    """Dice que la última petición ocupó `usage` y contesta `respuesta` (o la lanza)."""

    def __init__(self, usage, respuesta):
        self.usage, self.respuesta, self.pedidas = usage, respuesta, []

    def __call__(self, peticion, herramientas=()):
        self.pedidas.append((copy.deepcopy(list(peticion)), [h.get("name") for h in herramientas]))
        if isinstance(self.respuesta, Exception):
            raise self.respuesta
        return copy.deepcopy(self.respuesta)


def turno_de_prueba(t, llamadas):
    """El turno `t` ya atendido: su respuesta con `llamadas` llamadas a la vez y sus observaciones."""
    pedidas = [dict(pide_leer(t), id=f"t{t}_{j}") for j in range(llamadas)]
    return [("asistente", pedidas),
            ("usuario", [dict(lo_que_volvio(t), tool_use_id=p["id"]) for p in pedidas])]


COMPACTACION = dict(
    tokens=st.sampled_from(["umbral + 1", "umbral", "umbral − 1", "0", "umbral + 5000"]),
    k=st.sampled_from(["2", "1", "3", "turnos", "turnos − 1"]),
    respuesta=st.sampled_from(list(RESPUESTAS_DEL_MODELO)),
    umbral=st.sampled_from(["por omisión", "100"]),
    cache=st.booleans())


class Compactaciones(Maquina):
    secuencias = 50
    pasos = 5
    # Compactar otra vez cuando entre el pedido y los recientes solo queda la nota del resumen anterior:
    # no hay ningún turno entero que resumir (el corte cae justo detrás de la nota).
    bordes = [[("empezar", dict(llamadas=[1, 1, 1, 1], tokens="umbral + 1", k="2", respuesta="un resumen",
                                umbral="por omisión", cache=False)),
               ("compactar", dict(tokens="umbral + 1", k="3", respuesta="un resumen", umbral="por omisión",
                                  cache=False))]]
    pistas = {"¿la misma M?": "si no pasa del umbral, si no hay ni un turno entero entre el inicio y el corte, o si "
                              "el resumen no trae texto, devuelve la misma M",
              "peticiones de resumen": "una petición: M hasta el corte y (\"usuario\", INSTRUCCION), con HERRAMIENTAS",
              "la M nueva": "el inicio, (\"usuario\", NOTA + resumen) y M desde el corte",
              "la M que recibió": "no cambies M: construye la nueva con trozos de M"}

    def preparar(self, compactar):
        return SimpleNamespace(compactar=compactar, M=[("sistema", "Eres un agente de prueba."),
                                                       ("usuario", "Arregla f1.py.")], turnos=0)

    @al_empezar(llamadas=st.lists(st.sampled_from([1, 1, 2, 3]), min_size=1, max_size=6), **COMPACTACION)
    def empezar(self, mundo, llamadas, **compactacion):
        self.turnos(mundo, llamadas)
        return self.compactar(mundo, **compactacion)

    @regla(llamadas=st.lists(st.sampled_from([1, 2]), min_size=1, max_size=3),
           contar=lambda llamadas: f"{len(llamadas)} turnos más")
    def turnos(self, mundo, llamadas):
        for cuantas in llamadas:
            mundo.turnos += 1
            mundo.M = mundo.M + turno_de_prueba(mundo.turnos, cuantas)
        return {}

    @regla(**COMPACTACION)
    def compactar(self, mundo, tokens, k, respuesta, umbral, cache):
        ref = self.referencia
        el_umbral = ref.UMBRAL if umbral == "por omisión" else int(umbral)
        turnos = sum(1 for rol, c in mundo.M if rol == "asistente") + 1  # con el turno en curso
        el_k = {"turnos": turnos, "turnos − 1": max(turnos - 1, 1)}.get(k) or min(int(k), turnos)
        cuantos = {"umbral + 1": el_umbral + 1, "umbral": el_umbral, "umbral − 1": el_umbral - 1, "0": 0,
                   "umbral + 5000": el_umbral + 5000}[tokens]
        usage = ({"input_tokens": 10, "cache_read_input_tokens": cuantos - 15, "output_tokens": 5} if cache
                 else {"input_tokens": cuantos - 5, "output_tokens": 5})
        mundo.turnos += 1
        M = mundo.M + [("asistente", [dict(pide_leer(mundo.turnos), id=f"t{mundo.turnos}_0")])]
        opciones = {"k": el_k, **({} if umbral == "por omisión" else {"umbral": el_umbral})}
        self.contar_paso(f"compactar(un modelo que dice {cuantos} tokens y contesta {respuesta}, M de {turnos} turnos"
                         + "".join(f", {c}={v}" for c, v in opciones.items()) + f") (el umbral es {el_umbral})")
        modelo = ModeloDelDiferencial(usage, RESPUESTAS_DEL_MODELO[respuesta])
        antes = copy.deepcopy(M)
        nuevo = intento(mundo.compactar.compactar, modelo, M, **opciones)
        if isinstance(nuevo, list) and nuevo and nuevo[-1] == M[-1]:  # sigue la secuencia con lo compactado
            mundo.M = nuevo + [("usuario", [dict(lo_que_volvio(mundo.turnos), tool_use_id=f"t{mundo.turnos}_0")])]
        return {"¿la misma M?": nuevo is M, "peticiones de resumen": modelo.pedidas, "la M nueva": nuevo,
                "la M que recibió": "sin cambios" if M == antes else "cambiada"}


caso.diferencial()(Compactaciones)
