"""Para la lección 06 y sus tests: el simulacro de caídas, con procesos de verdad matados con SIGKILL y reanudados.

Los pasos de un simulacro: lanzar, matar y reanudar un proceso, y comparar cómo acaba; los usan
juntos los tests, el cuaderno y `medir`.

Equipo del curso (lo usan los tests del punto de control 06, los del curso, el cuaderno y
`medir`). Cada proceso es `python todo_junto.py reanudar` de una carpeta de módulos (`punto`: el
punto de control 06 o el espacio del alumno), lanzado con `-S` contra un servidor de ensayo de
este proceso, por HTTP en 127.0.0.1 (ver CORREDOR). Se mata de tres maneras:

- en un paso: `CURSO_MORIR_EN=paso:K` (justo después del COMMIT de su paso K; ver pasos.py) o
  `efecto:K` (justo después de aplicar su edición K, antes de apuntarla);
- desde fuera, en un momento al azar (`Popen.kill`, SIGKILL) de su trabajo durable: con
  `CURSO_AVISAR_PASOS=1`, el proceso escribe una línea (`AVISO_DE_PASO`) tras cada paso, su vida
  incluida, y quien lo mata elige tras qué paso y cuánto después (ver curso/medir/todo.py);
- dentro de `editar`, antes de cada una de sus llamadas al sistema (`caidas_al_editar`: un
  gancho de perfil de Python que manda el SIGKILL antes de la llamada número K).

Y, para empezar la lección, `ingenua_repite` e `ingenua_apunta_tarde`: el harness de referencia
con un atajo, matado una vez, para ver qué se rompe antes de construirlo bien.

Y el resultado se compara con el de una ejecución sin caídas con `foto`, que lee la base con SQL
directo (sin los módulos que se prueban) y deja fuera solo lo que cambia con las caídas sin
cambiar el resultado: los pasos (cuántas vidas hubo) y el reparto de los tokens entre caché y
cálculo.
"""
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

from curso.ensayo.servidor import ServidorEnsayo
from curso.material import lanzadera
from curso.rutas import RAIZ

INCIDENTE = RAIZ / "curso" / "material" / "datos" / "incidente"
YA_TERMINO = "ya terminó"
ESPERA_DE_UN_PROCESO_S = 120
AVISAR_PASOS = "CURSO_AVISAR_PASOS"
AVISO_DE_PASO = "· simulacro: paso "  # y su número en este proceso: lo que escribe con CURSO_AVISAR_PASOS=1

