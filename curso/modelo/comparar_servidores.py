"""Para quien mantiene el curso y para CI: las mismas peticiones al servidor de ensayo y a llama-server, y la tabla de sus diferencias.

Una prueba, con sus partes: las peticiones, lo que se mira de cada respuesta, la tabla de
diferencias escritas y la comparación, para que el servidor de ensayo no enseñe, sin saberlo, algo
que un servidor de verdad no hace.

- `CASOS`: cada caso es una petición (o dos seguidas, para la caché) que se manda igual a los dos
  servidores: texto, una ida y vuelta de herramienta, una ventana desbordada, `max_tokens` mayor que
  la ventana, un `tool_result` huérfano, un `tool_use` sin respuesta, `count_tokens`, el `usage` con
  un prefijo repetido, las herramientas en la cuenta y `tool_choice`.
- `rasgos(respuesta)`: lo que se compara de cada respuesta. Nunca el texto del modelo (uno de verdad
  contesta otra cosa) ni las cifras exactas de tokens (cada servidor cuenta con su tokenizador), sino
  la forma: el estado HTTP, la forma y el tipo del error, los tipos de bloque, `stop_reason`, las
  claves de `usage`, si la caché se usó.
- `DIFERENCIAS`: cada rasgo en que difieren, con lo que da cada uno y la decisión, con su porqué. La
  referencia de lo que enseña el curso es la API de Messages de verdad (la de Anthropic): si el
  servidor de ensayo se aparta de ella, se arregla; si es llama-server quien se aparta (es más
  permisivo), se escribe aquí y la lección lo nombra.
- `comparar(ensayo, real)`: las diferencias nuevas (sin escribir), las que han cambiado y las
  escritas que ya no se ven. Cualquiera de las tres es un fallo: la tabla dice siempre la verdad.

`tests/datos/rasgos_de_llama_server.json` guarda los rasgos de llama-server de la última
comparación de verdad (CI la repite y falla si no cuadran), así que `tests/equipo/test_modelo.py`
puede comparar sin llama-server el servidor de ensayo de hoy con el de verdad grabado: un cambio del
servidor de ensayo que abra una diferencia nueva falla también sin red ni modelo.
"""
import json
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass

from curso import rutas

GRABACION = rutas.RAIZ / "tests" / "datos" / "rasgos_de_llama_server.json"
ESPERA_S = 900  # por petición: un modelo pequeño en una CPU ocupada puede tardar minutos
MAX_TOKENS = 8  # pocos: la respuesta se corta y `stop_reason` es el mismo en los dos

LEER = {"name": "leer", "description": "Lee un fichero de texto del proyecto.",
        "input_schema": {"type": "object", "properties": {"ruta": {"type": "string"}}, "required": ["ruta"]}}
SISTEMA = "Eres un asistente que arregla proyectos de Python. Contesta en castellano."
LARGO = ("Este párrafo largo se repite para llenar la ventana del servidor y ver qué dice cuando no "
         "cabe lo que le mandan. ")


def _peticion(modelo, mensajes, **mas):
    return {"model": modelo, "max_tokens": MAX_TOKENS, "temperature": 0, "system": SISTEMA,
            "messages": mensajes, **mas}


def _usuario(texto):
    return {"role": "user", "content": texto}


def _asistente(*bloques):
    return {"role": "assistant", "content": list(bloques)}


LLAMADA = {"type": "tool_use", "id": "toolu_01", "name": "leer", "input": {"ruta": "recetas.txt"}}
RESULTADO = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "pan: harina, agua, sal"}
PEDIDO = "Repite estas palabras tal cual: uno dos tres cuatro cinco seis siete ocho nueve diez once doce."
# Para que llama-server pare pronto donde un modelo pequeño podría escribir hasta llenar la ventana.
PARAR_PRONTO = [" ", "\n", "."]

# Las páginas de las que sale cada regla (la documentación de la API de Messages de Anthropic).
CREAR = "https://platform.claude.com/docs/en/api/messages (Create a Message: parámetros y su tipo)"
ERRORES = "https://platform.claude.com/docs/en/api/errors (HTTP errors; Request size limits)"
HERRAMIENTAS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools"
LLAMADAS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls"
ESQUEMA = ("anthropic-sdk-python, src/anthropic/types/tool_param.py (input_schema: «JSON schema» del draft "
           "2020-12, con type \"object\" obligatorio; la API lo rechaza con «JSON schema is invalid. It must "
           "match JSON Schema draft 2020-12», acomagu/vscode-as-mcp-server#6)")
