"""El modelo detrás de HTTP: un adaptador para la API de Messages con la biblioteca estándar.

Lección 01. Sin SDK: `urllib` y JSON. La URL sale de ANTHROPIC_BASE_URL; si no está, es la del
servidor de ensayo del curso (`python -m curso servidor`). Sirve igual para un servidor local de
verdad (llama-server, Ollama, vLLM, LM Studio), que entiende la misma API.

El adaptador guarda el `usage` de la última respuesta: es lo único que el harness sabe de
cuántos tokens ocupa M, porque no tiene tokenizador.

Cuando el servidor contesta con un error, el adaptador lanza una excepción con un mensaje en
castellano: `ErrorVentana` si la petición no cabe en la ventana (con las dos cifras, venga de
llama-server o con la forma de Anthropic), y `ErrorDelModelo` para todo lo demás.
"""
import json
import os
import re
import urllib.error
import urllib.request

URL_DE_ENSAYO = "http://127.0.0.1:8765"  # python -m curso servidor
RUTA = "/v1/messages"  # se añade a la URL base, así que ANTHROPIC_BASE_URL no lleva /v1
VERSION = "2023-06-01"  # la cabecera anthropic-version
MAX_TOKENS = 512  # lo más que puede escribir el modelo en una respuesta
ESPERA = 900  # segundos: un modelo local lento puede pasar de 13 minutos escribiendo 512 tokens

ROLES = {"usuario": "user", "asistente": "assistant"}


class ErrorDelModelo(Exception):
    """El servidor no ha contestado con una respuesta.

    `str(error)` es el aviso para quien lo lee; `estado` (el HTTP, o None si no hubo servidor) y
    `mensaje` (el texto del servidor, tal cual llegó) son para el código que lo recoja.
    """

    def __init__(self, estado, mensaje, aviso=None):
        super().__init__(aviso or (f"el servidor contestó {estado}: {mensaje}" if estado else mensaje))
        self.estado, self.mensaje = estado, mensaje


class ErrorVentana(ErrorDelModelo):
    """La petición no cabe en la ventana del servidor, que ni ha empezado a calcularla.

    Lleva las cifras: `entrada` (tokens de la petición), `ventana` y, si el servidor también
    cuenta lo que reserva para la respuesta, `max_tokens`. Y lleva `M`, la conversación que no
    ha cabido, para que quien la recoja pueda parar sin perderla.
    """

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
        "messages": [{"role": ROLES[rol], "content": contenido} for rol, contenido in resto],
    }


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
    if estado == 404 and direccion:
        aviso = f"el servidor contestó 404 a POST {direccion}: {mensaje.rstrip('.')}"
        base = direccion.removesuffix(RUTA)
        if base.endswith("/v1"):
            aviso += (f". La URL base acaba en /v1, y el adaptador ya añade {RUTA}: quita ese /v1 "
                      f"de ANTHROPIC_BASE_URL (p. ej. {base.removesuffix('/v1')})")
        return ErrorDelModelo(estado, mensaje, aviso)
    return ErrorDelModelo(estado, mensaje)


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
        pedido = urllib.request.Request(direccion, cuerpo, cabeceras, method="POST")
        try:
            with urllib.request.urlopen(pedido, timeout=self.espera) as r:
                respuesta = json.loads(r.read())
        except urllib.error.HTTPError as e:
            texto = e.read().decode("utf-8", "replace")
            raise error_del_servidor(e.code, texto, direccion, list(M)) from None
        except urllib.error.URLError as e:
            raise ErrorDelModelo(None, f"no hay ningún servidor en {self.url} ({e.reason}). Arranca el "
                                 "de ensayo con «python -m curso servidor», o uno de verdad "
                                 "(p. ej. «llama-server -c 8192 --jinja») y pon su dirección en "
                                 "ANTHROPIC_BASE_URL") from None
        self.usage = respuesta["usage"]
        return respuesta["content"]
