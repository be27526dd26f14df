"""El presupuesto de la ventana (lección 02): las piezas, las tres políticas, el veredicto y la vista.

Todo se comprueba con el M de verdad de la ejecución `atasco` del punto de control 01, que corre
una vez por módulo en un proceso aparte (`curso.medir.redibujo_de_la_ventana.atasco`): sus módulos se llaman
igual que los de otros puntos de control. Ninguna cifra esperada está escrita a mano: salen del
motor del servidor de ensayo o de las propias piezas. Cada invariante tiene al lado una variante
ingenua que lo rompe, para que se vea que el test puede fallar.
"""
import html
import json

import pytest

from curso.explorables.ventana import presupuesto as v
from curso.ensayo.tokens import contar
from curso.medir.redibujo_de_la_ventana import atasco

PASO = 256  # el paso del deslizador de la ventana
DESDE, HASTA = 4096, 16384  # su recorrido


@pytest.fixture(scope="module")
def traza():
    return atasco()


@pytest.fixture(scope="module")
def piezas(traza):
    return v.piezas_de(traza["M"], traza["herramientas"], traza["fichero"])


def _suma(piezas):
    return sum(p.tokens for p in piezas)


def _turnos(piezas):
    return sorted({p.turno for p in piezas if p.turno is not None})


def _ventanas():
    return range(DESDE, HASTA + 1, PASO)


def _peticiones(piezas):
    return range(1, v.numero_de_peticiones(piezas) + 1)


# --- Las piezas ---------------------------------------------------------------------------------

def test_la_traza_del_atasco_tiene_diez_turnos_enteros(traza, piezas):
    asistente = sum(1 for rol, _ in traza["M"] if rol == "asistente")
    assert traza["motivo"] == "tope" and asistente == 10
    assert v.numero_de_peticiones(piezas) == asistente + 1  # la 11 sería la del turno siguiente


def test_las_piezas_suman_lo_que_cuenta_el_motor_en_cada_peticion(traza, piezas):
    """La petición n son los 2n primeros mensajes de M (el inicio y n − 1 turnos enteros); el
    proceso aparte la construyó con el `api.peticion` del harness y la contó con el motor."""
    for n in _peticiones(piezas):
        assert _suma(v.peticion_n(piezas, n)) == traza["cuentas"][2 * n], f"petición {n}"


def test_contar_cada_pieza_por_separado_pierde_las_marcas(traza, piezas):
    """La variante ingenua: contar el texto de cada parte sin las marcas (`<user>`, los saltos de
    línea del final) da menos de lo que cuenta el servidor. Por eso las piezas se miden como
    diferencias de prefijos."""
    M = traza["M"]
    ingenua = contar(M[0][1]) + contar(json.dumps(traza["herramientas"], sort_keys=True,
                                                   ensure_ascii=False)) + contar(M[1][1])
    for _, contenido in M[2:]:
        for b in contenido:
            ingenua += contar(b.get("text") or b.get("content") or
                              b.get("name", "") + json.dumps(b.get("input"), ensure_ascii=False))
    assert ingenua != traza["cuentas"][len(M)]
    assert _suma(piezas) == traza["cuentas"][len(M)]


def test_el_fichero_de_proyecto_es_una_pieza_aparte_al_final_del_prompt(traza, piezas):
    tipos = [p.tipo for p in piezas]
    assert tipos[:4] == ["sistema", "proyecto", "herramientas", "pedido"]
    proyecto = next(p for p in piezas if p.tipo == "proyecto")
    assert proyecto.tokens == contar(traza["fichero"] + "\n")  # el fichero y el salto que lo cierra
    sin_separar = v.piezas_de(traza["M"], traza["herramientas"], None)
    assert "proyecto" not in [p.tipo for p in sin_separar]
    assert sin_separar[0].tokens == piezas[0].tokens + proyecto.tokens
    assert _suma(sin_separar) == _suma(piezas)


def test_cada_turno_es_una_llamada_con_su_observacion_y_su_descripcion(traza, piezas):
    llamadas = [c for rol, c in traza["M"][2:] if rol == "asistente"]
    for turno, bloques in zip(_turnos(piezas), llamadas, strict=True):
        del_turno = [p for p in piezas if p.turno == turno]
        assert [p.tipo for p in del_turno] == ["llamada", "observacion"]
        uso = next(bloque for bloque in bloques if bloque["type"] == "tool_use")
        argumento = uso["input"].get("ruta") or uso["input"].get("comando")
        assert del_turno[0].nombre == "%s %s" % (uso["name"], argumento)


