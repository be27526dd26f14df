"""Pone la carpeta de este punto de control la primera en sys.path.

Así los tests importan los módulos del alumno por su nombre (`import resumenes`), igual que
los importa el harness, y no una versión de otro punto de control.
"""
import sys
from pathlib import Path

CARPETA = Path(__file__).resolve().parent.parent
if sys.path[:1] != [str(CARPETA)]:
    sys.path.insert(0, str(CARPETA))


def pytest_configure(config):
    """La marca de los tests que califican a un alumno (ver curso/comprobaciones/contrato.py)."""
    config.addinivalue_line(
        "markers", "contrato(ejercicio): el test corre código que el alumno escribe en ese ejercicio y "
        "afirma solo hechos de su contrato; califica en `comprobar N` y `calificar`. Los tests sin "
        "ella son de regresión del código que da el curso, y nunca califican")
