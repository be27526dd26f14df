"""Punto de control 04: la compactación del bucle, durable (`durable.py`).

Cuatro invariantes, cada uno con su comprobación, que se mira en la ejecución guionizada
`compacta` (tope 10, tres compactaciones) sobre un fichero SQLite de verdad:

1. el historial guarda cada mensaje que el bucle añadió a M, y no se borra nada;
2. el corte cae en un turno entero: la cobertura de cada resumen es un mensaje de
   observaciones, y cada llamada hasta ella tiene su observación antes del corte;
3. el puntero solo se mueve desde la base que se leyó (compare-and-swap): las versiones forman
   una sola cadena y ninguna queda suelta;
4. cerrar la base de datos y abrirla otra vez da la M que el bucle va a enviar, y es la misma
   que daría `compactar` en memoria.

Cada comprobación tiene al lado una variante ingenua que la rompe. Después, lo que hereda cada
resumen, un compactador que compite, retomar la ejecución y las entradas malas.
"""
import copy
import json
import re
import sqlite3
import tempfile

import pytest

import durable
import resumenes
from agente import agente
from api import ErrorDelModelo
from compactar import INSTRUCCION, NOTA, UMBRAL, compactar, inicio_de
from curso.ensayo.recetario import usuario_guionizado
from curso.rutas import RECETARIO
from durable import CompactacionDurable, guardar, lo_que_dice, reconstruir
from entorno import llamada, resultado, texto
from curso.ensayo.guionizado import ModeloGuionizado
from historial import abrir, transaccion
from resumenes import activo, instalar

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
EJECUCION = "e1"
INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla recetario.py.")]
RESUMEN = "He leído f1.py y f2.py; f2.py tiene el error."
RESPUESTA_DE_RESUMEN = (texto(RESUMEN),)  # lo que contesta Contado si no se le dice otra cosa
TIEMPO_DE_UNITTEST = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")


def sin_tiempos(valor):
    """`valor` sin el tiempo que escribe unittest, lo único que cambia de una ejecución a otra."""
    return json.loads(TIEMPO_DE_UNITTEST.sub(r"\1…s", json.dumps(valor, ensure_ascii=False)))


# --- Lo que hay en el fichero, leído con SQL directo (sin pasar por el código que se prueba) ----

def leer(ruta, sql, *parametros):
    bd = sqlite3.connect(ruta, isolation_level=None)
    try:
        return bd.execute(sql, parametros).fetchall()
    finally:
        bd.close()


def historial(ruta):
    """{seq: (rol, contenido)} del historial de la ejecución."""
    filas = leer(ruta, "SELECT seq, texto FROM historial WHERE ejecucion=? ORDER BY seq", EJECUCION)
    return {seq: tuple(json.loads(t)) for seq, t in filas}


def versiones(ruta):
    """[(id, cobertura, anterior, afirmaciones)] de cada resumen guardado, en orden de id."""
    filas = leer(ruta, "SELECT id, cobertura, anterior, cuerpo FROM resumenes WHERE ejecucion=? ORDER BY id",
                 EJECUCION)
    return [(i, cobertura, anterior, json.loads(cuerpo)) for i, cobertura, anterior, cuerpo in filas]


def volcado(ruta):
    bd = sqlite3.connect(ruta)
    try:
        return "\n".join(bd.iterdump())
    finally:
        bd.close()


# --- La ejecución guionizada, con cada paso de compactación apuntado --------------------------

class Apuntando:
    """Envuelve a un modelo y apunta cada petición: (¿es la del resumen?, M, usage)."""

    def __init__(self, modelo):
        self.modelo, self.peticiones = modelo, []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        respuesta = self.modelo(M, herramientas)
        self.peticiones.append((M[-1] == ("usuario", INSTRUCCION), copy.deepcopy(M), dict(self.modelo.usage)))
        return respuesta


