"""Lo que el modelo ve del entorno: las herramientas que puede pedir y los bloques del protocolo.

Lección 01. Un mensaje del modelo es una lista de bloques: texto, o llamadas a herramientas
(`tool_use`). El harness contesta a cada llamada con un bloque `tool_result`, su observación.

Lección 03. `leer` tiene un argumento más, `desde`: la línea desde la que leer.

Lección 05. Una cuarta herramienta, `buscar`, que solo mira: la usan los hijos que investigan
(ver hijos.py). Entra en el CATALOGO, lo que el harness sabe atender, pero no en HERRAMIENTAS, lo
que el bucle ofrece por defecto: cada esquema ofrecido ocupa tokens en cada petición, y el agente
del recetario sigue viendo y gastando lo mismo que en las lecciones 01 a 04. A un hijo se le
ofrece lo de su encargo, sacado del catálogo.
"""

HERRAMIENTAS = [
    {
        "name": "leer",
        "description": "Devuelve un fichero de texto de la copia de trabajo. Si es largo, un trozo y "
                       "cómo seguir.",
        "input_schema": {
            "type": "object",
            "properties": {
                "ruta": {"type": "string", "description": "Ruta relativa, p. ej. compra.py"},
                "desde": {"type": "integer"},
            },
            "required": ["ruta"],
        },
    },
    {
        "name": "editar",
        "description": "Cambia en un fichero el texto `antiguo`, que debe aparecer exactamente una "
                       "vez, por `nuevo`. Copia `antiguo` tal cual del fichero.",
        "input_schema": {
            "type": "object",
            "properties": {
                "ruta": {"type": "string"},
                "antiguo": {"type": "string"},
                "nuevo": {"type": "string"},
            },
            "required": ["ruta", "antiguo", "nuevo"],
        },
    },
    {
        "name": "ejecutar",
        "description": "Ejecuta una orden de la shell en la copia de trabajo y devuelve su código "
                       "de salida y lo que escribió.",
        "input_schema": {
            "type": "object",
            "properties": {"comando": {"type": "string"}},
            "required": ["comando"],
        },
    },
]

BUSCAR = {
    "name": "buscar",
    "description": "Busca una expresión regular (la sintaxis de `re` de Python) en cada línea "
                   "de los ficheros de texto de `ruta`, un fichero o una carpeta (por defecto, "
                   "toda la copia). Devuelve las líneas que coinciden como fichero:línea: texto.",
    "input_schema": {
        "type": "object",
        "properties": {
            "patron": {"type": "string", "description": "P. ej. connection refused|5433"},
            "ruta": {"type": "string", "description": "Relativa, p. ej. logs; si falta, «.»"},
        },
        "required": ["patron"],
    },
}

CATALOGO = HERRAMIENTAS + [BUSCAR]  # todas las que `atender` sabe atender


def texto(t):
    """Un bloque de texto."""
    return {"type": "text", "text": t}


def llamada(id, nombre, **entrada):
    """Un bloque `tool_use`: el modelo pide la herramienta `nombre` con esa entrada."""
    return {"type": "tool_use", "id": id, "name": nombre, "input": entrada}


def resultado(id, contenido, error=False):
    """Un bloque `tool_result`: la observación que contesta a la llamada `id`."""
    bloque = {"type": "tool_result", "tool_use_id": id, "content": contenido}
    if error:
        bloque["is_error"] = True
    return bloque


# La marca de api.py en una llamada cortada por `max_tokens`, con su entrada a medias: `atender`
# (permisos.py) la contesta sin ejecutar nada. No es del protocolo: api.peticion la quita.
CORTADA = "cortada"


def llamadas_de(respuesta):
    """Las llamadas (bloques `tool_use`) de una respuesta, en su orden."""
    return [b for b in respuesta if b.get("type") == "tool_use"]


def texto_de(respuesta):
    """El texto de una respuesta: sus bloques de texto, unidos por un espacio."""
    return " ".join(b["text"] for b in respuesta if b.get("type") == "text").strip()
