"""Los subagentes: un padre reparte investigación de solo lectura entre hijos e integra lo que entregan.

Lección 05. Un hijo es otra ejecución del bucle de la lección 01, con su objetivo, sus
herramientas, sus recursos y su tope. No hereda la conversación del padre: empieza con un
encargo (el contrato que comprueba `buzon.validar_encargo`) y termina con una entrega en JSON
(hallazgos, referencias, incertidumbres). De arriba abajo:

- `encargo()` construye el contrato de un hijo; `encargos_del_incidente()` da los dos de la
  lección y `encargo_en_solitario()` el de un agente que lo investiga todo él solo.
- `correr_hijo()` corre el bucle ESTRECHADO al encargo: el modelo solo ve los esquemas de sus
  acciones, el bucle trabaja sobre una vista del proyecto con solo sus recursos y nada que
  escriba o ejecute está permitido. Lee la entrega del texto final, sin caerse si no es JSON.
- `repartir()` (fan-out): crea el padre esperando a sus hijos, corre cada hijo y entrega lo suyo
  por el buzón (`recibir` y `admitir`) a través de un transporte que puede entregar dos veces.
- `integrar()` (fan-in): con el padre en cola, comprueba cada hallazgo contra los ficheros que
  cita y se queda solo con los que la evidencia respalda. Sin votar: que dos hijos digan lo
  mismo no lo hace más cierto, y que lo diga un solo hijo no lo hace menos. Integrar es código
  del arnés (abrir ficheros, comparar citas): no le hace ninguna petición al modelo.
"""
import functools
import json
import re
import shutil
import tempfile
from pathlib import Path

import buzon
import herramientas
from bucle import bucle
from entorno import CATALOGO

ACCIONES_DE_HIJO = list(buzon.ACCIONES_DELEGABLES)  # leer y buscar: un hijo solo mira
TOPE_DE_PASOS = 6  # turnos de un hijo: al de los registros le bastan 3 y al de la configuración 4
TOPE_EN_SOLITARIO = 10  # el agente que lo hace todo necesita 8
PLAZO_S = 120  # está en el contrato; este bucle, síncrono y sin reloj, no lo vigila

# --- El encargo -------------------------------------------------------------------------------


def encargo(objetivo, recursos, acciones=ACCIONES_DE_HIJO, tope_de_pasos=TOPE_DE_PASOS, plazo=PLAZO_S):
    """El encargo de un hijo, ya validado con `buzon.validar_encargo` (ValueError si algo está mal).

    `recursos` son las rutas del proyecto que puede mirar: un fichero (`README.md`) o una carpeta
    acabada en «/» (`logs/`). El entregable es siempre la forma vacía que el hijo rellena.
    """
    nuevo = {
        "objetivo": objetivo,
        "recursos": list(recursos),
        "acciones": list(acciones),
        "entregable": {campo: [] for campo in buzon.CAMPOS_DEL_ENTREGABLE},
        "tope_de_pasos": tope_de_pasos,
        "plazo": plazo,
    }
    buzon.validar_encargo(nuevo)
    return nuevo


def encargos_del_incidente():
    """{hijo: encargo} de la lección: la API no llega a su base. Dos fuentes independientes."""
    return {
        "logs": encargo("Averigua adónde intenta conectar la API y cómo falla, según sus registros.",
                        ["logs/"]),
        "config": encargo("Averigua en qué puerto escucha la base de datos, según su configuración.",
                          ["config/"]),
    }


def encargo_en_solitario():
    """El encargo de un único agente que investiga el incidente entero él mismo."""
    return encargo("La API no llega a su base de datos: averigua por qué, con registros y "
                   "configuración.", ["README.md", "config/", "logs/"], tope_de_pasos=TOPE_EN_SOLITARIO)


# --- El contexto del hijo: se construye desde el encargo ---------------------------------------

SISTEMA_DE_HIJO = """Eres un subagente de investigación: otro agente, tu padre, te ha hecho un \
encargo y espera tu entrega. Solo puedes mirar: tus herramientas leen ficheros o buscan en ellos, \
y solo ves los recursos de tu encargo. No puedes cambiar nada ni ejecutar órdenes.

Cuando termines, contesta solo con un objeto JSON, sin nada alrededor, con tres listas de textos:
- "hallazgos": lo que has comprobado. Cada hallazgo cita entre « » el texto exacto del fichero \
que lo respalda.
- "referencias": una por hallazgo y en su mismo orden: «ruta:línea» del texto citado, p. ej. \
logs/api.log:7.
- "incertidumbres": lo que no has podido comprobar.

Tu padre comprobará cada referencia: si la línea no dice lo que citas, el hallazgo se descarta."""


