"""Cada lección entrega solo lo que enseña, y lo que entrega lo ejecuta algún test de su punto de control.

`curso/autor/cobertura.py` corre los tests del punto de control N con coverage.py y dice qué
sentencias de lo que entrega la lección N (sus módulos nuevos y lo que cambia en los que ya había)
no se ejecutaron nunca. Un módulo no lleva código para otra lección: si nadie lo ejecuta en esta,
o sobra o le falta su test.

Correr los tests de cada punto de control con coverage encima tarda (minutos): el test de cada
lección es lento. El de la maquinaria, con una lección de mentira, no.

Las lecciones de SIN_CUBRIR todavía entregan sentencias que ningún test suyo ejecuta (ramas de
error de sus almacenes y de sus órdenes, sobre todo; en la 06, además, lo que solo corre en los
procesos del simulacro, lanzados con `python -S`, donde coverage no entra; en la 08, la cola del 8.2
y sus ramas de error, que prueban tests/lecciones/test_cola_08.py y el cuaderno, no los tests de su
punto de control): su test espera fallar
(xfail estricto), y pasa a fallar de verdad el día que estén limpias, para que salgan de la lista.
"""
import textwrap

import pytest

from curso import rutas
from curso.autor import cobertura

# Cuántas sentencias sin ejecutar tenía cada una al medirlo (python -m curso.autor.cobertura).
SIN_CUBRIR = {6: 48, 8: 13}


def test_la_maquinaria_ve_una_funcion_que_ningun_test_ejecuta(tmp_path):
    """Una lección de mentira: un módulo con dos funciones y un test que solo llama a una. La otra
    sale, con sus líneas; la llamada, no. (La variante ingenua: la misma lección, con el test de
    la segunda función también, sale limpia.)"""
    (tmp_path / "tests").mkdir()
    (tmp_path / "modulo.py").write_text(textwrap.dedent('''\
        def usada(x):
            return x + 1


        def sobra(x):
            y = x * 2
            return y
        '''), encoding="utf-8")
    (tmp_path / "tests" / "test_modulo.py").write_text(
        "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent.parent))\n"
        "import modulo\n\n\ndef test_usada():\n    assert modulo.usada(1) == 2\n", encoding="utf-8")
    assert cobertura.sin_ejecutar(tmp_path, ["modulo.py"]) == {"modulo.py": {6, 7}}
    with open(tmp_path / "tests" / "test_modulo.py", "a", encoding="utf-8") as f:
        f.write("\n\ndef test_sobra():\n    assert modulo.sobra(2) == 4\n")
    assert cobertura.sin_ejecutar(tmp_path, ["modulo.py"]) == {"modulo.py": set()}


def test_un_modulo_que_ningun_test_carga_sale_entero(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "solo.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "tests" / "test_nada.py").write_text("def test_nada():\n    pass\n", encoding="utf-8")
    assert cobertura.sin_ejecutar(tmp_path, ["solo.py"]) == {"solo.py": None}


def lecciones():
    for numero in rutas.LECCIONES:
        marcas = [pytest.mark.lento]
        if numero in SIN_CUBRIR:
            marcas.append(pytest.mark.xfail(strict=True, reason=f"{SIN_CUBRIR[numero]} sentencias sin "
                                                                "ejecutar al medirlo"))
        yield pytest.param(numero, marks=marcas, id=f"{numero:02d}")


@pytest.mark.parametrize("numero", lecciones())
def test_lo_que_entrega_cada_leccion_lo_ejecuta_algun_test_de_su_punto_de_control(numero):
    assert cobertura.sin_ejercitar(numero) == {}
