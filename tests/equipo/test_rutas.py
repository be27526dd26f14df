"""Tests de cómo se encuentra la carpeta del curso (`curso.rutas.buscar_raiz`), con carpetas de
verdad y un paquete «instalado» en un site-packages inventado: sin procesos, sin red.

Lo de instalar de verdad el curso sin -e en un entorno nuevo y correr la lección 01 está en
test_instalado.py."""
import pytest

from curso import rutas
from curso.rutas import CursoNoEncontrado, buscar_raiz


@pytest.fixture
def instalado(tmp_path):
    """La carpeta del paquete como la deja `pip install .`: dentro de site-packages."""
    paquete = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "curso"
    paquete.mkdir(parents=True)
    return paquete


def test_instalado_sin_editable_se_encuentra_subiendo_desde_la_carpeta_del_cuaderno(instalado):
    """Con el paquete en site-packages, la carpeta de notebooks/ (donde JupyterLab arranca el
    núcleo) lleva al curso. La variante ingenua, la carpeta de encima del paquete, da site-packages."""
    assert buscar_raiz({}, trabajo=rutas.RAIZ / "notebooks", paquete=instalado) == rutas.RAIZ
    ingenua = instalado.parent
    assert not rutas.es_el_curso(ingenua)


def test_curso_raiz_manda_sobre_todo_lo_demas(tmp_path, instalado):
    assert buscar_raiz({rutas.VARIABLE_RAIZ: str(rutas.RAIZ)}, trabajo=tmp_path, paquete=instalado) == rutas.RAIZ


def test_una_curso_raiz_que_no_es_el_curso_se_dice_y_no_se_busca_otra(tmp_path):
    """Aunque la carpeta de trabajo esté dentro del curso: quien puso la variable quería esa."""
    with pytest.raises(CursoNoEncontrado) as error:
        buscar_raiz({rutas.VARIABLE_RAIZ: str(tmp_path)}, trabajo=rutas.RAIZ / "notebooks")
    assert f"CURSO_RAIZ={tmp_path} no es la carpeta del curso: le falta checkpoints/" in str(error.value)


def test_sin_curso_dice_en_castellano_que_hacer(tmp_path, instalado):
    """Una carpeta con checkpoints/ y recetario/ (la copia que arma `comprobar`) no es el curso."""
    copia = tmp_path / "copia"
    (copia / "checkpoints").mkdir(parents=True)
    (copia / "recetario").mkdir()
    with pytest.raises(CursoNoEncontrado) as error:
        buscar_raiz({}, trabajo=copia / "checkpoints", paquete=instalado)
    mensaje = str(error.value)
    assert mensaje.startswith("No encuentro la carpeta del curso")
    assert "export CURSO_RAIZ=" in mensaje and "jupyter lab notebooks/" in mensaje
    assert "pip install -e ." in mensaje


def test_las_rutas_que_cambia_un_test_se_respetan(monkeypatch, tmp_path):
    monkeypatch.setattr(rutas, "PUNTOS", tmp_path)
    (tmp_path / "03_algo").mkdir()
    assert rutas.puntos_de_control() == {3: tmp_path / "03_algo"}
