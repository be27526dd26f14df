"""La traza: correr el agente mirando cada turno.

Lección 01. `Traza` se pone entre el bucle y el modelo, como un modelo más: imprime las
observaciones que acaban de entrar en M (→), el turno con los tokens de entrada que contó el
servidor y un renglón por bloque de la respuesta (←), que sigue su camino sin cambios.

Lección 03. En la traza, la petición que pide el resumen sale como `resumen` y no suma un turno:
el modelo no ha dado ningún paso.

Lección 03b. La traza guarda el contenido original de cada resultado la primera vez que lo ve
(`originales`): lo que limpiar borra de M sigue ahí. Y cuando una petición lleva resultados
borrados nuevos, lo dice.
"""
import json

from compactar import INSTRUCCION

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
    """Pasa cada petición a `modelo` tal cual e imprime el turno (o el resumen): lo que entró y lo que volvió."""

    def __init__(self, modelo):
        self.modelo = modelo
        self.turno = 0  # turnos que ha pedido el bucle hasta ahora
        self.originales = {}  # tool_use_id → el contenido con que llegó: la historia entera
        self.borrados = set()  # los tool_use_id cuyo contenido ya no va entero en M

    @property
    def usage(self):  # compactar lo lee: el de la última petición del modelo envuelto
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        rol, contenido = M[-1]
        recien_llegadas = contenido if rol == "usuario" and isinstance(contenido, list) else []
        for bloque in recien_llegadas:  # las observaciones del turno anterior
            print("  → " + linea(bloque))
        self._mirar_resultados(M)
        resumen = (rol, contenido) == ("usuario", INSTRUCCION)  # la compactación, no un turno
        if not resumen:
            self.turno += 1
        respuesta = self.modelo(M, herramientas)
        u = self.modelo.usage
        que = "resumen" if resumen else f"turno {self.turno}"
        print(f"{que} · {u['input_tokens'] + u.get('cache_read_input_tokens', 0)} tokens de entrada")
        for bloque in respuesta:
            print("  ← " + linea(bloque))
        return respuesta

    def _mirar_resultados(self, M):
        """Guarda el original de cada resultado nuevo y avisa de los que llegan borrados."""
        nuevos = []
        for rol, contenido in M:
            for bloque in contenido if rol == "usuario" and isinstance(contenido, list) else []:
                if bloque.get("type") != "tool_result":
                    continue
                id = bloque["tool_use_id"]
                self.originales.setdefault(id, bloque["content"])
                if bloque["content"] != self.originales[id] and id not in self.borrados:
                    self.borrados.add(id)
                    nuevos.append(id)
        if nuevos:
            print(f"  ✂ limpiados {len(nuevos)} resultados viejos ({', '.join(nuevos)}): el original sigue en la traza")
