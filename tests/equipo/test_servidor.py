"""El servidor de ensayo: el motor (`curso.ensayo.motor`) y el HTTP de verdad, con urllib.

Cada invariante tiene su test. Donde el invariante es sutil (la caché, las parejas
`tool_use`/`tool_result`) hay además un test que pone una variante ingenua del motor y
comprueba que la misma comprobación la detecta: así sabemos que la comprobación puede fallar.
"""
import copy
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import tracemalloc
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curso import __main__ as cli
from curso.ensayo import guiones, motor, tokens
from curso.ensayo import servidor as modulo_servidor
from curso.ensayo.motor import Ensayo, ErrorPeticion, segundos_modelados, trocear_peticion
from curso.ensayo.servidor import CABECERA_SEGUNDOS, PUERTO_POR_DEFECTO, ServidorEnsayo

HERRAMIENTAS = [
    {"name": "leer", "description": "Lee un fichero del proyecto.",
     "input_schema": {"type": "object", "properties": {"ruta": {"type": "string"}}}},
    {"name": "ejecutar", "description": "Ejecuta una orden.",
     "input_schema": {"type": "object", "properties": {"comando": {"type": "string"}}}},
]
TEXTO_LARGO = "La tortilla lleva huevos, patatas y cebolla.\n" * 40


def peticion(mensajes, modelo="guion:eco", max_tokens=64, **extra):
    return {"model": modelo, "max_tokens": max_tokens, "messages": mensajes, **extra}


def usuario(contenido):
    return {"role": "user", "content": contenido}


def asistente(contenido):
    return {"role": "assistant", "content": contenido}


def resultado(id, contenido):
    return {"type": "tool_result", "tool_use_id": id, "content": contenido}


def conversacion():
    """Una conversación válida de tres turnos: pregunta, llamada a `leer`, su observación."""
    return copy.deepcopy(peticion(
        [usuario("Lee las recetas, por favor."),
         asistente([guiones.texto("Voy a leerlas."), guiones.llamada("toolu_1", "leer", ruta="recetas.txt")]),
         usuario([resultado("toolu_1", "Tortilla: huevos, patatas, cebolla.")])],
        system="Eres un agente que arregla el recetario.", tools=HERRAMIENTAS))


