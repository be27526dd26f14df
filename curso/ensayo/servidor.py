"""El servidor de ensayo por HTTP: el motor (`motor.py`) detrás de un puerto de 127.0.0.1.

Habla la parte de la API de Messages de Anthropic que usa el curso, sin streaming:

- `POST /v1/messages`: la respuesta del guion que nombra `model`. La cabecera
  `x-ensayo-segundos-modelados` dice cuánto habría tardado en una máquina modesta (un modelo,
  no un reloj: ver `motor.segundos_modelados`).
- `POST /v1/messages/count_tokens`: `{"input_tokens": N}`.

Los errores llevan la forma de Anthropic, `{"type": "error", "error": {"type", "message"}}`,
con el mensaje en castellano. Acepta e ignora `anthropic-version` y `x-api-key`. No escribe
nada por pantalla al atender una petición: las salidas de los cuadernos deben ser siempre las
mismas.

Desde un cuaderno:

    servidor = arrancar_en_segundo_plano()
    os.environ["ANTHROPIC_BASE_URL"] = servidor.url

Desde una terminal: `python -m curso servidor [--puerto 8765] [--ventana 8192]`.
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from curso.ensayo.motor import VENTANA_POR_DEFECTO, Ensayo, ErrorPeticion

ANFITRION = "127.0.0.1"  # solo la propia máquina: el curso no sale a la red
PUERTO_POR_DEFECTO = 8765  # el 8080 es el de llama-server: así pueden convivir los dos
TAMANO_MAXIMO = 32 * 1024 * 1024  # bytes de un cuerpo; más es un error, no una petición del curso
RUTA_MENSAJES = "/v1/messages"
RUTA_CONTAR = "/v1/messages/count_tokens"
CABECERA_SEGUNDOS = "x-ensayo-segundos-modelados"
ESPERA_AL_PARAR = 0.05  # segundos: cada cuánto mira el servidor si le han pedido parar


class _Manejador(BaseHTTPRequestHandler):
    """Atiende una conexión. Cada respuesta es JSON y cierra la conexión (HTTP/1.0)."""

    server_version = "ServidorEnsayo/1.0"
    default_request_version = "HTTP/1.0"  # también una petición rota recibe línea de estado

    def version_string(self):
        return self.server_version

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
        except ErrorPeticion as e:
            self._responder(e.estado, e.cuerpo())
        except Exception as e:  # un fallo del propio servidor: 500 con mensaje, nunca una traza
            error = ErrorPeticion(500, "api_error",
                                  "error interno del servidor de ensayo (un fallo del curso, no "
                                  "de tu petición): %s: %s" % (type(e).__name__, e))
            self._responder(500, error.cuerpo())

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
        """El cuerpo JSON de la petición; `ErrorPeticion` si falta, sobra o no es JSON."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raise ErrorPeticion(400, "invalid_request_error",
                                "el servidor de ensayo no lee cuerpos por trozos (chunked): "
                                "envía el cuerpo entero con `Content-Length`.")
        longitud = self.headers.get("Content-Length")
        if longitud is None or not longitud.strip().isdigit():
            raise ErrorPeticion(400, "invalid_request_error",
                                "falta la cabecera `Content-Length` o no es un número de bytes: "
                                "envía el cuerpo JSON con su longitud.")
        longitud = int(longitud)
        if longitud > TAMANO_MAXIMO:
            raise ErrorPeticion(413, "request_too_large",
                                "el cuerpo mide %d bytes y el servidor de ensayo admite hasta %d."
                                % (longitud, TAMANO_MAXIMO))
        crudo = self.rfile.read(longitud)
        if len(crudo) < longitud:
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo llegó incompleto: %d de %d bytes." % (len(crudo), longitud))
        try:
            return json.loads(crudo.decode("utf-8"))
        except UnicodeDecodeError:
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo no es texto UTF-8: envía JSON en UTF-8.") from None
        except json.JSONDecodeError as e:
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo no es JSON válido (línea %d, columna %d: %s)."
                                % (e.lineno, e.colno, e.msg)) from None
        except RecursionError:
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo JSON está demasiado anidado para leerlo.") from None
        except ValueError as e:  # p. ej. un número de miles de cifras
            raise ErrorPeticion(400, "invalid_request_error",
                                "el cuerpo no se puede leer como JSON: %s." % e) from None

    def _responder(self, estado, cuerpo, cabeceras=None):
        # ensure_ascii: las letras van como \u00f1; así cualquier texto se puede enviar, incluso
        # uno con medio par sustituto que llegó en la petición y el eco repite.
        datos = json.dumps(cuerpo).encode("ascii")
        self.send_response(estado)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(datos)))
        self.send_header("request-id", "req_ensayo_%d" % self.server.siguiente_id())
        for nombre, valor in (cabeceras or {}).items():
            self.send_header(nombre, valor)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(datos)


