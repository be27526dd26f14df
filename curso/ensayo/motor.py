"""Para el servidor de ensayo y los tests: valida, cuenta y contesta una petición de la API de Messages.

Los pasos de una petición, en el orden en que se siguen: validarla, trocearla, contarla y
contestarla.

Es el servidor sin HTTP. `servidor.py` lo pone detrás de un puerto de 127.0.0.1 y el
`ModeloGuionizado` (guionizado.py) lo usa tal cual, en el mismo proceso, para los
tests. Las dos vías dan la misma respuesta a la misma petición.

Lo que hace, de arriba abajo:

- `validar` comprueba lo que la documentación de la API dice que comprueba (los campos y sus
  tipos, los roles, los tipos de bloque, que cada `tool_use` tenga su `tool_result` justo en el
  mensaje siguiente y al principio de él, las herramientas con su nombre y su esquema JSON, que
  se valida como JSON Schema draft 2020-12, `tool_choice`, `stop_sequences`, `temperature`) y, si
  algo falla, lanza `ErrorPeticion` con un mensaje en castellano que dice qué campo está mal y qué
  hacer. Cada regla tiene su caso, con la página de la que sale, en
  `curso/modelo/comparar_servidores.py`.
- `trocear_peticion` convierte la petición entera en una lista de tokens con el contador de
  `tokens.py`.
- `Ensayo` es el estado de un servidor (como una ranura de llama-server): la ventana, la caché
  de la petición anterior y la elección del guion que contesta.
- `segundos_modelados` estima cuánto habría tardado la respuesta en una máquina modesta. Es un
  modelo, no un reloj: así las salidas de los cuadernos son siempre las mismas.
"""
import collections
import hashlib
import itertools
import json
import re
import threading

from curso.ensayo import guiones
from curso.ensayo import guiones_del_incidente as _guiones_del_incidente  # noqa: F401 (los registra)
from curso.ensayo import recetario as _guiones_del_recetario  # noqa: F401 (los registra)
from curso.ensayo import guiones_todo_junto as _guiones_de_la_leccion_06  # noqa: F401 (los registra)
from curso.ensayo.tokens import PATRON, VENTANA, contar, trocear, trocear_hasta

PREFIJO_GUION = "guion:"  # el campo `model` elige el guion: "guion:eco", "guion:herramienta"...

# El modelo de tiempo. Cifras medidas en una ejecución real (un modelo pequeño en una máquina
# con la memoria justa): generar cada token costaba 0,4 s con unos 1000 tokens en la ventana y
# 1,6 s con unos 7000. La recta que pasa por esos dos puntos es el modelo de la decodificación;
# es una aproximación, no una medida de esta máquina.
SEGUNDOS_POR_TOKEN_DE_ENTRADA = 0.03  # calcular (prefill) cada token que no está en la caché
SEGUNDOS_POR_TOKEN_GENERADO = 0.2  # generar un token con la ventana vacía: 0,4 − 1000 × 0,0002
SEGUNDOS_POR_TOKEN_GENERADO_Y_DE_CONTEXTO = 0.0002  # (1,6 − 0,4) / (7000 − 1000)

GRANDE = 10 ** 15  # un entero así no es un número de tokens: no se escribe en los mensajes

TIPOS_DE_BLOQUE = {
    "user": ("text", "tool_result"),
    "assistant": ("text", "tool_use"),
}
# El nombre de una herramienta, como lo pide la API («Define tools»: ^[a-zA-Z0-9_-]{1,128}$).
NOMBRE_DE_HERRAMIENTA = re.compile(r"[a-zA-Z0-9_-]{1,128}")
TIPOS_DE_TOOL_CHOICE = ("auto", "any", "tool", "none")
# Por qué el servidor de ensayo no hace streaming (la API sí): ver `validar`.
SIN_STREAMING = (
    "el servidor de ensayo no admite `stream: true` (la API de verdad contesta con eventos "
    "server-sent: message_start, content_block_start, content_block_delta..., message_stop). El "
    "harness del curso pide cada respuesta entera, sin streaming, y una lección solo trae el código "
    "que enseña: quita `stream` o pon `stream: false` y recibirás la respuesta entera de una vez.")


