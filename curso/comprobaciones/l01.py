"""Para los ejercicios de la lección 01: los bloques de una respuesta, el permiso de cada herramienta y el bucle."""

from itertools import pairwise

from hypothesis import strategies as st

from curso.comprobaciones.diferencial import carpeta_fija
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


# El diferencial: respuestas de 0 a 5 bloques de todas las clases (texto con blancos en los
# extremos o vacío, llamadas, también con claves de más, y los bloques que no son ni una cosa ni otra).
TEXTOS = st.sampled_from(["Hola.", "", "  ", "\nVale.", "Hecho.  \n", "a  b"])
BLOQUES = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXTOS),
    st.builds(lambda n, nombre: {"type": "tool_use", "id": f"t{n}", "name": nombre, "input": {"ruta": "a.txt"}},
              st.integers(1, 3), st.sampled_from(["leer", "ejecutar", "borrar"])),
    st.just({"type": "tool_use", "id": "t9", "name": "leer", "input": {}, "cache_control": {"type": "ephemeral"}}),
    st.sampled_from(OTROS_BLOQUES))


@caso.diferencial(entradas=st.lists(BLOQUES, max_size=5), ejemplos=150,
                  contar=lambda respuesta: f"respuesta = {respuesta!r}",
                  pistas={"llamadas_de": "los bloques cuyo \"type\" es \"tool_use\", todos y en su orden",
                          "texto_de": "los \"text\" de los bloques de tipo \"text\", unidos por un espacio, y sin "
                                      "blancos en los extremos del resultado"})
def _(entorno, respuesta):
    return {"llamadas_de": entorno.llamadas_de(respuesta), "texto_de": entorno.texto_de(respuesta)}


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


# El diferencial: las tres herramientas del curso, sin usuario o con uno que contesta de todo
# (True, False, y lo que no es un True explícito: "n", "s", 1, None...).
RESPUESTAS_DEL_USUARIO = [True, False, "n", "s", 1, 0, None, "True"]


@caso.diferencial(entradas=st.tuples(st.sampled_from(["leer", "editar", "ejecutar"]),
                                     st.sampled_from([{"ruta": "a.txt"}, {"comando": "ls"}, {}]),
                                     st.sampled_from([None, *[Usuario(r) for r in RESPUESTAS_DEL_USUARIO]])),
                  ejemplos=120,
                  contar=lambda e: f"permitido({e[0]!r}, {e[1]!r}, "
                                   + ("None" if e[2] is None else f"un usuario que contesta {e[2].respuesta!r}") + ")",
                  pistas={"lo que devuelve": "True sin preguntar para SIN_PERMISO; False sin usuario; si no, solo un "
                                             "True explícito del usuario (is True)",
                          "lo que se le pregunta al usuario": "se le pregunta una vez, con el nombre y la entrada, y "
                                                              "solo si la herramienta no está en SIN_PERMISO"})
def _(permitido, entrada):
    nombre, argumentos, usuario = entrada
    devuelve = permitido(nombre, argumentos, usuario)
    return {"lo que devuelve": devuelve, "lo que se le pregunta al usuario": usuario and usuario.preguntas}


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


# El diferencial: guiones de 0 a 4 respuestas (solo texto, una llamada o varias a la vez, a
# herramientas que existen y que no, con argumentos de menos o de más, a un fichero que no está),
# con el tope por debajo, en y por encima de lo que dura el guion, y un usuario que dice que sí, que
# no, o ninguno. Cuando el guion se acaba, el modelo contesta «Fin.».
LLAMADAS = st.sampled_from([
    {"name": "leer", "input": {"ruta": "a.txt"}}, {"name": "leer", "input": {"ruta": "no_esta.txt"}},
    {"name": "leer", "input": {}}, {"name": "editar", "input": {"ruta": "a.txt", "antiguo": "a", "nuevo": "b"}},
    {"name": "ejecutar", "input": {"comando": "echo hola"}}, {"name": "borrar", "input": {}},
    {"name": "leer", "input": {"ruta": "a.txt", "sobra": 1}}])
