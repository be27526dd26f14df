"""Para los ejercicios de la lección 08: una edición como mucho una vez bajo DBOS, y los hijos en una cola.

Un solo fichero porque son los casos de los ejercicios de una lección, y cada caso es la frase de lo
que esa lección pidió; partirlo separaría un ejercicio de su pista.

8.1 (`efectos_dbos.aplicar_una_vez`) no necesita DBOS: recibe la intención que DBOS habría guardado
(la de `ensayar`, del punto de control 08) y el fichero tal como lo deja un proceso que muere en
cada punto. Se comprueba en este proceso, con ficheros de verdad.

8.2 (`flujos.repartir_en_cola`) sí: DBOS registra cada workflow una vez por proceso y su cola vive
en la base del sistema. Se comprueba en otro proceso (`COLA`) con tu `flujos.py`, una base SQLite
en una carpeta temporal y un hijo de prueba que solo apunta cuándo empieza y cuándo acaba; tarda
unos segundos, lo que tarda en arrancar DBOS.
"""
import functools
import json
import os
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from curso import rutas
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual
from curso.rutas import cargar_modulo

TEXTO = "# notas\n\nNadie ha tocado la base.\n"
ANTIGUO, NUEVO = "Nadie ha tocado la base.\n", "Nadie ha tocado la base.\nEl puerto es el 5432.\n"  # añade: antiguo sigue


@functools.lru_cache(maxsize=None)
def referencia():
    """`ensayar` y `escritor` del punto de control 08, y `resultado` de su entorno.py: con ellos se
    prepara cada caso. No se carga su efectos_dbos.py entero: registraría sus pasos en DBOS."""
    punto = rutas.puntos_de_control()[8]
    entorno = cargar_modulo(punto / "entorno.py", "_entorno_08_de_referencia")
    herramientas = cargar_modulo(punto / "herramientas.py", "_herramientas_08_de_referencia")
    return entorno, herramientas


def huella(fichero):
    import hashlib
    return hashlib.sha256(Path(fichero).read_bytes()).hexdigest() if Path(fichero).is_file() else None


def ensayar(entorno, llamada):
    """La intención de la referencia: {"antes", "despues", "esperado"} (como `efectos_dbos.ensayar`)."""
    import shutil
    _, herramientas = referencia()
    fichero = herramientas.dentro(entorno, llamada["input"]["ruta"])
    despues = esperado = None
    if fichero.is_file():
        borrador = carpeta_temporal("borrador-")
        copia = herramientas.dentro(borrador, llamada["input"]["ruta"])
        copia.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fichero, copia)
        try:
            esperado = herramientas.editar(borrador, **llamada["input"])
            despues = huella(copia)
        except herramientas.ErrorDeHerramienta:
            pass
    return {"antes": huella(fichero), "despues": despues, "esperado": esperado}


def editar(id="e1", ruta="notas.txt", antiguo=ANTIGUO, nuevo=NUEVO):
    return {"type": "tool_use", "id": id, "name": "editar", "input": {"ruta": ruta, "antiguo": antiguo, "nuevo": nuevo}}


def deja_editar(nombre, entrada):
    return nombre == "editar" and entrada.get("ruta") == "notas.txt"


def copia_con(texto=TEXTO):
    """Una copia de trabajo con notas.txt."""
    copia = carpeta_temporal("copia-")
    (copia / "notas.txt").write_text(texto, encoding="utf-8")
    return copia


def notas(copia):
    return (copia / "notas.txt").read_text(encoding="utf-8")


def es_error(observacion):
    return isinstance(observacion, dict) and observacion.get("is_error") is True


# --- 8.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "8.1", leccion=8, titulo="aplicar_una_vez: una edición como mucho una vez aunque DBOS repita el paso",
    nombre="aplicar_una_vez", modulo="efectos_dbos",
    pistas=[
        "Mira primero el fichero: calcula su huella ahora (huella(herramientas.dentro(entorno, ruta))) y "
        "compárala con las dos de la intención, la de antes y la de después.",
        "Con la de antes (o si la intención no tiene «esperado»: la edición falla sin tocar nada), edita como "
        "siempre: atender(llamada, entorno, usuario). Con la de después, la edición ya se hizo antes de una "
        "caída: no edites, devuelve resultado(llamada['id'], intencion['esperado']).",
        "Con cualquier otra huella, alguien más cambió el fichero: no lo toques y devuelve "
        "resultado(llamada['id'], «... ha cambiado ...», error=True).",
    ],
)


@caso("con el fichero como antes: edita una vez y da la observación de editar")
def _(aplicar_una_vez):
    copia = copia_con()
    intencion = ensayar(copia, editar())
    observacion = aplicar_una_vez(copia, editar(), intencion, deja_editar)
    igual(notas(copia), TEXTO.replace(ANTIGUO, NUEVO), "notas.txt después")
    igual(observacion, referencia()[0].resultado("e1", intencion["esperado"]), "la observación")


