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

Cada ejercicio acaba con su diferencial (`diferencial.py`), como en el resto del curso. El del 8.1
corre en este proceso, sin DBOS: ficheros de verdad, ediciones generadas y lo que pasa entre la
intención y la edición. El del 8.2 lanza DBOS una sola vez para cada implementación (la tuya y la
de referencia), en otro proceso que se queda esperando entradas (`SERVIDOR_DE_LA_COLA`): arrancar
DBOS cuesta segundos, y un padre de prueba, milisegundos.

La referencia de los diferenciales se carga sin registrar nada en DBOS (`sin_registrar_en_dbos`):
DBOS rechaza dos funciones con el mismo nombre (`intencion_de_editar`, `hijo`...) de dos ficheros
distintos en un mismo proceso, y las tuyas ya están registradas.
"""
import functools
import json
import os
import select
import signal
import subprocess
import sys
import types
from contextlib import contextmanager
from pathlib import Path

from hypothesis import strategies as st

from curso import rutas
from curso.comprobaciones.diferencial import carpeta_fija, en_la_corrida, intento
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


@contextmanager
def sin_registrar_en_dbos():
    """Mientras dura el bloque, `import dbos` da un módulo de mentira: sus decoradores
    (`DBOS.step()`, `DBOS.workflow()`) devuelven la función tal cual y lo demás no hace nada. Para
    cargar la referencia de un diferencial en un proceso donde ya están registradas las del alumno:
    solo se usan sus funciones normales (`aplicar_una_vez`) o la ruta de su fichero (`flujos.py`)."""
    def decorador(*_args, **_opciones):
        return lambda funcion: funcion

    falso = types.ModuleType("dbos")
    falso.DBOS = type("DBOS", (), {"step": staticmethod(decorador), "workflow": staticmethod(decorador),
                                   "transaction": staticmethod(decorador)})
    falso.__getattr__ = lambda nombre: type(nombre, (), {})
    antes = sys.modules.get("dbos")
    sys.modules["dbos"] = falso
    try:
        yield
    finally:
        if antes is None:
            sys.modules.pop("dbos", None)
        else:
            sys.modules["dbos"] = antes


def referencia_sin_dbos(e):
    """La referencia del ejercicio `e` (su función o su módulo), del punto de control 08, cargada sin
    registrar nada en DBOS. Es `cargar_referencia` de los diferenciales de la 08."""
    with sin_registrar_en_dbos():
        modulo = cargar_modulo(rutas.puntos_de_control()[8] / f"{e.modulo}.py", f"_{e.modulo}_del_diferencial")
    return modulo if e.nombre is None else getattr(modulo, e.nombre)


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


# El diferencial del 8.1: una edición generada (un antiguo y un nuevo de pocas letras, en notas.txt,
# que puede no existir, o en un fichero que no existe), con un usuario que la deja o no; su
# intención, ensayada por la referencia (lo que DBOS habría guardado del paso 1); después, otro que
# cambia, borra o reescribe el fichero, o nadie; y el paso 2 una vez, o dos (DBOS lo repite tras una
# caída). Se comparan las observaciones (de un error, solo que lo es y a qué llamada contesta: sus
# palabras no las fija el ejercicio, salvo las de `atender`, que son las mismas) y los ficheros.
USUARIOS_81 = {"que deja editar notas.txt": deja_editar, "que no deja nada": lambda nombre, entrada: False}
OTRO_81 = {
    "nadie toca el fichero": None,
    "otro añade una línea a notas.txt": lambda f: f.write_text((f.read_text(encoding="utf-8") if f.exists() else "")
                                                                + "otra\n", encoding="utf-8"),
    "otro borra notas.txt": lambda f: f.unlink(missing_ok=True),
    "otro reescribe notas.txt": lambda f: f.write_text("b\na\n", encoding="utf-8"),
}
ENTRADAS_81 = st.fixed_dictionaries({
    "notas": st.one_of(st.none(), st.text(alphabet="ab\n", max_size=6)),
    "ruta": st.sampled_from(["notas.txt", "notas.txt", "no_esta.txt"]),
    "antiguo": st.text(alphabet="ab\n", max_size=3),
    "nuevo": st.text(alphabet="abc\n", max_size=3),
    "usuario": st.sampled_from(["que deja editar notas.txt", "que deja editar notas.txt", "que no deja nada"]),
    "antes del paso 2": st.sampled_from(["nadie toca el fichero", "nadie toca el fichero", *list(OTRO_81)[1:]]),
    "veces": st.sampled_from([1, 2]),
})


def sin_palabras(observacion):
    """Lo que se compara de una observación: entera si no es un error; de un error, a qué llamada
    contesta y que es un error."""
    if es_error(observacion):
        return {"tool_use_id": observacion.get("tool_use_id"), "is_error": True, "content": "(un mensaje de error)"}
    return observacion


def contar_81(e):
    notas = "sin notas.txt" if e["notas"] is None else f"notas.txt = {e['notas']!r}"
    return (f"{notas}; editar {e['ruta']} ({e['antiguo']!r} → {e['nuevo']!r}), con un usuario {e['usuario']}; "
            f"tras la intención, {e['antes del paso 2']}; el paso 2, {e['veces']} {'vez' if e['veces'] == 1 else 'veces'}")


@caso.diferencial(entradas=ENTRADAS_81, contar=contar_81, cargar_referencia=referencia_sin_dbos, pistas={
    "las observaciones": "huella de antes (o intención sin esperado): atender; la de después: la esperada; otra: "
                         "un error sin tocar nada",
    "los ficheros": "la edición, como mucho una vez; un fichero que cambió otro no se toca"})
def _(aplicar_una_vez, e):
    copia = carpeta_fija("aplicar-una-vez")
    notas_txt = copia / "notas.txt"
    if e["notas"] is not None:
        notas_txt.write_text(e["notas"], encoding="utf-8")
    llamada = editar(ruta=e["ruta"], antiguo=e["antiguo"], nuevo=e["nuevo"])
    intencion = ensayar(copia, llamada)
    if OTRO_81[e["antes del paso 2"]] is not None:
        OTRO_81[e["antes del paso 2"]](notas_txt)
    observaciones = [sin_palabras(intento(aplicar_una_vez, copia, llamada, intencion, USUARIOS_81[e["usuario"]]))
                     for _ in range(e["veces"])]
    return {"las observaciones": observaciones,
            "los ficheros": {f.name: f.read_text(encoding="utf-8") for f in sorted(copia.iterdir()) if f.is_file()}}


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


# El diferencial del 8.2: padres de prueba con hijos generados (de cero a cuatro, con sus ids), un
# proyecto y una cola de uno, dos o tres a la vez, en un DBOS que se lanza una sola vez para cada
# implementación (`SERVIDOR_DE_LA_COLA`, que lee una entrada por línea y contesta sus hechos). El
# padre de prueba le pasa a tu función un `padre` que no es su propio id (así se ve si el id de cada
# hijo sale de lo que recibes), y una cola que apunta cuándo encolas y cuándo esperas: se compara lo
# que devuelve, los hijos (su id y su cola) y cuántos hijos habías encolado al esperar al primero.
# Sin relojes: quién corre a la vez lo miran los casos escritos.
SERVIDOR_DE_LA_COLA = r'''
import json, sys
espacio, base = sys.argv[1:3]
sys.path.insert(0, espacio)
from dbos import DBOS, SetWorkflowID
import flujos

@DBOS.step()
def apuntar(padre, agente, proyecto):
    return [padre, agente["id"], proyecto]

@DBOS.workflow()
def hijo_de_prueba(padre, agente, proyecto):
    return apuntar(padre, agente, proyecto)

flujos.hijo = hijo_de_prueba


class Apuntada:
    """La cola de verdad (o un handle suyo), que apunta en `diario` cada enqueue y cada get_result."""

    def __init__(self, de_verdad, diario):
        self._de_verdad, self._diario = de_verdad, diario

    def __getattr__(self, nombre):
        return getattr(self._de_verdad, nombre)

    def enqueue(self, *args, **opciones):
        handle = self._de_verdad.enqueue(*args, **opciones)
        self._diario.append("encola")
        return Apuntada(handle, self._diario)

    def get_result(self, *args, **opciones):
        self._diario.append("espera")
        # DBOS mira si el hijo acabó cada segundo; aquí, cada centésima: el padre de prueba no espera de más.
        opciones.setdefault("polling_interval_sec", 0.01)
        return self._de_verdad.get_result(*args, **opciones)


@DBOS.workflow()
def padre_de_prueba(padre, hijos, proyecto, cola):
    diario = []
    devuelve = flujos.repartir_en_cola(padre, hijos, proyecto, Apuntada(DBOS.retrieve_queue(cola), diario))
    return {"devuelve": devuelve, "diario": diario}


DBOS(config={"name": "diferencial-8-2", "system_database_url": f"sqlite:///{base}", "log_level": "ERROR",
             "application_version": "8.2"})
DBOS.launch()
for limite in (1, 2, 3):
    DBOS.register_queue(f"cola-de-{limite}", worker_concurrency=limite, polling_interval_sec=0.02)
print("LISTO", flush=True)
for numero, linea in enumerate(sys.stdin):
    e, prefijo = json.loads(linea), f"{numero}:"
    try:
        with SetWorkflowID(prefijo + "el-padre-de-prueba"):
            hecho = padre_de_prueba(prefijo + e["padre"], e["hijos"], e["proyecto"], f"cola-de-{e['limite']}")
        hechos = DBOS.list_workflows(parent_workflow_id=prefijo + "el-padre-de-prueba", load_input=False,
                                     load_output=False)
        hecho["hijos"] = sorted([s.workflow_id, s.queue_name] for s in hechos)
    except NotImplementedError as error:
        hecho = {"pendiente": str(error)}
    except Exception as error:
        hecho = {"lanzo": type(error).__name__, "mensaje": str(error)[:300]}
    print("RESULTADO " + json.dumps(hecho, default=repr).replace('"' + prefijo, '"'), flush=True)
DBOS.destroy()
'''
ESPERA_DE_UNA_ENTRADA_S = 30  # un padre de prueba tarda milisegundos: si no contesta en esto, no acabará

_HECHOS_DE_LA_COLA = {}  # {(firma de flujos.py, entrada): hechos}: el mismo código, los mismos hechos


class ServidorDeLaCola:
    """El proceso SERVIDOR_DE_LA_COLA con el flujos.py de `fichero`, ya lanzado y esperando entradas."""

    def __init__(self, fichero):
        carpeta = carpeta_temporal("cola-del-diferencial-")
        self.errores = carpeta / "stderr.txt"
        with sin_el_reloj_del_caso(), open(self.errores, "w", encoding="utf-8") as errores:
            self.proceso = subprocess.Popen(
                [sys.executable, "-c", SERVIDOR_DE_LA_COLA, str(Path(fichero).parent), str(carpeta / "dbos.sqlite")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errores, text=True, start_new_session=True,
                env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
            self.listo = self.linea("LISTO", ESPERA_DEL_PROCESO_S) is not None

    def linea(self, empieza, espera_s):
        """La primera línea de su salida que empieza por `empieza`, o None si no llega en `espera_s`."""
        import time
        hasta = time.monotonic() + espera_s
        while time.monotonic() < hasta:
            listo, _, _ = select.select([self.proceso.stdout], [], [], hasta - time.monotonic())
            if not listo:
                break
            linea = self.proceso.stdout.readline()
            if not linea:
                break
            if linea.startswith(empieza):
                return linea[len(empieza):].strip()
        return None

    def problema(self):
        ultimas = self.errores.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return ultimas[-1] if ultimas else "el proceso acabó sin decir nada"

    def hechos(self, entrada):
        if not self.listo or self.proceso.poll() is not None:
            return {"error": f"DBOS no arrancó con tu flujos.py: {self.problema()}"}
        with sin_el_reloj_del_caso():
            try:
                self.proceso.stdin.write(json.dumps(entrada) + "\n")
                self.proceso.stdin.flush()
            except OSError:
                return {"error": f"el proceso de DBOS murió: {self.problema()}"}
            linea = self.linea("RESULTADO ", ESPERA_DE_UNA_ENTRADA_S)
        if linea is None:
            self.cerrar()
            return {"error": f"el padre de prueba no acabó en {ESPERA_DE_UNA_ENTRADA_S} s: ¿esperas a un hijo que "
                             "no encolaste?"}
        return json.loads(linea)

    def cerrar(self):
        if self.proceso.poll() is None:
            try:
                self.proceso.stdin.close()
                self.proceso.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.proceso.pid, signal.SIGKILL)
                self.proceso.wait()
        self.proceso.stdout.close()


@contextmanager
def servidor_de_la_cola(fichero):
    servidor = ServidorDeLaCola(fichero)
    try:
        yield servidor
    finally:
        servidor.cerrar()


class ErrorEnTuFuncion(Exception):
    """Lo que lanzó tu repartir_en_cola en el proceso de DBOS (con el nombre de su tipo, que es lo que se compara)."""


def hechos_de_la_cola(flujos, entrada):
    """Lo que da el padre de prueba con el flujos.py de `flujos` y esta entrada: de la caché si ese
    fichero ya la contestó, y si no, del proceso de DBOS con ese fichero (uno por corrida)."""
    fichero = Path(flujos.__file__).resolve()
    clave = (str(fichero), fichero.stat().st_mtime_ns, fichero.stat().st_size, json.dumps(entrada, sort_keys=True))
    if clave not in _HECHOS_DE_LA_COLA:
        hecho = en_la_corrida(("cola", clave[:3]), lambda: servidor_de_la_cola(fichero)).hechos(entrada)
        if "error" in hecho:
            return hecho  # sin caché: otra corrida lo intentará otra vez
        _HECHOS_DE_LA_COLA[clave] = hecho
    return _HECHOS_DE_LA_COLA[clave]


def encolados_al_esperar(diario):
    """Cuántos hijos se habían encolado cuando se esperó al primero (todos los encolados, si no se esperó)."""
    return (diario + ["espera"]).index("espera") if "encola" in diario else 0


ENTRADAS_82 = st.fixed_dictionaries({
    "padre": st.sampled_from(["p", "padre-2"]),
    "hijos": st.lists(st.sampled_from(["logs", "config", "red", "api"]), unique=True, max_size=4).map(
        lambda ids: [{"id": i} for i in ids]),
    "proyecto": st.sampled_from(["copia", "otra-copia"]),
    "limite": st.sampled_from([1, 2, 3]),
})


def contar_82(e):
    return (f"repartir_en_cola({e['padre']!r}, hijos {[h['id'] for h in e['hijos']]}, {e['proyecto']!r}, "
            f"una cola de {e['limite']} a la vez)")


@caso.diferencial(entradas=ENTRADAS_82, contar=contar_82, ejemplos=15, para_encoger=20,
                  cargar_referencia=referencia_sin_dbos, pistas={
    "lo que devuelve": "lo que devuelve cada hijo, en el orden de hijos; cada hijo recibe (padre, agente, proyecto)",
    "los hijos (id y cola)": "cada hijo, un workflow hijo con el id f\"{padre}/{agente['id']}\" (el padre que "
                             "recibes), encolado en la cola que recibes",
    "hijos encolados al esperar al primero": "encola todos antes de esperar a ninguno"})
def _(flujos, e):
    hecho = hechos_de_la_cola(flujos, e)
    if "pendiente" in hecho:
        raise NotImplementedError(hecho["pendiente"])
    if "error" in hecho:
        raise Fallo("que el padre de prueba acabe", hecho["error"])
    if "lanzo" in hecho:
        raise type(hecho["lanzo"], (ErrorEnTuFuncion,), {})(hecho["mensaje"])
    return {"lo que devuelve": hecho["devuelve"], "los hijos (id y cola)": hecho["hijos"],
            "hijos encolados al esperar al primero": encolados_al_esperar(hecho["diario"])}
