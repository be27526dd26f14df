"""Para el cuaderno y los procesos que lanzan sus celdas: qué módulos del harness se sirven desde su versión de referencia.

Si un ejercicio queda pendiente o en rojo, la lección sigue con la versión de referencia de su
módulo (la del punto de control): el cuaderno (`curso/alumno/cuaderno.py`) pone su nombre y su
fichero en `REFERENCIAS.rutas`, y este buscador de módulos la sirve a cualquier `import`. Un
proceso aparte que lanza una celda (`curso/material/simulacro.py`) no ve ese buscador: copia esos
mismos ficheros. Está aquí, y no en el cuaderno, para que el material lo lea sin importar el
cuaderno, que está por encima (la casa de `tests/equipo/test_casa.py`).
"""
import importlib.abc
import importlib.util
from pathlib import Path


class _Referencias(importlib.abc.MetaPathFinder):
    """Sirve la versión de referencia de los módulos cuyo ejercicio está pendiente."""

    def __init__(self):
        self.rutas = {}  # nombre del módulo -> fichero de referencia
        self.servidas = set()  # los ficheros que ha servido alguna vez: sus módulos son del harness

    def find_spec(self, nombre, path=None, target=None):
        if nombre in self.rutas:
            self.servidas.add(str(Path(self.rutas[nombre]).resolve()))
            return importlib.util.spec_from_file_location(nombre, self.rutas[nombre])
        return None


REFERENCIAS = _Referencias()
