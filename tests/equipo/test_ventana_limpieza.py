"""El explorable de la limpieza (lección 03b): las piezas con sus resultados, la raya de la caché, los totales, el veredicto y la vista.

Los datos son de verdad: la conversación del atasco de la lección 01 mandada petición a petición al
motor del servidor de ensayo con dos limpiezas hechas a mano (`tests/corridas_de_limpieza.py`), así
que cada `usage` lo ha contado el servidor. Ninguna cifra esperada está escrita a mano. Cada
invariante tiene al lado una variante ingenua que lo rompe, para que se vea que el test puede fallar.
"""
import copy
import html

import pytest

from corridas_de_limpieza import corrida, dos_corridas, marcador, originales_de
from curso.ensayo.motor import Ensayo
from curso.explorables.ventana import limpieza as l
from curso.medir.redibujo_de_la_ventana import atasco


@pytest.fixture(scope="module")
def traza():
    return atasco()


@pytest.fixture(scope="module")
def corridas(traza):
    return dos_corridas(traza)


@pytest.fixture(scope="module")
def pares(traza, corridas):
    a, b, originales = corridas
    return l.comparar(a, b, originales, traza["herramientas"], traza["fichero"])


def _todas(pares):
    return [p for par in pares for p in par]


def _suma(piezas):
    return sum(p.tokens for p in piezas)


# --- Las piezas suman lo que cuenta el servidor --------------------------------------------------

def test_las_piezas_suman_lo_que_cuenta_el_servidor(corridas, pares):
    a, b, _ = corridas
    for (_, usage), p in zip(a + b, [x for x, _ in pares] + [y for _, y in pares], strict=True):
        assert _suma(p.piezas) == usage["input_tokens"] + usage["cache_read_input_tokens"]
    assert any(p.en_cache > 0 for p in _todas(pares))  # si no, la variante no diría nada


def test_tomar_input_tokens_por_la_peticion_entera_no_suma(corridas, pares):
    """La variante ingenua: leer `input_tokens` como toda la entrada. Con la caché, es solo lo
    recalculado, y las piezas no lo suman."""
    a, _, _ = corridas
    ingenuas = [usage["input_tokens"] for _, usage in a]
    de_verdad = [_suma(p.piezas) for p, _ in pares]
    assert ingenuas != de_verdad


def test_un_usage_que_no_es_el_de_esa_m_se_dice(traza, corridas):
    a, _, originales = corridas
    cambiada = [a[0], (a[1][0], a[2][1])] + a[2:]
    with pytest.raises(ValueError, match="no es el de esa M"):
        l.peticiones_de(cambiada, originales, traza["herramientas"], traza["fichero"])


# --- Entero o borrado: se compara con el original ------------------------------------------------

def test_un_resultado_igual_a_su_original_es_entero_y_uno_cambiado_es_borrado(corridas, pares):
    a, b, originales = corridas
    for (M, _), p in zip(a + b, [x for x, _ in pares] + [y for _, y in pares], strict=True):
        contenidos = [bl["content"] == originales[bl["tool_use_id"]] for rol, c in M[2:]
                      if rol == "usuario" for bl in c]
        tipos = [q.tipo for q in p.piezas if q.tipo in (l.ENTERO, l.BORRADO)]
        assert tipos == [l.ENTERO if igual else l.BORRADO for igual in contenidos]
    assert any(p.resultados(l.BORRADO) for p in _todas(pares))
    assert any(p.resultados(l.ENTERO) for p in _todas(pares))


def _borrado_por_el_texto(peticion, M):
    """La variante ingenua: «borrado» si el contenido empieza como un marcador."""
    return [l.BORRADO if bl["content"].startswith("[Resultado borrado") else l.ENTERO
            for rol, c in M[2:] if rol == "usuario" for bl in c]


def test_un_fichero_que_parece_un_marcador_sigue_entero(traza):
    """Un fichero de verdad cuyo texto es como un marcador: comparando con el original sale
    entero; buscando el texto del marcador, la variante ingenua lo da por borrado."""
    def parecido(M):
        uso = M[2][1][0]
        M[3][1][0]["content"] = marcador(uso)  # lo que «leyó» del fichero parece un marcador

    M_entera = copy.deepcopy(traza["M"])
    parecido(M_entera)
    peticiones = corrida(traza["M"], traza["herramientas"], 10 ** 6, cambiar=parecido)[:3]
    analizadas = l.peticiones_de(peticiones, originales_de(M_entera), traza["herramientas"],
                                 traza["fichero"])
    assert [q.tipo for q in analizadas[2].piezas if q.tipo in (l.ENTERO, l.BORRADO)] == [l.ENTERO] * 2
    assert _borrado_por_el_texto(analizadas[2], peticiones[2][0])[0] == l.BORRADO