@caso("el paso repetido tras una caída justo después de editar: no edita otra vez, y da la misma observación")
def _(aplicar_una_vez):
    copia = copia_con()
    intencion = ensayar(copia, editar())
    primera = aplicar_una_vez(copia, editar(), intencion, deja_editar)
    segunda = aplicar_una_vez(copia, editar(), intencion, deja_editar)  # lo que hace DBOS al recuperar
    igual(notas(copia), TEXTO.replace(ANTIGUO, NUEVO), "notas.txt tras el paso repetido (la nota, una vez)")
    igual(segunda, primera, "la observación del paso repetido")


@caso("el fichero ya tiene la huella de después (otro proceso editó y murió): no lo toca y da la esperada")
def _(aplicar_una_vez):
    copia = copia_con()
    intencion = ensayar(copia, editar())
    (copia / "notas.txt").write_text(TEXTO.replace(ANTIGUO, NUEVO), encoding="utf-8")
    observacion = aplicar_una_vez(copia, editar(), intencion, deja_editar)
    igual(notas(copia), TEXTO.replace(ANTIGUO, NUEVO), "notas.txt")
    igual(observacion, referencia()[0].resultado("e1", intencion["esperado"]), "la observación")


@caso("alguien más cambió el fichero: no lo toca, y la observación es un error")
def _(aplicar_una_vez):
    for otro in ("# notas\n\nAlguien ha tocado la base.\n", TEXTO + "una línea más\n", ""):
        copia = copia_con()
        intencion = ensayar(copia, editar())
        (copia / "notas.txt").write_text(otro, encoding="utf-8")
        observacion = aplicar_una_vez(copia, editar(), intencion, deja_editar)
        igual(notas(copia), otro, f"notas.txt, que otro dejó como {otro!r}")
        if not es_error(observacion) or observacion.get("tool_use_id") != "e1":
            raise Fallo("una observación de error (is_error: true) de la llamada e1", observacion,
                        f"con notas.txt cambiado por otro a {otro!r}")


@caso("una edición que falla (antiguo no aparece): se intenta como siempre, error y nada cambia")
def _(aplicar_una_vez):
    copia = copia_con()
    mala = editar(antiguo="no está\n")
    intencion = ensayar(copia, mala)
    observacion = aplicar_una_vez(copia, mala, intencion, deja_editar)
    igual(notas(copia), TEXTO, "notas.txt")
    if not es_error(observacion) or "no aparece" not in str(observacion.get("content")):
        raise Fallo("el error de editar («antiguo no aparece»)", observacion)


@caso("sin permiso para editar ese fichero: no se edita")
def _(aplicar_una_vez):
    copia = copia_con()
    intencion = ensayar(copia, editar())
    observacion = aplicar_una_vez(copia, editar(), intencion, lambda nombre, entrada: False)
    igual(notas(copia), TEXTO, "notas.txt")
    if not es_error(observacion):
        raise Fallo("una observación de error: el usuario no dio permiso", observacion)


# --- 8.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "8.2", leccion=8, titulo="repartir_en_cola: los hijos en una cola de DBOS, con su límite",
    nombre=None, modulo="flujos",
    pistas=[
        "Para cada hijo, encólalo con su id: `with SetWorkflowID(f\"{padre}/{agente['id']}\"):` y, dentro, "
        "`cola.enqueue(hijo, padre, agente, proyecto)`. enqueue devuelve un handle enseguida: el hijo corre "
        "cuando la cola lo deja.",
        "Encola todos antes de esperar a ninguno: si esperas a cada uno nada más encolarlo, los hijos van uno "
        "tras otro aunque la cola admita más.",
        "Al final, devuelve [h.get_result() for h in handles], en el orden en que los encolaste.",
    ],
)

# El proceso que prueba tu repartir_en_cola: tres hijos de prueba (cada uno, un paso que tarda
# ESPERA s y apunta cuándo empieza y acaba), con un padre de prueba, en una cola de 1 y en otra de 2.
COLA = r'''
import json, sys, time
espacio, base = sys.argv[1:3]
sys.path.insert(0, espacio)
from dbos import DBOS, SetWorkflowID
import flujos

ESPERA = 0.4

@DBOS.step()
def trabajar(yo):
    empieza = time.monotonic()
    time.sleep(ESPERA)
    return [yo, empieza, time.monotonic()]

@DBOS.workflow()
def hijo_de_prueba(padre, agente, proyecto):
    return trabajar(agente["id"])

flujos.hijo = hijo_de_prueba

@DBOS.workflow()
def padre_de_prueba(cola):
    hijos = [{"id": h} for h in ("a", "b", "c")]
    return flujos.repartir_en_cola(DBOS.workflow_id, hijos, "copia", DBOS.retrieve_queue(cola))

DBOS(config={"name": "comprobar-8-2", "system_database_url": f"sqlite:///{base}", "log_level": "ERROR",
             "application_version": "8.2"})
DBOS.launch()
hecho = {}
try:
    for cola, limite in (("una", 1), ("dos", 2)):
        DBOS.register_queue(cola, worker_concurrency=limite, polling_interval_sec=0.05)
        with SetWorkflowID(f"p-{cola}"):
            hecho[cola] = {"devuelve": padre_de_prueba(cola)}
        hecho[cola]["hijos"] = [[s.workflow_id, s.queue_name, s.parent_workflow_id]
                                for s in DBOS.list_workflows(name="hijo_de_prueba")
                                if s.workflow_id.startswith(f"p-{cola}")]
except NotImplementedError as e:
    hecho = {"pendiente": str(e)}
except Exception as e:
    hecho = {"error": f"{type(e).__name__}: {e}"}
finally:
    DBOS.destroy()
print("RESULTADO " + json.dumps(hecho))
'''


