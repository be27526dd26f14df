"""El simulacro largo de la lección 08, en los dos motores: caídas en momentos al azar, con el harness
de la 06 (punto de control 06) y con su port a DBOS (punto de control 08, con el 8.1).

(El punto de control 08 tiene la caída justo tras cada paso, la de entre la edición y su guardado
con y sin el 8.1, y las del modelo que no repite; el cuaderno, una muestra; y `python -m curso medir
dbos`, todo, con cien caídas al azar en cada motor.)
"""
import pytest

from curso import rutas
from curso.material import simulacro, simulacro_dbos

CAIDAS = 30


@pytest.fixture(scope="module")
def en_memoria():
    with simulacro.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, contador):
        yield carpeta, url, contador


@pytest.mark.parametrize("motor, punto", [("06", 6), ("dbos", 8)])
def test_caidas_al_azar_en_los_dos_motores_ninguna_perdida_y_todas_iguales(en_memoria, motor, punto):
    carpeta, url, contador = en_memoria
    motor, punto = simulacro_dbos.MOTORES[motor], rutas.puntos_de_control()[punto]
    plantilla = motor.preparar(punto, carpeta / f"plantilla-{motor.nombre}")
    referencia = simulacro_dbos.sin_caidas(motor, punto, plantilla, url, contador, carpeta)
    filas = simulacro_dbos.caidas_al_azar(motor, punto, plantilla, url, contador, carpeta, referencia, caidas=CAIDAS)
    total = simulacro_dbos.total(filas)
    assert total["caidas"] == CAIDAS and total["perdidas"] == 0
    assert total["iguales"] == CAIDAS, [f for f in filas if not f["igual"]]
    assert total["ediciones_de_mas"] == total["ordenes_de_mas"] == 0
    # Los momentos se sacan sobre el trabajo de la ejecución: casi todas caen tras algún paso suyo.
    assert sum(1 for f in filas if f["tras"] not in ("ninguno", "acabó antes")) > CAIDAS // 2, [f["tras"] for f in filas]
