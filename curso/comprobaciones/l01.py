"""Para los ejercicios de la lección 01: los bloques de una respuesta, el permiso de cada herramienta y el bucle."""

from itertools import pairwise

from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual

LEER = {"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "a.txt"}}
EJECUTAR = {"type": "tool_use", "id": "t2", "name": "ejecutar", "input": {"comando": "echo hola"}}
HOLA = {"type": "text", "text": "Hola."}
ADIOS = {"type": "text", "text": "Hasta luego."}

# --- 1.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "1.1", leccion=1, titulo="llamadas_de y texto_de: qué pide una respuesta y qué dice",
    nombre=None, modulo="entorno",
    pistas=[
        "Una respuesta es una lista de bloques (diccionarios). Cada bloque dice lo que es en "
        "su clave \"type\": \"text\" o \"tool_use\".",
        "llamadas_de: una lista por comprensión que se queda con los bloques cuyo \"type\" es "
        "\"tool_use\", en el mismo orden. texto_de: los \"text\" de los bloques de texto.",
        "texto_de une los textos con \" \".join(...) y quita los espacios de los extremos con "
        ".strip(); si no hay ningún bloque de texto, eso da \"\".",
    ],
)


@caso("llamadas_de devuelve las llamadas en su orden y deja fuera el texto")
def _(entorno):
    igual(entorno.llamadas_de([HOLA, LEER, EJECUTAR]), [LEER, EJECUTAR])


@caso("llamadas_de de una respuesta solo de texto es una lista vacía")
def _(entorno):
    igual(entorno.llamadas_de([HOLA]), [])


@caso("texto_de une los bloques de texto con un espacio y deja fuera las llamadas")
def _(entorno):
    igual(entorno.texto_de([HOLA, LEER, ADIOS]), "Hola. Hasta luego.")


@caso("texto_de de una respuesta sin texto es la cadena vacía")
def _(entorno):
    igual(entorno.texto_de([LEER]), "")


@caso("texto_de quita los espacios y saltos de línea de los extremos")
def _(entorno):
    # Los modelos suelen abrir con un salto de línea y dejar espacios al final de un bloque.
    respuesta = [{"type": "text", "text": "\n\nHola."}, LEER, {"type": "text", "text": "Hasta luego.  \n"}]
    igual(entorno.texto_de(respuesta), "Hola. Hasta luego.")


# Lo pillan dos mutantes de las pruebas de mutación (`medir mutantes 1.1`): comparar el tipo con
# <= o >= en vez de ==. Y un error corriente: tomar por llamada todo lo que no es texto.
OTROS_BLOQUES = [{"type": "thinking", "thinking": "Pienso.", "signature": "x"},
                 {"type": "redacted_thinking", "data": "x"},
                 {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
                 {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}]


@caso("la API manda también otros bloques (thinking, server_tool_use...): ni son texto ni llamadas")
def _(entorno):
    respuesta = [HOLA, *OTROS_BLOQUES, LEER]
    igual((entorno.llamadas_de(respuesta), entorno.texto_de(respuesta)), ([LEER], "Hola."),
          "(llamadas_de, texto_de) de una respuesta con bloques thinking, redacted_thinking, "
          "server_tool_use y web_search_tool_result")


# --- 1.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "1.2", leccion=1, titulo="permitido: leer no pregunta; editar y ejecutar, sí",
    nombre="permitido", modulo="permisos",
    pistas=[
        "Hay tres situaciones: la herramienta no necesita permiso (está en SIN_PERMISO); no hay "
        "usuario a quien preguntar (usuario es None); o hay que preguntarle.",
        "Si está en SIN_PERMISO, True sin preguntar. Si no hay usuario, False: sin nadie que "
        "diga que sí, nada que cambie cosas se hace.",
        "Si hay que preguntar: return usuario(nombre, entrada) is True. El «is True» hace que "
        "solo un sí explícito cuente.",
    ],
)


class Usuario:
    """Un usuario de prueba que contesta siempre lo mismo y apunta lo que le preguntan."""

    def __init__(self, respuesta):
        self.respuesta, self.preguntas = respuesta, []

    def __call__(self, nombre, entrada):
        self.preguntas.append((nombre, entrada))
        return self.respuesta


@caso("leer se permite sin preguntar, aunque el usuario diría que no")
def _(permitido):
    u = Usuario(False)
    igual(permitido("leer", {"ruta": "a.txt"}, u), True)
    igual(u.preguntas, [], "a leer no se le pregunta nada al usuario")


@caso("editar y ejecutar se deniegan si no hay usuario a quien preguntar")
def _(permitido):
    igual(permitido("editar", {"ruta": "a.txt", "antiguo": "a", "nuevo": "b"}, None), False)
    igual(permitido("ejecutar", {"comando": "ls"}, None), False)


@caso("ejecutar pregunta al usuario con el nombre y la entrada, y obedece su sí")
def _(permitido):
    u = Usuario(True)
    igual(permitido("ejecutar", {"comando": "ls"}, u), True)
    igual(u.preguntas, [("ejecutar", {"comando": "ls"})])


