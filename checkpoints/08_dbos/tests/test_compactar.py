"""Punto de control 03: el contrato de la compactación.

Los cinco invariantes de la lección, cada uno con su test, y los cinco a la vez con hypothesis
sobre M de formas al azar (cuántos turnos, cuántas llamadas por turno, con un resumen anterior o
sin él, tokens alrededor del umbral, k de 1 a 3, respuestas con texto o sin él):

1. el inicio no se toca;
2. los k turnos recientes quedan tal cual;
3. el corte cae entre dos turnos: ninguna llamada pierde su observación;
4. sin resumen no se quita nada;
5. M solo pierde mensajes al compactar, y solo turnos enteros a cambio de un mensaje: ninguna
   observación se reescribe por dentro, y por debajo del umbral M vuelve tal cual (la misma
   lista, sin preguntar al modelo).

Junto a cada comprobación hay una variante ingenua de `compactar` que la rompe, escrita aquí:
así se ve que la comprobación puede fallar. Después vienen las entradas malas, `tokens`, el paso
nuevo del bucle, y la ejecución guionizada `compacta` entera, con la traza y con la orden.
"""
import copy
import importlib.util
import json
import re
import shutil
import tempfile
from itertools import pairwise
from curso.ensayo.recetario import usuario_guionizado
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agente import agente, inicio
from api import peticion
from bucle import bucle
from compactar import INSTRUCCION, NOTA, RECIENTES, UMBRAL, compactar, corte, inicio_de, tokens
from correr import Traza
from curso.ensayo.motor import Ensayo
from curso.ensayo.tokens import contar
from curso.rutas import RECETARIO
from entorno import HERRAMIENTAS, llamada, resultado, texto, texto_de
from curso.ensayo.guionizado import ModeloGuionizado

PUNTO = Path(__file__).resolve().parent.parent  # la carpeta del punto de control
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla recetario.py.")]
RESUMEN = "He leído f1.py y f2.py; f2.py tiene el error."
RESPUESTA_DE_RESUMEN = (texto(RESUMEN),)  # lo que contesta Contado si no se le dice otra cosa


class Contado:
    """Un modelo de prueba cuyo `usage` dice `n` tokens de entrada (`en_cache` leídos de la
    caché) y 0 de salida. Contesta siempre `respuesta` y guarda una copia de cada petición."""

    def __init__(self, n, respuesta=RESPUESTA_DE_RESUMEN, en_cache=0):
        self.usage = {"input_tokens": n - en_cache, "cache_read_input_tokens": en_cache, "output_tokens": 0}
        self.respuesta, self.pedidas = list(respuesta), []

    def __call__(self, M, herramientas=()):
        self.pedidas.append((copy.deepcopy(M), herramientas))
        return copy.deepcopy(self.respuesta)


def con_turnos(n, llamadas=(1,), nota=False):
    """Una M de n turnos tal como la ve compactar: acaba en la respuesta del turno n, cuyas llamadas
    aún esperan sus observaciones.

    `llamadas[i % len(llamadas)]` son las llamadas del turno i + 1; con `nota`, M trae ya un resumen.
    """
    M = list(INICIO) + ([("usuario", NOTA + "Un resumen anterior.")] if nota else [])
    for t in range(1, n + 1):
        ids = ["t%d_%d" % (t, j) for j in range(llamadas[(t - 1) % len(llamadas)])]
        pedidas = [llamada(i, "leer", ruta="f%d.py" % t) for i in ids]
        M.append(("asistente", [texto("Turno %d." % t)] + pedidas))
        if t < n:
            M.append(("usuario", [resultado(i, "el fichero %d" % t) for i in ids]))
    return M


# --- Las comprobaciones, una por invariante ----------------------------------------------------

def el_inicio_intacto(M, nuevo):
    p = inicio_de(M)
    return nuevo[:p] == M[:p]


