"""El simulacro de caídas de la lección 08 en el port a DBOS: procesos matados con SIGKILL y recuperados por DBOS.

Lo que DBOS promete de un paso es **al menos una vez**: si el proceso muere después del efecto y
antes de que DBOS guarde la salida del paso, al recuperar el paso se ejecuta otra vez. Con la
edición en un paso normal (la variante `sin_8_1` del corredor), una caída ahí escribe la nota dos
veces; con la intención y la edición en dos pasos (efectos_dbos.py, el 8.1), una sola.

(Una caída tras cada paso y treinta al azar, en los dos motores, están en
tests/lecciones/test_simulacro_08.py del curso, que corre una vez: aquí tardarían más de lo que
`comprobar 8` y `calificar` dan a cada test. Las cifras enteras, en `python -m curso medir dbos`.)
"""
import json
import sqlite3

import pytest

from ayudas_08 import (DBOS, NOTA, carpeta_en_memoria, hasta_el_final, preparar, reanudar, servidor_que_cuenta,
                       sin_caidas)
from curso.ensayo.fallos import Fallos
from curso.material import simulacro_dbos


@pytest.fixture(scope="module")
def servidor():
    with servidor_que_cuenta() as (url, contador):
        yield url, contador


@pytest.fixture(scope="module")
def plantilla():
    with carpeta_en_memoria() as c:
        yield preparar(c / "plantilla")


@pytest.fixture(scope="module")
def referencias(plantilla, servidor):
    """{variante: la ejecución sin caídas} (simulacro_dbos.sin_caidas)."""
    url, contador = servidor
    with carpeta_en_memoria() as c:
        yield {v: sin_caidas(plantilla, url, contador, c, v) for v in ("correcta", "sin_8_1")}


@pytest.fixture
def carpeta():
    with carpeta_en_memoria() as c:
        yield c


def test_sin_caidas_con_y_sin_8_1_acaban_igual(referencias):
    con, sin = referencias["correcta"], referencias["sin_8_1"]
    assert con["foto"]["copia"] == sin["foto"]["copia"] and con["ediciones"] == sin["ediciones"] == 1
    nombres = [clase for clase, agente in con["pasos"] if agente == "config"]
    assert "intencion_de_editar" in nombres and "intencion_de_editar" not in [c for c, _ in sin["pasos"]]


@pytest.mark.parametrize("variante, dobles", [("correcta", 0), ("sin_8_1", 1)])
def test_una_caida_entre_editar_y_que_dbos_guarde_el_paso(plantilla, servidor, referencias, carpeta, variante, dobles):
    url, contador = servidor
    referencia = referencias[variante]
    destino = carpeta / "e"
    __import__("shutil").copytree(plantilla, destino)
    antes = len(contador.peticiones)
    codigo, _, errores = reanudar(destino, url, variante, CURSO_MORIR_EN="efecto:1")
    assert codigo == -9, errores
    muertos = hasta_el_final(destino, url, variante)
    fila = simulacro_dbos.cuenta(DBOS, destino, referencia, contador, antes, muertos)
    assert fila["ediciones_de_mas"] == dobles and fila["igual"] is (dobles == 0) and not fila["perdida"]
    assert (destino / "copia" / "README.md").read_text(encoding="utf-8").count(NOTA) == 1 + dobles
    assert fila["peticiones_de_mas"] == 0  # ninguna respuesta del modelo se pidió dos veces


@pytest.mark.parametrize("donde, repite", [("paso", False), ("peticion", True)])
def test_con_un_modelo_que_no_repite_sus_respuestas_vale_la_salida_guardada(plantilla, carpeta, donde, repite):
    """Un modelo de verdad no contesta dos veces lo mismo (el plan `variar` del servidor). Tras una
    caída justo después de que DBOS guarde la salida de `pedir`, al recuperar no se pide otra vez:
    se sigue con la guardada. Tras una caída con la respuesta ya llegada y sin guardar, se pide otra
    vez, y vale la segunda: nadie actuó sobre la primera."""
    with servidor_que_cuenta(Fallos(variar=True)) as (url, contador):
        destino = carpeta / "e"
        __import__("shutil").copytree(plantilla, destino)
        k = 3 if donde == "paso" else 1  # paso 3: la salida de la 1.ª petición de logs; peticion 1: la misma, sin guardar
        codigo, _, errores = reanudar(destino, url, CURSO_MORIR_EN=f"{donde}:{k}")
        assert codigo == -9, errores
        assert hasta_el_final(destino, url) == 0
        respuestas = list(contador.respuestas)
    bd = sqlite3.connect(destino / "dbos.sqlite")
    (guardada,) = bd.execute("SELECT output FROM operation_outputs WHERE workflow_uuid='incidente/logs' "
                             "AND function_id=2").fetchone()
    (pedidas,) = bd.execute("SELECT COUNT(*) FROM operation_outputs WHERE function_name='pedir'").fetchone()
    bd.close()
    assert len(respuestas) == pedidas + repite  # la repetida, una petición más
    assert (json.loads(guardada)["respuesta"] == respuestas[0]) is not repite
    if repite:
        assert json.loads(guardada)["respuesta"] == respuestas[1] != respuestas[0]