def test_la_peticion_n_es_el_inicio_y_los_n_menos_1_primeros_turnos(piezas):
    inicio = [p for p in piezas if p.turno is None]
    for n in _peticiones(piezas):
        peticion = v.peticion_n(piezas, n)
        assert [p for p in peticion if p.turno is None] == inicio
        assert _turnos(peticion) == _turnos(piezas)[:n - 1]


# --- lo trunca el modelo --------------------------------------------------------------------------

def _comprobar_truncado(peticion, r):
    """Lo que queda es el final de la petición: lo quitado, del principio, empezando por el prompt
    de sistema; como mucho una pieza a medias; y, si quitó algo, llena la ventana justa."""
    assert _suma(r.quita) + _suma(r.conserva) == _suma(peticion)
    if not r.quita:
        assert list(r.conserva) == list(peticion)
        return
    assert r.quita[0].tipo == "sistema"
    enteras = [p for p in r.quita if not p.nombre.endswith("(el principio)")]
    assert list(peticion[:len(enteras)]) == enteras
    resto = list(peticion[len(enteras):])
    if len(r.conserva) == len(resto):  # la primera que queda está cortada
        cortada, original = r.conserva[0], resto[0]
        assert (cortada.tipo, cortada.turno) == (original.tipo, original.turno)
        assert cortada.nombre.endswith("(sin el principio)") and cortada.tokens < original.tokens
        assert list(r.conserva[1:]) == resto[1:]
    else:
        assert list(r.conserva) == resto
    assert r.pide == r.ventana


def _trunca_por_el_final(piezas, ventana, max_tokens=v.MAX_TOKENS):
    """Variante ingenua: quita lo más nuevo, como quien corta un texto que no cabe por abajo."""
    al_reves = v.lo_trunca_el_modelo(tuple(reversed(piezas)), ventana, max_tokens)
    return v.Resultado("trunca", tuple(reversed(al_reves.conserva)), al_reves.quita, ventana,
                       max_tokens, _suma(piezas), al_reves.salta)


def test_truncar_conserva_el_final_y_quita_desde_el_prompt_de_sistema(piezas):
    for n in _peticiones(piezas):
        peticion = v.peticion_n(piezas, n)
        for ventana in _ventanas():
            if ventana >= v.inicio_de(peticion) + v.MAX_TOKENS:
                _comprobar_truncado(peticion, v.lo_trunca_el_modelo(peticion, ventana))
    peticion = v.peticion_n(piezas, v.numero_de_peticiones(piezas))
    with pytest.raises(AssertionError):
        _comprobar_truncado(peticion, _trunca_por_el_final(peticion, 8192))


# --- lo descarta el harness -------------------------------------------------------------------------

def _comprobar_descarte(peticion, r):
    """Quita turnos enteros, los más viejos, nunca el inicio, y solo los que hacen falta."""
    quitados = _turnos(r.quita)
    assert quitados == _turnos(peticion)[:len(quitados)]  # los más viejos, seguidos
    assert list(r.quita) == [p for p in peticion if p.turno in quitados]  # enteros
    assert all(p.tipo not in v.DEL_INICIO for p in r.quita)
    assert list(r.conserva) == [p for p in peticion if p.turno not in quitados]
    assert r.cabe
    if quitados:  # uno menos no habría bastado
        ultimo = [p for p in peticion if p.turno == quitados[-1]]
        assert r.pide + _suma(ultimo) > r.ventana


def _descarta_el_mas_grande(piezas, ventana, max_tokens=v.MAX_TOKENS):
    """Variante ingenua: quita primero el turno más grande (ahorra más, pero no el más viejo)."""
    grandes = sorted(_turnos(piezas), key=lambda t: -_suma(p for p in piezas if p.turno == t))
    fuera, sobra = [], _suma(piezas) + max_tokens - ventana
    for t in grandes:
        if sobra <= 0:
            break
        fuera.append(t)
        sobra -= _suma(p for p in piezas if p.turno == t)
    return v.Resultado("descarta", tuple(p for p in piezas if p.turno not in fuera),
                       tuple(p for p in piezas if p.turno in fuera), ventana, max_tokens,
                       _suma(piezas), bool(fuera))


