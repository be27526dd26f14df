"""Punto de control 01: `python correr.py` desde una terminal, en un proceso aparte.

Sin ANTHROPIC_BASE_URL, correr.py arranca su propio servidor de ensayo dentro del proceso y
corre el agente contra él por HTTP.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from curso.rutas import RECETARIO

PUNTO = Path(__file__).resolve().parent.parent  # la carpeta del punto de control
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."


def test_correr_py_con_el_guion_arregla_termina_con_fin(tmp_path):
    entorno = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_BASE_URL"}
    entorno["TMPDIR"] = str(tmp_path)  # la copia del agente, dentro de tmp_path
    entorno["PYTHONDONTWRITEBYTECODE"] = "1"
    hecho = subprocess.run(
        [sys.executable, "correr.py", str(RECETARIO), PEDIDO, "--modelo", "guion:arregla",
         "--si-a-lo-del-guion"],
        cwd=PUNTO, env=entorno, capture_output=True, text=True, timeout=120)
    assert hecho.returncode == 0, hecho.stderr
    lineas = hecho.stdout.splitlines()
    assert lineas[0].startswith("(servidor de ensayo en http://127.0.0.1:")
    (final,) = [linea for linea in lineas if linea.startswith("fin · ")]
    assert "turno 1 · " in hecho.stdout
    assert hecho.stderr == ""
    # La orden conserva la copia y dice dónde está: es la única que hay en la carpeta temporal.
    copia = Path(final.split("la copia está en ")[1])
    assert copia.is_dir() and copia.parent.parent == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == [copia.parent.name]


def test_correr_py_con_un_servidor_que_no_esta_falla_con_un_mensaje(tmp_path):
    """Con ANTHROPIC_BASE_URL apuntando a un puerto vacío, no arranca el suyo: el aviso lo dice,
    sin traza de Python, y no deja ninguna copia en la carpeta temporal."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        puerto = s.getsockname()[1]
    entorno = dict(os.environ, ANTHROPIC_BASE_URL=f"http://127.0.0.1:{puerto}", TMPDIR=str(tmp_path),
                   PYTHONDONTWRITEBYTECODE="1")
    hecho = subprocess.run(
        [sys.executable, "correr.py", str(RECETARIO), PEDIDO, "--si-a-lo-del-guion"],
        cwd=PUNTO, env=entorno, capture_output=True, text=True, timeout=120)
    assert hecho.returncode != 0
    assert "python -m curso servidor" in hecho.stderr
    assert "Traceback" not in hecho.stderr
    assert hecho.stderr.startswith(f"correr.py: no hay ningún servidor en http://127.0.0.1:{puerto}")
    assert list(tmp_path.iterdir()) == []


def test_correr_py_con_un_proyecto_que_no_existe_lo_dice(tmp_path):
    hecho = subprocess.run(
        [sys.executable, "correr.py", str(tmp_path / "no-existe"), PEDIDO, "--si-a-lo-del-guion"],
        cwd=PUNTO, env=dict(os.environ, TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True, text=True, timeout=120)
    assert hecho.returncode == 2
    assert "no encuentro la carpeta del proyecto" in hecho.stderr and "Traceback" not in hecho.stderr


# La variante ingenua: el ArgumentParser de argparse tal cual, que habla inglés.
CON_ARGPARSE_TAL_CUAL = ("import argparse, sys, correr; correr.Analizador = argparse.ArgumentParser; "
                         "sys.exit(correr.main(sys.argv[1:]))")
EN_INGLES = ("usage:", "show this help message", "positional arguments", "options:", "required", "error: argument ", "invalid int")


@pytest.mark.parametrize("variante", ["correcta", "argparse_tal_cual"])
@pytest.mark.parametrize("argumentos, codigo, dice", [
    (["--help"], 0, ["uso: python correr.py", "argumentos:", "opciones:", "-h, --ayuda, --help  muestra esta ayuda y sale"]),
    (["--ayuda"], 0, ["uso: python correr.py", "proyecto", "pedido"]),
    ([], 2, ["uso: python correr.py", "error: faltan los argumentos: proyecto, pedido"]),
    (["a", "b", "--tope", "diez"], 2, ["error: argumento --tope: no es un número entero: 'diez'"]),
])
def test_la_ayuda_y_los_errores_de_la_orden_hablan_castellano(tmp_path, variante, argumentos, codigo, dice):
    orden = ["correr.py"] if variante == "correcta" else ["-c", CON_ARGPARSE_TAL_CUAL]
    hecho = subprocess.run([sys.executable, *orden, *argumentos], cwd=PUNTO, capture_output=True, text=True,
                           env=dict(os.environ, TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1"), timeout=60)
    salida = hecho.stdout + hecho.stderr
    en_castellano = (hecho.returncode == codigo and all(d in salida for d in dice)
                     and not any(ingles in salida for ingles in EN_INGLES))
    assert en_castellano is (variante == "correcta"), salida
