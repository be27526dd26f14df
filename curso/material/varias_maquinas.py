"""Para la lección 07 y sus tests: varias máquinas, simuladas con procesos, sobre un PostgreSQL.

Cada trabajador es un proceso aparte con su propia conexión al servidor, como lo sería un hijo en
otra máquina. Todos hacen *todas* las entregas de un plan (recibir y admitir), cada uno en su
propio orden: así compiten de verdad por las mismas filas y cada entrega llega repetida, entre
procesos. Mientras trabajan, a unos se les mata con SIGKILL (y otro proceso ocupa su lugar) y a
otros se les corta la conexión desde el servidor (`pg_terminate_backend`): el trabajador no sabe
si su último COMMIT se confirmó, vuelve a conectar y repite la misma entrega, con la misma
identidad. Al final se cuenta, en la base: ninguna entrega perdida ni repetida.

Lo que es simulado: las «máquinas» son procesos de esta misma máquina, y el corte de red es el
servidor cerrando la conexión. Lo que es de verdad: los procesos, las conexiones, el servidor,
las señales y las transacciones que quedan a medias.

El trabajador es `python -m curso.material.varias_maquinas CONEXION SEMILLA PLAN_JSON [PAUSA|congelarse]`,
con los módulos del cuaderno en su PYTHONPATH (importa `buzon_pg`). Escribe una línea por suceso:
«pid N» (su backend, al conectar), «hecha ENTREGA DISPOSICION» y «reconecta». Con PAUSA, tras esa
entrega hecha espera una línea en su entrada: es el momento del corte, que así le llega siempre con
trabajo por delante (si siguiera, en una máquina cargada podría acabar antes de que el corte llegue).

Con «congelarse», el trabajador se para a sí mismo (SIGSTOP) en cuanto bloquea la fila de un padre
dentro de `admitir`, y escribe antes «congelado»: es un proceso colgado, o una máquina al otro lado
de una red partida, con la transacción abierta. `Congelado` lo lanza, espera a que se congele y, al
acabar, lo deja seguir (SIGCONT) o lo mata.

Lección 07.
"""
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time

# Qué le pasa a cada trabajador, y tras cuántas entregas hechas: un SIGKILL al proceso (y otro
# trabajador lo sustituye) o el corte de su conexión desde el servidor (y él vuelve a conectar).
PERCANCES = {1: ("sigkill", 3), 2: ("corte", 3), 3: ("sigkill", 7), 4: ("corte", 10)}
SUSTITUTO = 100  # el trabajador que ocupa el lugar del n.º N muerto es el N + 100
ESPERA_MAXIMA_S = 120  # un techo para el simulacro entero; en esta máquina tarda un par de segundos


def plan(padres, hijos):
    """Las entregas del simulacro: [(padre, hijo, entrega, carga)], una por hijo de cada padre."""
    return [(padre, hijo, f"{padre}/{hijo}/1", {"hallazgos": [f"lo que {hijo} vio para {padre}"]})
            for padre in padres for hijo in hijos]


# --- El trabajador (otro proceso) ----------------------------------------------------------------

# La sentencia de `admitir` que bloquea la fila del padre: tras ella se congela quien lo pida.
BLOQUEA_AL_PADRE = re.compile(r"\bFOR (NO KEY )?UPDATE\b")


class SeCongelaConLaFila:
    """La conexión de un trabajador que se para a sí mismo (SIGSTOP) justo después de bloquear la
    fila de un padre, la primera vez. Lo demás va a la conexión de verdad."""

    def __init__(self, conexion):
        self._conexion = conexion
        self.congelado = False

    def __getattr__(self, nombre):
        return getattr(self._conexion, nombre)

    def execute(self, sql, *argumentos, **opciones):
        cursor = self._conexion.execute(sql, *argumentos, **opciones)
        if not self.congelado and BLOQUEA_AL_PADRE.search(str(sql)):
            self.congelado = True
            print("congelado", flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)  # hasta un SIGCONT; con la transacción abierta
        return cursor


