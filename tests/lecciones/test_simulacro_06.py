"""El simulacro largo de la lección 06, con el punto de control 06: cuarenta caídas en momentos al
azar, repartidas entre procesos a la vez. (El punto de control tiene una caída tras cada paso,
todas seguidas sobre una misma ejecución, las variantes ingenuas y las entradas malas; el
cuaderno, una caída tras el primer paso de cada clase y ocho al azar; y `python -m curso medir
todo`, una caída tras cada paso, cada una en su propia ejecución, y cien al azar, que aquí
tardarían más de un minuto.)

Procesos de verdad (`python todo_junto.py reanudar`), matados con SIGKILL, contra un servidor de
ensayo de este proceso por HTTP en 127.0.0.1; ver curso/material/simulacro.py y curso/medir/todo.py.
"""
import pytest

from curso import rutas
from curso.material import simulacro
from curso.medir import todo as medir_todo

PUNTO = rutas.PUNTOS / "06_todo_junto"


@pytest.fixture(scope="module")
def simulacro_06():
    """(url, contador, carpeta, plantilla, referencia)."""
    with simulacro.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, contador):
        plantilla = carpeta / "plantilla"
        simulacro.preparar(PUNTO, plantilla)
        referencia = medir_todo.sin_caidas(PUNTO, plantilla, url, contador, carpeta)
        yield url, contador, carpeta, plantilla, referencia


def test_cuarenta_caidas_al_azar_acaban_todas_igual(simulacro_06):
    url, contador, carpeta, plantilla, referencia = simulacro_06
    azar = medir_todo.caidas_al_azar(PUNTO, plantilla, url, contador, carpeta, referencia, caidas=40)
    assert azar["caidas"] == 40
    assert azar["iguales"] == azar["ejecuciones"]
    # Los momentos se sacan sobre el trabajo durable (desde que el proceso apunta su vida), no
    # sobre el arranque de Python: ninguna caída llega antes de que el proceso haya hecho nada, y
    # la mayoría caen tras algún paso de la ejecución. (Contando desde el arranque, 84 de 100
    # caían antes de la vida.)
    assert "arranque" not in azar["tras"], azar["tras"]
    assert sum(n for clase, n in azar["tras"].items() if clase != "vida") > azar["caidas"] // 2, azar["tras"]
