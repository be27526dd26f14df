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

Lección 06. Lo que hace falta para decidir si reintentar, y una espera que es un plazo.

Un `ErrorDelModelo` lleva, además del `estado` y el `mensaje`:

- `cabeceras`, las de la respuesta (con `retry-after` si el servidor dice cuánto esperar);
  `codigo`, el `error.details.error_code` del cuerpo, si lo trae (la API de Anthropic nombra así
  la causa, p. ej. `enforced_spend_limit_reached`);
- `causa`, si no hubo respuesta: "rechazada" (nadie escucha en ese puerto), "cortada", "tiempo"
  (la respuesta no llegó entera a tiempo), "red" (otro fallo de la red), o un error de
  configuración que esperar no arregla: "esquema" (la URL no es http:// ni https://), "nombre" (el
  nombre de la máquina no se resuelve) o "certificado" (el de https no es válido);
- `estado` 200 si llegó algo que no es una respuesta de la API, con lo que llegó (no es JSON, o
  le falta `content` o `usage`).

Cuánto se espera. `espera` (ESPERA, 900 s) es ahora lo que puede durar la petición ENTERA, de
conectar al último byte del cuerpo; y `cuerpo` (None: sin más límite que ese), lo que puede tardar
el cuerpo en llegar entero una vez llegadas las cabeceras. Todo el tiempo del modelo es silencio
antes de las cabeceras (llama-server, sin streaming, manda el estado, las cabeceras y el cuerpo de
golpe al acabar): eso tiene que caber en `espera`. Después de las cabeceras, el cuerpo ya está
calculado: si se para a medias, o llega a gotas, no es el modelo pensando, sino un servidor o una
red atascados. (Un tiempo de espera por lectura no basta: mide silencios, y un cuerpo que manda un
byte cada poco no se cortaría nunca.) Con reintentos, cada intento espera solo lo que queda del
plazo total, y el cuerpo, `reintentos.CUERPO_S`: un cuerpo atascado es un intento fallido en
segundos, y se reintenta.
"""
import http.client
import json
import os
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from entorno import CORTADA

URL_DE_ENSAYO = "http://127.0.0.1:8765"  # python -m curso servidor
RUTA = "/v1/messages"  # se añade a la URL base, así que ANTHROPIC_BASE_URL no lleva /v1
VERSION = "2023-06-01"  # la cabecera anthropic-version
MAX_TOKENS = 512  # lo más que puede escribir el modelo en una respuesta
# Segundos que puede durar una petición entera, cuerpo de la respuesta incluido (ver el docstring
# del módulo). Se cambia con `espera` al crear el ModeloAPI.
ESPERA = 900
# Los 429 de la API de Anthropic que no son un exceso momentáneo sino un límite de gasto, por su
# `error.details.error_code` (los nombres son los del SDK oficial, anthropic/_error_classes.py).
LIMITES_DE_GASTO = {
    "enforced_spend_limit_reached": "el límite de gasto mensual del nivel de uso de la organización",
    "contract_spend_limit_reached": "el límite de gasto del contrato de la organización",
}

ROLES = {"usuario": "user", "asistente": "assistant"}
ARRANCA_UNO = ("Arranca el de ensayo con «python -m curso servidor», o uno de verdad (p. ej. "
               "«llama-server -c 8192 --jinja») y pon su dirección en ANTHROPIC_BASE_URL")


class ErrorDelModelo(Exception):
    """El servidor no ha contestado con una respuesta.

    `str(error)` es el aviso para quien lo lee; `estado` (el HTTP, o None si no hubo respuesta),
    `mensaje` (el texto del servidor, tal cual llegó), `cabeceras` (las de la respuesta, con el
    nombre en minúsculas), `codigo` (`error.details.error_code`, o None) y `causa` (por qué no
    hubo respuesta, o None) son para el código que lo recoja.
    """

    def __init__(self, estado, mensaje, aviso=None, cabeceras=None, codigo=None, causa=None):
        super().__init__(aviso or (f"el servidor contestó {estado}: {mensaje}" if estado else mensaje))
        self.estado, self.mensaje, self.codigo, self.causa = estado, mensaje, codigo, causa
        self.cabeceras = {nombre.lower(): valor for nombre, valor in dict(cabeceras or {}).items()}


class CuerpoSinAcabar(TimeoutError):
    """El servidor empezó a contestar, pero el cuerpo no había llegado entero al acabarse la espera
    (`por_el_cuerpo`: la del cuerpo tras las cabeceras, no la de la petición entera)."""

    def __init__(self, por_el_cuerpo=False):
        super().__init__()
        self.por_el_cuerpo = por_el_cuerpo


def codigo_de_error(campos):
    """El `details.error_code` de los campos del error, o None."""
    detalles = campos.get("details")
    codigo = detalles.get("error_code") if isinstance(detalles, dict) else None
    return codigo if isinstance(codigo, str) else None


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


def error_del_servidor(estado, cuerpo, direccion=None, M=None, cabeceras=None):
    """La excepción que corresponde a una respuesta de error a la petición de `M`."""
    campos, mensaje = campos_de_error(cuerpo), mensaje_de_error(estado, cuerpo)
    if campos.get("type") == "exceed_context_size_error":  # llama-server, con las cifras aparte
        return ErrorVentana(estado, mensaje, campos.get("n_prompt_tokens"), campos.get("n_ctx"), M=M)
    cifras = NO_CABE.search(mensaje) if campos.get("type") == "invalid_request_error" else None
    if cifras:  # la forma de Anthropic, con las cifras en el texto
        return ErrorVentana(estado, mensaje, int(cifras["entrada"]), int(cifras["ventana"]),
                            int(cifras["max_tokens"]), M=M)
    codigo, aviso = codigo_de_error(campos), None
    if codigo in LIMITES_DE_GASTO:
        aviso = (f"el servidor contestó {estado} ({codigo}): {mensaje.rstrip('.')}. Es "
                 f"{LIMITES_DE_GASTO[codigo]}, no un exceso de un momento: cada petición fallará igual "
                 "hasta que el límite se renueve o lo suba quien administra la cuenta")
    elif codigo:
        aviso = f"el servidor contestó {estado} ({codigo}): {mensaje}"
    elif estado == 404 and direccion:
        aviso = f"el servidor contestó 404 a POST {direccion}: {mensaje.rstrip('.')}"
        base = direccion.removesuffix(RUTA)
        if base.endswith("/v1"):
            aviso += (f". La URL base acaba en /v1, y el adaptador ya añade {RUTA}: quita ese /v1 "
                      f"de ANTHROPIC_BASE_URL (p. ej. {base.removesuffix('/v1')})")
    return ErrorDelModelo(estado, mensaje, aviso, cabeceras, codigo)


def error_de_esquema(url):
    """Un ErrorDelModelo si `url` no es http:// ni https:// (lo único que habla el adaptador), o None."""
    if urllib.parse.urlsplit(url).scheme.lower() in ("http", "https"):
        return None
    idea = f" (¿querías decir http://{url}?)" if "://" not in url else ""
    return ErrorDelModelo(None, f"la URL «{url}» no empieza por http:// ni https://, y el adaptador solo "
                                f"habla HTTP: corrige ANTHROPIC_BASE_URL{idea}", causa="esquema")


