"""generar: las regiones de solución se vuelven esbozos que no fallan al definirse."""
import pytest

from curso.autor.generar import ErrorDeRegion, esbozo

RESUELTA = '''def doble(x):
    """El doble de x."""
    # BEGIN SOLUCIÓN
    return 2 * x
    # END SOLUCIÓN
'''


def test_el_esbozo_no_falla_al_definirse_y_si_al_llamarse():
    espacio = {}
    exec(esbozo(RESUELTA, "9.1"), espacio)
    with pytest.raises(NotImplementedError, match=r"Ejercicio 9\.1 pendiente: completa doble\(\)"):
        espacio["doble"](3)


def test_el_esbozo_quita_la_solucion_y_las_marcas():
    texto = esbozo(RESUELTA, "9.1")
    assert "return 2 * x" not in texto
    assert "SOLUCIÓN" not in texto
    assert '"""El doble de x."""' in texto


def test_sin_regiones_el_texto_no_cambia():
    assert esbozo("x = 1\nprint(x)", None) == "x = 1\nprint(x)"


@pytest.mark.parametrize("fuente, motivo", [
    ("# BEGIN SOLUCIÓN\nx = 1\n# END SOLUCIÓN", "dentro del cuerpo de una función"),
    ("def f():\n    # BEGIN SOLUCIÓN\n    return 1\n", "sin su"),
    ("def f():\n    return 1\n    # END SOLUCIÓN", "sin su"),
    ("def f():\n    # BEGIN SOLUCIÓN\n    # BEGIN SOLUCIÓN\n", "dentro de otra"),
])
def test_una_region_mal_puesta_es_un_error_claro(fuente, motivo):
    with pytest.raises(ErrorDeRegion, match=motivo):
        esbozo(fuente, "9.1")


def test_una_region_sin_numero_de_ejercicio_es_un_error_claro():
    with pytest.raises(ErrorDeRegion, match="qué ejercicio"):
        esbozo(RESUELTA, None)


def test_una_celda_con_varios_ejercicios_esboza_cada_funcion_con_el_suyo():
    fuente = RESUELTA + RESUELTA.replace("doble", "triple").replace("2 * x", "3 * x")
    texto = esbozo(fuente, {"doble": "9.1", "triple": "9.2"})
    assert "Ejercicio 9.1 pendiente: completa doble()" in texto
    assert "Ejercicio 9.2 pendiente: completa triple()" in texto
