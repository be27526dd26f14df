"""Punto de control 01: las dos ejecuciones guionizadas de la lección, enteras y por HTTP de verdad.

`agente` + `ModeloAPI` + `usuario_guionizado` sobre recetario/, contra un servidor de ensayo en
127.0.0.1. `arregla` deja los tests en verde; `atasco` reproduce la ejecución real que se atascó
citando mal `antiguo`, con los tokens de entrada de cada turno a menos de un 5 % de las cifras
grabadas en curso/material/datos/traza_real.json.

Y la copia de trabajo de cada ejecución: `agente` la borra al terminar, pase lo que pase, salvo
que se le pida conservarla.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from agente import agente, inicio
from api import ErrorDelModelo, ErrorVentana, ModeloAPI, peticion
from bucle import bucle
from correr import Traza
from curso.ensayo.recetario import usuario_guionizado
from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import RAIZ, RECETARIO
from entorno import HERRAMIENTAS
from curso.ensayo.guionizado import ModeloGuionizado

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
TOLERANCIA = 0.05  # el contador del ensayo no es el tokenizador del modelo real: un 5 % como mucho
TRAZA_REAL = json.loads((RAIZ / "curso" / "material" / "datos" / "traza_real.json").read_text(encoding="utf-8"))
TEMPORAL = tempfile.gettempdir()  # la carpeta temporal del sistema, antes de que la cambie un test


class Contador:
    """Envuelve a un modelo y apunta, en cada turno, el M que recibe y los tokens de entrada."""

    def __init__(self, modelo):
        self.modelo, self.vistos, self.entradas = modelo, [], []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        self.vistos.append(list(M))
        respuesta = self.modelo(M, herramientas)
        u = self.modelo.usage
        self.entradas.append(u["input_tokens"] + u.get("cache_read_input_tokens", 0))
        return respuesta


def ficheros(carpeta):
    """{ruta relativa: bytes} de todo lo que hay en `carpeta` (sin __pycache__)."""
    return {p.relative_to(carpeta).as_posix(): p.read_bytes() for p in sorted(carpeta.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture
def servidor():
    with ServidorEnsayo(0) as s:
        yield s


@pytest.fixture(autouse=True)
def copias_en_tmp_path(tmp_path, monkeypatch):
    """Las copias que hace `agente` (con tempfile) van a tmp_path, que pytest borra."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def correr(servidor, guion, tope, envolver=Contador):
    modelo = envolver(ModeloAPI(f"guion:{guion}", url=servidor.url))
    motivo, texto, M, copia = agente(modelo, PEDIDO, RECETARIO, tope, usuario_guionizado, conservar=True)
    return modelo, motivo, texto, M, copia


