"""Punto de control 01: `ModeloAPI` habla HTTP de verdad, en 127.0.0.1.

Contra el servidor de ensayo del curso, y contra un servidor mínimo de `http.server` que apunta
las cabeceras que recibe y contesta lo que le digamos (p. ej. el error de llama-server).
"""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from agente import inicio
from api import MAX_TOKENS, VERSION, ErrorDelModelo, ErrorVentana, ModeloAPI, peticion
from curso.ensayo.motor import Ensayo
from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import RECETARIO
from entorno import HERRAMIENTAS

M = [("sistema", "Eres un agente de prueba."), ("usuario", "Hola, ¿qué tal?")]
# La forma del error de llama-server cuando el prompt no cabe en n_ctx (las cifras, de ejemplo).
ERROR_DE_LLAMA_SERVER = {"error": {
    "code": 400,
    "message": "request (8290 tokens) exceeds the available context size (8192 tokens), try increasing it",
    "type": "exceed_context_size_error",
    "n_prompt_tokens": 8290,
    "n_ctx": 8192}}
RESPUESTA_VALIDA = {"id": "msg_1", "type": "message", "role": "assistant", "model": "prueba",
                    "content": [{"type": "text", "text": "Hola."}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": 7, "output_tokens": 2}}


class Apuntador:
    """Un servidor HTTP mínimo en 127.0.0.1: apunta cada petición y contesta `estado` y `cuerpo`."""

    def __init__(self, estado=200, cuerpo=RESPUESTA_VALIDA):
        recibidas = self.recibidas = []

        class Manejador(BaseHTTPRequestHandler):
            def do_POST(self):
                datos = self.rfile.read(int(self.headers["Content-Length"]))
                cabeceras = {k.lower(): v for k, v in self.headers.items()}
                recibidas.append({"ruta": self.path, "cabeceras": cabeceras, "cuerpo": json.loads(datos)})
                salida = json.dumps(cuerpo).encode()
                self.send_response(estado)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(salida)))
                self.end_headers()
                self.wfile.write(salida)

            def log_message(self, *argumentos):
                pass

        self.http = HTTPServer(("127.0.0.1", 0), Manejador)
        self.url = "http://127.0.0.1:%d" % self.http.server_address[1]
        self.hilo = threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True)
        self.hilo.start()

    def parar(self):
        self.http.shutdown()
        self.http.server_close()
        self.hilo.join()


@pytest.fixture
def apuntador():
    servidores = []

    def crear(**argumentos):
        servidores.append(Apuntador(**argumentos))
        return servidores[-1]
    yield crear
    for s in servidores:
        s.parar()


@pytest.fixture
def servidor():
    with ServidorEnsayo(0) as s:
        yield s


def test_devuelve_los_bloques_y_guarda_el_usage(servidor):
    modelo = ModeloAPI("guion:herramienta", url=servidor.url)
    assert modelo.usage is None
    bloques = modelo(M, HERRAMIENTAS)
    # Lo mismo que contesta el motor del servidor, en el proceso, a la misma petición.
    esperada = Ensayo().responder(peticion(M, HERRAMIENTAS, "guion:herramienta"))
    assert bloques == esperada["content"]
    assert modelo.usage == esperada["usage"]


def test_envia_anthropic_version_y_sin_clave_no_envia_x_api_key(apuntador, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    stub = apuntador()
    assert ModeloAPI("prueba", url=stub.url)(M) == RESPUESTA_VALIDA["content"]
    (recibida,) = stub.recibidas
    assert recibida["ruta"] == "/v1/messages"
    assert recibida["cabeceras"]["anthropic-version"] == VERSION
    assert "x-api-key" not in recibida["cabeceras"]


def test_con_clave_envia_x_api_key(apuntador, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "clave-de-prueba")
    stub = apuntador()
    ModeloAPI("prueba", url=stub.url)(M)
    assert stub.recibidas[0]["cabeceras"]["x-api-key"] == "clave-de-prueba"


def test_sin_url_usa_anthropic_base_url(apuntador, monkeypatch):
    stub = apuntador()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url + "/")
    modelo = ModeloAPI("prueba")
    modelo(M)
    assert len(stub.recibidas) == 1
    assert stub.recibidas[0]["cuerpo"]["model"] == "prueba"
    assert modelo.usage == RESPUESTA_VALIDA["usage"]