def correr(carpeta, compactador, ruta=None):
    """agente + `compactador` con el guion `compacta`, tope 10.

    Apunta cada paso: la M que recibió, la que devolvió y, si hay `ruta`, la que reconstruye una
    conexión nueva al fichero justo después. Si el bucle se rompe (una variante ingenua puede
    dejar una M que el servidor rechaza, o un historial que ya no respalda sus resúmenes), apunta
    el error y devuelve lo que llegó a pasar; con la variante correcta, el error es None.
    """
    pasos = []

    def paso(modelo, M):
        entrada = copy.deepcopy(M)
        salida = compactador(modelo, M)
        pasos.append({"entrada": entrada, "salida": copy.deepcopy(salida), "tal_cual": salida is M,
                      "reabierta": None if ruta is None else reabrir_y_reconstruir(ruta, entrada)})
        return salida

    modelo = Apuntando(ModeloGuionizado("compacta"))
    antes, tempfile.tempdir = tempfile.tempdir, str(carpeta)  # las copias del agente, aquí
    try:
        motivo, _, _, _ = agente(modelo, PEDIDO, RECETARIO, 10, usuario_guionizado, compactar=paso)
        error = None
    except Exception as e:  # noqa: BLE001 — se apunta y cada test dice cuál espera
        motivo, error = "error", e
    finally:
        tempfile.tempdir = antes
    return {"motivo": motivo, "error": error, "pasos": pasos, "peticiones": modelo.peticiones, "ruta": ruta}


def reabrir_y_reconstruir(ruta, M):
    bd = abrir(ruta)
    try:
        return reconstruir(bd, EJECUCION, M[:inicio_de(M)])
    finally:
        bd.close()


class Reabriendo:
    """Un CompactacionDurable que cierra su conexión después de cada turno y abre otra."""

    def __init__(self, ruta):
        self.ruta, self.compactador = ruta, CompactacionDurable(abrir(ruta), EJECUCION)

    def __call__(self, modelo, M):
        try:
            return self.compactador(modelo, M)
        finally:
            self.compactador.bd.close()
            self.compactador.bd = abrir(self.ruta)


def uno_nuevo_cada_turno(ruta):
    """Cada turno, un CompactacionDurable nuevo sobre el fichero recién abierto: solo queda lo del disco."""
    def compactador(modelo, M):
        bd = abrir(ruta)
        try:
            return CompactacionDurable(bd, EJECUCION)(modelo, M)
        finally:
            bd.close()
    return compactador


@pytest.fixture(scope="module")
def en_memoria(tmp_path_factory):
    """La referencia: la misma ejecución con `compactar`, que deja M solo en memoria."""
    return correr(tmp_path_factory.mktemp("memoria"), compactar)


@pytest.fixture(scope="module")
def en_sqlite(tmp_path_factory):
    carpeta = tmp_path_factory.mktemp("sqlite")
    ruta = carpeta / "m.db"
    compactador = Reabriendo(ruta)
    try:
        return correr(carpeta, compactador, ruta)
    finally:
        compactador.compactador.bd.close()


# --- Las comprobaciones, una por invariante ------------------------------------------------------

def guarda_todo_lo_que_vio(ejecucion):
    """El historial tiene cada mensaje que el bucle añadió a M, en orden, y nada más."""
    vistos, anterior = [], None
    for paso in ejecucion["pasos"]:
        M = paso["entrada"]
        vistos += M[inicio_de(M):] if anterior is None else M[len(anterior):]
        anterior = paso["salida"]
    return list(historial(ejecucion["ruta"]).values()) == vistos


def corta_en_turnos_enteros(ejecucion):
    """La cobertura de cada resumen es un mensaje de observaciones, y cada tool_use hasta ella tiene
    su tool_result en el historial hasta ella."""
    h = historial(ejecucion["ruta"])
    for _, cobertura, _, _ in versiones(ejecucion["ruta"]):
        if cobertura not in h:
            return False
        rol, contenido = h[cobertura]
        if rol != "usuario" or not contenido or any(b.get("type") != "tool_result" for b in contenido):
            return False
        bloques = [b for seq, (_, c) in h.items() if seq <= cobertura and isinstance(c, list) for b in c]
        pedidas = sorted(bloque["id"] for bloque in bloques if bloque["type"] == "tool_use")
        respondidas = sorted(bloque["tool_use_id"] for bloque in bloques if bloque["type"] == "tool_result")
        if pedidas != respondidas:
            return False
    return True


def el_puntero_solo_se_mueve_desde_su_base(ruta):
    """Desde el activo, cada versión lleva a la que estaba activa cuando se instaló; ninguna suelta."""
    todas = {i: anterior for i, _, anterior, _ in versiones(ruta)}
    cadena, actual = [], leer(ruta, "SELECT resumen_activo FROM ejecuciones WHERE id=?", EJECUCION)[0][0]
    while actual is not None:
        cadena.append(actual)
        actual = todas[actual]
    return sorted(cadena) == sorted(todas)


