"""Para el servidor de ensayo: quién contesta cuando `model` es "guion:NOMBRE".

Un guion es una función `peticion -> lista de bloques` (`text` y `tool_use`). Solo puede mirar
la petición (cuántos turnos del asistente lleva, qué dice el último mensaje del usuario...),
nunca un contador ni el reloj: así un reintento o un servidor reiniciado contestan lo mismo.

Para añadir uno basta con decorarlo:

    @guion("saludo")
    def saludo(peticion):
        return [texto("Hola.")]

y pedirlo con `"model": "guion:saludo"`. Aquí están los dos guiones de demostración (`eco` y
`herramienta`); los del recetario se registran igual.
"""

GUIONES = {}  # nombre -> función; el motor busca aquí el guion que pide `model`


def guion(nombre):
    """Decorador que registra la función como el guion `nombre`."""
    def registrar(funcion):
        anterior = GUIONES.get(nombre)
        if anterior is not None and (anterior.__module__, anterior.__qualname__) != (
                funcion.__module__, funcion.__qualname__):
            raise ValueError("ya hay un guion llamado «%s» (%s.%s): elige otro nombre"
                             % (nombre, anterior.__module__, anterior.__qualname__))
        GUIONES[nombre] = funcion  # volver a importar el mismo módulo lo sustituye
        return funcion
    return registrar


# --- Para construir respuestas ---------------------------------------------------------------

def texto(t):
    """Un bloque de texto."""
    return {"type": "text", "text": t}


def llamada(id, nombre, **entrada):
    """Un bloque `tool_use`: pide la herramienta `nombre` con `entrada` como argumentos."""
    return {"type": "tool_use", "id": id, "name": nombre, "input": entrada}


def id_llamada(turno, i=0):
    """El id determinista de la llamada `i` (desde 0) del turno `turno` (desde 1)."""
    return "toolu_ensayo_%d_%d" % (turno, i)


# --- Para leer la petición --------------------------------------------------------------------

def bloques(contenido):
    """El `content` de un mensaje como lista de bloques (un texto suelto es un bloque de texto)."""
    return [texto(contenido)] if isinstance(contenido, str) else list(contenido)


def turnos_asistente(peticion):
    """Cuántos mensajes del asistente lleva ya la petición."""
    return sum(1 for m in peticion["messages"] if m["role"] == "assistant")


def ultimo_usuario(peticion):
    """Los bloques del último mensaje del usuario ([] si no hay ninguno)."""
    for mensaje in reversed(peticion["messages"]):
        if mensaje["role"] == "user":
            return bloques(mensaje["content"])
    return []


def texto_de(lista):
    """El texto de los bloques `text` de `lista`, unidos por saltos de línea."""
    return "\n".join(b["text"] for b in lista if b["type"] == "text")


def resultados(lista):
    """Los bloques `tool_result` de `lista`."""
    return [b for b in lista if b["type"] == "tool_result"]


def contenido_de_resultado(resultado):
    """El texto de un bloque `tool_result` (su `content` puede ser un texto o bloques de texto)."""
    contenido = resultado.get("content", "")
    return contenido if isinstance(contenido, str) else "\n".join(b["text"] for b in contenido)


# --- Dos guiones de demostración --------------------------------------------------------------

@guion("eco")
def eco(peticion):
    """Repite el texto del último mensaje del usuario."""
    dicho = texto_de(ultimo_usuario(peticion))
    return [texto(dicho if dicho else "(no hay texto que repetir)")]


ENTRADA_DE_DEMOSTRACION = {"ruta": "recetas.txt"}  # la entrada fija que pide `herramienta`


@guion("herramienta")
def herramienta(peticion):
    """Primer turno: llama a la primera herramienta de `tools`. Después: cuenta qué volvió."""
    turno = turnos_asistente(peticion) + 1
    herramientas = peticion.get("tools") or []
    if turno == 1:
        if not herramientas:
            return [texto("No tengo herramientas: pásame alguna en `tools`.")]
        return [texto("Voy a usar la herramienta."),
                llamada(id_llamada(turno), herramientas[0]["name"], **ENTRADA_DE_DEMOSTRACION)]
    vueltas = resultados(ultimo_usuario(peticion))
    if not vueltas:
        return [texto("Ya he terminado.")]
    return [texto("La herramienta devolvió: " + contenido_de_resultado(vueltas[0]))]
