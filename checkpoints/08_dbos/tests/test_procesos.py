"""`procesos.correr` (lección 01): la orden corre en su grupo, con su salida cortada y su espera, y
al volver no queda nada suyo vivo."""
import time

import pytest

import procesos
from procesos import correr


def test_devuelve_el_codigo_y_la_salida_entera_si_cabe(tmp_path):
    assert correr("echo hola; exit 3", tmp_path, espera=10, limite=100) == (3, "hola\n", 0)


def test_corta_la_salida_en_el_limite_y_cuenta_lo_que_sobra(tmp_path):
    codigo, salida, sobran = correr("printf '%020000d' 0", tmp_path, espera=10, limite=50)
    assert (codigo, salida, sobran) == (0, "0" * 50, 20_000 - 50)
    assert 20_000 > procesos.TROZO  # la salida llega en más de un trozo


def test_corre_en_la_carpeta_y_sin_entrada(tmp_path):
    (tmp_path / "dato.txt").write_text("aquí\n", encoding="utf-8")
    assert correr("cat dato.txt; cat", tmp_path, espera=10, limite=100) == (0, "aquí\n", 0)


def test_al_acabar_mata_lo_que_la_orden_dejo_en_segundo_plano(tmp_path):
    codigo, salida, _ = correr("(sleep 1; echo tarde > tarde.txt) & echo lanzado", tmp_path,
                               espera=10, limite=100)
    assert (codigo, salida) == (0, "lanzado\n")
    time.sleep(1.5)
    assert not (tmp_path / "tarde.txt").exists()


def test_si_pasa_la_espera_devuelve_none_y_mata_al_grupo(tmp_path):
    inicio = time.monotonic()
    codigo, salida, _ = correr("echo empieza; sleep 30; echo acaba", tmp_path, espera=0.5, limite=100)
    assert (codigo, salida) == (None, "empieza\n")
    assert time.monotonic() - inicio < 10


# --- Lección 05: casan, la búsqueda en otro proceso ---------------------------------------------

def test_casan_dice_en_que_texto_y_linea_casa_el_patron():
    textos = [["uno", "refused", "dos"], [], ["reset", "refused otra vez"]]
    assert procesos.casan("refused|reset", textos, espera=10) == [[0, 2], [2, 1], [2, 2]]
    assert procesos.casan("x", [], espera=10) == []


def test_casan_corta_un_patron_que_no_acaba_y_devuelve_none():
    inicio = time.monotonic()
    assert procesos.casan(r"(a+)+$", [["a" * 40 + "!"]], espera=1) is None
    assert time.monotonic() - inicio < 10


def test_casan_lanza_valueerror_si_el_proceso_que_busca_falla():
    with pytest.raises(ValueError, match="ha fallado"):
        procesos.casan("(", [["línea"]], espera=10)  # re no lo compila: el proceso acaba con error