def _descarta_observaciones(piezas, ventana, max_tokens=v.MAX_TOKENS):
    """Variante ingenua: quita solo observaciones viejas y deja sus llamadas sin respuesta."""
    fuera, sobra = [], _suma(piezas) + max_tokens - ventana
    for p in piezas:
        if sobra > 0 and p.tipo == "observacion":
            fuera.append(p)
            sobra -= p.tokens
    return v.Resultado("descarta", tuple(p for p in piezas if p not in fuera), tuple(fuera),
                       ventana, max_tokens, _suma(piezas), bool(fuera))


def test_descartar_quita_turnos_enteros_los_mas_viejos_y_nunca_el_inicio(piezas):
    for n in _peticiones(piezas):
        peticion = v.peticion_n(piezas, n)
        for ventana in _ventanas():
            if ventana >= v.inicio_de(peticion) + v.MAX_TOKENS:
                _comprobar_descarte(peticion, v.lo_descarta_el_harness(peticion, ventana))
    peticion = v.peticion_n(piezas, v.numero_de_peticiones(piezas))
    for ingenua in (_descarta_el_mas_grande, _descarta_observaciones):
        with pytest.raises(AssertionError):
            _comprobar_descarte(peticion, ingenua(peticion, 8192))


# --- el harness compacta ---------------------------------------------------------------------------

def _comprobar_compactacion(peticion, r, k=v.RECIENTES, para_el_turno=v.PARA_EL_TURNO):
    """Salta solo por encima del umbral; entonces deja el inicio y los k turnos recientes tal cual,
    con un solo resumen en medio, y quita exactamente los turnos viejos."""
    assert r.umbral == r.ventana - r.reserva - para_el_turno
    assert r.salta == (_suma(peticion) > r.umbral)
    turnos = _turnos(peticion)
    if not r.salta or len(turnos) <= k:
        assert list(r.conserva) == list(peticion) and not r.quita
        return
    inicio = [p for p in peticion if p.tipo in v.DEL_INICIO]
    recientes = [p for p in peticion if p.turno in turnos[-k:]]
    resumenes = [p for p in r.conserva if p.tipo == "resumen"]
    assert len(resumenes) == 1
    assert list(r.conserva) == inicio + resumenes + recientes
    assert list(r.quita) == [p for p in peticion if p.turno in turnos[:-k]]


def _compacta_en_el_umbral(piezas, ventana):
    """Variante ingenua: salta también cuando la petición mide justo el umbral (>= en vez de >)."""
    r = v.el_harness_compacta(piezas, ventana, para_el_turno=v.PARA_EL_TURNO + 1)
    return v.Resultado("compacta", r.conserva, r.quita, ventana, r.max_tokens, r.original, r.salta,
                       v.umbral(ventana), v.RESERVA)


def test_compactar_deja_el_inicio_y_los_turnos_recientes_y_salta_solo_sobre_el_umbral(piezas):
    for n in _peticiones(piezas):
        peticion = v.peticion_n(piezas, n)
        for ventana in _ventanas():
            if ventana >= v.inicio_de(peticion) + v.MAX_TOKENS:
                _comprobar_compactacion(peticion, v.el_harness_compacta(peticion, ventana))


def test_compactar_no_salta_con_la_peticion_justo_en_el_umbral(piezas):
    peticion = v.peticion_n(piezas, 10)
    justa = _suma(peticion) + v.RESERVA + v.PARA_EL_TURNO  # su umbral es la petición, justa
    assert not v.el_harness_compacta(peticion, justa).salta
    assert v.el_harness_compacta(peticion, justa - 1).salta
    with pytest.raises(AssertionError):
        _comprobar_compactacion(peticion, _compacta_en_el_umbral(peticion, justa))