class ErrorPeticion(Exception):
    """Una petición que el servidor rechaza, con el estado HTTP y el tipo de error de Anthropic."""

    def __init__(self, estado, tipo, mensaje):
        super().__init__(mensaje)
        self.estado = estado
        self.tipo = tipo
        self.mensaje = mensaje

    def cuerpo(self):
        """El cuerpo de la respuesta de error, con la forma que usa la API de Anthropic."""
        return {"type": "error", "error": {"type": self.tipo, "message": self.mensaje}}


def _invalida(mensaje):
    return ErrorPeticion(400, "invalid_request_error", mensaje)


def _nombre_de_tipo(valor):
    """El nombre JSON del tipo de `valor`, para los mensajes de error."""
    if valor is None:
        return "null"
    if isinstance(valor, bool):
        return "un booleano"
    if isinstance(valor, (int, float)):
        return "un número"
    if isinstance(valor, str):
        return "un texto"
    if isinstance(valor, list):
        return "una lista"
    if isinstance(valor, dict):
        return "un objeto"
    return type(valor).__name__


def _mostrar(valor):
    """Un entero razonable tal cual; cualquier otra cosa, por su tipo."""
    if _entero(valor) and abs(valor) < GRANDE:
        return str(valor)
    return "un entero enorme" if _entero(valor) else _nombre_de_tipo(valor)


def _texto_no_vacio(valor):
    return isinstance(valor, str) and valor != ""


def _entero(valor):
    """¿Es `valor` un entero de JSON? (En Python `True` es un int; aquí no cuenta.)"""
    return isinstance(valor, int) and not isinstance(valor, bool)


# ---------------------------------------------------------------------------------------------
# Validación
# ---------------------------------------------------------------------------------------------

def validar(peticion, exigir_max_tokens=True):
    """Comprueba la forma de `peticion` como la comprobaría la API; lanza `ErrorPeticion` (400).

    `exigir_max_tokens=False` es para `count_tokens`, que, como en la API real, no lo pide.
    Los campos que el curso no usa (`metadata`, `top_p`...) se aceptan y se ignoran.

    `stream: true` se rechaza (`SIN_STREAMING`): la API lo admite, pero el harness del curso no lo
    usa, y un servidor de ensayo que lo hiciera sería código que ninguna lección enseña. Es la
    única petición válida que el de ensayo rechaza, y la tabla de diferencias de curso/README.md lo dice.
    """
    if not isinstance(peticion, dict):
        raise _invalida(
            "el cuerpo de la petición debe ser un objeto JSON ({\"model\": ..., \"messages\": [...]}), "
            "no %s." % _nombre_de_tipo(peticion))
    if "model" not in peticion:
        raise _invalida("falta `model`: pon el nombre del guion, p. ej. \"guion:eco\".")
    if not _texto_no_vacio(peticion["model"]):
        raise _invalida("`model` debe ser un texto no vacío (p. ej. \"guion:eco\"), no %s."
                        % _nombre_de_tipo(peticion["model"]))
    if exigir_max_tokens:
        if "max_tokens" not in peticion:
            raise _invalida("falta `max_tokens`: el máximo de tokens de la respuesta, un entero "
                            "mayor o igual que 0 (p. ej. 1024).")
        max_tokens = peticion["max_tokens"]
        if not _entero(max_tokens) or max_tokens < 0:
            raise _invalida("`max_tokens` debe ser un entero mayor o igual que 0, no %s."
                            % _mostrar(max_tokens))
    stream = peticion.get("stream")
    if stream is True:
        raise _invalida(SIN_STREAMING)
    if stream is not None and stream is not False:
        raise _invalida("`stream` debe ser true o false, no %s." % _nombre_de_tipo(stream))
    if "temperature" in peticion:
        temperatura = peticion["temperature"]
        if (not isinstance(temperatura, (int, float)) or isinstance(temperatura, bool)
                or not 0 <= temperatura <= 1):
            raise _invalida("`temperature` debe ser un número entre 0 y 1, no %s."
                            % (temperatura if isinstance(temperatura, (int, float))
                               and not isinstance(temperatura, bool) and abs(temperatura) < GRANDE
                               else _nombre_de_tipo(temperatura)))
    if "stop_sequences" in peticion:
        paradas = peticion["stop_sequences"]
        if not isinstance(paradas, list) or not all(isinstance(p, str) for p in paradas):
            raise _invalida("`stop_sequences` debe ser una lista de textos, no %s."
                            % _nombre_de_tipo(paradas))
    if "system" in peticion:
        _validar_system(peticion["system"])
    if "tools" in peticion:
        _validar_tools(peticion["tools"])
    if "tool_choice" in peticion:
        _validar_tool_choice(peticion["tool_choice"])
    _validar_mensajes(peticion.get("messages"), "messages" in peticion)


