"""Quién puede qué: leer no pide permiso; escribir y ejecutar órdenes se le preguntan al usuario.

Lección 01. `atender` convierte una llamada del modelo en su observación. Nada de lo que pida el
modelo tumba el bucle: una herramienta que no existe, unos argumentos que faltan o sobran, un
permiso denegado, una herramienta que falla o una llamada que llegó cortada (la respuesta se acabó
por `max_tokens` a media llamada) vuelven como observación con `is_error: true`.

Lección 03. `desde` es un número entero: los argumentos pueden ser de más de un tipo.

Lección 05. `atender` conoce todo el CATALOGO, también `buscar`, que no pide permiso: solo
mira, como `leer`.
"""
import herramientas
from entorno import CATALOGO, CORTADA, resultado

SIN_PERMISO = {"leer", "buscar"}  # las que solo miran: no cambian nada fuera del modelo
# Los tipos de argumento que usan los esquemas, y cómo se dicen. (True es un int para Python,
# pero no un número entero en JSON: no vale como entero.)
TIPOS = {"string": ("texto", lambda v: isinstance(v, str)),
         "integer": ("números enteros", lambda v: isinstance(v, int) and not isinstance(v, bool))}


def permitido(nombre, entrada, usuario):
    """¿Se puede ejecutar la herramienta `nombre` con esta entrada? Pregunta a `usuario` si hace falta.

    `usuario(nombre, entrada)` contesta True o False; sin usuario, nada que cambie cosas se permite.
    """
    if nombre in SIN_PERMISO:
        return True
    if usuario is None:
        return False
    return usuario(nombre, entrada) is True


def problema_de_argumentos(esquema, entrada):
    """Qué falla en `entrada` frente al esquema de la herramienta, o None si está bien."""
    if not isinstance(entrada, dict):
        return "la entrada tiene que ser un objeto con los argumentos"
    propiedades = esquema["input_schema"]["properties"]
    faltan = [a for a in esquema["input_schema"]["required"] if a not in entrada]
    sobran = [a for a in entrada if a not in propiedades]
    partes = []
    if faltan:
        partes.append("faltan " + ", ".join(faltan))
    if sobran:
        partes.append("sobran " + ", ".join(sobran))
    for tipo, (como, es) in TIPOS.items():
        mal = [a for a in entrada if a in propiedades and propiedades[a]["type"] == tipo and not es(entrada[a])]
        if mal:
            partes.append(f"tienen que ser {como}: " + ", ".join(mal))
    return "; ".join(partes) or None


def atender(llamada, entorno, usuario=None):
    """La observación (`tool_result`) de una llamada del modelo, pase lo que pase."""
    id, nombre, entrada = llamada.get("id"), llamada.get("name"), llamada.get("input")
    esquemas = {h["name"]: h for h in CATALOGO}
    if llamada.get(CORTADA):  # su entrada está a medias: no es lo que el modelo quería pedir
        return resultado(id, f"la llamada a {nombre} llegó cortada: la respuesta se acabó (max_tokens) "
                             "mientras se escribía su entrada, que está a medias. No se ha hecho nada: "
                             "repite la llamada entera, más corta si hace falta", error=True)
    if not isinstance(nombre, str) or nombre not in esquemas:
        return resultado(id, f"no hay ninguna herramienta {nombre!r}: las que hay son "
                             f"{', '.join(esquemas)}", error=True)
    problema = problema_de_argumentos(esquemas[nombre], entrada)
    if problema:
        return resultado(id, f"{nombre}: {problema}. No se ha hecho nada", error=True)
    if not permitido(nombre, entrada, usuario):
        return resultado(id, f"el usuario no ha dado permiso para {nombre} {entrada}. "
                             "No se ha hecho nada", error=True)
    try:
        return resultado(id, getattr(herramientas, nombre)(entorno, **entrada))
    except herramientas.ErrorDeHerramienta as e:
        return resultado(id, str(e), error=True)
    except (OSError, ValueError) as e:  # lo que el sistema no admite: un byte nulo, un nombre larguísimo...
        razon = getattr(e, "strerror", None) or str(e)  # strerror: sin la ruta temporal
        return resultado(id, f"{nombre} ha fallado: {razon}. Revisa los argumentos", error=True)