def error_de_conexion(error, url, espera, cuerpo=None):
    """El ErrorDelModelo de una petición que no llegó a tener respuesta: `error` es lo que lanzó
    urllib (un URLError con el motivo dentro, o la excepción de la red tal cual)."""
    motivo = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(motivo, CuerpoSinAcabar) and motivo.por_el_cuerpo:
        causa, aviso = "tiempo", (f"{url} mandó las cabeceras, pero el cuerpo no ha llegado entero en los "
                                  f"{cuerpo:.3g} s que tiene después de ellas, y se ha dejado de esperar. Un "
                                  "servidor que ya tiene su respuesta la manda de golpe: se ha atascado él, o "
                                  "la red")
    elif isinstance(motivo, CuerpoSinAcabar):
        causa, aviso = "tiempo", (f"{url} empezó a contestar, pero la respuesta no ha llegado entera en "
                                  f"{espera:.3g} s y se ha dejado de esperar. Un servidor que ya tiene su "
                                  "respuesta la manda de golpe: se ha atascado él, o la red")
    elif isinstance(motivo, socket.gaierror):
        causa, aviso = "nombre", (f"no encuentro la máquina «{urllib.parse.urlsplit(url).hostname}» de "
                                  f"{url}: su nombre no se resuelve ({motivo}). Mira que ANTHROPIC_BASE_URL "
                                  "esté bien escrita")
    elif isinstance(motivo, ssl.SSLCertVerificationError):
        causa, aviso = "certificado", (f"el certificado de {url} no es válido ({motivo.verify_message}): "
                                       "la conexión no sería segura, y esperar no lo arregla")
    elif isinstance(motivo, ConnectionRefusedError):
        causa, aviso = "rechazada", f"no hay ningún servidor en {url} (conexión rechazada). {ARRANCA_UNO}"
    elif isinstance(motivo, TimeoutError):
        causa, aviso = "tiempo", (f"{url} no ha dicho nada en {espera:.3g} s y se ha dejado de esperar "
                                  "(la espera se cambia con `espera` al crear el ModeloAPI)")
    elif isinstance(motivo, (ConnectionError, http.client.HTTPException)):
        causa, aviso = "cortada", (f"la conexión con {url} se cortó antes de que llegara la respuesta "
                                   f"entera ({type(motivo).__name__})")
    else:
        causa, aviso = "red", f"no llego a {url}: {motivo}"
    return ErrorDelModelo(None, aviso, causa=causa)


