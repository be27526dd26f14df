"""Punto de control 03b: el contrato de la limpieza, y el orden de las capas en el bucle.

Las cinco promesas de `limpiar`, cada una con su comprobación, con hypothesis sobre M al azar
(cuántos turnos, qué herramientas, resultados largos y cortos, uso alrededor del disparo,
`conservar`, `al_menos` y `excluir` al azar), y junto a cada una una variante ingenua que la rompe:

1. cada `tool_use` sigue con su `tool_result` justo detrás (la variante que quita el resultado
   deja una llamada huérfana: la API real contesta 400);
2. los `conservar` últimos resultados y los de `excluir`, byte a byte iguales;
3. limpiar dos veces es limpiar una, y solo cambian contenidos: ningún mensaje sale ni se mueve;
4. libera al menos `al_menos` tokens (los que dice, contados aparte), o no toca nada;
5. la M que recibe no cambia, y la traza guarda el original de cada resultado.

Después, el orden de las capas: limpiar primero, compactar solo si no bastó (la variante que
compacta primero resume aunque limpiar habría bastado), y las dos ejecuciones guionizadas de la
lección: `arregla`, que limpiando no necesita ningún resumen, y `compacta`, donde limpiar no basta
y la compactación entra, más tarde que sin limpiar.
"""
import copy
import json
import re
import tempfile

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agente import agente
from bucle import bucle
from compactar import INSTRUCCION, compactar, tokens
from correr import Traza
from curso.ensayo.recetario import usuario_guionizado
from curso.rutas import RECETARIO
from entorno import llamada, resultado, texto
from curso.ensayo.guionizado import ModeloGuionizado
from limpiar import (AL_MENOS, CONSERVAR, DISPARO, EXCLUIR, Descontado, estimar, limpiar, llamadas_por_id,
                     marcador, resultados)
from test_compactar import cada_llamada_con_su_observacion

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla recetario.py.")]
LARGO = "def f():\n    return 1\n" * 200  # un fichero que ocupa mucho más que su marcador


def con_resultados(herramientas, largos=None):
    """Una M tal como la ve limpiar: un turno por herramienta de `herramientas`, cada uno con su
    resultado, y al final la respuesta del turno en curso, con una llamada sin atender.

    `largos[i]` es cuántas veces va LARGO en el resultado i (1 si no se dice; 0: un resultado corto)."""
    M = list(INICIO)
    for t, nombre in enumerate(herramientas, start=1):
        entrada = {"comando": "python3 -m unittest"} if nombre == "ejecutar" else {"ruta": f"f{t}.py"}
        M.append(("asistente", [texto(f"Turno {t}."), llamada(f"t{t}", nombre, **entrada)]))
        veces = 1 if largos is None else largos[t - 1]
        M.append(("usuario", [resultado(f"t{t}", LARGO * veces if veces else "ok")]))
    M.append(("asistente", [llamada("t_fin", "leer", ruta="fin.py")]))
    return M


def bloques_resultado(M):
    return [M[i][1][j] for i, j in resultados(M)]


# --- Las comprobaciones, una por promesa --------------------------------------------------------

def cada_resultado_tras_su_llamada(nuevo):
    """1: como en la compactación, y además el mismo número de resultados que de llamadas atendidas."""
    return cada_llamada_con_su_observacion(nuevo)


def conservados_y_excluidos_intactos(M, nuevo, conservar, excluir):
    """2: los `conservar` últimos resultados y los de las herramientas de `excluir`, idénticos."""
    usos = llamadas_por_id(M)
    antes, despues = bloques_resultado(M), bloques_resultado(nuevo)
    if len(antes) != len(despues):
        return False
    intocables = set(range(max(len(antes) - conservar, 0), len(antes)))
    intocables |= {n for n, b in enumerate(antes) if usos[b["tool_use_id"]]["name"] in excluir}
    return all(json.dumps(antes[n]) == json.dumps(despues[n]) for n in intocables)


def solo_contenidos_e_idempotente(M, nuevo, limpiador):
    """3: los mismos mensajes en el mismo orden, con los mismos bloques salvo el `content` de
    algún tool_result; y limpiar otra vez lo ya limpio no cambia nada."""
    if len(nuevo) != len(M):
        return False
    for (rol, c), (rol_n, c_n) in zip(M, nuevo, strict=True):
        if rol != rol_n or type(c) is not type(c_n):
            return False
        if not isinstance(c, list):
            if c != c_n:
                return False
            continue
        if len(c) != len(c_n):
            return False
        for b, b_n in zip(c, c_n, strict=True):
            fuera = {k: v for k, v in b.items() if not (b["type"] == "tool_result" and k == "content")}
            fuera_n = {k: v for k, v in b_n.items() if not (b["type"] == "tool_result" and k == "content")}
            if fuera != fuera_n:
                return False
    otra, liberados = limpiador(nuevo)
    return otra == nuevo and liberados == 0