def ultima_linea_de_los_tests(carpeta):
    hecho = subprocess.run([sys.executable, "-m", "unittest"], cwd=carpeta, capture_output=True,
                           text=True, timeout=60, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    return (hecho.stdout + hecho.stderr).strip().splitlines()[-1]


# --- arregla ---------------------------------------------------------------------------------

def test_arregla_termina_con_fin_y_los_tests_de_la_copia_pasan(servidor, tmp_path):
    sin_arreglar = tmp_path / "sin_arreglar"
    shutil.copytree(RECETARIO, sin_arreglar, ignore=shutil.ignore_patterns("__pycache__"))
    assert ultima_linea_de_los_tests(sin_arreglar) != "OK"  # recetario/ tiene sus tres errores
    _, motivo, texto, _, copia = correr(servidor, "arregla", 10)
    assert motivo == "fin" and texto
    assert ultima_linea_de_los_tests(copia) == "OK"


def test_arregla_no_toca_recetario(servidor):
    antes = ficheros(RECETARIO)
    _, _, _, _, copia = correr(servidor, "arregla", 10)
    assert ficheros(copia) != antes  # en la copia sí ha cambiado algo...
    assert ficheros(RECETARIO) == antes  # ...y el proyecto sigue igual, byte a byte


def test_sin_copia_el_bucle_cambiaria_el_proyecto(servidor, tmp_path):
    """La variante ingenua (el bucle sobre el proyecto mismo, sin copia) lo cambia: la
    comparación byte a byte de arriba lo detectaría."""
    proyecto = tmp_path / "recetario"
    shutil.copytree(RECETARIO, proyecto, ignore=shutil.ignore_patterns("__pycache__"))
    antes = ficheros(proyecto)
    bucle(ModeloAPI("guion:arregla", url=servidor.url), inicio(PEDIDO, proyecto), proyecto, 10,
          usuario_guionizado)
    assert ficheros(proyecto) != antes


# --- atasco ----------------------------------------------------------------------------------

def test_atasco_llega_al_tope_en_10_turnos_sin_editar_nada(servidor):
    modelo, motivo, texto, M, copia = correr(servidor, "atasco", 10)
    assert (motivo, texto) == ("tope", None)
    assert sum(1 for rol, _ in M if rol == "asistente") == 10
    assert ficheros(copia) == ficheros(RECETARIO)
    intentos = [b for rol, c in M if rol == "asistente" for b in c
                if b["type"] == "tool_use" and b["name"] == "editar"]
    assert intentos, "el atasco intenta editar (y falla)"


def test_atasco_gasta_por_turno_lo_que_la_traza_real(servidor):
    grabados = [t["tokens_de_entrada"] for t in TRAZA_REAL["sin_compactar"]["turnos"]]
    modelo, *_ = correr(servidor, "atasco", len(grabados))
    assert len(modelo.entradas) == len(grabados)
    for turno, (ensayo, real) in enumerate(zip(modelo.entradas, grabados, strict=True), 1):
        assert abs(ensayo - real) <= TOLERANCIA * real, f"turno {turno}: {ensayo} frente a {real}"


def test_un_turno_mas_alla_del_tope_el_servidor_rechaza_la_peticion(servidor, tmp_path):
    copia = tmp_path / "recetario"
    shutil.copytree(RECETARIO, copia, ignore=shutil.ignore_patterns("__pycache__"))
    modelo = Contador(ModeloAPI("guion:atasco", url=servidor.url))
    with pytest.raises(ErrorVentana) as info:
        bucle(modelo, inicio(PEDIDO, copia), copia, 11, usuario_guionizado)
    assert len(modelo.vistos) == 11 and len(modelo.entradas) == 10  # la 11.ª no tuvo respuesta
    entrada = servidor.ensayo.contar(peticion(modelo.vistos[-1], HERRAMIENTAS, "guion:atasco"))
    assert info.value.estado == 400
    assert (info.value.entrada, info.value.ventana) == (entrada, servidor.ventana)
    assert info.value.M == modelo.vistos[-1]
    real = TRAZA_REAL["sin_compactar"]["peticion_siguiente"]
    assert abs(entrada - real) <= TOLERANCIA * real


# --- La traza de correr.py -------------------------------------------------------------------

def test_traza_escribe_turnos_tokens_y_flechas_sin_rutas_temporales(servidor, capsys):
    modelo, motivo, _, M, copia = correr(servidor, "arregla", 10, envolver=lambda m: Traza(Contador(m)))
    salida = capsys.readouterr().out
    turnos = re.findall(r"^turno (\d+) · (\d+) tokens de entrada$", salida, re.M)
    entradas = modelo.modelo.entradas
    assert [(int(n), int(x)) for n, x in turnos] == list(enumerate(entradas, 1))
    respuestas = sum(len(c) for rol, c in M if rol == "asistente")
    observaciones = sum(len(c) for rol, c in M[2:] if rol == "usuario")
    assert len(re.findall(r"^  ← ", salida, re.M)) == respuestas
    assert len(re.findall(r"^  → ", salida, re.M)) == observaciones
    assert str(copia) not in salida and tempfile.gettempdir() not in salida
    assert TEMPORAL + os.sep not in salida


def test_la_traza_da_el_usage_del_modelo_que_envuelve(servidor, capsys):
    """Quien tiene la traza la usa como al modelo: su `usage` es el de la última respuesta (la
    lección 01 cuenta así los tokens de la última petición de atasco)."""
    modelo, *_ = correr(servidor, "arregla", 3, envolver=lambda m: Traza(Contador(m)))
    u = modelo.usage
    assert u is modelo.modelo.usage and u["input_tokens"] + u.get("cache_read_input_tokens", 0) == modelo.modelo.entradas[-1]


def test_traza_da_la_misma_salida_con_el_modelo_guionizado(servidor, capsys):
    """La traza solo depende de la conversación: con HTTP o sin él, la misma salida."""
    correr(servidor, "atasco", 10, envolver=Traza)
    por_http = capsys.readouterr().out
    agente(Traza(ModeloGuionizado("atasco")), PEDIDO, RECETARIO, 10, usuario_guionizado)
    assert capsys.readouterr().out == por_http


# --- La copia de trabajo ---------------------------------------------------------------------

@pytest.fixture
def temporal(tmp_path, monkeypatch):
    """Una carpeta temporal del sistema vacía, solo para este test."""
    carpeta = tmp_path / "temporal"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    return carpeta


def test_sin_conservar_la_copia_no_queda_en_la_carpeta_temporal(temporal):
    motivo, _, M, copia = agente(ModeloGuionizado("arregla"), PEDIDO, RECETARIO, 10, usuario_guionizado)
    assert motivo == "fin" and copia is None
    assert list(temporal.iterdir()) == []


def test_si_el_modelo_falla_tampoco_queda_la_copia(temporal):
    def sin_servidor(M, herramientas=()):
        raise ErrorDelModelo(None, "no hay ningún servidor")
    with pytest.raises(ErrorDelModelo):
        agente(sin_servidor, PEDIDO, RECETARIO, 10, usuario_guionizado, conservar=True)
    assert list(temporal.iterdir()) == []


def test_con_conservar_la_copia_se_queda_y_agente_dice_donde(temporal):
    _, _, _, copia = agente(ModeloGuionizado("arregla"), PEDIDO, RECETARIO, 10, usuario_guionizado,
                            conservar=True)
    assert [p.name for p in temporal.iterdir()] == [copia.parent.name]
    assert copia.parent.name.startswith("agente-") and copia.name == RECETARIO.name
    assert ultima_linea_de_los_tests(copia) == "OK"
