"""Para `calificar`: corre una orden y, al acabar, no deja vivo nada de lo que ella arrancó.

Lo usan `comprobar` y `calificar` con el proceso de los tests, que ejecuta código del alumno.
Matar el grupo de procesos de pytest no basta: un proceso lanzado con `setsid` (lo que hace
cualquier demonio) está en otra sesión y otro grupo, y `pg_ctl start` deja el servidor de
PostgreSQL en la suya; un SIGKILL a pytest, además, se salta los `atexit` que lo pararían.

En Linux el guardián se declara *subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`): un proceso que
se queda huérfano por debajo de él pasa a ser hijo suyo, no de init. Así todo lo que la orden
haya arrancado, lo haga como lo haga, sigue colgando de él en /proc, y al acabar:

1. mata el grupo de la orden (lo normal: pytest y lo que no se fue a otra sesión);
2. pide a cada servidor PostgreSQL que quede una parada inmediata (SIGQUIT: se lleva a sus
   procesos y deja libre su memoria compartida) y, si es un cluster de `curso.postgres.cluster`, borra
   su carpeta;
3. manda SIGKILL a todo lo que quede, una y otra vez, hasta que no queda nada, y lo recoge.

Cada señal va por un pidfd abierto tras comprobar que el proceso es el mismo que se vio en
/proc (su hora de arranque): un número que se ha quedado libre y ha vuelto a usarse no recibe
nada. Fuera de Linux no hay subreaper ni /proc: solo se mata el grupo de la orden.

Acaba cuando la orden termina o cuando se lo piden: cerrando su entrada estándar (también si
muere quien lo lanzó: entonces la cierra el sistema) o con SIGTERM, SIGINT o SIGHUP. Sale con el
código de la orden (128 + la señal, si la mató una) o con PARADO si se lo pidieron antes.

    python -P -m curso.clase.guardian -- ORDEN [ARGUMENTOS...]

No importa nada del curso: cuanto menos carga, antes arranca.
"""
import ctypes
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # de <linux/prctl.h>
PARADO = 125  # se lo pidieron antes de que la orden acabara
PAUSA = 0.05  # cada cuánto mira si la orden ha acabado o si le piden parar
ESPERA_A_POSTGRES = 5.0  # lo que tarda de sobra una parada inmediata
ESPERA_MAXIMA = 20.0  # matando sin parar: un proceso en espera de disco (estado D) tarda en irse
PREFIJO_DE_CLUSTER = "curso-pg-"  # la carpeta de un ClusterTemporal (curso/postgres/cluster.py)


