"""Las órdenes del port (todo_junto_dbos.py): preparar es atómico y trae los agentes de la lección 06."""
import json

import pytest

import todo_junto
import todo_junto_dbos
from curso.material.simulacro import INCIDENTE


def test_los_agentes_son_los_de_la_06():
    ejecucion = todo_junto_dbos.definiciones()
    assert ejecucion["padre"]["id"] == todo_junto.PADRE and ejecucion["padre"]["herramientas"] == []
    hijos = {h["id"]: h for h in ejecucion["hijos"]}
    assert list(hijos) == list(todo_junto.encargos())
    assert hijos["config"]["escritura"] == todo_junto.ESCRITURA_DEL_HIJO_CONFIG and "editar" in hijos["config"]["herramientas"]
    assert hijos["logs"]["escritura"] == [] and hijos["logs"]["carpeta"] == "vistas/logs"
    assert {h["umbral"] for h in hijos.values()} == {todo_junto.UMBRAL_DEL_SIMULACRO}


def test_preparar_deja_la_copia_y_la_ejecucion_y_no_pisa_otra(tmp_path):
    todo_junto_dbos.preparar(tmp_path / "e", INCIDENTE)
    assert (tmp_path / "e" / "copia" / "README.md").read_bytes() == (INCIDENTE / "README.md").read_bytes()
    assert json.loads((tmp_path / "e" / todo_junto_dbos.FICHERO).read_text(encoding="utf-8"))["proyecto"] == "copia"
    assert not (tmp_path / "e" / (todo_junto_dbos.FICHERO + ".nuevo")).exists()
    with pytest.raises(ValueError, match="Ya hay una ejecución"):
        todo_junto_dbos.preparar(tmp_path / "e", INCIDENTE)


def test_reanudar_sin_ejecucion_lo_dice_sin_lanzar_dbos(tmp_path, capsys):
    assert todo_junto_dbos.main(["reanudar", str(tmp_path / "nada")]) == todo_junto.CODIGO_NO_SE_PUEDE
    assert "No hay ninguna ejecución" in capsys.readouterr().err
    assert not (tmp_path / "nada").exists()
