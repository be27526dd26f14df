"""Punto de control 01: el bucle termina por "fin" o por "tope", M solo crece y nada lo tumba.

Los modelos de estos tests son funciones que devuelven respuestas hechas a mano o al azar: el
bucle no sabe (ni debe saber) si al otro lado hay un servidor.
"""
import copy
import shutil
import tempfile
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bucle import bucle
from curso.rutas import RECETARIO
from entorno import HERRAMIENTAS, llamada, llamadas_de, texto
from curso.ensayo.guionizado import ModeloGuionizado

INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Lee compra.py.")]


class Grabadora:
    """Un modelo que contesta con `respuestas` (la última se repite) y guarda una copia de cada M."""

    def __init__(self, respuestas):
        self.respuestas, self.vistas = respuestas, []

    def __call__(self, M, herramientas=()):
        self.vistas.append(copy.deepcopy(M))
        return copy.deepcopy(self.respuestas[min(len(self.vistas), len(self.respuestas)) - 1])


class Grabando:
    """Envuelve a otro modelo y guarda una copia de cada M que recibe."""

    def __init__(self, modelo):
        self.modelo, self.vistas = modelo, []

    def __call__(self, M, herramientas=()):
        self.vistas.append(copy.deepcopy(M))
        return self.modelo(M, herramientas)


@pytest.fixture
def copia(tmp_path):
    (tmp_path / "compra.py").write_text("def compra(menu):\n    return sorted(menu)\n", encoding="utf-8")
    return tmp_path


@pytest.mark.contrato("1.3")
def test_termina_con_fin_cuando_el_modelo_no_pide_nada(copia):
    modelo = Grabadora([[llamada("t1", "leer", ruta="compra.py")], [texto("Ya lo he leído.")]])
    motivo, final, M = bucle(modelo, INICIO, copia, tope=10)
    assert (motivo, final) == ("fin", "Ya lo he leído.")
    assert len(modelo.vistas) == 2
    assert M[-1] == ("asistente", [texto("Ya lo he leído.")])


@pytest.mark.contrato("1.3")
def test_termina_con_tope_al_llegar_al_tope(copia):
    tope = 4
    modelo = Grabadora([[llamada(f"t{i}", "leer", ruta="compra.py")] for i in range(1, 20)])
    motivo, final, M = bucle(modelo, INICIO, copia, tope=tope)
    assert (motivo, final) == ("tope", None)
    assert len(modelo.vistas) == tope
    assert len(M) == len(INICIO) + 2 * tope  # cada turno: la respuesta y sus observaciones


@pytest.mark.contrato("1.3")
def test_no_cambia_la_lista_de_inicio(copia):
    inicio = list(INICIO)
    bucle(Grabadora([[texto("Nada que hacer.")]]), inicio, copia, tope=3)
    assert inicio == INICIO


def es_prefijo(corta, larga):
    return len(corta) < len(larga) and larga[:len(corta)] == corta


def m_solo_crece(vistas):
    """¿Cada petición repite entera la anterior y le añade algo al final?"""
    return all(es_prefijo(a, b) for a, b in pairwise(vistas))


@pytest.mark.contrato("1.3")
def test_m_solo_crece(tmp_path):
    copia = tmp_path / "recetario"
    shutil.copytree(RECETARIO, copia, ignore=shutil.ignore_patterns("__pycache__"))
    modelo = Grabando(ModeloGuionizado("atasco"))
    motivo, _, M = bucle(modelo, INICIO, copia, tope=10)
    assert motivo == "tope" and len(modelo.vistas) == 10
    assert m_solo_crece(modelo.vistas + [M])


def test_un_bucle_que_olvida_turnos_no_pasa_la_comprobacion(copia):
    """La variante ingenua (enviar solo el inicio y el último turno) rompe `m_solo_crece`."""
    vistas = []

    def bucle_olvidadizo(modelo, inicio, entorno, tope):
        from permisos import atender
        ultimo = []
        for _ in range(tope):
            M = list(inicio) + ultimo
            vistas.append(copy.deepcopy(M))
            respuesta = modelo(M, HERRAMIENTAS)
            ultimo = [("asistente", respuesta),
                      ("usuario", [atender(ll, entorno) for ll in llamadas_de(respuesta)])]

    bucle_olvidadizo(Grabadora([[llamada(f"t{i}", "leer", ruta="compra.py")] for i in range(1, 9)]),
                     INICIO, copia, tope=4)
    assert not m_solo_crece(vistas)


# --- Con hypothesis: respuestas al azar ----------------------------------------------------------

CUALQUIER_TEXTO = st.text(st.characters(exclude_categories=()), max_size=20)
VALORES_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | CUALQUIER_TEXTO,
    lambda hijos: st.lists(hijos, max_size=3) | st.dictionaries(CUALQUIER_TEXTO, hijos, max_size=3),
    max_leaves=6)
NOMBRES = st.sampled_from(["leer", "editar", "ejecutar"]) | CUALQUIER_TEXTO
ENTRADAS = st.dictionaries(st.sampled_from(["ruta", "antiguo", "nuevo", "comando"]) | CUALQUIER_TEXTO,
                           VALORES_JSON | st.sampled_from(["compra.py", "../x", "sorted"]), max_size=3)
BLOQUE_DE_TEXTO = st.builds(texto, CUALQUIER_TEXTO)
LLAMADA = st.builds(lambda id, nombre, entrada: {"type": "tool_use", "id": id, "name": nombre,
                                                 "input": entrada},
                    st.text(min_size=1, max_size=8), NOMBRES, ENTRADAS)
RESPUESTA = st.lists(BLOQUE_DE_TEXTO | LLAMADA, max_size=4)


@pytest.fixture(scope="module")
def copia_del_modulo():
    carpeta = Path(tempfile.mkdtemp(prefix="bucle-"))
    yield carpeta
    shutil.rmtree(carpeta)


@pytest.mark.contrato("1.3")
@settings(max_examples=100, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(respuestas=st.lists(RESPUESTA, min_size=1, max_size=6), tope=st.integers(1, 6))
def test_ninguna_respuesta_al_azar_tumba_el_bucle(copia_del_modulo, respuestas, tope):
    (copia_del_modulo / "compra.py").write_text("def compra(menu):\n    return sorted(menu)\n",
                                                encoding="utf-8")
    modelo = Grabadora(respuestas)
    motivo, _, M = bucle(modelo, INICIO, copia_del_modulo, tope, usuario=lambda n, e: n == "editar")
    assert motivo in ("fin", "tope")
    assert m_solo_crece(modelo.vistas + [M])
    turnos = M[len(INICIO):]
    for i, (rol, respuesta) in enumerate(turnos):
        if rol != "asistente" or not llamadas_de(respuesta):
            continue
        siguiente_rol, observaciones = turnos[i + 1]  # si pidió algo, hay un mensaje después
        assert siguiente_rol == "usuario"
        pedidas = llamadas_de(respuesta)
        assert [o["tool_use_id"] for o in observaciones] == [ll["id"] for ll in pedidas]
        assert all(o["type"] == "tool_result" for o in observaciones)
    if motivo == "fin":
        assert not llamadas_de(M[-1][1])
    else:
        assert len(modelo.vistas) == tope
