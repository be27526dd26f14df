"""Para quien mantiene el curso y para CI: las mismas peticiones al servidor de ensayo y a llama-server, y la tabla de sus diferencias.

Un solo fichero porque las peticiones, lo que se mira de cada respuesta, la tabla de diferencias
escritas y la comparación son una sola prueba: la de que el servidor de ensayo no enseña, sin
saberlo, algo que un servidor de verdad no hace.

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

# (nombre, ruta, peticiones): cada caso manda sus peticiones en orden y mira la última.
CASOS = [
    ("texto", "/v1/messages", [_peticion("guion:eco", [_usuario(PEDIDO)])]),
    ("ida y vuelta de herramienta", "/v1/messages", [_peticion("guion:herramienta", [
        _usuario("Lee recetas.txt y dime qué hay."), _asistente({"type": "text", "text": "Voy a leerlo."}, LLAMADA),
        {"role": "user", "content": [RESULTADO]}], tools=[LEER])]),
    ("ventana desbordada", "/v1/messages", [_peticion("guion:eco", [_usuario(LARGO * 700)])]),
    # Con `stop_sequences`, llama-server para en la primera palabra: sin ellas, un modelo pequeño al que
    # se le deja escribir 100 000 tokens escribe hasta llenar la ventana (minutos u horas en una CPU).
    ("max_tokens mayor que la ventana", "/v1/messages", [
        {**_peticion("guion:eco", [_usuario("Contesta solo «sí».")]), "max_tokens": 100_000,
         "stop_sequences": [" ", "\n", "."]}]),
    ("tool_result huérfano", "/v1/messages", [_peticion("guion:eco", [
        _usuario("Hola."), _asistente({"type": "text", "text": "Hola, ¿qué hago?"}),
        {"role": "user", "content": [RESULTADO]}], tools=[LEER])]),
    ("tool_use sin respuesta", "/v1/messages", [_peticion("guion:eco", [
        _usuario("Lee recetas.txt."), _asistente(LLAMADA), _usuario("¿Y bien?")], tools=[LEER])]),
    ("count_tokens", "/v1/messages/count_tokens", [
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)]}]),
    ("usage con un prefijo repetido", "/v1/messages", [
        _peticion("guion:eco", [_usuario(LARGO * 8)]),
        _peticion("guion:eco", [_usuario(LARGO * 8), _asistente({"type": "text", "text": "Entendido."}),
                                _usuario(PEDIDO)])]),
    ("las herramientas cuentan", "/v1/messages/count_tokens", [
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)]},
        {"model": "guion:eco", "system": SISTEMA, "messages": [_usuario(PEDIDO)], "tools": [LEER]}]),
    ("tool_choice any", "/v1/messages", [
        _peticion("guion:eco", [_usuario(PEDIDO)], tools=[LEER], tool_choice={"type": "any"})]),
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
}


def rasgos(estado, cuerpo, peticion):
    """Lo que se compara de una respuesta: su forma, nunca el texto del modelo ni las cifras exactas."""
    r = {"estado": estado}
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


def mandar(url, ruta, peticion, espera=ESPERA_S):
    """(estado, cuerpo leído como JSON, o el texto si no lo es) de un POST."""
    pedido = urllib.request.Request(url.rstrip("/") + ruta, data=json.dumps(peticion).encode(),
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


def observar(url, casos=CASOS):
    """{caso: rasgos} de un servidor: cada caso, sus peticiones en orden, los rasgos de la última.

    En «las herramientas cuentan», el rasgo es si la cuenta con `tools` pasa de la cuenta sin ellas."""
    observado = {}
    for nombre, ruta, peticiones in casos:
        respuestas = [mandar(url, ruta, p) for p in peticiones]
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
    """La tabla de diferencias en Markdown, la que va en el README."""
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


def observar_ensayo():
    from curso.ensayo.servidor import ServidorEnsayo
    with ServidorEnsayo() as servidor:
        return observar(servidor.url)


def main(url_real, grabar=False):
    """Compara llama-server (en `url_real`) con el servidor de ensayo; 0 si la tabla dice la verdad.

    También compara lo que dio llama-server con lo grabado en `GRABACION`; con `grabar`, lo graba."""
    print(f"Mandando {len(CASOS)} casos al servidor de ensayo y a llama-server ({url_real})…", flush=True)
    real = observar(url_real)
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
