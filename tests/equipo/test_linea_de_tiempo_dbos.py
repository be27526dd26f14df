"""La línea de tiempo con los pasos de DBOS (curso/explorables/linea_de_tiempo/pasos_de_dbos.py): lógica
pura, sobre una base del sistema y un diario escritos a mano."""
import json
import sqlite3

import pytest

from curso.explorables.linea_de_tiempo import carriles as ldt
from curso.explorables.linea_de_tiempo import pasos_de_dbos as linea

USO = {"input_tokens": 100, "cache_read_input_tokens": 20, "output_tokens": 5}


def pedir(*llamadas):
    bloques = [{"type": "text", "text": "t"}] + [{"type": "tool_use", "id": i, "name": "editar", "input": {}} for i in llamadas]
    return json.dumps({"respuesta": bloques, "usage": USO})


# (workflow, nombre, salida, hora): config pide con una llamada, pide un resumen, edita y entrega;
# el padre recibe. El proceso 1 arranca a las 1000 y muere tras la hora 1040 habiendo editado a las
# 1045; el 2 arranca a las 2000.
PASOS = [("incidente/config", "pedir", pedir("t1"), 1010), ("incidente/config", "pedir", pedir(), 1020),
         ("incidente/config", "intencion_de_editar", "{}", 1040),
         ("incidente/config", "aplicar_edicion", json.dumps({"type": "tool_result"}), 2010),
         ("incidente/config", "DBOS.send", None, 2020),
         ("incidente", "DBOS.recv", json.dumps({"hijo": "config", "carga": {}}), 2030)]


@pytest.fixture
def ejecucion(tmp_path):
    (tmp_path / "ejecucion.json").write_text(json.dumps({
        "padre": {"id": "incidente", "inicio": [["sistema", "s"], ["usuario", "u"]]},
        "hijos": [{"id": "config", "inicio": [["sistema", "s"], ["usuario", "u"]], "carpeta": "copia"}]}))
    bd = sqlite3.connect(tmp_path / "dbos.sqlite")
    bd.execute("CREATE TABLE operation_outputs (workflow_uuid, function_id, function_name, output, completed_at_epoch_ms)")
    bd.executemany("INSERT INTO operation_outputs VALUES (?, ?, ?, ?, ?)",
                   [(w, n, nombre, salida, hora) for n, (w, nombre, salida, hora) in enumerate(PASOS, 1)])
    bd.commit()
    bd.close()
    return tmp_path


def apuntar(carpeta, *apuntes):
    (carpeta / "diario.jsonl").write_text("".join(json.dumps(a) + "\n" for a in apuntes))


def test_las_peticiones_son_barras_y_la_del_resumen_es_la_que_sigue_a_otra_con_llamadas(ejecucion):
    apuntar(ejecucion, {"vida": True, "t": 1000})
    marcas = ldt.carriles(linea.leer(ejecucion))["config"]
    peticiones = [m for m in marcas if m["clase"] == "peticion"]
    assert [m["resumen"] for m in peticiones] == [False, True] and peticiones[0]["tokens"] == 120
    assert [m["clase"] for m in marcas if m["clase"] != "peticion"] == ["intencion", "resultado", "recibir", "admitir"]


def test_una_vida_nueva_es_una_caida_y_una_reanudacion_y_lo_rehecho_se_marca(ejecucion):
    apuntar(ejecucion, {"vida": True, "t": 1000}, {"herramienta": "leer", "donde": "copia", "t": 1015},
            {"herramienta": "editar", "donde": "borrador-x", "t": 1030},  # el ensayo del 8.1: no cuenta
            {"herramienta": "editar", "donde": "copia", "t": 1045}, {"vida": True, "t": 2000},
            {"herramienta": "editar", "donde": "copia", "t": 2005})
    datos = linea.leer(ejecucion)
    clases = [p["clase"] for p in datos["pasos"]]
    assert clases[2:6] == ["intencion", "vida", "reintento", "resultado"]
    (rehecho,) = linea.rehechos(datos)
    assert rehecho["agente"] == "config" and rehecho["detalle"]["herramienta"] == "editar"
    marcas = ldt.carriles(datos)["incidente"]
    assert {"i": 2, "clase": "caida"} in marcas and {"i": 3, "clase": "reanudacion"} in marcas
    assert ldt.antes_de_la_caida(datos) == 2
    assert ldt.estado_tras(datos, 2)["agentes"]["config"]["intenciones"] == ["incidente/config:4"]  # sin edición aún
    assert "al menos una vez" in linea.describir(rehecho)


def test_sin_diario_no_hay_caidas_ni_nada_rehecho(ejecucion):
    datos = linea.leer(ejecucion)
    assert linea.rehechos(datos) == [] and ldt.antes_de_la_caida(datos) is None
    assert linea.veredicto(datos, 2).splitlines()[1:] == ["  incidente: 0 salidas de paso guardadas",
                                                          "  config: 3 salidas de paso guardadas"]
