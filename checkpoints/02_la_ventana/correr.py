"""La traza: correr el agente mirando cada turno.

Lección 01. `Traza` se pone entre el bucle y el modelo, como un modelo más: imprime las
observaciones que acaban de entrar en M (→), el turno con los tokens de entrada que contó el
servidor y un renglón por bloque de la respuesta (←), que sigue su camino sin cambios.
"""
import json

ANCHO = 110  # caracteres por línea de traza


def una_linea(texto, ancho=ANCHO):
    """`texto` en una línea: la primera, cortada con … si es larga o si había más."""
    lineas = str(texto).strip().split("\n")
    primera = lineas[0]
    if len(primera) > ancho or len(lineas) > 1:
        return primera[:ancho] + " …"
    return primera


def linea(bloque):
    """Una línea que describe un bloque de la conversación."""
    tipo = bloque.get("type")
    if tipo == "tool_use":
        return una_linea(f"llamada {bloque['name']} {json.dumps(bloque['input'], ensure_ascii=False)}")
    if tipo == "tool_result":
        return una_linea(("error " if bloque.get("is_error") else "observación ") + str(bloque["content"]))
    return una_linea("texto " + bloque.get("text", ""))


class Traza:
    """Pasa cada petición a `modelo` tal cual e imprime el turno: lo que entró y lo que volvió."""

    def __init__(self, modelo):
        self.modelo = modelo
        self.turno = 0  # turnos que ha pedido el bucle hasta ahora

    @property
    def usage(self):  # el del modelo envuelto: quien tiene la traza la usa como al modelo
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        rol, contenido = M[-1]
        recien_llegadas = contenido if rol == "usuario" and isinstance(contenido, list) else []
        for bloque in recien_llegadas:  # las observaciones del turno anterior
            print("  → " + linea(bloque))
        self.turno += 1
        respuesta = self.modelo(M, herramientas)
        u = self.modelo.usage
        print(f"turno {self.turno} · {u['input_tokens'] + u.get('cache_read_input_tokens', 0)} "
              "tokens de entrada")
        for bloque in respuesta:
            print("  ← " + linea(bloque))
        return respuesta