ESPERA_DEL_PROCESO_S = 90  # tu código corre en el proceso COLA: si no acaba en esto, se corta


@contextmanager
def sin_el_reloj_del_caso():
    """Mientras dura el bloque, sin el límite de reloj de cada caso (`ejercicios.con_limite`): el
    código del alumno corre en otro proceso, con su propio límite (ESPERA_DEL_PROCESO_S), y solo
    arrancar DBOS puede pasar de ese límite en una máquina cargada. Al salir, el límite sigue con lo
    que le quedaba."""
    quedaba, _ = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if quedaba:
            signal.setitimer(signal.ITIMER_REAL, quedaba)


@functools.lru_cache(maxsize=4)
def en_cola(fichero, _firma):
    """Lo que da el proceso COLA con el flujos.py de `fichero` (su firma: mtime y tamaño, para no
    repetirlo en cada caso de una misma comprobación)."""
    base = carpeta_temporal("cola-") / "dbos.sqlite"
    try:
        with sin_el_reloj_del_caso():
            hecho = subprocess.run([sys.executable, "-c", COLA, str(Path(fichero).parent), str(base)],
                                   capture_output=True, text=True, timeout=ESPERA_DEL_PROCESO_S,
                                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    except subprocess.TimeoutExpired:
        return {"error": f"el padre de prueba no acabó en {ESPERA_DEL_PROCESO_S} s: ¿esperas a un hijo que no encolaste?"}
    lineas = [linea for linea in hecho.stdout.splitlines() if linea.startswith("RESULTADO ")]
    if not lineas:
        return {"error": (hecho.stderr.strip().splitlines() or ["el proceso no dijo nada"])[-1]}
    return json.loads(lineas[-1][len("RESULTADO "):])


def probar_la_cola(flujos):
    fichero = Path(flujos.__file__)
    hecho = en_cola(str(fichero), (fichero.stat().st_mtime_ns, fichero.stat().st_size))
    if "pendiente" in hecho:
        raise NotImplementedError(hecho["pendiente"])
    if "error" in hecho:
        raise Fallo("que el padre de prueba acabe", hecho["error"])
    return hecho


def solapes(devuelve):
    """Cuántos hijos llegaron a correr a la vez, como mucho, según lo que apuntaron."""
    tramos = [(empieza, acaba) for _, empieza, acaba in devuelve]
    return max(sum(1 for e, a in tramos if e <= t < a) for t, _ in tramos)


@caso("devuelve lo de cada hijo en el orden de la lista, no en el que acaben")
def _(flujos):
    hecho = probar_la_cola(flujos)
    for cola in ("una", "dos"):
        devuelve = hecho[cola]["devuelve"]
        if not isinstance(devuelve, list) or len(devuelve) != 3 or not all(isinstance(d, list) for d in devuelve):
            raise Fallo("una lista con lo que devolvió cada uno de los tres hijos", devuelve, f"con la cola «{cola}»")
        igual([d[0] for d in devuelve], ["a", "b", "c"], f"de quién es cada resultado, con la cola «{cola}»")


@caso("cada hijo es un workflow hijo con el id «padre/hijo», encolado en la cola que recibes")
def _(flujos):
    hecho = probar_la_cola(flujos)
    for cola in ("una", "dos"):
        igual(sorted(map(tuple, hecho[cola]["hijos"])),
              [(f"p-{cola}/{h}", cola, f"p-{cola}") for h in ("a", "b", "c")],
              f"(id, cola, padre) de cada hijo, con la cola «{cola}»")


@caso("con la cola de uno a la vez nunca corren dos; con la de dos, sí: se encolan todos antes de esperar")
def _(flujos):
    hecho = probar_la_cola(flujos)
    igual({"una": solapes(hecho["una"]["devuelve"]), "dos": solapes(hecho["dos"]["devuelve"])},
          {"una": 1, "dos": 2}, "cuántos hijos corrieron a la vez, como mucho, en cada cola")