def reabrir_da_la_m_que_se_envia(ejecucion, en_memoria):
    """Tras cada turno, la M que reconstruye el fichero reabierto es la que devolvió el paso, y ésa
    es la misma que devolvió `compactar` en memoria en el mismo turno."""
    pasos = ejecucion["pasos"]
    return (all(p["reabierta"] == p["salida"] for p in pasos)
            and sin_tiempos([p["salida"] for p in pasos])
            == sin_tiempos([p["salida"] for p in en_memoria["pasos"][:len(pasos)]]))


# --- Las variantes ingenuas: cada una rompe una comprobación ---------------------------------------

def instalar_y_borrar_lo_resumido(original):
    """INGENUA: instala bien, pero borra del historial lo que el resumen cubre, «para ahorrar»."""
    def instalar(bd, ejecucion, base, corte, candidato):
        nuevo = original(bd, ejecucion, base, corte, candidato)
        with transaccion(bd):
            bd.execute("DELETE FROM historial WHERE ejecucion=? AND seq<=?", (ejecucion, corte))
        return nuevo
    return instalar


def instalar_hasta_lo_ultimo(original):
    """INGENUA: el resumen cubre todo lo que hay al instalar, como si el modelo decidiera el corte
    («ya lo he resumido todo»), también la respuesta en curso, cuyas observaciones no han llegado."""
    def instalar(bd, ejecucion, base, corte, candidato):
        (ultimo,) = bd.execute("SELECT MAX(seq) FROM historial WHERE ejecucion=?", (ejecucion,)).fetchone()
        return original(bd, ejecucion, base, ultimo, candidato)
    return instalar


def armar_sin_la_cola(contexto, inicio):
    """INGENUA: la M sale del puntero (el inicio y el resumen activo), sin la cola posterior."""
    nota = [("usuario", NOTA + lo_que_dice(contexto["resumen"], contexto["cobertura"]))] if contexto["resumen"] else []
    return list(inicio) + nota


def mover_sin_mirar(bd, ejecucion, base, nuevo):
    """INGENUA: mueve el puntero con un UPDATE simple, sin comprobar que siga en `base`."""
    bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", (nuevo, ejecucion))


def correr_ingenua(tmp_path, monkeypatch, modulo, nombre, variante):
    """La ejecución guionizada con `modulo.nombre` cambiado por la variante ingenua."""
    monkeypatch.setattr(modulo, nombre, variante)
    ruta = tmp_path / "m.db"
    compactador = Reabriendo(ruta)
    try:
        return correr(tmp_path, compactador, ruta)
    finally:
        compactador.compactador.bd.close()


# --- Los cuatro invariantes, en la ejecución guionizada --------------------------------------------

def test_con_compacta_instala_tres_resumenes_que_cubren_cada_vez_mas(en_sqlite):
    assert en_sqlite["motivo"] == "tope" and en_sqlite["error"] is None
    coberturas = [cobertura for _, cobertura, _, _ in versiones(en_sqlite["ruta"])]
    assert len(coberturas) == 3 and coberturas == sorted(set(coberturas))
    assert sum(not p["tal_cual"] for p in en_sqlite["pasos"]) == 3


def test_el_historial_guarda_cada_mensaje_y_no_borra_nada(en_sqlite):
    assert guarda_todo_lo_que_vio(en_sqlite)
    h = historial(en_sqlite["ruta"])
    assert list(h) == list(range(1, len(h) + 1))  # sin huecos, también lo ya resumido
    ultima = en_sqlite["pasos"][-1]["entrada"]  # la respuesta del turno 10 también está
    assert h[len(h)] == ultima[-1]


def test_borrar_lo_resumido_no_pasa_la_comprobacion_del_historial(tmp_path, monkeypatch):
    ingenua = correr_ingenua(tmp_path, monkeypatch, resumenes, "instalar",
                             instalar_y_borrar_lo_resumido(resumenes.instalar))
    assert versiones(ingenua["ruta"]) and not guarda_todo_lo_que_vio(ingenua)
    # Y la compactación siguiente se rechaza: la fuente que hereda ya no está en el historial.
    assert isinstance(ingenua["error"], ValueError), ingenua["error"]


def test_el_corte_cae_siempre_en_un_turno_entero(en_sqlite):
    assert versiones(en_sqlite["ruta"]) and corta_en_turnos_enteros(en_sqlite)


