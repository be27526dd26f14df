"""La tabla de las medidas (`curso.medir.MEDICIONES`) y `python -m curso medir QUE`, sin medir nada."""
import importlib

import pytest

from curso import __main__ as cli
from curso.medir import MEDICIONES, apuntar, codigo_de_salida, main
from curso.rutas import RAIZ


def test_cada_medida_de_la_tabla_tiene_su_modulo_con_main():
    for nombre, medicion in MEDICIONES.items():
        modulo = importlib.import_module(f"curso.medir.{medicion.modulo}")
        assert callable(getattr(modulo, "main", None)), nombre
        assert medicion.descripcion.strip(), nombre


def test_cada_modulo_del_paquete_es_una_medida_de_la_tabla():
    modulos = {p.stem for p in (RAIZ / "curso" / "medir").glob("*.py")} - {"__init__"}
    assert modulos == {m.modulo for m in MEDICIONES.values()}


def test_la_ayuda_de_medir_nombra_cada_medida_con_su_descripcion(capsys):
    with pytest.raises(SystemExit) as salida:
        cli.main(["medir", "--ayuda"])
    assert salida.value.code == 0
    ayuda = " ".join(capsys.readouterr().out.split())  # sin los saltos de línea del formato
    for nombre, medicion in MEDICIONES.items():
        assert f"{nombre} {medicion.descripcion}" in ayuda


def test_una_medida_que_no_existe_sale_con_2_y_dice_cuales_hay(capsys):
    assert main("nada") == 2
    salida = capsys.readouterr().out
    assert "«nada»" in salida and all(nombre in salida for nombre in MEDICIONES)


@pytest.mark.parametrize("resultado, codigo", [
    (0, 0), (1, 1), ({"cumple_objetivo": True}, 0), ({"cumple_objetivo": False}, 1),
    ({"proporcion": 0.7}, 0), (None, 0), (True, 0),
])
def test_el_codigo_de_salida_de_cada_resultado(resultado, codigo):
    assert codigo_de_salida(resultado) == codigo


def test_una_medida_sin_argumentos_no_los_toma_en_silencio(capsys):
    """`medir servidor --n 3` no mide nada con un --n que no es suyo: dice que no los toma."""
    assert main("servidor", ["--n", "3"]) == 2
    assert "no toma más argumentos" in capsys.readouterr().out


def test_medir_caminos_pasa_sus_argumentos_a_la_medida(capsys):
    with pytest.raises(SystemExit) as salida:
        cli.main(["medir", "caminos", "--ayuda"])
    assert salida.value.code == 0
    ayuda = capsys.readouterr().out
    assert "--semilla" in ayuda and "--otra-vez" in ayuda


def test_lo_que_escribe_una_medida_queda_en_su_fichero_con_la_orden_y_la_fecha(tmp_path, capsys):
    def medida():
        print("arregla: 3,2 s por HTTP")
        return 0
    assert apuntar("servidor", [], medida, carpeta=tmp_path) == 0
    assert "arregla: 3,2 s por HTTP" in capsys.readouterr().out  # se sigue viendo mientras mide
    texto = (tmp_path / "servidor.md").read_text(encoding="utf-8")
    assert texto.startswith("# `python -m curso medir servidor`") and "UTC" in texto and "núcleos" in texto
    assert "arregla: 3,2 s por HTTP" in texto and "salió con 0" in texto


def test_una_medida_que_falla_no_borra_lo_apuntado_antes(tmp_path):
    """La variante ingenua apuntaría lo que llevara escrito (o nada) al fallar a medias."""
    (tmp_path / "todo.md").write_text("lo de la vez anterior", encoding="utf-8")

    def medida():
        print("la mitad")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        apuntar("todo", [], medida, carpeta=tmp_path)
    assert (tmp_path / "todo.md").read_text(encoding="utf-8") == "lo de la vez anterior"
