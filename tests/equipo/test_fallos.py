"""El plan de fallos del servidor de ensayo (curso/ensayo/fallos.py), por HTTP de verdad."""
import http.client
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from curso.ensayo.fallos import TROZOS_DEL_GOTEO, VARIACION, Fallos, leer_plan
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


@pytest.mark.parametrize("plan", ["418", "caida", "529,,x", "418:40", "429:", "429:40s", "429:-1", "gasto:3"])
def test_un_plan_que_no_vale_se_dice_en_castellano(plan):
    with pytest.raises(ValueError, match="El plan de fallos tiene"):
        leer_plan(plan)


def pedir_crudo(url, espera=10, peticion=PETICION):
    """(estado, cabeceras en minúsculas, bytes del cuerpo) de un POST /v1/messages, con http.client."""
    anfitrion, puerto = url.removeprefix("http://").split(":")
    conexion = http.client.HTTPConnection(anfitrion, int(puerto), timeout=espera)
    try:
        conexion.request("POST", "/v1/messages", json.dumps(peticion), {"content-type": "application/json"})
        r = conexion.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conexion.close()


def test_un_estado_con_espera_lleva_retry_after_o_retry_after_ms():
    with ServidorEnsayo(0, fallos="429:40,529:1500ms,503") as servidor:
        respuestas = [pedir_crudo(servidor.url) for _ in range(3)]
    (e1, c1, _), (e2, c2, _), (e3, c3, _) = respuestas
    assert (e1, c1["retry-after"], "retry-after-ms" in c1) == (429, "40", False)
    assert (e2, c2["retry-after-ms"], "retry-after" in c2) == (529, "1500", False)
    assert e3 == 503 and "retry-after" not in c3 and "retry-after-ms" not in c3


def test_gasto_es_el_429_del_limite_de_gasto_sin_retry_after():
    with ServidorEnsayo(0, fallos="gasto") as servidor:
        estado, cabeceras, cuerpo = pedir_crudo(servidor.url)
    error = json.loads(cuerpo)["error"]
    assert estado == 429 and error["type"] == "rate_limit_error"
    assert error["details"] == {"error_code": "enforced_spend_limit_reached"}
    assert "retry-after" not in cabeceras and "retry-after-ms" not in cabeceras


@pytest.mark.parametrize("estado, tipo", [(408, "invalid_request_error"), (409, "conflict_error")])
def test_408_y_409_llevan_el_cuerpo_de_anthropic(estado, tipo):
    with ServidorEnsayo(0, fallos=str(estado)) as servidor:
        recibido, cuerpo = pedir(servidor.url)
    assert recibido == estado and cuerpo["type"] == "error" and cuerpo["error"]["type"] == tipo


def test_html_y_sin_usage_contestan_200_con_algo_que_no_es_una_respuesta():
    with ServidorEnsayo(0, fallos="html") as html, ServidorEnsayo(0, fallos="sin_usage") as sin_usage:
        estado_html, cabeceras, pagina = pedir_crudo(html.url)
        estado_json, _, datos = pedir_crudo(sin_usage.url)
    assert estado_html == 200 and cabeceras["content-type"].startswith("text/html")
    assert pagina.startswith(b"<!DOCTYPE html>")
    respuesta = json.loads(datos)
    assert estado_json == 200 and "usage" not in respuesta and respuesta["content"][0]["text"] == "hola"


def test_a_medias_manda_la_mitad_del_cuerpo_y_se_calla():
    with ServidorEnsayo(0, fallos=Fallos("a_medias", lento_s=2)) as servidor:
        anfitrion, puerto = servidor.url.removeprefix("http://").split(":")
        conexion = http.client.HTTPConnection(anfitrion, int(puerto), timeout=0.3)
        conexion.request("POST", "/v1/messages", json.dumps(PETICION), {"content-type": "application/json"})
        r = conexion.getresponse()
        anunciados, llegados = int(r.getheader("Content-Length")), r.read1(1 << 16)
        with pytest.raises(TimeoutError):
            r.read()
        conexion.close()
    assert r.status == 200 and 0 < len(llegados) == anunciados // 2


def test_goteo_manda_el_cuerpo_entero_a_trozos_sin_callarse_nunca_lo_que_mide_una_espera():
    """Cada silencio (0,1 s) es más corto que la espera por lectura del cliente (1 s), que no lo
    corta nunca; el cuerpo llega entero, pero tras TROZOS_DEL_GOTEO silencios."""
    with ServidorEnsayo(0, fallos=Fallos("goteo", lento_s=0.1)) as servidor:
        anfitrion, puerto = servidor.url.removeprefix("http://").split(":")
        conexion = http.client.HTTPConnection(anfitrion, int(puerto), timeout=1)
        conexion.request("POST", "/v1/messages", json.dumps(PETICION), {"content-type": "application/json"})
        inicio = time.monotonic()
        r = conexion.getresponse()
        trozos = []
        while trozo := r.read1(1 << 16):
            trozos.append(trozo)
        tardo = time.monotonic() - inicio
        conexion.close()
    assert r.status == 200 and json.loads(b"".join(trozos))["content"][0]["text"] == "hola"
    assert len(trozos) > 1 and tardo >= TROZOS_DEL_GOTEO * 0.1 * 0.9, (len(trozos), tardo)


def test_llegadas_cuenta_cada_peticion_con_fallo_o_sin_el():
    with ServidorEnsayo(0, fallos="503") as servidor:
        [pedir(servidor.url) for _ in range(3)]
        assert servidor.ensayo.fallos.llegadas == 3 and len(servidor.ensayo.fallos.aplicados) == 1


def test_la_orden_rechaza_un_plan_que_no_vale():
    hecho = subprocess.run([sys.executable, "-m", "curso", "servidor", "--puerto", "0", "--fallos", "418"],
                           capture_output=True, text=True, timeout=60)
    assert hecho.returncode == 2 and "El plan de fallos tiene «418»" in hecho.stderr