def test_cubrir_hasta_lo_ultimo_no_pasa_la_comprobacion_del_corte(tmp_path, monkeypatch):
    ingenua = correr_ingenua(tmp_path, monkeypatch, resumenes, "instalar",
                             instalar_hasta_lo_ultimo(resumenes.instalar))
    assert versiones(ingenua["ruta"]) and not corta_en_turnos_enteros(ingenua)
    # Y el servidor rechaza la petición siguiente: unas observaciones sin sus llamadas.
    assert isinstance(ingenua["error"], ErrorDelModelo)


def test_cada_resumen_parte_de_la_base_que_leyo(en_sqlite):
    assert el_puntero_solo_se_mueve_desde_su_base(en_sqlite["ruta"])
    anteriores = [anterior for _, _, anterior, _ in versiones(en_sqlite["ruta"])]
    ids = [i for i, _, _, _ in versiones(en_sqlite["ruta"])]
    assert anteriores == [None] + ids[:-1]


@pytest.mark.contrato("4.4")
def test_tras_cada_turno_reabrir_da_la_m_que_el_bucle_envia(en_sqlite, en_memoria):
    assert len(en_sqlite["pasos"]) == len(en_memoria["pasos"]) == 10
    assert reabrir_da_la_m_que_se_envia(en_sqlite, en_memoria)


def test_armar_sin_la_cola_no_pasa_la_comprobacion_de_reabrir(tmp_path, monkeypatch, en_memoria):
    ingenua = correr_ingenua(tmp_path, monkeypatch, durable, "armar", armar_sin_la_cola)
    assert ingenua["pasos"] and not reabrir_da_la_m_que_se_envia(ingenua, en_memoria)


def test_las_peticiones_son_las_de_compactar_en_memoria(en_sqlite, en_memoria):
    """El almacén cambia dónde vive M, no lo que ve el modelo: las mismas peticiones y los mismos usage."""
    assert sin_tiempos(en_sqlite["peticiones"]) == sin_tiempos(en_memoria["peticiones"])


@pytest.mark.contrato("4.4")
def test_un_compactador_nuevo_cada_turno_sobre_el_fichero_reabierto_hace_lo_mismo(tmp_path, en_memoria):
    """Lo único que pasa de un turno al siguiente es el fichero: así se retoma una ejecución."""
    ruta = tmp_path / "m.db"
    nuevo = correr(tmp_path, uno_nuevo_cada_turno(ruta), ruta)
    assert sin_tiempos(nuevo["peticiones"]) == sin_tiempos(en_memoria["peticiones"])
    assert reabrir_da_la_m_que_se_envia(nuevo, en_memoria)
    assert guarda_todo_lo_que_vio(nuevo) and corta_en_turnos_enteros(nuevo)


# --- Lo que hereda cada resumen -----------------------------------------------------------------------

def test_cada_resumen_cita_su_cobertura_y_hereda_las_afirmaciones_del_anterior(en_sqlite):
    notas = [p["salida"][inicio_de(p["salida"])][1] for p in en_sqlite["pasos"] if not p["tal_cual"]]
    assert len(notas) == len(versiones(en_sqlite["ruta"])) == 3
    anterior = []
    for (_, cobertura, _, afirmaciones), nota in zip(versiones(en_sqlite["ruta"]), notas, strict=True):
        nueva, *heredadas = afirmaciones
        assert nueva["fuente"] == cobertura and heredadas == anterior
        assert nota == NOTA + nueva["texto"]  # la nota es el último resumen, como con compactar
        anterior = afirmaciones


def test_la_nota_de_un_resumen_sin_afirmacion_en_su_cobertura_lo_muestra_entero():
    resumen = [{"texto": "Solo lectura.", "fuente": 1}, {"texto": "f2.py tiene el error.", "fuente": 3}]
    assert lo_que_dice(resumen, 5) == "Solo lectura.\n\nf2.py tiene el error."
    assert lo_que_dice(resumen, 3) == "f2.py tiene el error."


# --- Con M hechas a mano ------------------------------------------------------------------------

class Contado:
    """Un modelo de mentira: su `usage` dice `n` tokens, contesta `respuesta` y apunta lo que le piden.

    `mientras` se llama mientras «escribe» la respuesta: ahí puede actuar otro proceso.
    """

    def __init__(self, n, respuesta=RESPUESTA_DE_RESUMEN, mientras=None):
        self.usage = {"input_tokens": n, "output_tokens": 0}
        self.respuesta, self.mientras, self.pedidas = list(respuesta), mientras, []

    def __call__(self, M, herramientas=()):
        self.pedidas.append(copy.deepcopy(M))
        if self.mientras:
            self.mientras()
        return copy.deepcopy(self.respuesta)


