"""Ayudas de los tests del curso que no son fixtures."""
import importlib
import sys
from contextlib import contextmanager

from curso import rutas


@contextmanager
def modulos_del_punto(numero):
    """{nombre: módulo} de los módulos del punto de control `numero`, importados con su carpeta
    delante en sys.path. Al salir, sys.path y sys.modules quedan como estaban: los módulos de los
    puntos de control se llaman igual (`bucle`, `entorno`...) y no deben mezclarse."""
    carpeta = rutas.puntos_de_control()[numero]
    nombres = sorted(p.stem for p in carpeta.glob("*.py"))
    guardados = {n: sys.modules.pop(n) for n in nombres if n in sys.modules}
    sys.path.insert(0, str(carpeta))
    try:
        yield {n: importlib.import_module(n) for n in nombres}
    finally:
        sys.path.remove(str(carpeta))
        for n in nombres:
            sys.modules.pop(n, None)
        sys.modules.update(guardados)
