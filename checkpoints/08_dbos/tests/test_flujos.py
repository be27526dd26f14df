"""El port de la lección 06 a DBOS (flujos.py, todo_junto_dbos.py): la misma ejecución, con DBOS debajo.

Procesos de verdad (`python todo_junto_dbos.py reanudar`, por el corredor de
curso/material/simulacro_dbos.py) contra un servidor de ensayo de este proceso. La base del
sistema de DBOS se lee con SQL directo, sin DBOS.
"""
import json
import sqlite3

import pytest

from ayudas_08 import DBOS, NOTA, PUNTO, carpeta_en_memoria, hasta_el_final, preparar, reanudar, servidor_que_cuenta
from curso.material import simulacro


def consultar(carpeta, sql):
    bd = sqlite3.connect(carpeta / "dbos.sqlite")
    try:
        return bd.execute(sql).fetchall()
    finally:
        bd.close()


@pytest.fixture(scope="module")
def servidor():
    with servidor_que_cuenta() as (url, contador):
        yield url, contador


@pytest.fixture(scope="module")
def hecha(servidor):
    """(carpeta, peticiones que vio el servidor, salida) de una ejecución sin caídas."""
    url, contador = servidor
    with carpeta_en_memoria() as c:
        carpeta = preparar(c / "e")
        antes = len(contador.peticiones)
        codigo, salida, errores = reanudar(carpeta, url)
        assert codigo == 0, errores
        yield carpeta, len(contador.peticiones) - antes, salida


def test_el_port_da_el_mismo_informe_y_la_misma_copia_que_el_harness_de_la_06(hecha, servidor):
    url, _ = servidor
    carpeta, _, salida = hecha
    with carpeta_en_memoria() as c:
        base = simulacro.preparar(PUNTO, c / "06")  # el todo_junto.py de la 06, que este punto también trae
        codigo, salida_06, errores = simulacro.reanudar(PUNTO, base, url)
        assert codigo == 0, errores
        assert salida.split("\n", 1)[1] == salida_06.split("\n", 1)[1]  # el informe, tras la línea del estado
        assert simulacro.ficheros(carpeta / "copia") == simulacro.ficheros(base.parent / "copia")
    assert (carpeta / "copia" / "README.md").read_text(encoding="utf-8").count(NOTA) == 1


def test_cada_peticion_al_modelo_es_un_paso_y_cada_llamada_de_herramienta_tambien(hecha):
    carpeta, peticiones, _ = hecha
    pasos = consultar(carpeta, "SELECT workflow_uuid, function_name, output FROM operation_outputs ORDER BY rowid")
    assert sum(1 for _, nombre, _ in pasos if nombre == "pedir") == peticiones
    llamadas = [bloque for _, nombre, salida in pasos if nombre == "pedir"
                for bloque in json.loads(salida)["respuesta"] if bloque["type"] == "tool_use"]
    observaciones = [json.loads(salida) for _, nombre, salida in pasos if nombre in ("herramienta", "aplicar_edicion")]
    assert [o["tool_use_id"] for o in observaciones] == [ll["id"] for ll in llamadas]


def test_una_edicion_va_en_dos_pasos_la_intencion_y_despues_la_edicion(hecha):
    carpeta, _, _ = hecha
    config = [nombre for (nombre,) in consultar(
        carpeta, "SELECT function_name FROM operation_outputs WHERE workflow_uuid='incidente/config' ORDER BY function_id")]
    i = config.index("intencion_de_editar")
    assert config[i + 1] == "aplicar_edicion" and config.count("intencion_de_editar") == 1


def test_cada_hijo_es_un_workflow_hijo_y_entrega_con_un_mensaje_de_dbos(hecha):
    carpeta, _, _ = hecha
    assert consultar(carpeta, "SELECT workflow_uuid, status, parent_workflow_id FROM workflow_status "
                              "ORDER BY workflow_uuid") == [("incidente", "SUCCESS", None),
                                                            ("incidente/config", "SUCCESS", "incidente"),
                                                            ("incidente/logs", "SUCCESS", "incidente")]
    for hijo in ("logs", "config"):
        (ultimo,) = consultar(carpeta, f"SELECT function_name FROM operation_outputs WHERE workflow_uuid='incidente/{hijo}' "
                                       "ORDER BY function_id DESC LIMIT 1")
        assert ultimo == ("DBOS.send",)
    recibidas = consultar(carpeta, "SELECT output FROM operation_outputs WHERE workflow_uuid='incidente' "
                                   "AND function_name='DBOS.recv' ORDER BY function_id")
    assert [json.loads(salida)["hijo"] for (salida,) in recibidas] == ["logs", "config"]


def test_lo_que_guarda_dbos_se_lee_en_json_sin_python(hecha):
    carpeta, _, _ = hecha
    formatos = {f for (f,) in consultar(carpeta, "SELECT DISTINCT serialization FROM operation_outputs "
                                                 "WHERE serialization IS NOT NULL")}
    assert formatos == {"portable_json"}


def test_reanudar_una_ejecucion_terminada_lo_dice_y_no_toca_nada(hecha, servidor):
    url, contador = servidor
    carpeta, _, _ = hecha
    antes, huella = len(contador.peticiones), simulacro.huella_de(carpeta / "copia")
    pasos = consultar(carpeta, "SELECT COUNT(*) FROM operation_outputs")
    codigo, _, errores = reanudar(carpeta, url)
    assert codigo == 1 and "ya terminó" in errores
    assert len(contador.peticiones) == antes and simulacro.huella_de(carpeta / "copia") == huella
    assert consultar(carpeta, "SELECT COUNT(*) FROM operation_outputs") == pasos


def test_preparar_otra_vez_en_la_misma_carpeta_se_niega(hecha):
    carpeta, _, _ = hecha
    with pytest.raises(RuntimeError, match="Ya hay una ejecución"):
        preparar(carpeta)


def test_tras_una_caida_sigue_desde_lo_guardado_sin_repetir_peticiones(servidor):
    """Una caída justo después de guardar la tercera petición del hijo config: al recuperar, DBOS
    devuelve las salidas guardadas, y el servidor no vuelve a ver ninguna petición ya contestada."""
    url, contador = servidor
    with carpeta_en_memoria() as c:
        carpeta = preparar(c / "e")
        antes = len(contador.peticiones)
        codigo, _, errores = reanudar(carpeta, url, CURSO_MORIR_EN="paso:14")
        assert codigo == -9, errores
        assert hasta_el_final(carpeta, url) == 0
        assert DBOS.acabada(carpeta)
        (pedidas,) = consultar(carpeta, "SELECT COUNT(*) FROM operation_outputs WHERE function_name='pedir'")
        assert len(contador.peticiones) - antes == pedidas[0]
