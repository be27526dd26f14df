"""Pone la carpeta de este punto de control la primera en sys.path.

Así los tests importan los módulos del alumno por su nombre (`import resumenes`), igual que
los importa el arnés, y no una versión de otro punto de control.
"""
import sys
from pathlib import Path

CARPETA = Path(__file__).resolve().parent.parent
if sys.path[:1] != [str(CARPETA)]:
    sys.path.insert(0, str(CARPETA))

# PostgreSQL (lección 07): `postgres`, un servidor para la sesión (el de CURSO_POSTGRES o uno de usar y
# tirar), y `esquema_postgres`, un esquema vacío por test. Sin PostgreSQL, sus tests se saltan (en CI fallan).
from curso.pruebas_postgres import esquema_postgres, postgres  # noqa: E402,F401
