"""La ejecución de la lección 06 sobre DBOS: cada agente, un workflow; cada llamada, un paso.

Lección 08. El mismo padre con sus dos hijos, los mismos guiones y el mismo incidente, pero la
durabilidad ya no la escribes tú: la pone DBOS. Lo que cambia frente a la lección 06:

- **una petición al modelo es un paso** (`pedir`) y **una llamada de herramienta es un paso**
  (`herramienta`). DBOS guarda la salida de cada paso al terminarlo, en su base del sistema;
- **la M de cada agente vive en la memoria del workflow** (`bucle_duradero`, el bucle de las
  lecciones 01, 03 y 03b). Tras una caída, DBOS vuelve a ejecutar el workflow desde el principio:
  cada paso que ya tiene su salida guardada no se ejecuta, devuelve lo guardado, y así M se
  rehace sola. Nada de `reconstruir` desde un historial: la función del workflow tiene que ser
  determinista (lo que no lo es, a un paso);
- **los hijos son workflows hijos**, llamados uno tras otro desde el padre; o, si la ejecución
  lo pide, encolados en una cola de DBOS con un límite de cuántos corren a la vez
  (`repartir_en_cola`, el ejercicio 8.2);
- **el buzón son mensajes de DBOS**: cada hijo manda su entrega con `DBOS.send` al padre, con un
  tema por hijo, y el padre la recibe con `DBOS.recv`. Dentro de un workflow, `send` guarda el
  mensaje y su propia salida en una sola transacción: no se manda dos veces. Lo que DBOS no hace
  es admitir: comprobar la entrega contra el encargo (`validar_entrega`, lección 05) y cada
  hallazgo contra los ficheros (`subagentes.verificar`) sigue siendo cosa del harness.

Lo que DBOS promete de un paso: **al menos una vez**. Si el proceso muere dentro del paso, antes de
que se guarde su salida, al recuperar el paso se ejecuta otra vez desde su principio. Leer dos veces
no hace daño; una edición que añade texto, sí (el ejercicio 8.1).

Las rutas: el workflow recibe solo nombres relativos ("copia", "vistas/logs"), que se leen desde
`motor.CARPETA`, la carpeta de la ejecución de este proceso.

Con el ejercicio 8.1, una edición que se va a hacer va en dos pasos, la intención y la edición,
para hacerla como mucho una vez aunque DBOS repita un paso (`efectos_dbos.py`); las demás
llamadas, en uno (`atender_llamada`).
"""
import shutil

from agentes import medidas_de_limpiar
from api import ModeloAPI
from compactar import compactar, tokens
from dbos import DBOS, SetWorkflowID
from efectos_dbos import editar_como_mucho_una_vez, es_una_edicion
from encargos import validar_entrega
from entorno import CATALOGO, llamadas_de, texto_de
from hijos import leer_entrega, vista
from limpiar import Descontado, limpiar
import motor
from permisos import atender
from reintentos import ModeloConReintentos
from subagentes import verificar

ESPERA_DE_LA_ENTREGA_S = 60  # lo que el padre espera cada entrega (ya está: los hijos acabaron)


def tema(hijo):
    """El tema de los mensajes de un hijo a su padre: uno por hijo, para recibirlos en orden."""
    return f"entrega:{hijo}"


# --- Los pasos: lo que DBOS ejecuta al menos una vez y guarda al terminar --------------------------

@DBOS.step()
def pedir(modelo, M, ofrecidas):
    """Una petición al modelo: {"respuesta", "usage"}. Al recuperar, si ya se guardó, DBOS devuelve
    lo guardado sin pedir otra vez (aunque un modelo de verdad contestara otra cosa)."""
    base = ModeloConReintentos(ModeloAPI(modelo))
    respuesta = base(M, ofrecidas)
    return {"respuesta": respuesta, "usage": dict(base.usage)}


@DBOS.step()
def herramienta(llamada, carpeta, escritura):
    """Una llamada de herramienta: su observación (`permisos.atender`, lección 01). `escritura`
    son las rutas que el agente puede editar; nada más se permite."""
    def usuario(nombre, entrada):
        return nombre == "editar" and entrada.get("ruta") in escritura
    return atender(llamada, motor.CARPETA / carpeta, usuario)


@DBOS.step()
def preparar_vista(proyecto, recursos, carpeta):
    """La vista de un hijo (lección 05): solo sus recursos, copiados de la copia de trabajo.
    Repetirla no hace daño: se borra y se copia entera."""
    destino = motor.CARPETA / carpeta
    shutil.rmtree(destino, ignore_errors=True)
    destino.mkdir(parents=True)
    vista(motor.CARPETA / proyecto, recursos, destino)
    return carpeta


@DBOS.step()
def integrar(entregas, proyecto):
    """El mensaje con que empieza el padre: cada hallazgo comprobado contra los ficheros (lección
    05). Es un paso porque lee ficheros: el workflow no puede leer nada que cambie."""
    verificados, descartados, incertidumbres = [], [], []
    for entrega in entregas:
        buenos, malos = verificar(entrega["carga"], motor.CARPETA / proyecto)
        verificados += buenos
        descartados += malos
        incertidumbres += entrega["carga"].get("incertidumbres", [])
    lineas = ["Entregas de tus hijos, comprobadas contra los ficheros de la copia de trabajo:"]
    lineas += [f"✔ {f['hallazgo']} [{f['referencia']}]" for f in verificados]
    lineas += [f"✘ {f['hallazgo']} [{f['referencia']}]: {f['motivo']}" for f in descartados]
    lineas += [f"? {incertidumbre}" for incertidumbre in incertidumbres]
    lineas += ["", "Saca la conclusión de lo comprobado y escribe el informe del incidente para quien "
               "tiene que arreglarlo."]
    return "\n".join(lineas)