def trabajar(conexion, semilla, entregas, pausa=None, congelarse=False):
    """Recibe y admite cada entrega, en el orden de su semilla; si la conexión cae, reconecta y
    repite la misma entrega (misma identidad: repetirla no duplica nada). Tras la entrega número
    `pausa`, espera una línea en su entrada antes de seguir. Con `congelarse`, se para a sí mismo
    la primera vez que bloquea la fila de un padre (ver SeCongelaConLaFila)."""
    import psycopg

    import buzon_pg

    def conectar():
        bd = buzon_pg.abrir_buzon(conexion)
        print("pid", bd.info.backend_pid, flush=True)
        return bd

    orden = list(entregas)
    random.Random(semilla).shuffle(orden)
    bd = conectar()
    if congelarse:
        bd = SeCongelaConLaFila(bd)
    for hechas, (padre, hijo, entrega, carga) in enumerate(orden, start=1):
        while True:
            try:
                buzon_pg.recibir(bd, padre, hijo, entrega, carga)
                disposicion = buzon_pg.admitir(bd, entrega)
                break
            except psycopg.Error as error:
                # La conexión se cortó (desde el servidor, o porque un límite de espera cerró la
                # sesión: eso es un 25P03, no un OperationalError), o se rindió esperando un cerrojo
                # (55P03): se repite la misma entrega con otra conexión. Cualquier otro error, fuera.
                if not (bd.closed or bd.broken or isinstance(error, psycopg.OperationalError)):
                    raise
                print("reconecta", flush=True)
                bd.close()
                bd = conectar()
        print("hecha", entrega, disposicion, flush=True)
        if hechas == pausa:
            sys.stdin.readline()


# --- Quien los lanza, los mata y cuenta ----------------------------------------------------------

def simulacro(conexion, modulos, entregas, percances=PERCANCES, al_percance=None):
    """Lanza un trabajador por cada número de `percances`, le aplica su percance y espera a que
    todos (los sustitutos también) acaben. Devuelve {"sigkill": n, "corte": n, "reconecta": n,
    "errores": {trabajador: código}}. `modulos` es la carpeta de donde importan `buzon_pg`.
    `al_percance(hechos, total)`, si se da, se llama tras cada percance: para ir diciendo por dónde va."""
    import psycopg

    entorno = dict(os.environ, PYTHONPATH=os.pathsep.join([str(modulos), *(p for p in sys.path if p)]))
    sucesos, procesos, hilos = queue.Queue(), {}, []

    def leer(numero, proceso):
        for linea in proceso.stdout:
            sucesos.put((numero, linea.split()))
        sucesos.put((numero, ["fin"]))

    def arrancar(numero):
        # Al que le toca un corte, una pausa tras esa entrega: el corte llega mientras espera.
        percance, tras = percances.get(numero, (None, None))
        pausa = [str(tras)] if percance == "corte" else []
        procesos[numero] = subprocess.Popen(
            [sys.executable, "-m", "curso.material.varias_maquinas", conexion, str(numero), json.dumps(entregas), *pausa],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=entorno)
        hilo = threading.Thread(target=leer, args=(numero, procesos[numero]), daemon=True)
        hilo.start()
        hilos.append(hilo)

    cuenta = {"sigkill": 0, "corte": 0, "reconecta": 0}
    hechas, pids, vivos = {n: 0 for n in percances}, {}, set(percances)
    limite = time.monotonic() + ESPERA_MAXIMA_S
    with psycopg.connect(conexion, autocommit=True) as servidor:
        try:
            for numero in percances:
                arrancar(numero)
            while vivos:
                numero, suceso = sucesos.get(timeout=max(0.1, limite - time.monotonic()))
                if suceso[0] == "pid":
                    pids[numero] = int(suceso[1])
                elif suceso[0] == "reconecta":
                    cuenta["reconecta"] += 1
                elif suceso[0] == "hecha":
                    hechas[numero] += 1
                    percance, tras = percances.get(numero, (None, None))
                    if hechas[numero] == tras and percance == "sigkill":
                        procesos[numero].send_signal(signal.SIGKILL)  # quizá a mitad de una transacción
                        cuenta["sigkill"] += 1
                        hechas[numero + SUSTITUTO] = 0
                        vivos.add(numero + SUSTITUTO)
                        arrancar(numero + SUSTITUTO)
                    elif hechas[numero] == tras and percance == "corte":
                        servidor.execute("SELECT pg_terminate_backend(%s)", (pids[numero],))
                        cuenta["corte"] += 1
                        try:  # y sigue, con la conexión ya cortada
                            procesos[numero].stdin.write("sigue\n")
                            procesos[numero].stdin.flush()
                        except BrokenPipeError:  # murió por su cuenta: su error sale en «errores»
                            pass
                    if hechas[numero] == tras and al_percance is not None:
                        al_percance(cuenta["sigkill"] + cuenta["corte"], len(percances))
                elif suceso[0] == "fin":
                    vivos.discard(numero)
        finally:
            for proceso in procesos.values():
                if proceso.poll() is None:
                    proceso.kill()
                proceso.wait()
            for hilo in hilos:
                hilo.join()
            errores = {n: _la_excepcion(p.stderr.read()) or p.returncode
                       for n, p in procesos.items() if p.returncode not in (0, -signal.SIGKILL)}
            for proceso in procesos.values():
                proceso.stdin.close()
                proceso.stdout.close()
                proceso.stderr.close()
    cuenta["errores"] = errores
    return cuenta


