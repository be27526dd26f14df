"""Punto de control 06: `ModeloAPI` habla HTTP de verdad, en 127.0.0.1, y dice de cada fallo lo que
los reintentos necesitan saber.

Contra el servidor de ensayo del curso (con su plan de fallos para las respuestas raras), contra
un servidor mínimo de `http.server` que apunta las cabeceras que recibe y contesta lo que le
digamos (p. ej. el error de llama-server), y contra uno de TLS con un certificado que nadie firma.
"""
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
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
    assert (info.value.estado, info.value.causa) == (None, "rechazada")
    assert url in info.value.mensaje
    assert "python -m curso servidor" in info.value.mensaje
    assert "ANTHROPIC_BASE_URL" in info.value.mensaje


# --- Lo que lleva un error para decidir qué hacer después (la lección 06 reintenta con eso) -------

def test_un_error_guarda_las_cabeceras_de_la_respuesta(apuntador):
    """`retry-after` es cómo dice el servidor cuánto esperar: la variante que las tira no lo sabe."""
    cuerpo = {"type": "error", "error": {"type": "rate_limit_error", "message": "más despacio"}}
    stub = apuntador(estado=429, cuerpo=cuerpo, cabeceras={"Retry-After": "40", "retry-after-ms": "40000"})
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url=stub.url)(M)
    assert info.value.estado == 429 and info.value.codigo is None
    assert info.value.cabeceras["retry-after"] == "40"  # el nombre, en minúsculas
    assert info.value.cabeceras["retry-after-ms"] == "40000"


def test_el_429_del_limite_de_gasto_lleva_su_codigo_y_dice_que_no_es_de_un_momento():
    """La API nombra la causa en `error.details.error_code`. La variante que solo mira el estado
    lo trata como un 429 cualquiera, y el aviso no dice que esperar no sirve."""
    with ServidorEnsayo(0, fallos="gasto") as servidor:
        with pytest.raises(ErrorDelModelo) as info:
            ModeloAPI("guion:eco", url=servidor.url)(M)
    error = info.value
    assert (error.estado, error.codigo) == (429, "enforced_spend_limit_reached")
    assert "retry-after" not in error.cabeceras
    assert "límite de gasto mensual" in str(error) and "fallará igual" in str(error)


def test_una_url_que_no_es_http_falla_sin_conectar_y_lo_dice():
    """Antes, «htp://» daba «no hay ningún servidor», que es falso: el adaptador ni lo intentó."""
    for url, idea in (("htp://127.0.0.1:8765", False), ("localhost:8765", True)):
        with pytest.raises(ErrorDelModelo) as info:
            ModeloAPI("prueba", url=url)(M)
        assert (info.value.estado, info.value.causa) == (None, "esquema")
        assert f"«{url}» no empieza por http:// ni https://" in str(info.value)
        assert ("¿querías decir http://localhost:8765?" in str(info.value)) is idea
        assert "no hay ningún servidor" not in str(info.value)


def test_un_nombre_que_no_se_resuelve_lo_dice(monkeypatch):
    """El resolvedor del sistema, cambiado por uno que no conoce ningún nombre (la red de verdad
    no entra en los tests): urllib lanza lo mismo que con un nombre mal escrito."""
    def no_lo_conoce(*argumentos, **opciones):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    monkeypatch.setattr(socket, "getaddrinfo", no_lo_conoce)
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url="http://api.anthropci.com")(M)
    assert (info.value.estado, info.value.causa) == (None, "nombre")
    assert "no encuentro la máquina «api.anthropci.com»" in str(info.value)


@pytest.fixture
def con_certificado_propio(tmp_path):
    """La URL de un servidor TLS en 127.0.0.1 con un certificado hecho para él, que nadie firma."""
    if shutil.which("openssl") is None:
        pytest.skip("hace falta la orden openssl para hacer el certificado")
    clave, certificado = tmp_path / "clave.pem", tmp_path / "certificado.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", clave, "-out", certificado, "-days", "1", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True, timeout=30)
    contexto = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    contexto.load_cert_chain(certificado, clave)
    escucha = socket.create_server(("127.0.0.1", 0))

    def atender():
        try:
            conexion, _ = escucha.accept()
            conexion.settimeout(10)
            with contexto.wrap_socket(conexion, server_side=True):
                pass
        except OSError:  # el cliente no se fía del certificado y corta el saludo: lo esperado
            pass
    hilo = threading.Thread(target=atender, daemon=True)
    hilo.start()
    yield "https://127.0.0.1:%d" % escucha.getsockname()[1]
    escucha.close()
    hilo.join(10)


def test_un_certificado_que_no_vale_lo_dice(con_certificado_propio):
    with pytest.raises(ErrorDelModelo) as info:
        ModeloAPI("prueba", url=con_certificado_propio, espera=10)(M)
    assert (info.value.estado, info.value.causa) == (None, "certificado")
    assert f"el certificado de {con_certificado_propio} no es válido" in str(info.value)


