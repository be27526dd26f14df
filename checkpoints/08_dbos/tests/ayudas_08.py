"""Ayudas de los tests de la lección 08: el simulacro de los dos motores (curso/material/simulacro_dbos.py),
con los módulos de este punto de control."""
import functools
from pathlib import Path

from curso.material import simulacro_dbos
from curso.material.simulacro import servidor_que_cuenta  # noqa: F401
from curso.material.simulacro_dbos import carpeta_en_memoria  # noqa: F401

PUNTO = Path(__file__).resolve().parent.parent  # la carpeta del punto de control
DBOS = simulacro_dbos.MOTORES["dbos"]
NOTA = "Según config/db.toml, db escucha en el puerto 5432.\n"  # la línea que el hijo config añade

preparar = functools.partial(DBOS.preparar, PUNTO)
lanzar = functools.partial(DBOS.lanzar, PUNTO)
reanudar = functools.partial(simulacro_dbos.reanudar, DBOS, PUNTO)
hasta_el_final = functools.partial(simulacro_dbos.hasta_el_final, DBOS, PUNTO)
sin_caidas = functools.partial(simulacro_dbos.sin_caidas, DBOS, PUNTO)
