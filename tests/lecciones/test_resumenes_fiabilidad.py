"""La fiabilidad de `historial.py` y `resumenes.py` (punto de control 04): entradas malas, procesos que compiten
y procesos que mueren con SIGKILL a mitad de `instalar`.

El módulo se carga por su ruta con un nombre privado: los puntos de control tienen módulos que
se llaman igual. Los procesos hijos son intérpretes de verdad que ejecutan `HIJO` (abajo).
"""
import json
import random
import sqlite3
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ayudas import (HIJO_QUE_HABLA, decir_a, en_castellano, lanzar_hijo, leer, matar,
                    matar_en_su_pausa, rematar)
from curso.comprobaciones import hostiles
from curso.rutas import cargar_modulo
from curso.rutas import PUNTOS

RUTA_MODULO = PUNTOS / "04_resumenes_en_sqlite" / "resumenes.py"
R = cargar_modulo(RUTA_MODULO, "_resumenes_04_fiabilidad")
H = cargar_modulo(RUTA_MODULO.with_name("historial.py"), "_historial_04_fiabilidad")  # abrir, anotar...
EJECUCION = "r-1"
SOLO_LECTURA = {"texto": "Solo lectura", "fuente": 1}

PROCESOS_EN_CARRERA = 8
RONDAS_DE_CARRERA = 3
CAIDAS_AL_AZAR = 120
SEMILLA = 20240404
RETRASO_MAXIMO_S = 0.02  # cada hijo vive lo bastante para instalar unas cuantas veces


def volcado(bd):
    return "\n".join(bd.iterdump())


# --- 1. Entradas mal formadas: se rechazan y no cambian nada ------------------------------------

@pytest.fixture(scope="module")
def bd_fija(tmp_path_factory):
    """r-1: historial 1-6, resúmenes hasta 2 y hasta 4 (activo). r-2: historial 1-10, resumen hasta 8."""
    bd = H.abrir(tmp_path_factory.mktemp("entradas") / "entradas.db")
    ids = {}
    for ejecucion, mensajes, cortes in (("r-1", 6, (2, 4)), ("r-2", 10, (8,))):
        H.crear_ejecucion(bd, ejecucion)
        for n in range(1, mensajes + 1):
            H.anotar(bd, ejecucion, f"mensaje {n} de {ejecucion}")
        base = None
        for corte in cortes:
            base = ids[(ejecucion, corte)] = R.instalar(bd, ejecucion, base, corte, [SOLO_LECTURA])
    yield bd, ids
    bd.close()


TEXTOS_VALIDOS = st.text(min_size=1, max_size=20).filter(str.strip)
BLANCOS = st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2003\u3000", max_size=4)
# Enteros de más de 4300 cifras (repr() no los escribe) y valores anidados hasta miles de veces
# (repr() agota la pila): el mensaje que los rechaza no puede fallar por citarlos.
ENORMES = st.builds(hostiles.enorme, st.integers(hostiles.CIFRAS_QUE_REPR_NO_ESCRIBE, 6000), st.sampled_from([1, -1]))
ANIDADOS = st.builds(hostiles.anidado, st.integers(990, hostiles.PROFUNDIDAD_QUE_AGOTA_LA_PILA))
NO_TEXTOS = st.one_of(st.integers(), st.none(), st.binary(max_size=4), st.booleans(),
                      st.floats(), st.lists(st.text(max_size=3), max_size=2), ENORMES, ANIDADOS)
NO_ENTEROS_NI_NONE = st.one_of(st.booleans(), st.floats(), st.text(max_size=4), st.binary(max_size=2),
                               st.lists(st.integers(), max_size=2), st.decimals(allow_nan=False),
                               st.just(1.0), st.just("1"), st.just(hostiles.NAN), ANIDADOS)
NO_ENTEROS = st.one_of(NO_ENTEROS_NI_NONE, st.none())
FUERA_DE_RANGO = st.one_of(st.integers(max_value=0), st.integers(min_value=hostiles.FUERA_DE_INT64),
                              st.just(hostiles.MUY_FUERA_DE_INT64), ENORMES)
SUSTITUTO_SUELTO = st.just(hostiles.SUSTITUTO_EN_EJECUCION)  # no se puede codificar en UTF-8