def al_menos_o_nada(M, nuevo, liberados, al_menos):
    """4: o nada (la misma M y 0), o lo liberado, contado aquí bloque a bloque, llega a `al_menos`."""
    if nuevo is M:
        return liberados == 0
    contados = sum(estimar(b["content"]) - estimar(b_n["content"])
                   for b, b_n in zip(bloques_resultado(M), bloques_resultado(nuevo), strict=True) if b != b_n)
    return liberados == contados >= al_menos and liberados > 0


def la_m_recibida_intacta(antes, M):
    """5: la M que se le pasó sigue como estaba (la copia se tomó antes de llamar)."""
    return M == antes


# --- Las variantes ingenuas: cada una rompe una comprobación -------------------------------------

def quita_los_resultados_viejos(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Más sitio todavía: en vez de un marcador, el resultado viejo se quita del mensaje."""
    todos = resultados(M)
    viejos = set(todos[:max(len(todos) - conservar, 0)])
    nuevo = [(rol, [b for j, b in enumerate(c) if (i, j) not in viejos]) if isinstance(c, list) else (rol, c)
             for i, (rol, c) in enumerate(M)]
    return nuevo, 1


def sin_conservar_ni_excluir(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Todo lo que se pueda: también los últimos resultados y los de las herramientas excluidas."""
    return limpiar(M, usado, disparo, 0, al_menos, ())


def marcador_con_la_cuenta(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """El marcador dice cuánto ocupaba lo borrado; no mira si ya estaba borrado, así que otra
    pasada borra el marcador y pone otro."""
    if usado <= disparo:
        return M, 0
    todos = resultados(M)
    viejos = set(todos[:max(len(todos) - conservar, 0)])
    nuevo = [(rol, [dict(b, content=f"[Borrado: ocupaba {len(b['content'])} caracteres.]") if (i, j) in viejos
                    else b for j, b in enumerate(c)]) if isinstance(c, list) else (rol, c)
             for i, (rol, c) in enumerate(M)]
    return nuevo, 1


def quita_el_mensaje(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Limpia turnos enteros: quita el primer turno (llamada y resultados) en vez de su contenido."""
    if usado <= disparo or len(M) < 6:
        return M, 0
    return M[:2] + M[4:], estimar(M[3][1][0]["content"])


def sin_al_menos(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Limpia lo que haya, aunque sea poco: cada poco rompe la caché por casi nada."""
    return limpiar(M, usado, disparo, conservar, 1, excluir)


def limpia_en_su_sitio(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Ahorra copias: cambia el contenido en los bloques de M, que son los de la traza y los de quien llamó."""
    nuevo, liberados = limpiar(M, usado, disparo, conservar, al_menos, excluir)
    for (i, j) in resultados(M):
        M[i][1][j]["content"] = nuevo[i][1][j]["content"]
    return M, liberados


# --- Cada promesa, y su variante que la rompe ----------------------------------------------------

HERRAMIENTAS_DE_PRUEBA = ["leer", "leer", "ejecutar", "editar", "leer", "leer"]
USADO = DISPARO + 1


@pytest.mark.contrato("3b.1")
def test_cada_llamada_sigue_con_su_resultado():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    nuevo, liberados = limpiar(M, USADO)
    assert liberados > 0 and cada_resultado_tras_su_llamada(nuevo)


def test_quitar_los_resultados_viejos_deja_llamadas_huerfanas():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    assert not cada_resultado_tras_su_llamada(quita_los_resultados_viejos(M, USADO)[0])


@pytest.mark.contrato("3b.1")
def test_los_ultimos_y_los_excluidos_quedan_byte_a_byte():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA, largos=[1, 1, 1, 1, 1, 1])
    nuevo, _ = limpiar(M, USADO)
    assert conservados_y_excluidos_intactos(M, nuevo, CONSERVAR, EXCLUIR)
    assert [b["content"] == LARGO for b in bloques_resultado(nuevo)] == [False, False, False, True, True, True]


def test_limpiar_tambien_los_ultimos_y_los_excluidos_no_pasa_la_comprobacion():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    assert not conservados_y_excluidos_intactos(M, sin_conservar_ni_excluir(M, USADO)[0], CONSERVAR, EXCLUIR)


@pytest.mark.contrato("3b.1")
def test_limpiar_dos_veces_es_limpiar_una_y_solo_cambia_contenidos():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    nuevo, _ = limpiar(M, USADO)
    assert solo_contenidos_e_idempotente(M, nuevo, lambda m: limpiar(m, USADO))


def test_un_marcador_que_no_se_reconoce_no_es_idempotente():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    nuevo, _ = marcador_con_la_cuenta(M, USADO)
    assert not solo_contenidos_e_idempotente(M, nuevo, lambda m: marcador_con_la_cuenta(m, USADO))


def test_quitar_el_mensaje_en_vez_de_su_contenido_no_pasa_la_comprobacion():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    nuevo, _ = quita_el_mensaje(M, USADO)
    assert not solo_contenidos_e_idempotente(M, nuevo, lambda m: limpiar(m, USADO))


@pytest.mark.contrato("3b.1")
def test_libera_al_menos_al_menos_o_no_toca_nada():
    M = con_resultados(["leer", "leer", "leer", "leer"], largos=[0, 1, 1, 1])  # uno viejo grande, uno corto
    grande = estimar(LARGO) - estimar(marcador(llamadas_por_id(M)["t2"]))
    nuevo, liberados = limpiar(M, USADO, al_menos=grande)
    assert nuevo is not M and al_menos_o_nada(M, nuevo, liberados, grande)
    nuevo, liberados = limpiar(M, USADO, al_menos=grande + 1)
    assert nuevo is M and liberados == 0 and al_menos_o_nada(M, nuevo, liberados, grande + 1)


def test_limpiar_por_poco_no_pasa_la_comprobacion_del_al_menos():
    M = con_resultados(["leer", "leer", "leer", "leer"], largos=[0, 1, 1, 1])
    assert not al_menos_o_nada(M, *sin_al_menos(M, USADO, al_menos=10 ** 6), 10 ** 6)


@pytest.mark.contrato("3b.1")
def test_no_cambia_la_m_que_recibe():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    antes = copy.deepcopy(M)
    limpiar(M, USADO)
    assert la_m_recibida_intacta(antes, M)


def test_limpiar_en_su_sitio_no_pasa_la_comprobacion():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    antes = copy.deepcopy(M)
    limpia_en_su_sitio(M, USADO)
    assert not la_m_recibida_intacta(antes, M)


# Derandomizado y con el borde de `conservar` mayor que los resultados que hay (dos resultados largos y
# conservar=3) como ejemplo fijo: un corte `todos[:len(todos) - conservar]` se vuelve negativo ahí y
# limpia lo que tenía que conservar. Al azar, este test lo pillaba 2 veces de cada 8 (hallazgo 5 de
# la issue 40); así, siempre, y el mismo código da el mismo veredicto cada vez.
@pytest.mark.contrato("3b.1")
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@example(herramientas=["leer", "leer"], largos=[1] * 8, usado=DISPARO + 1, conservar=3, al_menos=1, excluir=())
@given(herramientas=st.lists(st.sampled_from(["leer", "ejecutar", "editar"]), max_size=8),
       largos=st.lists(st.integers(0, 2), min_size=8, max_size=8),
       usado=st.integers(DISPARO - 2, DISPARO + 2), conservar=st.integers(0, 3),
       al_menos=st.sampled_from([1, 200, AL_MENOS, 5000]),
       excluir=st.sampled_from([(), ("editar",), ("leer", "editar")]))
def test_las_cinco_promesas_con_m_al_azar(herramientas, largos, usado, conservar, al_menos, excluir):
    M = con_resultados(herramientas, largos[:len(herramientas)])
    antes = copy.deepcopy(M)
    nuevo, liberados = limpiar(M, usado, conservar=conservar, al_menos=al_menos, excluir=excluir)
    assert cada_resultado_tras_su_llamada(nuevo)
    assert conservados_y_excluidos_intactos(M, nuevo, conservar, excluir)
    assert solo_contenidos_e_idempotente(M, nuevo, lambda m: limpiar(m, usado, conservar=conservar,
                                                                      al_menos=al_menos, excluir=excluir))
    assert al_menos_o_nada(M, nuevo, liberados, al_menos)
    assert la_m_recibida_intacta(antes, M)
    if usado <= DISPARO:
        assert nuevo is M


# --- Los detalles -----------------------------------------------------------------------------

@pytest.mark.contrato("3b.1")
def test_hasta_el_disparo_no_se_limpia():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    assert limpiar(M, DISPARO) == (M, 0) and limpiar(M, DISPARO)[0] is M
    assert limpiar(M, DISPARO + 1)[0] is not M


@pytest.mark.contrato("3b.1")
def test_el_marcador_nombra_la_herramienta_su_entrada_y_como_recuperarlo():
    M = con_resultados(HERRAMIENTAS_DE_PRUEBA)
    nuevo, _ = limpiar(M, USADO)
    primero, tercero = bloques_resultado(nuevo)[0]["content"], bloques_resultado(nuevo)[2]["content"]
    assert 'leer(ruta="f1.py")' in primero and "vuelve a pedirlo" in primero
    assert 'ejecutar(comando="python3 -m unittest")' in tercero


def test_una_entrada_larga_se_corta_en_el_marcador():
    uso = llamada("t1", "ejecutar", comando="echo " + "x" * 500)
    assert len(marcador(uso)) < 200 and "…" in marcador(uso)


@pytest.mark.contrato("3b.1")
def test_un_resultado_mas_corto_que_su_marcador_no_se_toca():
    M = con_resultados(["leer", "leer", "leer", "leer"], largos=[0, 1, 1, 1])
    nuevo, _ = limpiar(M, USADO, al_menos=1)
    assert bloques_resultado(nuevo)[0]["content"] == "ok"
    assert bloques_resultado(nuevo)[1]["content"] != LARGO


@pytest.mark.contrato("3b.1")
def test_conservar_negativo_da_un_error_claro():
    with pytest.raises(ValueError):  # el texto del 3b.1 fija el ValueError, no sus palabras
        limpiar(con_resultados(["leer"]), USADO, conservar=-1)


def test_conservar_negativo_lo_dice_nombrando_conservar():
    with pytest.raises(ValueError, match="conservar"):
        limpiar(con_resultados(["leer"]), USADO, conservar=-1)


def test_descontado_resta_lo_liberado_y_pasa_las_peticiones_tal_cual():
    class Modelo:
        usage = {"input_tokens": 900, "cache_read_input_tokens": 4000, "output_tokens": 100}

        def __call__(self, M, herramientas=()):
            return [texto(f"{len(M)} mensajes")]

    visto = Descontado(Modelo(), 1500)
    assert tokens(visto) == 5000 - 1500
    assert visto([1, 2, 3]) == [texto("3 mensajes")]
    assert Modelo.usage["input_tokens"] == 900  # el del modelo no cambia


# --- El orden de las capas en el bucle ---------------------------------------------------------

class Lleno:
    """Un modelo de prueba: cada petición pide leer el mismo fichero grande, y su `usage` dice lo
    que ocupa la M que recibió (a 3 caracteres por token); a la petición del resumen contesta con
    un resumen, y los cuenta."""

    def __init__(self):
        self.usage, self.resumenes, self.turno = None, 0, 0

    def __call__(self, M, herramientas=()):
        self.usage = {"input_tokens": len(json.dumps(M, ensure_ascii=False)) // 3,
                      "cache_read_input_tokens": 0, "output_tokens": 0}
        if M[-1] == ("usuario", INSTRUCCION):
            self.resumenes += 1
            return [texto("Resumen.")]
        self.turno += 1
        return [llamada(f"t{self.turno}", "leer", ruta="grande.txt")]


def compacta_primero(modelo, inicio, entorno, tope, usuario=None, compactar=None, limpiar=None):
    """El bucle con las capas al revés: compactar mira el usage de antes de limpiar."""
    from entorno import HERRAMIENTAS, llamadas_de
    from permisos import atender
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        M = compactar(modelo, M)
        M, _ = limpiar(M, tokens(modelo))
        M.append(("usuario", [atender(p, entorno, usuario) for p in pedidas]))
    return "tope", None, M


def correr_lleno(tmp_path, funcion):
    """Tres lecturas de ~1500 tokens pasan del umbral; limpiar la más vieja vuelve a dejar M debajo."""
    (tmp_path / "grande.txt").write_text("una línea de un fichero grande\n" * 150, encoding="utf-8")
    modelo = Lleno()
    funcion(modelo, INICIO, tmp_path, 8, compactar=compactar, limpiar=limpiar)
    return modelo


def test_si_limpiar_basta_no_se_compacta(tmp_path):
    assert correr_lleno(tmp_path, bucle).resumenes == 0


def test_compactar_antes_de_limpiar_resume_aunque_limpiar_bastaba(tmp_path):
    assert correr_lleno(tmp_path, compacta_primero).resumenes > 0


def test_sin_limpiar_el_bucle_es_el_de_la_leccion_03(tmp_path):
    (tmp_path / "grande.txt").write_text("una línea de un fichero grande\n" * 150, encoding="utf-8")
    uno, otro = Lleno(), Lleno()
    assert bucle(uno, INICIO, tmp_path, 8, compactar=compactar) == bucle(otro, INICIO, tmp_path, 8,
                                                                         compactar=compactar, limpiar=None)
    assert uno.resumenes == otro.resumenes > 0


# --- Las dos ejecuciones de la lección -------------------------------------------------------------

class Apuntando:
    """Envuelve a un modelo y apunta cada petición: (¿es la del resumen?, el usage)."""

    def __init__(self, modelo):
        self.modelo, self.peticiones = modelo, []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        respuesta = self.modelo(M, herramientas)
        self.peticiones.append((M[-1] == ("usuario", INSTRUCCION), dict(self.modelo.usage)))
        return respuesta


def ejecutar(guion, tope, con_limpieza, tmp_path):
    """(motivo, peticiones, M, traza) del agente con compactar y, si se pide, limpiar."""
    tempfile.tempdir, antes = str(tmp_path), tempfile.tempdir
    try:
        modelo = Traza(Apuntando(ModeloGuionizado(guion)))
        motivo, _, M, _ = agente(modelo, PEDIDO, RECETARIO, tope, usuario_guionizado, compactar=compactar,
                                 limpiar=limpiar if con_limpieza else None)
    finally:
        tempfile.tempdir = antes
    return motivo, modelo.modelo.peticiones, M, modelo


def turnos_antes_de_cada_resumen(peticiones):
    return [sum(1 for es, _ in peticiones[:i] if not es) for i, (es, _) in enumerate(peticiones) if es]


def test_arregla_limpiando_acaba_sin_ningun_resumen_y_sin_limpiar_necesita_uno(tmp_path, capsys):
    motivo, peticiones, _, _ = ejecutar("arregla", 10, True, tmp_path)
    assert motivo == "fin" and turnos_antes_de_cada_resumen(peticiones) == []
    motivo_sin, peticiones_sin, _, _ = ejecutar("arregla", 10, False, tmp_path)
    assert motivo_sin == "fin" and len(turnos_antes_de_cada_resumen(peticiones_sin)) >= 1


def test_en_compacta_limpiar_no_basta_y_el_primer_resumen_llega_mas_tarde(tmp_path, capsys):
    _, con, _, _ = ejecutar("compacta", 11, True, tmp_path)
    _, sin, _, _ = ejecutar("compacta", 11, False, tmp_path)
    assert turnos_antes_de_cada_resumen(con), "con compacta, limpiar solo no basta"
    assert turnos_antes_de_cada_resumen(con)[0] > turnos_antes_de_cada_resumen(sin)[0]
    assert len(turnos_antes_de_cada_resumen(con)) < len(turnos_antes_de_cada_resumen(sin))


def test_la_traza_guarda_el_original_de_cada_resultado_borrado(tmp_path, capsys):
    _, _, M, traza = ejecutar("arregla", 10, True, tmp_path)
    borrados = [b for b in bloques_resultado(M) if b["content"] != traza.originales[b["tool_use_id"]]]
    assert borrados and all(b["content"].startswith("[Resultado borrado") for b in borrados)
    assert all(len(traza.originales[b["tool_use_id"]]) > len(b["content"]) for b in borrados)
    salida = capsys.readouterr().out
    assert re.search(r"^  ✂ limpiados \d+ resultados viejos", salida, re.M)


@pytest.mark.parametrize("variante", ["correcta", "sin_mirar_el_tipo"])
def test_la_traza_solo_guarda_los_resultados_de_un_mensaje_del_usuario(variante):
    """La API admite texto junto a los `tool_result` de un mensaje del usuario: la traza guarda el
    original de cada resultado y no toma por resultado lo demás. La variante ingenua (sin mirar el
    tipo del bloque) busca el `tool_use_id` de un bloque de texto y revienta."""
    class Contesta:
        usage = {"input_tokens": 1}

        def __call__(self, M, herramientas=()):
            return [texto("hecho")]

    class SinMirarElTipo(Traza):
        def _mirar_resultados(self, M):
            for rol, contenido in M:
                for bloque in contenido if rol == "usuario" and isinstance(contenido, list) else []:
                    self.originales.setdefault(bloque["tool_use_id"], bloque["content"])

    traza = (Traza if variante == "correcta" else SinMirarElTipo)(Contesta())
    M = [("sistema", "s"), ("usuario", "p"), ("asistente", [llamada("t1", "leer", ruta="a")]),
         ("usuario", [resultado("t1", "contenido"), texto("y una nota")])]
    try:
        traza(M)
    except KeyError:
        assert variante == "sin_mirar_el_tipo"
    else:
        assert variante == "correcta" and traza.originales == {"t1": "contenido"}
