"""Para los cuadernos y `python -m curso servidor`: el motor del ensayo detrás de un puerto de 127.0.0.1, por HTTP.

La capa HTTP entera del servidor de ensayo: el manejador, sus errores y cómo arrancarlo.

Habla la parte de la API de Messages de Anthropic que usa el curso, sin streaming:

- `POST /v1/messages`: la respuesta del guion que nombra `model`. La cabecera
  `x-ensayo-segundos-modelados` dice cuánto habría tardado en una máquina modesta (un modelo,
  no un reloj: ver `motor.segundos_modelados`).
- `POST /v1/messages/count_tokens`: `{"input_tokens": N}`.

Los errores llevan la forma de Anthropic, `{"type": "error", "error": {"type", "message"}}`,
con el mensaje en castellano (y, los del plan de fallos que la traen en la API, con su
`details.error_code` y sus cabeceras, como `retry-after`: ver fallos.py). Acepta e ignora `anthropic-version` y `x-api-key`. No escribe
nada por pantalla al atender una petición: las salidas de los cuadernos deben ser siempre las
mismas.

Lo que puede costar una petición se acota antes de leerla: sus bytes (`TAMANO_MAXIMO`), sus
elementos de JSON (`ELEMENTOS_MAXIMOS`) y las cifras de sus enteros (`CIFRAS_MAXIMAS`); pasarse
es un 413 o un 400 que el cliente puede leer. Un cliente que se para a media petición recibe
un 408 a los `ESPERA_DE_UNA_CONEXION` segundos, y su conexión se cierra.

Desde un cuaderno:

    servidor = arrancar_en_segundo_plano()
    os.environ["ANTHROPIC_BASE_URL"] = servidor.url

Desde una terminal: `python -m curso servidor [--puerto 8765] [--ventana 8192] [--fallos PLAN]`.
"""
import argparse
import json
import os
import re
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from curso.ensayo.fallos import TROZOS_DEL_GOTEO, Corte, Cruda, con_fallos, leer_plan
from curso.ensayo.motor import Ensayo, ErrorPeticion
from curso.ensayo.tokens import VENTANA

ANFITRION = "127.0.0.1"  # solo la propia máquina: el curso no sale a la red
PUERTO_POR_DEFECTO = 8765  # el 8080 es el de llama-server: así pueden convivir los dos
# Lo que puede costar una petición. La más grande del curso (la medición del servidor, 8000
# tokens) mide unos 40 KB; cualquier cosa mucho mayor es un error, no una petición del curso.
TAMANO_MAXIMO = 2 * 1024 * 1024  # bytes de un cuerpo: cincuenta veces la petición más grande
# Los bytes no bastan: un `{}` son 3 bytes de texto y unos 64 de memoria una vez leído. Cada
# elemento de JSON empieza tras una coma o tras el corchete o la llave que abre su lista u
# objeto, así que contarlos en los bytes, antes de leer nada, acota cuántos habrá. Dentro de
# un texto también son signos, y cada signo es un token: 100 000 no caben en ninguna ventana
# del curso, y una petición de verdad trae unos cientos.
ELEMENTOS_MAXIMOS = 100_000
CIFRAS_MAXIMAS = 1000  # de un entero del cuerpo; convertir uno más largo cuesta tiempo cuadrático
ESPERA_DE_UNA_CONEXION = 30.0  # segundos sin recibir nada: quien se para a media petición se va
# Un cuerpo demasiado grande se lee y se tira (sin guardarlo) antes de cerrar: el cliente no
# lee la respuesta hasta haber enviado el cuerpo entero, y si el servidor cierra antes, se
# encuentra la conexión rota (BrokenPipe) y no llega a ver el 413. Hasta un tope de bytes y de
# tiempo: más allá, se cierra igual.
DESCARTE_MAXIMO = 256 * 1024 * 1024  # bytes
ESPERA_DEL_DESCARTE = 30.0  # segundos, como mucho, leyendo lo que sobra
TROZO_DEL_DESCARTE = 64 * 1024  # bytes que se leen (y se tiran) de cada vez
RUTA_MENSAJES = "/v1/messages"
RUTA_CONTAR = "/v1/messages/count_tokens"
CABECERA_SEGUNDOS = "x-ensayo-segundos-modelados"
ESPERA_AL_PARAR = 0.05  # segundos: cada cuánto mira el servidor si le han pedido parar


