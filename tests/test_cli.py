"""Tests de la línea de órdenes `python -m curso`: ayuda y errores en español, código de salida 2
ante argumentos que no valen, y nada tocado cuando se rechaza una orden.

El espacio del alumno es siempre uno temporal (`CURSO_ESPACIO`), nunca el de verdad.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from curso import rutas
from curso import __main__ as cli

ERROR_DE_USO = 2


def foto(carpeta):
    carpeta = Path(carpeta)
    return {p.relative_to(carpeta).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(carpeta.rglob("*"))}


@pytest.fixture
def espacio(tmp_path):
    """Un espacio del alumno temporal con trabajo dentro, que ninguna orden rechazada debe tocar."""
    carpeta = tmp_path / "mi_agente"
    (carpeta / "datos").mkdir(parents=True)
    (carpeta / "bucle.py").write_text("def bucle():\n    return 'lo mío'\n", encoding="utf-8")
    (carpeta / "datos" / "notas.txt").write_text("ideas\n", encoding="utf-8")
    return carpeta


def curso(*argumentos, espacio):
    entorno = {**os.environ, rutas.VARIABLE_ESPACIO: str(espacio)}
    return subprocess.run([sys.executable, "-m", "curso", *argumentos], cwd=rutas.RAIZ,
                          env=entorno, capture_output=True, text=True, timeout=60)


def test_sin_orden_sale_con_2_y_lo_dice_en_espanol(espacio):
    r = curso(espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert "falta la orden" in r.stderr
    assert "uso: python -m curso" in r.stderr
    assert "usage" not in r.stderr and "error: the" not in r.stderr


@pytest.mark.parametrize("ayuda", ["--help", "-h", "--ayuda"])
def test_la_ayuda_esta_en_espanol(espacio, ayuda):
    r = curso(ayuda, espacio=espacio)
    assert r.returncode == 0
    assert r.stdout.startswith("uso: python -m curso")
    for orden in ["doctor", "comparar", "restaurar", "generar", "servidor", "medir", "probar"]:
        assert orden in r.stdout
    assert "muestra esta ayuda y sale" in r.stdout
    for ingles in ["usage:", "show this help", "positional arguments", "options:"]:
        assert ingles not in r.stdout


def test_una_orden_desconocida_sale_con_2(espacio):
    r = curso("arreglar", espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert "'arreglar' no existe" in r.stderr
    assert "python -m curso --ayuda" in r.stderr


@pytest.mark.parametrize("argumentos", [
    ["comparar", "99"], ["comparar", "abc"], ["restaurar", "abc"], ["restaurar", "99"],
    ["restaurar", "-1"],
])
def test_un_punto_de_control_invalido_no_toca_nada(espacio, argumentos):
    antes = foto(espacio.parent)
    r = curso(*argumentos, espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert foto(espacio.parent) == antes  # ni el espacio ni una copia a su lado
    reales = rutas.puntos_de_control()
    if not reales:
        assert "No hay puntos de control" in r.stderr
    for numero, carpeta in reales.items():  # lista los que hay, con número y nombre
        assert f"{numero:02d}  {carpeta.name[3:]}" in r.stderr


@pytest.mark.parametrize("argumentos", [["comparar"], ["restaurar", "1", "2"], ["medir", "todo"],
                                        ["comparar", "1", "--rapido"]])
def test_argumentos_que_no_valen_salen_con_2_sin_tocar_nada(espacio, argumentos):
    antes = foto(espacio.parent)
    with pytest.raises(SystemExit) as salida:
        cli.main(argumentos)
    assert salida.value.code == ERROR_DE_USO
    assert foto(espacio.parent) == antes


def test_los_errores_de_argparse_se_traducen():
    assert cli.traducir_error("argument --puerto: invalid int value: 'x'") == \
        "argumento --puerto: 'x' no es un número entero"
    assert cli.traducir_error("the following arguments are required: N") == "faltan argumentos: N"
    assert cli.traducir_error("unrecognized arguments: --rapido") == \
        "argumentos que no reconozco: --rapido"


def test_una_pieza_que_falta_se_dice_sin_traza(capsys):
    assert cli._funcion("curso.pieza_que_no_existe", "main", "medir buzon") is None
    assert "todavía no existe" in capsys.readouterr().err


def test_las_ordenes_de_puntos_llegan_a_su_funcion(tmp_path, monkeypatch, capsys):
    """`comparar` y `restaurar` por la línea de órdenes, con puntos de control inventados."""
    (tmp_path / "checkpoints" / "01_bucle").mkdir(parents=True)
    (tmp_path / "checkpoints" / "01_bucle" / "bucle.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(rutas, "PUNTOS", tmp_path / "checkpoints")
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(tmp_path / "mi_agente"))

    assert cli.main(["comparar", "01"]) == 1          # aún no hay espacio
    assert cli.main(["restaurar", "01"]) == 0
    assert cli.main(["comparar", "1"]) == 0
    (tmp_path / "mi_agente" / "bucle.py").write_text("x = 2\n", encoding="utf-8")
    assert cli.main(["comparar", "1"]) == 1
    assert "+x = 2" in capsys.readouterr().out


def test_servidor_y_probar_pasan_sus_argumentos_tal_cual(monkeypatch):
    recibidos = {}
    monkeypatch.setattr(cli, "_funcion",
                        lambda modulo, nombre, orden: lambda resto: recibidos.setdefault(orden, resto))
    cli.main(["servidor", "--puerto", "8123", "--guion", "x"])
    cli.main(["probar", "-q", "tests/test_cli.py"])
    assert recibidos == {"servidor": ["--puerto", "8123", "--guion", "x"],
                         "probar": ["-q", "tests/test_cli.py"]}
