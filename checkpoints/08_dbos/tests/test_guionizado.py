"""Punto de control 01: `ModeloGuionizado` (sin HTTP) y `ModeloAPI` contra el servidor de ensayo
(por HTTP) son el mismo modelo: para la misma sucesión de M, las mismas respuestas y el mismo `usage`.

Lo único de M que cambia de una ejecución a otra es el tiempo que unittest escribe al final
(«Ran 10 tests in 0.007s»): es la salida de verdad de una orden de verdad. Se compara sin él; el
`usage` se compara tal cual (el tiempo siempre ocupa los mismos tokens: unittest escribe tres
decimales).
"""
import copy
import json
import re

import pytest

from agente import agente, inicio
from api import ErrorVentana, ModeloAPI
from curso.ensayo.recetario import usuario_guionizado
from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import RECETARIO
from entorno import HERRAMIENTAS
from guionizado import ModeloGuionizado

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."


class Grabando:
    """Envuelve a un modelo y apunta, turno a turno, el M que recibe, lo que contesta y su usage."""

    def __init__(self, modelo):
        self.modelo, self.turnos = modelo, []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        visto = copy.deepcopy(M)  # el bucle seguirá añadiendo a M
        respuesta = self.modelo(M, herramientas)
        self.turnos.append((sin_tiempos(visto), sin_tiempos(respuesta), dict(self.modelo.usage)))
        return respuesta


TIEMPO_DE_UNITTEST = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")


def sin_tiempos(valor):
    """`valor` (un M o una respuesta) con el tiempo de unittest cambiado por «…s»."""
    texto = json.dumps(valor, ensure_ascii=False)
    return json.loads(TIEMPO_DE_UNITTEST.sub(r"\1…s", texto))


def correr(modelo, tope):
    grabando = Grabando(modelo)
    motivo, _, M, _ = agente(grabando, PEDIDO, RECETARIO, tope, usuario_guionizado)
    return motivo, grabando.turnos


@pytest.mark.parametrize("guion", ["arregla", "atasco"])
def test_el_guionizado_y_el_servidor_contestan_lo_mismo_turno_a_turno(guion):
    motivo_local, local = correr(ModeloGuionizado(guion), tope=10)
    with ServidorEnsayo(0) as servidor:
        motivo_http, http = correr(ModeloAPI(f"guion:{guion}", url=servidor.url), tope=10)
    assert motivo_local == motivo_http
    assert len(local) == len(http) > 1
    for turno, ((M_l, resp_l, usage_l), (M_h, resp_h, usage_h)) in enumerate(zip(local, http, strict=True), 1):
        assert M_l == M_h, f"turno {turno}: M distinto"
        assert resp_l == resp_h, f"turno {turno}: respuesta distinta"
        assert usage_l == usage_h, f"turno {turno}: usage distinto"


def test_la_comparacion_ve_un_usage_distinto():
    """Un modelo al que le falla la caché (otro `usage` para la misma respuesta) no pasa la
    comparación de arriba: la comprobación del usage puede fallar."""

    class SinCache(ModeloGuionizado):
        def __call__(self, M, herramientas=()):
            self.ensayo = type(self.ensayo)(self.ensayo.ventana)  # olvida la petición anterior
            return super().__call__(M, herramientas)

    _, buenos = correr(ModeloGuionizado("arregla"), tope=3)
    _, sin_cache = correr(SinCache("arregla"), tope=3)
    assert [t[:2] for t in buenos] == [t[:2] for t in sin_cache]
    assert [t[2] for t in buenos] != [t[2] for t in sin_cache]


def test_el_guionizado_y_el_servidor_rechazan_igual_lo_que_no_cabe():
    """Sin HTTP, el mismo ErrorVentana, con las mismas cifras, que por HTTP."""
    M = inicio(PEDIDO, RECETARIO) + [("usuario", "Más contexto. " * 200)]
    errores = []
    with ServidorEnsayo(0, ventana=1000) as servidor:
        for modelo in (ModeloGuionizado("arregla", ventana=1000), ModeloAPI("guion:arregla", url=servidor.url)):
            with pytest.raises(ErrorVentana) as info:
                modelo(M, HERRAMIENTAS)
            errores.append(info.value)
    local, http = errores
    assert (local.estado, local.entrada, local.ventana, local.max_tokens, local.M) == \
        (http.estado, http.entrada, http.ventana, http.max_tokens, http.M)
    assert str(local) == str(http) and local.ventana == 1000
