"""Punto de control 06: `python correr.py` desde una terminal, en un proceso aparte.

correr.py no arranca ningún servidor: habla por HTTP con el de `--url` (aquí, uno de ensayo que
arranca el test), y sin preguntas si se le dice qué permitir. Limpia y compacta como el bucle de
las lecciones 03 y 03b, salvo con `--sin-limpiar` o `--sin-compactar`.
"""
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agente import inicio
from compactar import RECIENTES
from correr import permitir_solo
from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import RECETARIO

PUNTO = Path(__file__).resolve().parent.parent  # la carpeta del punto de control
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
LO_DEL_GUION = ["--permitir-orden", "python3 -m unittest", "--permitir-editar", "recetario.py",
                "--permitir-editar", "compra.py"]


def test_correr_py_con_el_guion_arregla_termina_con_fin(tmp_path):
    entorno = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_BASE_URL"}
    entorno["TMPDIR"] = str(tmp_path)  # la copia del agente, dentro de tmp_path
    entorno["PYTHONDONTWRITEBYTECODE"] = "1"
    with ServidorEnsayo(0) as servidor:
        hecho = subprocess.run(
            [sys.executable, "correr.py", str(RECETARIO), PEDIDO, "--url", servidor.url,
             "--modelo", "guion:arregla", *LO_DEL_GUION],
            cwd=PUNTO, env=entorno, capture_output=True, text=True, timeout=120)
    assert hecho.returncode == 0, hecho.stderr
    lineas = hecho.stdout.splitlines()
    assert lineas[0].startswith("turno 1 · ")
    (final,) = [linea for linea in lineas if linea.startswith("fin · ")]
    assert hecho.stderr == ""
    # La orden conserva la copia y dice dónde está: es la única que hay en la carpeta temporal.
    copia = Path(final.split("la copia está en ")[1])
    assert copia.is_dir() and copia.parent.parent == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == [copia.parent.name]
    tests = subprocess.run([sys.executable, "-m", "unittest"], cwd=copia, capture_output=True, text=True,
                           env=entorno, timeout=120)
    assert tests.returncode == 0, tests.stderr  # lo arreglado, arreglado de verdad


