"""`python -m curso ejecutar N` (curso/autor/ejecutar.py): el núcleo corre con su propia carpeta temporal.

Lo que promete: lo que un cuaderno deja en la carpeta temporal (porque falla antes de la celda
que lo borra, o porque no lo borra nunca) queda en la carpeta propia de esa ejecución, que se
borra al acabar, y no en la del sistema; si el cuaderno acaba bien y aun así deja algo, la orden
lo dice, porque bajo `probar` su parte fallaría. Las variables de entorno quedan como estaban.
"""
import os
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient.exceptions import CellExecutionError

from curso import rutas
from curso.autor import ejecutar

CREA = 'import tempfile\nprint(tempfile.mkdtemp(prefix="deja-algo-"))'


def cuaderno(ruta, *celdas):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(celda) for celda in celdas]
    nbformat.write(nb, ruta)
    return ruta


def lo_que_deja():
    return sorted(Path(tempfile.gettempdir()).glob("deja-algo-*"))


def test_un_cuaderno_que_falla_a_medias_no_deja_nada_en_la_carpeta_temporal_del_sistema(tmp_path):
    ruta = cuaderno(tmp_path / "99_prueba.ipynb", CREA, "raise RuntimeError('falla antes de borrar')")
    antes = lo_que_deja()
    entorno_antes = {v: os.environ.get(v) for v in ("TMPDIR", rutas.VARIABLE_ESPACIO)}
    with pytest.raises(CellExecutionError, match="falla antes de borrar"):
        ejecutar.ejecutar(ruta, tmp_path / "espacio", tmp_path / "temporal")
    assert lo_que_deja() == antes
    assert [p.name[:10] for p in (tmp_path / "temporal").iterdir()] == ["deja-algo-"]  # quedó en la suya
    assert {v: os.environ.get(v) for v in entorno_antes} == entorno_antes


def test_si_acaba_bien_y_deja_algo_la_orden_lo_dice(tmp_path, monkeypatch, capsys):
    (tmp_path / "solutions").mkdir()
    (tmp_path / "notebooks").mkdir()
    ruta = cuaderno(tmp_path / "solutions" / "99_prueba.ipynb", CREA)
    monkeypatch.setattr(ejecutar, "cuaderno_resuelto", lambda n: ruta)
    monkeypatch.setattr(rutas, "RAIZ", tmp_path)
    monkeypatch.setattr(rutas, "CUADERNOS", tmp_path / "notebooks")
    antes = lo_que_deja()
    assert ejecutar.main([99]) == 0
    salida = capsys.readouterr().out
    assert "⚠ 99_prueba.ipynb deja en la carpeta temporal deja-algo-" in salida
    assert lo_que_deja() == antes
    assert (tmp_path / "notebooks" / "99_prueba.ipynb").exists()
