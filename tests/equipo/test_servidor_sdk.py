"""El servidor de ensayo habla el protocolo de verdad: el SDK oficial de Anthropic como cliente.

Si el SDK entiende las respuestas y los errores, también los entenderá el `ModeloAPI` del
harness, y un alumno podrá cambiar el servidor de ensayo por uno real sin tocar el código.
"""
from unittest import mock

import anthropic
import pytest

from curso.ensayo import guiones
from curso.ensayo.servidor import ServidorEnsayo

HERRAMIENTAS = [{"name": "leer", "description": "Lee un fichero del proyecto.",
                 "input_schema": {"type": "object", "properties": {"ruta": {"type": "string"}}}}]
TEXTO_LARGO = "La tortilla lleva huevos, patatas y cebolla.\n" * 200


@pytest.fixture(scope="module")
def servidor():
    s = ServidorEnsayo(0).arrancar()
    yield s
    s.parar()


@pytest.fixture(scope="module")
def cliente(servidor):
    with anthropic.Anthropic(base_url=servidor.url, api_key="ensayo", max_retries=0) as c:
        yield c


def test_una_respuesta_de_texto_se_lee_como_message(cliente):
    m = cliente.messages.create(model="guion:eco", max_tokens=64,
                                messages=[{"role": "user", "content": "Hola, servidor."}])
    assert isinstance(m, anthropic.types.Message)
    assert m.role == "assistant" and m.model == "guion:eco" and m.stop_reason == "end_turn"
    assert [(b.type, b.text) for b in m.content] == [("text", "Hola, servidor.")]
    assert m.usage.output_tokens > 0 and m.usage.cache_creation_input_tokens == 0
    assert m.usage.input_tokens + m.usage.cache_read_input_tokens > 0


def test_una_llamada_se_lee_como_tool_use_y_su_resultado_cierra_el_turno(cliente):
    mensajes = [{"role": "user", "content": "Lee las recetas."}]
    m = cliente.messages.create(model="guion:herramienta", max_tokens=128, tools=HERRAMIENTAS,
                                tool_choice={"type": "auto"}, messages=mensajes)
    llamadas = [b for b in m.content if b.type == "tool_use"]
    assert m.stop_reason == "tool_use" and len(llamadas) == 1
    assert isinstance(llamadas[0], anthropic.types.ToolUseBlock)
    assert llamadas[0].name == "leer" and llamadas[0].input == guiones.ENTRADA_DE_DEMOSTRACION
    mensajes += [{"role": "assistant", "content": [b.model_dump() for b in m.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": llamadas[0].id,
                                               "content": "Tortilla: huevos."}]}]
    final = cliente.messages.create(model="guion:herramienta", max_tokens=128, tools=HERRAMIENTAS,
                                    messages=mensajes)
    assert final.stop_reason == "end_turn" and "Tortilla: huevos." in final.content[0].text
    contado = cliente.messages.count_tokens(model="guion:herramienta", tools=HERRAMIENTAS,
                                            messages=mensajes[:1])
    assert final.usage.cache_read_input_tokens == contado.input_tokens  # la primera, en caché


def test_count_tokens_devuelve_input_tokens(cliente):
    corto = cliente.messages.count_tokens(model="guion:eco", messages=[{"role": "user", "content": "hola"}])
    largo = cliente.messages.count_tokens(model="guion:eco", messages=[{"role": "user", "content": TEXTO_LARGO}])
    assert isinstance(corto, anthropic.types.MessageTokensCount)
    assert 0 < corto.input_tokens < largo.input_tokens


def test_lo_que_no_cabe_en_la_ventana_es_bad_request_con_los_numeros(cliente, servidor):
    mensajes = [{"role": "user", "content": TEXTO_LARGO}]
    entrada = cliente.messages.count_tokens(model="guion:eco", messages=mensajes).input_tokens
    max_tokens = servidor.ventana - entrada + 1
    with pytest.raises(anthropic.BadRequestError) as e:
        cliente.messages.create(model="guion:eco", max_tokens=max_tokens, messages=mensajes)
    assert e.value.status_code == 400
    for numero in (entrada, max_tokens, servidor.ventana):
        assert str(numero) in str(e.value)


def test_un_modelo_desconocido_es_not_found(cliente):
    with pytest.raises(anthropic.NotFoundError) as e:
        cliente.messages.create(model="un-modelo-que-no-existe", max_tokens=64,
                                messages=[{"role": "user", "content": "hola"}])
    assert "guion:eco" in str(e.value)


def test_un_tool_use_sin_tool_result_es_bad_request(cliente):
    mensajes = [{"role": "user", "content": "Lee las recetas."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "leer",
                                                   "input": {"ruta": "recetas.txt"}}]},
                {"role": "user", "content": "¿Y bien?"}]
    with pytest.raises(anthropic.BadRequestError) as e:
        cliente.messages.create(model="guion:eco", max_tokens=64, tools=HERRAMIENTAS, messages=mensajes)
    assert "toolu_1" in str(e.value) and "messages.1" in str(e.value)


def test_el_sdk_recibe_el_request_id(cliente):
    crudo = cliente.messages.with_raw_response.create(
        model="guion:eco", max_tokens=16, messages=[{"role": "user", "content": "hola"}])
    assert crudo.headers.get("request-id") and crudo.parse().content[0].text == "hola"


# --- Los fallos del plan de la lección 06, como los entiende el SDK --------------------------------

M_SDK = [{"role": "user", "content": "hola"}]


def con_el_plan(plan, max_retries):
    """(lo que pasa, las esperas que el SDK calculó, peticiones que llegaron) con el SDK contra el
    plan. Las esperas se apuntan y no se duermen: el SDK llama a su `_calculate_retry_timeout`."""
    calcular, esperas = anthropic.Anthropic._calculate_retry_timeout, []

    def apuntar(self, *argumentos, **opciones):
        esperas.append(calcular(self, *argumentos, **opciones))
        return 0
    with (ServidorEnsayo(0, fallos=plan) as servidor,
          mock.patch.object(anthropic.Anthropic, "_calculate_retry_timeout", apuntar),
          anthropic.Anthropic(base_url=servidor.url, api_key="ensayo", max_retries=max_retries) as cliente):
        try:
            pasa = cliente.messages.create(model="guion:eco", max_tokens=16, messages=M_SDK).content[0].text
        except anthropic.APIStatusError as e:
            pasa = e
        return pasa, esperas, servidor.ensayo.fallos.llegadas


@pytest.mark.parametrize("plan, segundos", [("429:40", 40.0), ("529:1500ms", 1.5), ("503:2.5", 2.5)])
def test_el_sdk_espera_lo_que_pide_el_plan(plan, segundos):
    assert con_el_plan(plan, max_retries=1) == ("hola", [segundos], 2)


def test_el_sdk_reconoce_el_limite_de_gasto_del_plan():
    error, esperas, llegadas = con_el_plan("gasto", max_retries=0)
    assert isinstance(error, anthropic.types.EnforcedSpendLimitReachedError)
    assert error.error_code == "enforced_spend_limit_reached" and error.status_code == 429


def test_el_sdk_reintenta_el_408_y_el_409_del_plan():
    pasa, esperas, llegadas = con_el_plan("408,409", max_retries=2)
    assert pasa == "hola" and len(esperas) == 2 and llegadas == 3
