"""Un hijo: una ejecución del bucle de la lección 01, estrechada a su encargo.

Lección 05. Un hijo tiene su objetivo, sus herramientas, sus recursos y su tope, y nada más: no
hereda la conversación del padre. Empieza con su encargo (ver encargos.py) y termina con una
entrega en JSON (hallazgos, referencias, incertidumbres). `correr_hijo()` corre el bucle
ESTRECHADO al encargo: el modelo solo ve los esquemas de sus acciones, el bucle trabaja sobre una
vista del proyecto con solo sus recursos, y nada que escriba o ejecute está permitido. Lee la
entrega del texto final sin caerse si no es JSON: una entrega mal hecha la rechaza el buzón, no
tumba al padre.
"""
import json
import re
import shutil
import tempfile
from pathlib import Path

import herramientas
from bucle import bucle
from encargos import validar_encargo, validar_entrega
from entorno import CATALOGO

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
    validar_encargo(encargo)
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
            validar_entrega(encargo, carga)
        except ValueError as e:
            problema = str(e)
    return {"motivo": motivo, "texto": texto, "carga": carga, "problema": problema, "M": M}
