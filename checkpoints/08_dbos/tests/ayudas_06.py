"""Ayudas de los tests de la lección 06: el simulacro de caídas del curso (curso/material/simulacro.py),
con los módulos de este punto de control."""
import functools
from pathlib import Path

from curso.material import simulacro
from curso.material.simulacro import (INCIDENTE, YA_TERMINO, carpeta_en_memoria, copiar_ejecucion, foto,  # noqa: F401
                             huella_de, informe, pasos_de, pasos_de_la_ejecucion, pasos_durables,
                             servidor_que_cuenta)

PUNTO = Path(__file__).resolve().parent.parent  # la carpeta del punto de control

preparar = functools.partial(simulacro.preparar, PUNTO)
preparar_relectura = functools.partial(simulacro.preparar_relectura, PUNTO)
lanzar = functools.partial(simulacro.lanzar, PUNTO)
reanudar = functools.partial(simulacro.reanudar, PUNTO)
hasta_el_final = functools.partial(simulacro.hasta_el_final, PUNTO)
caer_tras_cada_paso = functools.partial(simulacro.caer_tras_cada_paso, PUNTO)
caidas_al_editar = functools.partial(simulacro.caidas_al_editar, PUNTO)
