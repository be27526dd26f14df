"""`una_vez` (curso/material/una_vez.py): lo que calcula una celda pesada se guarda por una huella de lo que lee, y solo dentro de los núcleos de los tests.

Cada test cuenta las veces que se calcula de verdad. La variante ingenua de la huella (solo los
argumentos, sin el contenido de los módulos) daría el resultado de antes tras cambiar un módulo.
"""
import threading
import time

import pytest

from curso.material import una_vez as cache


@pytest.fixture
def contada(tmp_path):
    """(la función decorada, las veces que se calculó, la carpeta de sus módulos)."""
    modulos = tmp_path / "modulos"
    modulos.mkdir()
    (modulos / "m.py").write_text("VALOR = 1\n", encoding="utf-8")
    veces = []

    @cache.una_vez(lambda x, aviso=None: [modulos], lambda x, aviso=None: (x,), aviso="aviso")
    def calcular(x, aviso=None):
        veces.append(x)
        for _ in range(3):
            if aviso:
                aviso()
        time.sleep(0.2)  # lo bastante para que dos que llegan a la vez se encuentren
        return {"x": x, "modulo": (modulos / "m.py").read_text(encoding="utf-8")}

    return calcular, veces, modulos


def test_sin_la_variable_se_calcula_siempre(contada, monkeypatch):
    """Un alumno en su JupyterLab, un test que llama a la función (con su monkeypatch): nunca la caché."""
    calcular, veces, _ = contada
    monkeypatch.delenv(cache.VARIABLE, raising=False)
    assert calcular(1) == calcular(1)
    assert veces == [1, 1]


@pytest.fixture
def con_cache(tmp_path, monkeypatch):
    """Como en un núcleo de los tests: con la carpeta de la caché."""
    carpeta = tmp_path / "cache"
    carpeta.mkdir()
    monkeypatch.setenv(cache.VARIABLE, str(carpeta))
    return carpeta


def test_lo_mismo_se_calcula_una_vez_y_los_avisos_se_repiten(contada, con_cache):
    calcular, veces, _ = contada
    avisos = []
    primero = calcular(1, aviso=lambda: avisos.append("·"))
    segundo = calcular(1, aviso=lambda: avisos.append("·"))
    assert primero == segundo and veces == [1]
    assert avisos == ["·"] * 6  # la salida de la celda, igual las dos veces
    assert calcular(2) and veces == [1, 2]  # otros argumentos, otro cálculo


def test_si_cambia_un_modulo_que_lee_se_calcula_otra_vez(contada, con_cache):
    """El alumno reescribe un módulo: la huella cambia. La ingenua (la clave de los argumentos y
    nada más) le daría lo calculado con el módulo de antes."""
    calcular, veces, modulos = contada
    assert calcular(1)["modulo"] == "VALOR = 1\n"
    (modulos / "m.py").write_text("VALOR = 2\n", encoding="utf-8")
    assert calcular(1)["modulo"] == "VALOR = 2\n" and veces == [1, 1]
    # La ingenua: la misma función con una huella sin los módulos.
    ingenua = cache.una_vez(lambda x: [], lambda x: (x,))(lambda x: (modulos / "m.py").read_text(encoding="utf-8"))
    assert ingenua(1) == "VALOR = 2\n"
    (modulos / "m.py").write_text("VALOR = 3\n", encoding="utf-8")
    assert ingenua(1) == "VALOR = 2\n"


def test_dos_que_llegan_a_la_vez_lo_calculan_una_sola_vez(contada, con_cache):
    calcular, veces, _ = contada
    resultados = []
    hilos = [threading.Thread(target=lambda: resultados.append(calcular(7))) for _ in range(3)]
    for hilo in hilos:
        hilo.start()
    for hilo in hilos:
        hilo.join()
    assert veces == [7] and len(resultados) == 3 and all(r == resultados[0] for r in resultados)