def test_compactar_resume_tambien_el_resumen_anterior(traza):
    """La segunda vez que salta, el resumen de la primera está en medio y entra en el nuevo."""
    M = traza["M"]
    compactado = M[:2] + [("usuario", "Resumen de tus turnos anteriores: " + "leí recetas.txt. " * 40)] + M[8:]
    piezas = v.piezas_de(compactado, traza["herramientas"], traza["fichero"], primer_turno=4)
    assert [p.tipo for p in piezas][:5] == ["sistema", "proyecto", "herramientas", "pedido", "resumen"]
    assert _turnos(piezas)[0] == 4
    r = v.el_harness_compacta(piezas, 4096 + 2 * PASO)
    assert r.salta and r.quita[0].tipo == "resumen"
    assert [p.tipo for p in r.conserva].count("resumen") == 1


# --- Una sola cuenta: la del servidor ----------------------------------------------------------

def _ultima(piezas):
    return v.numero_de_peticiones(piezas)


def _dice_que_cabe(texto):
    primera = texto.split("\n")[0]
    assert (": cabe, " in primera) != (": no cabe, " in primera), primera
    return ": cabe, " in primera


def test_max_tokens_es_el_que_pide_el_harness(traza):
    assert v.MAX_TOKENS == traza["max_tokens"]
    assert v.UMBRAL == v.VENTANA - v.RESERVA - v.PARA_EL_TURNO == 4096
    assert v.RESERVA == 2 * v.MAX_TOKENS  # lo que dice la lección 02: el doble de lo que pide


def test_el_veredicto_dice_cabe_exactamente_cuando_el_servidor_admite_la_peticion(traza, piezas):
    """Para cada petición de `atasco`, el veredicto en 8192 coincide con lo que hizo el motor del
    servidor de ensayo: las diez primeras, admitidas; la 11, rechazada."""
    admitidas = [traza["admitidas"][2 * n] for n in _peticiones(piezas)]
    assert admitidas == [True] * (len(admitidas) - 1) + [False]
    for n, admitida in zip(_peticiones(piezas), admitidas, strict=True):
        assert _dice_que_cabe(v.veredicto(piezas, v.VENTANA, n)) == admitida, f"petición {n}"


def test_contar_la_reserva_del_umbral_como_si_fuera_max_tokens_contradice_al_servidor(traza, piezas):
    """La variante ingenua de antes: sumar los 1024 de la reserva en vez de los 512 que se piden.
    Dice que la petición 10 no cabe, y el servidor la admitió."""
    assert traza["admitidas"][20]
    assert not _dice_que_cabe(v.veredicto(piezas, v.VENTANA, 10, max_tokens=v.RESERVA))


def test_en_8192_la_peticion_11_no_cabe_descartar_quita_el_turno_1_y_compactar_salta(traza, piezas):
    n = _ultima(piezas)
    peticion = v.peticion_n(piezas, n)
    r = v.aplicar(piezas, v.VENTANA, n)
    assert _suma(peticion) == traza["cuentas"][len(traza["M"])]  # lo que contó el servidor
    assert _suma(peticion) + v.MAX_TOKENS > v.VENTANA
    assert r["trunca"].quita[0].tipo == "sistema" and r["trunca"].cabe
    assert _turnos(r["descarta"].quita) == [1] and r["descarta"].cabe
    assert r["compacta"].salta
    assert _turnos(r["compacta"].quita) == _turnos(peticion)[:-v.RECIENTES]
    assert 2 * r["compacta"].peticion < v.VENTANA  # menos de la mitad de la ventana


def _primera_ventana(condicion):
    return next(w for w in _ventanas() if condicion(w))


