"""El modelo detrás de HTTP: un adaptador para la API de Messages con la biblioteca estándar.

Lección 01. Sin SDK: `urllib` y JSON. La URL sale de ANTHROPIC_BASE_URL; si no está, es la del
servidor de ensayo del curso (`python -m curso servidor`). Sirve igual para un servidor local de
verdad (llama-server, Ollama, vLLM, LM Studio), que entiende la misma API.

El adaptador guarda el `usage` de la última respuesta: es lo único que el harness sabe de
cuántos tokens ocupa M, porque no tiene tokenizador.

Cuando la petición no acaba en una respuesta, lanza una excepción con un aviso en castellano:
`ErrorVentana` si no cabe en la ventana (con las cifras, venga con la forma de la API de Anthropic
o con la de llama-server), y `ErrorDelModelo` para todo lo demás.

Una respuesta que acabó por `max_tokens` a media llamada trae esa llamada a medias: `bloques_de` la
marca (`entorno.CORTADA`, lo dice la API en «Handling stop reasons») y `peticion` quita la marca.
"""
import http.client
import json
import os
import re
import urllib.error
import urllib.request

from entorno import CORTADA

URL_DE_ENSAYO = "http://127.0.0.1:8765"  # python -m curso servidor
RUTA = "/v1/messages"  # se añade a la URL base, así que ANTHROPIC_BASE_URL no lleva /v1
VERSION = "2023-06-01"  # la cabecera anthropic-version
MAX_TOKENS = 512  # lo más que puede escribir el modelo en una respuesta
# Segundos sin noticias del servidor. Sin streaming, llama-server calla hasta tener la respuesta
# entera, y un modelo local lento puede pasar de 13 minutos escribiendo 512 tokens.
ESPERA = 900

ROLES = {"usuario": "user", "asistente": "assistant"}
ARRANCA_UNO = ("Arranca el de ensayo con «python -m curso servidor», o uno de verdad (p. ej. "
               "«llama-server -c 8192 --jinja») y pon su dirección en ANTHROPIC_BASE_URL")


class ErrorDelModelo(Exception):
    """El servidor no ha contestado con una respuesta. `str(error)` es el aviso para quien lo lee;
    `estado` (el HTTP, o None si no hubo respuesta) y `mensaje` (el texto del servidor, tal cual
    llegó) son para el código que lo recoja."""

    def __init__(self, estado, mensaje, aviso=None):
        super().__init__(aviso or (f"el servidor contestó {estado}: {mensaje}" if estado else mensaje))
        self.estado, self.mensaje = estado, mensaje


class ErrorVentana(ErrorDelModelo):
    """La petición no cabe en la ventana del servidor. Lleva las cifras (`entrada`, `ventana` y, si el
    servidor cuenta lo que reserva para la respuesta, `max_tokens`) y `M`, lo que no ha cabido."""

    def __init__(self, estado, mensaje, entrada, ventana, max_tokens=None, M=None):
        self.entrada, self.ventana, self.max_tokens, self.M = entrada, ventana, max_tokens, M
        cuenta = f"{entrada} tokens de entrada" + (f" + {max_tokens} de max_tokens" if max_tokens else "")
        super().__init__(estado, mensaje, f"la petición no cabe en la ventana del servidor: {cuenta} > "
                                          f"{ventana}. Para seguir, M tiene que ocupar menos: hay que "
                                          "compactarla (lección 03)")


def peticion(M, herramientas, modelo, max_tokens=MAX_TOKENS):
    """El cuerpo JSON de la petición que representa M (el primer mensaje es el prompt de sistema)."""
    (rol, sistema), resto = M[0], M[1:]
    assert rol == "sistema", "M empieza por el prompt de sistema"
    return {
        "model": modelo,
        "max_tokens": max_tokens,
        "system": sistema,
        "tools": list(herramientas),
        "messages": [{"role": ROLES[rol], "content": sin_marcas(contenido)} for rol, contenido in resto],
    }


def sin_marcas(contenido):
    """El contenido de un mensaje tal como lo pide el protocolo: sin la marca CORTADA, que es del
    harness (la API rechaza los campos que no conoce)."""
    if not isinstance(contenido, list):
        return contenido
    return [{k: v for k, v in b.items() if k != CORTADA} if isinstance(b, dict) and CORTADA in b else b
            for b in contenido]


def bloques_de(respuesta):
    """Los bloques de una respuesta de la API (un dict ya leído). Si acabó por `max_tokens` y su
    último bloque es una llamada, esa llamada llegó cortada: una copia suya lleva CORTADA."""
    bloques = list(respuesta["content"])
    if (respuesta.get("stop_reason") == "max_tokens" and bloques and isinstance(bloques[-1], dict)
            and bloques[-1].get("type") == "tool_use"):
        bloques[-1] = {**bloques[-1], CORTADA: True}
    return bloques