def _validar_system(system):
    if isinstance(system, str):
        return
    if not isinstance(system, list):
        raise _invalida("`system` debe ser un texto o una lista de bloques de texto, no %s."
                        % _nombre_de_tipo(system))
    for i, bloque in enumerate(system):
        donde = "system.%d" % i
        if not isinstance(bloque, dict) or bloque.get("type") != "text":
            raise _invalida("%s: en `system` solo caben bloques {\"type\": \"text\", \"text\": ...}."
                            % donde)
        if not isinstance(bloque.get("text"), str):
            raise _invalida("%s.text: debe ser un texto, no %s."
                            % (donde, _nombre_de_tipo(bloque.get("text"))))


def _validar_tools(tools):
    if not isinstance(tools, list):
        raise _invalida("`tools` debe ser una lista de herramientas {\"name\", \"description\", "
                        "\"input_schema\"}, no %s." % _nombre_de_tipo(tools))
    vistos = set()
    for i, herramienta in enumerate(tools):
        donde = "tools.%d" % i
        if not isinstance(herramienta, dict):
            raise _invalida("%s: cada herramienta es un objeto {\"name\", \"description\", "
                            "\"input_schema\"}, no %s." % (donde, _nombre_de_tipo(herramienta)))
        nombre = herramienta.get("name")
        if not _texto_no_vacio(nombre):
            raise _invalida("%s.name: cada herramienta necesita un nombre (texto no vacío)." % donde)
        if nombre in vistos:
            raise _invalida("%s.name: la herramienta «%s» está repetida; los nombres deben ser "
                            "únicos." % (donde, nombre))
        vistos.add(nombre)
        if "description" in herramienta and not isinstance(herramienta["description"], str):
            raise _invalida("%s.description: debe ser un texto, no %s."
                            % (donde, _nombre_de_tipo(herramienta["description"])))
        if not NOMBRE_DE_HERRAMIENTA.fullmatch(nombre):
            raise _invalida("%s.name: «%s» no vale como nombre de herramienta: solo letras sin "
                            "tilde, cifras, _ y -, de 1 a 128 (^[a-zA-Z0-9_-]{1,128}$)."
                            % (donde, nombre[:200]))
        if not isinstance(herramienta.get("input_schema"), dict):
            raise _invalida("%s.input_schema: cada herramienta necesita un esquema JSON de su "
                            "entrada (un objeto, p. ej. {\"type\": \"object\", \"properties\": "
                            "{...}})." % donde)
        _validar_esquema(herramienta["input_schema"], donde + ".input_schema")


