"""La traza: correr el agente mirando cada turno.

Lección 01. `Traza` se pone entre el bucle y el modelo, como un modelo más: imprime las
observaciones que acaban de entrar en M (→), el turno con los tokens de entrada que contó el
servidor y un renglón por bloque de la respuesta (←), que sigue su camino sin cambios.

Lección 03. En la traza, la petición que pide el resumen sale como `resumen` y no suma un turno:
el modelo no ha dado ningún paso.

Lección 03b. La traza guarda el contenido original de cada resultado la primera vez que lo ve
(`originales`): lo que limpiar borra de M sigue ahí. Y cuando una petición lleva resultados
borrados nuevos, lo dice.

Lección 06. correr.py es también una orden para la terminal, como todo_junto.py, que usa su
`Analizador` (argparse en castellano). Desde la carpeta de tu espacio de trabajo:

    python correr.py ../recetario --url http://127.0.0.1:8765 \
        "Los tests fallan. Arregla lo que haga falta para que pasen." \
        --permitir-orden "python3 -m unittest" --permitir-editar recetario.py --permitir-editar compra.py

El modelo está detrás del servidor de `--url` (sin ella, el de ANTHROPIC_BASE_URL o, sin las dos, el
de ensayo del curso en http://127.0.0.1:8765, que se arranca aparte con `python -m curso servidor`).
La orden limpia y compacta M, salvo con `--sin-limpiar` o `--sin-compactar`. Al terminar dice dónde
ha quedado la copia de trabajo, por si quieres mirarla.
"""
import argparse
import json
import os
import sys

from api import ErrorDelModelo
from compactar import INSTRUCCION, compactar
from limpiar import limpiar

ANCHO = 110  # caracteres por línea de traza

# Lo que argparse dice en inglés en sus errores, y cómo se dice aquí.
ERRORES_DE_ARGPARSE = [("the following arguments are required: ", "faltan los argumentos: "),
                       ("unrecognized arguments: ", "no sé qué es esto: "),
                       ("invalid int value: ", "no es un número entero: "),
                       ("invalid choice: ", "no vale: "), ("(choose from ", "(elige entre "),
                       ("expected one argument", "le falta su valor"), ("argument ", "argumento ")]


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


class Analizador(argparse.ArgumentParser):
    """argparse, en castellano: la ayuda con -h o --ayuda, «uso:», sus apartados y sus errores."""

    def __init__(self, **opciones):
        super().__init__(add_help=False, **opciones)
        self._positionals.title, self._optionals.title = "argumentos", "opciones"
        self.add_argument("-h", "--ayuda", "--help", action="help", default=argparse.SUPPRESS,
                          help="muestra esta ayuda y sale")

    def format_usage(self):
        return super().format_usage().replace("usage: ", "uso: ", 1)

    def format_help(self):
        return super().format_help().replace("usage: ", "uso: ", 1)

    def error(self, mensaje):
        for ingles, castellano in ERRORES_DE_ARGPARSE:
            mensaje = mensaje.replace(ingles, castellano)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {mensaje}\n")


def preguntar(nombre, entrada):
    """El usuario de la terminal: contesta s o n a cada permiso."""
    detalle = entrada.get("comando") or entrada.get("ruta")
    return input(f"¿Permites {nombre} {detalle}? [s/n] ").strip().lower().startswith("s")


def permitir_solo(ordenes, editables):
    """El usuario de una ejecución sin preguntas: sí a ejecutar las órdenes de `ordenes` y a editar
    los ficheros de `editables`, escritos tal cual; no a lo demás."""
    def usuario(nombre, entrada):
        if nombre == "ejecutar":
            return entrada.get("comando") in ordenes
        return nombre == "editar" and entrada.get("ruta") in editables
    return usuario


def main(argv=None):
    from agente import agente
    from api import ModeloAPI

    p = Analizador(prog="python correr.py", description="Corre el agente sobre una copia de un proyecto.")
    p.add_argument("proyecto", help="la carpeta del proyecto, p. ej. ../recetario")
    p.add_argument("pedido", help="lo que le pides al agente")
    p.add_argument("--url", help="la URL base del servidor del modelo (por defecto, ANTHROPIC_BASE_URL o, "
                                 "sin ella, el de ensayo: http://127.0.0.1:8765)")
    p.add_argument("--modelo", default="guion:arregla",
                   help="el campo model: un guion del servidor de ensayo (guion:arregla, guion:atasco, "
                        "guion:compacta) o el nombre de un modelo de un servidor de verdad")
    p.add_argument("--tope", type=int, default=10, help="turnos como mucho (10)")
    p.add_argument("--permitir-orden", action="append", default=[], metavar="ORDEN",
                   help="no preguntar: sí a ejecutar esta orden, tal cual (se puede repetir)")
    p.add_argument("--permitir-editar", action="append", default=[], metavar="RUTA",
                   help="no preguntar: sí a editar este fichero (se puede repetir); con estas dos, lo "
                        "demás es no")
    p.add_argument("--sin-compactar", action="store_true",
                   help="no compactar M: deja que crezca hasta el tope o hasta la ventana (lección 02)")
    p.add_argument("--sin-limpiar", action="store_true",
                   help="no limpiar los resultados viejos antes de compactar (lección 03)")
    a = p.parse_args(argv)
    if not os.path.isdir(a.proyecto):
        p.error(f"no encuentro la carpeta del proyecto {a.proyecto}")
    sin_preguntar = a.permitir_orden or a.permitir_editar
    usuario = permitir_solo(a.permitir_orden, a.permitir_editar) if sin_preguntar else preguntar
    modelo = Traza(ModeloAPI(a.modelo, url=a.url))
    try:
        motivo, texto, M, copia = agente(modelo, a.pedido, a.proyecto, a.tope, usuario,
                                         compactar=None if a.sin_compactar else compactar, conservar=True,
                                         limpiar=None if a.sin_limpiar else limpiar)
    except ErrorDelModelo as e:  # sin servidor, o uno que no acepta la petición: el aviso, sin traza
        print(f"correr.py: {e}", file=sys.stderr)
        return 1
    print(f"{motivo} · {len(M)} mensajes en M · la copia está en {copia}")
    if texto:
        print(texto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