class _ServidorHTTP(ThreadingHTTPServer):
    daemon_threads = True  # un cliente colgado no impide parar
    request_queue_size = 64  # varias conexiones a la vez no esperan a que se reintente el SYN

    def __init__(self, direccion, ensayo):
        self.ensayo = ensayo
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

        with ServidorEnsayo() as servidor:
            ...  # peticiones a servidor.url

    o `servidor = ServidorEnsayo().arrancar()` y, al final, `servidor.parar()`.
    """

    def __init__(self, puerto=0, ventana=VENTANA_POR_DEFECTO):
        self.ensayo = Ensayo(ventana)
        self._http = _ServidorHTTP((ANFITRION, puerto), self.ensayo)
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


def arrancar_en_segundo_plano(ventana=VENTANA_POR_DEFECTO):
    """Un servidor de ensayo ya arrancado en un puerto libre, para usarlo desde un cuaderno."""
    return ServidorEnsayo(0, ventana).arrancar()


# --- La línea de órdenes: python -m curso servidor ---------------------------------------------

class _Formato(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix="uso: " if prefix is None else prefix)


_TRADUCCIONES = [
    ("unrecognized arguments:", "argumentos que no reconozco:"),
    ("expected one argument", "le falta su valor"),
    ("ambiguous option:", "opción ambigua:"),
    ("could match", "puede ser"),
    ("argument ", "argumento "),
]


class _Argumentos(argparse.ArgumentParser):
    def error(self, mensaje):
        for ingles, castellano in _TRADUCCIONES:  # lo que argparse escribe en inglés
            mensaje = mensaje.replace(ingles, castellano)
        self.print_usage(sys.stderr)
        self.exit(2, "error: %s\n" % mensaje)


def _entero_entre(minimo, maximo, que):
    def convertir(texto):
        try:
            valor = int(texto)
        except ValueError:
            raise argparse.ArgumentTypeError("%s debe ser un número entero, no «%s»" % (que, texto))
        if not minimo <= valor <= maximo:
            raise argparse.ArgumentTypeError("%s debe estar entre %d y %d, no %d"
                                             % (que, minimo, maximo, valor))
        return valor
    return convertir


def _argumentos():
    argumentos = _Argumentos(
        prog="python -m curso servidor", formatter_class=_Formato, add_help=False,
        description="Arranca el servidor de ensayo: un modelo guionizado que habla la API de "
                    "Messages de Anthropic en 127.0.0.1, sin red y sin clave.")
    argumentos._optionals.title = "opciones"
    argumentos.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                            help="muestra esta ayuda y sale")
    argumentos.add_argument("--puerto", type=_entero_entre(0, 65535, "el puerto"),
                            default=PUERTO_POR_DEFECTO,
                            help="el puerto de 127.0.0.1 (por defecto %d; 0 elige uno libre)"
                                 % PUERTO_POR_DEFECTO)
    argumentos.add_argument("--ventana", type=_entero_entre(1, 10 ** 9, "la ventana"),
                            default=VENTANA_POR_DEFECTO,
                            help="la ventana en tokens (por defecto %d)" % VENTANA_POR_DEFECTO)
    return argumentos


def main(argv=None):
    """`python -m curso servidor`: atiende hasta Ctrl-C. Devuelve el código de salida."""
    opciones = _argumentos().parse_args(argv)
    try:
        servidor = ServidorEnsayo(opciones.puerto, opciones.ventana)
    except OSError as e:
        print("No puedo abrir el puerto %d de %s: %s.\n¿Hay otro servidor escuchando? Para ese, "
              "o elige otro puerto con --puerto." % (opciones.puerto, ANFITRION, e.strerror or e))
        return 1
    print("Servidor de ensayo en %s (ventana de %d tokens)." % (servidor.url, servidor.ventana))
    print("Para usarlo desde otra terminal:")
    print("    export ANTHROPIC_BASE_URL=%s" % servidor.url)
    print("Ctrl-C para pararlo.", flush=True)
    try:
        servidor.servir()
    except KeyboardInterrupt:
        print("\nServidor de ensayo parado.")
    finally:
        servidor.parar()
    return 0
