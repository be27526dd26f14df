"""Cada lección entrega solo el código que enseña: las líneas para leer de cada una, contadas.

`curso/autor/lineas.py` las cuenta: de lo que la lección declara en `rutas.LECCIONES`, los módulos
nuevos enteros y, de los que cambia, las líneas que no estaban en el punto de control anterior;
sin contar las que están en blanco. La lección 01 entrega como mucho 500 (el objetivo del issue
41; antes de él eran 830, 986 en bruto), y la tabla de lecciones del README dice la cifra de cada
lección.
"""
import re
import shutil

import pytest

from curso import rutas
from curso.autor import lineas

TOPE_DE_LA_01 = 500  # líneas para leer: lo que se lee de una sentada antes de ver el bucle correr
FILA = re.compile(r"^\| (\d\d[a-z]?) \| `[^`]+` \| (\d+) \|", re.M)


def cifras_del_readme(texto):
    """{lección: líneas para leer} de la tabla de lecciones del README."""
    return {rutas.leccion_escrita(numero): int(cifra) for numero, cifra in FILA.findall(texto)}


def test_nuevas_cuenta_lo_que_cambia_y_no_lo_que_sigue_igual():
    antes = ["a", "b", "c", ""]
    assert lineas.nuevas(antes, ["a", "B", "c", "", "d"]) == ["B", "d"]
    assert lineas.nuevas(None, ["a", "b"]) == ["a", "b"]  # un módulo nuevo, entero
    assert lineas.nuevas(antes, antes) == []


def test_la_leccion_01_entrega_como_mucho_500_lineas_para_leer():
    assert lineas.entregadas(1) <= TOPE_DE_LA_01, lineas.por_fichero(1)


def test_la_01_con_las_herramientas_y_el_api_de_la_06_pasaria_de_500(tmp_path):
    """La variante ingenua, la de antes: la 01 entregando el herramientas.py y el api.py enteros, con
    lo que solo necesita la 06 (los enlaces, el reemplazo de una vez, las causas, el plazo)."""
    puntos = rutas.puntos_de_control()
    copia = {0: puntos[0], 1: tmp_path / "01"}
    shutil.copytree(puntos[1], copia[1], ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for modulo in ("herramientas.py", "api.py"):
        shutil.copy(puntos[6] / modulo, copia[1] / modulo)
    assert lineas.entregadas(1, copia) > TOPE_DE_LA_01


def test_la_tabla_del_readme_dice_las_lineas_de_cada_leccion():
    tabla = cifras_del_readme((rutas.RAIZ / "README.md").read_text(encoding="utf-8"))
    assert tabla == {numero: lineas.entregadas(numero) for numero in rutas.LECCIONES}


@pytest.mark.parametrize("leccion", [1, 6])
def test_una_cifra_del_readme_que_no_es_la_de_hoy_se_ve(leccion):
    """La variante ingenua: la tabla con la cifra de antes de un cambio (una línea más)."""
    texto = (rutas.RAIZ / "README.md").read_text(encoding="utf-8")
    cifra = lineas.entregadas(leccion)
    vieja = re.sub(rf"^(\| {leccion:02d} \| `[^`]+` \| ){cifra} \|", rf"\g<1>{cifra + 1} |", texto, flags=re.M)
    assert vieja != texto
    assert cifras_del_readme(vieja) != {numero: lineas.entregadas(numero) for numero in rutas.LECCIONES}
