"""Tests de cómo se encuentra la carpeta del curso (`curso.rutas.buscar_raiz`), con carpetas de
verdad y un paquete «instalado» en un site-packages inventado: sin procesos, sin red; y de cómo
se carga un módulo del arnés desde su fichero (`curso.rutas.cargar_modulo`).

Lo de instalar de verdad el curso sin -e en un entorno nuevo y correr la lección 01 está en
test_instalado.py."""
import functools
import importlib.util
import sys

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


# --- cargar_modulo: un módulo del arnés desde su fichero -----------------------------------------

@pytest.fixture
def carpeta_con_vecino(tmp_path, monkeypatch):
    """Una carpeta con `principal.py`, que hace `from vecino import DE_DONDE`, y su `vecino.py`; y
    en sys.modules otro `vecino` (el que sirve el núcleo del cuaderno). monkeypatch lo quita al final."""
    (tmp_path / "vecino.py").write_text('DE_DONDE = "de la carpeta"\n', encoding="utf-8")
    (tmp_path / "principal.py").write_text("from vecino import DE_DONDE\n", encoding="utf-8")
    del_nucleo = type(sys)("vecino")
    del_nucleo.DE_DONDE = "del núcleo"
    monkeypatch.setitem(sys.modules, "vecino", del_nucleo)
    return tmp_path, del_nucleo


def cargar_sin_restaurar(ruta, nombre):
    """INGENUA: aparta los vecinos y pone la carpeta delante, pero no deja nada como estaba."""
    carpeta = str(ruta.parent)
    sys.modules.pop("vecino", None)
    sys.path.insert(0, carpeta)
    especificacion = importlib.util.spec_from_file_location(nombre, ruta)
    modulo = importlib.util.module_from_spec(especificacion)
    especificacion.loader.exec_module(modulo)
    return modulo


def problemas_al_aislar(cargar, carpeta, del_nucleo):
    """Lo que `cargar` hace mal al cargar principal.py aislado: qué vecino recibe, y si sys.path y
    el `vecino` de sys.modules quedan como estaban."""
    ruta_antes = list(sys.path)
    try:
        modulo = cargar(carpeta / "principal.py", "_principal_aislado")
    finally:
        sys.modules.pop("_principal_aislado", None)
        ruta_despues = list(sys.path)
        sys.path[:] = ruta_antes
    problemas = []
    if modulo.DE_DONDE != "de la carpeta":
        problemas.append(f"recibe el vecino {modulo.DE_DONDE}")
    if ruta_despues != ruta_antes:
        problemas.append("sys.path cambia")
    if sys.modules.get("vecino") is not del_nucleo:
        problemas.append("el vecino del núcleo desaparece de sys.modules")
    return problemas


def test_cargar_modulo_aislado_recibe_sus_vecinos_y_deja_sys_modules_como_estaba(carpeta_con_vecino):
    carpeta, del_nucleo = carpeta_con_vecino
    assert problemas_al_aislar(rutas.cargar_modulo, carpeta, del_nucleo) == []
    assert problemas_al_aislar(cargar_sin_restaurar, carpeta, del_nucleo) == [
        "sys.path cambia", "el vecino del núcleo desaparece de sys.modules"]
    sys.modules["vecino"] = del_nucleo  # lo que la ingenua quitó
    sin_aislar = functools.partial(rutas.cargar_modulo, aislado=False)
    assert problemas_al_aislar(sin_aislar, carpeta, del_nucleo) == ["recibe el vecino del núcleo"]


def test_cargar_modulo_sin_aislar_ve_lo_que_sirve_el_nucleo_y_no_lo_sustituye(carpeta_con_vecino):
    """Lo que necesita la comprobación de un ejercicio: el módulo del alumno recibe, para sus
    imports, lo que el núcleo sirve (quizá la versión de referencia de un ejercicio pendiente), y
    no ocupa en sys.modules el sitio del módulo que usa el cuaderno. La variante ingenua es el
    modo aislado, que le da el vecino del disco."""
    carpeta, _ = carpeta_con_vecino
    el_del_cuaderno = type(sys)("principal")  # el principal.py que ya usa el cuaderno
    sys.modules["principal"] = el_del_cuaderno

    def lo_que_ve(cargar):
        try:
            modulo = cargar(carpeta / "principal.py", "principal")
            return modulo.DE_DONDE, sys.modules.get("principal") is el_del_cuaderno
        finally:
            sys.modules["principal"] = el_del_cuaderno

    try:
        assert lo_que_ve(functools.partial(rutas.cargar_modulo, aislado=False)) == ("del núcleo", True)
        assert lo_que_ve(rutas.cargar_modulo) == ("de la carpeta", False)
    finally:
        del sys.modules["principal"]
