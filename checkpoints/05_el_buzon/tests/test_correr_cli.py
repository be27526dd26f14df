"""Punto de control 01: `python correr.py` desde una terminal, en un proceso aparte.

Sin ANTHROPIC_BASE_URL, correr.py arranca su propio servidor de ensayo dentro del proceso y
corre el agente contra él por HTTP.
"""
import os
import subprocess
import sys
from pathlib import Path

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
    assert any(linea.startswith("fin · ") for linea in lineas), hecho.stdout
    assert "turno 1 · " in hecho.stdout
    assert hecho.stderr == ""


def test_correr_py_con_un_servidor_que_no_esta_falla_con_un_mensaje(tmp_path):
    """Con ANTHROPIC_BASE_URL apuntando a un puerto vacío, no arranca el suyo: el error lo dice."""
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