RESPUESTA = st.one_of(
    st.builds(lambda t: [{"type": "text", "text": t}], st.sampled_from(["Hecho.", "", " Listo. "])),
    st.builds(lambda texto, llamadas: texto + [dict(ll, type="tool_use", id=f"t{k}") for k, ll in enumerate(llamadas)],
              st.sampled_from([[], [{"type": "text", "text": "Miro."}]]), st.lists(LLAMADAS, min_size=1, max_size=3)))


class GuionDelDiferencial:
    """Contesta sus respuestas en orden (ids de llamada únicos en todo el guion) y, cuando se acaban,
    «Fin.»; apunta cada M y las herramientas que recibe."""

    def __init__(self, respuestas):
        self.respuestas = [[dict(b, id=f"{b['id']}_{n}") if b["type"] == "tool_use" else b for b in r]
                           for n, r in enumerate(respuestas)]
        self.vistas, self.herramientas = [], []

    def __call__(self, M, herramientas=()):
        self.vistas.append(list(M))
        self.herramientas.append([h.get("name") for h in herramientas])
        return self.respuestas.pop(0) if self.respuestas else [{"type": "text", "text": "Fin."}]


def _errores_sin_texto(valor):
    """`valor` con el texto de cada observación de error cambiado por «(un error)»."""
    if isinstance(valor, dict):
        if valor.get("type") == "tool_result" and valor.get("is_error"):
            return dict(valor, content="(un error)")
        return {k: _errores_sin_texto(v) for k, v in valor.items()}
    if isinstance(valor, (list, tuple)):
        return type(valor)(_errores_sin_texto(v) for v in valor)
    return valor


def contar_bucle(entrada):
    respuestas, tope, usuario = entrada
    guion = "; ".join("[" + ", ".join(b.get("text", "") if b["type"] == "text" else f"{b['name']}({b['input']})"
                                      for b in r) + "]" for r in respuestas)
    return f"un modelo que contesta {guion or 'solo «Fin.»'}, tope = {tope}, usuario = {usuario}"


@caso.diferencial(entradas=st.tuples(st.lists(RESPUESTA, max_size=4), st.sampled_from([0, 1, 2, 3, 4, 5]),
                                     st.sampled_from(["ninguno", "sí a todo", "no a todo"])),
                  ejemplos=40, contar=contar_bucle,
                  pistas={"lo que devuelve": "(\"fin\", texto_de(respuesta), M) si la respuesta no trae llamadas; "
                                             "(\"tope\", None, M) tras `tope` turnos",
                          "las M que ve el modelo": "cada petición lleva M entera; M solo crece",
                          "las herramientas de cada petición": "modelo(M, HERRAMIENTAS) en cada petición"})
def _(bucle, entrada):
    respuestas, tope, usuario = entrada
    copia = carpeta_fija("copia-1.3")
    (copia / "a.txt").write_text("contenido de a\n", encoding="utf-8")
    modelo = GuionDelDiferencial(respuestas)
    quien = {"ninguno": None, "sí a todo": lambda n, e: True, "no a todo": lambda n, e: False}[usuario]
    devuelve = bucle(modelo, list(INICIO), copia, tope, usuario=quien)
    # Lo que dicen los errores y qué herramientas hay no lo escribe el 1.3: es de entorno.py y
    # permisos.py, que crecen en lecciones posteriores (la 05 añade buscar). De un error, solo que
    # lo es; de las herramientas, que cada petición lleva las de HERRAMIENTAS de su entorno.
    del_entorno = [h.get("name") for h in bucle.__globals__.get("HERRAMIENTAS", ())]
    return {"lo que devuelve": _errores_sin_texto(devuelve), "las M que ve el modelo": _errores_sin_texto(modelo.vistas),
            "las herramientas de cada petición": [vistas == del_entorno for vistas in modelo.herramientas],
            "a.txt al acabar": (copia / "a.txt").read_text(encoding="utf-8")}
