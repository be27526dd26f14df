"""Correr el agente y ver lo que viaja: la traza de cada turno, y una orden para la terminal.

Lección 01. `Traza` envuelve a un modelo y, para el bucle, es un modelo más: antes de cada
petición escribe las observaciones del turno anterior (→), y después, el turno con los tokens de
entrada que contó el servidor y una línea por bloque de la respuesta (←).

Lección 03. La orden compacta M (sin `--sin-compactar`), y la traza rotula la petición del
resumen como `resumen`, sin contarla como turno.

    python correr.py ../recetario "Los tests fallan. Arregla lo que haga falta para que pasen."

Sin ANTHROPIC_BASE_URL, arranca el servidor de ensayo del curso dentro del propio proceso.
"""
import argparse
import json
import os
import sys

from compactar import INSTRUCCION, compactar

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
    """Un modelo que envuelve a otro y escribe lo que viaja en cada turno (o resumen)."""

    def __init__(self, modelo):
        self.modelo, self.turno = modelo, 0

    @property
    def usage(self):  # compactar lo lee: el de la última petición del modelo envuelto
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        rol, contenido = M[-1]
        if rol == "usuario" and isinstance(contenido, list):
            for bloque in contenido:
                print("  → " + linea(bloque))
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


def preguntar(nombre, entrada):
    """El usuario de la terminal: contesta s o n a cada permiso."""
    detalle = entrada.get("comando") or entrada.get("ruta")
    return input(f"¿Permites {nombre} {detalle}? [s/n] ").strip().lower().startswith("s")


def main(argv=None):
    from agente import agente
    from api import ModeloAPI
    from permisos import usuario_guionizado

    p = argparse.ArgumentParser(prog="python correr.py", description="Corre el agente sobre una copia de un proyecto.")
    p.add_argument("proyecto", help="la carpeta del proyecto, p. ej. ../recetario")
    p.add_argument("pedido", help="lo que le pides al agente")
    p.add_argument("--modelo", default="guion:arregla",
                   help="el campo model: un guion del servidor de ensayo (guion:arregla, guion:atasco, "
                        "guion:compacta) o el nombre de un modelo de un servidor de verdad")
    p.add_argument("--tope", type=int, default=10, help="turnos como mucho (10)")
    p.add_argument("--si-a-lo-del-guion", action="store_true",
                   help="no preguntar: sí a los tests y a editar recetario.py y compra.py, no a lo demás")
    p.add_argument("--sin-compactar", action="store_true",
                   help="no compactar M: deja que crezca hasta el tope o hasta la ventana (lección 02)")
    a = p.parse_args(argv)
    servidor = None
    if not os.environ.get("ANTHROPIC_BASE_URL"):
        from curso.ensayo.servidor import arrancar_en_segundo_plano
        servidor = arrancar_en_segundo_plano()
        print(f"(servidor de ensayo en {servidor.url}: la ejecución está guionizada)")
    usuario = usuario_guionizado if a.si_a_lo_del_guion else preguntar
    modelo = Traza(ModeloAPI(a.modelo, url=servidor.url if servidor else None))
    try:
        motivo, texto, M, copia = agente(modelo, a.pedido, a.proyecto, a.tope, usuario,
                                         compactar=None if a.sin_compactar else compactar)
    finally:
        if servidor:
            servidor.parar()
    print(f"{motivo} · {len(M)} mensajes en M · la copia está en {copia}")
    if texto:
        print(texto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
