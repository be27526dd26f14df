"""Punto de control 01: `ModeloAPI` habla HTTP de verdad, en 127.0.0.1.

Contra el servidor de ensayo del curso (con su plan de fallos para las respuestas raras) y contra
un servidor mínimo de `http.server` que apunta las cabeceras que recibe y contesta lo que le
digamos (p. ej. el error de llama-server). Lo que le añade la lección 06 (las causas, las
cabeceras, el límite de gasto, un 200 que no es de la API, el plazo de la petición entera) lo
prueba la copia de este fichero en su punto de control.
"""
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

import api
from agente import inicio
from api import MAX_TOKENS, VERSION, ErrorDelModelo, ErrorVentana, ModeloAPI, peticion
from curso.ensayo.fallos import Fallos
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
    """Un servidor HTTP mínimo en 127.0.0.1: apunta cada petición y contesta `estado` y `cuerpo`,
    con `cabeceras` de más si se las damos."""

    def __init__(self, estado=200, cuerpo=RESPUESTA_VALIDA, cabeceras=None):
        recibidas = self.recibidas = []
        de_mas = dict(cabeceras or {})

        class Manejador(BaseHTTPRequestHandler):
            def do_POST(self):
                datos = self.rfile.read(int(self.headers["Content-Length"]))
                cabeceras = {k.lower(): v for k, v in self.headers.items()}
                recibidas.append({"ruta": self.path, "cabeceras": cabeceras, "cuerpo": json.loads(datos)})
                salida = json.dumps(cuerpo).encode()
                self.send_response(estado)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(salida)))
                for nombre, valor in de_mas.items():
                    self.send_header(nombre, valor)
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
    assert f"no hay ningún servidor en {url}" in info.value.mensaje
    assert "python -m curso servidor" in info.value.mensaje
    assert "ANTHROPIC_BASE_URL" in info.value.mensaje


def test_un_error_con_su_cuerpo_sigue_llegando_entero():
    """El cuerpo de un estado de error se lee con el mismo plazo, y llega con su mensaje."""
    with ServidorEnsayo(0, fallos="503") as servidor:
        with pytest.raises(ErrorDelModelo) as error:
            ModeloAPI("guion:eco", url=servidor.url, espera=5)(M)
    assert error.value.estado == 503 and "no está disponible" in error.value.mensaje


def test_un_servidor_callado_se_deja_de_esperar_y_lo_dice():
    """El servidor de ensayo se calla 2 s antes de contestar; con una espera de 0,1 s, el adaptador
    deja de esperar y lo dice, sin traza."""
    with ServidorEnsayo(0, fallos=Fallos("lento", lento_s=2)) as servidor:
        with pytest.raises(ErrorDelModelo) as info:
            ModeloAPI("guion:eco", url=servidor.url, espera=0.1)(M)
    assert info.value.estado is None
    assert f"{servidor.url} no ha dicho nada en 0.1 s" in str(info.value)


def test_un_error_sin_la_forma_de_la_api_lleva_su_cuerpo_tal_cual(apuntador):
    """Una pasarela que contesta 502 con su página, no con un JSON de error: el mensaje es lo que
    mandó, sin una traza de json."""
    stub = apuntador(estado=502, cuerpo="<html>Bad Gateway</html>")
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url=stub.url)(M)
    assert (info.value.estado, info.value.mensaje) == (502, '"<html>Bad Gateway</html>"')


def test_una_url_que_urllib_no_entiende_da_un_error_en_castellano():
    """Sin http://, urllib ni lo intenta (ValueError): el aviso dice adónde no se llega, sin traza.
    (La lección 06 le pone nombre a esa causa: «esquema».)"""
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url="localhost:8765")(M)
    assert info.value.estado is None and str(info.value).startswith("no llego a localhost:8765")


# --- Una llamada cortada por max_tokens -------------------------------------------------------

