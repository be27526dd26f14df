"""El modelo detrás de HTTP: un adaptador para la API de Messages con la biblioteca estándar.

Lección 01. Sin SDK: `urllib` y JSON. La URL sale de ANTHROPIC_BASE_URL; si no está, es la del
servidor de ensayo del curso (`python -m curso servidor`). Sirve igual para un servidor local de
verdad (llama-server, Ollama, vLLM, LM Studio), que entiende la misma API.

El adaptador guarda el `usage` de la última respuesta: es lo único que el harness sabe de
cuántos tokens ocupa M, porque no tiene tokenizador.
"""
import json
import os
import urllib.error
import urllib.request

URL_DE_ENSAYO = "http://127.0.0.1:8765"  # python -m curso servidor
VERSION = "2023-06-01"  # la cabecera anthropic-version
MAX_TOKENS = 512  # lo más que puede escribir el modelo en una respuesta
ESPERA = 900  # segundos: una petición recién compactada se calcula casi entera en un servidor local

ROLES = {"usuario": "user", "asistente": "assistant"}


class ErrorDelModelo(Exception):
    """El servidor no ha contestado con una respuesta: el estado HTTP y su propio mensaje."""

    def __init__(self, estado, mensaje):
        super().__init__(f"el servidor contestó {estado}: {mensaje}" if estado else mensaje)
        self.estado, self.mensaje = estado, mensaje


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


def mensaje_de_error(estado, cuerpo):
    """El mensaje del servidor, venga con la forma de Anthropic o con la de OpenAI (llama-server)."""
    try:
        datos = json.loads(cuerpo)
        error = datos["error"]
        return error["message"] if isinstance(error, dict) else str(error)
    except (ValueError, KeyError, TypeError):
        return cuerpo.strip()[:500] or f"HTTP {estado} sin cuerpo"


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
        pedido = urllib.request.Request(self.url + "/v1/messages", cuerpo, cabeceras, method="POST")
        try:
            with urllib.request.urlopen(pedido, timeout=self.espera) as r:
                respuesta = json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise ErrorDelModelo(e.code, mensaje_de_error(e.code, e.read().decode("utf-8", "replace"))) from None
        except urllib.error.URLError as e:
            raise ErrorDelModelo(None, f"no hay ningún servidor en {self.url} ({e.reason}). Arranca el "
                                 "de ensayo con «python -m curso servidor», o uno de verdad "
                                 "(p. ej. «llama-server -c 8192 --jinja») y pon su dirección en "
                                 "ANTHROPIC_BASE_URL") from None
        self.usage = respuesta["usage"]
        return respuesta["content"]