class _Manejador(BaseHTTPRequestHandler):
    """Atiende una conexión. Cada respuesta es JSON y cierra la conexión (HTTP/1.0)."""

    server_version = "ServidorEnsayo/1.0"
    default_request_version = "HTTP/1.0"  # también una petición rota recibe línea de estado

    _sin_leer = 0  # bytes de un cuerpo rechazado sin leerlo, que se tiran antes de cerrar

    def version_string(self):
        return self.server_version

    @property
    def timeout(self):
        """Los segundos que se espera a un cliente parado. `StreamRequestHandler.setup` los pone
        en el socket: una lectura o una escritura que se para más lanza TimeoutError, y la
        conexión (y su hilo) se acaba en vez de quedarse esperando para siempre."""
        return self.server.espera

    def log_message(self, formato, *argumentos):
        """Silencio: sin registro de peticiones en stderr."""

    def do_POST(self):
        ruta = self.path.split("?", 1)[0].rstrip("/")
        if ruta not in (RUTA_MENSAJES, RUTA_CONTAR):
            self._no_encontrado()
            return
        try:
            peticion = self._leer_cuerpo()
            ensayo = self.server.ensayo
            if ruta == RUTA_CONTAR:
                self._responder(200, {"input_tokens": ensayo.contar(peticion)})
            else:
                respuesta, segundos = ensayo.responder_con_tiempo(peticion)
                self._responder(200, respuesta, {CABECERA_SEGUNDOS: "%.2f" % segundos})
        except Corte:  # un plan de fallos (lección 06): la conexión se cierra sin contestar
            self.close_connection = True
            return
        except Cruda as e:  # otro del plan: una respuesta que no es de la API, o que se para a medias
            self._responder_cruda(e)
            return
        except ErrorPeticion as e:
            self._responder(e.estado, e.cuerpo(), getattr(e, "cabeceras", None))
        except Exception as e:  # un fallo del propio servidor: 500 con mensaje, nunca una traza
            error = ErrorPeticion(500, "api_error",
                                  "error interno del servidor de ensayo (un fallo del curso, no "
                                  "de tu petición): %s: %s" % (type(e).__name__, e))
            self._responder(500, error.cuerpo())
        if self._sin_leer:
            self._descartar()

    def __getattr__(self, nombre):
        # GET, PUT, DELETE... y cualquier otro método: 404 con cuerpo de Anthropic.
        if nombre.startswith("do_"):
            return self._no_encontrado
        raise AttributeError(nombre)

    def _no_encontrado(self):
        error = ErrorPeticion(404, "not_found_error",
                              "%s %s no existe en el servidor de ensayo: usa POST %s o POST %s."
                              % (self.command, self.path[:200], RUTA_MENSAJES, RUTA_CONTAR))
        self._responder(404, error.cuerpo())

    def send_error(self, codigo, mensaje=None, explicacion=None):
        """Lo que `http.server` rechaza antes de llegar aquí (una línea de petición rota...),
        también con cuerpo JSON de Anthropic en vez de la página HTML de `http.server`."""
        self.close_connection = True
        tipo = "invalid_request_error" if 400 <= codigo < 500 else "api_error"
        error = ErrorPeticion(codigo, tipo, "la petición HTTP no es válida (%d): %s."
                              % (codigo, mensaje or "sin más detalle"))
        self._responder(codigo, error.cuerpo())

    def _leer_cuerpo(self):
        """El cuerpo JSON de la petición; `ErrorPeticion` si falta, sobra, cuesta demasiado o no
        es JSON. Lo que cuesta se mira antes de leer: los bytes, por `Content-Length`, y los
        elementos, en los bytes (ver `ELEMENTOS_MAXIMOS`)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise ErrorPeticion(400, "invalid_request_error",
                                "el servidor de ensayo no lee cuerpos por trozos (chunked): "
                                "envía el cuerpo entero con `Content-Length`.")
        longitud = _longitud(self.headers.get("Content-Length"))
        if longitud is None or longitud > TAMANO_MAXIMO:
            self._sin_leer = DESCARTE_MAXIMO if longitud is None else longitud
            mide = ("%d bytes" % longitud if longitud is not None
                    else "un número de bytes de más de %d cifras" % CIFRAS_DE_UNA_LONGITUD)
            raise ErrorPeticion(413, "request_too_large",
                                "el cuerpo mide %s y el servidor de ensayo admite hasta %d bytes "
                                "(%d MiB); la petición más grande del curso mide unos 40 KB."
                                % (mide, TAMANO_MAXIMO, TAMANO_MAXIMO // 2 ** 20))
        try:
            crudo = self.rfile.read(longitud)
        except TimeoutError:
            raise ErrorPeticion(408, "invalid_request_error",
                                "el cuerpo dejó de llegar a medias: %g s sin recibir nada. Envía "
                                "la petición entera de una vez." % self.timeout) from None
        if len(crudo) < longitud:
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo llegó incompleto: %d de %d bytes." % (len(crudo), longitud))
        elementos = crudo.count(b",") + crudo.count(b"[") + crudo.count(b"{")
        if elementos > ELEMENTOS_MAXIMOS:
            raise ErrorPeticion(413, "request_too_large",
                                "el cuerpo trae %d comas, corchetes y llaves, y el servidor de "
                                "ensayo admite hasta %d: cada uno puede abrir un elemento JSON, y "
                                "leerlos todos costaría demasiada memoria. Una petición del curso "
                                "trae unos cientos." % (elementos, ELEMENTOS_MAXIMOS))
        return _leer_json(crudo)

    def _descartar(self):
        """Lee y tira lo que queda del cuerpo rechazado, sin guardarlo, hasta `DESCARTE_MAXIMO`
        bytes o `ESPERA_DEL_DESCARTE` segundos: así el cliente termina de enviar y lee el 413,
        que ya se le ha mandado."""
        quedan, limite = min(self._sin_leer, DESCARTE_MAXIMO), time.monotonic() + ESPERA_DEL_DESCARTE
        self._sin_leer = 0
        try:
            while quedan > 0 and time.monotonic() < limite:
                self.connection.settimeout(max(limite - time.monotonic(), 0.001))
                trozo = self.rfile.read1(min(quedan, TROZO_DEL_DESCARTE))
                if not trozo:
                    break
                quedan -= len(trozo)
        except OSError:  # el cliente se ha ido o se ha parado: se cierra igual
            pass

    def _responder(self, estado, cuerpo, cabeceras=None):
        # ensure_ascii: las letras van como \u00f1; así cualquier texto se puede enviar, incluso
        # uno con medio par sustituto que llegó en la petición y el eco repite.
        datos = json.dumps(cuerpo).encode("ascii")
        self.send_response(estado)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(datos)))
        self.send_header("Connection", "close")  # HTTP/1.0: una petición por conexión
        self.send_header("request-id", "req_ensayo_%d" % self.server.siguiente_id())
        for nombre, valor in (cabeceras or {}).items():
            self.send_header(nombre, valor)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(datos)

    def _responder_cruda(self, cruda):
        """Escribe `cruda` (ver fallos.Cruda) tal cual. Si se para a medias, anuncia el cuerpo
        entero, manda la mitad, se calla `parada_s` segundos y cierra sin mandar el resto."""
        self.close_connection = True
        self.send_response(cruda.estado)
        self.send_header("Content-Type", cruda.tipo)
        self.send_header("Content-Length", str(len(cruda.datos)))
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_ensayo_%d" % self.server.siguiente_id())
        self.end_headers()
        if cruda.goteo_s is not None:
            tamano = -(-len(cruda.datos) // TROZOS_DEL_GOTEO)
            for desde in range(0, len(cruda.datos), tamano):
                time.sleep(cruda.goteo_s)
                self.wfile.write(cruda.datos[desde:desde + tamano])
                self.wfile.flush()
            return
        if cruda.parada_s is None:
            self.wfile.write(cruda.datos)
            return
        self.wfile.write(cruda.datos[:len(cruda.datos) // 2])
        self.wfile.flush()
        time.sleep(cruda.parada_s)


_CIFRAS_ASCII = re.compile(r"[0-9]+")  # str.isdigit() también acepta «²» y «¹», que int() no lee
CIFRAS_DE_UNA_LONGITUD = 15  # una longitud con más cifras (petabytes) ni se convierte a número


def _longitud(cabecera):
    """Los bytes que anuncia `Content-Length`, o None si tiene más de `CIFRAS_DE_UNA_LONGITUD`
    cifras; `ErrorPeticion` 400 si no es un número de bytes."""
    texto = (cabecera or "").strip()
    if not _CIFRAS_ASCII.fullmatch(texto):
        raise ErrorPeticion(400, "invalid_request_error",
                            "falta la cabecera `Content-Length` o no es un número de bytes: "
                            "envía el cuerpo JSON con su longitud.")
    return int(texto) if len(texto) <= CIFRAS_DE_UNA_LONGITUD else None


def _entero_acotado(cifras):
    """El `parse_int` de `json.loads`: un entero de hasta `CIFRAS_MAXIMAS` cifras."""
    cuantas = len(cifras.lstrip("-"))
    if cuantas > CIFRAS_MAXIMAS:
        raise ErrorPeticion(400, "invalid_request_error",
                            "el cuerpo trae un número entero de %d cifras, y el servidor de ensayo "
                            "lee enteros de hasta %d: ningún campo de la API necesita tantas."
                            % (cuantas, CIFRAS_MAXIMAS))
    return int(cifras)


# Los motivos con que `json` rechaza un texto (en inglés), en castellano. Uno que no esté aquí
# (una versión nueva de Python) se queda en «no se puede leer», nunca en inglés.
MOTIVOS_DE_JSON = [
    ("Expecting value", "se esperaba un valor"),
    ("Expecting ',' delimiter", "falta una coma"),
    ("Expecting ':' delimiter", "faltan los dos puntos tras el nombre de un campo"),
    ("Expecting property name enclosed in double quotes",
     "se esperaba el nombre de un campo entre comillas dobles"),
    ("Unterminated string", "un texto sin cerrar"),
    ("Invalid control character", "un carácter de control sin escapar dentro de un texto"),
    ("Invalid \\uXXXX escape", "un escape \\uXXXX mal escrito"),
    ("Invalid \\escape", "un escape con barra invertida que no existe"),
    ("Extra data", "sobra algo después del JSON"),
    ("Illegal trailing comma", "sobra una coma antes de cerrar"),
]


def _motivo(error):
    """El motivo de un `json.JSONDecodeError`, en castellano."""
    return next((motivo for ingles, motivo in MOTIVOS_DE_JSON if error.msg.startswith(ingles)),
                "no se puede leer")


def _leer_json(crudo):
    """El JSON de `crudo` (bytes); `ErrorPeticion` 400, con el motivo en castellano, si no lo es."""
    try:
        return json.loads(crudo.decode("utf-8"), parse_int=_entero_acotado)
    except UnicodeDecodeError:
        raise ErrorPeticion(400, "invalid_request_error",
                            "el cuerpo no es texto UTF-8: envía JSON en UTF-8.") from None
    except json.JSONDecodeError as e:
        raise ErrorPeticion(400, "invalid_request_error",
                            "el cuerpo no es JSON válido (línea %d, columna %d: %s)."
                            % (e.lineno, e.colno, _motivo(e))) from None
    except RecursionError:
        raise ErrorPeticion(400, "invalid_request_error",
                            "el cuerpo JSON está demasiado anidado para leerlo.") from None
    except ValueError:  # p. ej. un PYTHONINTMAXSTRDIGITS más bajo que CIFRAS_MAXIMAS
        raise ErrorPeticion(400, "invalid_request_error",
                            "el cuerpo trae un número que el servidor de ensayo no puede leer.") from None


class _ServidorHTTP(ThreadingHTTPServer):
    daemon_threads = True  # un cliente colgado no impide parar
    request_queue_size = 64  # varias conexiones a la vez no esperan a que se reintente el SYN

    def __init__(self, direccion, ensayo, espera):
        self.ensayo = ensayo
        self.espera = espera
        self._contador = 0
        self._cerrojo = threading.Lock()
        super().__init__(direccion, _Manejador)

    def siguiente_id(self):
        with self._cerrojo:
            self._contador += 1
            return self._contador

    def handle_error(self, peticion, direccion):
        """Silencio también aquí: un cliente que corta la conexión no deja trazas en stderr."""


class ServidorEnsayo:
    """El servidor de ensayo en 127.0.0.1. `puerto=0` elige uno libre; `url` dice cuál.
    `espera`: los segundos que aguanta a un cliente que se para a media petición.

        with ServidorEnsayo() as servidor:
            ...  # peticiones a servidor.url

    o `servidor = ServidorEnsayo().arrancar()` y, al final, `servidor.parar()`.
    `fallos`: fallos a propósito, como «529,429,corte» (ver curso/ensayo/fallos.py).
    """

    def __init__(self, puerto=0, ventana=VENTANA, espera=ESPERA_DE_UNA_CONEXION, fallos=None):
        self.ensayo = con_fallos(Ensayo(ventana), fallos)
        self._http = _ServidorHTTP((ANFITRION, puerto), self.ensayo, espera)
        self.puerto = self._http.server_address[1]
        self.url = "http://%s:%d" % (ANFITRION, self.puerto)
        self._hilo = None

    @property
    def ventana(self):
        return self.ensayo.ventana

    def arrancar(self):
        """Empieza a atender en un hilo de fondo; devuelve el propio servidor."""
        if self._hilo is None:
            self._hilo = threading.Thread(target=self._http.serve_forever, args=(ESPERA_AL_PARAR,),
                                          name="servidor-ensayo", daemon=True)
            self._hilo.start()
        return self

    def servir(self):
        """Atiende en este hilo hasta que alguien llame a `parar` (o llegue Ctrl-C)."""
        self._http.serve_forever(ESPERA_AL_PARAR)

    def parar(self):
        """Deja de atender y libera el puerto."""
        if self._hilo is not None:
            self._http.shutdown()
            self._hilo.join()
            self._hilo = None
        self._http.server_close()

    def __enter__(self):
        return self.arrancar()

    def __exit__(self, *excepcion):
        self.parar()

    def __repr__(self):
        return "ServidorEnsayo(url=%r, ventana=%d)" % (self.url, self.ventana)


def arrancar_en_segundo_plano(ventana=VENTANA):
    """Un servidor de ensayo ya arrancado en un puerto libre, para usarlo desde un cuaderno."""
    return ServidorEnsayo(0, ventana).arrancar()


# --- La línea de órdenes: python -m curso servidor ---------------------------------------------

def argumentos_servidor(analizador):
    analizador.description = ("Arranca el servidor de ensayo: un modelo guionizado que habla la API "
                              "de Messages de Anthropic en 127.0.0.1, sin red y sin clave.")
    analizador.add_argument("--puerto", metavar="P", type=analizador.entero_entre(0, 65535, "el puerto"),
                            default=PUERTO_POR_DEFECTO,
                            help="el puerto de 127.0.0.1 (por defecto %d; 0 elige uno libre)"
                                 % PUERTO_POR_DEFECTO)
    analizador.add_argument("--ventana", metavar="W", type=analizador.entero_entre(1, 10 ** 9, "la ventana"),
                            default=VENTANA,
                            help="la ventana en tokens (por defecto %d)" % VENTANA)
    analizador.add_argument("--fallos", metavar="PLAN", type=_plan_de_fallos, default=None,
                            help="fallos a propósito para cada petición distinta, en orden, p. ej. "
                                 "529,429:40,corte o gasto (ver curso/ensayo/fallos.py)")


def _plan_de_fallos(texto):
    try:
        leer_plan(texto)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return texto


def orden_servidor(opciones):
    """`python -m curso servidor`: atiende hasta Ctrl-C. Devuelve el código de salida."""
    try:
        servidor = ServidorEnsayo(opciones.puerto, opciones.ventana, fallos=opciones.fallos)
    except OSError as e:
        print("No puedo abrir el puerto %d de %s: %s.\n¿Hay otro servidor escuchando? Para ese, "
              "o elige otro puerto con --puerto." % (opciones.puerto, ANFITRION, e.strerror or e))
        return 1
    print("Servidor de ensayo en %s (ventana de %d tokens)." % (servidor.url, servidor.ventana))
    print("Para usarlo desde otra terminal:")
    print("    export ANTHROPIC_BASE_URL=%s" % servidor.url)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Lo ha heredado así (una orden en segundo plano de un guion, nohup...): Python no
        # convierte entonces Ctrl-C en KeyboardInterrupt, y prometerlo sería mentir.
        print("Este proceso ignora Ctrl-C (lo arrancaron en segundo plano): para pararlo, "
              "kill %d." % os.getpid(), flush=True)
    else:
        print("Ctrl-C para pararlo.", flush=True)
    try:
        servidor.servir()
    except KeyboardInterrupt:
        print("\nServidor de ensayo parado.")
    finally:
        servidor.parar()
    return 0
