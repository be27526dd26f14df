"""Para `calificar`: dónde está el espacio de cada alumno de una clase, a cualquier profundidad.

Cada subcarpeta de la carpeta de la clase es un alumno, y su nombre, su identificador. Su espacio
es la carpeta `mi_agente/` que tenga dentro, a cualquier profundidad (un «Download ZIP» de GitHub
la deja en `ivan/construye-tu-agente-main/mi_agente/`), o si no la que tenga más módulos del curso.
Un `mi_agente/` sin ningún módulo del curso también es su espacio: está, y está sin empezar.
"""
import os
from dataclasses import dataclass
from pathlib import Path

from curso import rutas
from curso.comprobaciones.espacio import modulos_de

# Dónde no se busca el espacio de un alumno: las carpetas del propio curso (un «Download ZIP» las
# trae, y checkpoints/ tiene todos los módulos), entornos, cachés y copias.
NO_SE_MIRAN = {"checkpoints", "solutions", "notebooks", "recetario", "curso", "tests", "node_modules",
               "site-packages", "__pycache__", ".ipynb_checkpoints", ".copias"}


@dataclass
class Alumno:
    nombre: str  # la subcarpeta de CARPETA: su identificador en la tabla
    espacio: Path = None  # su mi_agente/, o None si no se encontró
    donde: str = ""  # el espacio, relativo a CARPETA
    carpeta: Path = None  # su subcarpeta de CARPETA (donde se buscan también sus cuadernos)


def modulos_del_curso():
    """Los módulos de todos los puntos de control, sin .py."""
    return {m for carpeta in rutas.puntos_de_control().values() for m in modulos_de(carpeta)}


def buscar_espacio(carpeta, del_curso=None):
    """El espacio de un alumno dentro de `carpeta`, a cualquier profundidad, o None.

    Gana una carpeta que se llame mi_agente y tenga módulos del curso; si no hay, la que tenga
    más; a igualdad, la menos honda. No se mira dentro de NO_SE_MIRAN ni de carpetas ocultas, ni
    en las copias que deja `restaurar` (mi_agente.copia-…)."""
    del_curso = del_curso or modulos_del_curso()
    candidatas, vacias = [], []
    for actual, carpetas, ficheros in os.walk(carpeta):
        carpetas[:] = sorted(c for c in carpetas if c not in NO_SE_MIRAN and not c.startswith(".")
                             and ".copia-" not in c and not c.endswith(".egg-info"))
        cuantos = sum(1 for f in ficheros if f.endswith(".py") and f[:-3] in del_curso)
        actual = Path(actual)
        profundidad = len(actual.relative_to(carpeta).parts)
        if cuantos:
            candidatas.append((actual.name != rutas.NOMBRE_DEL_ESPACIO, -cuantos, profundidad, str(actual)))
        elif actual.name == rutas.NOMBRE_DEL_ESPACIO:
            vacias.append((profundidad, str(actual)))
    if candidatas:
        return Path(min(candidatas)[3])
    return Path(min(vacias)[1]) if vacias else None  # un mi_agente/ sin nada: está, sin empezar


def alumnos_de(carpeta, salida=None):
    """[Alumno]: cada subcarpeta de `carpeta` (menos las ocultas y la de salida), con su espacio."""
    carpeta = Path(carpeta)
    del_curso = modulos_del_curso()
    alumnos = []
    for sub in sorted(carpeta.iterdir()):
        if not sub.is_dir() or sub.name.startswith(".") or (salida and sub.resolve() == Path(salida).resolve()):
            continue
        espacio = buscar_espacio(sub, del_curso)
        donde = espacio.relative_to(carpeta).as_posix() + "/" if espacio else ""
        alumnos.append(Alumno(sub.name, espacio, donde, sub))
    return alumnos