# El proceso que reanuda, con una variante ingenua opcional que se le cambia antes de empezar
# (cada una rompe un invariante; los tests comprueban que la caída que le toca la delata).
CORREDOR = r'''
import sys
punto, base, url, variante = sys.argv[1:5]
sys.path.insert(0, punto)
import os
import agentes, efectos, pasos, permisos, todo_junto

if os.environ.get("CURSO_AVISAR_PASOS"):  # para las caídas al azar: una línea tras cada paso
    contar = pasos.Conexion._contar
    def contar_y_avisar(self, clase):
        contar(self, clase)
        if clase == "paso":
            print(f"· simulacro: paso {self.hechos['paso']}", flush=True)
    pasos.Conexion._contar = contar_y_avisar

if variante == "repetir_sin_resultado":  # una intención sin resultado se repite, sin mirar el fichero
    atender = agentes.atender
    def ingenua(bd, agente, llamada, entorno, usuario, borrador):
        fila = bd.execute("SELECT resultado FROM llamadas WHERE agente=? AND id=?", (agente, llamada["id"])).fetchone()
        if fila is None or fila[0] is not None:
            return atender(bd, agente, llamada, entorno, usuario, borrador)
        observacion = permisos.atender(llamada, entorno, usuario)
        efectos.apuntar_resultado(bd, agente, llamada, observacion)
        return observacion
    agentes.atender = ingenua
elif variante == "entrega_nueva_en_cada_vida":  # tras una caída, otra identidad para la misma entrega
    recibir, admitir = agentes.buzon.recibir, agentes.buzon.admitir
    otra = lambda bd, e: e if bd.vida == 1 else f"{e}/{bd.vida}"
    agentes.buzon.recibir = lambda bd, p, h, e, c: recibir(bd, p, h, otra(bd, e), c)
    agentes.buzon.admitir = lambda bd, e: admitir(bd, otra(bd, e))
elif variante == "empezar_de_cero":  # cada vida empieza cada agente desde su inicio
    desde = {}
    def de_cero(bd, agente):
        if agente["id"] not in desde:
            desde[agente["id"]] = len(agentes.historial_crudo(bd, agente["id"]))
        return agente["inicio"] + agentes.historial_crudo(bd, agente["id"])[desde[agente["id"]]:]
    agentes.M_de = de_cero
elif variante == "apuntar_despues_de_actuar":  # la respuesta se apunta con sus observaciones, tras actuar
    import reanudar
    actuar = agentes.actuar
    def ingenua(bd, agente, modelo, entorno, usuario, borrador, padre, copia):
        M = agentes.M_de(bd, agente)
        if agente["papel"] == "padre" or M[-1][0] == "asistente" or agentes.respuestas(bd, agente) >= agente["tope"]:
            return actuar(bd, agente, modelo, entorno, usuario, borrador, padre, copia)
        respuesta = modelo(M)
        llamadas = agentes.llamadas_de(respuesta)
        observaciones = [agentes.atender(bd, agente["id"], ll, entorno, usuario, borrador) for ll in llamadas]
        with agentes.pasos.en(bd, "respuesta", agente["id"], final=not llamadas):
            agentes.historial.anotar(bd, agente["id"], agentes.guardar(("asistente", respuesta)))
        if not llamadas:
            return actuar(bd, agente, modelo, entorno, usuario, borrador, padre, copia)
        with agentes.pasos.en(bd, "compactacion", agente["id"]):
            agentes.CompactacionDurable(bd, agente["id"], agente["umbral"])(modelo, M + [("asistente", respuesta)])
        with agentes.pasos.en(bd, "observaciones", agente["id"]):
            agentes.historial.anotar(bd, agente["id"], agentes.guardar(("usuario", observaciones)))
        return "sigue"
    reanudar.actuar = ingenua
elif variante == "sin_limpiar":  # sin la capa de la lección 03b: para comparar, no es un error
    agentes.limpiar_lo_viejo = lambda bd, agente, modelo, M: (M, modelo)
elif variante == "olvidar_lo_limpiado":  # la M_de de la lección 04, sin marcadores: lo limpiado vuelve entero
    agentes.M_de = lambda bd, agente: agentes.reconstruir(bd, agente["id"], agente["inicio"])
elif variante == "limpiar_otra_vez":  # al reanudar no mira si el turno ya limpió: limpia otra vez
    agentes.limpieza_del_turno = lambda bd, agente, turno: None
elif variante != "correcta":
    sys.exit(f"variante desconocida: {variante}")
sys.exit(todo_junto.main(["reanudar", base, "--url", url]))
'''


# --- Preparar, lanzar y reanudar ------------------------------------------------------------------

def preparar(punto, carpeta, proyecto=INCIDENTE):
    """Una ejecución nueva en `carpeta`, preparada con el todo_junto.py de `punto`."""
    hecho = subprocess.run([sys.executable, "todo_junto.py", "preparar", str(carpeta),
                            "--proyecto", str(proyecto)], cwd=punto, capture_output=True, text=True)
    if hecho.returncode != 0:
        raise RuntimeError(f"preparar falló: {hecho.stderr}")
    return Path(carpeta) / "todo_junto.db"