def campos_de_error(cuerpo):
    """El objeto `error` del cuerpo, que las dos formas traen: {"type", "message", ...}; o {}."""
    try:
        error = json.loads(cuerpo)["error"]
    except (ValueError, KeyError, TypeError):
        return {}
    return error if isinstance(error, dict) else {"message": str(error)}


def mensaje_de_error(estado, cuerpo):
    """El mensaje del servidor, venga con la forma de Anthropic o con la de OpenAI (llama-server)."""
    return str(campos_de_error(cuerpo).get("message") or cuerpo.strip()[:500] or f"HTTP {estado} sin cuerpo")


# Así dice el servidor de ensayo, en un invalid_request_error, que la petición no cabe.
NO_CABE = re.compile(r"(?P<entrada>\d+) tokens de entrada \+ (?P<max_tokens>\d+) de max_tokens"
                     r" = \d+ > (?P<ventana>\d+)")


def error_del_servidor(estado, cuerpo, direccion=None, M=None):
    """La excepción que corresponde a una respuesta de error a la petición de `M`."""
    campos, mensaje = campos_de_error(cuerpo), mensaje_de_error(estado, cuerpo)
    if campos.get("type") == "exceed_context_size_error":  # llama-server, con las cifras aparte
        return ErrorVentana(estado, mensaje, campos.get("n_prompt_tokens"), campos.get("n_ctx"), M=M)
    cifras = NO_CABE.search(mensaje) if campos.get("type") == "invalid_request_error" else None
    if cifras:  # la forma de Anthropic, con las cifras en el texto
        return ErrorVentana(estado, mensaje, int(cifras["entrada"]), int(cifras["ventana"]),
                            int(cifras["max_tokens"]), M=M)
    aviso = None
    if estado == 404 and direccion:
        aviso = f"el servidor contestó 404 a POST {direccion}: {mensaje.rstrip('.')}"
        base = direccion.removesuffix(RUTA)
        if base.endswith("/v1"):
            aviso += (f". La URL base acaba en /v1, y el adaptador ya añade {RUTA}: quita ese /v1 "
                      f"de ANTHROPIC_BASE_URL (p. ej. {base.removesuffix('/v1')})")
    return ErrorDelModelo(estado, mensaje, aviso)


def error_de_conexion(error, url, espera):
    """El ErrorDelModelo de una petición sin respuesta (`error`, lo que lanzó urllib)."""
    motivo = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(motivo, ConnectionRefusedError):
        return ErrorDelModelo(None, f"no hay ningún servidor en {url} (conexión rechazada). {ARRANCA_UNO}")
    if isinstance(motivo, TimeoutError):
        return ErrorDelModelo(None, f"{url} no ha dicho nada en {espera:.3g} s y se ha dejado de esperar "
                                    "(la espera se cambia con `espera` al crear el ModeloAPI)")
    return ErrorDelModelo(None, f"no llego a {url}: {motivo}")


class ModeloAPI:
    """Un modelo al otro lado de HTTP. `ModeloAPI("guion:arregla")(M, HERRAMIENTAS)` → bloques."""

    def __init__(self, modelo="guion:arregla", url=None, max_tokens=MAX_TOKENS, espera=ESPERA):
        self.modelo, self.max_tokens, self.espera = modelo, max_tokens, espera
        self.url = (url or os.environ.get("ANTHROPIC_BASE_URL") or URL_DE_ENSAYO).rstrip("/")
        self.usage = None

    def __call__(self, M, herramientas=()):
        cuerpo = json.dumps(peticion(M, herramientas, self.modelo, self.max_tokens)).encode()
        cabeceras = {"content-type": "application/json", "anthropic-version": VERSION}
        if os.environ.get("ANTHROPIC_API_KEY"):
            cabeceras["x-api-key"] = os.environ["ANTHROPIC_API_KEY"]
        direccion = self.url + RUTA
        try:
            pedido = urllib.request.Request(direccion, cuerpo, cabeceras, method="POST")
            with urllib.request.urlopen(pedido, timeout=self.espera) as r:
                respuesta = json.load(r)
        except urllib.error.HTTPError as e:  # una respuesta con un estado de error: la hubo
            raise error_del_servidor(e.code, e.read().decode("utf-8", "replace"), direccion, list(M)) from None
        except (OSError, http.client.HTTPException, ValueError) as e:  # no la hubo (ValueError: la URL)
            raise error_de_conexion(e, self.url, self.espera) from None
        self.usage = respuesta["usage"]
        return bloques_de(respuesta)
