"""Punto de control 01: las tres herramientas, siempre dentro de la copia de trabajo.

Cada test comprueba un invariante de `herramientas.py`. Los que rechazan algo comprueban
también que no ha pasado nada: el fichero sigue byte a byte igual, o lo de fuera no se ha leído.
"""
import os
import sys

import pytest

import herramientas
from herramientas import ErrorDeHerramienta, editar, ejecutar, leer

COMPRA = '''"""La lista de la compra."""


def compra(menu):
    return sorted(menu)
'''
SECRETO = "esto está fuera de la copia y el modelo no debe verlo\n"


@pytest.fixture
def copia(tmp_path):
    """Una copia de trabajo pequeña, con un fichero al lado (fuera) que nadie debe tocar."""
    carpeta = tmp_path / "proyecto"
    (carpeta / "a").mkdir(parents=True)
    (carpeta / "compra.py").write_text(COMPRA, encoding="utf-8")
    (carpeta / "notas.txt").write_text("Tortilla: huevos, patatas, cebolla.\n", encoding="utf-8")
    (tmp_path / "x").write_text(SECRETO, encoding="utf-8")
    return carpeta


def bytes_de(ruta):
    return ruta.read_bytes()


def error_de(funcion, *argumentos):
    """El mensaje del ErrorDeHerramienta que lanza la llamada (falla si no lanza ninguno)."""
    with pytest.raises(ErrorDeHerramienta) as info:
        funcion(*argumentos)
    return str(info.value)


# --- leer ------------------------------------------------------------------------------------

def test_leer_devuelve_el_fichero_entero(copia):
    largo = "".join(f"línea {i}: «ñandú»\n" for i in range(2000))  # mucho más que LIMITE_SALIDA
    assert len(largo) > herramientas.LIMITE_SALIDA
    (copia / "largo.txt").write_text(largo, encoding="utf-8")
    assert leer(copia, "largo.txt") == largo


def test_un_fichero_que_no_existe_da_error_con_lo_que_hay(copia):
    mensaje = error_de(leer, copia, "recetas.txt")
    assert "no existe" in mensaje and "recetas.txt" in mensaje
    assert "compra.py" in mensaje and "notas.txt" in mensaje


def test_un_fichero_binario_da_error(copia):
    (copia / "foto.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    assert "no es un fichero de texto" in error_de(leer, copia, "foto.png")


# --- rutas fuera de la copia ------------------------------------------------------------------

FUERA = ["../x", "a/../../x", "/etc/passwd"]


@pytest.mark.parametrize("ruta", FUERA)
def test_leer_fuera_de_la_copia_da_error_y_no_lee_nada(copia, ruta):
    mensaje = error_de(leer, copia, ruta)
    assert "sale de la copia" in mensaje
    assert SECRETO.strip() not in mensaje and "root:" not in mensaje


@pytest.mark.parametrize("ruta", FUERA[:2])  # /etc/passwd no se intenta escribir ni en un test
def test_editar_fuera_de_la_copia_da_error_y_no_escribe_nada(copia, ruta):
    fuera = copia.parent / "x"
    antes = bytes_de(fuera)
    assert "sale de la copia" in error_de(editar, copia, ruta, "fuera", "DENTRO")
    assert bytes_de(fuera) == antes


def test_un_enlace_que_apunta_fuera_tambien_da_error(copia):
    (copia / "enlace.txt").symlink_to(copia.parent / "x")
    mensaje = error_de(leer, copia, "enlace.txt")
    assert "sale de la copia" in mensaje and SECRETO.strip() not in mensaje


def test_una_comprobacion_ingenua_de_rutas_deja_salir(copia, monkeypatch):
    """La variante ingenua (sólo rechazar rutas absolutas) lee ../x: la comprobación de arriba
    la detectaría."""
    def dentro_ingenua(entorno, ruta):
        if os.path.isabs(ruta):
            raise ErrorDeHerramienta("ruta absoluta")
        return copia / ruta
    monkeypatch.setattr(herramientas, "dentro", dentro_ingenua)
    assert leer(copia, "../x") == SECRETO


# --- editar ----------------------------------------------------------------------------------

def test_editar_cambia_la_unica_aparicion(copia):
    antes = (copia / "compra.py").read_text(encoding="utf-8")
    respuesta = editar(copia, "compra.py", "return sorted(menu)", "return sorted(set(menu))")
    assert "editado compra.py" in respuesta
    assert (copia / "compra.py").read_text(encoding="utf-8") == antes.replace(
        "return sorted(menu)", "return sorted(set(menu))")


def test_antiguo_que_no_aparece_no_cambia_nada_y_pide_copiarlo_tal_cual(copia):
    antes = bytes_de(copia / "compra.py")
    # Las comillas cambiadas, como las cita un modelo pequeño: no aparece.
    mensaje = error_de(editar, copia, "compra.py", "'''La lista de la compra.'''", "'''Otra.'''")
    assert "no aparece" in mensaje and "tal cual" in mensaje and "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


def test_antiguo_repetido_no_cambia_nada(copia):
    antes = bytes_de(copia / "compra.py")
    mensaje = error_de(editar, copia, "compra.py", "menu", "platos")
    assert "veces" in mensaje and "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


def test_antiguo_vacio_no_cambia_nada(copia):
    antes = bytes_de(copia / "compra.py")
    assert "No se ha cambiado nada" in error_de(editar, copia, "compra.py", "", "x")
    assert bytes_de(copia / "compra.py") == antes


def test_un_nuevo_que_no_se_puede_guardar_no_vacia_el_fichero(copia):
    """Un JSON puede traer medio par sustituto (\\ud800): no se puede escribir en UTF-8, y el
    fichero no debe quedarse a medias (ni vacío) por haberlo intentado."""
    antes = bytes_de(copia / "compra.py")
    mensaje = error_de(editar, copia, "compra.py", "return sorted(menu)", "return \ud800")
    assert "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


# --- ejecutar --------------------------------------------------------------------------------

def test_ejecutar_devuelve_el_codigo_de_salida_y_la_salida(copia):
    orden = f'{sys.executable} -c "import sys; print(\'hola desde la copia\'); sys.exit(3)"'
    primera, resto = ejecutar(copia, orden).split("\n", 1)
    assert primera == "código de salida 3"
    assert resto.strip() == "hola desde la copia"


def test_ejecutar_escribe_relativas_las_rutas_de_la_copia(copia):
    (copia / "roto.py").write_text("raise ValueError('roto')\n", encoding="utf-8")
    salida = ejecutar(copia, f"{sys.executable} roto.py")
    assert salida.startswith("código de salida 1")
    assert 'File "roto.py"' in salida
    assert str(copia.resolve()) not in salida


def test_una_salida_enorme_se_corta_con_un_aviso(copia):
    sobra = 5000
    total = herramientas.LIMITE_SALIDA + sobra
    salida = ejecutar(copia, f"{sys.executable} -c \"print('x' * {total}, end='')\"")
    assert "salida cortada" in salida and f"{sobra} caracteres más" in salida
    assert salida.count("x") == herramientas.LIMITE_SALIDA


def test_una_orden_que_no_termina_se_corta_con_un_error(copia, monkeypatch):
    monkeypatch.setattr(herramientas, "ESPERA_ORDEN", 0.3)
    mensaje = error_de(ejecutar, copia, "sleep 5")
    assert "no terminó" in mensaje and "se ha cortado" in mensaje