def prefijo_comun(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def rechazo(ensayo, p, metodo="responder"):
    """El `ErrorPeticion` con que el motor rechaza `p` (AssertionError si la acepta)."""
    try:
        getattr(ensayo, metodo)(p)
    except ErrorPeticion as e:
        return e
    raise AssertionError("el motor ha aceptado una petición que debía rechazar")


# --- HTTP ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def servidor():
    s = ServidorEnsayo(0).arrancar()
    yield s
    s.parar()


def enviar(url, ruta="/v1/messages", cuerpo=None, crudo=None, metodo="POST", cabeceras=None):
    """(estado, cabeceras, cuerpo JSON) de una petición; el cuerpo debe ser JSON siempre."""
    datos = crudo if crudo is not None else (
        None if cuerpo is None else json.dumps(cuerpo).encode("utf-8"))
    solicitud = urllib.request.Request(url + ruta, data=datos, method=metodo,
                                       headers={"content-type": "application/json", **(cabeceras or {})})
    try:
        with urllib.request.urlopen(solicitud, timeout=10) as r:
            return r.status, r.headers, json.loads(r.read())
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers, json.loads(e.read())


def enviar_a_mano(servidor, lineas, cuerpo=b""):
    """Una petición escrita byte a byte (para cabeceras que urllib no dejaría enviar mal)."""
    with socket.create_connection(("127.0.0.1", servidor.puerto), timeout=10) as s:
        s.sendall("\r\n".join(lineas).encode("latin-1") + b"\r\n\r\n" + cuerpo)
        s.shutdown(socket.SHUT_WR)
        respuesta = http.client.HTTPResponse(s)
        respuesta.begin()
        return respuesta.status, json.loads(respuesta.read())


def es_error(cuerpo, tipo=None):
    """¿Tiene `cuerpo` la forma de error de Anthropic, con un mensaje de verdad?"""
    return (isinstance(cuerpo, dict) and set(cuerpo) == {"type", "error"} and cuerpo["type"] == "error"
            and isinstance(cuerpo["error"], dict) and set(cuerpo["error"]) == {"type", "message"}
            and (tipo is None or cuerpo["error"]["type"] == tipo)
            and isinstance(cuerpo["error"]["message"], str) and len(cuerpo["error"]["message"]) > 10)


# --- La ventana ------------------------------------------------------------------------------

def test_la_ventana_rechaza_lo_que_no_cabe_y_nombra_los_numeros():
    ensayo = Ensayo()
    p = peticion([usuario(TEXTO_LARGO)])
    entrada = ensayo.contar(p)
    p["max_tokens"] = ensayo.ventana - entrada + 1
    e = rechazo(ensayo, p)
    assert (e.estado, e.tipo) == (400, "invalid_request_error")
    for numero in (entrada, p["max_tokens"], entrada + p["max_tokens"], ensayo.ventana):
        assert str(numero) in e.mensaje


def test_justo_en_el_limite_de_la_ventana_cabe():
    ensayo = Ensayo(ventana=1000)
    p = peticion([usuario(TEXTO_LARGO)])
    p["max_tokens"] = 1000 - ensayo.contar(p)
    uso = ensayo.responder(p)["usage"]
    assert uso["input_tokens"] + uso["cache_read_input_tokens"] + p["max_tokens"] == 1000


def test_la_ventana_se_comprueba_por_http_con_un_400(servidor):
    p = peticion([usuario(TEXTO_LARGO * 5)], max_tokens=6000)
    _, _, contado = enviar(servidor.url, "/v1/messages/count_tokens", p)
    estado, _, cuerpo = enviar(servidor.url, cuerpo=p)
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")
    assert str(contado["input_tokens"]) in cuerpo["error"]["message"]
    assert str(contado["input_tokens"] + 6000) in cuerpo["error"]["message"]


# --- La caché --------------------------------------------------------------------------------

def comprobar_cache_al_anadir_turnos(ensayo):
    corta = peticion([usuario("Lee las recetas, por favor.")], system="Eres un agente.", tools=HERRAMIENTAS)
    larga = dict(corta, messages=corta["messages"] + [asistente("Ya las he leído."), usuario("¿Y ahora?")])
    ensayo.responder(corta)
    uso = ensayo.responder(larga)["usage"]
    assert uso["cache_read_input_tokens"] == ensayo.contar(corta)
    assert uso["input_tokens"] == ensayo.contar(larga) - ensayo.contar(corta)


def comprobar_cache_al_cambiar_un_mensaje_temprano(ensayo):
    antes = conversacion()
    despues = conversacion()
    despues["messages"][0]["content"] = "Primero lee el recetario."
    ensayo.responder(antes)
    uso = ensayo.responder(despues)["usage"]
    compartido = prefijo_comun(trocear_peticion(antes), trocear_peticion(despues))
    primer_mensaje = ensayo.contar(dict(antes, messages=antes["messages"][:1]))
    assert compartido < primer_mensaje  # la caché cae: nada de lo que viene detrás se reutiliza
    assert uso["cache_read_input_tokens"] == compartido
    assert uso["input_tokens"] == ensayo.contar(despues) - compartido


def test_al_anadir_turnos_la_peticion_anterior_entera_esta_en_cache():
    comprobar_cache_al_anadir_turnos(Ensayo())


def test_si_cambia_un_mensaje_temprano_la_cache_cae_hasta_ahi():
    comprobar_cache_al_cambiar_un_mensaje_temprano(Ensayo())


def test_una_cache_ingenua_no_pasa_la_comprobacion(monkeypatch):
    # Ingenua: da por hecho que la petición anterior siempre es prefijo de la nueva.
    monkeypatch.setattr(motor, "_prefijo_comun", lambda a, b: min(len(a), len(b)))
    comprobar_cache_al_anadir_turnos(Ensayo())  # este caso no la distingue...
    with pytest.raises(AssertionError):
        comprobar_cache_al_cambiar_un_mensaje_temprano(Ensayo())  # ...este sí


def test_la_primera_peticion_no_tiene_nada_en_cache():
    ensayo = Ensayo()
    uso = ensayo.responder(conversacion())["usage"]
    assert uso["cache_read_input_tokens"] == 0
    assert uso["input_tokens"] == ensayo.contar(conversacion())
    assert uso["cache_creation_input_tokens"] == 0


def test_solo_las_peticiones_contestadas_cambian_la_cache():
    ensayo = Ensayo()
    primera = conversacion()
    ensayo.responder(primera)
    rechazada = peticion([usuario(TEXTO_LARGO * 10)], system="Otra cosa.", max_tokens=8000)
    rechazo(ensayo, rechazada)
    siguiente = dict(primera, messages=primera["messages"] + [asistente("Hecho."), usuario("Gracias.")])
    assert ensayo.responder(siguiente)["usage"]["cache_read_input_tokens"] == ensayo.contar(primera)


def test_contar_no_toca_la_cache():
    ensayo = Ensayo()
    primera = conversacion()
    ensayo.responder(primera)
    ensayo.contar(peticion([usuario("Algo que no tiene nada que ver.")]))
    uso = ensayo.responder(primera)["usage"]
    assert uso["cache_read_input_tokens"] == ensayo.contar(primera)


def test_la_cache_funciona_igual_por_http():
    with ServidorEnsayo(0) as servidor:
        corta = conversacion()
        larga = dict(corta, messages=corta["messages"] + [asistente("Listo."), usuario("Sigue.")])
        enviar(servidor.url, cuerpo=corta)
        _, _, cuerpo = enviar(servidor.url, cuerpo=larga)
        _, _, contada = enviar(servidor.url, "/v1/messages/count_tokens", corta)
    assert cuerpo["usage"]["cache_read_input_tokens"] == contada["input_tokens"]


def test_con_varios_hilos_cada_uso_suma_el_tamano_de_su_peticion(servidor):
    peticiones = [peticion([usuario("Petición número %d. " % i + "hola " * i)]) for i in range(12)]
    usos, errores = [None] * len(peticiones), []

    def lanzar(i):
        try:
            estado, _, cuerpo = enviar(servidor.url, cuerpo=peticiones[i])
            assert estado == 200
            usos[i] = cuerpo["usage"]
        except Exception as e:  # se comprueba fuera del hilo
            errores.append(e)

    hilos = [threading.Thread(target=lanzar, args=(i,)) for i in range(len(peticiones))]
    for h in hilos:
        h.start()
    for h in hilos:
        h.join()
    assert errores == []
    for p, uso in zip(peticiones, usos, strict=True):
        assert uso["input_tokens"] + uso["cache_read_input_tokens"] == servidor.ensayo.contar(p)


# --- tool_use y tool_result ------------------------------------------------------------------

def comprobar_parejas(ensayo):
    # La observación de toolu_1 llega, pero no en el mensaje siguiente: la API lo rechaza.
    p = peticion([usuario("Lee las recetas."),
                  asistente([guiones.llamada("toolu_1", "leer", ruta="recetas.txt")]),
                  usuario("Espera un momento."),
                  asistente("Vale."),
                  usuario([resultado("toolu_1", "Tortilla.")])], tools=HERRAMIENTAS)
    e = rechazo(ensayo, p)
    assert e.estado == 400 and "messages.1" in e.mensaje and "toolu_1" in e.mensaje


def test_un_tool_use_sin_tool_result_justo_despues_es_un_400():
    comprobar_parejas(Ensayo())


def test_una_comprobacion_de_parejas_ingenua_no_pasa(monkeypatch):
    def ingenua(mensajes):  # basta con que la observación llegue en algún momento
        contestados = {b["tool_use_id"] for m in mensajes for b in guiones.bloques(m["content"])
                       if b["type"] == "tool_result"}
        for m in mensajes:
            for b in guiones.bloques(m["content"]):
                if b["type"] == "tool_use" and b["id"] not in contestados:
                    raise motor._invalida("falta el tool_result de %s" % b["id"])

    monkeypatch.setattr(motor, "_validar_parejas", ingenua)
    with pytest.raises(AssertionError):
        comprobar_parejas(Ensayo())


def test_un_tool_use_en_el_ultimo_mensaje_sin_respuesta_es_un_400():
    p = conversacion()
    p["messages"] = p["messages"][:2]
    e = rechazo(Ensayo(), p)
    assert e.estado == 400 and "messages.1" in e.mensaje and "toolu_1" in e.mensaje


def test_un_tool_result_sin_su_tool_use_es_un_400():
    p = conversacion()
    p["messages"][2]["content"].append(resultado("toolu_fantasma", "nada"))
    e = rechazo(Ensayo(), p)
    assert e.estado == 400 and "toolu_fantasma" in e.mensaje and "messages.2" in e.mensaje


def test_sin_tool_use_por_http_el_400_tiene_la_forma_de_anthropic(servidor):
    p = conversacion()
    p["messages"] = p["messages"][:2]
    estado, _, cuerpo = enviar(servidor.url, cuerpo=p)
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")
    assert "toolu_1" in cuerpo["error"]["message"]


def test_tool_choice_y_otros_campos_se_ignoran():
    base = peticion([usuario("Lee las recetas.")], modelo="guion:herramienta", tools=HERRAMIENTAS)
    con_extras = dict(base, tool_choice={"type": "tool", "name": "ejecutar"}, temperature=0.2,
                      metadata={"user_id": "alumno"}, top_k=5)
    sin, con = Ensayo().responder(base), Ensayo().responder(con_extras)
    assert con["content"] == sin["content"] and con["stop_reason"] == sin["stop_reason"]
    assert con["usage"] == sin["usage"]


def test_una_stop_sequence_que_aparece_corta_ahi_y_lo_dice_stop_reason():
    """Como la API: el texto llega hasta la secuencia, sin ella, con `stop_reason`
    "stop_sequence" y la secuencia en `stop_sequence`. La primera que aparece es la que para."""
    p = peticion([usuario("uno dos tres cuatro")], stop_sequences=["tres", " dos"])
    r = Ensayo().responder(p)
    assert r["content"] == [guiones.texto("uno")]
    assert (r["stop_reason"], r["stop_sequence"]) == ("stop_sequence", " dos")
    sin = Ensayo().responder(peticion([usuario("uno dos tres cuatro")], stop_sequences=["cinco"]))
    assert (sin["stop_reason"], sin["stop_sequence"]) == ("end_turn", None)


def test_max_tokens_0_no_escribe_nada():
    """La API admite `max_tokens: 0` (calienta la caché sin generar): una respuesta vacía."""
    r = Ensayo().responder(peticion([usuario("hola")], max_tokens=0))
    assert (r["content"], r["stop_reason"], r["usage"]["output_tokens"]) == ([], "max_tokens", 0)


def test_una_llamada_cortada_por_max_tokens_llega_a_medias_con_su_stop_reason():
    """Con `max_tokens` justo para el nombre y el primer argumento, el `tool_use` llega con la
    entrada que cupo (la API dice que llega incompleto), y `stop_reason` es "max_tokens": quien la
    ejecutara tal cual leería desde el principio, no desde la línea 40."""
    herramienta = [{"name": "leer", "input_schema": HERRAMIENTAS[0]["input_schema"]}]
    entera = {"type": "tool_use", "id": "toolu_1", "name": "leer", "input": {"ruta": "recetas.txt", "desde": 40}}
    costes = [motor._coste({**entera, "input": dict(list(entera["input"].items())[:n])}) for n in range(3)]
    cortada = motor._recortar([entera], [costes[2]], costes[1])
    assert cortada == [{**entera, "input": {"ruta": "recetas.txt"}}]
    assert motor._recortar([entera], [costes[2]], costes[0] - 1) == []  # ni la llamada vacía cabe
    r = Ensayo().responder(peticion([usuario("Lee.")], modelo="guion:herramienta", max_tokens=14,
                                    tools=herramienta))
    assert r["stop_reason"] == "max_tokens" and r["content"][-1]["type"] == "tool_use"


# --- Peticiones mal formadas -----------------------------------------------------------------

def quitar(campo):
    def cambiar(p):
        del p[campo]
    return cambiar


def poner(campo, valor):
    def cambiar(p):
        p[campo] = valor
    return cambiar


def en_mensaje(i, mensaje):
    def cambiar(p):
        p["messages"][i] = mensaje
    return cambiar


MAL_FORMADAS = [
    (quitar("model"), "model"),
    (poner("model", ""), "model"),
    (poner("model", 7), "model"),
    (quitar("max_tokens"), "max_tokens"),
    (poner("max_tokens", "100"), "max_tokens"),
    (poner("max_tokens", True), "max_tokens"),
    (poner("max_tokens", -1), "max_tokens"),
    (poner("max_tokens", 1.5), "max_tokens"),
    (poner("max_tokens", 10 ** 30), "max_tokens"),
    (quitar("messages"), "messages"),
    (poner("messages", []), "messages"),
    (poner("messages", "hola"), "messages"),
    (poner("stream", True), "stream"),
    (poner("system", 5), "system"),
    (poner("system", [{"type": "image"}]), "system.0"),
    (poner("tools", {"leer": {}}), "tools"),
    (poner("tools", [{"name": "leer"}]), "tools.0.input_schema"),
    (poner("tools", HERRAMIENTAS + HERRAMIENTAS[:1]), "tools.2.name"),
    (en_mensaje(0, "hola"), "messages.0"),
    (en_mensaje(0, {"role": "system", "content": "hola"}), "messages.0.role"),
    (en_mensaje(0, {"role": "user"}), "content"),
    (en_mensaje(0, asistente("empiezo yo")), "messages.0"),
    (en_mensaje(0, usuario([{"type": "image", "source": {}}])), "messages.0.content.0.type"),
    (en_mensaje(0, usuario([{"type": "text"}])), "messages.0.content.0.text"),
    (en_mensaje(0, usuario([guiones.llamada("toolu_9", "leer")])), "messages.0.content.0"),
    (en_mensaje(1, asistente([resultado("toolu_1", "x")])), "messages.1.content.0"),
    (en_mensaje(1, asistente([{"type": "tool_use", "id": "toolu_1", "name": "leer", "input": "recetas"}])),
     "messages.1.content.0.input"),
    (en_mensaje(2, usuario([{"type": "tool_result", "tool_use_id": "toolu_1", "content": 3}])),
     "messages.2.content.0.content"),
    (en_mensaje(2, usuario([{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": "sí"}])),
     "messages.2.content.0.is_error"),
    # Las reglas de la documentación de la API que el de ensayo comprueba desde la issue 42
    # (cada una, con su página, en los CASOS de curso/modelo/comparar_servidores.py).
    (poner("temperature", 1.5), "temperature"),
    (poner("temperature", "0"), "temperature"),
    (poner("stop_sequences", "fin"), "stop_sequences"),
    (poner("stop_sequences", [1]), "stop_sequences"),
    (poner("tools", [{"name": "leer fichero", "input_schema": {"type": "object"}}]), "tools.0.name"),
    (poner("tools", [{"name": "leer", "input_schema": {"type": "objeto"}}]), "tools.0.input_schema.type"),
    (poner("tools", [{"name": "leer", "input_schema": {"type": "object", "required": "ruta"}}]),
     "tools.0.input_schema.required"),
    (poner("tools", [{"name": "leer", "input_schema": {"type": "string"}}]), "tools.0.input_schema.type"),
    (poner("tool_choice", {"type": "obligatoria"}), "tool_choice"),
    (poner("tool_choice", {"type": "tool"}), "tool_choice.name"),
    (en_mensaje(2, usuario([{"type": "text", "text": "aquí va"}, resultado("toolu_1", "x")])),
     "messages.2.content.1"),
]


@pytest.mark.parametrize("cambiar,campo", MAL_FORMADAS, ids=[c for _, c in MAL_FORMADAS])
def test_una_peticion_mal_formada_es_un_400_que_nombra_el_campo(cambiar, campo):
    p = conversacion()
    cambiar(p)
    e = rechazo(Ensayo(), p)
    assert (e.estado, e.tipo) == (400, "invalid_request_error")
    assert campo in e.mensaje
    assert e.cuerpo() == {"type": "error", "error": {"type": "invalid_request_error", "message": e.mensaje}}


def test_stream_true_se_rechaza_diciendo_por_que():
    e = rechazo(Ensayo(), dict(conversacion(), stream=True))
    assert "stream" in e.mensaje and "no admite" in e.mensaje


def test_count_tokens_no_pide_max_tokens_pero_si_lo_demas():
    p = conversacion()
    del p["max_tokens"]
    assert Ensayo().contar(p) > 0
    del p["messages"]
    assert "messages" in rechazo(Ensayo(), p, "contar").mensaje


@pytest.mark.parametrize("crudo", [b"{", b"", b"\xff\xfe{}", b"[1, 2]", b"null", b"1" * 5000, b"[" * 100000],
                         ids=["json-cortado", "vacio", "no-utf8", "lista", "null", "numero-enorme", "anidado"])
def test_un_cuerpo_que_no_es_un_objeto_json_es_un_400(servidor, crudo):
    estado, cabeceras, cuerpo = enviar(servidor.url, crudo=crudo)
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")
    assert cabeceras["Content-Type"] == "application/json"


@pytest.mark.parametrize("longitud", [None, "abc", "-5"])
def test_un_content_length_ausente_o_invalido_es_un_400(servidor, longitud):
    lineas = ["POST /v1/messages HTTP/1.1", "Host: 127.0.0.1"]
    if longitud is not None:
        lineas.append("Content-Length: " + longitud)
    estado, cuerpo = enviar_a_mano(servidor, lineas, b"{}")
    assert estado == 400 and "Content-Length" in cuerpo["error"]["message"]


def test_una_linea_de_peticion_rota_recibe_un_400_en_json(servidor):
    estado, cuerpo = enviar_a_mano(servidor, ["ESTO NO ES HTTP"])
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")


def test_un_cuerpo_mas_corto_que_su_content_length_es_un_400(servidor):
    lineas = ["POST /v1/messages HTTP/1.1", "Host: 127.0.0.1", "Content-Length: 100"]
    estado, cuerpo = enviar_a_mano(servidor, lineas, b'{"model": "guion:eco"}')
    assert estado == 400 and "incompleto" in cuerpo["error"]["message"]


def test_un_modelo_desconocido_es_un_404_que_lista_los_guiones(servidor):
    estado, _, cuerpo = enviar(servidor.url, cuerpo=dict(conversacion(), model="claude-sonnet"))
    assert estado == 404 and es_error(cuerpo, "not_found_error")
    for nombre in guiones.GUIONES:
        assert "guion:" + nombre in cuerpo["error"]["message"]


@pytest.mark.parametrize("metodo,ruta", [("POST", "/v1/complete"), ("POST", "/"), ("GET", "/v1/messages"),
                                         ("DELETE", "/v1/messages"), ("GET", "/v1/models")])
def test_una_ruta_desconocida_es_un_404_con_cuerpo_de_anthropic(servidor, metodo, ruta):
    estado, _, cuerpo = enviar(servidor.url, ruta, cuerpo={} if metodo == "POST" else None, metodo=metodo)
    assert estado == 404 and es_error(cuerpo, "not_found_error")
    assert "/v1/messages" in cuerpo["error"]["message"]


# --- Lo que puede costar una petición: bytes, elementos, cifras y tiempo -----------------------

MB = 1024 * 1024


@pytest.mark.parametrize("longitud", ["²", "³", "¹", "1²"])
def test_un_content_length_con_cifras_que_no_son_ascii_es_un_400(servidor, longitud):
    # str.isdigit() las acepta; int() no, y HTTP solo admite cifras ASCII.
    lineas = ["POST /v1/messages HTTP/1.1", "Host: 127.0.0.1", "Content-Length: " + longitud]
    estado, cuerpo = enviar_a_mano(servidor, lineas, b"{}")
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")
    assert "Content-Length" in cuerpo["error"]["message"]


def test_un_content_length_de_miles_de_cifras_es_un_413(servidor):
    lineas = ["POST /v1/messages HTTP/1.1", "Host: 127.0.0.1", "Content-Length: " + "1" * 5000]
    estado, cuerpo = enviar_a_mano(servidor, lineas, b"{}")
    assert estado == 413 and es_error(cuerpo, "request_too_large")
    assert str(modulo_servidor.TAMANO_MAXIMO) in cuerpo["error"]["message"]


def test_un_cuerpo_de_50_mb_recibe_un_413_que_el_cliente_puede_leer(servidor):
    # El cliente no lee la respuesta hasta haber enviado el cuerpo entero: si el servidor cierra
    # sin leerlo, el cliente se encuentra la conexión rota (BrokenPipe) y no ve el 413.
    estado, cabeceras, cuerpo = enviar(servidor.url, crudo=b" " * (50 * MB))
    assert estado == 413 and es_error(cuerpo, "request_too_large")
    assert str(modulo_servidor.TAMANO_MAXIMO) in cuerpo["error"]["message"]
    assert enviar(servidor.url, cuerpo=peticion([usuario("sigo aquí")]))[0] == 200


def test_un_cuerpo_de_10_mb_de_objetos_vacios_es_un_413(servidor):
    crudo = b"[" + b",".join([b"{}"] * (10 * MB // 3)) + b"]"
    estado, _, cuerpo = enviar(servidor.url, crudo=crudo)
    assert estado == 413 and es_error(cuerpo, "request_too_large")


def test_un_cuerpo_pequeno_con_demasiados_elementos_es_un_413_sin_leerlo(servidor, monkeypatch):
    # Cada `{}` son 3 bytes de texto y unos 64 de memoria una vez leído: el límite de bytes no
    # basta. Se rechaza antes de leer el JSON (json.loads no llega a llamarse).
    maximo = modulo_servidor.ELEMENTOS_MAXIMOS
    crudo = b"[" + b",".join([b"{}"] * (maximo + 1)) + b"]"
    assert len(crudo) < modulo_servidor.TAMANO_MAXIMO
    leidos = []
    monkeypatch.setattr(modulo_servidor, "_leer_json", lambda *a, **k: leidos.append(1))
    estado, _, cuerpo = enviar(servidor.url, crudo=crudo)
    assert estado == 413 and es_error(cuerpo, "request_too_large")
    assert str(maximo) in cuerpo["error"]["message"] and leidos == []


def test_una_peticion_grande_del_curso_cabe_en_los_limites(servidor):
    # La medición del servidor envía peticiones de 8000 tokens: deben seguir llegando al motor.
    from curso.medir.velocidad_del_servidor import _peticion, _texto_de
    p = _peticion(0, _texto_de(8000))
    estado, _, cuerpo = enviar(servidor.url, "/v1/messages/count_tokens", p)
    assert estado == 200 and cuerpo["input_tokens"] > 7000


def test_un_numero_de_miles_de_cifras_es_un_400_en_castellano(servidor):
    crudo = b'{"model": "guion:eco", "max_tokens": ' + b"7" * 5000 + b', "messages": []}'
    estado, _, cuerpo = enviar(servidor.url, crudo=crudo)
    mensaje = cuerpo["error"]["message"]
    assert estado == 400 and es_error(cuerpo, "invalid_request_error")
    assert "5000 cifras" in mensaje
    assert not any(palabra in mensaje for palabra in ("Exceeds", "limit", "digits", "integer"))


def test_una_peticion_que_no_cabe_se_cuenta_sin_guardar_todos_sus_tokens():
    # Cada token guardado es un objeto de unos 50 bytes: guardarlos todos costaría unas 20 veces
    # lo que ocupa el texto. Contar (y rechazar) no necesita guardarlos.
    texto = "ab " * 350_000
    p = peticion([usuario(texto)], max_tokens=10)
    for hacer in (Ensayo().contar, lambda p: rechazo(Ensayo(), p)):
        tracemalloc.start()
        try:
            hacer(p)
            pico = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert pico < 5 * len(texto)


@given(texto=st.text(max_size=200), tope=st.integers(0, 250))
def test_trocear_hasta_da_los_mismos_tokens_y_la_misma_cuenta(texto, tope):
    todos = tokens.trocear(texto)
    assert tokens.trocear_hasta(texto, tope) == (todos[:tope], len(todos))
    assert tokens.contar(texto) == len(todos)


@pytest.mark.parametrize("crudo", [b"{", b"", b'{"a" 1}', b'{"a": 1 "b": 2}', b'"abc', b'"a\x01"',
                                   b'"\\x"', b'"\\u12"', b"{} {}", b"[1,]"])
def test_el_motivo_de_un_json_roto_va_en_castellano(servidor, crudo):
    estado, _, cuerpo = enviar(servidor.url, crudo=crudo)
    mensaje = cuerpo["error"]["message"]
    assert estado == 400 and "no es JSON válido" in mensaje
    assert not any(palabra in mensaje for palabra in ("Expecting", "Invalid", "Unterminated", "Extra"))
    assert "no se puede leer" not in mensaje  # cada uno de estos tiene su motivo


ESPERA_CORTA = 0.5  # segundos: lo que espera a un cliente parado el servidor de estos tests


def test_una_conexion_parada_a_media_peticion_recibe_un_408_y_se_cierra():
    with ServidorEnsayo(0, espera=ESPERA_CORTA) as servidor:
        with socket.create_connection(("127.0.0.1", servidor.puerto), timeout=10) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
                      b'{"model": ')
            respuesta = http.client.HTTPResponse(s)
            respuesta.begin()
            cuerpo = json.loads(respuesta.read())
            assert respuesta.status == 408 and es_error(cuerpo)
            assert s.recv(1) == b""  # y la conexión está cerrada


def test_una_conexion_parada_en_las_cabeceras_se_cierra():
    with ServidorEnsayo(0, espera=ESPERA_CORTA) as servidor:
        with socket.create_connection(("127.0.0.1", servidor.puerto), timeout=10) as s:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # falta la línea en blanco
            assert s.recv(1) == b""


# --- Los guiones, con lo que un alumno puede mandarles ------------------------------------------

@pytest.mark.parametrize("modelo", ["guion:arregla", "guion:compacta"])
def test_un_id_de_miles_de_cifras_no_cuenta_como_turno_del_guion(servidor, modelo):
    def tras_una_llamada(id):
        return peticion([usuario("Los tests fallan."),
                         asistente([guiones.llamada(id, "ejecutar", comando="python3 -m unittest")]),
                         usuario([resultado(id, "FAILED (failures=2, errors=3)")])],
                        modelo=modelo, max_tokens=1024, tools=HERRAMIENTAS)

    estado, _, enorme = enviar(servidor.url, cuerpo=tras_una_llamada("toolu_ensayo_%s_0" % ("9" * 5000)))
    assert estado == 200, enorme
    # Ese id no lo pudo dar el guion: cuenta lo mismo que el de otro modelo.
    _, _, ajeno = enviar(servidor.url, cuerpo=tras_una_llamada("toolu_otro_0"))
    assert enorme["content"] == ajeno["content"]


def el_incidente(**cambios):
    """{ruta: texto} de los ficheros de curso/material/datos/incidente/, con `cambios` ({ruta: texto})."""
    from curso.material.delegacion import INCIDENTE
    ficheros = {p.relative_to(INCIDENTE).as_posix(): p.read_text(encoding="utf-8")
                for p in INCIDENTE.rglob("*") if p.is_file()}
    return {**ficheros, **cambios}


def observador(ficheros):
    """Contesta `leer` y `buscar` como las herramientas de la lección 05 («fichero:línea: texto»)."""
    def observar(nombre, entrada):
        if nombre == "leer":
            return ficheros.get(entrada["ruta"], "no existe %s" % entrada["ruta"])
        if nombre == "buscar":
            carpeta = entrada.get("ruta", ".").rstrip("/") + "/"
            return "\n".join("%s:%d: %s" % (ruta, n, linea) for ruta in sorted(ficheros)
                             if ruta.startswith(carpeta)
                             for n, linea in enumerate(ficheros[ruta].split("\n"), 1)
                             if re.search(entrada["patron"], linea))
        return "no tienes la herramienta %s" % nombre
    return observar


def conducir(url, modelo, observar, tope=12):
    """La última respuesta de `modelo` por HTTP, contestando cada llamada con `observar`."""
    mensajes = [usuario("La API no llega a su base de datos. Investiga por qué.")]
    for _ in range(tope):
        estado, _, r = enviar(url, cuerpo=peticion(mensajes, modelo=modelo, max_tokens=1024, tools=HERRAMIENTAS))
        assert estado == 200, r
        llamadas = [b for b in r["content"] if b["type"] == "tool_use"]
        if not llamadas:
            return r
        mensajes += [asistente(r["content"]),
                     usuario([resultado(b["id"], observar(b["name"], b["input"])) for b in llamadas])]
    raise AssertionError("el guion no ha terminado en %d turnos" % tope)


@pytest.mark.parametrize("modelo", ["guion:hijo-config", "guion:solo"])
def test_un_puerto_de_dos_cifras_en_la_configuracion_sale_en_la_entrega(servidor, modelo):
    # Lo que ve un alumno que edita config/db.toml del incidente y pone el puerto 80.
    config = el_incidente()["config/db.toml"].replace("puerto = 5432", "puerto = 80")
    assert "puerto = 80" in config
    numero = next(n for n, linea in enumerate(config.split("\n"), 1) if linea.startswith("puerto"))
    final = conducir(servidor.url, modelo, observador(el_incidente(**{"config/db.toml": config})))
    entrega = json.loads(final["content"][0]["text"])
    pareja = ("La base de datos escucha en el puerto 80: «puerto = 80»", "config/db.toml:%d" % numero)
    assert pareja in list(zip(entrega["hallazgos"], entrega["referencias"], strict=True))


@pytest.mark.parametrize("modelo", ["guion:hijo-logs", "guion:solo"])
def test_un_puerto_de_dos_cifras_en_el_registro_sale_en_la_entrega(servidor, modelo):
    registro = el_incidente()["logs/api.log"].replace("db:5433", "db:80")
    final = conducir(servidor.url, modelo, observador(el_incidente(**{"logs/api.log": registro})))
    hallazgos = json.loads(final["content"][0]["text"])["hallazgos"]
    assert any("en el puerto 80: «connect to db:80 failed" in h for h in hallazgos), hallazgos


# --- Cuerpos aleatorios: nunca un 500 --------------------------------------------------------

VALORES_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda hijos: st.lists(hijos, max_size=4) | st.dictionaries(st.text(max_size=8), hijos, max_size=4),
    max_leaves=12)
CAMPOS = ["model", "max_tokens", "messages", "system", "tools", "stream", "tool_choice"]
CUERPOS_CASI = st.dictionaries(st.sampled_from(CAMPOS), VALORES_JSON | st.sampled_from(["guion:eco", 5]))
RUTAS = st.sampled_from(["/v1/messages", "/v1/messages/count_tokens"])


def rutas_de(valor, camino=()):
    """Todos los caminos (claves e índices) dentro de `valor`."""
    yield camino
    if isinstance(valor, dict):
        for k, v in valor.items():
            yield from rutas_de(v, camino + (k,))
    elif isinstance(valor, list):
        for i, v in enumerate(valor):
            yield from rutas_de(v, camino + (i,))


CAMINOS = [c for c in rutas_de(conversacion()) if c]


def comprobar_respuesta(estado, cuerpo, ruta):
    assert estado == 200 or 400 <= estado < 500, (estado, cuerpo)
    if estado == 200:
        assert cuerpo.get("type") == "message" if ruta == "/v1/messages" else "input_tokens" in cuerpo
    else:
        assert es_error(cuerpo), cuerpo


AJUSTES = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@AJUSTES
@given(cuerpo=VALORES_JSON | CUERPOS_CASI, ruta=RUTAS)
def test_ningun_cuerpo_json_aleatorio_da_un_500(servidor, cuerpo, ruta):
    estado, _, respuesta = enviar(servidor.url, ruta, cuerpo)
    comprobar_respuesta(estado, respuesta, ruta)


@AJUSTES
@given(camino=st.sampled_from(CAMINOS), valor=VALORES_JSON, borrar=st.booleans(), ruta=RUTAS)
def test_ninguna_mutacion_de_una_peticion_valida_da_un_500(servidor, camino, valor, borrar, ruta):
    p = conversacion()
    padre = p
    for paso in camino[:-1]:
        padre = padre[paso]
    if borrar:
        del padre[camino[-1]]
    else:
        padre[camino[-1]] = valor
    estado, _, respuesta = enviar(servidor.url, ruta, p)
    comprobar_respuesta(estado, respuesta, ruta)


@settings(max_examples=60, deadline=None)
@given(crudo=st.binary(max_size=64))
def test_ningun_cuerpo_de_bytes_aleatorios_da_un_500(servidor, crudo):
    estado, _, respuesta = enviar(servidor.url, crudo=crudo)
    comprobar_respuesta(estado, respuesta, "/v1/messages")


# --- Respuestas ------------------------------------------------------------------------------

def test_la_misma_peticion_da_la_misma_respuesta_tambien_tras_reiniciar():
    cuerpos = []
    for _ in range(2):
        with ServidorEnsayo(0) as servidor:
            cuerpos.append(enviar(servidor.url, cuerpo=conversacion())[2])
    assert cuerpos[0] == cuerpos[1]
    assert Ensayo().responder(conversacion()) == Ensayo().responder(conversacion())


def test_un_reintento_repite_id_y_contenido():
    ensayo = Ensayo()
    primera, reintento = ensayo.responder(conversacion()), ensayo.responder(conversacion())
    assert (primera["id"], primera["content"]) == (reintento["id"], reintento["content"])
    otra = ensayo.responder(peticion([usuario("Otra cosa.")]))
    assert otra["id"] != primera["id"]


def test_la_respuesta_tiene_la_forma_de_la_api(servidor):
    estado, cabeceras, cuerpo = enviar(servidor.url, cuerpo=peticion([usuario("hola")]),
                                       cabeceras={"anthropic-version": "2023-06-01", "x-api-key": "ensayo"})
    assert estado == 200
    assert cabeceras["Content-Type"] == "application/json" and cabeceras["request-id"]
    assert set(cuerpo) == {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
    assert (cuerpo["type"], cuerpo["role"], cuerpo["model"]) == ("message", "assistant", "guion:eco")
    assert set(cuerpo["usage"]) == {"input_tokens", "output_tokens", "cache_read_input_tokens",
                                    "cache_creation_input_tokens"}


def test_el_eco_repite_y_termina_con_end_turn():
    r = Ensayo().responder(peticion([usuario("Hola, ¿qué tal?")]))
    assert r["content"] == [guiones.texto("Hola, ¿qué tal?")] and r["stop_reason"] == "end_turn"


def test_una_llamada_termina_con_tool_use_y_su_id_es_determinista():
    p = peticion([usuario("Lee.")], modelo="guion:herramienta", tools=HERRAMIENTAS)
    r = Ensayo().responder(p)
    llamadas = [b for b in r["content"] if b["type"] == "tool_use"]
    assert r["stop_reason"] == "tool_use"
    assert [(b["id"], b["name"]) for b in llamadas] == [(guiones.id_llamada(1), HERRAMIENTAS[0]["name"])]
    siguiente = dict(p, messages=p["messages"] + [asistente(r["content"]),
                                                  usuario([resultado(llamadas[0]["id"], "Tortilla.")])])
    final = Ensayo().responder(siguiente)
    assert final["stop_reason"] == "end_turn" and "Tortilla." in final["content"][0]["text"]


def test_output_tokens_crece_con_la_respuesta():
    corto = Ensayo().responder(peticion([usuario("hola")]))["usage"]["output_tokens"]
    largo = Ensayo().responder(peticion([usuario("hola " * 10)]))["usage"]["output_tokens"]
    assert largo - corto == 9 * (corto - 1)  # nueve «hola» más; el salto de línea final, una vez


def test_max_tokens_corta_la_salida_y_lo_dice_stop_reason():
    p = peticion([usuario(TEXTO_LARGO)], max_tokens=20)
    r = Ensayo().responder(p)
    assert r["stop_reason"] == "max_tokens"
    assert 0 < r["usage"]["output_tokens"] <= 20
    assert TEXTO_LARGO.startswith(r["content"][0]["text"]) and r["content"][0]["text"] != TEXTO_LARGO


def test_contar_es_lineal_en_el_texto():
    def contar(veces):  # «hola mundo. » se trocea igual repetido: no se funde con su vecino
        return Ensayo().contar(peticion([usuario("hola mundo. " * veces)]))
    uno, dos, cuatro = contar(1), contar(2), contar(4)
    assert cuatro - dos == 2 * (dos - uno)
    assert dos - uno > 0


def test_el_tiempo_modelado_reproduce_las_cifras_medidas():
    # Cifras de una ejecución real: 0,4 s por token generado con unos 1000 tokens en la
    # ventana, 1,6 s con unos 7000.
    assert segundos_modelados(0, 1000, 1) == pytest.approx(0.4, abs=0.01)
    assert segundos_modelados(0, 7000, 1) == pytest.approx(1.6, abs=0.01)
    assert segundos_modelados(1000, 1000, 1) > segundos_modelados(0, 1000, 1)  # calcular cuesta


def test_la_cabecera_de_tiempo_sale_de_usage(servidor):
    _, cabeceras, cuerpo = enviar(servidor.url, cuerpo=peticion([usuario(TEXTO_LARGO)]))
    uso = cuerpo["usage"]
    esperado = segundos_modelados(uso["input_tokens"], uso["input_tokens"] + uso["cache_read_input_tokens"],
                                  uso["output_tokens"])
    assert float(cabeceras[CABECERA_SEGUNDOS]) == pytest.approx(esperado, abs=0.005)


def test_el_servidor_no_escribe_nada_al_atender(servidor, capsys):
    enviar(servidor.url, cuerpo=conversacion())
    enviar(servidor.url, "/nada", {})
    enviar(servidor.url, crudo=b"{")
    enviar(servidor.url, cuerpo=dict(conversacion(), model="x"))
    assert capsys.readouterr() == ("", "")


# --- Guiones ---------------------------------------------------------------------------------

@pytest.fixture
def guion_temporal():
    nombres = []

    def registrar(nombre, funcion):
        nombres.append(nombre)
        return guiones.guion(nombre)(funcion)

    yield registrar
    for nombre in nombres:
        guiones.GUIONES.pop(nombre, None)


def test_un_guion_registrado_se_elige_por_model(guion_temporal):
    def saludo(p):
        return [guiones.texto("Hola, turno %d." % (guiones.turnos_asistente(p) + 1))]

    guion_temporal("prueba-saludo", saludo)
    r = Ensayo().responder(peticion([usuario("x"), asistente("y"), usuario("z")], modelo="guion:prueba-saludo"))
    assert r["content"] == [guiones.texto("Hola, turno 2.")]


def test_dos_guiones_distintos_no_pueden_llamarse_igual(guion_temporal):
    def uno(p):
        return [guiones.texto("uno")]

    def otro(p):
        return [guiones.texto("otro")]

    guion_temporal("prueba-repetido", uno)
    with pytest.raises(ValueError):
        guiones.guion("prueba-repetido")(otro)
    assert guiones.GUIONES["prueba-repetido"] is uno


def test_un_guion_roto_da_un_500_con_mensaje_y_sin_traza(servidor, guion_temporal, capsys):
    def roto(p):
        return 1 / 0

    guion_temporal("prueba-roto", roto)
    estado, _, cuerpo = enviar(servidor.url, cuerpo=peticion([usuario("x")], modelo="guion:prueba-roto"))
    assert estado == 500 and es_error(cuerpo, "api_error") and "prueba-roto" in cuerpo["error"]["message"]
    assert capsys.readouterr() == ("", "")


# --- La línea de órdenes ---------------------------------------------------------------------

def servidor_desde_la_linea_de_ordenes(*argumentos):
    return cli.main(["servidor", *argumentos])


def test_la_ayuda_de_la_linea_de_ordenes_esta_en_castellano(capsys):
    with pytest.raises(SystemExit) as salida:
        servidor_desde_la_linea_de_ordenes("--help")
    texto = capsys.readouterr().out
    assert salida.value.code == 0
    assert "uso:" in texto and "--puerto" in texto and str(PUERTO_POR_DEFECTO) in texto


def test_un_puerto_que_no_es_un_numero_es_un_error_en_castellano(capsys):
    with pytest.raises(SystemExit) as salida:
        servidor_desde_la_linea_de_ordenes("--puerto", "ocho")
    assert salida.value.code == 2 and "entero" in capsys.readouterr().err


def test_un_puerto_ocupado_se_dice_sin_traza(servidor, capsys):
    assert servidor_desde_la_linea_de_ordenes("--puerto", str(servidor.puerto)) == 1
    assert "--puerto" in capsys.readouterr().out


# Una terminal entrega Ctrl-C a su orden en primer plano, y esa orden empieza con SIGINT en su
# disposición por defecto. Quien lanza estos tests puede no estar en una terminal: una orden en
# segundo plano de un guion de shell (`.ci/run &`, nohup...) arranca con SIGINT ignorado, y cada
# proceso hijo hereda esa disposición. Python no instala su KeyboardInterrupt si SIGINT le llega
# ignorado, así que el servidor no se enteraría del Ctrl-C del test. Por eso el proceso del
# servidor pone lo que pondría la terminal antes de llamar a `main` de `python -m curso`.
LA_ORDEN_SERVIDOR = "from curso.__main__ import main; sys.exit(main(['servidor', *sys.argv[1:]]))"
COMO_DESDE_UNA_TERMINAL = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                           + LA_ORDEN_SERVIDOR)
CON_SIGINT_IGNORADO = "import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); " + LA_ORDEN_SERVIDOR


def lanzar_la_linea_de_ordenes(codigo, *argumentos):
    return subprocess.Popen([sys.executable, "-c", codigo, *argumentos], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def comprobar_que_atiende_hasta_ctrl_c():
    proceso = lanzar_la_linea_de_ordenes(COMO_DESDE_UNA_TERMINAL, "--puerto", "0", "--ventana", "4096")
    try:
        primera = proceso.stdout.readline()
        url = primera.split(" en ", 1)[1].split()[0]
        assert "4096" in primera
        assert "export ANTHROPIC_BASE_URL=" + url in proceso.stdout.readline() + proceso.stdout.readline()
        estado, _, _ = enviar(url, cuerpo=peticion([usuario("hola")]))
        assert estado == 200
        proceso.send_signal(signal.SIGINT)
        salida, errores = proceso.communicate(timeout=10)
    finally:
        if proceso.poll() is None:
            proceso.kill()
            proceso.wait()
    assert proceso.returncode == 0 and "parado" in salida and errores == ""


def test_la_linea_de_ordenes_atiende_hasta_ctrl_c():
    comprobar_que_atiende_hasta_ctrl_c()


def test_ctrl_c_la_para_aunque_los_tests_corran_con_sigint_ignorado():
    # Lo que pasó en CI: pytest corría en segundo plano, con SIGINT ignorado desde su arranque.
    anterior = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        comprobar_que_atiende_hasta_ctrl_c()
    finally:
        signal.signal(signal.SIGINT, anterior)


def test_si_ctrl_c_no_le_llega_la_linea_de_ordenes_lo_dice():
    proceso = lanzar_la_linea_de_ordenes(CON_SIGINT_IGNORADO, "--puerto", "0")
    try:
        lineas = [proceso.stdout.readline() for _ in range(4)]
    finally:
        proceso.terminate()
        proceso.communicate(timeout=10)
    ultima = lineas[-1]
    assert "Ctrl-C" in ultima and "kill %d" % proceso.pid in ultima
    assert "Ctrl-C para pararlo" not in "".join(lineas)


def test_la_medicion_del_servidor_corre_y_cuenta_lo_que_envia(capsys):
    from curso.medir.velocidad_del_servidor import medir_servidor_peticiones
    cifras = medir_servidor_peticiones(n=3, tokens=300)
    assert cifras["peticiones"] == 3 and 250 < cifras["tokens_de_entrada"] < 350
    assert "3 peticiones" in capsys.readouterr().out
