"""Para la lección 08 y sus tests: el mismo simulacro de caídas en el harness de la 06 y en su port a DBOS.

Equipo del curso (lo usan los tests del punto de control 08, el cuaderno 08 y `python -m curso medir
dbos`). Dos *motores* con la misma cara (`MOTORES`):

- "06": `python todo_junto.py reanudar` del punto de control (o del espacio del alumno), con su
  simulacro de siempre (`CURSO_MORIR_EN`, que lee su pasos.py);
- "dbos": `python todo_junto_dbos.py reanudar`, el port de la lección 08. DBOS no sabe nada de
  simulacros: quien lo mata es su corredor (CORREDOR_DBOS), que mira las sentencias de SQLAlchemy y,
  justo después del COMMIT que guarda la salida de un paso (una fila de `operation_outputs`), lo
  cuenta; `CURSO_MORIR_EN=paso:K` manda el SIGKILL ahí. `efecto:K`, justo después de la edición
  número K de la copia de trabajo, antes de que DBOS guarde nada; `peticion:K`, justo después de
  que llegue la respuesta K del modelo, antes de que DBOS guarde la salida de su paso.

Y en los dos se cuenta igual lo que se hizo: el servidor de ensayo cuenta las peticiones al modelo
(`simulacro.Contador`), y un diario (`diario.jsonl`, en la carpeta de la ejecución, fuera de lo que
se compara) apunta cada herramienta que se ejecutó de verdad y dónde. De ahí salen las columnas:
peticiones y herramientas hechas de más (frente a la ejecución sin caídas), ediciones de la copia de
trabajo hechas de más, órdenes ejecutadas de más, ejecuciones perdidas (que no acaban con el padre
completado) y si el resultado final es igual al de la ejecución sin caídas (`foto` de cada motor).
"""
import collections
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from curso.material import lanzadera, simulacro
from curso.material.simulacro import (AVISAR_PASOS, AVISO_DE_PASO, ESPERA_DE_UN_PROCESO_S, INCIDENTE, YA_TERMINO,
                                      ficheros)
from curso.material.simulacro import A_LA_VEZ, repartir

DIARIO = "diario.jsonl"
PROCESOS_COMO_MUCHO = 300  # reanudaciones de una ejecución antes de darla por perdida
SEMILLA = 20260808

# Lo mismo en los dos corredores: cada herramienta que se ejecuta de verdad, una línea del diario
# (con O_APPEND: un SIGKILL no la deja a medias); y, tras una edición de la copia de trabajo, `al_editar`.
APUNTAR = r'''
import json as _json, os as _os, time as _time
def apuntar(carpeta, **datos):
    linea = _json.dumps(dict(datos, pid=_os.getpid(), t=int(_time.time() * 1000))) + "\n"
    fd = _os.open(_os.path.join(carpeta, "diario.jsonl"), _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o644)
    try:
        _os.write(fd, linea.encode())
    finally:
        _os.close(fd)

def apuntar_en_el_diario(carpeta, al_editar=None):
    import herramientas
    apuntar(carpeta, vida=True)
    for nombre in ("leer", "buscar", "editar", "ejecutar"):
        original = getattr(herramientas, nombre)
        def envuelta(entorno, *a, _original=original, _nombre=nombre, **k):
            hecho = _original(entorno, *a, **k)
            donde = _os.path.basename(_os.path.normpath(str(entorno)))
            apuntar(carpeta, herramienta=_nombre, donde=donde)
            if _nombre == "editar" and donde == "copia" and al_editar is not None:
                al_editar()
            return hecho
        setattr(herramientas, nombre, envuelta)
'''

# El de la 06 (simulacro.CORREDOR, con sus variantes y sus avisos), con el diario puesto nada más importar
# sus módulos.
_IMPORTA = "import agentes, efectos, pasos, permisos, todo_junto\n"
assert _IMPORTA in simulacro.CORREDOR, "simulacro.CORREDOR ha cambiado: pon el diario donde importa sus módulos"
CORREDOR_06 = APUNTAR + simulacro.CORREDOR.replace(_IMPORTA, _IMPORTA + "apuntar_en_el_diario(os.path.dirname(base))\n", 1)

