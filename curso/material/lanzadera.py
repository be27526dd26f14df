"""Para el simulacro de caídas (lección 06, sus tests y `medir`): hijos hechos con `fork` de un proceso que ya importó el harness, en vez de un intérprete nuevo cada vez.

El simulacro lanza cientos de procesos que reanudan una ejecución y mueren con SIGKILL. Cada uno,
lanzado como `python -S -c CÓDIGO`, arranca Python e importa el harness entero (agentes, efectos,
pasos, todo_junto... unos treinta módulos) antes de dar su primer paso: en esta máquina, unos
0,1–0,2 s de CPU por proceso, la mayor parte de lo que cuesta una caída. Una *lanzadera* es un
proceso que arranca una vez, importa esos módulos desde la carpeta `punto` y espera; cada hijo
que se le pide nace de él con `fork` (una copia del proceso, con los módulos ya cargados), pone su
entorno, su carpeta y sus argumentos, y corre el mismo código que correría el intérprete nuevo.

Lo que se mira de un hijo no cambia: es un proceso de verdad, con su pid, que muere de verdad con
SIGKILL; su salida y sus errores van por tuberías propias (pasadas a la lanzadera por el socket,
`socket.send_fds`), y su código de salida (−9 si lo mató SIGKILL) llega de la lanzadera, que es
quien lo recoge. `Hijo` tiene lo que el simulacro usa de `subprocess.Popen`: `pid`, `stdout`,
`stderr`, `poll`, `wait`, `communicate`, `kill` y `returncode`.

Cuándo se hace una nueva: la lanzadera de una carpeta vale mientras sus módulos no cambian
(`huella`: el contenido de sus .py); si el alumno reescribe uno, la siguiente petición arranca
otra. Si un módulo no se puede importar, la lanzadera no carga ninguno y cada hijo los importa
él, como el intérprete nuevo: el error sale igual, en su stderr. Sin `fork` (Windows) o con
`CURSO_SIN_LANZADERA=1`, `lanzar` usa `subprocess.Popen` como antes: así se mide lo que ahorra
(`python -m curso medir todo` con y sin la variable).

La lanzadera muere cuando se cierra su socket: al acabar el proceso que la usa, o con `cerrar()`.
Al morir mata a los hijos que sigan vivos: no deja nada en marcha.
"""
import atexit
import hashlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

VARIABLE_SIN_LANZADERA = "CURSO_SIN_LANZADERA"
ESPERA_AL_ARRANCAR_S = 120  # lo que puede tardar en contestar la primera petición (importa el harness)
CUANTAS = 3  # lanzaderas vivas a la vez en un proceso (una por carpeta de módulos); la más vieja se cierra

# El proceso lanzadera. Argumentos: el descriptor de su socket, la carpeta de los módulos y los
# módulos que importa. Cada petición es un mensaje (4 bytes con su largo y JSON: código,
# argumentos, entorno, carpeta) con dos o tres descriptores (la salida y los errores del hijo, y su
# entrada si la tiene; si no, /dev/null). Contesta
# «P pid» al nacer cada hijo y «E pid estado» (el de waitpid) cuando muere.
LANZADERA = r'''
import json, os, selectors, signal, socket, struct, sys, traceback

fd, punto, *modulos = sys.argv[1:]
canal = socket.socket(fileno=int(fd))
sys.path.insert(0, punto)
antes = set(sys.modules)
try:
    for modulo in modulos:
        __import__(modulo)
except BaseException:
    # Un módulo que no se importa: ninguno cargado, y cada hijo lo intenta él (y da el error él).
    for nombre in set(sys.modules) - antes:
        del sys.modules[nombre]

lectura, escritura = os.pipe()
os.set_blocking(escritura, False)
signal.set_wakeup_fd(escritura)
signal.signal(signal.SIGCHLD, lambda *_: None)
vivos = set()


def enviar(texto):
    canal.sendall(texto.encode() + b"\n")


def recibir():
    cabeza, descriptores, _, _ = socket.recv_fds(canal, 4, 3)
    if not cabeza:
        return None, []
    while len(cabeza) < 4:
        cabeza += canal.recv(4 - len(cabeza))
    largo, = struct.unpack("!I", cabeza)
    cuerpo = b""
    while len(cuerpo) < largo:
        trozo = canal.recv(largo - len(cuerpo))
        if not trozo:
            return None, descriptores
        cuerpo += trozo
    return json.loads(cuerpo), descriptores


def hijo(peticion, salida, errores, entrada=None):
    canal.close()
    os.close(lectura)
    os.close(escritura)
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if entrada is None:
        entrada = os.open(os.devnull, os.O_RDONLY)
    os.dup2(entrada, 0)
    os.dup2(salida, 1)
    os.dup2(errores, 2)
    for d in (entrada, salida, errores):
        os.close(d)
    os.chdir(peticion["carpeta"])
    os.environ.clear()
    os.environ.update(peticion["entorno"])
    sys.argv = ["-c", *peticion["argumentos"]]
    principal = type(sys)("__main__")
    sys.modules["__main__"] = principal
    codigo = 0
    try:
        exec(compile(peticion["codigo"], "<string>", "exec"), principal.__dict__)
    except SystemExit as salida_:
        if salida_.code is None:
            codigo = 0
        elif isinstance(salida_.code, int):
            codigo = salida_.code
        else:
            print(salida_.code, file=sys.stderr)
            codigo = 1
    except BaseException:
        tipo, valor, traza = sys.exc_info()
        traceback.print_exception(tipo, valor, traza.tb_next)  # sin la línea de la lanzadera
        codigo = 1
    finally:
        for flujo in (sys.stdout, sys.stderr):
            try:
                flujo.flush()
            except BaseException:
                pass
    os._exit(codigo)


def recoger():
    while vivos:
        try:
            pid, estado = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        vivos.discard(pid)
        enviar(f"E {pid} {estado}")


selector = selectors.DefaultSelector()
selector.register(canal, selectors.EVENT_READ)
selector.register(lectura, selectors.EVENT_READ)
try:
    while True:
        for clave, _ in selector.select():
            if clave.fileobj is lectura:
                os.read(lectura, 4096)
                recoger()
                continue
            peticion, descriptores = recibir()
            if peticion is None:
                raise SystemExit
            pid = os.fork()
            if pid == 0:
                hijo(peticion, *descriptores)
            for d in descriptores:
                os.close(d)
            vivos.add(pid)
            enviar(f"P {pid}")
        recoger()
finally:
    for pid in vivos:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
'''