def con_turnos(n):
    """La M que hay cuando acaba de llegar la respuesta n: n turnos de una llamada cada uno."""
    M = list(INICIO)
    for t in range(1, n + 1):
        M.append(("asistente", [texto("Turno %d." % t), llamada("t%d" % t, "leer", ruta="f%d.py" % t)]))
        if t < n:
            M.append(("usuario", [resultado("t%d" % t, "el fichero %d" % t)]))
    return M


def siguiente(M, t):
    """M con las observaciones del turno t - 1 y la respuesta del turno t."""
    return M + [("usuario", [resultado("t%d" % (t - 1), "el fichero %d" % (t - 1))]),
                ("asistente", [texto("Turno %d." % t), llamada("t%d" % t, "leer", ruta="f%d.py" % t)])]


@pytest.fixture
def ruta(tmp_path):
    return tmp_path / "m.db"


@pytest.fixture
def bd(ruta):
    bd = abrir(ruta)
    yield bd
    bd.close()


@pytest.mark.contrato("4.4")
def test_por_debajo_del_umbral_anota_pero_no_instala_y_m_vuelve_tal_cual(bd, ruta):
    M, modelo = con_turnos(4), Contado(UMBRAL)
    assert CompactacionDurable(bd, EJECUCION)(modelo, M) is M and modelo.pedidas == []
    assert list(historial(ruta).values()) == M[len(INICIO):] and versiones(ruta) == []


@pytest.mark.contrato("4.4")
@pytest.mark.parametrize("respuesta", [[llamada("r1", "leer", ruta="f1.py")], [texto("  ")], []])
def test_sin_resumen_no_se_instala_nada_y_m_vuelve_tal_cual(bd, ruta, respuesta):
    M, modelo = con_turnos(4), Contado(UMBRAL + 1, respuesta)
    assert CompactacionDurable(bd, EJECUCION)(modelo, M) is M and len(modelo.pedidas) == 1
    assert versiones(ruta) == []


@pytest.mark.contrato("4.4")
def test_con_m_a_mano_hace_lo_mismo_que_compactar(bd, ruta):
    compactador, M = CompactacionDurable(bd, EJECUCION), con_turnos(3)
    for t in range(4, 8):
        M = siguiente(M, t)
        a_mano = compactar(Contado(UMBRAL + 1), M)
        M = compactador(Contado(UMBRAL + 1), M)
        assert M == a_mano and reabrir_y_reconstruir(ruta, M) == M


@pytest.mark.contrato("4.4")
def test_si_otro_instala_mientras_el_modelo_resume_gana_el_otro_y_m_vuelve_tal_cual(bd, ruta):
    otro = abrir(ruta)  # otro compactador, otra conexión, sobre la misma ejecución
    compactador = CompactacionDurable(bd, EJECUCION)

    def el_otro_instala():
        base, _ = activo(otro, EJECUCION)
        instalar(otro, EJECUCION, base, 2, [{"texto": "El resumen del otro.", "fuente": 2}])

    M = con_turnos(4)
    assert compactador(Contado(UMBRAL + 1, mientras=el_otro_instala), M) is M
    (suyo, cobertura, _, _), = versiones(ruta)
    assert activo(otro, EJECUCION) == (suyo, cobertura) and el_puntero_solo_se_mueve_desde_su_base(ruta)

    # El turno siguiente parte del activo del otro, y hereda su afirmación.
    M = compactador(Contado(UMBRAL + 1), siguiente(M, 5))
    (_, _, _, _), (_, _, anterior, afirmaciones) = versiones(ruta)
    assert anterior == suyo and afirmaciones[1:] == [{"texto": "El resumen del otro.", "fuente": 2}]
    assert M[len(INICIO)] == ("usuario", NOTA + RESUMEN) and reabrir_y_reconstruir(ruta, M) == M
    assert el_puntero_solo_se_mueve_desde_su_base(ruta)
    otro.close()


def test_mover_el_puntero_sin_mirar_no_pasa_la_comprobacion_de_la_base(bd, ruta, monkeypatch):
    monkeypatch.setattr(resumenes, "mover_puntero", mover_sin_mirar)
    otro = abrir(ruta)
    compactador = CompactacionDurable(bd, EJECUCION)

    def el_otro_instala():
        base, _ = activo(otro, EJECUCION)
        instalar(otro, EJECUCION, base, 2, [{"texto": "El resumen del otro.", "fuente": 2}])

    compactador(Contado(UMBRAL + 1, mientras=el_otro_instala), con_turnos(4))
    otro.close()
    assert len(versiones(ruta)) == 2 and not el_puntero_solo_se_mueve_desde_su_base(ruta)