class Congelado:
    """Un trabajador que hace `entrega` ((padre, hijo, identidad, carga)) y se congela con la fila
    del padre bloqueada. Al crearlo vuelve cuando ya está congelado; `pid` es su proceso y
    `backend`, el pid de su conexión en el servidor. `seguir()` le manda SIGCONT y devuelve las
    líneas que escribe hasta acabar. Como gestor de contexto, al salir lo mata si sigue vivo."""

    def __init__(self, conexion, modulos, entrega):
        entorno = dict(os.environ, PYTHONPATH=os.pathsep.join([str(modulos), *(p for p in sys.path if p)]))
        self.proceso = subprocess.Popen(
            [sys.executable, "-m", "curso.material.varias_maquinas", conexion, "0", json.dumps([list(entrega)]), "congelarse"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=entorno)
        self.pid = self.proceso.pid
        try:
            lineas = self._leer_hasta("congelado")
            self.backend = int(next(linea.split()[1] for linea in lineas if linea.startswith("pid ")))
            limite = time.monotonic() + ESPERA_MAXIMA_S
            while not self.parado():  # escribe «congelado» justo antes de pararse
                if time.monotonic() > limite:
                    raise RuntimeError("El trabajador dijo «congelado» pero no se paró.")
                time.sleep(0.005)
        except BaseException:
            self.matar()
            raise

    def _leer_hasta(self, ultima=None):
        """Las líneas del trabajador hasta `ultima` (o hasta que acabe)."""
        lineas = []
        for linea in self.proceso.stdout:
            lineas.append(linea.strip())
            if lineas[-1] == ultima:
                return lineas
        if ultima is not None:
            raise RuntimeError(f"El trabajador acabó sin congelarse: {lineas}; {self.proceso.stderr.read().strip()}")
        return lineas

    def parado(self):
        """¿Está el proceso parado por una señal (estado T en /proc)?"""
        try:
            return open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()[0] in ("T", "t")
        except OSError:
            return False

    def seguir(self):
        """SIGCONT, y las líneas que escribe hasta acabar, sin las «pid N» (cambian en cada vuelta).
        Un error suyo, como RuntimeError."""
        self.proceso.send_signal(signal.SIGCONT)
        lineas = [linea for linea in self._leer_hasta() if not linea.startswith("pid ")]
        if self.proceso.wait(ESPERA_MAXIMA_S) != 0:
            raise RuntimeError(f"El trabajador acabó con un error: {_la_excepcion(self.proceso.stderr.read())}")
        return lineas

    def matar(self):
        if self.proceso.poll() is None:
            self.proceso.kill()  # SIGKILL también mata a un proceso parado
        self.proceso.wait()
        for tubo in (self.proceso.stdout, self.proceso.stderr):
            tubo.close()

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.matar()


def _la_excepcion(salida_de_error):
    """La línea de la excepción en un traceback: la última que no es un detalle del servidor
    (psycopg añade DETAIL, HINT o CONTEXT debajo) ni está sangrada."""
    for linea in reversed(salida_de_error.strip().splitlines()):
        if linea and not linea[0].isspace() and not linea.startswith(("DETAIL:", "HINT:", "CONTEXT:")):
            return linea
    return None


if __name__ == "__main__":
    extra = sys.argv[4] if len(sys.argv) > 4 else None
    trabajar(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]),
             pausa=int(extra) if extra and extra.isdigit() else None, congelarse=extra == "congelarse")