def los_recientes_intactos(M, nuevo, k):
    n = 2 * k - 1
    return len(nuevo) >= min(n, len(M)) and nuevo[-n:] == M[-n:]


def ids(contenido, tipo, campo):
    return sorted(b[campo] for b in contenido if b.get("type") == tipo) if isinstance(contenido, list) else []


def cada_llamada_con_su_observacion(nuevo):
    """Cada tool_use tiene su tool_result en el mensaje siguiente y cada tool_result, su tool_use en
    el anterior; salvo las llamadas del último mensaje, la respuesta que espera sus observaciones."""
    for i, (rol, contenido) in enumerate(nuevo):
        if rol == "asistente" and i < len(nuevo) - 1:
            siguiente = nuevo[i + 1][1] if nuevo[i + 1][0] == "usuario" else []
            if ids(contenido, "tool_use", "id") != ids(siguiente, "tool_result", "tool_use_id"):
                return False
        if rol == "usuario" and ids(contenido, "tool_result", "tool_use_id"):
            anterior = nuevo[i - 1][1] if i > 0 and nuevo[i - 1][0] == "asistente" else []
            if ids(contenido, "tool_result", "tool_use_id") != ids(anterior, "tool_use", "id"):
                return False
    return True


def nada_quitado_sin_resumen(M, nuevo):
    return nuevo is M


def solo_turnos_enteros_por_un_mensaje(M, nuevo):
    """O es la misma M, o es M con un tramo justo detrás del pedido (un resumen anterior, si lo
    había, y al menos un turno entero) cambiado por un solo mensaje de texto del usuario; todo lo
    demás, igual mensaje a mensaje."""
    if nuevo is M:
        return True
    p = inicio_de(M)
    fuera = M[p:p + len(M) - len(nuevo) + 1]
    return (len(fuera) >= 2 and nuevo[:p] == M[:p] and nuevo[p + 1:] == M[p + len(fuera):]
            and nuevo[p][0] == "usuario" and isinstance(nuevo[p][1], str)
            and any(rol == "asistente" for rol, _ in fuera) and fuera[-1][0] == "usuario")


def tal_cual_bajo_el_umbral(M, nuevo, modelo):
    return nuevo is M and modelo.pedidas == []


# --- Las variantes ingenuas: cada una rompe una comprobación -------------------------------------

def resume_tambien_el_pedido(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """Ahorra más: el pedido entra en el resumen, y solo queda el prompt de sistema."""
    c = corte(M, k)
    r = modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)
    return M[:1] + [("usuario", NOTA + r[0]["text"])] + M[c:]


def se_queda_con_un_turno(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """Se queda solo con la respuesta en curso, sea k lo que sea."""
    p, c = inicio_de(M), len(M) - 1
    r = modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)
    return M[:p] + [("usuario", NOTA + r[0]["text"])] + M[c:]


def corta_en_cualquier_mensaje(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """Corta un mensaje antes: entre una respuesta y sus observaciones."""
    p, c = inicio_de(M), len(M) - 2 * k
    r = modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)
    return M[:p] + [("usuario", NOTA + r[0]["text"])] + M[c:]


def quita_sin_resumen(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """Si el modelo no escribe nada, quita los turnos viejos igualmente."""
    p, c = inicio_de(M), corte(M, k)
    r = modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)
    resumen = texto_de(r)
    return M[:p] + ([("usuario", NOTA + resumen)] if resumen else []) + M[c:]