def test_un_tool_result_sin_original_se_dice(traza, corridas):
    a, _, originales = corridas
    faltan = {k: c for k, c in originales.items() if k != "toolu_ensayo_1_0"}
    with pytest.raises(ValueError, match="no está en `originales`"):
        l.peticiones_de(a, faltan, traza["herramientas"], traza["fichero"])


# --- La raya de la caché --------------------------------------------------------------------------

def test_la_raya_de_la_cache_nunca_pasa_de_la_peticion(pares):
    for p in _todas(pares):
        assert 0 <= p.en_cache <= _suma(p.piezas)


def test_la_raya_cae_en_el_primer_resultado_recien_borrado(pares):
    """Donde una petición borra un resultado que la anterior llevaba entero, la raya cae en ese
    resultado (o antes, en las marcas del mensaje), nunca después."""
    vistos = 0
    for serie in zip(*pares, strict=False):
        for anterior, p in zip(serie, serie[1:], strict=False):
            enteros_antes = {q.nombre.rsplit(":", 1)[0] for q in anterior.resultados(l.ENTERO)}
            nuevos = [q for q in p.resultados(l.BORRADO) if q.nombre.rsplit(":", 1)[0] in enteros_antes]
            if not nuevos:
                continue
            vistos += 1
            inicio = 0
            for q in p.piezas:
                if q is nuevos[0]:
                    break
                inicio += q.tokens
            assert p.en_cache <= inicio + nuevos[0].tokens
    assert vistos > 0


def test_una_barra_del_largo_de_input_tokens_deja_la_raya_fuera(corridas):
    """La variante ingenua: tomar `input_tokens` por el largo de la petición. En alguna petición la
    raya de la caché (`cache_read_input_tokens`) queda más allá del final de esa barra."""
    a, _, _ = corridas
    assert any(u["cache_read_input_tokens"] > u["input_tokens"] for _, u in a)


# --- Recalculado = la petición menos lo leído de la caché -----------------------------------------

def test_recalculado_es_la_peticion_menos_lo_leido_de_la_cache(corridas, pares):
    a, b, _ = corridas
    for (_, usage), p in zip(a + b, [x for x, _ in pares] + [y for _, y in pares], strict=True):
        assert p.recalculados == p.entrada - p.en_cache == usage["input_tokens"]


def test_restar_la_cache_a_input_tokens_cuenta_de_menos(corridas, pares):
    """La variante ingenua: recalculado = input_tokens − cache_read_input_tokens. El servidor ya da
    input_tokens sin lo de la caché: se resta dos veces."""
    a, _, _ = corridas
    ingenuas = [u["input_tokens"] - u["cache_read_input_tokens"] for _, u in a]
    assert ingenuas != [p.recalculados for p, _ in pares]


# --- Los totales son la suma de las peticiones ----------------------------------------------------

def test_los_totales_son_la_suma_de_las_peticiones(corridas, pares):
    a, _, _ = corridas
    t = l.totales([p for p, _ in pares])
    assert t.peticiones == len(a)
    assert t.entrada == sum(u["input_tokens"] + u["cache_read_input_tokens"] for _, u in a)
    assert t.en_cache == sum(u["cache_read_input_tokens"] for _, u in a)
    assert t.recalculados == sum(u["input_tokens"] for _, u in a)


def test_unos_totales_de_la_ultima_peticion_no_son_los_de_la_corrida(pares):
    """La variante ingenua: tomar la última petición por la corrida entera."""
    ultima = pares[-1][0]
    t = l.totales([p for p, _ in pares])
    assert (ultima.entrada, ultima.recalculados) != (t.entrada, t.recalculados)


# --- El veredicto -----------------------------------------------------------------------------------

def test_el_veredicto_es_el_mismo_para_los_mismos_datos(traza):
    """Dos corridas hechas de nuevo, con otro servidor, dan el mismo texto en cada turno."""
    una, otra = dos_corridas(traza), dos_corridas(traza)
    p1 = l.comparar(*una[:2], una[2], traza["herramientas"], traza["fichero"])
    p2 = l.comparar(*otra[:2], otra[2], traza["herramientas"], traza["fichero"])
    for turno in range(1, len(p1) + 1):
        assert l.veredicto(p1, turno) == l.veredicto(p2, turno)