def atender_llamada(llamada, agente):
    """La observación de una llamada: una edición que se va a hacer, en dos pasos (8.1); las
    demás, en un paso `herramienta`."""
    if es_una_edicion(llamada, agente["escritura"]):
        return editar_como_mucho_una_vez(llamada, agente["carpeta"], agente["escritura"])
    return herramienta(llamada, agente["carpeta"], agente["escritura"])


# --- El bucle: el de las lecciones 01, 03 y 03b, con el modelo y las herramientas hechos pasos -----

class ModeloDePasos:
    """El modelo de un agente: cada llamada es un paso `pedir`. Guarda el `usage` de la última
    respuesta (la nueva o la guardada), que es lo que miran limpiar y compactar."""

    def __init__(self, modelo, herramientas):
        self.modelo = modelo
        self.ofrecidas = [h for h in CATALOGO if h["name"] in herramientas]
        self.usage = None

    def __call__(self, M, herramientas=()):
        hecho = pedir(self.modelo, M, self.ofrecidas)
        self.usage = hecho["usage"]
        return hecho["respuesta"]


def bucle_duradero(agente):
    """El texto final del agente (None si agotó su tope sin darlo). Cada turno: pedir, limpiar lo
    viejo (03b), compactar si aún hace falta (03), atender cada llamada. M no se guarda en ningún
    sitio: al recuperar, sale otra vez igual de las salidas guardadas de los pasos."""
    modelo = ModeloDePasos(agente["modelo"], agente["herramientas"])
    disparo, al_menos = medidas_de_limpiar(agente["umbral"])
    M = [tuple(mensaje) for mensaje in agente["inicio"]]
    for _ in range(agente["tope"]):
        respuesta = modelo(M)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        if not pedidas:
            return texto_de(respuesta)
        M, liberados = limpiar(M, tokens(modelo), disparo=disparo, al_menos=al_menos)
        M = compactar(Descontado(modelo, liberados) if liberados else modelo, M, umbral=agente["umbral"])
        M.append(("usuario", [atender_llamada(p, agente) for p in pedidas]))
    return None


# --- Los workflows ----------------------------------------------------------------------------------

@DBOS.workflow()
def hijo(padre, agente, proyecto):
    """Un hijo: su bucle y su entrega, mandada al padre. Devuelve por qué no vale la entrega, o None."""
    if agente["carpeta"] != proyecto:
        preparar_vista(proyecto, agente["recursos"], agente["carpeta"])
    carga, problema = leer_entrega(bucle_duradero(agente))
    if problema is None:
        try:
            validar_entrega(agente["encargo"], carga)
        except ValueError as e:
            problema = str(e)
    DBOS.send(padre, {"hijo": agente["id"], "carga": carga, "problema": problema}, topic=tema(agente["id"]))
    return problema


def repartir(padre, hijos, proyecto):
    """Corre cada hijo como workflow hijo, uno tras otro, con el id «padre/hijo». Devuelve lo que
    devuelve cada uno, en su orden."""
    hechos = []
    for agente in hijos:
        with SetWorkflowID(f"{padre}/{agente['id']}"):
            hechos.append(hijo(padre, agente, proyecto))
    return hechos


def repartir_en_cola(padre, hijos, proyecto, cola):
    """Como `repartir`, pero encolando cada hijo en `cola` (una cola de DBOS): DBOS los arranca
    cuando su límite lo permite, y esta función espera a que acaben todos. Devuelve lo que devuelve
    cada hijo, en el orden de `hijos` (no en el que acaben)."""
    encolados = []
    for agente in hijos:
        with SetWorkflowID(f"{padre}/{agente['id']}"):
            encolados.append(cola.enqueue(hijo, padre, agente, proyecto))
    return [encolado.get_result() for encolado in encolados]


@DBOS.workflow()
def padre(ejecucion):
    """La ejecución entera: reparte, recibe una entrega de cada hijo, la integra y pide el informe.
    Devuelve {"estado": "completada" o "fallida", "informe", "problemas"}."""
    yo, proyecto = DBOS.workflow_id, ejecucion["proyecto"]
    if ejecucion.get("cola"):  # los hijos, a la vez hasta el límite de la cola (8.2)
        repartir_en_cola(yo, ejecucion["hijos"], proyecto, DBOS.retrieve_queue(ejecucion["cola"]))
    else:
        repartir(yo, ejecucion["hijos"], proyecto)
    entregas = [DBOS.recv(tema(h["id"]), timeout_seconds=ESPERA_DE_LA_ENTREGA_S) for h in ejecucion["hijos"]]
    problemas = [f"{h['id']}: no ha llegado su entrega" if e is None else f"{h['id']}: {e['problema']}"
                 for h, e in zip(ejecucion["hijos"], entregas, strict=True) if e is None or e["problema"]]
    if problemas:
        return {"estado": "fallida", "informe": None, "problemas": problemas}
    agente = dict(ejecucion["padre"])
    agente["inicio"] = list(agente["inicio"]) + [("usuario", integrar(entregas, proyecto))]
    informe = bucle_duradero(agente)
    return {"estado": "completada" if informe is not None else "fallida", "informe": informe, "problemas": []}
