"""El simulacro largo de la lección 08: una caída justo después de cada paso del port a DBOS, y caídas
en momentos al azar en los dos motores, el harness de la 06 (punto de control 06) y el port
(punto de control 08, con el 8.1).

(El punto de control 08 tiene la caída de entre la edición y su guardado, con y sin el 8.1, y las
del modelo que no repite; el cuaderno, una caída tras cada paso en los dos y cuatro al azar; y
`python -m curso medir dbos`, todo, con cien caídas al azar en cada motor y sin el 8.1.)
"""
import pytest

from curso import rutas
from curso.material import simulacro, simulacro_dbos

CAIDAS = 30


@pytest.fixture(scope="module")
def en_memoria():
    with simulacro_dbos.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, contador):
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


def test_una_caida_tras_cada_paso_del_port_sale_igual_y_ninguna_edicion_se_repite(en_memoria):
    carpeta, url, contador = en_memoria
    motor, punto = simulacro_dbos.MOTORES["dbos"], rutas.puntos_de_control()[8]
    plantilla = motor.preparar(punto, carpeta / "plantilla-cada-paso")
    referencia = simulacro_dbos.sin_caidas(motor, punto, plantilla, url, contador, carpeta)
    filas = simulacro_dbos.caidas_tras_cada_paso(motor, punto, plantilla, url, contador, carpeta, referencia)
    totales = simulacro_dbos.total(filas)
    assert totales["caidas"] == len(referencia["pasos"]) + 1  # y una tras la edición
    assert totales["perdidas"] == 0 and totales["iguales"] == totales["caidas"]
    assert totales["ediciones_de_mas"] == totales["ordenes_de_mas"] == totales["peticiones_de_mas"] == 0