STREAMING = "https://platform.claude.com/docs/en/build-with-claude/streaming (message_start … message_stop)"
PARADAS = "https://platform.claude.com/docs/en/build-with-claude/handling-stop-reasons"
CONTAR = "https://platform.claude.com/docs/en/build-with-claude/token-counting"
CACHE = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"


@dataclass(frozen=True)
class Crudo:
    """Un cuerpo que no es JSON, o que no conviene tener en memoria: sus bytes salen de `hacer()`."""
    que: str
    hacer: object  # () -> bytes


TAMANO_MAXIMO_DE_LA_API = 32 * 1024 * 1024  # bytes de una petición a Messages («Request size limits»)


def _mas_de_32_mb():
    """Una petición JSON bien formada de 32 MiB y un poco más: la API la rechaza con 413 por el
    tamaño, antes de mirar qué dice."""
    relleno = "x" * (TAMANO_MAXIMO_DE_LA_API + 1024)
    return json.dumps(_peticion("guion:eco", [_usuario(relleno)])).encode()


@dataclass(frozen=True)
class Caso:
    """Una petición (o varias seguidas, y se mira la última) que se manda igual a los dos servidores.

    `fuente`: la página de la documentación de la que sale la regla. `api`: los rasgos que esa
    documentación dice que daría la API de verdad (el estado, y a veces `stop_reason`); el de
    ensayo tiene que dar esos mismos, salvo `ensayo_se_aparta`, que dice por qué no."""
    nombre: str
    ruta: str
    peticiones: list
    fuente: str
    api: dict
    ensayo_se_aparta: str = ""


def _caso(nombre, cambios=(), quitar=(), mensajes=None, estado=400, fuente=CREAR, **mas):
    """Un caso de una sola petición a /v1/messages: la de texto, con `cambios` y sin `quitar`."""
    peticion = {**_peticion("guion:eco", mensajes or [_usuario(PEDIDO)]), **dict(cambios)}
    for campo in quitar:
        peticion.pop(campo)
    return Caso(nombre, "/v1/messages", [peticion], fuente, {"estado": estado}, **mas)


def _con_la_herramienta(**herramienta):
    return {"tools": [herramienta]}