def test_una_conexion_cortada_y_un_servidor_callado_tienen_su_causa():
    """Con el plan de fallos: el primer intento encuentra la conexión cortada, el segundo un
    servidor que se calla, y el tercero uno que se para a media respuesta. (Una espera corta solo
    donde el servidor se calla 2 s: si se le acaba antes de que el servidor hable, es «tiempo» igual.)"""
    with ServidorEnsayo(0, fallos=Fallos("corte,lento,a_medias", lento_s=2)) as servidor:
        causas = []
        for espera in (10, 0.1, 0.1):
            with pytest.raises(ErrorDelModelo) as info:
                ModeloAPI("guion:eco", url=servidor.url, espera=espera)(M)
            causas.append((info.value.estado, info.value.causa))
    assert causas == [(None, "cortada"), (None, "tiempo"), (None, "tiempo")]


@pytest.mark.parametrize("variante", ["correcta", "espera_por_lectura"])
def test_un_cuerpo_que_llega_a_gotas_se_corta_al_acabarse_la_espera(monkeypatch, variante):
    """El servidor manda las cabeceras y luego el cuerpo en diez trozos, 0,15 s de silencio antes
    de cada uno: ningún silencio llega a la espera (0,5 s), pero la petición entera dura 1,5 s. La
    espera es de la petición entera: se corta a los 0,5 s con causa «tiempo». La variante ingenua
    (leer el cuerpo con la espera por lectura, `r.read()`) no lo corta nunca y acaba tras el goteo."""
    if variante == "espera_por_lectura":
        monkeypatch.setattr(api, "leer_entera", lambda respuesta, fin, *_: respuesta.read())
    with ServidorEnsayo(0, fallos=Fallos("goteo", lento_s=0.15)) as servidor:
        inicio = time.monotonic()
        try:
            ModeloAPI("guion:eco", url=servidor.url, espera=0.5)(M)
            causa = None
        except ErrorDelModelo as error:
            causa, aviso = error.causa, str(error)
        tardo = time.monotonic() - inicio
    if variante == "correcta":
        assert causa == "tiempo" and "no ha llegado entera en 0.5 s" in aviso, aviso
        assert tardo < 1.2, tardo  # el goteo entero dura 1,5 s
    else:
        assert causa is None and tardo >= 1.4, (causa, tardo)


def test_un_error_con_su_cuerpo_sigue_llegando_entero():
    """El cuerpo de un estado de error se lee con el mismo plazo, y llega con su mensaje."""
    with ServidorEnsayo(0, fallos="503") as servidor:
        with pytest.raises(ErrorDelModelo) as error:
            ModeloAPI("guion:eco", url=servidor.url, espera=5)(M)
    assert error.value.estado == 503 and "no está disponible" in error.value.mensaje


@pytest.mark.parametrize("plan, falta", [("html", "no es JSON (empieza por «<!DOCTYPE html>"),
                                         ("sin_usage", "es un JSON sin `usage`")])
def test_un_200_que_no_es_una_respuesta_de_la_api_da_un_error_en_castellano(plan, falta):
    """La variante ingenua (`json.loads(...)["usage"]`) lanza JSONDecodeError o KeyError: una traza
    en inglés. Y no se pierde nada: el `usage` sigue siendo el de la última respuesta buena."""
    with ServidorEnsayo(0, fallos=Fallos(plan, cada=2)) as servidor:
        modelo = ModeloAPI("guion:eco", url=servidor.url)
        modelo([("sistema", "s"), ("usuario", "primera")])
        antes = modelo.usage
        with pytest.raises(ErrorDelModelo) as info:
            modelo(M)
    assert info.value.estado == 200 and falta in str(info.value)
    assert "no es una respuesta de la API de Messages" in str(info.value)
    assert modelo.usage == antes


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


# --- Un cuerpo parado tras sus cabeceras --------------------------------------------------------

@pytest.mark.parametrize("cuerpo", [0.3, None])
def test_un_cuerpo_parado_tras_las_cabeceras_se_corta_a_los_segundos_de_cuerpo(cuerpo):
    """El servidor manda las cabeceras y medio cuerpo, y se calla 30 s. Con `cuerpo=0.3`, el
    adaptador deja de esperar a los 0,3 s de las cabeceras y lo dice. La variante ingenua (sin
    `cuerpo`, solo la espera de la petición entera) espera los 3 s de `espera` enteros."""
    with ServidorEnsayo(0, fallos=Fallos("a_medias", lento_s=30)) as servidor:
        inicio = time.monotonic()
        with pytest.raises(ErrorDelModelo) as info:
            ModeloAPI("guion:eco", url=servidor.url, espera=3, cuerpo=cuerpo)(M)
        tardo = time.monotonic() - inicio
    assert (info.value.estado, info.value.causa) == (None, "tiempo")
    if cuerpo is not None:
        assert "el cuerpo no ha llegado entero en los 0.3 s que tiene después de ellas" in str(info.value)
    else:
        assert tardo >= 3 and "cabeceras" not in str(info.value)


def test_un_cuerpo_que_llega_entero_no_nota_el_limite_del_cuerpo(servidor):
    bloques = ModeloAPI("guion:eco", url=servidor.url, cuerpo=0.5)(M)
    assert bloques == Ensayo().responder(peticion(M, (), "guion:eco"))["content"]
