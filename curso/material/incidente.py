"""Para la lección 05: el incidente del lado del padre, sus encargos y lo que se concluye de él.

El proyecto es curso/material/datos/incidente/: una API que no llega a su base de datos. Lo que aquí hay
es de ese problema, no del harness: qué se le encarga a cada hijo (y al agente que lo investiga
todo solo); la conclusión que se saca de los hallazgos comprobados, que mira puertos, está con
los guiones (`concluir`), porque también la saca el padre guionizado de la lección 06. El harness
(`encargos.py`, `subagentes.py`) sirve igual para cualquier otro problema.

Los guiones con que contesta el servidor de ensayo (el lado del modelo) están en
curso/ensayo/guiones_del_incidente.py. Los encargos se hacen con el `encargos.py` del alumno o del punto de
control 05: quien llama lo pasa, o lo pone el primero en sys.path y se importa por su nombre.
"""
import importlib

# La conclusión, de lo comprobado: la saca también el padre guionizado de la lección 06.
from curso.ensayo.guiones_del_incidente import concluir  # noqa: F401 - la usan delegacion.py y los tests
from curso.rutas import RAIZ

INCIDENTE = RAIZ / "curso" / "material" / "datos" / "incidente"

# Qué averigua cada hijo y qué puede mirar: dos fuentes independientes, los registros y la configuración.
OBJETIVOS_DE_LOS_HIJOS = {
    "logs": ("Averigua adónde intenta conectar la API y cómo falla, según sus registros.", ["logs/"]),
    "config": ("Averigua en qué puerto escucha la base de datos, según su configuración.", ["config/"]),
}
OBJETIVO_EN_SOLITARIO = ("La API no llega a su base de datos: averigua por qué, con registros y "
                         "configuración.", ["README.md", "config/", "logs/"])
TOPE_EN_SOLITARIO = 10  # turnos del agente que lo hace todo: el guion `solo` necesita 8



def _encargos(encargos):
    return importlib.import_module("encargos") if encargos is None else encargos


def encargos_del_incidente(encargos=None):
    """{hijo: encargo} de los dos hijos, hechos con `encargos.encargo` (por defecto, `import encargos`)."""
    encargo = _encargos(encargos).encargo
    return {hijo: encargo(objetivo, recursos) for hijo, (objetivo, recursos) in OBJETIVOS_DE_LOS_HIJOS.items()}


def encargo_en_solitario(encargos=None):
    """El encargo de un único agente que investiga el incidente entero él mismo."""
    objetivo, recursos = OBJETIVO_EN_SOLITARIO
    return _encargos(encargos).encargo(objetivo, recursos, tope_de_pasos=TOPE_EN_SOLITARIO)