def hacerse_subreaper():
    """Pide al sistema los huérfanos de más abajo; False si no se puede (no es Linux)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def leer_stat(pid):
    """(nombre, estado, padre, arranque) de /proc/PID/stat, o None si ya no está."""
    try:
        texto = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    cierre = texto.rindex(")")
    campos = texto[cierre + 2:].split()  # campos[0] es el tercero de la tabla de proc(5)
    return texto[texto.index("(") + 1:cierre], campos[0], int(campos[1]), int(campos[19])


def procesos():
    """{pid: (nombre, estado, padre, arranque)} de todos los procesos que se ven en /proc."""
    tabla = {}
    for entrada in os.listdir("/proc"):
        if entrada.isdigit():
            datos = leer_stat(int(entrada))
            if datos is not None:
                tabla[int(entrada)] = datos
    return tabla


def descendientes(raiz, tabla):
    """Los pids que cuelgan de `raiz` en `tabla`, a cualquier profundidad."""
    hijos = {}
    for pid, (_, _, padre, _) in tabla.items():
        hijos.setdefault(padre, []).append(pid)
    encontrados, pendientes = [], list(hijos.get(raiz, []))
    while pendientes:
        pid = pendientes.pop()
        encontrados.append(pid)
        pendientes += hijos.get(pid, [])
    return encontrados


def vivos(tabla=None):
    """{pid: datos} de los descendientes de este proceso que no son zombis."""
    tabla = procesos() if tabla is None else tabla
    return {pid: tabla[pid] for pid in descendientes(os.getpid(), tabla) if tabla[pid][1] not in "ZX"}


def senal(pid, arranque, numero):
    """Manda `numero` a `pid` si sigue siendo el proceso que arrancó en `arranque`."""
    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    except (AttributeError, OSError):  # sin pidfd (Linux < 5.3): el número, tras comprobarlo
        datos = leer_stat(pid)
        if datos is not None and datos[3] == arranque:
            try:
                os.kill(pid, numero)
            except ProcessLookupError:
                pass
        return
    try:
        datos = leer_stat(pid)
        if datos is not None and datos[3] == arranque:
            signal.pidfd_send_signal(descriptor, numero)
    except ProcessLookupError:
        pass
    finally:
        os.close(descriptor)


def recoger(hijo):
    """Recoge a todos los hijos que han terminado (los huérfanos adoptados también); devuelve el
    código de `hijo` si estaba entre ellos."""
    codigo = None
    while True:
        try:
            pid, estado = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid == hijo.pid:
            codigo = os.waitstatus_to_exitcode(estado)
            codigo = 128 - codigo if codigo < 0 else codigo
            hijo.returncode = codigo  # para que Popen no lo busque más
    return codigo


def servidores_postgres(quedan):
    """[(pid, arranque, carpeta de datos)] de los postmaster entre `quedan`: se llaman postgres
    y su padre no (los demás procesos del servidor son hijos suyos)."""
    servidores = []
    for pid, (nombre, _, padre, arranque) in quedan.items():
        if nombre == "postgres" and quedan.get(padre, ("",))[0] != "postgres":
            try:
                carpeta = Path(os.readlink(f"/proc/{pid}/cwd"))  # el postmaster vive en su PGDATA
            except OSError:
                carpeta = None
            servidores.append((pid, arranque, carpeta))
    return servidores


def acabar_con_todo(hijo, subreaper):
    """Mata todo lo que cuelga de este proceso (ver el docstring del módulo)."""
    if hijo.returncode is None:  # sin recoger, su número (y el de su grupo) sigue siendo suyo
        try:
            os.killpg(hijo.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not subreaper:
        hijo.wait()
        return
    carpetas = []
    servidores = servidores_postgres(vivos())
    if servidores:
        for pid, arranque, carpeta in servidores:
            senal(pid, arranque, signal.SIGQUIT)
            carpetas.append(carpeta)
        fin = time.monotonic() + ESPERA_A_POSTGRES
        while time.monotonic() < fin and any(pid in vivos() for pid, _, _ in servidores):
            recoger(hijo)
            time.sleep(0.02)
    fin = time.monotonic() + ESPERA_MAXIMA
    while True:
        recoger(hijo)
        quedan = vivos()
        if not quedan:
            break
        if time.monotonic() > fin:
            print(f"guardián: {len(quedan)} procesos no se dejan matar: {sorted(quedan)}", file=sys.stderr)
            break
        for pid, (_, _, _, arranque) in quedan.items():
            senal(pid, arranque, signal.SIGKILL)
        time.sleep(0.01)
    for carpeta in carpetas:
        if carpeta is not None and carpeta.parent.name.startswith(PREFIJO_DE_CLUSTER):
            shutil.rmtree(carpeta.parent, ignore_errors=True)


def _entrada_vigilable():
    """El descriptor de la entrada estándar si es una tubería (quien lanza al guardián la cierra
    para pararlo), o None."""
    try:
        return 0 if stat.S_ISFIFO(os.fstat(0).st_mode) else None
    except OSError:
        return None


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("uso: python -P -m curso.clase.guardian -- ORDEN [ARGUMENTOS...]", file=sys.stderr)
        return 2
    subreaper = hacerse_subreaper()
    pedido = []

    def pedir_parada(numero, _marco):
        pedido.append(numero)

    for numero in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(numero, pedir_parada)
    hijo = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    entrada = _entrada_vigilable()
    codigo = None
    while codigo is None and not pedido:
        codigo = recoger(hijo)
        if codigo is not None:
            break
        if entrada is None:
            time.sleep(PAUSA)
            continue
        listos, _, _ = select.select([entrada], [], [], PAUSA)
        if listos:  # una línea o el final: las dos cosas quieren decir «para»
            os.read(entrada, 4096)
            pedido.append("entrada")
    acabar_con_todo(hijo, subreaper)
    return PARADO if codigo is None else codigo


if __name__ == "__main__":
    sys.exit(main())