def pedido(encargo):
    """El primer mensaje del hijo: su encargo, y nada de la conversación del padre."""
    return (f"Tu encargo: {encargo['objetivo']}\n"
            f"Puedes mirar: {', '.join(encargo['recursos'])}\n"
            f"Con: {', '.join(encargo['acciones'])}\n"
            f"Tienes como mucho {encargo['tope_de_pasos']} turnos.\n"
            f"Entrega: {json.dumps(encargo['entregable'], ensure_ascii=False)}")


def inicio_de_hijo(encargo):
    """El principio de M de un hijo: su prompt de sistema y su encargo."""
    return [("sistema", SISTEMA_DE_HIJO), ("usuario", pedido(encargo))]


# --- Estrechar: lo que el hijo ve, lo que puede mirar y lo que puede hacer ------------------------

class ModeloEstrecho:
    """Envuelve a un modelo: le ofrece solo las herramientas de `acciones`, sacadas del CATALOGO.

    Lo que le pase el bucle (HERRAMIENTAS, las del agente del recetario) no cuenta: manda el
    encargo. Ofrecer no es permitir: un modelo puede pedir una herramienta que no se le ofreció.
    Lo que la niega es `atender`: sin usuario, editar y ejecutar no tienen permiso, y una
    herramienta inventada no existe. Las delegables, leer y buscar, no piden permiso porque
    solo miran, y miran una vista con solo los recursos del encargo (ver `vista`): un encargo
    que diera solo una de las dos no impediría la otra, pero ninguna ve más de lo permitido.
    """

    def __init__(self, modelo, acciones):
        self.modelo = modelo
        self.ofrecidas = [h for h in CATALOGO if h["name"] in acciones]

    @property
    def usage(self):
        """El `usage` de la última respuesta del modelo envuelto."""
        return getattr(self.modelo, "usage", None)

    def __call__(self, M, herramientas=()):
        return self.modelo(M, self.ofrecidas)


def vista(proyecto, recursos, carpeta):
    """Copia en `carpeta` solo los `recursos` del proyecto, con sus mismas rutas.

    Es la carpeta de trabajo del hijo: lo que no está en su encargo no existe para él, aunque lo
    pida. ValueError si un recurso sale del proyecto, no existe, o es una carpeta nombrada sin
    la «/» final (las referencias a sus ficheros no se admitirían) o un fichero nombrado con ella.
    """
    base = Path(proyecto).resolve()
    for recurso in recursos:
        try:
            origen = herramientas.dentro(base, recurso)
        except herramientas.ErrorDeHerramienta:
            raise ValueError(f"El recurso {recurso!r} sale del proyecto: usa rutas relativas "
                             "dentro de él.") from None
        destino = Path(carpeta) / origen.relative_to(base)
        if origen.is_dir() and recurso.endswith("/"):
            shutil.copytree(origen, destino, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif origen.is_file() and not recurso.endswith("/"):
            destino.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origen, destino)
        elif origen.exists():
            raise ValueError(f"El recurso {recurso!r}: una carpeta se nombra acabada en «/» y un "
                             "fichero sin ella.")
        else:
            raise ValueError(f"El recurso {recurso!r} no está en el proyecto {base.name}.")


# --- Correr un hijo y leer su entrega ------------------------------------------------------------

VALLA = re.compile(r"```(?:json)?\s*\n(.*)\n```", re.S)  # un modelo pequeño a veces la pone


def leer_entrega(texto):
    """(carga, problema) del texto final de un hijo: el objeto JSON que escribió y None, o, si no
    es un objeto JSON, {"texto": lo que escribió} y por qué no vale. Nunca lanza: una entrega
    mal hecha la rechaza el buzón, no tumba al padre."""
    if texto is None:
        return {"texto": ""}, "El hijo llegó a su tope de pasos sin entregar nada."
    valla = VALLA.fullmatch(texto.strip())
    try:
        carga = json.loads(valla.group(1) if valla else texto)
    except ValueError as e:
        return {"texto": texto}, (f"La entrega del hijo no es JSON (falla en el carácter {e.pos}): "
                                  f"{texto[:60]!r}.")
    if not isinstance(carga, dict):
        return {"texto": texto}, ("La entrega del hijo es JSON, pero no un objeto con hallazgos, "
                                  "referencias e incertidumbres.")
    return carga, None