def afirmaciones_validas(corte):
    return st.fixed_dictionaries({"texto": TEXTOS_VALIDOS, "fuente": st.integers(1, corte)})


def afirmaciones_malas(corte):
    fuente_valida = st.integers(1, corte)
    return st.one_of(
        st.one_of(st.text(max_size=5), st.integers(), st.none(), st.tuples(TEXTOS_VALIDOS, fuente_valida),
                  ENORMES, ANIDADOS),
        st.dictionaries(st.one_of(st.text(max_size=6), st.integers()), st.integers(), max_size=3)
        .filter(lambda d: set(d) != {"texto", "fuente"}),
        st.fixed_dictionaries({"texto": TEXTOS_VALIDOS}),
        st.fixed_dictionaries({"fuente": fuente_valida}),
        st.fixed_dictionaries({"texto": TEXTOS_VALIDOS, "fuente": fuente_valida,
                               "extra": st.integers()}),
        st.fixed_dictionaries({"texto": st.one_of(NO_TEXTOS, BLANCOS, SUSTITUTO_SUELTO),
                               "fuente": fuente_valida}),
        st.fixed_dictionaries({"texto": TEXTOS_VALIDOS,
                               "fuente": st.one_of(NO_ENTEROS, FUERA_DE_RANGO,
                                                   st.integers(corte + 1, hostiles.FUERA_DE_INT64 - 1))}),
    )


@st.composite
def llamadas_mal_formadas(draw, ids):
    """Una llamada válida a instalar() con exactamente un fallo."""
    corte = draw(st.sampled_from([5, 6]))
    candidato = draw(st.lists(afirmaciones_validas(corte), min_size=1, max_size=3))
    llamada = {"ejecucion": EJECUCION, "base": ids[("r-1", 4)], "corte": corte, "candidato": candidato}
    fallo = draw(st.sampled_from(["ejecucion", "base", "corte", "candidato", "afirmacion"]))
    if fallo == "ejecucion":
        llamada["ejecucion"] = draw(st.one_of(
            st.text(max_size=8).filter(lambda s: s != EJECUCION), st.just("r-2"), NO_TEXTOS, SUSTITUTO_SUELTO))
    elif fallo == "base":
        llamada["base"] = draw(st.one_of(
            NO_ENTEROS_NI_NONE, FUERA_DE_RANGO, st.just(ids[("r-2", 8)]),
            st.integers(max(ids.values()) + 1, hostiles.FUERA_DE_INT64 - 1)))
    elif fallo == "corte":
        llamada["corte"] = draw(st.one_of(
            NO_ENTEROS, FUERA_DE_RANGO, st.integers(1, 4), st.integers(7, hostiles.FUERA_DE_INT64 - 1)))
    elif fallo == "candidato":
        llamada["candidato"] = draw(st.one_of(
            st.just([]), st.just(tuple(candidato)), st.just(candidato[0]), st.text(max_size=5),
            st.none(), st.integers(), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
            ENORMES, ANIDADOS))
    else:
        posicion = draw(st.integers(0, len(candidato)))
        llamada["candidato"] = candidato[:posicion] + [draw(afirmaciones_malas(corte))] + candidato[posicion:]
    return llamada


def se_rechaza_sin_cambiar_nada(funcion, bd, **argumentos):
    """Llama a `funcion(bd, **argumentos)`, que debe lanzar una ValueError nuestra con su mensaje
    en castellano (no una subclase que se escapó, como UnicodeEncodeError, ni un OverflowError o un
    RecursionError de Python) y dejar la base como estaba. Devuelve el mensaje."""
    antes = volcado(bd)
    with pytest.raises(ValueError) as error:
        funcion(bd, **argumentos)
    assert type(error.value) is ValueError
    assert en_castellano(str(error.value)), str(error.value)
    assert not bd.in_transaction
    assert volcado(bd) == antes
    return str(error.value)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datos=st.data())
def test_toda_entrada_mal_formada_se_rechaza_sin_cambiar_nada(bd_fija, datos):
    bd, ids = bd_fija
    se_rechaza_sin_cambiar_nada(R.instalar, bd, **datos.draw(llamadas_mal_formadas(ids)))