def compacta_siempre(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """No mira el umbral."""
    return compactar(modelo, M, umbral=-1, k=k)


def recorta_las_observaciones(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """Ahorra algo más: compacta, y deja cada observación que queda en sus primeros 10 caracteres."""
    def recortada(mensaje):
        rol, contenido = mensaje
        if rol != "usuario" or not isinstance(contenido, list):
            return mensaje
        return rol, [dict(b, content=b["content"][:10]) if b.get("type") == "tool_result" else b
                     for b in contenido]
    return [recortada(m) for m in compactar(modelo, M, umbral, k)]


# --- Los cinco invariantes ---------------------------------------------------------------------

@pytest.mark.contrato("3.3")
def test_el_inicio_no_se_toca():
    M, modelo = con_turnos(4), Contado(UMBRAL + 1)
    nuevo = compactar(modelo, M)
    assert nuevo is not M and el_inicio_intacto(M, nuevo)
    assert modelo.pedidas[0][0][:len(INICIO)] == INICIO  # el resumen se pide con el inicio delante


def test_resumir_tambien_el_pedido_no_pasa_la_comprobacion_del_inicio():
    M = con_turnos(4)
    assert not el_inicio_intacto(M, resume_tambien_el_pedido(Contado(UMBRAL + 1), M))


@pytest.mark.contrato("3.2")
def test_los_k_turnos_recientes_quedan_tal_cual():
    for k in (1, 2, 3):
        M = con_turnos(6)
        nuevo = compactar(Contado(UMBRAL + 1), M, k=k)
        assert nuevo is not M and los_recientes_intactos(M, nuevo, k)
        assert len(nuevo) == len(INICIO) + 1 + 2 * k - 1  # el inicio, el resumen y los k turnos


def test_quedarse_con_un_solo_turno_no_pasa_la_comprobacion_de_los_recientes():
    M = con_turnos(6)
    assert not los_recientes_intactos(M, se_queda_con_un_turno(Contado(UMBRAL + 1), M), RECIENTES)


@pytest.mark.contrato("3.2")
def test_ninguna_llamada_pierde_su_observacion():
    M = con_turnos(5, llamadas=(1, 2, 3))
    nuevo = compactar(Contado(UMBRAL + 1), M)
    assert nuevo is not M and cada_llamada_con_su_observacion(nuevo)
    todas = [bloque for _, contenido in nuevo if isinstance(contenido, list) for bloque in contenido]
    # Quedan las llamadas de los dos últimos turnos (RECIENTES), y la observación del penúltimo: las
    # del último esperan a que el bucle las atienda.
    penultimo, ultimo = M[-3][1], M[-1][1]
    assert [x["id"] for x in todas if x["type"] == "tool_use"] == ids(penultimo, "tool_use", "id") + ids(ultimo, "tool_use", "id")
    assert [x["tool_use_id"] for x in todas if x["type"] == "tool_result"] == ids(penultimo, "tool_use", "id")


def test_cortar_en_cualquier_mensaje_no_pasa_la_comprobacion_de_las_observaciones():
    M = con_turnos(5, llamadas=(1, 2, 3))
    assert cada_llamada_con_su_observacion(M)
    assert not cada_llamada_con_su_observacion(corta_en_cualquier_mensaje(Contado(UMBRAL + 1), M))


@pytest.mark.contrato("3.3")
@pytest.mark.parametrize("respuesta", [
    [llamada("r1", "leer", ruta="f1.py")],  # solo llamadas, que el harness no ejecuta
    [texto("   "), llamada("r1", "leer", ruta="f1.py")],  # texto en blanco
    [],
])
def test_sin_resumen_no_se_quita_nada(respuesta):
    M = con_turnos(4)
    antes = copy.deepcopy(M)
    modelo = Contado(UMBRAL + 1, respuesta)
    assert nada_quitado_sin_resumen(M, compactar(modelo, M))
    assert len(modelo.pedidas) == 1 and M == antes


def test_quitar_sin_resumen_no_pasa_la_comprobacion():
    M = con_turnos(4)
    modelo = Contado(UMBRAL + 1, [llamada("r1", "leer", ruta="f1.py")])
    assert not nada_quitado_sin_resumen(M, quita_sin_resumen(modelo, M))


@pytest.mark.contrato("3.3")
@pytest.mark.parametrize("n, en_cache", [(UMBRAL, 0), (UMBRAL, UMBRAL - 100), (100, 0)])
def test_por_debajo_del_umbral_m_vuelve_tal_cual(n, en_cache):
    M, modelo = con_turnos(6), Contado(n, en_cache=en_cache)
    assert tal_cual_bajo_el_umbral(M, compactar(modelo, M), modelo)


def test_compactar_siempre_no_pasa_la_comprobacion_del_umbral():
    M, modelo = con_turnos(6), Contado(UMBRAL)
    assert not tal_cual_bajo_el_umbral(M, compacta_siempre(modelo, M), modelo)


@pytest.mark.contrato("3.3")
def test_solo_se_cambian_turnos_enteros_por_un_mensaje():
    for k in (1, 2, 3):
        M = con_turnos(6, llamadas=(1, 2))
        nuevo = compactar(Contado(UMBRAL + 1), M, k=k)
        assert nuevo is not M and solo_turnos_enteros_por_un_mensaje(M, nuevo)


def test_recortar_las_observaciones_no_pasa_la_comprobacion_de_los_turnos_enteros():
    M = con_turnos(6)
    nuevo = recorta_las_observaciones(Contado(UMBRAL + 1), M)
    assert len(nuevo) == len(compactar(Contado(UMBRAL + 1), M))  # quita lo mismo...
    assert not solo_turnos_enteros_por_un_mensaje(M, nuevo)  # ...pero reescribe lo que queda


@pytest.mark.contrato("3.3")
def test_el_umbral_cuenta_tambien_lo_que_esta_en_la_cache_y_la_salida():
    """4096 de entrada entre calculados y de la caché, más un token de salida: ya pasa del umbral."""
    M, modelo = con_turnos(4), Contado(UMBRAL, en_cache=UMBRAL - 111)
    modelo.usage["output_tokens"] = 1
    assert compactar(modelo, M) is not M


@pytest.mark.contrato("3.3")
def test_sin_ningun_turno_viejo_entero_m_vuelve_tal_cual():
    for M in (con_turnos(2), con_turnos(1), con_turnos(1, nota=True), con_turnos(2, nota=True)):
        modelo = Contado(UMBRAL + 1)
        assert compactar(modelo, M) is M and modelo.pedidas == []


@pytest.mark.contrato("3.3")
def test_la_peticion_del_resumen_y_la_m_nueva():
    M, modelo = con_turnos(5), Contado(UMBRAL + 1)
    nuevo = compactar(modelo, M)
    (pedida, herramientas), = modelo.pedidas
    assert pedida == M[:-3] + [("usuario", INSTRUCCION)] and herramientas == HERRAMIENTAS
    assert nuevo == INICIO + [("usuario", NOTA + RESUMEN)] + M[-3:]


@pytest.mark.contrato("3.3")
def test_un_resumen_anterior_entra_en_el_nuevo():
    M, modelo = con_turnos(4, nota=True), Contado(UMBRAL + 1)
    nuevo = compactar(modelo, M)
    assert modelo.pedidas[0][0][len(INICIO)] == M[len(INICIO)]  # el resumen viejo, en el medio
    assert [c for r, c in nuevo if isinstance(c, str) and c.startswith(NOTA)] == [NOTA + RESUMEN]


# --- Los cinco a la vez, sobre M al azar -------------------------------------------------------

RESPUESTAS = st.sampled_from([
    [texto(RESUMEN)],
    [texto("Primera parte."), llamada("r1", "leer", ruta="f1.py"), texto("Segunda parte.")],
    [llamada("r1", "leer", ruta="f1.py")],
    [texto(" \n ")],
    [],
])


@pytest.mark.contrato("3.3")
@settings(max_examples=200, deadline=None, database=None)
@given(turnos=st.integers(1, 9), llamadas=st.lists(st.integers(1, 3), min_size=1, max_size=4),
       nota=st.booleans(), k=st.integers(1, 3), respuesta=RESPUESTAS,
       n=st.integers(UMBRAL - 3, UMBRAL + 3) | st.integers(0, 3 * UMBRAL), en_cache=st.integers(0, 100))
def test_los_cinco_invariantes_con_m_al_azar(turnos, llamadas, nota, k, respuesta, n, en_cache):
    M = con_turnos(turnos, llamadas, nota)
    antes = copy.deepcopy(M)
    modelo = Contado(n, respuesta, en_cache=min(en_cache, n))
    nuevo = compactar(modelo, M, k=k)
    assert M == antes  # nunca cambia la lista que recibe
    assert el_inicio_intacto(M, nuevo)
    assert los_recientes_intactos(M, nuevo, k)
    assert cada_llamada_con_su_observacion(nuevo)
    assert solo_turnos_enteros_por_un_mensaje(M, nuevo)
    if n <= UMBRAL:
        assert tal_cual_bajo_el_umbral(M, nuevo, modelo)
    resumen = texto_de(respuesta)
    if modelo.pedidas and not resumen:
        assert nada_quitado_sin_resumen(M, nuevo)
    if nuevo is not M:  # ha compactado: el inicio, el resumen y los k turnos, nada más
        p, c = inicio_de(M), corte(M, k)
        assert modelo.pedidas == [(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)]
        assert nuevo == M[:p] + [("usuario", NOTA + resumen)] + M[c:]
        assert len(nuevo) < len(M)


# --- Entradas malas ----------------------------------------------------------------------------

@pytest.mark.contrato("3.3")
@pytest.mark.parametrize("M, dice", [
    ([], "no tiene pedido"),
    ([("sistema", "Eres un agente.")], "no tiene pedido"),
    ([("sistema", "Eres un agente."), ("asistente", [texto("Hola.")])], "no tiene pedido"),
    (INICIO, "acabar en la respuesta"),
    (con_turnos(4)[:-1], "acabar en la respuesta"),  # ya con sus observaciones
])
def test_una_m_mal_formada_da_un_error_claro_y_no_cambia(M, dice):
    antes, modelo = copy.deepcopy(M), Contado(UMBRAL + 1)
    with pytest.raises(ValueError, match=dice):
        compactar(modelo, M)
    assert M == antes and modelo.pedidas == []


@pytest.mark.contrato("3.3")
def test_k_menor_que_uno_da_un_error_claro():
    with pytest.raises(ValueError, match="al menos 1"):
        compactar(Contado(UMBRAL + 1), con_turnos(4), k=0)


class SinUsage:
    def __call__(self, M, herramientas=()):
        return [texto(RESUMEN)]


@pytest.mark.contrato("3.3")
@pytest.mark.parametrize("usage", ["sin atributo", None, {}, {"input_tokens": 5000},
                                   {"input_tokens": None, "output_tokens": 3}])
def test_sin_usage_da_un_error_claro(usage):
    modelo = SinUsage()
    if usage != "sin atributo":
        modelo.usage = usage
    M = con_turnos(4)
    antes = copy.deepcopy(M)
    with pytest.raises(ValueError, match="usage con input_tokens y output_tokens"):
        compactar(modelo, M)
    assert M == antes


@pytest.mark.contrato("3.3")
def test_si_el_modelo_falla_al_resumir_su_excepcion_sale_tal_cual_y_m_no_cambia():
    """La elección: compactar no se traga el error (el bucle se para, como con cualquier otra
    petición que falla), y como nunca cambia la lista que recibe, M queda como estaba."""
    fallo = ConnectionError("el servidor se ha ido")

    class QueFalla(Contado):
        def __call__(self, M, herramientas=()):
            raise fallo

    M = con_turnos(4)
    antes = copy.deepcopy(M)
    with pytest.raises(ConnectionError) as info:
        compactar(QueFalla(UMBRAL + 1), M)
    assert info.value is fallo and M == antes


def test_tokens_suma_la_entrada_calculada_la_de_la_cache_y_la_salida():
    modelo = Contado(0)
    modelo.usage = {"input_tokens": 111, "cache_read_input_tokens": 3716, "output_tokens": 245}
    assert tokens(modelo) == 111 + 3716 + 245
    modelo.usage = {"input_tokens": 1069, "output_tokens": 14}  # un servidor sin caché
    assert tokens(modelo) == 1069 + 14


# --- El paso nuevo del bucle -------------------------------------------------------------------

class Guion:
    """Un modelo que contesta `respuestas` en orden y dice haber contado `n` tokens."""

    def __init__(self, *respuestas, n=UMBRAL + 1):
        self.respuestas, self.usage = list(respuestas), {"input_tokens": n, "output_tokens": 0}

    def __call__(self, M, herramientas=()):
        return self.respuestas.pop(0)


def test_el_bucle_compacta_entre_la_respuesta_y_sus_observaciones(tmp_path):
    (tmp_path / "a.txt").write_text("hola\n", encoding="utf-8")
    vistas = []

    def espia(modelo, M):
        vistas.append(copy.deepcopy(M))
        return M[:2] + [("usuario", "Resumen de todo.")] + M[-1:]  # se queda con la respuesta

    respuestas = [[llamada(f"t{i}", "leer", ruta="a.txt")] for i in (1, 2)] + [[texto("Hecho.")]]
    motivo, final, M = bucle(Guion(*respuestas), INICIO, tmp_path, 5, compactar=espia)
    assert (motivo, final) == ("fin", "Hecho.")
    assert [v[-1] for v in vistas] == [("asistente", r) for r in respuestas[:2]]  # tras la respuesta
    assert M[2:] == [("usuario", "Resumen de todo."), ("asistente", respuestas[1]),
                     ("usuario", [resultado("t2", "hola\n")]), ("asistente", respuestas[2])]


def cargar_bucle_01():
    """El bucle.py del punto de control 01, cargado con otro nombre (con el entorno y los permisos de aquí)."""
    spec = importlib.util.spec_from_file_location("bucle_01", PUNTO.parent / "01_el_bucle" / "bucle.py")
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo.bucle


def test_sin_compactar_el_bucle_hace_lo_mismo_que_el_de_la_leccion_01(tmp_path):
    def correr(funcion, carpeta, **extra):
        grabadas = []

        class Grabando(ModeloGuionizado):
            def __call__(self, M, herramientas=()):
                grabadas.append(sin_tiempos(M))
                return super().__call__(M, herramientas)

        copia = shutil.copytree(RECETARIO, carpeta, ignore=shutil.ignore_patterns("__pycache__"))
        motivo, final, M = funcion(Grabando("atasco"), inicio(PEDIDO, copia), copia, 10, usuario_guionizado,
                                   **extra)
        return motivo, final, sin_tiempos(M), grabadas

    de_01 = correr(cargar_bucle_01(), tmp_path / "a" / "recetario")
    assert correr(bucle, tmp_path / "b" / "recetario", compactar=None) == de_01


# --- La ejecución guionizada `compacta` --------------------------------------------------------

TIEMPO_DE_UNITTEST = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")


def sin_tiempos(valor):
    """`valor` sin el tiempo que escribe unittest, lo único que cambia de una ejecución a otra."""
    return json.loads(TIEMPO_DE_UNITTEST.sub(r"\1…s", json.dumps(valor, ensure_ascii=False)))


class Apuntando:
    """Envuelve a un modelo y apunta cada petición: si es la del resumen, la M y el usage."""

    def __init__(self, modelo):
        self.modelo, self.peticiones = modelo, []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        respuesta = self.modelo(M, herramientas)
        self.peticiones.append((M[-1] == ("usuario", INSTRUCCION), list(M), dict(self.modelo.usage)))
        return respuesta


@pytest.fixture(scope="module")
def ejecucion(tmp_path_factory):
    """agente + compactar con el guion `compacta`, tope 10, y las compactaciones que hizo."""
    compactaciones = []

    def compactar_apuntando(modelo, M):
        nuevo = compactar(modelo, M)
        compactaciones.append((copy.deepcopy(M), copy.deepcopy(nuevo), nuevo is not M))
        return nuevo

    tempfile.tempdir, antes = str(tmp_path_factory.mktemp("copias")), tempfile.tempdir
    try:
        modelo = Apuntando(ModeloGuionizado("compacta"))
        motivo, final, M, copia = agente(modelo, PEDIDO, RECETARIO, 10, usuario_guionizado,
                                         compactar=compactar_apuntando)
    finally:
        tempfile.tempdir = antes
    return {"motivo": motivo, "M": M, "peticiones": modelo.peticiones, "compactaciones": compactaciones,
            "copia": copia}


def test_con_compacta_el_bucle_llega_al_tope_y_compacta_tres_veces(ejecucion):
    assert ejecucion["motivo"] == "tope"
    resumenes = [i for i, (es, _, _) in enumerate(ejecucion["peticiones"]) if es]
    assert len(resumenes) == 3
    turnos = [sum(1 for es, _, _ in ejecucion["peticiones"][:i] if not es) for i in resumenes]
    assert turnos == [5, 7, 10]  # cada resumen, después de la respuesta de ese turno
    assert sum(hecha for _, _, hecha in ejecucion["compactaciones"]) == 3


@pytest.mark.contrato("3.3")
def test_en_la_ejecucion_cada_compactacion_cumple_el_contrato(ejecucion):
    for M, nuevo, _ in ejecucion["compactaciones"]:
        assert el_inicio_intacto(M, nuevo)
        assert los_recientes_intactos(M, nuevo, RECIENTES)
        assert cada_llamada_con_su_observacion(nuevo)
        assert len(nuevo) <= len(M)
    assert cada_llamada_con_su_observacion(ejecucion["M"][:-1])  # la M final, con sus observaciones


def test_con_compacta_ninguna_peticion_llega_al_umbral_mas_lo_que_trae_un_turno(ejecucion):
    """La más grande es la del turno 5, la última antes de la primera compactación."""
    entradas = [u["input_tokens"] + u["cache_read_input_tokens"] for _, _, u in ejecucion["peticiones"]]
    assert max(entradas) == entradas[4] < UMBRAL + 1024
    assert max(entradas[5:]) <= UMBRAL  # después de compactar, ninguna pasa del umbral


def test_la_peticion_del_resumen_solo_calcula_la_instruccion(ejecucion):
    for es, _, u in ejecucion["peticiones"]:
        if es:
            assert contar(INSTRUCCION) <= u["input_tokens"] <= contar(INSTRUCCION) + 5  # + su marca de rol
            assert u["cache_read_input_tokens"] > 2000


def test_despues_de_compactar_se_recalcula_lo_que_sigue_al_pedido(ejecucion):
    peticiones = ejecucion["peticiones"]
    ensayo = Ensayo()
    for antes, (_, M, u) in pairwise(peticiones):
        if antes[0]:  # la petición de después de un resumen
            inicio = ensayo.contar(peticion(M[:2], HERRAMIENTAS, "guion:compacta"))
            assert u["cache_read_input_tokens"] <= inicio + contar(NOTA) + 5  # a lo sumo, el inicio y NOTA
            assert u["input_tokens"] > 1000


def test_la_traza_rotula_los_resumenes_sin_contarlos_como_turnos(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    agente(Traza(ModeloGuionizado("compacta")), PEDIDO, RECETARIO, 10, usuario_guionizado,
           compactar=compactar)
    salida = capsys.readouterr().out
    lineas = re.findall(r"^(turno \d+|resumen) · \d+ tokens de entrada$", salida, re.M)
    assert lineas == ["turno %d" % i for i in range(1, 6)] + ["resumen", "turno 6", "turno 7", "resumen"] + [
        "turno %d" % i for i in range(8, 11)] + ["resumen"]
    assert "  → error antiguo no aparece en compra.py" in salida