def disponible():
    """¿Se pueden hacer hijos con una lanzadera aquí? (Hace falta `fork` y `socket.send_fds`.)"""
    return (hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")
            and not os.environ.get(VARIABLE_SIN_LANZADERA))


def huella(punto):
    """El contenido de los .py de `punto`, resumido: si cambia uno, cambia la huella."""
    h = hashlib.sha256()
    for ruta in sorted(Path(punto).glob("*.py")):
        h.update(ruta.name.encode() + b"\0" + ruta.read_bytes() + b"\0")
    return h.hexdigest()


class Hijo:
    """Un hijo de una lanzadera, con lo que el simulacro usa de `subprocess.Popen`."""

    def __init__(self, lanzadera, pid, stdout, stderr, orden, stdin=None):
        self._lanzadera = lanzadera
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.args = orden
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            estado = self._lanzadera._estado(self.pid, 0)
            if estado is not None:
                self.returncode = os.waitstatus_to_exitcode(estado)
        return self.returncode

    def wait(self, timeout=None):
        if self.returncode is None:
            estado = self._lanzadera._estado(self.pid, timeout)
            if estado is None:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self.returncode = os.waitstatus_to_exitcode(estado)
        return self.returncode

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def send_signal(self, senal):
        if self.poll() is None:
            try:
                os.kill(self.pid, senal)
            except ProcessLookupError:
                pass

    def communicate(self, timeout=None):
        """(salida, errores) hasta que el hijo cierra las dos y termina, como `Popen.communicate`:
        lee de los descriptores, sin pasar por lo que ya guardara el objeto fichero. Cierra su
        entrada, si la tiene (no escribe nada en ella)."""
        if self.stdin is not None and not self.stdin.closed:
            self.stdin.close()
        limite = None if timeout is None else time.monotonic() + timeout
        flujos = [f for f in (self.stdout, self.stderr) if f is not None and not f.closed]
        abiertos = {f.fileno(): f for f in flujos}
        leido = {id(f): [] for f in flujos}
        while abiertos:
            resto = None if limite is None else max(0.0, limite - time.monotonic())
            listos, _, _ = select.select(list(abiertos), [], [], resto)
            if not listos:
                raise subprocess.TimeoutExpired(self.args, timeout)
            for fd in listos:
                trozo = os.read(fd, 65536)
                if trozo:
                    leido[id(abiertos[fd])].append(trozo)
                else:
                    abiertos.pop(fd).close()
        self.wait(None if limite is None else max(0.0, limite - time.monotonic()))
        return tuple(None if f is None else b"".join(leido.get(id(f), [])).decode("utf-8", "replace")
                     for f in (self.stdout, self.stderr))

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for f in (self.stdin, self.stdout, self.stderr):
            if f is not None:
                f.close()
        self.wait()