def correr_hijo(modelo, encargo, proyecto, tope=None):
    """Corre un hijo sobre `proyecto` con el bucle de la lección 01, estrechado a su encargo.

    `tope` (por defecto el `tope_de_pasos` del encargo) no puede pasar del del encargo. El bucle
    corre en una vista temporal con solo los recursos del encargo, con el modelo envuelto en
    `ModeloEstrecho` y sin usuario: nadie le da permiso para escribir ni ejecutar, y el proyecto
    no se toca. Devuelve un dict: `motivo` ("fin" o "tope"), `texto` (el final, o None), `carga`
    (la entrega leída), `problema` (por qué la entrega no cumple el encargo, o None) y `M`.
    """
    buzon.validar_encargo(encargo)
    if tope is None:
        tope = encargo["tope_de_pasos"]
    if type(tope) is not int or tope < 1:
        raise ValueError(f"El tope debe ser un entero positivo, no {tope!r}.")
    tope = min(tope, encargo["tope_de_pasos"])
    estrecho = ModeloEstrecho(modelo, encargo["acciones"])
    with tempfile.TemporaryDirectory(prefix="hijo-") as carpeta:
        vista(proyecto, encargo["recursos"], carpeta)
        motivo, texto, M = bucle(estrecho, inicio_de_hijo(encargo), carpeta, tope, None)  # None: sin usuario
    carga, problema = leer_entrega(texto)
    if problema is None:
        try:
            buzon.validar_entrega(encargo, carga)
        except ValueError as e:
            problema = str(e)
    return {"motivo": motivo, "texto": texto, "carga": carga, "problema": problema, "M": M}


# --- Fan-out: repartir y entregar por el buzón -------------------------------------------------------

def transporte_directo(hijo, enviar):
    """Entrega una vez: [lo que contestó el buzón]."""
    return [enviar()]


def transporte_que_repite(*repetidos):
    """Un transporte que entrega dos veces lo de los hijos `repetidos`, como uno que perdió la
    confirmación del primer intento y reintenta. El buzón tiene que absorber la repetición."""
    def transporte(hijo, enviar):
        return [enviar() for _ in range(2 if hijo in repetidos else 1)]
    return transporte


def repartir(bd, padre, hijos, modelos, proyecto, transporte=transporte_directo):
    """Fan-out: crea `padre` esperando a `hijos` ({hijo: encargo}), corre cada hijo con su modelo
    (`modelos[hijo]`) y entrega su resultado por el buzón de `bd`.

    Cada entrega tiene una identidad estable, «padre/hijo/1»: la de esta entrega, no la de cada
    intento del transporte. `transporte(hijo, enviar)` llama a `enviar()` (que es `buzon.recibir`)
    una vez o más y devuelve lo que contestó cada vez; después se admite la entrega. Un hijo
    que falla o entrega algo que no cumple su encargo no tumba al padre: su informe dice por qué,
    y el padre sigue esperando (no hay entrega admitida de ese hijo).

    Devuelve {hijo: informe}, y cada informe es un dict con `entrega`, `motivo`, `carga`,
    `problema`, `M`, `recepciones` (["recibida", "duplicada"...]), `disposicion` (lo que contestó
    `admitir`, o None), `rechazo` (por qué no se admitió, o None) y `estado_del_padre` justo
    después de esa entrega.
    """
    if not isinstance(hijos, dict) or not all(isinstance(e, dict) for e in hijos.values()):
        raise ValueError("Los hijos deben ser un dict {hijo: encargo}: cada hijo necesita su encargo.")
    sin_modelo = [hijo for hijo in hijos if hijo not in modelos]
    if sin_modelo:
        raise ValueError(f"Faltan los modelos de {', '.join(map(repr, sin_modelo))}: no se ha creado nada.")
    buzon.crear_padre(bd, padre, hijos)
    informes = {}
    for hijo, su_encargo in hijos.items():
        informe = informes[hijo] = {"entrega": f"{padre}/{hijo}/1", "motivo": None, "carga": None,
                                    "problema": None, "M": None, "recepciones": [],
                                    "disposicion": None, "rechazo": None}
        try:
            informe.update(correr_hijo(modelos[hijo], su_encargo, proyecto))
        except Exception as e:  # la frontera entre hijo y padre: el fallo de un hijo es un dato
            informe["rechazo"] = f"El hijo falló antes de entregar: {type(e).__name__}: {e}"
        else:
            enviar = functools.partial(buzon.recibir, bd, padre, hijo, informe["entrega"], informe["carga"])
            try:
                informe["recepciones"] = transporte(hijo, enviar)
            except ValueError as e:  # la entrega no cumple el encargo: no entra en el buzón
                informe["rechazo"] = str(e)
            else:
                informe["disposicion"] = buzon.admitir(bd, informe["entrega"])
        informe["estado_del_padre"] = buzon.estado(bd, padre)[0]
    return informes


