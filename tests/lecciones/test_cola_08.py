"""Los hijos del port en una cola de DBOS (lección 08, ejercicio 8.2), con el punto de control 08: la
ejecución entera con una cola de uno y con una de dos acaba igual que sin cola, y solo con la de dos
corren a la vez. (En el punto de control pasaría de lo que `comprobar 8` da a cada test: dos
ejecuciones enteras; el contrato del 8.2 lo comprueba `comprobar("8.2")` con tres hijos de prueba.)
"""
import sqlite3
import subprocess
import sys

import pytest

from curso import rutas
from curso.material import simulacro, simulacro_dbos

PUNTO = rutas.puntos_de_control()[8]
DBOS = simulacro_dbos.MOTORES["dbos"]


def consultar(carpeta, sql):
    bd = sqlite3.connect(carpeta / "dbos.sqlite")
    try:
        return bd.execute(sql).fetchall()
    finally:
        bd.close()


@pytest.fixture(scope="module")
def sin_cola():
    """(carpeta de la ejecución, lo que dice reanudar, url del servidor) de la ejecución entera sin cola,
    la misma para las dos colas."""
    with simulacro_dbos.carpeta_en_memoria() as c, simulacro.servidor_que_cuenta() as (url, _):
        carpeta = DBOS.preparar(PUNTO, c / "sin-cola")
        codigo, salida, errores = simulacro_dbos.reanudar(DBOS, PUNTO, carpeta, url)
        assert codigo == 0, errores
        yield carpeta, salida, url


# Una familia por ejercicio (`ejercicio`, ver curso/autor/niveles.py): la cola de uno, la primera, es
# su humo y corre en el nivel rápido; la de dos, en el profundo.
@pytest.mark.lento  # dos ejecuciones enteras de DBOS cada una
@pytest.mark.parametrize("ejercicio, a_la_vez", [("8.2", 1), ("8.2", 2)])
def test_con_una_cola_los_hijos_se_solapan_solo_si_caben_dos_y_acaba_igual(sin_cola, ejercicio, a_la_vez):
    carpeta_sin_cola, salida, url = sin_cola
    otra = DBOS.preparar(PUNTO, carpeta_sin_cola.parent / f"cola-{a_la_vez}")
    hecho = subprocess.run([sys.executable, "todo_junto_dbos.py", "reanudar", str(otra), "--url", url,
                            "--a-la-vez", str(a_la_vez)], cwd=PUNTO, capture_output=True, text=True, timeout=300)
    assert hecho.returncode == 0, hecho.stderr
    assert hecho.stdout == salida
    assert simulacro.ficheros(otra / "copia") == simulacro.ficheros(carpeta_sin_cola / "copia")
    tramos = consultar(otra, "SELECT workflow_uuid, MIN(started_at_epoch_ms), MAX(completed_at_epoch_ms) "
                             "FROM operation_outputs WHERE workflow_uuid LIKE 'incidente/%' GROUP BY workflow_uuid")
    (_, e1, a1), (_, e2, a2) = tramos
    assert (e1 < a2 and e2 < a1) is (a_la_vez == 2), tramos
    colas = {c for (c,) in consultar(otra, "SELECT queue_name FROM workflow_status WHERE workflow_uuid LIKE 'incidente/%'")}
    assert colas == {"hijos"}