@settings(max_examples=60, deadline=None)
@given(datos=st.data())
def test_toda_base_obsoleta_se_rechaza_sin_cambiar_nada(bd_fija, datos):
    bd, ids = bd_fija
    corte = datos.draw(st.sampled_from([5, 6]))
    candidato = datos.draw(st.lists(afirmaciones_validas(corte), min_size=1, max_size=3))
    base = datos.draw(st.sampled_from([None, ids[("r-1", 2)]]))  # ninguna de las dos es la activa
    antes = volcado(bd)
    with pytest.raises(R.BaseObsoleta):
        R.instalar(bd, EJECUCION, base, corte, candidato)
    assert volcado(bd) == antes


@st.composite
def punteros_mal_movidos(draw, ids):
    """Una llamada a mover_puntero() con exactamente un fallo; sin él, movería el puntero de r-1
    de su activo (hasta 4) a su resumen hasta 2."""
    llamada = {"ejecucion": EJECUCION, "base": ids[("r-1", 4)], "nuevo": ids[("r-1", 2)]}
    fallo = draw(st.sampled_from(["ejecucion", "base", "nuevo", "de_otra_ejecucion"]))
    if fallo == "ejecucion":  # también r-2, que existe: el resumen nuevo no es suyo
        llamada["ejecucion"] = draw(st.one_of(
            st.text(max_size=8).filter(lambda s: s != EJECUCION), st.just("r-2"), NO_TEXTOS, SUSTITUTO_SUELTO))
    elif fallo == "base":
        llamada["base"] = draw(st.one_of(NO_ENTEROS_NI_NONE, FUERA_DE_RANGO))
    elif fallo == "nuevo":
        llamada["nuevo"] = draw(st.one_of(NO_ENTEROS, FUERA_DE_RANGO,
                                          st.integers(max(ids.values()) + 1, hostiles.FUERA_DE_INT64 - 1)))
    else:  # el puntero de r-1 no puede señalar un resumen de r-2
        llamada["nuevo"] = ids[("r-2", 8)]
    return llamada


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datos=st.data())
def test_todo_puntero_mal_movido_se_rechaza_sin_cambiar_nada(bd_fija, datos):
    bd, ids = bd_fija
    se_rechaza_sin_cambiar_nada(R.mover_puntero, bd, **datos.draw(punteros_mal_movidos(ids)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corte=st.one_of(NO_ENTEROS, FUERA_DE_RANGO), ejecucion=st.sampled_from(["r-1", "r-2"]))
def test_validar_candidato_rechaza_todo_corte_que_no_es_un_entero_valido(bd_fija, corte, ejecucion):
    bd, _ = bd_fija
    mensaje = se_rechaza_sin_cambiar_nada(R.validar_candidato, bd, ejecucion=ejecucion, corte=corte,
                                          candidato=[SOLO_LECTURA])
    assert mensaje.startswith("El corte debe ser un entero positivo"), mensaje


# --- Los procesos hijos --------------------------------------------------------------------------

HIJO = HIJO_QUE_HABLA + r'''
import importlib.util, json, random, sys, time

ruta_modulo, modo, ruta_bd, argumento = sys.argv[1:5]
sys.path.insert(0, str(__import__("pathlib").Path(ruta_modulo).parent))  # su vecino validacion.py
especificacion = importlib.util.spec_from_file_location("_resumenes_hijo", ruta_modulo)
r = importlib.util.module_from_spec(especificacion)
especificacion.loader.exec_module(r)
import historial as h  # abrir y anotar, del vecino historial.py
EJECUCION = "r-1"


def candidato(corte):
    return [{"texto": "Solo lectura", "fuente": 1}, {"texto": f"visto hasta {corte}", "fuente": corte}]


def ultimo(bd):
    return bd.execute("SELECT MAX(seq) FROM historial WHERE ejecucion=?", (EJECUCION,)).fetchone()[0]


bd = h.abrir(ruta_bd)
if modo == "carrera":
    indice = int(argumento)
    while sys.stdin.readline().strip() == "ronda":
        base, cobertura = r.activo(bd, EJECUCION)
        corte = cobertura + 1 + indice % (ultimo(bd) - cobertura)
        decir("listo", base)
        sys.stdin.readline()  # «ya»: todos salen a la vez
        try:
            decir("gana", r.instalar(bd, EJECUCION, base, corte, candidato(corte)), base)
        except r.BaseObsoleta:
            decir("obsoleta", base)
        except Exception as error:
            decir("error", type(error).__name__, str(error))
elif modo == "pasos":
    texto = f"antes de la pausa {argumento}"
    decir("anotado", h.anotar(bd, EJECUCION, texto), texto)
    base, _ = r.activo(bd, EJECUCION)
    conexion = Pausador(bd, int(argumento))
    nuevo = r.instalar(conexion, EJECUCION, base, ultimo(bd), candidato(ultimo(bd)))
    if conexion.hechas == conexion.en:
        decir("pausa", conexion.en, "(tras instalar)")
        time.sleep(600)
    decir("terminado", nuevo, base)
elif modo == "azar":
    azar = random.Random(int(argumento))
    decir("listo")
    n = 0
    while True:
        for _ in range(azar.randint(1, 2)):
            n += 1
            texto = f"hijo {argumento}, mensaje {n}"
            decir("anotado", h.anotar(bd, EJECUCION, texto), texto)
        base, _ = r.activo(bd, EJECUCION)
        decir("instalando", base)
        decir("instalado", r.instalar(bd, EJECUCION, base, ultimo(bd), candidato(ultimo(bd))), base)
        time.sleep(azar.random() / 1000)
'''


def lanzar(modo, ruta_bd, argumento, con_entrada=False):
    return lanzar_hijo(HIJO, RUTA_MODULO, modo, ruta_bd, argumento, con_entrada=con_entrada)


def preparar(ruta, mensajes):
    bd = H.abrir(ruta)
    H.crear_ejecucion(bd, EJECUCION)
    historial = {}
    for n in range(1, mensajes + 1):
        texto = "Regla: solo lectura." if n == 1 else f"mensaje {n}"
        historial[H.anotar(bd, EJECUCION, texto)] = texto
    inicial = R.instalar(bd, EJECUCION, None, 1, [SOLO_LECTURA])
    return bd, historial, inicial


def comprobar_base(ruta, historial_esperado):
    """Reabre la base (con SQL directo, sin el módulo que se prueba) y comprueba que está entera.

    Devuelve (puntero, cadena de resúmenes desde el puntero: [(id, cobertura, anterior)]).
    """
    bd = sqlite3.connect(ruta, isolation_level=None)
    try:
        assert bd.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        bd.execute("PRAGMA foreign_keys=ON")
        assert bd.execute("PRAGMA foreign_key_check").fetchall() == []
        historial = dict(bd.execute(
            "SELECT seq, texto FROM historial WHERE ejecucion=? ORDER BY seq", (EJECUCION,)))
        assert list(historial) == list(range(1, len(historial) + 1)), "huecos en el historial"
        for seq, texto in historial_esperado.items():
            assert historial.get(seq) == texto, f"falta o cambió el mensaje {seq}"
        (puntero,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=?", (EJECUCION,)).fetchone()
        cadena, actual, tope = [], puntero, len(historial)
        while actual is not None:
            ejecucion, cobertura, cuerpo, anterior = bd.execute(
                "SELECT ejecucion, cobertura, cuerpo, anterior FROM resumenes WHERE id=?", (actual,)).fetchone()
            assert ejecucion == EJECUCION and 1 <= cobertura <= tope, "cobertura incoherente"
            afirmaciones = json.loads(cuerpo)
            assert afirmaciones and all(set(a) == {"texto", "fuente"} for a in afirmaciones)
            assert all(type(a["fuente"]) is int and 1 <= a["fuente"] <= cobertura for a in afirmaciones)
            assert SOLO_LECTURA in afirmaciones
            cadena.append((actual, cobertura, anterior))
            actual, tope = anterior, cobertura - 1
        # Un solo escritor que nunca llega tarde: toda versión guardada está en la cadena.
        todos = {i for (i,) in bd.execute("SELECT id FROM resumenes")}
        assert todos == {i for i, _, _ in cadena}, "hay versiones de resumen sueltas"
        return puntero, cadena
    finally:
        bd.close()


# --- 2. Procesos que compiten por la misma base ---------------------------------------------------

def test_ocho_procesos_en_carrera_gana_uno_por_base(tmp_path):
    ruta = tmp_path / "carrera.db"
    bd, _, _ = preparar(ruta, 2)
    hijos = [lanzar("carrera", ruta, i, con_entrada=True) for i in range(PROCESOS_EN_CARRERA)]
    try:
        for ronda in range(RONDAS_DE_CARRERA):
            for n in range(PROCESOS_EN_CARRERA):
                H.anotar(bd, EJECUCION, f"ronda {ronda}, mensaje {n}")
            base, _ = R.activo(bd, EJECUCION)
            decir_a(hijos, "ronda")
            assert [leer(h) for h in hijos] == [["listo", base]] * len(hijos)  # todos leen la misma
            decir_a(hijos, "ya")  # la barrera: salen a la vez
            respuestas = [leer(h) for h in hijos]
            ganadores = [r for r in respuestas if r[0] == "gana"]
            assert len(ganadores) == 1, respuestas
            assert sorted(r[0] for r in respuestas) == ["gana"] + ["obsoleta"] * (len(hijos) - 1), respuestas
            assert R.activo(bd, EJECUCION)[0] == ganadores[0][1]
        decir_a(hijos, "fin")
        for hijo in hijos:
            assert hijo.wait(timeout=20) == 0, hijo.stderr.read()
    finally:
        rematar(hijos)
        bd.close()
    # Una versión por ronda, y ninguna de las perdedoras quedó guardada.
    assert len(comprobar_base(ruta, {})[1]) == 1 + RONDAS_DE_CARRERA


# --- 3. Caídas con SIGKILL ----------------------------------------------------------------------

def test_una_caida_en_cada_paso_de_instalar_deja_el_resumen_antiguo_o_el_nuevo(tmp_path):
    ruta = tmp_path / "pasos.db"
    bd, historial, _ = preparar(ruta, 3)
    bd.close()
    pasos_vistos = []
    for en in range(100):  # muchos más que las sentencias de un instalar()
        puntero_antes, cadena_antes = comprobar_base(ruta, historial)
        hijo = lanzar("pasos", ruta, en)
        try:
            _, seq, texto = leer(hijo)
            historial[seq] = texto
            mensaje = matar_en_su_pausa(hijo)
        finally:
            rematar([hijo])
        if mensaje[0] == "terminado":
            break
        paso = mensaje[2]
        pasos_vistos.append(paso)
        puntero, cadena = comprobar_base(ruta, historial)
        if paso == "(tras instalar)":  # el COMMIT ya se hizo: el nuevo, encima del antiguo
            assert cadena[1:] == cadena_antes and cadena[0][1] == seq
        else:  # muerto antes de su COMMIT: el antiguo, sin restos del nuevo
            assert (puntero, cadena) == (puntero_antes, cadena_antes)
    else:
        pytest.fail("instalar() no terminó nunca")
    assert {"BEGIN", "SELECT", "INSERT", "UPDATE", "COMMIT", "(tras instalar)"} <= set(pasos_vistos)


def test_cien_caidas_al_azar_nunca_dejan_la_base_a_medias(tmp_path):
    ruta = tmp_path / "azar.db"
    bd, historial, puntero = preparar(ruta, 1)
    bd.close()
    azar = random.Random(SEMILLA)
    caidas_durante_instalar = 0
    for caida in range(CAIDAS_AL_AZAR):
        hijo = lanzar("azar", ruta, azar.randrange(2**32))
        try:
            assert leer(hijo) == ["listo"]
            time.sleep(azar.uniform(0, RETRASO_MAXIMO_S))
            matar(hijo)
        finally:
            rematar([hijo])
        mensajes = [json.loads(linea) for linea in hijo.stdout.read().splitlines()]
        for mensaje in mensajes:
            if mensaje[0] == "anotado":
                historial[mensaje[1]] = mensaje[2]
            elif mensaje[0] == "instalado":
                assert mensaje[2] == puntero  # cada instalación parte de la anterior
                puntero = mensaje[1]
        if mensajes and mensajes[-1][0] == "instalando":
            caidas_durante_instalar += 1
        ahora, cadena = comprobar_base(ruta, historial)
        # El último resumen que el hijo dijo haber instalado, o uno más que confirmó sin llegar
        # a decirlo, hecho encima de aquel.
        assert ahora == puntero or (len(cadena) > 1 and cadena[1][0] == puntero), f"caída {caida}"
        puntero = ahora
    assert caidas_durante_instalar > 0  # el simulacro sí alcanza el momento delicado