class Lanzadera:
    """Un proceso lanzadera con los `modulos` de `punto` ya importados (ver el docstring del módulo)."""

    def __init__(self, punto, modulos, entorno=None):
        self.punto = str(punto)
        self.huella = huella(punto)
        mio, suyo = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._canal = mio
        self._proceso = subprocess.Popen(
            [sys.executable, "-S", "-c", LANZADERA, str(suyo.fileno()), self.punto, *modulos],
            pass_fds=[suyo.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            env=entorno, cwd=self.punto)
        suyo.close()
        self._pedir = threading.Lock()  # una petición a la vez: la respuesta «P pid» es de la última
        self._nacidos = []  # los «P pid» que llegan, para quien pidió
        self._estados = {}  # {pid: estado de waitpid} de los hijos que han muerto
        self._cambio = threading.Condition()
        self._abierta = True
        self._dueno = os.getpid()  # un hijo hecho con fork hereda el socket, pero no es quien la cierra
        threading.Thread(target=self._escuchar, daemon=True, name="lanzadera").start()

    def _escuchar(self):
        """Lee lo que dice la lanzadera: cada «P pid» y cada «E pid estado»."""
        with self._canal.makefile("rb") as lineas:
            for linea in lineas:
                clase, *datos = linea.decode().split()
                with self._cambio:
                    if clase == "P":
                        self._nacidos.append(int(datos[0]))
                    else:
                        self._estados[int(datos[0])] = int(datos[1])
                    self._cambio.notify_all()
        with self._cambio:
            self._abierta = False
            self._cambio.notify_all()

    def _esperar(self, hay, timeout):
        """Espera (con el cerrojo tomado) a que `hay()` sea cierto; False si pasa `timeout` antes."""
        limite = None if timeout is None else time.monotonic() + timeout
        while not hay():
            if not self._abierta:
                return False
            resto = None if limite is None else limite - time.monotonic()
            if resto is not None and resto <= 0:
                return False
            self._cambio.wait(resto)
        return True

    def _estado(self, pid, timeout):
        with self._cambio:
            if self._esperar(lambda: pid in self._estados, timeout):
                return self._estados.pop(pid)
            return None

    def lanzar(self, codigo, argumentos=(), entorno=None, cwd=None, entrada=False):
        """Un `Hijo` que corre `codigo` como `python -S -c codigo *argumentos`, con `entorno` (el
        de este proceso si no se da) y en la carpeta `cwd` (la de este proceso si no se da). Con
        `entrada`, su `stdin` es una tubería en la que escribir; si no, /dev/null."""
        peticion = json.dumps({"codigo": codigo, "argumentos": [str(a) for a in argumentos],
                               "entorno": dict(os.environ if entorno is None else entorno),
                               "carpeta": str(cwd or os.getcwd())}).encode()
        salida, errores = os.pipe(), os.pipe()
        suya = os.pipe() if entrada else None
        try:
            with self._pedir:
                socket.send_fds(self._canal, [struct.pack("!I", len(peticion)) + peticion],
                                [salida[1], errores[1], *([suya[0]] if suya else [])])
                with self._cambio:
                    if not self._esperar(lambda: self._nacidos, ESPERA_AL_ARRANCAR_S):
                        raise RuntimeError("La lanzadera del simulacro no contesta "
                                           f"(¿se cuelga al importar los módulos de {self.punto}?).")
                    pid = self._nacidos.pop(0)
        except BaseException:
            for d in (*salida, *errores, *(suya or ())):
                os.close(d)
            raise
        os.close(salida[1])
        os.close(errores[1])
        if suya:
            os.close(suya[0])
        return Hijo(self, pid, open(salida[0], encoding="utf-8", errors="replace"),
                    open(errores[0], encoding="utf-8", errors="replace"), ["python", "-S", "-c", "…", *argumentos],
                    open(suya[1], "w", encoding="utf-8") if suya else None)

    def viva(self):
        return self._abierta and self._proceso.poll() is None

    def cerrar(self):
        """Cierra el socket: la lanzadera mata a los hijos que le queden y termina. En un proceso
        hecho con fork del que la arrancó, solo suelta su copia del socket."""
        if os.getpid() != self._dueno:
            self._canal.close()
            return
        try:
            self._canal.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._canal.close()
        try:
            self._proceso.wait(10)
        except subprocess.TimeoutExpired:
            self._proceso.kill()
            self._proceso.wait()


_lanzaderas = {}  # {carpeta: Lanzadera}, de la más vieja a la más nueva
_cerrojo = threading.Lock()


def lanzadera_de(punto, modulos, entorno=None):
    """La lanzadera de `punto` con `modulos`: la de antes si sus módulos no han cambiado y sigue viva;
    si no, una nueva. Se guardan las CUANTAS más recientes."""
    clave = (str(punto), tuple(modulos))
    with _cerrojo:
        vieja = _lanzaderas.pop(clave, None)
        if vieja is not None and vieja.viva() and vieja.huella == huella(punto):
            _lanzaderas[clave] = vieja
            return vieja
        if vieja is not None:
            vieja.cerrar()
        for otra in [c for c, l in _lanzaderas.items() if not Path(c[0]).is_dir()] + list(_lanzaderas)[:-CUANTAS + 1]:
            if otra in _lanzaderas:
                _lanzaderas.pop(otra).cerrar()
        nueva = _lanzaderas[clave] = Lanzadera(punto, modulos, entorno)
        return nueva


@atexit.register
def cerrar_todas():
    """Cierra las lanzaderas de este proceso (al salir, o cuando se quiera)."""
    with _cerrojo:
        while _lanzaderas:
            _lanzaderas.popitem()[1].cerrar()
