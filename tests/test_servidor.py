"""El servidor de ensayo: el motor (`curso.ensayo.motor`) y el HTTP de verdad, con urllib.

Cada invariante tiene su test. Donde el invariante es sutil (la caché, las parejas
`tool_use`/`tool_result`) hay además un test que pone una variante ingenua del motor y
comprueba que la misma comprobación la detecta: así sabemos que la comprobación puede fallar.
"""
import copy
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import urllib.request

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curso.ensayo import guiones, motor
from curso.ensayo.motor import Ensayo, ErrorPeticion, segundos_modelados, trocear_peticion
from curso.ensayo.servidor import CABECERA_SEGUNDOS, PUERTO_POR_DEFECTO, ServidorEnsayo, main

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
    for p, uso in zip(peticiones, usos):
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
    (poner("max_tokens", 0), "max_tokens"),
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

def test_la_ayuda_de_la_linea_de_ordenes_esta_en_castellano(capsys):
    with pytest.raises(SystemExit) as salida:
        main(["--help"])
    texto = capsys.readouterr().out
    assert salida.value.code == 0
    assert "uso:" in texto and "--puerto" in texto and str(PUERTO_POR_DEFECTO) in texto


def test_un_puerto_que_no_es_un_numero_es_un_error_en_castellano(capsys):
    with pytest.raises(SystemExit) as salida:
        main(["--puerto", "ocho"])
    assert salida.value.code == 2 and "entero" in capsys.readouterr().err


def test_un_puerto_ocupado_se_dice_sin_traza(servidor, capsys):
    assert main(["--puerto", str(servidor.puerto)]) == 1
    assert "--puerto" in capsys.readouterr().out


def test_la_linea_de_ordenes_atiende_hasta_ctrl_c():
    orden = [sys.executable, "-c", "import sys; from curso.ensayo.servidor import main; sys.exit(main(sys.argv[1:]))",
             "--puerto", "0", "--ventana", "4096"]
    proceso = subprocess.Popen(orden, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
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


def test_la_medicion_del_servidor_corre_y_cuenta_lo_que_envia(capsys):
    from curso.medir import medir_servidor_peticiones
    cifras = medir_servidor_peticiones(n=3, tokens=300)
    assert cifras["peticiones"] == 3 and 250 < cifras["tokens_de_entrada"] < 350
    assert "3 peticiones" in capsys.readouterr().out
