"""El plan de fallos del servidor de ensayo (curso/ensayo/fallos.py), por HTTP de verdad."""
import http.client
import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from curso.ensayo.fallos import VARIACION, Fallos, leer_plan
from curso.ensayo.servidor import ServidorEnsayo

PETICION = {"model": "guion:eco", "max_tokens": 50, "messages": [{"role": "user", "content": "hola"}]}


def pedir(url, peticion=PETICION):
    """(estado, cuerpo) de un POST /v1/messages; ("corte", None) si la conexión se cortó."""
    pedido = urllib.request.Request(url + "/v1/messages", json.dumps(peticion).encode(),
                                    {"content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(pedido, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except http.client.RemoteDisconnected:
        return "corte", None


def test_cada_peticion_distinta_recorre_el_plan_en_orden():
    with ServidorEnsayo(0, fallos="529,429,corte") as servidor:
        primera = [pedir(servidor.url)[0] for _ in range(5)]
        otra = dict(PETICION, messages=[{"role": "user", "content": "adiós"}])
        segunda = [pedir(servidor.url, otra)[0] for _ in range(4)]
    assert primera == [529, 429, "corte", 200, 200]
    assert segunda == [529, 429, "corte", 200]  # la otra petición empieza su plan desde el principio


def test_el_529_trae_el_cuerpo_de_anthropic():
    with ServidorEnsayo(0, fallos="529") as servidor:
        estado, cuerpo = pedir(servidor.url)
    assert estado == 529 and cuerpo["type"] == "error" and cuerpo["error"]["type"] == "overloaded_error"


def test_cada_n_solo_falla_una_de_cada_n_peticiones_distintas():
    with ServidorEnsayo(0, fallos=Fallos("503", cada=2)) as servidor:
        estados = [pedir(servidor.url, dict(PETICION, messages=[{"role": "user", "content": f"p{n}"}]))[0]
                   for n in range(1, 5)]
    assert estados == [200, 503, 200, 503]


def test_variar_cambia_el_texto_de_una_peticion_ya_contestada():
    with ServidorEnsayo(0, fallos=Fallos(variar=True)) as servidor:
        textos = [pedir(servidor.url)[1]["content"][0]["text"] for _ in range(3)]
    assert textos == ["hola", "hola" + VARIACION, "hola" + VARIACION * 2]


@pytest.mark.parametrize("plan", ["418", "caida", "529,,x"])
def test_un_plan_que_no_vale_se_dice_en_castellano(plan):
    with pytest.raises(ValueError, match="El plan de fallos tiene"):
        leer_plan(plan)


def test_la_orden_rechaza_un_plan_que_no_vale():
    hecho = subprocess.run([sys.executable, "-m", "curso", "servidor", "--puerto", "0", "--fallos", "418"],
                           capture_output=True, text=True, timeout=60)
    assert hecho.returncode == 2 and "El plan de fallos tiene «418»" in hecho.stderr