def correr_py(tmp_path, *argumentos, entrada=None):
    """La salida de `python correr.py` sobre el recetario contra un servidor de ensayo; sin `entrada`,
    con los permisos del guion."""
    entorno = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_BASE_URL"}
    entorno.update(TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    permisos = LO_DEL_GUION if entrada is None else []
    with ServidorEnsayo(0) as servidor:
        hecho = subprocess.run([sys.executable, "correr.py", str(RECETARIO), PEDIDO, "--url", servidor.url,
                                *permisos, *argumentos], input=entrada or "",
                               cwd=PUNTO, env=entorno, capture_output=True, text=True, timeout=120)
    assert hecho.returncode == 0, hecho.stderr
    return hecho.stdout


def test_correr_py_compacta_y_con_sin_compactar_no(tmp_path):
    con = correr_py(tmp_path, "--modelo", "guion:compacta", "--sin-limpiar")  # limpiando, compacta menos
    assert len(re.findall(r"^resumen · ", con, re.M)) == 3
    quedan = len(inicio(PEDIDO, RECETARIO)) + 1 + 2 * RECIENTES  # el inicio, el resumen y dos turnos
    assert f"tope · {quedan} mensajes en M" in con
    sin = correr_py(tmp_path, "--modelo", "guion:arregla", "--sin-compactar", "--sin-limpiar")
    assert "resumen · " not in sin and "fin · " in sin


def test_correr_py_limpia_y_con_sin_limpiar_no(tmp_path):
    con = correr_py(tmp_path, "--modelo", "guion:arregla")
    assert "✂ limpiados" in con and "resumen · " not in con and "fin · " in con
    sin = correr_py(tmp_path, "--modelo", "guion:arregla", "--sin-limpiar")
    assert "✂ limpiados" not in sin and "resumen · " in sin


@pytest.mark.parametrize("respuesta", ["s", "n"])
def test_sin_permisos_en_la_orden_pregunta_cada_uno(tmp_path, respuesta):
    """Sin --permitir-…, cada escritura y cada orden se preguntan en la terminal: con «s», el guion
    arregla el recetario; con «n», no se hace nada y el modelo lo sabe por la observación."""
    salida = correr_py(tmp_path, "--modelo", "guion:arregla", entrada=f"{respuesta}\n" * 20)
    preguntas = re.findall(r"¿Permites (\w+) ", salida)
    assert preguntas and set(preguntas) <= {"ejecutar", "editar"}
    (final,) = [linea for linea in salida.splitlines() if " mensajes en M · la copia está en " in linea]
    copia = Path(final.split("la copia está en ")[1].split("¿")[0].strip())
    tests = subprocess.run([sys.executable, "-m", "unittest"], cwd=copia, capture_output=True, text=True,
                           timeout=120)
    assert (tests.returncode == 0) is (respuesta == "s"), tests.stderr
    assert ("el usuario no ha dado permiso" in salida) is (respuesta == "n")


@pytest.mark.parametrize("como", ["--url", "ANTHROPIC_BASE_URL"])
def test_correr_py_con_un_servidor_que_no_esta_falla_con_un_mensaje(tmp_path, como):
    """Con la URL de un puerto vacío, el aviso lo dice, sin traza de Python, con cómo arrancar uno,
    y no deja ninguna copia en la carpeta temporal."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        puerto = s.getsockname()[1]
    url = f"http://127.0.0.1:{puerto}"
    entorno = dict(os.environ, TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1")
    entorno.pop("ANTHROPIC_BASE_URL", None)
    if como == "ANTHROPIC_BASE_URL":
        entorno["ANTHROPIC_BASE_URL"], donde = url, []
    else:
        donde = ["--url", url]
    hecho = subprocess.run(
        [sys.executable, "correr.py", str(RECETARIO), PEDIDO, *donde, *LO_DEL_GUION],
        cwd=PUNTO, env=entorno, capture_output=True, text=True, timeout=120)
    assert hecho.returncode != 0
    assert "python -m curso servidor" in hecho.stderr
    assert "Traceback" not in hecho.stderr
    assert hecho.stderr.startswith(f"correr.py: no hay ningún servidor en {url}")
    assert list(tmp_path.iterdir()) == []


def test_correr_py_con_un_proyecto_que_no_existe_lo_dice(tmp_path):
    hecho = subprocess.run(
        [sys.executable, "correr.py", str(tmp_path / "no-existe"), PEDIDO, *LO_DEL_GUION],
        cwd=PUNTO, env=dict(os.environ, TMPDIR=str(tmp_path), PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True, text=True, timeout=120)
    assert hecho.returncode == 2
    assert "no encuentro la carpeta del proyecto" in hecho.stderr and "Traceback" not in hecho.stderr


# Una variante ingenua de permitir_solo: la orden que EMPIEZA como una permitida pasa.
def permitir_por_el_principio(ordenes, editables):
    def usuario(nombre, entrada):
        if nombre == "ejecutar":
            return any(str(entrada.get("comando")).startswith(o) for o in ordenes)
        return nombre == "editar" and entrada.get("ruta") in editables
    return usuario


@pytest.mark.parametrize("variante", ["correcta", "por_el_principio"])
def test_sin_preguntar_solo_se_permite_lo_dicho_tal_cual(variante):
    usuario = {"correcta": permitir_solo, "por_el_principio": permitir_por_el_principio}[variante](
        ["python3 -m unittest"], ["compra.py"])
    pedidas = {("ejecutar", "python3 -m unittest"): True, ("editar", "compra.py"): True,
               ("ejecutar", "python3 -m unittest; rm -rf ."): False, ("ejecutar", "ls"): False,
               ("editar", "recetario.py"): False, ("editar", "./compra.py"): False,
               ("buscar", "compra.py"): False}
    contesta = {(nombre, valor): usuario(nombre, {"comando" if nombre == "ejecutar" else "ruta": valor})
                for nombre, valor in pedidas}
    assert (contesta == pedidas) is (variante == "correcta"), contesta


# La variante ingenua: el ArgumentParser de argparse tal cual, que habla inglés.
CON_ARGPARSE_TAL_CUAL = ("import argparse, sys, correr; correr.Analizador = argparse.ArgumentParser; "
                         "sys.exit(correr.main(sys.argv[1:]))")
EN_INGLES = ("usage:", "show this help message", "positional arguments", "options:", "required", "error: argument ", "invalid int")


@pytest.mark.parametrize("variante", ["correcta", "argparse_tal_cual"])
@pytest.mark.parametrize("argumentos, codigo, dice", [
    (["--help"], 0, ["uso: python correr.py", "argumentos:", "opciones:", "-h, --ayuda, --help", "muestra esta ayuda y sale"]),
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
