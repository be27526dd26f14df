"""Para las celdas de la lección 08: lo que se enseña de DBOS corriendo DBOS en procesos aparte.

Equipo del curso (lo usan el cuaderno 08, sus tests y `python -m curso medir dbos`). DBOS registra
cada workflow y cada paso una vez por proceso, al importar su módulo, y se lanza una vez: el núcleo
del cuaderno no lo lanza nunca. Cada celda que necesita DBOS en marcha corre un programa pequeño en
otro proceso (sus textos están aquí, para leerlos) y enseña lo que devuelve:

- `instalacion()`: la versión, lo que ocupa instalado y lo que cuesta importarlo;
- `sin_red()`: un proceso con DBOS lanzado, sin ningún socket abierto (con la base en SQLite);
- `al_menos_una_vez()`: un paso que añade una línea a un fichero, matado entre el efecto y su apunte;
- `versiones()`: un workflow pendiente cuando cambia su código, y cuando cambia el orden de sus pasos;
- `pasos_por_segundo()`: pasos duraderos por segundo, del harness del curso y de DBOS, en SQLite y
  en PostgreSQL;
- `recuperar_en_postgres()`: dos procesos en un PostgreSQL; uno muere y el otro recupera lo suyo;
- `lineas_de_codigo()`: las líneas que escribiste para la durabilidad en 04–06, y las de la 08.

Al importarse, este módulo calla el registro «dbos» en el núcleo (ver `callar_el_registro`).
"""
import ast
import importlib.metadata
import json
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ESPERA_S = 180  # lo que puede tardar cada programa de estos en una máquina muy cargada


def callar_el_registro():
    """Sin DBOS lanzado, su registro no tiene dónde escribir, y Python saca sus avisos por stderr tal
    cual. En el núcleo de un cuaderno el único aviso es «Duplicate registration»: cada `%%modulo`
    vuelve a importar los módulos del harness, y `flujos.py` registra otra vez sus workflows con el
    mismo nombre desde el mismo fichero (lo que DBOS admite, avisando). Un proceso que lanza DBOS
    pone su propio manejador y no pierde nada de esto."""
    logging.getLogger("dbos").addHandler(logging.NullHandler())


callar_el_registro()


def _correr(programa, *argumentos, entorno=None, espera=ESPERA_S):
    """(código, stdout, stderr) de `python -c programa argumentos...`."""
    variables = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(entorno or {}))
    hecho = subprocess.run([sys.executable, "-c", programa, *map(str, argumentos)], capture_output=True,
                           text=True, timeout=espera, env=variables)
    return hecho.returncode, hecho.stdout, hecho.stderr


def _json(programa, *argumentos, **opciones):
    """Lo que un programa de estos escribe en su última línea, en JSON; RuntimeError si falla."""
    codigo, salida, errores = _correr(programa, *argumentos, **opciones)
    if codigo != 0 or not salida.strip():
        raise RuntimeError(f"el programa falló ({codigo}): {errores.strip()[-2000:]}")
    return json.loads(salida.strip().splitlines()[-1])


# --- Instalación -------------------------------------------------------------------------------

DE_DBOS = ("dbos", "croniter")  # lo que DBOS añade a lo que ya instala el curso (requirements.txt)
TODO_DBOS = DE_DBOS + ("sqlalchemy", "greenlet", "pyyaml", "python-dateutil", "six", "click")  # sin psycopg (07)

IMPORTAR = r'''
import json, resource, sys, time
antes = resource.getrusage(resource.RUSAGE_SELF)
reloj = time.perf_counter()
if sys.argv[1] == "dbos":
    import dbos
despues = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"cpu": despues.ru_utime + despues.ru_stime - antes.ru_utime - antes.ru_stime,
                  "reloj": time.perf_counter() - reloj}))
'''


def ocupa(paquete):
    """Los bytes en disco de los ficheros instalados del paquete `paquete` (los de su RECORD, con
    los .pyc que compiló pip o Python), o 0 si no está."""
    try:
        distribucion = importlib.metadata.distribution(paquete)
    except importlib.metadata.PackageNotFoundError:
        return 0
    ficheros = {Path(f.locate()).resolve() for f in (distribucion.files or [])}
    carpetas = {f.parent for f in ficheros if f.suffix == ".py"}
    ficheros |= {c for carpeta in carpetas if (carpeta / "__pycache__").is_dir()
                 for c in (carpeta / "__pycache__").iterdir() if c.suffix == ".pyc"}
    return sum(f.stat().st_size for f in ficheros if f.is_file())