# La ejecución con un hijo que relee: la del incidente, con el hijo «config» cambiado por uno que lee
# ficheros enteros una y otra vez (`guion:hijo-config-relee`, curso/ensayo/guiones_todo_junto.py). Con
# más umbral que el de la lección (UMBRAL_DEL_SIMULACRO): con 1000, y un inicio de unos 900 tokens,
# compactar llega antes de que haya tres resultados, y limpiar no tendría nada viejo que limpiar.
# Más tope, para sus diez turnos.
RELECTURA = {"modelo": "guion:hijo-config-relee", "umbral": 2000, "tope": 12}


def preparar_relectura(punto, carpeta, proyecto=INCIDENTE):
    """Como `preparar`, con el hijo «config» de `RELECTURA`."""
    return con_el_hijo_que_relee(preparar(punto, carpeta, proyecto))


def con_el_hijo_que_relee(base):
    """Cambia el hijo «config» de una ejecución recién preparada por el de `RELECTURA`. Devuelve `base`."""
    bd = sqlite3.connect(base)
    with bd:
        bd.execute("UPDATE agentes SET modelo=:modelo, umbral=:umbral, tope=:tope WHERE id='config'", RELECTURA)
    bd.close()
    return base


def copiar_ejecucion(origen, destino):
    """Copia la carpeta de una ejecución (cerrada): la base, su copia de trabajo y sus vistas."""
    shutil.copytree(origen, destino)
    return Path(destino) / "todo_junto.db"


# Los módulos que importan los procesos del simulacro (CORREDOR, EDITOR): su lanzadera
# los tiene ya importados (ver `hijo`).
MODULOS = ("agentes", "efectos", "pasos", "permisos", "reanudar", "todo_junto", "herramientas", "historial",
           "registro")


def _entorno(**entorno):
    """El entorno de un proceso del simulacro: el de este, sin las órdenes de morir o fallar de
    otro, con las de `entorno`."""
    variables = {k: v for k, v in os.environ.items()
                 if not k.startswith(("CURSO_MORIR", "CURSO_FALLAR", AVISAR_PASOS))}
    variables.update(entorno, PYTHONDONTWRITEBYTECODE="1")
    return variables


