"""Para la lección 05: el incidente del lado del padre, sus encargos y lo que se concluye de él.

El proyecto es curso/material/datos/incidente/: una API que no llega a su base de datos. Lo que aquí hay
es de ese problema, no del harness: qué se le encarga a cada hijo (y al agente que lo investiga
todo solo) y la conclusión que se saca de los hallazgos comprobados, que mira puertos. El harness
(`encargos.py`, `subagentes.py`) sirve igual para cualquier otro problema.

Los guiones con que contesta el servidor de ensayo (el lado del modelo) están en
curso/ensayo/guiones_del_incidente.py. Los encargos se hacen con el `encargos.py` del alumno o del punto de
control 05: quien llama lo pasa, o lo pone el primero en sys.path y se importa por su nombre.
"""
import importlib
import re

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

CITA = re.compile(r"«([^«»]+)»")  # lo que un hallazgo cita del fichero, entre « » (como en subagentes.py)
PUERTO = re.compile(r"(?:puerto\s*=\s*|:)(\d{4,5})(?!\d)")  # «db:5433», «puerto = 5432»; no «09:11»


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


def concluir(verificados):
    """La conclusión, sacada solo de lo comprobado: qué puerto citan las fuentes, y si coinciden.

    `verificados` son las filas que da `subagentes.integrar` (o `verificar`): {"hallazgo",
    "referencia", ...}. Un hallazgo descartado no entra: por eso se concluye después de integrar.
    """
    puertos = {}  # puerto -> referencias que lo citan, en orden de aparición
    for fila in verificados:
        for cita in CITA.findall(fila["hallazgo"]):
            for puerto in PUERTO.findall(cita):
                puertos.setdefault(puerto, []).append(fila["referencia"])
    if not puertos:
        return "Ningún hallazgo comprobado cita un puerto: falta evidencia para concluir."
    if len(puertos) == 1:
        (puerto, donde), = puertos.items()
        return (f"Todo lo comprobado cita el mismo puerto, {puerto} ({', '.join(donde)}): el fallo no "
                "está en el puerto.")
    partes = [f"{puerto} ({', '.join(donde)})" for puerto, donde in puertos.items()]
    return "Los puertos no coinciden: " + " frente a ".join(partes) + "."