def test_el_cuerpo_lleva_el_sistema_aparte_y_los_roles_de_la_api(apuntador):
    stub = apuntador()
    ModeloAPI("prueba", url=stub.url)(M + [("asistente", [{"type": "text", "text": "Hola."}]),
                                          ("usuario", "Sigue.")], HERRAMIENTAS)
    cuerpo = stub.recibidas[0]["cuerpo"]
    assert cuerpo["system"] == M[0][1]
    assert [m["role"] for m in cuerpo["messages"]] == ["user", "assistant", "user"]
    assert cuerpo["tools"] == HERRAMIENTAS


def test_una_peticion_que_no_cabe_da_error_ventana_con_las_cifras():
    """La forma de Anthropic, tal como la escribe el servidor de ensayo: las cifras, en el texto."""
    ventana = 1000
    M_grande = inicio("Los tests fallan.", RECETARIO) + [("usuario", "Más contexto. " * 200)]
    with ServidorEnsayo(0, ventana=ventana) as servidor:
        entrada = servidor.ensayo.contar(peticion(M_grande, HERRAMIENTAS, "guion:arregla"))
        assert entrada > ventana
        with pytest.raises(ErrorVentana) as info:
            ModeloAPI("guion:arregla", url=servidor.url)(M_grande, HERRAMIENTAS)
    error = info.value
    assert isinstance(error, ErrorDelModelo) and error.estado == 400
    assert (error.entrada, error.ventana, error.max_tokens) == (entrada, ventana, MAX_TOKENS)
    assert error.M == M_grande
    assert "no cabe en la ventana" in error.mensaje  # el texto del servidor, tal cual
    assert f"{entrada} tokens de entrada + {MAX_TOKENS} de max_tokens > {ventana}" in str(error)
    assert "compactarla" in str(error)


def test_el_error_de_ventana_de_llama_server_es_error_ventana_en_castellano(apuntador):
    stub = apuntador(estado=400, cuerpo=ERROR_DE_LLAMA_SERVER)
    with pytest.raises(ErrorVentana) as info:
        ModeloAPI("modelo-local", url=stub.url)(M)
    error = info.value
    assert error.estado == 400
    assert (error.entrada, error.ventana, error.max_tokens) == (8290, 8192, None)
    assert error.M == M
    assert error.mensaje == ERROR_DE_LLAMA_SERVER["error"]["message"]  # el del servidor, tal cual
    assert str(error).startswith("la petición no cabe en la ventana del servidor: 8290 tokens de entrada > 8192")
    assert "compactarla" in str(error) and "try increasing" not in str(error)


def test_otro_error_400_no_se_confunde_con_la_ventana(apuntador):
    """La variante ingenua (todo 400 es la ventana) no pasaría: un 400 cualquiera es ErrorDelModelo."""
    cuerpo = {"type": "error", "error": {"type": "invalid_request_error",
                                         "message": "`max_tokens`: tiene que ser un entero"}}
    stub = apuntador(estado=400, cuerpo=cuerpo)
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url=stub.url)(M)
    assert type(info.value) is ErrorDelModelo
    assert str(info.value) == "el servidor contestó 400: `max_tokens`: tiene que ser un entero"


def test_una_url_base_con_v1_de_mas_da_un_404_que_lo_dice(servidor):
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("guion:arregla", url=servidor.url + "/v1/")(M)
    aviso = str(info.value)
    assert info.value.estado == 404
    assert f"POST {servidor.url}/v1/v1/messages" in aviso
    assert "quita ese /v1" in aviso and f"(p. ej. {servidor.url})" in aviso


def test_un_404_sin_v1_de_mas_nombra_la_url_y_no_habla_del_v1(apuntador):
    stub = apuntador(estado=404, cuerpo={"error": {"message": "File Not Found"}})
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url=stub.url)(M)
    assert str(info.value) == f"el servidor contestó 404 a POST {stub.url}/v1/messages: File Not Found"


def test_un_error_con_forma_de_anthropic_lleva_su_mensaje(apuntador):
    cuerpo = {"type": "error", "error": {"type": "not_found_error", "message": "el modelo x no existe"}}
    stub = apuntador(estado=404, cuerpo=cuerpo)
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("x", url=stub.url)(M)
    assert (info.value.estado, info.value.mensaje) == (404, "el modelo x no existe")
    assert f"{stub.url}/v1/messages" in str(info.value)


def puerto_sin_nadie():
    """Un puerto de 127.0.0.1 donde no escucha nadie: se pide uno libre y se cierra."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sin_servidor_el_error_dice_como_arrancar_uno():
    url = "http://127.0.0.1:%d" % puerto_sin_nadie()
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("guion:arregla", url=url, espera=5)(M)
    assert info.value.estado is None
    assert url in info.value.mensaje
    assert "python -m curso servidor" in info.value.mensaje
    assert "ANTHROPIC_BASE_URL" in info.value.mensaje