CORREDOR_DBOS = APUNTAR + r'''
import re, signal, sys, threading
punto, carpeta, url, variante = sys.argv[1:5]
sys.path.insert(0, punto)
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.engine.default import DefaultDialect

MORIR, AVISAR = _os.environ.get("CURSO_MORIR_EN", ""), _os.environ.get("CURSO_AVISAR_PASOS")
hechos, cerrojo = {"paso": 0, "efecto": 0, "peticion": 0}, threading.Lock()

def contar(clase):
    with cerrojo:
        hechos[clase] += 1
        if AVISAR and clase == "paso":
            print(f"· simulacro: paso {hechos['paso']}", flush=True)
        if MORIR == f"{clase}:{hechos[clase]}":
            _os.kill(_os.getpid(), signal.SIGKILL)  # como un kill -9: sin limpiar nada

# Una salida de paso guardada es una fila nueva de operation_outputs: se cuenta tras su COMMIT.
GUARDA = re.compile(r'\s*INSERT INTO ("?\w+"?\.)?"?operation_outputs"?\s*\(', re.I)
marcadas = set()

@event.listens_for(Engine, "after_cursor_execute")
def vista(conexion, cursor, sql, parametros, contexto, varias):
    if GUARDA.match(sql):
        marcadas.add(id(conexion.connection))

confirmar, deshacer = DefaultDialect.do_commit, DefaultDialect.do_rollback

def do_commit(self, conexion):
    confirmar(self, conexion)
    if id(conexion) in marcadas:
        marcadas.discard(id(conexion))
        contar("paso")

def do_rollback(self, conexion):
    marcadas.discard(id(conexion))
    deshacer(self, conexion)

DefaultDialect.do_commit, DefaultDialect.do_rollback = do_commit, do_rollback
apuntar_en_el_diario(carpeta, lambda: contar("efecto"))
import api
pedir = api.ModeloAPI.__call__
def pedir_y_contar(self, *argumentos, **opciones):  # peticion:K, con la respuesta ya aquí y sin guardar
    respuesta = pedir(self, *argumentos, **opciones)
    contar("peticion")
    return respuesta
api.ModeloAPI.__call__ = pedir_y_contar
import flujos, todo_junto_dbos
if variante == "sin_8_1":  # la edición en un paso normal, como cualquier otra herramienta
    flujos.es_una_edicion = lambda llamada, escritura: False
elif variante != "correcta":
    sys.exit(f"variante desconocida: {variante}")
sys.exit(todo_junto_dbos.main(["reanudar", carpeta, "--url", url]))
'''


