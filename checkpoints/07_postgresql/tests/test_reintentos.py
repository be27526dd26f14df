"""Los reintentos (reintentos.py): qué se reintenta, cuánto se espera y cuándo se rinde; y el
modelo que falla durante un rato, con el plan de fallos del servidor de ensayo por HTTP de verdad.

Nadie espera de verdad: `dormir` apunta lo que se habría esperado.
"""
import http.client
import random
import sqlite3

import pytest

import todo_junto
from api import ErrorDelModelo, ModeloAPI
from ayudas_06 import INCIDENTE, carpeta_en_memoria, foto
from curso.ensayo.fallos import Fallos
from curso.ensayo.servidor import ServidorEnsayo
from reanudar import reanudar
from reintentos import INTENTOS, ModeloConReintentos, espera, se_reintenta

M = [("sistema", "Repite."), ("usuario", "hola")]


class AlMaximo(random.Random):
    """Un azar que siempre da el extremo de arriba: la espera más larga posible."""

    def uniform(self, a, b):
        return b


class Falla:
    """Un modelo que lanza los `errores`, uno por llamada, y después contesta."""

    def __init__(self, *errores):
        self.errores, self.llamadas, self.usage = list(errores), 0, None

    def __call__(self, M, herramientas=()):
        self.llamadas += 1
        if self.errores:
            raise self.errores.pop(0)
        self.usage = {"input_tokens": 1, "output_tokens": 1}
        return [{"type": "text", "text": "hecho"}]


@pytest.mark.parametrize("error, si", [
    (ErrorDelModelo(429, "x"), True), (ErrorDelModelo(500, "x"), True), (ErrorDelModelo(503, "x"), True),
    (ErrorDelModelo(529, "Overloaded"), True), (ErrorDelModelo(None, "no hay ningún servidor"), True),
    (ConnectionResetError(), True), (http.client.RemoteDisconnected("cortada"), True), (TimeoutError(), True),
    (http.client.IncompleteRead(b""), True),
    (ErrorDelModelo(400, "x"), False), (ErrorDelModelo(401, "x"), False), (ErrorDelModelo(404, "x"), False),
    (ErrorDelModelo(413, "x"), False), (ValueError("x"), False), (KeyError("usage"), False),
])
def test_que_se_reintenta_y_que_no(error, si):
    assert se_reintenta(error) is si


def test_la_espera_crece_al_doble_hasta_el_tope_y_lleva_azar():
    assert [espera(n, AlMaximo(), base=1, tope=30) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    azar = random.Random(1)
    esperas = [espera(5, azar, base=1, tope=30) for _ in range(200)]
    assert all(0 <= s <= 30 for s in esperas) and len(set(esperas)) == 200  # no todas iguales


def test_reintenta_hasta_que_contesta_y_espera_lo_que_toca():
    dormidas = []
    modelo = Falla(ErrorDelModelo(529, "Overloaded"), ConnectionResetError(), ErrorDelModelo(429, "x"))
    con = ModeloConReintentos(modelo, dormir=dormidas.append, azar=AlMaximo(), base=1, tope=30)
    assert con(M) == [{"type": "text", "text": "hecho"}]
    assert modelo.llamadas == 4 and dormidas == [1, 2, 4] and con.usage == modelo.usage
    assert [n for n, _, _ in con.reintentos] == [0, 1, 2]


def test_un_400_no_se_reintenta_nunca():
    dormidas = []
    modelo = Falla(ErrorDelModelo(400, "la petición no cabe en la ventana"))
    with pytest.raises(ErrorDelModelo) as error:
        ModeloConReintentos(modelo, dormir=dormidas.append)(M)
    assert error.value.estado == 400 and modelo.llamadas == 1 and dormidas == []


def test_se_rinde_tras_los_intentos_con_el_ultimo_error():
    dormidas = []
    modelo = Falla(*[ErrorDelModelo(503, f"intento {n}") for n in range(1, INTENTOS + 2)])
    with pytest.raises(ErrorDelModelo, match=f"intento {INTENTOS}"):
        ModeloConReintentos(modelo, dormir=dormidas.append)(M)
    assert modelo.llamadas == INTENTOS and len(dormidas) == INTENTOS - 1


# --- Por HTTP, con el plan de fallos del servidor de ensayo -----------------------------------------

def test_un_modelo_que_falla_un_rato_acaba_contestando_lo_mismo():
    with ServidorEnsayo(0) as limpio:
        esperada = ModeloAPI("guion:eco", url=limpio.url)(M)
    with ServidorEnsayo(0, fallos="529,429,503,500,corte") as servidor:
        dormidas = []
        con = ModeloConReintentos(ModeloAPI("guion:eco", url=servidor.url, espera=10), dormir=dormidas.append)
        assert con(M) == esperada
    errores = [e for _, e, _ in con.reintentos]
    assert [getattr(e, "estado", None) for e in errores[:4]] == [529, 429, 503, 500]
    assert isinstance(errores[4], ConnectionError) and len(dormidas) == 5


def test_una_respuesta_que_no_llega_a_tiempo_se_reintenta():
    with ServidorEnsayo(0, fallos=Fallos("lento", lento_s=1.0)) as servidor:
        con = ModeloConReintentos(ModeloAPI("guion:eco", url=servidor.url, espera=0.3), dormir=lambda s: None)
        assert con(M)[0]["text"] == "hola"
    assert len(con.reintentos) == 1 and isinstance(con.reintentos[0][1], TimeoutError)


def test_un_400_del_servidor_no_se_reintenta():
    with ServidorEnsayo(0, fallos="400") as servidor:
        con = ModeloConReintentos(ModeloAPI("guion:eco", url=servidor.url), dormir=lambda s: None)
        with pytest.raises(ErrorDelModelo) as error:
            con(M)
    assert error.value.estado == 400 and con.reintentos == []


def test_la_ejecucion_entera_con_un_modelo_que_falla_acaba_igual():
    def correr(**opciones):
        with carpeta_en_memoria() as carpeta, ServidorEnsayo(0, **opciones) as servidor:
            ruta = todo_junto.preparar(carpeta / "e", INCIDENTE)
            hecho = reanudar(ruta, lambda nombre: ModeloConReintentos(
                ModeloAPI(nombre, url=servidor.url), dormir=lambda s: None))
            bd = sqlite3.connect(ruta)
            reintentos = bd.execute("SELECT COUNT(*) FROM pasos WHERE clase='reintento'").fetchone()[0]
            bd.close()
            return hecho, foto(ruta), reintentos
    hecho, referencia, ninguno = correr()
    con_fallos, resultado, reintentos = correr(fallos=Fallos("529,corte", cada=2))
    assert con_fallos == hecho and resultado == referencia
    assert ninguno == 0 and reintentos > 0  # cada reintento queda apuntado como un paso
