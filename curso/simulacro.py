"""El simulacro de caídas de la lección 06: procesos de verdad, matados con SIGKILL, y reanudados.

Equipo del curso (lo usan los tests del punto de control 06, los del curso, el cuaderno y
`medir`). Cada proceso es `python todo_junto.py reanudar` de una carpeta de módulos (`punto`: el
punto de control 06 o el espacio del alumno), lanzado con `-S` contra un servidor de ensayo de
este proceso, por HTTP en 127.0.0.1 (ver CORREDOR). Se mata de tres maneras:

- en un paso: `CURSO_MORIR_EN=paso:K` (justo después del COMMIT de su paso K; ver pasos.py) o
  `efecto:K` (justo después de aplicar su edición K, antes de apuntarla);
- desde fuera, en un momento al azar (`Popen.kill`, SIGKILL).

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
from contextlib import contextmanager
from pathlib import Path

from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import RAIZ

INCIDENTE = RAIZ / "curso" / "datos" / "incidente"
YA_TERMINO = "ya terminó"
ESPERA_DE_UN_PROCESO_S = 120

# El proceso que reanuda, con una variante ingenua opcional que se le cambia antes de empezar
# (cada una rompe un invariante; los tests comprueban que la caída que le toca la delata).
CORREDOR = r'''
import sys
punto, base, url, variante = sys.argv[1:5]
sys.path.insert(0, punto)
import agentes, efectos, permisos, todo_junto

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


def copiar_ejecucion(origen, destino):
    """Copia la carpeta de una ejecución (cerrada): la base, su copia de trabajo y sus vistas."""
    shutil.copytree(origen, destino)
    return Path(destino) / "todo_junto.db"


def lanzar(punto, base, url, variante="correcta", **entorno):
    """Un proceso que reanuda `base`. `entorno`: CURSO_MORIR_EN, CURSO_FALLAR_EN..."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith(("CURSO_MORIR", "CURSO_FALLAR"))}
    variables.update(entorno, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.Popen([sys.executable, "-S", "-c", CORREDOR, str(punto), str(base), url, variante],
                            env=variables, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
        self.pausa.set()
        responder = servidor.ensayo.responder_con_tiempo

        def contando(peticion):
            self.pausa.wait(ESPERA_DE_UN_PROCESO_S)
            respuesta, segundos = responder(peticion)
            self.peticiones.append((time.monotonic(), respuesta["usage"]))
            return respuesta, segundos

        servidor.ensayo.responder_con_tiempo = contando

    def entrada(self, desde=0):
        """Los tokens de entrada de las peticiones de la número `desde` en adelante, enteros: los
        que calculó el servidor y los que tenía en su caché. Con la caché fría (un servidor que
        también se reinicia, o que atendió a otro entretanto) habría que calcularlos todos."""
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
    cuaderno ya importa en su lugar, ver curso/cuaderno.py). Un proceso aparte no ve ese cambio
    del cuaderno: sin esto, lanzaría el esbozo."""
    from curso import cuaderno, rutas

    espacio, referencias = rutas.espacio(), dict(cuaderno.REFERENCIAS.rutas)
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