def test_si_otro_ya_resumio_hasta_el_corte_no_pide_resumen(bd, ruta):
    M = con_turnos(4)
    compactador = CompactacionDurable(bd, EJECUCION)
    compactador(Contado(0), M)  # anota los mensajes
    instalar(bd, EJECUCION, None, 6, [{"texto": "El resumen del otro.", "fuente": 6}])
    modelo = Contado(UMBRAL + 1)
    M = siguiente(M, 5)
    assert compactador(modelo, M) is M and modelo.pedidas == []  # cortaría en 6, y eso ya lo cubre otro


@pytest.mark.contrato("4.4")
def test_reconstruir_tras_reabrir_sirve_para_retomar_la_ejecucion(ruta):
    bd = abrir(ruta)
    M = CompactacionDurable(bd, EJECUCION)(Contado(UMBRAL + 1), con_turnos(4))
    bd.close()  # el proceso se acaba aquí; lo que sigue podría ser otro

    bd = abrir(ruta)
    retomada = reconstruir(bd, EJECUCION, INICIO)
    assert retomada == M
    M = CompactacionDurable(bd, EJECUCION)(Contado(UMBRAL + 1), siguiente(retomada, 5))
    assert reabrir_y_reconstruir(ruta, M) == M and len(versiones(ruta)) == 2
    bd.close()


# --- Entradas malas: un error claro, y nada escrito ------------------------------------------------

@pytest.mark.parametrize("M, dice", [
    ([], "no tiene pedido"),
    ([("sistema", "Eres un agente.")], "no tiene pedido"),
    (INICIO, "acabar en la respuesta"),
    (con_turnos(4)[:-1], "acabar en la respuesta"),
])
def test_una_m_mal_formada_da_el_error_de_compactar_y_no_escribe_nada(bd, ruta, M, dice):
    compactador = CompactacionDurable(bd, EJECUCION)
    antes, modelo = volcado(ruta), Contado(UMBRAL + 1)
    with pytest.raises(ValueError, match=dice):
        compactador(modelo, M)
    assert volcado(ruta) == antes and modelo.pedidas == []


def test_sin_usage_da_un_error_claro_y_no_escribe_nada(bd, ruta):
    compactador = CompactacionDurable(bd, EJECUCION)
    modelo = Contado(0)
    modelo.usage = None
    antes = volcado(ruta)
    with pytest.raises(ValueError, match="usage con input_tokens"):
        compactador(modelo, con_turnos(4))
    assert volcado(ruta) == antes


def test_una_m_que_no_sigue_a_la_anterior_da_un_error_claro(bd, ruta):
    compactador = CompactacionDurable(bd, EJECUCION)
    compactador(Contado(0), con_turnos(3))
    antes = volcado(ruta)
    otra = [("sistema", "Otro agente."), ("usuario", "Otro pedido.")] + con_turnos(4)[2:]
    with pytest.raises(ValueError, match="no sigue a la que devolvió"):
        compactador(Contado(0), otra)
    assert volcado(ruta) == antes


def test_retomar_con_una_m_que_no_es_la_guardada_da_un_error_claro(bd, ruta):
    CompactacionDurable(bd, EJECUCION)(Contado(0), con_turnos(3))
    antes = volcado(ruta)
    with pytest.raises(ValueError, match="empieza el bucle desde reconstruir"):
        CompactacionDurable(bd, EJECUCION)(Contado(0), con_turnos(2))
    assert volcado(ruta) == antes


def test_un_mensaje_se_guarda_como_el_json_de_rol_y_contenido():
    mensaje = ("asistente", [texto("Leo «recetas.txt»."), llamada("t1", "leer", ruta="recetas.txt")])
    assert json.loads(guardar(mensaje)) == list(mensaje) and "«" in guardar(mensaje)
    assert durable.recuperar(guardar(mensaje)) == mensaje


def test_durable_usa_las_piezas_de_compactar_sin_copiarlas():
    import compactar as c
    for nombre in ("tokens", "inicio_de", "corte", "INSTRUCCION", "NOTA", "UMBRAL", "RECIENTES"):
        assert getattr(durable, nombre) is getattr(c, nombre)


def test_el_modulo_dice_en_que_leccion_se_introdujo():
    assert "Lección 04" in durable.__doc__
