"""Cada ejercicio se comprueba por las dos caras: falla con su esbozo y pasa con su solución.

Como hace rustlings con cada ejercicio: si una comprobación pasara también con el esbozo, no
comprobaría nada. La solución y el esbozo salen de la misma celda del cuaderno resuelto.
"""
import shutil

import pytest

from curso import cuaderno, ejercicios, generar, rutas

REGISTRO = ejercicios.cargar_registro()


def fuente_de_la_celda(celda):
    """El texto de la celda sin la línea %%modulo."""
    lineas = celda.source.split("\n")
    return "\n".join(lineas[1:]) if lineas[0].startswith("%%modulo") else celda.source


def evaluar_con(id, fuente, tmp_path):
    """Escribe `fuente` donde toca (módulo del espacio o cuaderno) y evalúa el ejercicio."""
    e = REGISTRO[id]
    if e.modulo is None:
        espacio_de_nombres = {}
        exec(fuente, espacio_de_nombres)
        return ejercicios.evaluar(id, espacio_de_nombres[e.nombre])
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[e.leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (espacio / f"{e.modulo}.py").write_text(cuaderno.sin_marcas(fuente).rstrip("\n") + "\n", encoding="utf-8")
    try:
        return ejercicios.evaluar(id, espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)


@pytest.mark.parametrize("id", sorted(REGISTRO), ids=lambda i: f"ejercicio {i}")
def test_la_comprobacion_pasa_con_la_solucion(id, tmp_path):
    celda = ejercicios.celda_resuelta(id)
    resultado = evaluar_con(id, fuente_de_la_celda(celda), tmp_path)
    assert resultado.aprobado, ejercicios.informe(resultado)


@pytest.mark.parametrize("id", sorted(REGISTRO), ids=lambda i: f"ejercicio {i}")
def test_la_comprobacion_falla_con_el_esbozo(id, tmp_path):
    celda = ejercicios.celda_resuelta(id)
    esbozada = generar.esbozo(fuente_de_la_celda(celda), generar.ejercicio_de(celda))
    resultado = evaluar_con(id, esbozada, tmp_path)
    assert not resultado.aprobado and resultado.pendiente, ejercicios.informe(resultado)


def test_un_ejercicio_que_no_existe_dice_cuales_hay():
    with pytest.raises(KeyError, match="Los que hay: 0.1"):
        ejercicios.buscar("9.99")


def test_un_error_del_alumno_es_una_linea_en_rojo_no_una_excepcion():
    def rota(salida):
        return salida.nope
    resultado = ejercicios.evaluar("0.1", rota)
    assert not resultado.aprobado
    assert "AttributeError" in ejercicios.informe(resultado)


def test_un_bucle_sin_fin_se_corta(monkeypatch):
    monkeypatch.setattr(ejercicios, "LIMITE_SEGUNDOS", 0.2)

    def sin_fin(salida):
        while True:
            pass
    resultado = ejercicios.evaluar("0.1", sin_fin)
    assert "TimeoutError" in ejercicios.informe(resultado)