CASOS = [
    # --- Lo que el curso usa: respuestas de verdad, la ventana, la caché, contar ---------------
    Caso("texto", "/v1/messages", [_peticion("guion:eco", [_usuario(PEDIDO)])], CREAR, {"estado": 200}),
    Caso("ida y vuelta de herramienta", "/v1/messages", [_peticion("guion:herramienta", [
        _usuario("Lee recetas.txt y dime qué hay."), _asistente({"type": "text", "text": "Voy a leerlo."}, LLAMADA),
        {"role": "user", "content": [RESULTADO]}], tools=[LEER])], LLAMADAS, {"estado": 200}),
    Caso("ventana desbordada", "/v1/messages", [_peticion("guion:eco", [_usuario(LARGO * 700)])], ERRORES,
         {"estado": 400}),
    # Con `stop_sequences`, llama-server para en la primera palabra: sin ellas, un modelo pequeño al que
    # se le deja escribir 100 000 tokens escribe hasta llenar la ventana (minutos u horas en una CPU).
    Caso("max_tokens mayor que la ventana", "/v1/messages", [
        {**_peticion("guion:eco", [_usuario("Contesta solo «sí».")]), "max_tokens": 100_000,
         "stop_sequences": PARAR_PRONTO}], CREAR, {"estado": 400}),
    Caso("tool_result huérfano", "/v1/messages", [_peticion("guion:eco", [
        _usuario("Hola."), _asistente({"type": "text", "text": "Hola, ¿qué hago?"}),
        {"role": "user", "content": [RESULTADO]}], tools=[LEER])], LLAMADAS, {"estado": 400}),
    Caso("tool_use sin respuesta", "/v1/messages", [_peticion("guion:eco", [
        _usuario("Lee recetas.txt."), _asistente(LLAMADA), _usuario("¿Y bien?")], tools=[LEER])], LLAMADAS,
        {"estado": 400}),
    Caso("count_tokens", "/v1/messages/count_tokens", [
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)]}], CONTAR, {"estado": 200}),
    Caso("usage con un prefijo repetido", "/v1/messages", [
        _peticion("guion:eco", [_usuario(LARGO * 8)]),
        _peticion("guion:eco", [_usuario(LARGO * 8), _asistente({"type": "text", "text": "Entendido."}),
                                _usuario(PEDIDO)])], CACHE, {"estado": 200}),
    Caso("las herramientas cuentan", "/v1/messages/count_tokens", [
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)]},
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)], "tools": [LEER]}], CONTAR,
        {"estado": 200}),
    Caso("tool_choice any", "/v1/messages", [
        _peticion("guion:eco", [_usuario(PEDIDO)], tools=[LEER], tool_choice={"type": "any"})], HERRAMIENTAS,
        {"estado": 200}),
    # --- Los campos obligatorios y sus tipos (Create a Message) ----------------------------------
    # Sin max_tokens, llama-server escribe hasta 4096 tokens (su valor por defecto, server-chat.cpp):
    # con un modelo lento, media hora. Las stop_sequences lo paran en la primera palabra.
    _caso("sin max_tokens", {"stop_sequences": PARAR_PRONTO}, quitar=["max_tokens"]),
    _caso("sin messages", quitar=["messages"]),
    _caso("sin model", quitar=["model"]),
    _caso("max_tokens negativo", {"max_tokens": -1, "stop_sequences": PARAR_PRONTO}),  # -1: sin límite en llama-server
    _caso("max_tokens 0", {"max_tokens": 0, "stop_sequences": PARAR_PRONTO}, estado=200),
    _caso("temperature fuera de 0–1", {"temperature": 1.5}),
    _caso("system con un bloque que no es texto", {"system": [{"type": "image"}]}),
    # --- Los mensajes y sus roles ----------------------------------------------------------------
    _caso("messages vacío", {"messages": []}),
    _caso("un rol que no existe", mensajes=[{"role": "robot", "content": PEDIDO}]),
    _caso("el rol system dentro de messages", mensajes=[{"role": "system", "content": SISTEMA}, _usuario(PEDIDO)]),
    _caso("dos turnos seguidos del mismo rol", mensajes=[_usuario("Hola."), _usuario(PEDIDO)], estado=200),
    _caso("el último mensaje es del asistente", mensajes=[
        _usuario(PEDIDO), _asistente({"type": "text", "text": "uno dos"})], estado=200),
    # --- Los bloques de contenido ----------------------------------------------------------------
    _caso("un bloque de un tipo que no existe", mensajes=[{"role": "user", "content": [{"type": "nota", "text": "x"}]}]),
    _caso("un bloque text sin text", mensajes=[{"role": "user", "content": [{"type": "text"}]}]),
    _caso("un tool_use en un mensaje del usuario", mensajes=[{"role": "user", "content": [LLAMADA]}],
          fuente=LLAMADAS),
    _caso("un tool_use con input que no es un objeto", mensajes=[
        _usuario("Lee recetas.txt."), _asistente({**LLAMADA, "input": "recetas.txt"}),
        {"role": "user", "content": [RESULTADO]}], cambios={"tools": [LEER]}),
    _caso("texto antes del tool_result", mensajes=[
        _usuario("Lee recetas.txt."), _asistente(LLAMADA),
        {"role": "user", "content": [{"type": "text", "text": "Aquí va."}, RESULTADO]}], cambios={"tools": [LEER]},
        fuente=LLAMADAS),
    # --- Las herramientas y sus esquemas ---------------------------------------------------------
    _caso("una herramienta sin input_schema", _con_la_herramienta(name="leer", description="Lee."), fuente=ESQUEMA),
    _caso("un input_schema que no es un esquema JSON", _con_la_herramienta(
        name="leer", input_schema={"type": "objeto", "properties": {"ruta": {"type": "string"}}}), fuente=ESQUEMA),
    _caso("un input_schema que no es de un objeto", _con_la_herramienta(name="leer", input_schema={"type": "string"}),
          fuente=ESQUEMA),
    _caso("un nombre de herramienta con espacios", _con_la_herramienta(name="leer fichero", input_schema=LEER["input_schema"]),
          fuente=HERRAMIENTAS),
    _caso("tool_choice de un tipo que no existe", {"tools": [LEER], "tool_choice": {"type": "obligatoria"}},
          fuente=HERRAMIENTAS),
    # --- stop_sequences y stream -----------------------------------------------------------------
    Caso("stop_sequences que aparecen", "/v1/messages", [
        _peticion("guion:eco", [_usuario(PEDIDO)], stop_sequences=PARAR_PRONTO)], CREAR,
        {"estado": 200, "stop_reason": "stop_sequence"}),
    _caso("stop_sequences que no es una lista de textos", {"stop_sequences": "fin"}),
    _caso("stream true", {"stream": True}, estado=200, fuente=STREAMING, ensayo_se_aparta=(
        "el de ensayo no hace streaming: el harness del curso pide cada respuesta entera, y un servidor "
        "que lo hiciera sería código que ninguna lección enseña (ver motor.SIN_STREAMING)")),
    # --- Cuerpos mal formados y tamaños ------------------------------------------------------------
    Caso("un cuerpo que no es JSON", "/v1/messages", [Crudo("JSON cortado", lambda: b'{"model": "guion:eco", "max')],
         ERRORES, {"estado": 400}),
    Caso("un cuerpo JSON que no es un objeto", "/v1/messages", [[_usuario(PEDIDO)]], ERRORES, {"estado": 400}),
    Caso("un cuerpo de más de 32 MB", "/v1/messages", [Crudo("33 MB de JSON", _mas_de_32_mb)], ERRORES,
         {"estado": 413}),
]


