"""Para `calificar`: los ejercicios que son funciones del cuaderno (los de la lección 02), leídos del cuaderno del alumno.

Los ejercicios 2.1 y 2.2 no escriben ningún módulo en `mi_agente/`: son funciones de una celda de
`notebooks/02_la_ventana.ipynb`, y `comprobar("2.1", tamano)` las comprueba en el cuaderno. Para
calificarlas, el cuaderno del alumno tiene que ir con su espacio: se busca en su carpeta, a
cualquier profundidad (el `notebooks/` que está al lado de su `mi_agente/`), y de él se toman las
celdas marcadas con `{"curso": {"ejercicio": "2.1"}}`, que son las que `generar` deja con el esbozo.
No se ejecuta aquí nada del alumno: `calificar` pone el texto de cada celda en la copia, y lo
ejecuta el test de su ejercicio, en el proceso vigilado (`curso/comprobaciones/tests_del_curso.py`).
"""
import json
import os
from pathlib import Path

from curso import rutas

# Dónde no se buscan cuadernos: los resueltos del curso (solutions/ de un «Download ZIP») no son
# del alumno, ni las copias que guarda JupyterLab.
NO_SE_MIRAN = {"solutions", "checkpoints", "curso", "tests", "node_modules", "site-packages",
               "__pycache__", ".ipynb_checkpoints"}


def nombre_del_cuaderno(leccion):
    """«02_la_ventana.ipynb»."""
    return f"{rutas.LECCIONES[leccion]['cuaderno']}.ipynb"


def celdas_de_ejercicios(cuaderno):
    """{id: texto de la celda} de las celdas de ejercicio de un cuaderno ({} si no se puede leer)."""
    try:
        datos = json.loads(Path(cuaderno).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    celdas = {}
    for celda in datos.get("cells", []) if isinstance(datos, dict) else []:
        id = ((celda.get("metadata") or {}).get("curso") or {}).get("ejercicio")
        if id and celda.get("cell_type") == "code":
            fuente = celda.get("source", "")
            celdas.setdefault(id, "".join(fuente) if isinstance(fuente, list) else str(fuente))
    return celdas


def buscar_cuaderno(carpeta, leccion):
    """El cuaderno de la lección `leccion` que hay en `carpeta` (la de un alumno), o None: el que
    se llama como el del curso; a igualdad, el menos hondo."""
    nombre = nombre_del_cuaderno(leccion)
    encontrados = []
    for actual, carpetas, ficheros in os.walk(carpeta):
        carpetas[:] = sorted(c for c in carpetas if c not in NO_SE_MIRAN and not c.startswith("."))
        if nombre in ficheros:
            ruta = Path(actual) / nombre
            encontrados.append((len(ruta.relative_to(carpeta).parts), str(ruta)))
    return Path(min(encontrados)[1]) if encontrados else None


def esbozos(leccion):
    """{id: texto} de las celdas de ejercicio del cuaderno del curso, tal como lo recibe el alumno."""
    return celdas_de_ejercicios(Path(rutas.CUADERNOS) / nombre_del_cuaderno(leccion))


def sin_tocar(celdas, leccion):
    """¿Son todas las celdas de ejercicio las del esbozo, sin cambiar nada? Entonces, sin empezar."""
    de_partida = esbozos(leccion)
    return all(texto.strip() == de_partida.get(id, "").strip() for id, texto in celdas.items())