def test_el_veredicto_dice_las_cifras_de_cada_politica(pares):
    ta, tb = l.totales([a for a, _ in pares]), l.totales([b for _, b in pares])
    for turno, (a, b) in enumerate(pares, 1):
        texto = l.veredicto(pares, turno)
        lineas = texto.splitlines()
        assert lineas[0] == "Turno %d de %d." % (turno, len(pares))
        for linea, p in ((lineas[1], a), (lineas[2], b)):
            assert "%d de la caché, recalcula %d" % (p.en_cache, p.recalculados) in linea
        assert "recalcula %d tokens de %d" % (ta.recalculados, ta.entrada) in lineas[3]
        assert "%d de %d" % (tb.recalculados, tb.entrada) in lineas[3]
    assert len({l.veredicto(pares, t) for t in range(1, len(pares) + 1)}) == len(pares)


def test_por_tandas_recalcula_menos_que_cada_turno(pares):
    """Lo que la lección quiere enseñar, medido: borrar a tandas rompe la caché menos veces."""
    cada_turno, por_tandas = l.totales([a for a, _ in pares]), l.totales([b for _, b in pares])
    assert por_tandas.recalculados < cada_turno.recalculados
    assert "por tandas recalcula %d menos" % (cada_turno.recalculados - por_tandas.recalculados) \
        in l.veredicto(pares, 1)


# --- Lo que no tiene sentido -------------------------------------------------------------------------

@pytest.mark.parametrize("turno", [0, 12, "3", True])
def test_un_turno_que_no_existe_se_dice(pares, turno):
    with pytest.raises(ValueError, match="turno"):
        l.veredicto(pares, turno)


@pytest.mark.parametrize("campo", ["input_tokens", "cache_read_input_tokens"])
def test_un_usage_sin_sus_campos_se_dice(traza, corridas, campo):
    a, _, originales = corridas
    sin = [(M, {k: x for k, x in u.items() if k != campo}) for M, u in a]
    with pytest.raises(ValueError, match=campo):
        l.peticiones_de(sin, originales, traza["herramientas"], traza["fichero"])


def test_dos_corridas_de_distinto_largo_se_dicen(traza, corridas):
    a, b, originales = corridas
    with pytest.raises(ValueError, match="no tienen las mismas peticiones"):
        l.comparar(a, b[:-1], originales, traza["herramientas"], traza["fichero"])


def test_dos_corridas_que_no_hacen_los_mismos_turnos_se_dicen(traza, corridas):
    a, _, originales = corridas
    def otro_id(M):
        M[3][1][0]["tool_use_id"] = M[2][1][0]["id"] = "toolu_otro"
    b = corrida(traza["M"], traza["herramientas"], 1, Ensayo(), cambiar=otro_id)
    originales = dict(originales, toolu_otro=originales["toolu_ensayo_1_0"])
    with pytest.raises(ValueError, match="no llevan los mismos tool_result"):
        l.comparar(a, b, originales, traza["herramientas"], traza["fichero"])


# --- La figura y la vista ------------------------------------------------------------------------------

def test_la_figura_acumula_lo_recalculado_de_cada_politica(pares):
    fig = l.figura(pares)
    lineas = fig.axes[0].get_lines()
    for k, linea in enumerate(lineas):
        esperado, suma = [], 0
        for par in pares:
            suma += par[k].recalculados
            esperado.append(suma)
        assert list(linea.get_ydata()) == esperado
    assert len(lineas) == 2


def test_la_vista_dibuja_las_dos_barras_con_su_raya_y_cambia_con_el_deslizador(traza, corridas, pares):
    from curso.explorables.ventana.widget_de_la_limpieza import mostrar_limpieza
    a, b, originales = corridas
    caja = mostrar_limpieza(a, b, originales, traza["herramientas"], traza["fichero"])
    deslizador, dibujo, veredicto = caja.children
    assert deslizador.value == len(pares)
    for turno in (3, 7):
        deslizador.value = turno
        assert l.veredicto(pares, turno) in html.unescape(veredicto.value)
        for p in pares[turno - 1]:
            assert 'data-entrada="%d" data-en-cache="%d"' % (p.entrada, p.en_cache) in dibujo.value
        assert dibujo.value.count('class="limpieza-raya"') == 2


def test_el_veredicto_dice_lo_nuevo_solo_si_la_cache_llega_hasta_el_ultimo_turno(pares):
    """«Lo nuevo» es que la caché sirvió todo lo anterior al último turno; si no, nombra la pieza."""
    dichos = set()
    for turno, par in enumerate(pares, 1):
        lineas = l.veredicto(pares, turno).splitlines()[1:3]
        for linea, p in zip(lineas, par, strict=True):
            ultimo = max((q.turno for q in p.piezas if q.turno is not None), default=None)
            antes = sum(q.tokens for q in p.piezas if q.turno is None or q.turno != ultimo)
            nuevo = ultimo is not None and antes <= p.en_cache < p.entrada
            assert ("lo nuevo del turno" in linea) == nuevo, linea
            dichos.add(nuevo)
    assert dichos == {True, False}