def instalacion(veces=3):
    """{"version", "mb", "mb_con_lo_suyo", "cpu_s", "reloj_s"}: lo que ocupa dbos con croniter (lo
    que añade al curso) y con todo lo que pide; y la CPU y el reloj de `import dbos` en un proceso
    nuevo, la mediana de `veces`."""
    medidas = sorted((_json(IMPORTAR, "dbos") for _ in range(veces)), key=lambda m: m["cpu"])
    mediana = medidas[len(medidas) // 2]
    return {"version": importlib.metadata.version("dbos"), "mb": sum(map(ocupa, DE_DBOS)) / 1e6,
            "mb_con_lo_suyo": sum(map(ocupa, TODO_DBOS)) / 1e6, "cpu_s": mediana["cpu"], "reloj_s": mediana["reloj"]}


# --- Sin red -----------------------------------------------------------------------------------

SIN_RED = r'''
import importlib.util, json, os, sys
base = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import motor
from dbos import DBOS
motor.arrancar(motor.url_sqlite(base))
def enlace(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # el del propio listdir, ya cerrado
        return ""
sockets, de_red = set(), set()
if os.path.isdir("/proc/self/fd"):  # Linux; en otro sistema no se cuentan
    sockets = {enlace(fd)[len("socket:["):-1] for fd in os.listdir("/proc/self/fd") if enlace(fd).startswith("socket:")}
    for tabla in ("tcp", "tcp6", "udp", "udp6"):
        with open(f"/proc/self/net/{tabla}") as f:
            de_red |= {linea.split()[9] for linea in list(f)[1:]} & sockets
config = motor.configuracion(motor.url_sqlite(base))
print(json.dumps({"sockets_de_red": len(de_red) if os.path.isdir("/proc/self/fd") else None,
                  "sockets_locales": len(sockets - de_red),
                  "servidor_de_administracion": importlib.util.find_spec("dbos._admin_server") is not None,
                  "otlp": importlib.util.find_spec("opentelemetry") is not None,
                  "conductor": config.get("conductor_key") is not None,
                  "enable_otlp": config["enable_otlp"]}))
motor.parar()
'''


def sin_red(punto):
    """Un proceso que lanza DBOS con `motor.arrancar` (el de `punto`) sobre SQLite, y dice: cuántos
    sockets de red tiene abiertos (en Linux: los de /proc/self/fd que están en /proc/self/net/tcp,
    tcp6, udp o udp6) y cuántos locales (los demás: los de su bucle de asyncio), si esta versión
    trae servidor de administración, si están instalados los paquetes de OTLP, y si la
    configuración pide Conductor u OTLP."""
    with tempfile.TemporaryDirectory(prefix="dbos-sin-red-") as carpeta:
        return _json(SIN_RED, Path(carpeta) / "dbos.sqlite", punto)


# --- Un paso, al menos una vez ------------------------------------------------------------------

# Un workflow de tres pasos; cada paso añade una línea a un fichero y devuelve su número. Con
# `morir` = K, el proceso se mata (SIGKILL) dentro del paso K, justo después de escribir su línea y
# antes de que DBOS guarde la salida del paso.
TRES_PASOS = r'''
import json, os, signal, sys
base, fichero, morir = sys.argv[1], sys.argv[2], int(sys.argv[3])
from dbos import DBOS, DBOSPortableJSONSerializer, SetWorkflowID

@DBOS.step()
def anadir(n):
    with open(fichero, "a", encoding="utf-8") as f:
        f.write(f"línea {n}, escrita por el proceso {os.getpid()}\n")
    if n == morir:
        os.kill(os.getpid(), signal.SIGKILL)
    return n

@DBOS.workflow()
def tres():
    return [anadir(n) for n in (1, 2, 3)]

DBOS(config={"name": "al-menos-una-vez", "system_database_url": f"sqlite:///{base}", "log_level": "ERROR",
             "application_version": "1", "serializer": DBOSPortableJSONSerializer()})
DBOS.launch()
if DBOS.get_workflow_status("tres") is None:
    with SetWorkflowID("tres"):
        DBOS.start_workflow(tres)
print(json.dumps(DBOS.retrieve_workflow("tres").get_result()))  # si estaba a medias, lo recupera DBOS al lanzarse
DBOS.destroy()
'''


def al_menos_una_vez(morir=2):
    """El workflow de TRES_PASOS, matado dentro del paso `morir` y lanzado otra vez: {"codigo" del
    primer proceso, "resultado" del segundo, "lineas" del fichero (sin los pid), "pasos" que guardó
    DBOS: [(número de paso, nombre, salida)]}."""
    import sqlite3
    with tempfile.TemporaryDirectory(prefix="dbos-tres-") as carpeta:
        base, fichero = Path(carpeta) / "dbos.sqlite", Path(carpeta) / "efectos.txt"
        codigo, _, _ = _correr(TRES_PASOS, base, fichero, morir)
        resultado = _json(TRES_PASOS, base, fichero, 0)
        lineas = [linea.split(",")[0] for linea in fichero.read_text(encoding="utf-8").splitlines()]
        procesos = len({linea.rsplit(" ", 1)[1] for linea in fichero.read_text(encoding="utf-8").splitlines()})
        bd = sqlite3.connect(base)
        pasos = bd.execute("SELECT function_id, function_name, output FROM operation_outputs "
                           "WHERE workflow_uuid='tres' ORDER BY function_id").fetchall()
        intentos = bd.execute("SELECT recovery_attempts FROM workflow_status WHERE workflow_uuid='tres'").fetchone()[0]
        bd.close()
    return {"codigo": codigo, "resultado": resultado, "lineas": lineas, "procesos": procesos, "pasos": pasos,
            "intentos": intentos}


# --- Versiones: el código cambia con un workflow a medias ---------------------------------------

# Un workflow de pasos a() y b(), matado (SIGKILL) dentro de b(), con a() ya guardado; y otra vez,
# con otro código. `variante` elige el código: "v1", el de siempre; "v1-editado", el mismo con un
# comentario de más; "c-al-principio", con un paso c() nuevo antes de a(); "c-al-final", con c()
# después de b(). `version` es la application_version ("": la que DBOS calcula con un hash del código
# de sus workflows; por eso el programa va en un fichero: sin fuente, DBOS no puede calcularla).
VERSIONES = r"""
import json, os, signal, sys, time
base, variante, version, morir = sys.argv[1:5]
from dbos import DBOS, DBOSPortableJSONSerializer, SetWorkflowID

@DBOS.step()
def a():
    return "a"

@DBOS.step()
def b():
    if morir == "1":
        os.kill(os.getpid(), signal.SIGKILL)
    return "b"

@DBOS.step()
def c():
    return "c"

if variante == "v1":
    @DBOS.workflow()
    def flujo():
        return [a(), b()]
elif variante == "v1-editado":
    @DBOS.workflow()
    def flujo():
        # Solo un comentario nuevo: el mismo flujo, con otro texto.
        return [a(), b()]
elif variante == "c-al-principio":
    @DBOS.workflow()
    def flujo():
        return [c(), a(), b()]
else:
    @DBOS.workflow()
    def flujo():
        return [a(), b(), c()]

config = {"name": "versiones", "system_database_url": f"sqlite:///{base}", "log_level": "CRITICAL",
          "serializer": DBOSPortableJSONSerializer()}
if version:
    config["application_version"] = version
DBOS(config=config)
DBOS.launch()
hecho = {"version": DBOS.application_version}
if DBOS.get_workflow_status("f") is None:
    with SetWorkflowID("f"):
        DBOS.start_workflow(flujo)
try:
    espera = time.monotonic() + 5  # la cola de recuperación mira cada segundo
    while time.monotonic() < espera and DBOS.get_workflow_status("f").status in ("PENDING", "ENQUEUED"):
        time.sleep(0.1)
    estado = DBOS.get_workflow_status("f")
    hecho.update(estado=estado.status, version_del_workflow=estado.app_version)
    if estado.status == "SUCCESS":
        hecho["resultado"] = DBOS.retrieve_workflow("f").get_result()
    elif estado.status == "ERROR":
        try:
            DBOS.retrieve_workflow("f").get_result()
        except Exception as e:
            hecho["error"] = type(e).__name__
            hecho["mensaje"] = str(e)
finally:
    DBOS.destroy()
print(json.dumps(hecho))
"""

HISTORIAS_DE_VERSIONES = [  # (nombre, application_version, el código de después)
    ("solo un comentario, con la versión que calcula DBOS", "", "v1-editado"),
    ("un paso nuevo al principio, con la misma versión", "1", "c-al-principio"),
    ("un paso nuevo al final, con la misma versión", "1", "c-al-final"),
]


def versiones():
    """Cada historia de HISTORIAS_DE_VERSIONES: el workflow de VERSIONES con el código "v1", matado
    dentro de b() (con a() guardado), y el proceso que se lanza después con el código nuevo.
    {nombre: (código de salida del primero, lo que dijo el segundo, lo que dice la base)}; lo de la
    base: [(id, estado, versión)] de los workflows y [(paso, nombre)] de las salidas guardadas."""
    import sqlite3
    historias = {}
    with tempfile.TemporaryDirectory(prefix="dbos-versiones-") as carpeta:
        programa = Path(carpeta) / "versiones.py"
        programa.write_text(VERSIONES, encoding="utf-8")
        for i, (nombre, version, despues) in enumerate(HISTORIAS_DE_VERSIONES):
            base = Path(carpeta) / f"{i}.sqlite"
            primero = subprocess.run([sys.executable, str(programa), str(base), "v1", version, "1"],
                                     capture_output=True, text=True, timeout=ESPERA_S)
            segundo = subprocess.run([sys.executable, str(programa), str(base), despues, version, "0"],
                                     capture_output=True, text=True, timeout=ESPERA_S)
            if segundo.returncode != 0:
                raise RuntimeError(f"el segundo proceso falló: {segundo.stderr[-2000:]}")
            bd = sqlite3.connect(base)
            en_la_base = {"workflows": bd.execute("SELECT workflow_uuid, status, application_version FROM workflow_status").fetchall(),
                          "pasos": bd.execute("SELECT function_id, function_name FROM operation_outputs ORDER BY function_id").fetchall()}
            bd.close()
            historias[nombre] = (primero.returncode, json.loads(segundo.stdout.strip().splitlines()[-1]), en_la_base)
    return historias


# --- Pasos duraderos por segundo ----------------------------------------------------------------

# N pasos de DBOS, cada uno devuelve un número: lo que tarda el workflow entero, desde dentro.
PASOS_DBOS = r'''
import json, sys, time
base, n = sys.argv[1], int(sys.argv[2])
from dbos import DBOS

@DBOS.step()
def paso(i):
    return i

@DBOS.workflow()
def muchos(n):
    empieza = time.perf_counter()
    for i in range(n):
        paso(i)
    return time.perf_counter() - empieza

DBOS(config={"name": "pasos-por-segundo", "system_database_url": base, "log_level": "ERROR",
             "application_version": "1"})
DBOS.launch()
segundos = muchos(n)
DBOS.destroy()
print(json.dumps({"segundos": segundos}))
'''

# N pasos del harness del curso: cada uno, una transacción que anota un mensaje (historial.anotar, de
# la 04; historial_pg.anotar, de la 07). `punto` es la carpeta de módulos.
PASOS_DEL_CURSO = r'''
import json, sys, time
punto, motor, base, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, punto)
if motor == "PostgreSQL":  # base: una cadena de conexión
    import historial_pg as historial
else:  # base: la ruta de un fichero
    import historial
bd = historial.abrir(base)
historial.crear_ejecucion(bd, "e")
empieza = time.perf_counter()
for i in range(n):
    historial.anotar(bd, "e", f"mensaje {i}")
segundos = time.perf_counter() - empieza
bd.close()
print(json.dumps({"segundos": segundos}))
'''


def url_de_dbos(conexion, nombre):
    """La url de una base nueva llamada `nombre` en el servidor de la cadena de conexión `conexion`
    (de `curso.postgres.cluster`): la base del sistema de DBOS, que DBOS crea si no existe."""
    from psycopg.conninfo import conninfo_to_dict
    partes = conninfo_to_dict(conexion)
    return (f"postgresql://{partes.get('user', 'postgres')}:{partes.get('password', '')}@{partes.get('host', '127.0.0.1')}"
            f":{partes.get('port', 5432)}/{nombre}")


def pasos_por_segundo(punto, n=200, postgres=None, carpeta=None):
    """{(motor, base): pasos por segundo}: n pasos seguidos del harness del curso y de DBOS, en un
    fichero SQLite en disco (la carpeta temporal del sistema, o `carpeta`) y, si se da `postgres`
    (una cadena de conexión), en PostgreSQL. Cada medida, en su propio proceso."""
    medidas = {}
    with tempfile.TemporaryDirectory(prefix="dbos-pasos-", dir=carpeta) as aqui:
        aqui = Path(aqui)
        medidas[("curso", "SQLite")] = n / _json(PASOS_DEL_CURSO, punto, "SQLite", aqui / "curso.db", n)["segundos"]
        medidas[("DBOS", "SQLite")] = n / _json(PASOS_DBOS, f"sqlite:///{aqui / 'dbos.sqlite'}", n)["segundos"]
    if postgres:
        import psycopg
        from curso.postgres.cluster import esquema_de_prueba
        with esquema_de_prueba(postgres, prefijo="pasos") as esquema:
            medidas[("curso", "PostgreSQL")] = n / _json(PASOS_DEL_CURSO, punto, "PostgreSQL", esquema, n)["segundos"]
        nombre = f"dbos_pasos_{secrets.token_hex(4)}"
        try:
            medidas[("DBOS", "PostgreSQL")] = n / _json(PASOS_DBOS, url_de_dbos(postgres, nombre), n)["segundos"]
        finally:
            with psycopg.connect(postgres, autocommit=True) as bd:
                bd.execute(f'DROP DATABASE IF EXISTS "{nombre}" WITH (FORCE)')
    return medidas


# --- Dos procesos en PostgreSQL: uno muere y otro recupera lo suyo --------------------------------

# El trabajador: reanuda la ejecución de la carpeta con su propio executor_id sobre el PostgreSQL de
# `base`. Con `recupera` (una lista de ejecutores, separados por comas), antes de nada recupera los
# workflows pendientes de esos ejecutores, con la llamada que DBOS ofrece para ello cuando no hay
# Conductor, y dice cuáles recuperó.
TRABAJADOR = r'''
import json, os, sys, time
punto, carpeta, base, url, ejecutor, recupera = sys.argv[1:7]
sys.path.insert(0, punto)
os.environ["ANTHROPIC_BASE_URL"] = url
from pathlib import Path
import motor, flujos, todo_junto_dbos
from dbos import DBOS, SetWorkflowID
motor.CARPETA = Path(carpeta)
motor.arrancar(base, ejecutor)
try:
    if recupera:
        empieza = time.monotonic()
        recuperados = DBOS._recover_pending_workflows(recupera.split(","))
        hecho = DBOS.retrieve_workflow("incidente").get_result()
        print(json.dumps({"recuperados": sorted(h.get_workflow_id() for h in recuperados), "estado": hecho["estado"],
                          "segundos": time.monotonic() - empieza}), flush=True)
    else:
        with SetWorkflowID("incidente"):
            DBOS.start_workflow(flujos.padre, json.loads((Path(carpeta) / "ejecucion.json").read_text()))
        print(json.dumps({"estado": DBOS.retrieve_workflow("incidente").get_result()["estado"]}), flush=True)
finally:
    motor.parar()
'''


def recuperar_en_postgres(punto, postgres, url, proyecto, paso=12):
    """Dos procesos, «trabajador-1» y «trabajador-2», con la misma base del sistema en el PostgreSQL de
    `postgres`. El 1 empieza la ejecución y muere (SIGKILL) en cuanto DBOS ha guardado `paso` salidas de
    paso; el 2 arranca después y recupera lo pendiente del 1 con `DBOS._recover_pending_workflows`.
    Devuelve {"recuperados", "estado", "segundos", "pasos_del_1", "pasos_del_2", "ejecutor_final",
    "igual_a_sin_caidas"}."""
    import psycopg
    from curso.material import simulacro_dbos
    from curso.material.simulacro_dbos import MOTORES
    nombre = f"dbos_recuperar_{secrets.token_hex(4)}"
    base = url_de_dbos(postgres, nombre)
    motor_dbos = MOTORES["dbos"]
    with simulacro_dbos.carpeta_en_memoria() as carpeta:
        aqui = motor_dbos.preparar(punto, carpeta / "e", proyecto)
        contar = "select count(*) from operation_outputs"
        try:
            uno = subprocess.Popen([sys.executable, "-c", TRABAJADOR, str(punto), str(aqui), base, url, "trabajador-1", ""],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                while uno.poll() is None:
                    try:
                        with psycopg.connect(base, autocommit=True) as bd:
                            bd.execute("SET search_path=dbos")
                            if bd.execute(contar).fetchone()[0] >= paso:
                                break
                    except psycopg.Error:
                        pass
                    time.sleep(0.05)
            finally:
                uno.kill()
                uno.communicate(timeout=ESPERA_S)
            with psycopg.connect(base, autocommit=True) as bd:
                bd.execute("SET search_path=dbos")
                del_1 = bd.execute(contar).fetchone()[0]
                estado_1 = bd.execute("SELECT status, executor_id FROM workflow_status WHERE workflow_uuid='incidente'").fetchone()
            hecho = _json(TRABAJADOR, punto, aqui, base, url, "trabajador-2", "trabajador-1")
            with psycopg.connect(base, autocommit=True) as bd:
                bd.execute("SET search_path=dbos")
                total = bd.execute(contar).fetchone()[0]
                ejecutores = bd.execute("SELECT workflow_uuid, executor_id FROM workflow_status ORDER BY workflow_uuid").fetchall()
        finally:
            with psycopg.connect(postgres, autocommit=True) as bd:
                bd.execute(f'DROP DATABASE IF EXISTS "{nombre}" WITH (FORCE)')
        nota = (aqui / "copia" / "README.md").read_text(encoding="utf-8").count(
            "Según config/db.toml, db escucha en el puerto 5432.")
    return dict(hecho, codigo_del_1=uno.returncode, pasos_del_1=del_1, pasos_del_2=total - del_1,
                estado_al_morir=estado_1, ejecutores=ejecutores, notas=nota)


# --- Líneas de código ----------------------------------------------------------------------------

# Lo que el alumno escribió para que la ejecución sobreviva a las caídas, lección a lección: los
# módulos que solo existen por eso (no el bucle, ni las herramientas, ni el buzón de la 05, que
# también hacen falta sin caídas).
DE_LA_DURABILIDAD = {
    "04": ["historial.py", "resumenes.py", "durable.py"],
    "06": ["pasos.py", "registro.py", "efectos.py", "agentes.py", "reanudar.py", "todo_junto.py"],
    "08": ["motor.py", "efectos_dbos.py", "flujos.py", "todo_junto_dbos.py"],
}


def lineas(fichero):
    """Las líneas de código de `fichero`: sin las vacías, los comentarios ni los docstrings."""
    texto = Path(fichero).read_text(encoding="utf-8")
    documentacion = set()
    for nodo in ast.walk(ast.parse(texto)):
        if isinstance(nodo, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and nodo.body:
            primero = nodo.body[0]
            if isinstance(primero, ast.Expr) and isinstance(getattr(primero, "value", None), ast.Constant) \
                    and isinstance(primero.value.value, str):
                documentacion.update(range(primero.lineno, primero.end_lineno + 1))
    return sum(1 for i, linea in enumerate(texto.splitlines(), 1)
               if linea.strip() and not linea.strip().startswith("#") and i not in documentacion)


def lineas_de_codigo(puntos):
    """{lección: {fichero: líneas}} de DE_LA_DURABILIDAD, leídas en los puntos de control `puntos`
    ({número: carpeta}); cada lección, en su propio punto de control."""
    return {leccion: {f: lineas(Path(puntos[int(leccion)]) / f) for f in ficheros}
            for leccion, ficheros in DE_LA_DURABILIDAD.items()}