@contextmanager
def carpeta_en_memoria():
    """Como `simulacro.carpeta_en_memoria` (en /dev/shm si lo hay, y se borra al salir), con su propio
    prefijo: lo que la lección 08 deja ahí mientras corre no se confunde con lo de la 06."""
    carpeta = tempfile.mkdtemp(prefix="simulacro-08-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        yield Path(carpeta)
    finally:
        shutil.rmtree(carpeta, ignore_errors=True)


# --- Los dos motores ----------------------------------------------------------------------------

def _consultar(base, sql, *argumentos):
    bd = sqlite3.connect(base, isolation_level=None)
    try:
        return bd.execute(sql, argumentos).fetchall()
    finally:
        bd.close()


class Motor06:
    """El harness de la lección 06: su base es `todo_junto.db`; sus pasos, la tabla `pasos`."""

    nombre = "06"
    codigo_ya_termino = 1

    def preparar(self, punto, carpeta, proyecto=INCIDENTE):
        return simulacro.preparar(punto, carpeta, proyecto).parent

    def lanzar(self, punto, carpeta, url, variante="correcta", **entorno):
        """Como en la 06: un hijo de la lanzadera de `punto` (curso/material/lanzadera.py), que ya
        importó el harness, o un intérprete nuevo sin ella."""
        return simulacro.hijo(punto, CORREDOR_06, [punto, Path(carpeta) / "todo_junto.db", url, variante],
                              simulacro._entorno(**entorno))

    def morir_tras(self, g):
        """El CURSO_MORIR_EN para morir tras el paso g (desde 0) de una ejecución recién preparada:
        el paso 1 de cada proceso es su vida."""
        return f"paso:{g + 2}"

    def pasos(self, carpeta):
        """[(clase, agente)] de cada paso de la ejecución, sin los de preparar ni las vidas."""
        return simulacro.pasos_de_la_ejecucion(simulacro.pasos_de(Path(carpeta) / "todo_junto.db"))

    def foto(self, carpeta):
        return simulacro.foto(Path(carpeta) / "todo_junto.db")

    def acabada(self, carpeta):
        return _consultar(Path(carpeta) / "todo_junto.db",
                          "SELECT estado FROM ejecuciones WHERE id='incidente'") == [("completada",)]


class MotorDBOS:
    """El port a DBOS: su base del sistema es `dbos.sqlite`; sus pasos, las filas de `operation_outputs`."""

    nombre = "dbos"
    codigo_ya_termino = 1

    def preparar(self, punto, carpeta, proyecto=INCIDENTE):
        hecho = subprocess.run([sys.executable, "todo_junto_dbos.py", "preparar", str(carpeta), "--proyecto",
                                str(proyecto)], cwd=punto, capture_output=True, text=True)
        if hecho.returncode != 0:
            raise RuntimeError(f"preparar falló: {hecho.stderr}")
        return Path(carpeta)

    def lanzar(self, punto, carpeta, url, variante="correcta", **entorno):
        return _lanzar(["-c", CORREDOR_DBOS, str(punto), str(carpeta), url, variante], entorno)

    def morir_tras(self, g):
        return f"paso:{g + 1}"

    def pasos(self, carpeta):
        """[(clase, agente)]: cada salida guardada, en el orden en que se guardó."""
        base = Path(carpeta) / "dbos.sqlite"
        if not base.exists():
            return []
        return [(nombre, wf.rsplit("/", 1)[-1]) for wf, nombre in
                _consultar(base, "SELECT workflow_uuid, function_name FROM operation_outputs ORDER BY rowid")]

    def foto(self, carpeta):
        return foto_dbos(carpeta)

    def acabada(self, carpeta):
        base = Path(carpeta) / "dbos.sqlite"
        return base.exists() and _consultar(
            base, "SELECT status FROM workflow_status WHERE workflow_uuid='incidente'") == [("SUCCESS",)]


MOTORES = {"06": Motor06(), "dbos": MotorDBOS()}


def _lanzar(argumentos, entorno):
    """Un intérprete nuevo (los procesos de DBOS: cada uno lo importa y lo lanza)."""
    return subprocess.Popen([sys.executable, *argumentos], env=simulacro._entorno(**entorno), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def foto_dbos(carpeta):
    """El resultado de una ejecución sobre DBOS, leído con SQL directo: el estado y la salida de cada
    workflow, la salida de cada paso de cada uno en su orden, y la copia de trabajo. Fuera, lo que
    cambia con las caídas sin cambiar el resultado: horas, intentos de recuperación, y el reparto de
    los tokens de entrada entre caché y cálculo (se compara su suma)."""
    base = Path(carpeta) / "dbos.sqlite"
    assert _consultar(base, "PRAGMA integrity_check") == [("ok",)]
    pasos = collections.defaultdict(list)
    for wf, n, nombre, salida, error, hijo in _consultar(
            base, "SELECT workflow_uuid, function_id, function_name, output, error, child_workflow_id "
                  "FROM operation_outputs ORDER BY workflow_uuid, function_id"):
        pasos[wf].append((n, nombre, _sin_horas(nombre, salida), error, hijo))
    return {
        "workflows": _consultar(base, "SELECT s.workflow_uuid, s.status, s.name, o.output, o.error FROM workflow_status s "
                                      "LEFT JOIN workflow_output o USING (workflow_uuid) ORDER BY s.workflow_uuid"),
        "pasos": dict(pasos),
        "copia": ficheros(Path(carpeta) / "copia"),
    }


def _sin_horas(nombre, salida):
    if nombre == "DBOS.sleep":  # la hora a la que despertaría: de reloj
        return None
    if nombre == "pedir":
        hecho = json.loads(salida)
        usage = hecho["usage"]
        return {"respuesta": hecho["respuesta"], "entrada": usage["input_tokens"] + usage["cache_read_input_tokens"],
                "salida": usage["output_tokens"]}
    return salida


def diario(carpeta, vidas=False):
    """Lo que apuntó el diario de la ejecución: [{"pid", "t", "herramienta", "donde"}] (la hora, en
    milisegundos de reloj); con `vidas`, también el arranque de cada proceso: {"pid", "t", "vida"}."""
    ruta = Path(carpeta) / DIARIO
    if not ruta.exists():
        return []
    apuntes = [json.loads(linea) for linea in ruta.read_text(encoding="utf-8").splitlines() if linea]
    return [a for a in apuntes if vidas or "vida" not in a]


def cuentas_del_diario(apuntes):
    """(herramientas ejecutadas, ediciones de la copia de trabajo, órdenes ejecutadas)."""
    de_verdad = [a for a in apuntes if not a["donde"].startswith((".borrador", "borrador-"))]  # los ensayos de 6.1 y 8.1
    return (len(de_verdad), sum(1 for a in de_verdad if a["herramienta"] == "editar" and a["donde"] == "copia"),
            sum(1 for a in de_verdad if a["herramienta"] == "ejecutar"))


# --- Reanudar hasta el final, y lo que costó ------------------------------------------------------

def reanudar(motor, punto, carpeta, url, variante="correcta", **entorno):
    """(código de salida, stdout, stderr) de un proceso que reanuda la ejecución de `carpeta`."""
    proceso = motor.lanzar(punto, carpeta, url, variante, **entorno)
    salida, errores = proceso.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
    return proceso.returncode, salida, errores


def hasta_el_final(motor, punto, carpeta, url, variante="correcta", **entorno):
    """Reanuda hasta que la ejecución acaba: cuántos procesos murieron por el camino (con `entorno`
    en cada uno), o None si no acabó en PROCESOS_COMO_MUCHO (una ejecución perdida).
    AssertionError si un proceso sale con un error que no es una caída."""
    muertos = 0
    for _ in range(PROCESOS_COMO_MUCHO):
        codigo, _, errores = reanudar(motor, punto, carpeta, url, variante, **entorno)
        if codigo == 0 or (codigo == motor.codigo_ya_termino and YA_TERMINO in errores):
            return muertos
        assert codigo == -signal.SIGKILL, errores
        muertos += 1
    return None


def sin_caidas(motor, punto, plantilla, url, contador, carpeta, variante="correcta"):
    """La ejecución de referencia: {"foto", "pasos", "peticiones", "herramientas", "ediciones",
    "ordenes", "trabajo_s"}; `trabajo_s`, del primer paso al final (sin el arranque de Python)."""
    destino = Path(carpeta) / f"sin-caidas-{Path(plantilla).name}-{variante}"
    shutil.copytree(plantilla, destino)
    antes = len(contador.peticiones)
    proceso = motor.lanzar(punto, destino, url, variante, **{AVISAR_PASOS: "1"})
    assert hasta_el_paso(proceso, 1), proceso.stderr.read()
    empieza = time.monotonic()
    _, errores = proceso.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
    assert proceso.returncode == 0, errores
    herramientas, ediciones, ordenes = cuentas_del_diario(diario(destino))
    return {"foto": motor.foto(destino), "pasos": motor.pasos(destino), "peticiones": len(contador.peticiones) - antes,
            "herramientas": herramientas, "ediciones": ediciones, "ordenes": ordenes,
            "trabajo_s": time.monotonic() - empieza}


def hasta_el_paso(proceso, k):
    """Lee lo que escribe `proceso` (con CURSO_AVISAR_PASOS=1) hasta que avisa de su paso `k`."""
    while linea := proceso.stdout.readline():
        if linea.startswith(AVISO_DE_PASO) and int(linea[len(AVISO_DE_PASO):]) >= k:
            return True
    return False


def cuenta(motor, carpeta, referencia, contador, antes, muertos):
    """La fila de una ejecución con caídas, ya acabada (o perdida: `muertos` None)."""
    herramientas, ediciones, ordenes = cuentas_del_diario(diario(carpeta))
    perdida = muertos is None or not motor.acabada(carpeta)
    return {"perdida": perdida, "igual": not perdida and motor.foto(carpeta) == referencia["foto"],
            "peticiones_de_mas": len(contador.peticiones) - antes - referencia["peticiones"],
            "herramientas_de_mas": herramientas - referencia["herramientas"],
            "ediciones_de_mas": ediciones - referencia["ediciones"], "ordenes_de_mas": ordenes - referencia["ordenes"]}


# --- Las caídas ---------------------------------------------------------------------------------

def caidas_tras_cada_paso(motor, punto, plantilla, url, contador, carpeta, referencia, variante="correcta",
                          a_la_vez=A_LA_VEZ, una_por_clase=False, aviso=None):
    """Una fila por caída: una justo después de cada paso de la ejecución sin caídas y otra justo
    después de cada edición de la copia de trabajo (clase "efecto"), cada una en su propia copia
    de la ejecución preparada, reanudada después hasta el final. Con `una_por_clase`, solo tras
    el primer paso de cada clase. Comprueba que cada proceso murió justo tras el paso que tocaba."""
    R = referencia["pasos"]
    caidas = [(g, clase, agente, motor.morir_tras(g)) for g, (clase, agente) in enumerate(R)]
    caidas += [(None, "efecto", None, f"efecto:{k}") for k in range(1, referencia["ediciones"] + 1)]
    if una_por_clase:
        caidas = [c for i, c in enumerate(caidas) if c[1] not in {d[1] for d in caidas[:i]}]

    def caer(caida, url, contador):
        g, clase, agente, donde = caida
        destino = Path(carpeta) / f"caida-{Path(plantilla).name}-{variante}-{donde.replace(':', '-')}"
        shutil.copytree(plantilla, destino)
        antes = len(contador.peticiones)
        codigo, _, errores = reanudar(motor, punto, destino, url, variante, CURSO_MORIR_EN=donde)
        assert codigo == -signal.SIGKILL, errores
        if g is not None:
            assert motor.pasos(destino)[-1] == (clase, agente), f"tenía que morir tras {clase} de {agente}"
        muertos = hasta_el_final(motor, punto, destino, url, variante)
        if aviso:
            aviso()
        return dict(cuenta(motor, destino, referencia, contador, antes, muertos), paso=g, clase=clase, agente=agente)

    return repartir(caidas, url, contador, caer, a_la_vez)


def caidas_al_azar(motor, punto, plantilla, url, contador, carpeta, referencia, caidas=100, semilla=SEMILLA,
                   variante="correcta", a_la_vez=A_LA_VEZ, aviso=None):
    """Una fila por caída al azar, cada una en su propia ejecución: el proceso se mata desde fuera
    (SIGKILL) tras un paso de la ejecución elegido al azar, todos igual de probables, y entre 0 y
    lo que separa dos pasos en la referencia después; luego se reanuda hasta el final. `tras` dice
    tras qué paso cayó (el último que llegó a guardar), o "ninguno"."""
    R = referencia["pasos"]
    hueco_s = referencia["trabajo_s"] / max(1, len(R))
    azar = random.Random(semilla)
    momentos = [(i, azar.randint(1, len(R)), azar.uniform(0, hueco_s)) for i in range(caidas)]

    def caer(momento, url, contador):
        i, k, espera = momento
        destino = Path(carpeta) / f"azar-{Path(plantilla).name}-{variante}-{i}"
        shutil.copytree(plantilla, destino)
        antes = len(contador.peticiones)
        proceso = motor.lanzar(punto, destino, url, variante, **{AVISAR_PASOS: "1"})
        if hasta_el_paso(proceso, k):
            time.sleep(espera)
        proceso.kill()
        _, errores = proceso.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
        cayo = proceso.returncode == -signal.SIGKILL
        assert cayo or proceso.returncode == 0, errores
        hechos = motor.pasos(destino)
        tras = hechos[-1][0] if hechos and cayo else ("ninguno" if cayo else "acabó antes")
        muertos = hasta_el_final(motor, punto, destino, url, variante)
        if aviso:
            aviso()
        return dict(cuenta(motor, destino, referencia, contador, antes, muertos), cayo=cayo, tras=tras)

    return repartir(momentos, url, contador, caer, a_la_vez)


def total(filas):
    """Las cifras de un simulacro: caídas, perdidas, iguales y lo hecho de más, sumados."""
    return {"caidas": len(filas), "perdidas": sum(f["perdida"] for f in filas), "iguales": sum(f["igual"] for f in filas),
            **{clave: sum(f[clave] for f in filas) for clave in
               ("peticiones_de_mas", "herramientas_de_mas", "ediciones_de_mas", "ordenes_de_mas")}}


COLUMNAS = [("caidas", "caídas"), ("perdidas", "perdidas"), ("iguales", "iguales"),
            ("peticiones_de_mas", "peticiones de más"), ("herramientas_de_mas", "herramientas de más"),
            ("ediciones_de_mas", "ediciones de más"), ("ordenes_de_mas", "órdenes de más")]


def tabla(filas_por_nombre):
    """Una tabla de texto: una fila por simulacro ({nombre: filas}), con las columnas de `total`."""
    ancho = max(len(n) for n in filas_por_nombre)
    lineas = [" " * ancho + "".join(f" {titulo:>{max(7, len(titulo))}}" for _, titulo in COLUMNAS)]
    for nombre, filas in filas_por_nombre.items():
        cifras = total(filas)
        lineas.append(f"{nombre:{ancho}}" + "".join(f" {cifras[c]:>{max(7, len(t))}}" for c, t in COLUMNAS))
    return "\n".join(lineas)


def por_clase(filas):
    """{clase de paso: (caídas, iguales, ediciones de más)} de un simulacro tras cada paso."""
    clases = {}
    for fila in filas:
        n, iguales, dobles = clases.get(fila["clase"], (0, 0, 0))
        clases[fila["clase"]] = (n + 1, iguales + fila["igual"], dobles + fila["ediciones_de_mas"])
    return clases


# --- Cuánto tarda en volver ---------------------------------------------------------------------

def de_la_caida_a_la_vuelta(motor, punto, plantilla, url, carpeta, veces=3, tras=10):
    """Segundos desde un SIGKILL hasta que el proceso que reanuda guarda su primer paso nuevo (el
    de trabajo: en la 06, el que sigue a su «vida»), `veces` veces; cada vez, en una copia nueva,
    matando el primer proceso desde fuera justo cuando avisa de su paso `tras` (desde 0).

    Cada proceso, un intérprete nuevo en los dos motores (sin la lanzadera de la 06): lo que se
    compara es lo que tarda en volver un proceso que arranca de cero, como el que lanza una persona."""
    with _sin_lanzadera():
        return _de_la_caida_a_la_vuelta(motor, punto, plantilla, url, carpeta, veces, tras)


@contextmanager
def _sin_lanzadera():
    antes = os.environ.get(lanzadera.VARIABLE_SIN_LANZADERA)
    os.environ[lanzadera.VARIABLE_SIN_LANZADERA] = "1"
    try:
        yield
    finally:
        if antes is None:
            del os.environ[lanzadera.VARIABLE_SIN_LANZADERA]
        else:
            os.environ[lanzadera.VARIABLE_SIN_LANZADERA] = antes


def _de_la_caida_a_la_vuelta(motor, punto, plantilla, url, carpeta, veces, tras):
    segundos = []
    for i in range(veces):
        destino = Path(carpeta) / f"vuelta-{Path(plantilla).name}-{i}"
        shutil.copytree(plantilla, destino)
        primero = motor.lanzar(punto, destino, url, **{AVISAR_PASOS: "1"})
        assert hasta_el_paso(primero, int(motor.morir_tras(tras).split(":")[1])), primero.stderr.read()
        primero.kill()
        cayo = time.monotonic()
        primero.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
        segundo = motor.lanzar(punto, destino, url, **{AVISAR_PASOS: "1"})
        assert hasta_el_paso(segundo, 2 if motor.nombre == "06" else 1), segundo.stderr.read()
        segundos.append(time.monotonic() - cayo)
        segundo.communicate(timeout=ESPERA_DE_UN_PROCESO_S)
    return segundos

