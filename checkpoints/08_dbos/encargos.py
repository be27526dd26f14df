"""El encargo de un hijo, como contrato: qué averigua, qué puede mirar y hacer, y qué entrega.

Lección 05. Un hijo no hereda la conversación de su padre: empieza con un encargo, un dict en
JSON que dice todo lo que necesita, y termina con una entrega que tiene que cumplirlo. `encargo()`
construye uno ya comprobado; `validar_encargo()` comprueba uno que llega hecho, y
`validar_entrega()`, que una entrega cumpla el suyo. El buzón guarda el encargo con el hijo que
el padre espera y rechaza la entrega que no lo cumpla.
"""
from datetime import datetime
from pathlib import PurePosixPath

from exigencias import exigir_json_puro, exigir_utf8
from validacion import muestra

CLAVES_DEL_ENCARGO = ("objetivo", "recursos", "acciones", "entregable", "tope_de_pasos", "plazo")
CAMPOS_DEL_ENTREGABLE = ("hallazgos", "referencias", "incertidumbres")

# Solo se delega investigación de solo lectura: los artefactos tienen un único escritor, el
# padre. Un hijo no amplía su autoridad porque el modelo se lo pida.
ACCIONES_DELEGABLES = ("leer", "buscar")

TOPE_DE_PASOS = 6  # turnos de un hijo: al de los registros le bastan 3 y al de la configuración 4
PLAZO_S = 120  # está en el contrato; el bucle de la lección, síncrono y sin reloj, no lo vigila

# Un hijo investiga durante minutos. Un plazo de más de un día, en segundos, es casi seguro un
# error de unidades (¿milisegundos?), o no es un plazo.
PLAZO_MAXIMO_S = 24 * 60 * 60


def encargo(objetivo, recursos, acciones=ACCIONES_DELEGABLES, tope_de_pasos=TOPE_DE_PASOS, plazo=PLAZO_S):
    """El encargo de un hijo, ya validado con `validar_encargo` (ValueError si algo está mal).

    `recursos` son las rutas del proyecto que puede mirar: un fichero (`README.md`) o una carpeta
    acabada en «/» (`logs/`). El entregable es siempre la forma vacía que el hijo rellena.
    """
    nuevo = {
        "objetivo": objetivo,
        "recursos": list(recursos),
        "acciones": list(acciones),
        "entregable": {campo: [] for campo in CAMPOS_DEL_ENTREGABLE},
        "tope_de_pasos": tope_de_pasos,
        "plazo": plazo,
    }
    validar_encargo(nuevo)
    return nuevo


def validar_encargo(encargo):
    """Comprueba un encargo; lanza ValueError, en castellano, ante lo primero que esté mal.

    Un encargo es un dict con exactamente estas claves:

    - `objetivo`: qué debe averiguar el hijo (un texto);
    - `recursos`: las rutas que puede consultar (una lista de textos; una que acaba en «/»
      es una carpeta);
    - `acciones`: lo que puede hacer con ellos, de entre «leer» y «buscar»;
    - `entregable`: la forma de la entrega, {"hallazgos": [], "referencias": [], "incertidumbres": []};
    - `tope_de_pasos`: cuántos pasos puede dar como mucho (un entero positivo);
    - `plazo`: hasta cuándo, como fecha y hora ISO 8601 con zona horaria o en segundos.
    """
    if not isinstance(encargo, dict):
        raise ValueError(f"El encargo debe ser un dict, no {muestra(encargo)}.")
    _exigir_claves(encargo, CLAVES_DEL_ENCARGO, "El encargo")
    if not isinstance(encargo["objetivo"], str) or not encargo["objetivo"].strip():
        raise ValueError("El objetivo del encargo debe ser un texto que diga qué averiguar.")
    recursos = encargo["recursos"]
    _exigir_lista_de_textos(recursos, "La lista de recursos del encargo", vacia_permitida=False)
    for recurso in recursos:
        if ".." in PurePosixPath(recurso).parts:
            raise ValueError(f"El recurso {recurso!r} sube de carpeta con «..»: nombra las rutas sin salir de ellas.")
    acciones = encargo["acciones"]
    _exigir_lista_de_textos(acciones, "La lista de acciones del encargo", vacia_permitida=False)
    for accion in acciones:
        if accion not in ACCIONES_DELEGABLES:
            raise ValueError(
                f"La acción {accion!r} no se puede delegar: un hijo solo puede "
                f"{' y '.join(ACCIONES_DELEGABLES)} (investigación de solo lectura)."
            )
    entregable = encargo["entregable"]
    if not isinstance(entregable, dict):
        raise ValueError(f"El entregable debe ser un dict con {', '.join(CAMPOS_DEL_ENTREGABLE)}, no {muestra(entregable)}.")
    _exigir_claves(entregable, CAMPOS_DEL_ENTREGABLE, "El entregable")
    for campo in CAMPOS_DEL_ENTREGABLE:
        if entregable[campo] != [] or type(entregable[campo]) is not list:
            raise ValueError(f"El campo {campo!r} del entregable debe ser una lista vacía: es la forma, que el hijo rellena.")
    tope = encargo["tope_de_pasos"]
    if type(tope) is not int or tope < 1:  # type(...) is int descarta bool
        raise ValueError(f"El tope de pasos debe ser un entero positivo (no un bool), no {muestra(tope)}.")
    _exigir_plazo(encargo["plazo"])
    exigir_json_puro(encargo, "El encargo")  # se guarda en JSON: todo él tiene que poder escribirse