# Lo que contesta llama-server (tools/server/server-task.cpp, `to_json_anthropic`, del llama.cpp que
# trae llama-cpp-python 0.3.36) cuando el límite de tokens corta una llamada: `stop_reason`
# "max_tokens" y la llamada con `input: {}`, porque `json::parse` de sus argumentos a medias falla y
# el código pone un objeto vacío. Sacado de ese código, no grabado: con 6 y con 48 tokens, SmolLM2
# escribió texto y no llegó a empezar ninguna llamada (issue 42).
LLAMADA_CORTADA_DE_LLAMA_SERVER = {
    "id": "chatcmpl-cortada", "type": "message", "role": "assistant", "model": "smollm2",
    "content": [{"type": "text", "text": "Voy a leerlo."},
                {"type": "tool_use", "id": "call_cortada", "name": "leer", "input": {}}],
    "stop_reason": "max_tokens", "stop_sequence": None,
    "usage": {"cache_read_input_tokens": 0, "input_tokens": 300, "output_tokens": 16}}


@pytest.fixture(params=["ensayo", "llama-server"])
def modelo_que_se_corta(request, apuntador):
    """Un ModeloAPI cuya respuesta llega con stop_reason "max_tokens" a media llamada: el servidor
    de ensayo (el guion `herramienta` con 14 tokens) o un servidor que contesta lo que contesta
    llama-server en ese caso."""
    if request.param == "ensayo":
        with ServidorEnsayo(0) as servidor:
            yield ModeloAPI("guion:herramienta", url=servidor.url, max_tokens=14)
    else:
        yield ModeloAPI("smollm2", url=apuntador(cuerpo=LLAMADA_CORTADA_DE_LLAMA_SERVER).url)


def test_una_llamada_cortada_se_contesta_diciendolo_y_sin_ejecutarla(modelo_que_se_corta, tmp_path):
    from entorno import CORTADA
    from permisos import atender
    bloques = modelo_que_se_corta(M, HERRAMIENTAS)
    cortada = bloques[-1]
    assert cortada["type"] == "tool_use" and cortada[CORTADA] is True
    observacion = atender(cortada, tmp_path)
    assert observacion["tool_use_id"] == cortada["id"] and observacion["is_error"] is True
    assert f"la llamada a {cortada['name']} llegó cortada" in observacion["content"]
    assert list(tmp_path.iterdir()) == []  # no se ha hecho nada
    # La llamada se queda en M con su observación; la marca no viaja al servidor.
    siguiente = peticion(M + [("asistente", bloques), ("usuario", [observacion])], HERRAMIENTAS, "guion:eco")
    assert siguiente["messages"][-2]["content"][-1] == {k: v for k, v in cortada.items() if k != CORTADA}
    assert Ensayo().responder(siguiente)["stop_reason"] == "end_turn"  # una conversación que la API acepta


def test_sin_mirar_stop_reason_la_llamada_cortada_se_atiende_como_si_fuera_entera(
        modelo_que_se_corta, monkeypatch, tmp_path):
    """La variante ingenua, la de antes: los bloques tal cual llegan. La llamada cortada parece una
    llamada con `{}` (o con la entrada que cupo), y la observación culpa a los argumentos del modelo
    en vez de decir que se cortó."""
    from permisos import atender
    monkeypatch.setattr(api, "bloques_de", lambda respuesta: respuesta["content"])
    cortada = modelo_que_se_corta(M, HERRAMIENTAS)[-1]
    assert "llegó cortada" not in atender(cortada, tmp_path)["content"]


def test_solo_se_marca_la_llamada_con_la_que_acabo_la_respuesta():
    """Con max_tokens y una llamada seguida de texto, la llamada estaba entera: no se marca."""
    from entorno import CORTADA
    llamada_ = {"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "a"}}
    texto_ = {"type": "text", "text": "y ahora"}
    assert CORTADA not in api.bloques_de({"content": [llamada_, texto_], "stop_reason": "max_tokens"})[0]
    assert CORTADA not in api.bloques_de({"content": [llamada_], "stop_reason": "tool_use"})[0]
    assert api.bloques_de({"content": [llamada_], "stop_reason": "max_tokens"})[0][CORTADA] is True
    assert CORTADA not in llamada_  # una copia: la respuesta no se toca