@dataclass(frozen=True)
class Diferencia:
    """Un rasgo en que los dos servidores difieren: lo que da cada uno y qué se ha decidido."""
    ensayo: object
    real: object
    decision: str  # «a propósito» (se queda así, con su porqué) o «arreglada» (ya no difiere: no va aquí)
    porque: str


A_PROPOSITO = "a propósito"

# (caso, rasgo) → Diferencia; el caso «*» vale para todos los casos en que se vea. Solo las que se ven
# hoy: una que se arregla en el servidor de ensayo deja de verse, y `comparar` pide quitarla de aquí.
# Cuando un caso da estados distintos (uno rechaza, el otro contesta), solo cuenta el estado: el
# resto de rasgos es consecuencia suya.
TODOS = "*"
DIFERENCIAS = {
    (TODOS, "id empieza por msg_"): Diferencia(
        True, False, A_PROPOSITO,
        "la API de verdad da ids «msg_…»; llama-server, «chatcmpl-…» (los de su API de OpenAI). El harness "
        "no lee el id"),
    (TODOS, "model es el pedido"): Diferencia(
        True, False, A_PROPOSITO,
        "la API de verdad devuelve en `model` el modelo pedido; llama-server sirve uno solo y devuelve su "
        "alias (smollm2) pida lo que pida. El harness no lo lee"),
    (TODOS, "claves de usage"): Diferencia(
        ["cache_creation_input_tokens", "cache_read_input_tokens", "input_tokens", "output_tokens"],
        ["cache_read_input_tokens", "input_tokens", "output_tokens"], A_PROPOSITO,
        "la API de verdad trae también `cache_creation_input_tokens` (el de ensayo, 0); llama-server no. El "
        "harness solo suma `input_tokens` y `cache_read_input_tokens`, que traen los dos"),
    ("ventana desbordada", "forma del error"): Diferencia(
        "anthropic", "openai", A_PROPOSITO,
        "la API de verdad contesta `{\"type\": \"error\", \"error\": {…}}`; llama-server, la forma de OpenAI "
        "`{\"error\": {\"code\", \"message\", \"type\"}}`. `ModeloAPI` (lección 01) entiende las dos"),
    ("ventana desbordada", "tipo de error"): Diferencia(
        "invalid_request_error", "exceed_context_size_error", A_PROPOSITO,
        "el de la API de verdad es `invalid_request_error`; el de llama-server trae aparte las dos cifras "
        "(`n_prompt_tokens`, `n_ctx`), que `ModeloAPI` usa para su `ErrorVentana`"),
    ("max_tokens mayor que la ventana", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "la API de verdad rechaza con 400 una petición cuya entrada más `max_tokens` no cabe en la ventana; "
        "llama-server la acepta y, si el modelo no para antes, corta al llenarse la ventana. El de ensayo "
        "hace lo de la API: el harness debe pedir lo que cabe"),
    ("tool_result huérfano", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "la API de verdad rechaza con 400 un `tool_result` sin su `tool_use` en el mensaje anterior "
        "(«unexpected tool_use_id found in tool_result blocks»); llama-server lo pasa al modelo como un "
        "mensaje más. Un harness que pierde el `tool_use` al compactar lo descubre con la API, no aquí"),
    ("tool_use sin respuesta", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "la API de verdad rechaza con 400 un `tool_use` sin su `tool_result` justo después («tool_use ids "
        "were found without tool_result blocks immediately after»); llama-server lo acepta"),
    # Las reglas de la documentación de la API (issue 42). Donde llama-server contesta 200, es que no
    # comprueba esa regla: convierte la petición a su API de OpenAI (server_chat_convert_anthropic_to_oai,
    # tools/server/server-chat.cpp) tomando lo que entiende y dejando lo demás. La lección 01 lo dice.
    ("sin max_tokens", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "`max_tokens` es obligatorio en la API; llama-server pone 4096 si falta («required in Anthropic, but "
        "we're permissive», server-chat.cpp): con un modelo lento, media hora escribiendo"),
    ("sin messages", "estado"): Diferencia(
        400, 500, A_PROPOSITO,
        "`messages` es obligatorio en la API (400); llama-server lanza una excepción que no es de petición "
        "inválida y contesta 500 `server_error`: un 500 que un cliente con reintentos repetiría"),
    ("sin model", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "`model` es obligatorio en la API; llama-server sirve un solo modelo y no lo mira"),
    ("max_tokens negativo", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "la API pide `max_tokens` ≥ 0; para llama-server, -1 es «sin límite» (escribe hasta llenar la ventana "
        "o dar con una stop_sequence)"),
    ("max_tokens 0", "tipos de bloque"): Diferencia(
        [], ["text"], A_PROPOSITO,
        "con `max_tokens: 0` la API no genera nada (sirve para calentar la caché); llama-server lo toma como "
        "«sin límite» y escribe (aquí, hasta la primera stop_sequence)"),
    ("max_tokens 0", "output_tokens <= max_tokens"): Diferencia(
        True, False, A_PROPOSITO, "consecuencia de la fila anterior: llama-server escribe con `max_tokens: 0`"),
    ("temperature fuera de 0–1", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API admite `temperature` de 0 a 1; llama-server admite más (la de OpenAI llega a 2)"),
    ("system con un bloque que no es texto", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "en `system` la API solo admite bloques de texto; llama-server se salta los demás"),
    ("messages vacío", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API pide al menos un mensaje; llama-server contesta al prompt de sistema solo"),
    ("un rol que no existe", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API solo admite los roles `user` y `assistant`; llama-server pasa el mensaje a la "
        "plantilla, que lo deja caer"),
    ("el rol system dentro de messages", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "en la API el prompt de sistema va en `system`, no en `messages`; llama-server lo acepta "
        "como un mensaje de sistema más"),
    ("un bloque de un tipo que no existe", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API rechaza un bloque de un tipo que no conoce; llama-server se lo salta"),
    ("un bloque text sin text", "estado"): Diferencia(
        400, 500, A_PROPOSITO, "la API lo rechaza como petición mal formada (400); llama-server falla dentro (500)"),
    ("un tool_use en un mensaje del usuario", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "en la API un `tool_use` solo lo escribe el asistente; llama-server lo convierte igual"),
    ("un tool_use con input que no es un objeto", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "en la API el `input` de un `tool_use` es un objeto; llama-server lo pasa como texto"),
    ("texto antes del tool_result", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API pide los `tool_result` primero en su mensaje y el texto después (Handle tool "
        "calls); llama-server los reordena sin decir nada"),
    ("una herramienta sin input_schema", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "`input_schema` es obligatorio en la API; llama-server pone un esquema vacío"),
    ("un input_schema que no es un esquema JSON", "forma del error"): Diferencia(
        "anthropic", "openai", A_PROPOSITO,
        "los dos lo rechazan con 400 (la API: «JSON schema is invalid. It must match JSON Schema draft "
        "2020-12»; llama-server, al convertir el esquema en gramática), cada uno con su forma de error"),
    ("un input_schema que no es de un objeto", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API pide `\"type\": \"object\"` en el esquema de una herramienta (la entrada de una "
        "llamada es un objeto); llama-server acepta cualquier esquema válido"),
    ("un nombre de herramienta con espacios", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API pide nombres ^[a-zA-Z0-9_-]{1,128}$ (Define tools); llama-server no los mira"),
    ("tool_choice de un tipo que no existe", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API solo admite `auto`, `any`, `tool` y `none`; llama-server ignora uno que no "
        "conoce (y traduce `any` y `tool` al `required` de OpenAI)"),
    ("stop_sequences que aparecen", "stop_reason"): Diferencia(
        "stop_sequence", "end_turn", A_PROPOSITO,
        "la API dice `stop_sequence` cuando para en una de `stop_sequences`; llama-server para igual y rellena "
        "`stop_sequence`, pero dice `end_turn` (to_json_anthropic, tools/server/server-task.cpp)"),
    ("stop_sequences que no es una lista de textos", "estado"): Diferencia(
        400, 200, A_PROPOSITO, "la API pide una lista de textos; llama-server acepta también un texto suelto (el "
        "`stop` de OpenAI)"),
    ("stream true", "estado"): Diferencia(
        400, 200, A_PROPOSITO,
        "la API y llama-server contestan con eventos (message_start … message_stop); el de ensayo lo rechaza a "
        "propósito y dice por qué: el harness del curso pide cada respuesta entera, y streaming en el de ensayo "
        "sería código que ninguna lección enseña"),
    ("un cuerpo que no es JSON", "estado"): Diferencia(
        400, 500, A_PROPOSITO,
        "la API contesta 400 `invalid_request_error`; llama-server, 500 `server_error`: el error de json::parse "
        "no es de los que trata como petición inválida (ex_wrapper, tools/server/server.cpp). `reintentos.py` "
        "(lección 06) reintentaría ese 500"),
    ("un cuerpo JSON que no es un objeto", "estado"): Diferencia(
        400, 500, A_PROPOSITO, "como la fila anterior: la API, 400; llama-server, 500 `server_error`"),
    ("un cuerpo de más de 32 MB", "estado"): Diferencia(
        413, 400, A_PROPOSITO,
        "la API rechaza por tamaño (413 `request_too_large`) lo que pasa de 32 MB; llama-server admite hasta "
        "100 MB (cpp-httplib), lo trocea entero y contesta que no cabe en la ventana. El de ensayo rechaza con "
        "413 desde 2 MB: la petición más grande del curso mide unos 40 KB"),
}


def rasgos(estado, cuerpo, peticion):
    """Lo que se compara de una respuesta: su forma, nunca el texto del modelo ni las cifras exactas.

    De una respuesta por eventos (streaming), el primero y el último."""
    r = {"estado": estado}
    if isinstance(cuerpo, str) and cuerpo.lstrip().startswith(("event:", "data:")):
        eventos = _eventos(cuerpo)
        r["primer evento"], r["último evento"] = (eventos[0], eventos[-1]) if eventos else (None, None)
        return r
    if not isinstance(peticion, dict):
        peticion = {}
    if isinstance(cuerpo, dict) and "error" in cuerpo:
        error = cuerpo["error"] if isinstance(cuerpo["error"], dict) else {}
        r["forma del error"] = "anthropic" if cuerpo.get("type") == "error" else "openai"
        r["tipo de error"] = error.get("type")
        return r
    if not isinstance(cuerpo, dict):
        r["cuerpo"] = "no es JSON"
        return r
    if set(cuerpo) == {"input_tokens"}:  # count_tokens
        r["input_tokens > 0"] = isinstance(cuerpo["input_tokens"], int) and cuerpo["input_tokens"] > 0
        return r
    usage = cuerpo.get("usage") or {}
    r["type"] = cuerpo.get("type")
    r["role"] = cuerpo.get("role")
    r["tipos de bloque"] = sorted({b.get("type") for b in cuerpo.get("content") or []})
    r["stop_reason"] = cuerpo.get("stop_reason")
    r["id empieza por msg_"] = str(cuerpo.get("id", "")).startswith("msg_")
    r["model es el pedido"] = cuerpo.get("model") == peticion.get("model")
    r["claves de usage"] = sorted(usage)
    r["output_tokens <= max_tokens"] = usage.get("output_tokens", 0) <= peticion.get("max_tokens", 0)
    r["usa la caché"] = (usage.get("cache_read_input_tokens") or 0) > 0
    return r


def _eventos(texto):
    """Los tipos de evento de un cuerpo de server-sent events, en orden: el `type` de cada `data:`
    JSON (así los nombra la API: message_start, content_block_delta…), o lo que diga `event:`."""
    eventos = []
    for linea in texto.splitlines():
        if linea.startswith("data:"):
            try:
                eventos.append(json.loads(linea[5:]).get("type"))
            except (ValueError, AttributeError):
                eventos.append(linea[5:].strip()[:40])
    return eventos


def mandar(url, ruta, peticion, espera=ESPERA_S):
    """(estado, cuerpo leído como JSON, o el texto si no lo es) de un POST."""
    datos = peticion.hacer() if isinstance(peticion, Crudo) else json.dumps(peticion).encode()
    pedido = urllib.request.Request(url.rstrip("/") + ruta, data=datos,
                                    headers={"content-type": "application/json",
                                             "anthropic-version": "2023-06-01"})
    try:
        with urllib.request.urlopen(pedido, timeout=espera) as respuesta:
            estado, crudo = respuesta.status, respuesta.read()
    except urllib.error.HTTPError as error:
        estado, crudo = error.code, error.read()
    try:
        return estado, json.loads(crudo)
    except ValueError:
        return estado, crudo.decode("utf-8", "replace")


def observar(url, casos=CASOS, avisar=None):
    """{caso: rasgos} de un servidor: cada caso, sus peticiones en orden, los rasgos de la última.

    En «las herramientas cuentan», el rasgo es si la cuenta con `tools` pasa de la cuenta sin ellas."""
    observado = {}
    for caso in casos:
        if avisar:
            avisar(f"  {caso.nombre}…")
        nombre, peticiones = caso.nombre, caso.peticiones
        respuestas = [mandar(url, caso.ruta, p) for p in peticiones]
        estado, cuerpo = respuestas[-1]
        observado[nombre] = rasgos(estado, cuerpo, peticiones[-1])
        if nombre == "las herramientas cuentan":
            cuentas = [c.get("input_tokens", 0) if isinstance(c, dict) else 0 for _, c in respuestas]
            observado[nombre]["con tools cuenta más"] = cuentas[1] > cuentas[0]
    return observado


@dataclass
class Resultado:
    nuevas: list      # (caso, rasgo, ensayo, real) que difieren y no están escritas
    cambiadas: list   # (caso, rasgo, ensayo, real) escritas, pero con otros valores
    ya_no: list       # (caso, rasgo) escritas que ya no difieren
    escritas: list    # (caso, rasgo) que difieren como dice la tabla

    @property
    def bien(self):
        return not (self.nuevas or self.cambiadas or self.ya_no)


def comparar(ensayo, real, diferencias=None):
    """Compara los rasgos de los dos servidores con la tabla de diferencias."""
    diferencias = DIFERENCIAS if diferencias is None else diferencias
    resultado = Resultado([], [], [], [])
    vistas = set()
    for caso in sorted(set(ensayo) | set(real)):
        de_ensayo, de_real = ensayo.get(caso, {}), real.get(caso, {})
        rasgos_del_caso = sorted(set(de_ensayo) | set(de_real))
        if de_ensayo.get("estado") != de_real.get("estado"):
            rasgos_del_caso = ["estado"]  # uno rechaza y el otro contesta: lo demás es consecuencia
        for rasgo in rasgos_del_caso:
            a, b = de_ensayo.get(rasgo), de_real.get(rasgo)
            if a == b:
                continue
            clave = (caso, rasgo) if (caso, rasgo) in diferencias else (TODOS, rasgo)
            vistas.add(clave)
            escrita = diferencias.get(clave)
            if escrita is None:
                resultado.nuevas.append((caso, rasgo, a, b))
            elif (escrita.ensayo, escrita.real) != (a, b):
                resultado.cambiadas.append((caso, rasgo, a, b))
            else:
                resultado.escritas.append((caso, rasgo))
    resultado.ya_no = sorted(set(diferencias) - vistas)
    return resultado


def _celda(valor):
    if valor is None:
        return "—"
    if isinstance(valor, bool):
        return "sí" if valor else "no"
    if isinstance(valor, list):
        return ", ".join(f"`{v}`" for v in valor) or "(ninguno)"
    return f"`{valor}`"


def tabla_markdown(diferencias=None):
    """La tabla de diferencias en Markdown, la que va en curso/README.md."""
    diferencias = DIFERENCIAS if diferencias is None else diferencias
    filas = ["| caso | rasgo | ensayo | llama-server | por qué |", "|---|---|---|---|---|"]
    for (caso, rasgo), d in diferencias.items():
        caso = "todos los que contestan" if caso == TODOS else caso
        filas.append(f"| {caso} | {rasgo} | {_celda(d.ensayo)} | {_celda(d.real)} | {d.porque} |")
    return "\n".join(filas)


def informe(resultado):
    lineas = []
    for caso, rasgo, a, b in resultado.nuevas:
        lineas.append(f"✘ diferencia nueva, sin escribir en DIFERENCIAS: {caso} · {rasgo}: ensayo {a!r}, "
                      f"llama-server {b!r}")
    for caso, rasgo, a, b in resultado.cambiadas:
        lineas.append(f"✘ diferencia escrita con otros valores: {caso} · {rasgo}: ahora ensayo {a!r}, "
                      f"llama-server {b!r}")
    for caso, rasgo in resultado.ya_no:
        lineas.append(f"✘ diferencia escrita que ya no se ve: {caso} · {rasgo} (quítala de DIFERENCIAS)")
    lineas.append(f"{len(resultado.escritas)} diferencias, todas escritas en DIFERENCIAS."
                  if resultado.bien else "La tabla de diferencias no dice la verdad: corrígela o arregla el servidor de ensayo.")
    return "\n".join(lineas)


def observar_ensayo(casos=CASOS):
    from curso.ensayo.servidor import ServidorEnsayo
    with ServidorEnsayo() as servidor:
        return observar(servidor.url, casos)


def casos_llamados(*nombres):
    """Los casos de esos nombres, en ese orden (para observar solo unos pocos)."""
    por_nombre = {caso.nombre: caso for caso in CASOS}
    return [por_nombre[nombre] for nombre in nombres]


def como_la_api(ensayo, casos=CASOS):
    """[(caso, rasgo, lo que dice la documentación, lo que da el de ensayo)] donde el de ensayo no da
    lo que la documentación de la API dice para ese caso (salvo los que `ensayo_se_aparta`)."""
    apartes = []
    for caso in casos:
        if caso.ensayo_se_aparta:
            continue
        for rasgo, valor in caso.api.items():
            if ensayo.get(caso.nombre, {}).get(rasgo) != valor:
                apartes.append((caso.nombre, rasgo, valor, ensayo.get(caso.nombre, {}).get(rasgo)))
    return apartes


def main(url_real, grabar=False):
    """Compara llama-server (en `url_real`) con el servidor de ensayo; 0 si la tabla dice la verdad.

    También compara lo que dio llama-server con lo grabado en `GRABACION`; con `grabar`, lo graba."""
    print(f"Mandando {len(CASOS)} casos al servidor de ensayo y a llama-server ({url_real})…", flush=True)
    real = observar(url_real, avisar=lambda texto: print(texto, flush=True))
    ensayo = observar_ensayo()
    for caso in real:
        print(f"· {caso}")
        for rasgo in sorted(set(real[caso]) | set(ensayo.get(caso, {}))):
            a, b = ensayo.get(caso, {}).get(rasgo), real[caso].get(rasgo)
            print(f"    {'=' if a == b else '≠'} {rasgo}: ensayo {a!r} · llama-server {b!r}")
    resultado = comparar(ensayo, real)
    print(informe(resultado))
    codigo = 0 if resultado.bien else 1
    texto = json.dumps(real, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if grabar:
        GRABACION.write_text(texto, encoding="utf-8")
        print(f"Grabados en {GRABACION.relative_to(rutas.RAIZ)}.")
    elif not GRABACION.is_file() or json.loads(GRABACION.read_text(encoding="utf-8")) != real:
        print(f"✘ llama-server no da lo grabado en {GRABACION.relative_to(rutas.RAIZ)}: si el cambio es "
              "bueno, vuelve a grabarlo con python -m curso modelo --comparar --grabar", file=sys.stderr)
        codigo = 1
    return codigo