def validar_entrega(encargo, carga):
    """Comprueba que `carga` cumpla el encargo `encargo`; lanza ValueError si no.

    La entrega tiene exactamente los campos del entregable, cada uno una lista de textos; cada
    referencia (una ruta, o «ruta:dónde», como «logs/api.log:17») está dentro de los recursos
    permitidos; y si hay hallazgos, hay al menos una referencia que los respalde.
    """
    validar_encargo(encargo)
    if not isinstance(carga, dict):
        raise ValueError(f"La entrega debe ser un dict con {', '.join(CAMPOS_DEL_ENTREGABLE)}, no {muestra(carga)}.")
    _exigir_claves(carga, CAMPOS_DEL_ENTREGABLE, "La entrega")
    for campo in CAMPOS_DEL_ENTREGABLE:
        _exigir_lista_de_textos(carga[campo], f"El campo {campo!r} de la entrega")
    for referencia in carga["referencias"]:
        if not _dentro_de(referencia, encargo["recursos"]):
            raise ValueError(
                f"La referencia {referencia!r} no está dentro de los recursos permitidos "
                f"({', '.join(encargo['recursos'])}): el hijo no podía consultarla."
            )
    if carga["hallazgos"] and not carga["referencias"]:
        raise ValueError("La entrega tiene hallazgos sin ninguna referencia: un hallazgo sin evidencia no se puede comprobar.")


def _dentro_de(referencia, recursos):
    if ".." in PurePosixPath(referencia).parts:
        return False
    for recurso in recursos:
        if referencia == recurso or referencia.startswith(recurso + ":"):
            return True
        if recurso.endswith("/") and referencia.startswith(recurso) and len(referencia) > len(recurso):
            return True
    return False


def _exigir_plazo(plazo):
    if isinstance(plazo, str):
        try:
            momento = datetime.fromisoformat(plazo)
        except ValueError:
            raise ValueError(f"El plazo {plazo!r} no es una fecha y hora ISO 8601 (como «2025-03-01T12:00:00+01:00»).") from None
        if momento.tzinfo is None:
            raise ValueError(f"El plazo {plazo!r} necesita fecha, hora y zona horaria: sin zona, no se sabe cuándo vence.")
    elif type(plazo) in (int, float):  # descarta bool
        # Comparar no convierte: ni 10**400 ni NaN la rompen, y NaN no la pasa (math.isfinite,
        # en cambio, convierte a float y lanza OverflowError con un int enorme).
        if not 0 < plazo <= PLAZO_MAXIMO_S:
            raise ValueError(f"El plazo en segundos debe ser un número positivo y finito, de como mucho "
                             f"{PLAZO_MAXIMO_S} (un día), no {muestra(plazo)}.")
    else:
        raise ValueError(f"El plazo debe ser una fecha ISO 8601 o un número de segundos, no {muestra(plazo)}.")


def _exigir_claves(valor, claves, que):
    faltan = [c for c in claves if c not in valor]
    sobran = [c for c in valor if c not in claves]
    if faltan or sobran:
        detalle = "; ".join(parte for parte in (
            f"faltan {', '.join(map(repr, faltan))}" if faltan else "",
            f"sobran {', '.join(map(repr, sobran))}" if sobran else "") if parte)
        raise ValueError(f"{que} debe tener exactamente las claves {', '.join(claves)} ({detalle}).")


def _exigir_lista_de_textos(valor, que, vacia_permitida=True):
    if type(valor) is not list:
        raise ValueError(f"{que}: debe ser una lista de textos, no {muestra(valor)}.")
    if not valor and not vacia_permitida:
        raise ValueError(f"{que}: está vacía; hace falta al menos un elemento.")
    for elemento in valor:
        if not isinstance(elemento, str) or not elemento.strip():
            raise ValueError(f"{que}: cada elemento debe ser un texto no vacío, y hay {muestra(elemento)}.")
        exigir_utf8(elemento, que)
    if len(set(valor)) != len(valor):
        raise ValueError(f"{que}: tiene elementos repetidos, {muestra(valor)}.")
