"""`procesos.correr` (lección 01): la orden corre en su grupo, con su salida cortada y su espera, y
al volver no queda nada suyo vivo."""
import time

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