def leer_entera(respuesta, fin, por_el_cuerpo=False):
    """El cuerpo entero de `respuesta`, o CuerpoSinAcabar(por_el_cuerpo) si no ha llegado entero en
    el instante `fin` (de time.monotonic). Un temporizador corta la conexión en `fin`: cerrarla
    despierta a la lectura que espera, llegue el cuerpo a medias o a gotas."""
    try:
        conexion = socket.socket(fileno=os.dup(respuesta.fileno()))  # la misma conexión, otro descriptor
    except (OSError, ValueError):  # ya no queda conexión: lo que falte por leer está en memoria
        return respuesta.read()
    cortada = threading.Event()

    def cortar():
        cortada.set()
        try:
            conexion.shutdown(socket.SHUT_RDWR)
        except OSError:  # ya estaba cerrada
            pass
    temporizador = threading.Timer(max(fin - time.monotonic(), 0), cortar)
    temporizador.start()
    try:
        crudo = respuesta.read()
    except (OSError, http.client.HTTPException):
        if not cortada.is_set():
            raise  # se cortó por otra cosa
    finally:
        temporizador.cancel()
        conexion.close()
    if cortada.is_set():  # también si acabó justo a la vez: un reintento la repite
        raise CuerpoSinAcabar(por_el_cuerpo)
    return crudo


def bloques_y_usage(crudo):
    """(content, usage) de una respuesta 200; ErrorDelModelo 200 si lo que llegó no es una respuesta
    de la API de Messages (el SDK oficial tampoco reintenta eso: no es un error de estado HTTP)."""
    texto = crudo.decode("utf-8", "replace")
    try:
        respuesta = json.loads(texto)
    except ValueError:
        que, pista = f"no es JSON (empieza por «{' '.join(texto[:60].split())}…»)", (
            " Una página HTML suele venir de un proxy, de una pasarela o del portal de una red, no del modelo.")
    else:
        faltan = [c for c, tipo in (("content", list), ("usage", dict))
                  if not isinstance(respuesta, dict) or not isinstance(respuesta.get(c), tipo)]
        if not faltan:
            return bloques_de(respuesta), respuesta["usage"]
        que, pista = f"es un JSON sin {' ni '.join(f'`{c}`' for c in faltan)}", ""
    raise ErrorDelModelo(200, texto[:500], f"el servidor contestó 200, pero lo que mandó {que}: no es una "
                                           f"respuesta de la API de Messages.{pista} Mira que "
                                           "ANTHROPIC_BASE_URL apunte a un servidor que la hable")


class ModeloAPI:
    """Un modelo al otro lado de HTTP. `ModeloAPI("guion:arregla")(M, HERRAMIENTAS)` → bloques.

    `espera`: los segundos que puede durar cada petición entera, cuerpo incluido; `cuerpo`, los
    que puede tardar el cuerpo tras las cabeceras (None: lo que quede de `espera`). Ver el
    docstring del módulo."""

    def __init__(self, modelo="guion:arregla", url=None, max_tokens=MAX_TOKENS, espera=ESPERA, cuerpo=None):
        self.modelo, self.max_tokens, self.espera, self.cuerpo = modelo, max_tokens, espera, cuerpo
        self.url = (url or os.environ.get("ANTHROPIC_BASE_URL") or URL_DE_ENSAYO).rstrip("/")
        self.usage = None

    def __call__(self, M, herramientas=()):
        if (error := error_de_esquema(self.url)) is not None:
            raise error
        cuerpo = json.dumps(peticion(M, herramientas, self.modelo, self.max_tokens)).encode()
        cabeceras = {"content-type": "application/json", "anthropic-version": VERSION}
        if os.environ.get("ANTHROPIC_API_KEY"):
            cabeceras["x-api-key"] = os.environ["ANTHROPIC_API_KEY"]
        direccion = self.url + RUTA
        pedido = urllib.request.Request(direccion, cuerpo, cabeceras, method="POST")
        fin = time.monotonic() + self.espera  # la petición entera, cuerpo incluido
        try:
            try:
                with urllib.request.urlopen(pedido, timeout=self.espera) as r:
                    crudo = leer_entera(r, *self.fin_del_cuerpo(fin))
            except urllib.error.HTTPError as e:  # una respuesta con un estado de error: la hubo
                texto = leer_entera(e, *self.fin_del_cuerpo(fin)).decode("utf-8", "replace")
                raise error_del_servidor(e.code, texto, direccion, list(M), e.headers) from None
        except (OSError, http.client.HTTPException) as e:  # no la hubo, o llegó a medias
            raise error_de_conexion(e, self.url, self.espera, self.cuerpo) from None
        bloques, self.usage = bloques_y_usage(crudo)
        return bloques

    def fin_del_cuerpo(self, fin):
        """(instante en que se deja de esperar el cuerpo, ¿es por `cuerpo`?), con las cabeceras ya
        llegadas: `fin` (el de la petición entera) o, si `cuerpo` acaba antes, ahora + `cuerpo`."""
        if self.cuerpo is None or time.monotonic() + self.cuerpo >= fin:
            return fin, False
        return time.monotonic() + self.cuerpo, True
