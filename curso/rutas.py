"""Dónde está cada cosa del curso: el repositorio, los puntos de control y el espacio del alumno."""
import os
import re
from pathlib import Path

RAIZ = Path(__file__).resolve().parent.parent
PUNTOS = RAIZ / "checkpoints"
SOLUCIONES = RAIZ / "solutions"
CUADERNOS = RAIZ / "notebooks"
RECETARIO = RAIZ / "recetario"

# El espacio de trabajo del alumno. Los tests lo cambian por uno temporal con esta variable,
# para no tocar nunca el del alumno.
VARIABLE_ESPACIO = "CURSO_ESPACIO"
ESPACIO_POR_DEFECTO = RAIZ / "mi_agente"

# Lo que no es código del alumno: no se compara, no se copia al restaurar.
IGNORADOS = {"tests", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".copias",
             ".hypothesis"}  # la caché que deja hypothesis donde se corren sus tests


def espacio():
    """La carpeta donde las celdas de ejercicio escriben los módulos del alumno."""
    return Path(os.environ.get(VARIABLE_ESPACIO) or ESPACIO_POR_DEFECTO).resolve()


def puntos_de_control():
    """{número: carpeta} de cada punto de control, p. ej. {0: .../checkpoints/00_antes_de_empezar}."""
    puntos = {}
    for carpeta in sorted(PUNTOS.glob("[0-9][0-9]_*")):
        if carpeta.is_dir():
            puntos[int(carpeta.name[:2])] = carpeta
    return puntos


def ficheros(carpeta):
    """Las rutas relativas (con /) de los ficheros de `carpeta` que son código del alumno."""
    carpeta = Path(carpeta)
    if not carpeta.is_dir():
        return []
    return sorted(
        p.relative_to(carpeta).as_posix()
        for p in carpeta.rglob("*")
        if p.is_file() and not IGNORADOS.intersection(p.relative_to(carpeta).parts)
        and not p.name.endswith(".pyc")
    )


def numero_de_leccion(nombre):
    """El número de una lección a partir del nombre de su cuaderno o carpeta ('03_compactar' → 3)."""
    m = re.match(r"(\d\d)_", Path(nombre).name)
    return int(m.group(1)) if m else None
