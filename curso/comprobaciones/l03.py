"""Lección 03: el umbral, dónde cae el corte y la compactación con sus invariantes."""
import copy

from curso.ejercicios import Fallo, ejercicio, igual

# --- 3.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.1", leccion=3, titulo="umbral: la mitad de la ventana tiene dueño",
    nombre="umbral",
    pistas=[
        "De la ventana hay que guardar sitio para dos cosas que todavía no han llegado: la "
        "respuesta del modelo y lo que traiga el turno en curso (sus observaciones).",
        "Réstalas: return ventana - reserva_respuesta - reserva_turno.",
        "Si lo que queda no es positivo, no hay umbral posible: lanza ValueError con un mensaje "
        "que lo diga.",
    ],
)


@caso("con la ventana del curso, 8192 − 1024 − 3072 = 4096")
def _(umbral):
    igual(umbral(8192, 1024, 3072), 4096)


@caso("una ventana mayor deja más sitio antes de compactar")
def _(umbral):
    igual(umbral(11776, 1024, 3072), 7680)


@caso("si las reservas se comen la ventana, ValueError")
def _(umbral):
    try:
        umbral(4096, 1024, 3072)
    except ValueError:
        return
    raise Fallo("ValueError", "ninguna excepción")


# --- M de prueba, como la deja el bucle justo después de la respuesta del turno n --------------

def llamada(i):
    return {"type": "tool_use", "id": f"t{i}", "name": "leer", "input": {"ruta": f"f{i}.py"}}


def observacion(i):
    return {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"el fichero {i}"}


def con_turnos(n):
    """M justo después de la respuesta del turno n: su llamada todavía no tiene observación."""
    M = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla f1.py.")]
    for i in range(1, n + 1):
        M.append(("asistente", [llamada(i)]))
        if i < n:
            M.append(("usuario", [observacion(i)]))
    return M


def turno_de(mensaje):
    """El número de turno de una respuesta del asistente de `con_turnos`."""
    return int(mensaje[1][0]["id"][1:])


# --- 3.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.2", leccion=3, titulo="corte: dónde empiezan los k turnos recientes",
    nombre=None, modulo="compactar",
    pistas=[
        "M acaba en la respuesta del turno en curso, que todavía espera sus observaciones. Cada "
        "turno entero son dos mensajes: la respuesta y las observaciones.",
        "Los k turnos recientes son k − 1 turnos enteros (2 mensajes cada uno) más la respuesta "
        "del turno en curso (1 mensaje): 2k − 1 mensajes.",
        "return len(M) - (2 * k - 1). El corte cae siempre en una respuesta del asistente.",
    ],
)


@caso("con 5 turnos y k = 2, el corte cae en la respuesta del turno 4")
def _(compactar):
    M = con_turnos(5)
    c = compactar.corte(M, 2)
    igual((M[c][0], turno_de(M[c])), ("asistente", 4))


@caso("con k = 1, el corte es la respuesta del turno en curso")
def _(compactar):
    M = con_turnos(5)
    igual(compactar.corte(M, 1), len(M) - 1)


@caso("con 6 turnos y k = 3, el corte cae en la respuesta del turno 4")
def _(compactar):
    M = con_turnos(6)
    c = compactar.corte(M, 3)
    igual((M[c][0], turno_de(M[c])), ("asistente", 4))


# --- 3.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "3.3", leccion=3, titulo="compactar: el contrato entero",
    nombre=None, modulo="compactar",
    pistas=[
        "Primero lo que no cambia nada: si tokens(modelo) <= umbral, devuelve M tal cual (el "
        "mismo objeto). Después calcula p = inicio_de(M) y c = corte(M, k); si entre p y c no "
        "hay al menos un turno entero (dos mensajes), devuelve M.",
        "Pide el resumen con modelo(M[:c] + [(\"usuario\", INSTRUCCION)], HERRAMIENTAS) y junta "
        "su texto. Si no trae texto (sólo llamadas), devuelve M: sin resumen no se quita nada.",
        "Devuelve una lista nueva: M[:p] + [(\"usuario\", NOTA + resumen)] + M[c:]. No modifiques "
        "la M que te pasan.",
    ],
)


class Contado:
    """Un modelo que contó n tokens en la última petición y apunta lo que le piden."""

    def __init__(self, n, respuesta):
        self.usage = {"input_tokens": n, "output_tokens": 0}
        self.respuesta, self.pedidas = respuesta, []

    def __call__(self, mensajes, herramientas=()):
        self.pedidas.append(list(mensajes))
        return self.respuesta


TEXTO = [{"type": "text", "text": "He leído f1.py y f2.py."}]


@caso("por debajo del umbral, M vuelve tal cual y no se pide nada")
def _(compactar):
    M, modelo = con_turnos(5), Contado(compactar.UMBRAL, TEXTO)
    if compactar.compactar(modelo, M) is not M:
        raise Fallo("el mismo objeto M", "otra lista")
    igual(modelo.pedidas, [], "por debajo del umbral no se pide ningún resumen")


@caso("el resumen se pide con el inicio, los turnos viejos y la instrucción")
def _(compactar):
    M, modelo = con_turnos(5), Contado(compactar.UMBRAL + 1, TEXTO)
    compactar.compactar(modelo, M, k=2)
    igual(modelo.pedidas, [M[:-3] + [("usuario", compactar.INSTRUCCION)]])


@caso("el inicio no se toca y los k turnos recientes quedan tal cual")
def _(compactar):
    M, modelo = con_turnos(5), Contado(compactar.UMBRAL + 1, TEXTO)
    nuevo = compactar.compactar(modelo, M, k=2)
    igual(nuevo[:2], M[:2], "el prompt de sistema y el pedido")
    igual(nuevo[3:], M[-3:], "los turnos 4 y 5")
    rol, nota = nuevo[2]
    igual((rol, nota.endswith("He leído f1.py y f2.py.")), ("usuario", True), "la nota del resumen")


@caso("ninguna llamada pierde su observación (salvo la del turno en curso)")
def _(compactar):
    nuevo = compactar.compactar(Contado(compactar.UMBRAL + 1, TEXTO), con_turnos(6), k=3)
    bloques = [b for _, c in nuevo if isinstance(c, list) for b in c]
    igual([b["id"] for b in bloques if b["type"] == "tool_use"], ["t4", "t5", "t6"])
    igual([b["tool_use_id"] for b in bloques if b["type"] == "tool_result"], ["t4", "t5"])


@caso("sin resumen (sólo llamadas) o sin turnos viejos, no se quita nada")
def _(compactar):
    M = con_turnos(5)
    igual(compactar.compactar(Contado(compactar.UMBRAL + 1, [llamada(9)]), M), M)
    M = con_turnos(2)
    igual(compactar.compactar(Contado(compactar.UMBRAL + 1, TEXTO), M, k=2), M)


@caso("no modifica la M que le pasan")
def _(compactar):
    M = con_turnos(5)
    antes = copy.deepcopy(M)
    compactar.compactar(Contado(compactar.UMBRAL + 1, TEXTO), M)
    igual(M, antes)