def _validar_esquema(esquema, donde):
    """El esquema de la entrada de una herramienta: un JSON Schema válido según el draft 2020-12
    (el que nombra la API) y de tipo "object" (la entrada de una llamada es siempre un objeto).

    Lo valida el paquete `jsonschema`, con el metaesquema del draft 2020-12: un "type" que no es
    uno de los de JSON Schema, un "required" que no es una lista de textos, un "properties" que
    no es un objeto... Se importa aquí, solo si hay herramientas: importarlo cuesta."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError
    try:
        Draft202012Validator.check_schema(esquema)
    except SchemaError as e:
        ruta = "".join(".%s" % parte for parte in e.absolute_path)
        raise _invalida("%s%s: el esquema JSON no es válido según JSON Schema draft 2020-12 "
                        "(https://json-schema.org/draft/2020-12), que es el que pide la API: %s."
                        % (donde, ruta, _motivo_del_esquema(e))) from None
    except RecursionError:
        raise _demasiado_anidada() from None
    if esquema.get("type") != "object":
        raise _invalida("%s.type: la entrada de una herramienta es siempre un objeto: su esquema "
                        "necesita \"type\": \"object\", no %s."
                        % (donde, json.dumps(esquema.get("type"), ensure_ascii=False)[:200]
                           if "type" in esquema else "ninguno"))


def _motivo_del_esquema(error):
    """El motivo de un SchemaError de `jsonschema` (en inglés), dicho en castellano."""
    valor = json.dumps(error.instance, ensure_ascii=False)[:200]
    que = {"anyOf": "no es ninguno de los valores que admite", "enum": "no es uno de los valores "
           "que admite", "type": "no es del tipo que toca", "minItems": "no puede ir vacío",
           "uniqueItems": "tiene elementos repetidos", "format": "no tiene el formato que toca"}
    return "%s %s" % (valor, que.get(error.validator, "no cumple la regla «%s»" % error.validator))


def _validar_tool_choice(eleccion):
    tipos = ", ".join('"%s"' % t for t in TIPOS_DE_TOOL_CHOICE)
    if not isinstance(eleccion, dict) or eleccion.get("type") not in TIPOS_DE_TOOL_CHOICE:
        raise _invalida("`tool_choice` debe ser un objeto {\"type\": ...} con type %s; no %s."
                        % (tipos, json.dumps(eleccion.get("type"), ensure_ascii=False)[:200]
                           if isinstance(eleccion, dict) else _nombre_de_tipo(eleccion)))
    if eleccion["type"] == "tool" and not _texto_no_vacio(eleccion.get("name")):
        raise _invalida("tool_choice.name: con {\"type\": \"tool\"} hay que decir qué herramienta, "
                        "en `name`.")


def _validar_mensajes(mensajes, presente):
    if not presente:
        raise _invalida("falta `messages`: la lista de mensajes de la conversación, empezando "
                        "por uno del usuario.")
    if not isinstance(mensajes, list) or not mensajes:
        raise _invalida("`messages` debe ser una lista no vacía de mensajes {\"role\", "
                        "\"content\"}, no %s."
                        % ("una lista vacía" if mensajes == [] else _nombre_de_tipo(mensajes)))
    for i, mensaje in enumerate(mensajes):
        _validar_mensaje(mensaje, i)
    if mensajes[0]["role"] != "user":
        raise _invalida("messages.0: el primer mensaje debe ser del usuario (`\"role\": "
                        "\"user\"`), no del asistente.")
    _validar_parejas(mensajes)


def _validar_mensaje(mensaje, i):
    donde = "messages.%d" % i
    if not isinstance(mensaje, dict):
        raise _invalida("%s: cada mensaje es un objeto {\"role\", \"content\"}, no %s."
                        % (donde, _nombre_de_tipo(mensaje)))
    rol = mensaje.get("role")
    if not isinstance(rol, str) or rol not in TIPOS_DE_BLOQUE:
        raise _invalida("%s.role: debe ser \"user\" o \"assistant\", no %s."
                        % (donde, json.dumps(rol) if isinstance(rol, str) else _nombre_de_tipo(rol)))
    if "content" not in mensaje:
        raise _invalida("%s: falta `content` (un texto o una lista de bloques)." % donde)
    contenido = mensaje["content"]
    if isinstance(contenido, str):
        return
    if not isinstance(contenido, list):
        raise _invalida("%s.content: debe ser un texto o una lista de bloques, no %s."
                        % (donde, _nombre_de_tipo(contenido)))
    for j, bloque in enumerate(contenido):
        _validar_bloque(bloque, rol, "%s.content.%d" % (donde, j))


def _validar_bloque(bloque, rol, donde):
    if not isinstance(bloque, dict):
        raise _invalida("%s: cada bloque es un objeto con `type`, no %s."
                        % (donde, _nombre_de_tipo(bloque)))
    tipo = bloque.get("type")
    if tipo not in ("text", "tool_use", "tool_result"):
        raise _invalida("%s.type: el servidor de ensayo solo entiende bloques \"text\", "
                        "\"tool_use\" y \"tool_result\", no %s."
                        % (donde, json.dumps(tipo) if isinstance(tipo, str) else _nombre_de_tipo(tipo)))
    if tipo not in TIPOS_DE_BLOQUE[rol]:
        dueno = "asistente (\"assistant\")" if tipo == "tool_use" else "usuario (\"user\")"
        raise _invalida("%s: un bloque `%s` solo puede ir en un mensaje del %s."
                        % (donde, tipo, dueno))
    if tipo == "text":
        if not isinstance(bloque.get("text"), str):
            raise _invalida("%s.text: un bloque `text` necesita `text`, un texto; hay %s."
                            % (donde, _nombre_de_tipo(bloque.get("text"))))
    elif tipo == "tool_use":
        for campo in ("id", "name"):
            if not _texto_no_vacio(bloque.get(campo)):
                raise _invalida("%s.%s: un bloque `tool_use` necesita `%s`, un texto no vacío."
                                % (donde, campo, campo))
        if not isinstance(bloque.get("input"), dict):
            raise _invalida("%s.input: la entrada de un `tool_use` debe ser un objeto JSON, no %s."
                            % (donde, _nombre_de_tipo(bloque.get("input"))))
    else:
        if not _texto_no_vacio(bloque.get("tool_use_id")):
            raise _invalida("%s.tool_use_id: un bloque `tool_result` necesita el `id` del "
                            "`tool_use` al que contesta." % donde)
        contenido = bloque.get("content", "")
        if not isinstance(contenido, (str, list)):
            raise _invalida("%s.content: el contenido de un `tool_result` debe ser un texto o una "
                            "lista de bloques de texto, no %s." % (donde, _nombre_de_tipo(contenido)))
        if isinstance(contenido, list):
            for k, parte in enumerate(contenido):
                if (not isinstance(parte, dict) or parte.get("type") != "text"
                        or not isinstance(parte.get("text"), str)):
                    raise _invalida("%s.content.%d: dentro de un `tool_result` solo caben bloques "
                                    "{\"type\": \"text\", \"text\": ...}." % (donde, k))
        if "is_error" in bloque and not isinstance(bloque["is_error"], bool):
            raise _invalida("%s.is_error: debe ser true o false, no %s."
                            % (donde, _nombre_de_tipo(bloque["is_error"])))


def _bloques(contenido):
    """Los bloques de un `content` ya validado (un texto suelto es un solo bloque de texto)."""
    return [{"type": "text", "text": contenido}] if isinstance(contenido, str) else contenido


def _validar_parejas(mensajes):
    """Cada `tool_use` tiene su `tool_result` en el mensaje siguiente, y al revés (como la API)."""
    vistos = set()
    for i, mensaje in enumerate(mensajes):
        if mensaje["role"] == "assistant":
            ids = [b["id"] for b in _bloques(mensaje["content"]) if b["type"] == "tool_use"]
            for x in ids:
                if x in vistos:
                    raise _invalida("messages.%d: el id de `tool_use` %s está repetido. Cada "
                                    "`tool_use` necesita un id único en toda la conversación."
                                    % (i, x))
                vistos.add(x)
            siguiente = mensajes[i + 1] if i + 1 < len(mensajes) else None
            respondidos = set()
            if siguiente is not None and siguiente["role"] == "user":
                respondidos = {b["tool_use_id"] for b in _bloques(siguiente["content"])
                               if b["type"] == "tool_result"}
            sin_respuesta = [x for x in ids if x not in respondidos]
            if sin_respuesta:
                raise _invalida("messages.%d: hay bloques `tool_use` sin su `tool_result` justo "
                                "después: %s. Cada `tool_use` necesita un `tool_result` en el "
                                "mensaje siguiente." % (i, ", ".join(sin_respuesta)))
        else:
            anterior = mensajes[i - 1] if i > 0 else None
            pedidos = set()
            if anterior is not None and anterior["role"] == "assistant":
                pedidos = {b["id"] for b in _bloques(anterior["content"]) if b["type"] == "tool_use"}
            bloques = _bloques(mensaje["content"])
            for j, bloque in enumerate(bloques):
                if bloque["type"] == "tool_result" and any(b["type"] != "tool_result" for b in bloques[:j]):
                    raise _invalida("messages.%d.content.%d: en un mensaje con resultados, los bloques "
                                    "`tool_result` van primero y el texto después de todos ellos."
                                    % (i, j))
                if bloque["type"] == "tool_result" and bloque["tool_use_id"] not in pedidos:
                    raise _invalida("messages.%d.content.%d: hay un bloque `tool_result` con un "
                                    "`tool_use_id` inesperado: %s. Cada `tool_result` necesita su "
                                    "`tool_use` en el mensaje anterior."
                                    % (i, j, bloque["tool_use_id"]))


# ---------------------------------------------------------------------------------------------
# La cuenta de tokens
# ---------------------------------------------------------------------------------------------

def _json_canonico(valor):
    """JSON con las claves ordenadas y sin escapar las letras: el mismo objeto, el mismo texto."""
    return json.dumps(valor, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))


def _texto_de_resultado(contenido):
    if isinstance(contenido, str):
        return contenido
    return "\n".join(parte["text"] for parte in contenido)


def _serializar_bloque(bloque, trozos):
    tipo = bloque["type"]
    if tipo == "text":
        trozos.append(bloque["text"])
    elif tipo == "tool_use":
        trozos.append(bloque["name"] + " " + _json_canonico(bloque["input"]))
    else:
        trozos.append(_texto_de_resultado(bloque.get("content", "")))
    trozos.append("\n")


def serializar_peticion(peticion):
    """El texto que el servidor de ensayo cuenta para `peticion` (ya validada).

    En orden, y cada parte acabada en un salto de línea:

    1. si hay `system`: la marca `<sistema>` y su texto (los bloques, unidos por saltos de línea);
    2. si hay `tools`: la marca `<herramientas>` y la lista entera en JSON canónico (claves
       ordenadas), así que nombres, descripciones y esquemas cuentan;
    3. cada mensaje: la marca de su rol, `<user>` o `<assistant>`, y después cada bloque:
       - `text`: su texto;
       - `tool_use`: el nombre de la herramienta, un espacio y su `input` en JSON canónico
         (el `id` no cuenta, como no lo ve el modelo en muchas plantillas);
       - `tool_result`: su contenido (los textos, unidos por saltos de línea).

    Un mensaje se escribe igual tenga lo que tenga detrás: por eso una petición que repite la
    anterior y le añade turnos empieza por los mismos tokens, y eso es lo que aprovecha la caché.
    """
    trozos = []
    system = peticion.get("system")
    if system:
        trozos.append("<sistema>\n")
        trozos.append(system if isinstance(system, str) else "\n".join(b["text"] for b in system))
        trozos.append("\n")
    if peticion.get("tools"):
        trozos.append("<herramientas>\n")
        trozos.append(_json_canonico(peticion["tools"]))
        trozos.append("\n")
    for mensaje in peticion["messages"]:
        trozos.append("<%s>\n" % mensaje["role"])
        for bloque in _bloques(mensaje["content"]):
            _serializar_bloque(bloque, trozos)
    return "".join(trozos)


def trocear_peticion(peticion):
    """Los tokens de `peticion` (ya validada): `tokens.trocear` de `serializar_peticion`.

    Se escribe el texto entero una vez y se trocea una vez: el coste es lineal en el tamaño de
    la petición.
    """
    return trocear(serializar_peticion(peticion))


def serializar_contenido(contenido):
    """El texto que cuenta como salida: los bloques de la respuesta, como en un mensaje."""
    trozos = []
    for bloque in contenido:
        _serializar_bloque(bloque, trozos)
    return "".join(trozos)


def _prefijo_comun(a, b):
    """Cuántos tokens iguales tienen `a` y `b` al principio."""
    n = 0
    for x, y in zip(a, b, strict=False):  # hasta el final de la más corta
        if x != y:
            break
        n += 1
    return n


def segundos_modelados(no_cacheados, contexto, salida):
    """Cuánto habría tardado la respuesta, según un modelo lineal (no un reloj).

    - Calcular la entrada: `SEGUNDOS_POR_TOKEN_DE_ENTRADA` por cada token que no estaba en la
      caché (`no_cacheados`, el `input_tokens` de `usage`).
    - Generar la salida: cada token cuesta `SEGUNDOS_POR_TOKEN_GENERADO` más
      `SEGUNDOS_POR_TOKEN_GENERADO_Y_DE_CONTEXTO` por cada token que ya hay en la ventana, que
      empieza en `contexto` (la entrada entera) y crece en uno con cada token generado.

    Con unos 1000 tokens en la ventana da 0,4 s por token generado y con unos 7000, 1,6 s: las
    cifras medidas en una ejecución real. El resultado se redondea a centésimas.
    """
    base = SEGUNDOS_POR_TOKEN_GENERADO
    pendiente = SEGUNDOS_POR_TOKEN_GENERADO_Y_DE_CONTEXTO
    calcular = SEGUNDOS_POR_TOKEN_DE_ENTRADA * no_cacheados
    generar = salida * (base + pendiente * contexto) + pendiente * salida * (salida - 1) / 2
    return round(calcular + generar, 2)


# ---------------------------------------------------------------------------------------------
# El motor con estado
# ---------------------------------------------------------------------------------------------

def _huella(peticion):
    """Un resumen corto y estable de la petición, para ids deterministas."""
    texto = json.dumps(peticion, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(texto.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _no_encontrado(modelo):
    disponibles = ", ".join(PREFIJO_GUION + nombre for nombre in sorted(guiones.GUIONES))
    return ErrorPeticion(404, "not_found_error",
                         "el modelo %s no existe en el servidor de ensayo. Pon en `model` uno de "
                         "sus guiones: %s." % (json.dumps(modelo, ensure_ascii=False), disponibles))


def _guion(peticion):
    modelo = peticion["model"]
    if not modelo.startswith(PREFIJO_GUION) or modelo[len(PREFIJO_GUION):] not in guiones.GUIONES:
        raise _no_encontrado(modelo)
    return modelo[len(PREFIJO_GUION):], guiones.GUIONES[modelo[len(PREFIJO_GUION):]]


def _error_de_guion(nombre, que):
    return ErrorPeticion(500, "api_error",
                         "el guion «%s» ha fallado (un error del curso, no de tu petición): %s."
                         % (nombre, que))


def _validar_salida(nombre, contenido):
    """Una copia de la salida de un guion, que debe ser una lista de bloques `text` y `tool_use`."""
    if not isinstance(contenido, list):
        raise _error_de_guion(nombre, "ha devuelto %s en vez de una lista de bloques"
                              % _nombre_de_tipo(contenido))
    for bloque in contenido:
        try:
            _validar_bloque(bloque, "assistant", "content")
        except ErrorPeticion as e:
            raise _error_de_guion(nombre, e.mensaje) from None
    try:  # una copia: quien reciba la respuesta puede cambiarla sin tocar el guion
        return json.loads(json.dumps(contenido))
    except (TypeError, ValueError) as e:
        raise _error_de_guion(nombre, "su salida no es JSON: %s" % e) from None


def _coste(bloque):
    """Los tokens de salida de un bloque. Cada bloque acaba en un salto de línea, que es un token
    aparte, así que los de una respuesta son la suma de los de sus bloques."""
    return len(trocear(serializar_contenido([bloque])))


def _recortar(contenido, costes, max_tokens):
    """Los bloques que caben en `max_tokens` tokens; un texto que no cabe entero se corta.

    Un `tool_use` que no cabe entero llega a medias, como en la API («Handling stop reasons»: con
    `max_tokens`, la respuesta puede traer un bloque `tool_use` incompleto): con los argumentos
    que el modelo llegó a escribir enteros, en su orden, y sin los demás. Si ni la llamada vacía
    cabe, no llega. Quien lo lee debe mirar `stop_reason`: esa entrada no es la que el modelo
    quería.
    """
    quedan = max_tokens
    recortado = []
    for bloque, coste in zip(contenido, costes, strict=True):
        if coste <= quedan:
            recortado.append(bloque)
            quedan -= coste
            continue
        if bloque["type"] == "text" and quedan >= 2:  # al menos un token y el salto de línea
            trozos = itertools.islice(PATRON.finditer(bloque["text"]), quedan - 1)
            corte = collections.deque(trozos, maxlen=1)[0].end()  # el final del último que cabe
            recortado.append({"type": "text", "text": bloque["text"][:corte]})
        elif bloque["type"] == "tool_use":
            a_medias = None
            for n in range(len(bloque["input"]) + 1):
                intento = {**bloque, "input": dict(itertools.islice(bloque["input"].items(), n))}
                if _coste(intento) > quedan:
                    break
                a_medias = intento
            if a_medias is not None:
                recortado.append(a_medias)
        break
    return recortado


def _parar_en_secuencia(contenido, paradas):
    """(contenido, secuencia): el contenido hasta la primera de `paradas` que aparece en un texto
    (sin ella, como en la API) y esa secuencia; o (contenido, None) si no aparece ninguna."""
    paradas = [p for p in paradas if p]
    for i, bloque in enumerate(contenido):
        if bloque["type"] != "text":
            continue
        vistas = [(bloque["text"].find(p), p) for p in paradas if p in bloque["text"]]
        if vistas:
            donde, parada = min(vistas)
            cortado = contenido[:i] + ([{"type": "text", "text": bloque["text"][:donde]}] if donde else [])
            return cortado, parada
    return contenido, None


class Ensayo:
    """Un servidor de ensayo sin HTTP: una ventana, una caché y los guiones que contestan.

    Como una ranura de un servidor local, recuerda los tokens de la última petición que
    contestó: la siguiente no vuelve a calcular el prefijo que comparte con ella
    (`cache_read_input_tokens`). Es seguro usarlo desde varios hilos.
    """

    def __init__(self, ventana=VENTANA):
        if not _entero(ventana) or ventana < 1:
            raise ValueError("la ventana debe ser un entero mayor o igual que 1, no %r" % (ventana,))
        self.ventana = ventana
        self._cerrojo = threading.Lock()
        self._anteriores = []  # los tokens de la última petición contestada

    def contar(self, peticion):
        """Los tokens de entrada de `peticion` (para `count_tokens`). No toca la caché."""
        try:
            validar(peticion, exigir_max_tokens=False)
            _guion(peticion)
            return contar(serializar_peticion(peticion))
        except RecursionError:
            raise _demasiado_anidada() from None

    def responder(self, peticion):
        """La respuesta de la API de Messages a `peticion`, como un dict. Ver `responder_con_tiempo`."""
        return self.responder_con_tiempo(peticion)[0]

    def responder_con_tiempo(self, peticion):
        """(respuesta, segundos modelados) para `peticion`; lanza `ErrorPeticion` si la rechaza.

        La respuesta la escribe el guion que nombra `model` y depende solo de la petición: la
        misma petición da la misma respuesta, también el mismo `id`, después de reintentar o de
        reiniciar el servidor. Solo `usage` depende de la petición anterior (la caché).

        De los tokens se guardan como mucho los que caben en la ventana: una petición que no
        cabe se cuenta entera, pero sin hacer la lista de todos sus tokens, que puede ser enorme.
        """
        try:
            validar(peticion)
            nombre, guion = _guion(peticion)
            texto = serializar_peticion(peticion)
            huella = _huella(peticion)
        except RecursionError:
            raise _demasiado_anidada() from None
        tokens, entrada = trocear_hasta(texto, self.ventana)
        max_tokens = peticion["max_tokens"]
        if max_tokens >= GRANDE:
            raise _invalida("`max_tokens` es enorme: la ventana entera es de %d tokens y la "
                            "entrada ya ocupa %d." % (self.ventana, entrada))
        if entrada + max_tokens > self.ventana:
            raise _invalida(
                "la petición no cabe en la ventana: %d tokens de entrada + %d de max_tokens = %d > "
                "%d. Quita contexto de `messages` (compacta) o baja `max_tokens`."
                % (entrada, max_tokens, entrada + max_tokens, self.ventana))
        with self._cerrojo:
            try:
                contenido = guion(peticion)
            except Exception as e:  # un guion roto es un fallo del curso: 500, sin traza
                raise _error_de_guion(nombre, "%s: %s" % (type(e).__name__, e)) from None
            contenido = _validar_salida(nombre, contenido)
            contenido, parada = _parar_en_secuencia(contenido, peticion.get("stop_sequences") or [])
            costes = [_coste(b) for b in contenido]
            salida = sum(costes)
            stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in contenido) else "end_turn"
            if parada is not None:
                stop_reason = "stop_sequence"
            if salida > max_tokens:
                parada = None  # max_tokens llegó antes que la secuencia
                contenido = _recortar(contenido, costes, max_tokens)
                salida = len(trocear(serializar_contenido(contenido)))
                stop_reason = "max_tokens"
            en_cache = _prefijo_comun(self._anteriores, tokens)
            self._anteriores = tokens
        respuesta = {
            "id": "msg_ensayo_" + huella,
            "type": "message",
            "role": "assistant",
            "model": peticion["model"],
            "content": contenido,
            "stop_reason": stop_reason,
            "stop_sequence": parada,
            "usage": {
                "input_tokens": entrada - en_cache,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": en_cache,
                "output_tokens": salida,
            },
        }
        return respuesta, segundos_modelados(entrada - en_cache, entrada, salida)


def _demasiado_anidada():
    return _invalida("la petición está demasiado anidada para leerla: simplifica el JSON.")