def hijo(punto, codigo, argumentos, entorno, cwd=None):
    """Un proceso que corre `python -S -c codigo *argumentos` con los módulos de `punto`: hecho con
    `fork` de la lanzadera de `punto`, que ya los importó (curso/material/lanzadera.py), o, sin
    lanzadera, un intérprete nuevo. Los dos tienen `stdout`, `stderr`, `communicate`, `kill`..."""
    if lanzadera.disponible():
        return lanzadera.lanzadera_de(punto, MODULOS, _entorno()).lanzar(codigo, argumentos, entorno, cwd)
    return subprocess.Popen([sys.executable, "-S", "-c", codigo, *map(str, argumentos)], env=entorno, cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def lanzar(punto, base, url, variante="correcta", **entorno):
    """Un proceso que reanuda `base`. `entorno`: CURSO_MORIR_EN, CURSO_FALLAR_EN, CURSO_AVISAR_PASOS..."""
    return hijo(punto, CORREDOR, [punto, base, url, variante], _entorno(**entorno))


def reanudar(punto, base, url, variante="correcta", **entorno):
    """(código de salida, stdout, stderr) de un proceso que reanuda `base` hasta que sale."""
    proceso = lanzar(punto, base, url, variante, **entorno)
    salida, errores = proceso.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
    return proceso.returncode, salida, errores


def hasta_el_final(punto, base, url, variante="correcta", procesos=300, **entorno):
    """Reanuda (con `entorno` en cada proceso) hasta que la ejecución termina. Devuelve cuántos
    procesos murieron por el camino. AssertionError si alguno falla sin que lo pida el simulacro."""
    muertos = 0
    for _ in range(procesos):
        codigo, _, errores = reanudar(punto, base, url, variante, **entorno)
        if codigo == 0 or (codigo == 1 and YA_TERMINO in errores):
            return muertos
        assert codigo == -9, errores
        muertos += 1
    raise AssertionError(f"la ejecución no terminó en {procesos} procesos")


# --- El servidor que cuenta, y dónde se corre -----------------------------------------------------

class Contador:
    """Envuelve el motor de un servidor de ensayo: apunta cada petición contestada (cuándo y su
    `usage`). Con `pausa.clear()` retiene las peticiones hasta `pausa.set()`."""

    def __init__(self, servidor):
        self.peticiones, self.pausa = [], threading.Event()
        self.respuestas = []  # el `content` de cada respuesta, en el mismo orden que `peticiones`
        self.pausa.set()
        responder = servidor.ensayo.responder_con_tiempo

        def contando(peticion):
            self.pausa.wait(ESPERA_DE_UN_PROCESO_S)
            respuesta, segundos = responder(peticion)
            self.peticiones.append((time.monotonic(), respuesta["usage"]))
            self.respuestas.append(json.loads(json.dumps(respuesta["content"])))
            return respuesta, segundos

        servidor.ensayo.responder_con_tiempo = contando

    def entrada(self, desde=0):
        """Los tokens de entrada de las peticiones de la número `desde` en adelante, enteros: los
        que calculó el servidor y los que tenía en su caché. Es el peor caso: con la caché fría
        (el servidor de ensayo o llama-server reiniciados, o que atendieron a otro entretanto)
        habría que calcularlos todos; la API de Messages guarda su caché en el servidor unos
        minutos, y un proceso que vuelve pronto aún la encuentra."""
        return sum(u["input_tokens"] + u["cache_read_input_tokens"] for _, u in self.peticiones[desde:])


@contextmanager
def servidor_que_cuenta(fallos=None):
    """(url, contador) de un servidor de ensayo en un puerto libre, mientras dura el bloque.
    `fallos`: su plan de fallos (curso/ensayo/fallos.py), si se quiere uno."""
    with ServidorEnsayo(0, fallos=fallos) as servidor:
        yield servidor.url, Contador(servidor)


@contextmanager
def carpeta_en_memoria():
    """Una carpeta en /dev/shm si lo hay (si no, en la temporal), que se borra al salir.

    El simulacro mata procesos, no apaga la máquina: lo confirmado sobrevive a un SIGKILL igual en
    memoria que en disco (ver historial.abrir), y así cada paso no espera a un fsync del disco."""
    carpeta = tempfile.mkdtemp(prefix="simulacro-06-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        yield Path(carpeta)
    finally:
        shutil.rmtree(carpeta, ignore_errors=True)


@contextmanager
def modulos_del_cuaderno():
    """La carpeta de módulos con que el cuaderno lanza procesos: tu espacio tal cual o, si algún
    ejercicio sigue pendiente, una copia con la versión de referencia de su módulo (la que el
    cuaderno ya importa en su lugar, ver curso/referencias.py). Un proceso aparte no ve ese cambio
    del cuaderno: sin esto, lanzaría el esbozo."""
    from curso import rutas
    from curso.referencias import REFERENCIAS

    espacio, referencias = rutas.espacio(), dict(REFERENCIAS.rutas)
    if not referencias:
        yield espacio
        return
    with carpeta_en_memoria() as carpeta:
        copia = carpeta / "espacio"
        shutil.copytree(espacio, copia, ignore=shutil.ignore_patterns(".copias", "__pycache__", ".*"))
        for nombre, ruta in referencias.items():
            shutil.copyfile(ruta, copia / f"{nombre}.py")
        yield copia


# --- Lo que se compara ------------------------------------------------------------------------------

def ficheros(carpeta):
    """{ruta relativa: contenido} de los ficheros de `carpeta`."""
    carpeta = Path(carpeta)
    return {p.relative_to(carpeta).as_posix(): p.read_bytes() for p in sorted(carpeta.rglob("*")) if p.is_file()}


def huella_de(carpeta):
    """Una huella de todo lo que hay en `carpeta`: para ver que un rechazo no cambia nada."""
    return hashlib.sha256(json.dumps({k: v.hex() for k, v in ficheros(carpeta).items()}).encode()).hexdigest()


def _consultar(base, sql):
    bd = sqlite3.connect(base, isolation_level=None)
    try:
        return bd.execute(sql).fetchall()
    finally:
        bd.close()


def foto(base):
    """El resultado de la ejecución de `base`: lo que tiene que salir igual con caídas o sin ellas."""
    assert _consultar(base, "PRAGMA integrity_check") == [("ok",)]
    historiales = {}
    for ejecucion, texto in _consultar(base, "SELECT ejecucion, texto FROM historial ORDER BY ejecucion, seq"):
        historiales.setdefault(ejecucion, []).append(json.loads(texto))
    return {
        "estados": _consultar(base, "SELECT id, estado, version FROM ejecuciones ORDER BY id"),
        "historiales": historiales,
        "resumenes": _consultar(base, "SELECT ejecucion, cobertura, cuerpo, anterior FROM resumenes ORDER BY id"),
        "buzon": _consultar(base, "SELECT entrega, hijo, carga, disposicion, seq_admitida FROM buzon ORDER BY entrega"),
        "trayectoria": _consultar(base, "SELECT padre, seq, entrega FROM mensajes ORDER BY padre, seq"),
        "llamadas": _consultar(base, "SELECT agente, id, nombre, entrada, antes, despues, esperado, resultado "
                                     "FROM llamadas ORDER BY agente, id"),
        "copia": ficheros(Path(base).parent / "copia"),
    }


def informe(foto_, padre="incidente"):
    """El informe del padre: el texto de su última respuesta."""
    return " ".join(b["text"] for b in foto_["historiales"][padre][-1][1] if b["type"] == "text")


def pasos_de(base):
    """[(n, vida, clase, agente)] de la tabla pasos."""
    return _consultar(base, "SELECT n, vida, clase, agente FROM pasos ORDER BY n")


def pasos_durables(pasos):
    """Los pasos que cambian algo de la ejecución: sin las vidas ni las peticiones al modelo, que
    se repiten (y está bien) si el proceso muere antes de apuntar su respuesta."""
    return [(clase, agente) for _, vida, clase, agente in pasos if vida >= 1 and clase not in ("vida", "peticion")]


def pasos_de_la_ejecucion(pasos):
    """Los pasos de la ejecución sin caídas, sin los de preparar (vida 0) ni la vida: la lista R."""
    return [(clase, agente) for _, vida, clase, agente in pasos if vida >= 1 and clase != "vida"]


# --- Las caídas -----------------------------------------------------------------------------------

def caer_tras_cada_paso(punto, base, url, pasos):
    """Mata un proceso justo después de cada paso de la ejecución sin caídas (`pasos`), uno tras
    otro, sobre la misma ejecución `base`, recién preparada. Devuelve [(clase, agente)] de los
    pasos tras los que murió un proceso, en orden.

    Cada proceso empieza donde lo dejó el anterior: tras el último paso que no era una petición
    (una petición sin su respuesta apuntada se repite). Si la ejecución sin caídas da los pasos R
    y el proceso empieza en R[p], su paso 1 es su vida y R[g] es su paso g − p + 2. Comprueba que
    cada proceso murió justo tras el paso que tocaba."""
    R = pasos_de_la_ejecucion(pasos)
    tras_cada_durable = [i + 1 for i, (clase, _) in enumerate(R) if clase != "peticion"]
    for g, objetivo in enumerate(R):
        hechos = len(pasos_durables(pasos_de(base)))
        p = tras_cada_durable[hechos - 1] if hechos else 0
        codigo, _, errores = reanudar(punto, base, url, CURSO_MORIR_EN=f"paso:{g - p + 2}")
        assert codigo == -9, errores
        assert tuple(pasos_de(base)[-1][2:]) == objetivo, f"tras el paso {g} tenía que morir tras {objetivo}"
    return R


# --- Caídas dentro de editar, en cada llamada al sistema --------------------------------------------

# El proceso que ensaya una edición con caídas. Prepara una base con un agente que puede editar
# grande.txt (más de 8 KiB) y le hace atender (efectos.atender) una edición que lo ACORTA. Primero
# sin caídas, la referencia; después cuenta las llamadas al sistema que hace `herramientas.editar`
# en la copia de trabajo (las funciones de `os` y los métodos de los ficheros abiertos; no las que
# solo buscan la ruta por su nombre, `lstat` y `stat`, que no cambian nada); y, para cada una, en
# una ejecución nueva, un hijo (fork) que muere con SIGKILL justo antes de ella y, ya en este
# proceso, la misma llamada otra vez, como la haría el proceso que reanuda. Escribe en JSON qué
# llamadas vio y, para cada caída, si acabó igual que la referencia: el fichero byte a byte, sin
# restos en la copia, y la observación y el resultado apuntados.
EDITOR = r'''
import builtins, io, json, os, signal, sys
punto, carpeta, variante = sys.argv[1:4]
sys.path.insert(0, punto)
import efectos, herramientas, historial, registro

if variante == "en_su_sitio":  # la edición ingenua: escribir encima del fichero abierto
    def en_su_sitio(entorno, ruta, antiguo, nuevo):
        with open(herramientas.dentro(entorno, ruta), "r+b") as fichero:
            texto = fichero.read().decode("utf-8")
            if texto.count(antiguo) != 1:
                raise herramientas.ErrorDeHerramienta("antiguo tiene que aparecer una vez")
            fichero.seek(0)
            fichero.write(texto.replace(antiguo, nuevo).encode("utf-8"))
            fichero.truncate()
        return f"editado {ruta}: una sustitución"
    herramientas.editar = en_su_sitio
elif variante != "correcta":
    sys.exit(f"variante desconocida: {variante}")

LINEAS = [f"{i:04d} la base escucha en el puerto 5432 y la API conecta al 5433\n" for i in range(300)]
ANTIGUO = "".join(LINEAS[100:200])  # unas 6 KiB en medio de unas 18 KiB
EDITAR = {"type": "tool_use", "id": "e1", "name": "editar",
          "input": {"ruta": "grande.txt", "antiguo": ANTIGUO, "nuevo": "(cien líneas quitadas)\n"}}


def nueva(nombre):
    """La carpeta de una ejecución nueva, con su base y su copia; la base, cerrada."""
    aqui = os.path.join(carpeta, nombre)
    os.makedirs(os.path.join(aqui, "copia"))
    with open(os.path.join(aqui, "copia", "grande.txt"), "w", encoding="utf-8") as f:
        f.write("".join(LINEAS))
    bd = registro.abrir(os.path.join(aqui, "e.db"))
    historial.crear_ejecucion(bd, "h")
    registro.crear_agente(bd, "h", "hijo", 1, "guion:eco", [("sistema", "s"), ("usuario", "u")],
                          ["editar"], "copia", 1000, 5, ["grande.txt"])
    bd.close()
    return aqui


def atender(aqui):
    bd = registro.abrir(os.path.join(aqui, "e.db"))
    try:
        observacion = efectos.atender(bd, "h", EDITAR, os.path.join(aqui, "copia"), lambda n, e: True,
                                      os.path.join(aqui, efectos.BORRADOR))
        fila = bd.execute("SELECT resultado FROM llamadas WHERE id='e1'").fetchone()
    finally:
        bd.close()
    copia = os.path.join(aqui, "copia")
    ficheros = {n: open(os.path.join(copia, n), "rb").read().hex() for n in sorted(os.listdir(copia))}
    return {"observacion": observacion, "apuntado": fila and json.loads(fila[0]), "copia": ficheros}


NO_CUENTAN = {"lstat", "stat", "fspath", "_path_normpath", "fileno"}  # buscar por nombre, o ni eso


def del_sistema(funcion):
    """El nombre de `funcion` si es una llamada al sistema que cuenta, vista desde Python, o None."""
    if funcion is builtins.open:
        return "open"
    if (getattr(funcion, "__module__", None) == "posix"
            or isinstance(getattr(funcion, "__self__", None), io.IOBase)):
        return None if funcion.__name__ in NO_CUENTAN else funcion.__name__
    return None


def vigilar(matar_en=None):
    """Un gancho de perfil: apunta las llamadas al sistema hechas dentro de herramientas.editar
    sobre la copia de trabajo (no en el borrador de efectos.py), y manda SIGKILL a este proceso
    justo antes de la número `matar_en`."""
    vistas, codigo, dentro = [], herramientas.editar.__code__, [0]

    def gancho(marco, evento, funcion):
        if (marco.f_code is codigo and evento in ("call", "return")
                and os.path.basename(str(marco.f_locals["entorno"])) == "copia"):
            dentro[0] += 1 if evento == "call" else -1
        elif evento == "c_call" and dentro[0] and (nombre := del_sistema(funcion)):
            vistas.append(nombre)
            if len(vistas) == matar_en:
                os.kill(os.getpid(), signal.SIGKILL)
    sys.setprofile(gancho)
    return vistas


referencia = atender(nueva("referencia"))
aqui = nueva("contar")
vistas = vigilar()
atender(aqui)
sys.setprofile(None)
caidas = []
for k, llamada in enumerate(vistas, 1):
    aqui = nueva(f"caida-{k}")
    hijo = os.fork()
    if hijo == 0:
        vigilar(matar_en=k)
        atender(aqui)
        os._exit(0)  # no debería llegar aquí: murió antes
    _, estado = os.waitpid(hijo, 0)
    muerto = os.WIFSIGNALED(estado) and os.WTERMSIG(estado) == signal.SIGKILL
    caidas.append({"k": k, "llamada": llamada, "muerto": muerto, "igual": atender(aqui) == referencia})
print(json.dumps({"llamadas": vistas, "caidas": caidas, "bytes": len("".join(LINEAS).encode()),
                  "bytes_despues": len(bytes.fromhex(referencia["copia"]["grande.txt"]))}))
'''


def caidas_al_editar(punto, carpeta, variante="correcta"):
    """{"llamadas", "caidas", "bytes", "bytes_despues"}: una edición que acorta un fichero de más
    de 8 KiB, con una caída (SIGKILL) antes de cada llamada al sistema de `editar` y, después, la
    misma llamada otra vez; cada caída dice si acabó igual que sin caídas (ver EDITOR). Con
    `variante="en_su_sitio"`, la edición ingenua que escribe encima del fichero abierto."""
    proceso = hijo(punto, EDITOR, [punto, carpeta, variante], dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    salida, errores = proceso.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
    if proceso.returncode != 0:
        raise RuntimeError(f"el ensayo de caídas al editar falló: {errores}")
    return json.loads(salida)


# --- Primero el fallo: una versión ingenua, matada una vez ----------------------------------------

NOTA = "Según config/db.toml, db escucha en el puerto 5432."  # la línea que el hijo config añade


def preparar_ingenua(carpeta):
    """Una ejecución del incidente preparada con el harness de referencia (el punto de control
    06), para `ingenua_repite` e `ingenua_apunta_tarde`: la ruta de su carpeta."""
    from curso import rutas
    return preparar(rutas.puntos_de_control()[6], Path(carpeta) / "plantilla").parent


def ingenua_repite(plantilla, carpeta):
    """El harness de referencia con el atajo `repetir_sin_resultado` (una edición que no consta
    como hecha se repite sin mirar el fichero), matado justo después de editar README.md y
    reanudado hasta el final: cuántas veces acaba la nota en README.md."""
    from curso import rutas
    punto = rutas.puntos_de_control()[6]
    with servidor_que_cuenta() as (url, _):
        base = copiar_ejecucion(plantilla, Path(carpeta) / "repite")
        codigo, _, errores = reanudar(punto, base, url, "repetir_sin_resultado", CURSO_MORIR_EN="efecto:1")
        assert codigo == -9, errores
        hasta_el_final(punto, base, url, "repetir_sin_resultado")
    return (base.parent / "copia" / "README.md").read_text(encoding="utf-8").count(NOTA)


def ingenua_apunta_tarde(plantilla, carpeta):
    """El harness de referencia con el atajo `apuntar_despues_de_actuar` (la respuesta del modelo
    se apunta después de actuar sobre ella), contra un servidor que no contesta dos veces lo mismo
    (el plan `variar`), matado justo después de editar README.md y reanudado hasta el final:
    (el texto de la respuesta sobre la que se actuó, la que pidió la edición en el proceso que
    murió; el de la que quedó apuntada en la base como esa respuesta)."""
    from curso import rutas
    from curso.ensayo.fallos import Fallos
    punto = rutas.puntos_de_control()[6]
    with servidor_que_cuenta(Fallos(variar=True)) as (url, contador):
        base = copiar_ejecucion(plantilla, Path(carpeta) / "apunta_tarde")
        codigo, _, errores = reanudar(punto, base, url, "apuntar_despues_de_actuar", CURSO_MORIR_EN="efecto:1")
        assert codigo == -9, errores
        hasta_el_final(punto, base, url, "apuntar_despues_de_actuar")
    pide_editar = [r for r in contador.respuestas if any(b.get("name") == "editar" for b in r)]
    apuntada = next(r for rol, r in (json.loads(t) for (t,) in _consultar(
        base, "SELECT texto FROM historial WHERE ejecucion='config' ORDER BY seq"))
        if rol == "asistente" and any(b.get("name") == "editar" for b in r))

    def texto(respuesta):
        return " ".join(b["text"] for b in respuesta if b["type"] == "text")
    return texto(pide_editar[0]), texto(apuntada)


def hasta_el_paso(proceso, k):
    """Lee lo que escribe `proceso` (lanzado con CURSO_AVISAR_PASOS=1) hasta que avisa de su paso
    número `k`. True si llegó a él; False si terminó antes."""
    while linea := proceso.stdout.readline():
        if linea.startswith(AVISO_DE_PASO) and int(linea[len(AVISO_DE_PASO):]) >= k:
            return True
    return False


# Las caídas se reparten entre tantos hilos como núcleos (cada uno lanza sus procesos, de uno en
# uno, contra SU servidor de ensayo: así cada contador solo ve las peticiones de sus ejecuciones).
A_LA_VEZ = max(1, min(4, os.cpu_count() or 1))


def repartir(tareas, url, contador, hacer, a_la_vez=A_LA_VEZ):
    """Los resultados de `hacer(tarea, url, contador)` para cada tarea, en el orden de `tareas`.
    El hilo 0 usa el servidor (url, contador) que le dan; cada uno de los demás, uno suyo."""
    a_la_vez = max(1, min(a_la_vez, len(tareas)))
    with ExitStack() as pila:
        servidores = [(url, contador)] + [pila.enter_context(servidor_que_cuenta())
                                          for _ in range(a_la_vez - 1)]

        def tanda(h):
            u, c = servidores[h]
            return [(i, hacer(t, u, c)) for i, t in enumerate(tareas) if i % a_la_vez == h]

        with ThreadPoolExecutor(a_la_vez) as hilos:
            hechos = dict(par for lote in hilos.map(tanda, range(a_la_vez)) for par in lote)
    return [hechos[i] for i in range(len(tareas))]