def ventana_sin_compactar(piezas, n):
    """La ventana más pequeña del deslizador con la que la compactación no salta en la petición n:
    la cuenta que hace la lección 02 (la petición más las dos reservas, redondeada al paso)."""
    justa = _suma(v.peticion_n(piezas, n)) + v.RESERVA + v.PARA_EL_TURNO
    return -(-justa // PASO) * PASO


def test_la_ventana_que_calcula_la_leccion_es_la_primera_en_la_que_no_salta(piezas):
    n = _ultima(piezas)
    w = ventana_sin_compactar(piezas, n)
    assert w == _primera_ventana(lambda x: not v.aplicar(piezas, x, n)["compacta"].salta)
    assert w == 12544  # la que usa tests/navegador/test_navegador.py (VENTANA_QUE_BASTA)
    texto = v.veredicto(piezas, w, n)
    assert _dice_que_cabe(texto) and "no salta" in texto
    assert "salta (" in v.veredicto(piezas, w - PASO, n)


def test_truncar_y_descartar_dejan_de_quitar_mucho_antes_de_que_compactar_deje_de_saltar(piezas):
    n = _ultima(piezas)
    primera_sin_quitar = _primera_ventana(
        lambda w: not v.aplicar(piezas, w, n)["trunca"].quita
        and not v.aplicar(piezas, w, n)["descarta"].quita)
    primera_sin_compactar = _primera_ventana(lambda w: not v.aplicar(piezas, w, n)["compacta"].salta)
    # la diferencia es lo que la compactación aparta de más: las dos reservas menos max_tokens
    assert primera_sin_compactar - primera_sin_quitar >= v.RESERVA + v.PARA_EL_TURNO - v.MAX_TOKENS - PASO
    peticion = _suma(v.peticion_n(piezas, n))
    assert primera_sin_quitar - PASO < peticion + v.MAX_TOKENS <= primera_sin_quitar


# --- El veredicto ---------------------------------------------------------------------------------

def test_el_veredicto_dice_las_cifras_calculadas(piezas):
    n = _ultima(piezas)
    texto = v.veredicto(piezas, 8192, n)
    assert texto == v.veredicto(piezas, 8192, n)  # siempre igual: nbval lo compara
    peticion = _suma(v.peticion_n(piezas, n))
    lineas = texto.split("\n")
    assert len(lineas) == 1 + len(v.POLITICAS)
    assert lineas[0] == ("La petición %d ocupa %d tokens; con los %d de max_tokens pide %d a una "
                         "ventana de 8192: no cabe, faltan %d." % (
                             n, peticion, v.MAX_TOKENS, peticion + v.MAX_TOKENS,
                             peticion + v.MAX_TOKENS - 8192))
    r = v.aplicar(piezas, 8192, n)
    turno_1 = [p for p in piezas if p.turno == 1]
    assert "descarta el turno 1 (%s, %d tokens); sobran %d." % (turno_1[0].nombre, _suma(turno_1),
                                                                 r["descarta"].margen) in lineas[2]
    assert "umbral de 4096 = 8192 − 1024 − 3072" in lineas[3]
    assert "la petición queda en %d tokens" % r["compacta"].peticion in lineas[3]
    assert "resumen de ~%d" % v.RESUMEN_SUPUESTO in lineas[3] and "supuesto" in lineas[3]


def test_el_veredicto_con_ventana_de_sobra_dice_que_cabe_y_que_no_salta(piezas):
    n = _ultima(piezas)
    w = ventana_sin_compactar(piezas, n)
    texto = v.veredicto(piezas, w, n)
    assert ": cabe, sobran %d." % (w - _suma(v.peticion_n(piezas, n)) - v.MAX_TOKENS) in texto
    assert "no salta" in texto and "no descarta nada" in texto and "no pierde nada" in texto


def test_el_veredicto_cambia_con_la_ventana_y_con_la_peticion(piezas):
    assert v.veredicto(piezas, 8192, 10) != v.veredicto(piezas, 8448, 10)
    assert v.veredicto(piezas, 8192, 10) != v.veredicto(piezas, 8192, 9)


@pytest.mark.parametrize("ajustes, palabra", [
    ({"ventana": 0}, "ventana"),
    ({"ventana": -8192}, "ventana"),
    ({"ventana": 1000}, "inicio"),
    ({"ventana": "8192"}, "entero"),
    ({"ventana": 8192.0}, "entero"),
    ({"ventana": True}, "entero"),
    ({"turno": 0}, "no existe"),
    ({"turno": 12}, "no existe"),
    ({"turno": 2.5}, "entero"),
    ({"max_tokens": -1}, "max_tokens no puede ser negativo"),
    ({"max_tokens": 8000}, "max_tokens"),
    ({"reserva": -1}, "no puede ser negativo"),
])
def test_un_ajuste_imposible_da_un_error_en_castellano(piezas, ajustes, palabra):
    argumentos = {"ventana": 8192, "turno": 10, **ajustes}
    with pytest.raises(ValueError, match=palabra):
        v.veredicto(piezas, **argumentos)


def test_un_fichero_de_proyecto_que_no_es_el_de_M_da_un_error(traza):
    with pytest.raises(ValueError, match="no acaba en ese fichero de proyecto"):
        v.piezas_de(traza["M"], traza["herramientas"], "# Otro proyecto\n")


def test_antes_y_despues_cuenta_el_inicio_el_resumen_y_los_turnos(traza, piezas):
    M = traza["M"]
    despues = v.piezas_de(M[:2] + [("usuario", "Resumen: he leído los tres ficheros.")] + M[-4:],
                          traza["herramientas"], traza["fichero"], primer_turno=9)
    texto = v.antes_y_despues(piezas, despues)
    antes_, despues_ = texto.split("\n")
    assert antes_.startswith("Antes: el inicio (%d)" % v.inicio_de(piezas))
    assert "%d turnos" % len(_turnos(piezas)) in antes_
    resumen = next(p for p in despues if p.tipo == "resumen")
    assert "un resumen de %d" % resumen.tokens in despues_ and "2 turnos" in despues_
    assert "= %d tokens" % _suma(despues) in despues_


# --- La vista -------------------------------------------------------------------------------------

def _con_clase(caja, clase):
    return next(w for w in caja.children if clase in w._dom_classes)


def _veredicto_de(caja):
    return _con_clase(caja, "ventana-veredicto").value


def test_la_vista_se_construye_y_el_veredicto_sigue_a_los_deslizadores(traza, piezas):
    from curso.explorables.ventana.widget_de_la_ventana import explorar_ventana

    caja = explorar_ventana(traza["M"], traza["herramientas"], traza["fichero"])
    deslizador = _con_clase(caja, "ventana-ventana")
    turno = _con_clase(caja, "ventana-turno")
    assert (deslizador.min, deslizador.max, deslizador.step) == (DESDE, HASTA, PASO)
    assert deslizador.description == "Ventana" and deslizador.continuous_update is False
    ultima = v.numero_de_peticiones(piezas)
    assert turno.max == ultima and turno.value == ultima  # empieza en la que ya no cabía
    inicial = _veredicto_de(caja)
    assert inicial.startswith('<pre class="veredicto-ventana"') and inicial.endswith("</pre>")
    assert ">%s</pre>" % html.escape(v.veredicto(piezas, 8192, ultima)) in inicial
    deslizador.value = 12544
    assert _veredicto_de(caja) != inicial
    assert ">%s</pre>" % html.escape(v.veredicto(piezas, 12544, ultima)) in _veredicto_de(caja)
    turno.value = 3
    assert html.escape(v.veredicto(piezas, 12544, 3)) in _veredicto_de(caja)


def test_la_barra_cambia_con_la_politica_y_dibuja_la_ventana(traza):
    from curso.explorables.ventana.widget_de_la_ventana import explorar_ventana

    caja = explorar_ventana(traza["M"], traza["herramientas"], traza["fichero"])
    barra = _con_clase(caja, "ventana-barra")
    politica = _con_clase(caja, "ventana-politica")
    dibujos = set()
    for clave in ("trunca", "descarta", "compacta"):
        politica.value = clave
        dibujos.add(barra.value)
        assert "ventana 8192" in barra.value and "umbral 4096" in barra.value
    assert len(dibujos) == 3


def test_la_vista_ensena_el_mensaje_de_un_ajuste_imposible_en_vez_de_una_traza(traza):
    from curso.explorables.ventana.widget_de_la_ventana import explorar_ventana

    caja = explorar_ventana(traza["M"], traza["herramientas"], traza["fichero"], max_tokens=-1)
    assert "veredicto-ventana error" in _veredicto_de(caja)
    assert "no puede ser negativo" in _veredicto_de(caja)


def test_la_vista_de_antes_y_despues_tiene_dos_barras_y_su_texto(traza, piezas):
    from curso.explorables.ventana.widget_de_la_ventana import mostrar_antes_y_despues

    M = traza["M"]
    despues = M[:2] + [("usuario", "Resumen: he leído los tres ficheros.")] + M[-4:]
    caja = mostrar_antes_y_despues(M, despues, traza["herramientas"], traza["fichero"])
    dibujo, texto = (w.value for w in caja.children)
    assert dibujo.count('style="position:relative;height:') == 2
    piezas_despues = v.piezas_de(despues, traza["herramientas"], traza["fichero"])
    assert html.escape(v.antes_y_despues(piezas, piezas_despues)) in texto