@caso("editar obedece un no del usuario")
def _(permitido):
    igual(permitido("editar", {"ruta": "a.txt", "antiguo": "a", "nuevo": "b"}, Usuario(False)), False)


@caso("solo un True explícito cuenta como sí: un usuario que contesta \"n\" no da permiso")
def _(permitido):
    # Un usuario que devuelve lo que se tecleó, "n", da un valor que en un if cuenta como verdadero.
    igual(permitido("ejecutar", {"comando": "ls"}, Usuario("n")), False)


# --- 1.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "1.3", leccion=1, titulo="bucle: el cuerpo del bucle del agente",
    nombre="bucle", modulo="bucle", usa=["1.1", "1.2"],
    pistas=[
        "Cada vuelta: pide al modelo con modelo(M, HERRAMIENTAS), añade su respuesta a M como "
        "(\"asistente\", respuesta) y mira qué llamadas trae con llamadas_de.",
        "Si no trae ninguna, se acabó: devuelve (\"fin\", texto_de(respuesta), M). Si trae, "
        "añade a M un único mensaje (\"usuario\", [...]) con una observación por llamada: "
        "atender(llamada, entorno, usuario).",
        "El for es de range(tope) vueltas; si se acaban sin que el modelo termine, devuelve "
        "(\"tope\", None, M). Nunca quites nada de M: solo append.",
    ],
)

INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Lee a.txt.")]


class Guion:
    """Un modelo de prueba: contesta sus respuestas en orden y guarda una copia de cada M."""

    def __init__(self, *respuestas):
        self.respuestas, self.vistas, self.herramientas = list(respuestas), [], []

    def __call__(self, M, herramientas=()):
        self.vistas.append(list(M))
        self.herramientas.append(herramientas)
        if not self.respuestas:
            raise Fallo("que el bucle parase", "otra petición al modelo")
        return self.respuestas.pop(0)


def carpeta():
    """Una copia de trabajo de prueba con un fichero a.txt."""
    d = carpeta_temporal("ejercicio-1.3-")
    (d / "a.txt").write_text("contenido de a\n", encoding="utf-8")
    return d


@caso("si el modelo contesta solo con texto, termina con «fin» y ese texto")
def _(bucle):
    m = Guion([HOLA])
    igual(bucle(m, INICIO, carpeta(), 5), ("fin", "Hola.", INICIO + [("asistente", [HOLA])]))


@caso("cada llamada recibe su observación, en un único mensaje del usuario")
def _(bucle):
    m = Guion([LEER, LEER | {"id": "t9"}], [HOLA])
    motivo, texto, M = bucle(m, INICIO, carpeta(), 5)
    igual(motivo, "fin")
    igual(f"{len(M)} mensajes en M", f"{len(INICIO) + 3} mensajes en M",
          "el inicio, la respuesta con las dos llamadas, sus observaciones y la respuesta final")
    rol, observaciones = M[len(INICIO) + 1]
    igual(rol, "usuario")
    igual([(o["tool_use_id"], o["content"]) for o in observaciones],
          [("t1", "contenido de a\n"), ("t9", "contenido de a\n")])


@caso("al llegar al tope para con «tope», sin texto, tras tope peticiones")
def _(bucle):
    m = Guion(*[[LEER]] * 3)
    motivo, texto, M = bucle(m, INICIO, carpeta(), 3)
    igual({"motivo": motivo, "texto": texto, "mensajes en M": len(M), "peticiones al modelo": len(m.vistas)},
          {"motivo": "tope", "texto": None, "mensajes en M": len(INICIO) + 6, "peticiones al modelo": 3})


@caso("M solo crece: cada petición empieza por la anterior entera")
def _(bucle):
    m = Guion([LEER], [EJECUTAR], [HOLA])
    bucle(m, INICIO, carpeta(), 5, usuario=lambda nombre, entrada: True)
    for antes, despues in pairwise(m.vistas):
        igual(despues[: len(antes)], antes, "una petición quitó o cambió mensajes de la anterior")
    igual(m.vistas[0], INICIO, "la primera petición es el inicio tal cual")


@caso("el modelo recibe la lista de herramientas en cada petición")
def _(bucle):
    m = Guion([LEER], [HOLA])
    bucle(m, INICIO, carpeta(), 5)
    nombres = [[h["name"] for h in hs] for hs in m.herramientas]
    igual(nombres, [["leer", "editar", "ejecutar"]] * 2)


@caso("una llamada a una herramienta que no existe vuelve como error, sin romper el bucle")
def _(bucle):
    rara = {"type": "tool_use", "id": "t3", "name": "borrar", "input": {}}
    motivo, _, M = bucle(Guion([rara], [HOLA]), INICIO, carpeta(), 5)
    igual(motivo, "fin")
    igual(M[len(INICIO) + 1][1][0].get("is_error"), True, "la observación de borrar lleva is_error: true")
