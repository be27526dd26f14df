"""curso/material/modelo_real.py: encontrar un modelo de verdad sin confundirlo con el de ensayo, apuntar cada turno, decir lo que hizo; y la ejecución grabada.

Sin modelo de verdad: un servidor falso en 127.0.0.1 hace de llama-server donde hace falta. Lo que
solo se ve con el modelo de verdad está en `python -m curso medir modelo`.
"""
import datetime
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ayudas import modulos_del_punto
from curso import rutas
from curso.ensayo.servidor import ServidorEnsayo
from curso.material import modelo_real


class ComoLlamaServer(BaseHTTPRequestHandler):
    """Contesta count_tokens como llama-server: 200 con input_tokens, sin el request-id del ensayo."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        datos = json.dumps({"input_tokens": 3}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(datos)))
        self.end_headers()
        self.wfile.write(datos)

    def log_message(self, *args):
        pass


@pytest.fixture
def como_llama_server():
    servidor = ThreadingHTTPServer(("127.0.0.1", 0), ComoLlamaServer)
    hilo = threading.Thread(target=servidor.serve_forever, daemon=True)
    hilo.start()
    yield f"http://127.0.0.1:{servidor.server_address[1]}"
    servidor.shutdown()
    servidor.server_close()
    hilo.join(5)


def test_sin_variable_o_sin_nadie_escuchando_no_hay_modelo_real(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert modelo_real.servidor_real() is None
    assert modelo_real.servidor_real("http://127.0.0.1:9") is None  # el puerto 9 no escucha


def test_un_servidor_que_cuenta_tokens_sin_ser_el_de_ensayo_es_de_verdad(como_llama_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", como_llama_server + "/")
    assert modelo_real.servidor_real() == como_llama_server


def test_el_servidor_de_ensayo_no_pasa_por_un_modelo_de_verdad():
    """La variante ingenua («si contesta a count_tokens, es de verdad») lo tomaría por uno: contesta
    200 con input_tokens. Lo que lo delata es su request-id."""
    with ServidorEnsayo(0) as servidor:
        estado, cabeceras, datos = modelo_real._pedir(servidor.url, "/v1/messages/count_tokens", {
            "model": "guion:eco", "messages": [{"role": "user", "content": "hola"}]})
        assert estado == 200 and "input_tokens" in datos  # la ingenua diría que sí
        assert modelo_real.servidor_real(servidor.url) is None


class Falso:
    """Un modelo que contesta lo que le toca de `respuestas` y avanza el reloj `segundos`."""

    def __init__(self, reloj, respuestas, segundos):
        self.reloj, self.respuestas, self.segundos, self.usage = reloj, list(respuestas), list(segundos), None

    def __call__(self, M, herramientas=()):
        self.reloj.ahora += self.segundos.pop(0)
        self.usage = {"input_tokens": 10 * len(M), "cache_read_input_tokens": 1, "output_tokens": 5}
        return self.respuestas.pop(0)


class Reloj:
    ahora = 0.0

    def __call__(self):
        return self.ahora


def test_el_cronometro_separa_el_tiempo_del_modelo_del_del_harness():
    reloj = Reloj()
    llamada = {"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "a.py"}}
    modelo = Falso(reloj, [[llamada], [{"type": "text", "text": "Resumen."}], [{"type": "text", "text": "Hecho."}]],
                   [4.0, 2.0, 3.0])
    cronometro = modelo_real.Cronometro(modelo, instruccion="Resume.", reloj=reloj)
    M = [("sistema", "s"), ("usuario", "p")]
    cronometro(M)
    reloj.ahora += 0.25  # el harness atiende la llamada
    cronometro([*M, ("usuario", "Resume.")])
    reloj.ahora += 0.5
    cronometro([*M, ("asistente", [llamada]), ("usuario", [])])
    reloj.ahora += 0.125
    filas = modelo_real.turnos(cronometro, final=reloj.ahora)
    assert [f["que"] for f in filas] == ["turno 1", "resumen", "turno 2"]  # el resumen no suma turno
    assert [f["segundos"] for f in filas] == [4.0, 2.0, 3.0]
    assert [f["segundos_del_harness"] for f in filas] == [0.25, 0.5, 0.125]
    assert filas[0]["bloques"] == ['llamada leer {"ruta": "a.py"}'] and filas[0]["tokens_de_entrada"] == 21
    harness, en_el_modelo, parte = modelo_real.parte_del_harness(filas)
    assert (harness, en_el_modelo, parte) == (0.875, 9.0, 0.875 / 9.0)


def test_una_peticion_que_falla_queda_apuntada_con_su_error():
    reloj = Reloj()

    def falla(M, herramientas=()):
        raise RuntimeError("no cabe")
    falla.usage = None
    cronometro = modelo_real.Cronometro(falla, reloj=reloj)
    with pytest.raises(RuntimeError):
        cronometro([("sistema", "s"), ("usuario", "p")])
    (fila,) = modelo_real.turnos(cronometro, final=0)
    assert fila["error"] == "RuntimeError: no cabe" and fila["bloques"] == []
    assert any("no cabe" in frase for frase in modelo_real.hallazgos({"turnos": [fila], "motivo": "ventana"}))


def fila(que, bloques, segundos=1.0):
    return {"que": que, "segundos": segundos, "segundos_del_harness": 0.0, "tokens_de_entrada": 100,
            "cache_read_input_tokens": 0, "tokens_de_salida": 7, "bloques": bloques, "error": None}


def test_los_hallazgos_dicen_si_llamo_a_herramientas_si_repitio_y_si_alguna_fallo():
    solo_texto = modelo_real.hallazgos({"turnos": [fila("turno 1", ["texto Hola."])], "motivo": "fin"})
    assert any("no pidió ninguna herramienta" in f for f in solo_texto)
    repetida = 'llamada leer {"ruta": "a.py"}'
    con_llamadas = modelo_real.hallazgos({
        "turnos": [fila("turno 1", [repetida]), fila("turno 2", [repetida])], "motivo": "tope",
        "observaciones": ["error el fichero no existe", "observación hola"]})
    assert not any("no pidió" in f for f in con_llamadas)
    assert any("2 llamada(s)" in f and "repetidas" in f for f in con_llamadas)
    assert any("1 llamada(s) volvieron como observación con is_error" in f for f in con_llamadas)
    assert "2 turno(s) en 2.0 s" in con_llamadas[0]


def test_la_ejecucion_grabada_dice_donde_y_cuando_y_tiene_sus_cifras():
    grabada = modelo_real.cargar_grabada()
    assert "GRABADA" in grabada["_que_es"]
    datetime.date.fromisoformat(grabada["fecha"])
    assert grabada["maquina"]["cpu"] not in ("", "?") and grabada["maquina"]["nucleos"] >= 1
    assert grabada["servidor"]["modelo"].endswith(".gguf") and grabada["servidor"]["ventana"] == 8192
    tamanos = [v["tokens_en_M"] for v in grabada["velocidades"]]
    for medido, pedido in zip(tamanos, modelo_real.TAMANOS, strict=True):
        assert 0.7 * pedido <= medido <= 1.3 * pedido, tamanos
    for v in grabada["velocidades"]:  # una cifra sale de la otra: se grabaron juntas
        assert v["segundos_por_token_de_salida"] == pytest.approx(1 / v["tokens_por_segundo_al_escribir"], rel=0.01)
    leccion_01 = grabada["leccion_01"]
    assert leccion_01["pedido"] == modelo_real.PEDIDO and leccion_01["turnos"]
    for f in leccion_01["turnos"]:
        assert re.fullmatch(r"turno \d+|resumen", f["que"]) and f["segundos"] > 0
        assert all(re.match(r"(texto|llamada) ", b) for b in f["bloques"])
    assert grabada["ventana"]["clase"] == "ErrorVentana"
    assert isinstance(grabada["leccion_03"]["instalado"], bool)


def _repetir_contra_el_de_ensayo(ingenua):
    """Las dos corridas de la 03b (4 turnos), y lo que da repetirlas contra un servidor de ensayo
    nuevo, que, como llama-server, sirve de su caché el prefijo común con la petición anterior; la
    ingenua, sin el nombre de la política delante del prompt de sistema."""
    with modulos_del_punto(rutas.TRES_B):
        corridas = modelo_real.corridas_de_limpiar(tope=4)
        with ServidorEnsayo(0) as servidor:
            return corridas, modelo_real.cache_de_limpiar(servidor.url, corridas, modelo="guion:eco",
                                                          nombrar=not ingenua)


@pytest.mark.parametrize("ingenua", [False, True], ids=["con_su_nombre", "ingenua"])
def test_repetir_las_peticiones_de_la_03b_recalcula_lo_mismo_y_una_politica_no_lee_de_la_otra(ingenua):
    """Tras la primera petición de cada política, cada una recalcula lo mismo que cuando la mandó
    el harness (la repetición es fiel), y la primera empieza de cero. La ingenua, sin el nombre de
    la política, deja que la primera de «por tandas» saque de la caché lo que calculó «cada turno»."""
    corridas, medidas = _repetir_contra_el_de_ensayo(ingenua)
    assert list(medidas) == ["cada turno", "por tandas"]
    for politica, lista in corridas.items():
        m = medidas[politica]
        assert m["parada"] is None and len(m["peticiones"]) == len(lista) == 4
        assert [r for r, _ in m["peticiones"][1:]] == [u["input_tokens"] for _, u in lista[1:]], politica
    # De la primera de «por tandas», la parte que saca de la caché: con su nombre, solo la cabecera
    # de la petición, antes del texto del sistema (unos pocos tokens); la ingenua, la petición entera.
    recalcula, de_la_cache = medidas["por tandas"]["peticiones"][0]
    assert (de_la_cache > recalcula) == ingenua, (recalcula, de_la_cache)
    if not ingenua:
        assert de_la_cache < 0.01 * (recalcula + de_la_cache), (recalcula, de_la_cache)


def test_la_grabacion_de_la_03b_tiene_las_dos_politicas_y_sus_sumas_cuadran():
    leccion = modelo_real.cargar_grabada()["leccion_03b"]
    datetime.date.fromisoformat(leccion["fecha"])
    assert leccion["servidor"]["modelo"].endswith(".gguf") and leccion["harness"].startswith("checkpoints/03b")
    assert list(leccion["medidas"]) == ["cada turno", "por tandas"]
    assert list(leccion["medidas_sin_su_nombre"]) == ["cada turno", "por tandas"]
    for m in [*leccion["medidas"].values(), *leccion["medidas_sin_su_nombre"].values()]:
        assert m["parada"] is None and len(m["peticiones"]) == 10  # atasco, 10 turnos: ninguna se salió
        assert m["recalculados"] == sum(r for r, _ in m["peticiones"])
        assert m["total"] == sum(r + c for r, c in m["peticiones"]) and m["segundos"] > 0