# --- Fan-in: integrar por evidencia ------------------------------------------------------------------

CITA = re.compile(r"«([^«»]+)»")  # lo que un hallazgo cita del fichero, entre « »
REFERENCIA = re.compile(r"(?P<ruta>[^:]+):(?P<linea>[1-9][0-9]{0,8})")  # «logs/api.log:7»
PUERTO = re.compile(r"(?:puerto\s*=\s*|:)(\d{4,5})(?!\d)")  # «db:5433», «puerto = 5432»


def por_que_no(hallazgo, referencia, proyecto):
    """None si la línea `referencia` de `proyecto` dice todo lo que `hallazgo` cita entre « »;
    si no, por qué el hallazgo no se puede dar por bueno. Mira los ficheros, no al hijo."""
    citas = CITA.findall(hallazgo)
    if not citas:
        return "no cita entre « » el texto que lo respalda"
    if referencia is None:
        return "no tiene referencia"
    partes = REFERENCIA.fullmatch(referencia)
    if partes is None:
        return f"la referencia {referencia!r} no dice la línea (ruta:línea)"
    try:
        texto = herramientas.contenido(proyecto, partes["ruta"])
    except herramientas.ErrorDeHerramienta as e:
        return str(e)
    lineas, numero = herramientas.lineas(texto), int(partes["linea"])
    if numero > len(lineas):
        return f"{partes['ruta']} solo tiene {len(lineas)} líneas"
    linea = lineas[numero - 1]
    for cita in citas:
        if cita not in linea:
            return f"la línea {numero} de {partes['ruta']} no dice «{cita}»: dice «{linea.strip()}»"
    return None


def verificar(carga, proyecto):
    """(verificados, descartados) de una entrega: cada hallazgo con la referencia de su mismo
    orden, comprobado contra `proyecto`. Los descartados llevan su `motivo`."""
    verificados, descartados = [], []
    referencias = carga.get("referencias", [])
    for i, hallazgo in enumerate(carga.get("hallazgos", [])):
        referencia = referencias[i] if i < len(referencias) else None
        motivo = por_que_no(hallazgo, referencia, proyecto)
        fila = {"hallazgo": hallazgo, "referencia": referencia}
        if motivo is None:
            verificados.append(fila)
        else:
            descartados.append(dict(fila, motivo=motivo))
    return verificados, descartados


def concluir(verificados):
    """La conclusión, sacada solo de lo comprobado: qué puerto citan las fuentes, y si coinciden."""
    puertos = {}  # puerto -> referencias que lo citan, en orden de aparición
    for fila in verificados:
        for cita in CITA.findall(fila["hallazgo"]):
            for puerto in PUERTO.findall(cita):
                puertos.setdefault(puerto, []).append(fila["referencia"])
    if not puertos:
        return "Ningún hallazgo comprobado cita un puerto: falta evidencia para concluir."
    if len(puertos) == 1:
        (puerto, donde), = puertos.items()
        return (f"Todo lo comprobado cita el mismo puerto, {puerto} ({', '.join(donde)}): el fallo no "
                "está en el puerto.")
    partes = [f"{puerto} ({', '.join(donde)})" for puerto, donde in puertos.items()]
    return "Los puertos no coinciden: " + " frente a ".join(partes) + "."


def integrar(bd, padre, proyecto):
    """Fan-in: integra las entregas admitidas de `padre` comprobando su evidencia en `proyecto`.

    Solo con el padre 'en_cola' (ValueError si no: aún falta algún hijo). Devuelve un dict con
    `verificados` y `descartados` (cada uno con su `entrega`), las `incertidumbres` de los
    hijos y la `conclusion`. No cambia el estado del padre: integrar otra vez da lo mismo.
    """
    estado, _ = buzon.estado(bd, padre)
    if estado != buzon.EN_COLA:
        raise ValueError(f"El padre {padre!r} está {estado!r}: integrar espera a que esté en cola, "
                         "con una entrega admitida de cada hijo.")
    verificados, descartados, incertidumbres = [], [], []
    for _, entrega, carga in buzon.mensajes(bd, padre):
        buenos, malos = verificar(carga, proyecto)
        verificados += [dict(fila, entrega=entrega) for fila in buenos]
        descartados += [dict(fila, entrega=entrega) for fila in malos]
        incertidumbres += carga.get("incertidumbres", [])
    return {"verificados": verificados, "descartados": descartados,
            "incertidumbres": incertidumbres, "conclusion": concluir(verificados)}
