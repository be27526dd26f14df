"""El widget de las carreras (lecciones 04 y 05): sus textos y sus carriles (`curso.explorables.carreras.textos`)
y la vista fina que los coloca (`curso.explorables.carreras.widget_de_las_carreras`).

Lo esperado se cuenta aquí, registro a registro, o se deduce del orden de los pasos; no se copia
de lo que dicen las funciones que se prueban.
"""
import math
import re
from collections import Counter
from itertools import pairwise
from html.parser import HTMLParser

import pytest

from curso.explorables.carreras import textos as cv
from curso.explorables.carreras import ERROR_INESPERADO, explorar
from curso.explorables.carreras import bitacora
from curso.explorables.carreras.escenarios import carreras_del_buzon as escenarios_buzon
from curso.explorables.carreras.escenarios import carreras_en_postgres as escenarios_postgres
from curso.explorables.carreras.escenarios import carreras_de_los_resumenes as escenarios_resumenes
from curso.explorables.carreras import widget_de_las_carreras as vista

RESUMENES = escenarios_resumenes.ESCENARIO
CAIDA = escenarios_buzon.CAIDA  # el escenario más pequeño (20 intercalados): el de las pruebas de la vista
UNO_POR_BASE = "de cada base se instala exactamente uno"

# (escenario, variante) que se exploran una vez para todo el módulo: de cada módulo de escenarios,
# la correcta y al menos una ingenua que falla; en CAIDA, también una con errores no previstos.
EXPLORADAS = [(RESUMENES, "correcta"), (RESUMENES, "ingenua"),
              (CAIDA, "correcta"), (CAIDA, "marca_primero"), (CAIDA, "dos_transacciones"),
              (CAIDA, "cuenta_mensajes")]


@pytest.fixture(scope="module")
def exploraciones():
    return {(escenario.nombre, variante): explorar(escenario, variante)
            for escenario, variante in EXPLORADAS}


def nombre_corto(valor):
    """El id de un parámetro en pytest: «resumenes» o «caida» por el escenario; lo demás, tal cual."""
    return {RESUMENES.nombre: "resumenes", CAIDA.nombre: "caida"}.get(getattr(valor, "nombre", None), valor)


def totales_esperados(escenario, exploracion):
    """Los totales contados aquí: cada registro, sus fallos, y las etiquetas del escenario."""
    invariantes = [(i.nombre, i.fallo) for i in escenario.invariantes] + [ERROR_INESPERADO]
    rotas = Counter(nombre for r in exploracion.registros for nombre in r.fallos)
    correctos = sum(1 for r in exploracion.registros if not r.fallos)
    partes = [f"{len(exploracion.registros)} intercalados: {correctos} correctos"]
    partes += [f"{rotas[nombre]} {fallo}" for nombre, fallo in invariantes if rotas[nombre]]
    return ", ".join(partes)


def multinomial(escenario):
    largos = [len(pasos) for pasos in escenario.actores.values()]
    return math.factorial(sum(largos)) // math.prod(math.factorial(n) for n in largos)


def posiciones(registro):
    return {par: i + 1 for i, par in enumerate(registro.orden)}


class Tabla(HTMLParser):
    """Lee la tabla de los carriles: la cabecera y, por fila, (clase, texto) de cada celda."""

    def __init__(self, fuente):
        super().__init__()
        self.cabecera, self.filas, self._celda, self._fila = [], [], None, None
        self.feed(fuente)

    def handle_starttag(self, etiqueta, atributos):
        if etiqueta == "tr":
            self._fila = []
        elif etiqueta in ("td", "th"):
            self._celda = [dict(atributos).get("class", ""), ""]

    def handle_data(self, datos):
        if self._celda is not None:
            self._celda[1] += datos

    def handle_endtag(self, etiqueta):
        if etiqueta in ("td", "th") and self._celda is not None:
            self._fila.append(tuple(self._celda))
            self._celda = None
        elif etiqueta == "tr":
            if self.cabecera:
                self.filas.append(self._fila)
            else:
                self.cabecera = self._fila


# --- Los totales ------------------------------------------------------------------------------

@pytest.mark.parametrize("escenario, variante", EXPLORADAS, ids=nombre_corto)
def test_los_totales_cuentan_cada_intercalado_y_nombran_sus_fallos(exploraciones, escenario, variante):
    exploracion = exploraciones[(escenario.nombre, variante)]
    assert cv.totales(exploracion) == totales_esperados(escenario, exploracion)


@pytest.mark.parametrize("escenario", [RESUMENES, CAIDA], ids=nombre_corto)
def test_la_variante_correcta_da_todos_los_intercalados_correctos(exploraciones, escenario):
    n = multinomial(escenario)
    assert cv.totales(exploraciones[(escenario.nombre, "correcta")]) == f"{n} intercalados: {n} correctos"


@pytest.mark.parametrize("escenario, variante", [(RESUMENES, "ingenua"), (CAIDA, "marca_primero")],
                         ids=nombre_corto)
def test_los_totales_de_una_variante_ingenua_dicen_lo_que_rompe(exploraciones, escenario, variante):
    exploracion = exploraciones[(escenario.nombre, variante)]
    texto = cv.totales(exploracion)
    rotas = {nombre for r in exploracion.registros for nombre in r.fallos}
    assert rotas, "la variante ingenua tiene que romper algo en este escenario"
    for invariante in escenario.invariantes:
        assert (invariante.fallo in texto) == (invariante.nombre in rotas), invariante.nombre


def test_la_comparacion_senala_el_primer_intercalado_que_falla(exploraciones):
    correcta = exploraciones[(RESUMENES.nombre, "correcta")]
    ingenua = exploraciones[(RESUMENES.nombre, "ingenua")]
    primero = min(r.numero for r in ingenua.registros if r.fallos)
    linea = cv.comparacion(ingenua, correcta)
    assert "\n" not in linea
    assert f"«ingenua» tiene {sum(not r.fallos for r in ingenua.registros)} de {ingenua.total}" in linea
    assert linea.endswith(f"el primero que falla es el n.º {primero}.")
    assert "referencia" in cv.comparacion(correcta, correcta)


def test_la_comparacion_de_una_ingenua_que_aqui_no_falla_lo_dice(exploraciones):
    correcta = exploraciones[(CAIDA.nombre, "correcta")]
    cuenta = exploraciones[(CAIDA.nombre, "cuenta_mensajes")]
    assert all(not r.fallos for r in cuenta.registros)  # en la caída, contar mensajes no se nota
    linea = cv.comparacion(cuenta, correcta)
    assert "no falla ningún intercalado, y eso no la hace correcta" in linea


def test_no_se_comparan_escenarios_distintos(exploraciones):
    with pytest.raises(ValueError, match="son escenarios distintos"):
        cv.comparacion(exploraciones[(CAIDA.nombre, "marca_primero")],
                       exploraciones[(RESUMENES.nombre, "correcta")])


# --- El cruce de variantes y escenarios --------------------------------------------------------

CRUZADAS = ("correcta", "marca_primero", "cuenta_mensajes")


def test_el_cruce_dice_que_escenarios_pillan_a_cada_variante(exploraciones):
    dos_hijos = escenarios_buzon.DOS_HIJOS
    por_escenario = {
        "dos hijos": {v: explorar(dos_hijos, v) for v in CRUZADAS},
        "caída": {v: exploraciones[(CAIDA.nombre, v)] for v in CRUZADAS},
    }
    filas = [re.split(r" {3,}", linea) for linea in cv.cruce(por_escenario).splitlines()]
    assert filas[0] == ["variante", "dos hijos", "caída", "la pillan"]
    assert [fila[0] for fila in filas[1:]] == list(CRUZADAS)
    for fila in filas[1:]:
        variante, pillan = fila[0], []
        for etiqueta, celda in zip(por_escenario, fila[1:-1], strict=True):
            registros = por_escenario[etiqueta][variante].registros
            buenos = sum(not r.fallos for r in registros)
            falla = buenos < len(registros)
            assert celda == f"{'✘ ' if falla else ''}{buenos}/{len(registros)}", (variante, etiqueta)
            pillan += [etiqueta] if falla else []
        assert fila[-1] == (", ".join(pillan) or "ninguno"), variante
    # Cada ingenua de este cruce la pilla un escenario distinto: lo que el cruce está para decir.
    assert filas[2][-1] == "caída" and filas[3][-1] == "dos hijos" and filas[1][-1] == "ninguno"


def test_el_cruce_exige_las_mismas_variantes_en_cada_escenario(exploraciones):
    with pytest.raises(ValueError, match="no tiene las mismas variantes"):
        cv.cruce({"resúmenes": {"correcta": exploraciones[(RESUMENES.nombre, "correcta")]},
                  "caída": {"marca_primero": exploraciones[(CAIDA.nombre, "marca_primero")]}})
    with pytest.raises(ValueError, match="ningún escenario"):
        cv.cruce({})


# --- El panel de un intercalado -------------------------------------------------------------

def test_el_panel_de_un_intercalado_cuenta_lo_que_anoto_el_explorador(exploraciones):
    exploracion = exploraciones[(RESUMENES.nombre, "ingenua")]
    registro = next(r for r in exploracion.registros if len(r.fallos) >= 2)
    lineas = cv.panel(exploracion, registro.numero).splitlines()
    assert lineas[0] == f"Intercalado {registro.numero} de {len(exploracion.registros)}, variante «ingenua»."
    assert lineas[1] == "Orden: " + " · ".join(f"{e.actor} {e.paso}" for e in registro.eventos) + "."
    assert lineas[2] == f"Cómo acaba: {registro.resultado}."
    marcas = {linea[4:]: linea[2] for linea in lineas[4:]}
    assert set(marcas) == {nombre for nombre, _ in exploracion.invariantes}
    for nombre, marca in marcas.items():
        assert marca == ("✘" if nombre in registro.fallos else "✔"), nombre


def test_el_panel_dice_que_paso_lanzo_una_excepcion(exploraciones):
    exploracion = exploraciones[(CAIDA.nombre, "dos_transacciones")]
    registro = next(r for r in exploracion.registros if any(e.error for e in r.eventos))
    texto = cv.panel(exploracion, registro.numero)
    for evento in registro.eventos:
        linea = f"Error en el paso {evento.posicion} ({evento.actor} {evento.paso}): {evento.error}"
        assert (linea in texto) == (evento.error is not None)
    assert f"✘ {ERROR_INESPERADO[0]}" in texto


@pytest.mark.parametrize("malo", [0, 21, -1, "3", 2.0, True, None])
def test_un_intercalado_que_no_existe_da_un_error_en_castellano(exploraciones, malo):
    exploracion = exploraciones[(CAIDA.nombre, "correcta")]
    with pytest.raises(ValueError, match=r"^(no hay intercalado n\.º|el intercalado tiene que ser)"):
        cv.panel(exploracion, malo)


# --- Los carriles -----------------------------------------------------------------------------

def test_los_carriles_ponen_cada_paso_en_la_columna_de_su_actor(exploraciones):
    exploracion = exploraciones[(CAIDA.nombre, "dos_transacciones")]
    referencia = exploraciones[(CAIDA.nombre, "correcta")]
    registro = next(r for r in exploracion.registros if any(e.error for e in r.eventos))
    otro = referencia.registros[registro.numero - 1]
    tabla = Tabla(cv.carriles_html(registro, otro))
    assert [texto for _, texto in tabla.cabecera] == ["#"] + list(registro.actores)
    assert len(tabla.filas) == len(registro.eventos)
    for fila, evento, estado in zip(tabla.filas, registro.eventos, cv.estados(registro, otro), strict=True):
        columna = 1 + list(registro.actores).index(evento.actor)
        assert fila[0][1] == str(evento.posicion)
        assert fila[columna] == (f"carril-{estado}", f"{evento.paso} → {evento.resultado}")
        assert all(texto == "" for i, (_, texto) in enumerate(fila[1:], 1) if i != columna)


def test_en_la_carrera_ingenua_rompe_la_segunda_instalacion(exploraciones):
    # Donde A y B leen la misma base, la correcta rechaza al segundo que instala; la ingenua lo
    # deja instalar: ese es el paso que se aparta, y el único en rojo.
    ingenua = exploraciones[(RESUMENES.nombre, "ingenua")]
    correcta = exploraciones[(RESUMENES.nombre, "correcta")]
    carreras = 0
    for registro, referencia in zip(ingenua.registros, correcta.registros, strict=True):
        p = posiciones(registro)
        hubo_carrera = (p[("A", "lee la base")] < p[("B", "instala")]
                        and p[("B", "lee la base")] < p[("A", "instala")])
        rojos = [i + 1 for i, estado in enumerate(cv.estados(registro, referencia)) if estado == cv.ROMPE]
        if hubo_carrera:
            carreras += 1
            assert UNO_POR_BASE in registro.fallos
            assert rojos == [max(p[("A", "instala")], p[("B", "instala")])], registro.numero
        else:
            assert rojos == [], registro.numero
    assert 0 < carreras < len(ingenua.registros)


def test_la_variante_correcta_no_tiene_ningun_paso_en_rojo(exploraciones):
    correcta = exploraciones[(RESUMENES.nombre, "correcta")]
    for registro in correcta.registros:
        assert cv.ROMPE not in cv.estados(registro, registro)
        assert "carril-rompe" not in cv.carriles_html(registro, registro)


def test_tras_una_excepcion_los_pasos_de_ese_actor_no_ocurren(exploraciones):
    exploracion = exploraciones[(CAIDA.nombre, "dos_transacciones")]
    registros = [r for r in exploracion.registros if any(e.error for e in r.eventos)]
    assert registros
    for registro in registros:
        caidos = set()
        for evento, estado in zip(registro.eventos, cv.estados(registro), strict=True):  # sin referencia: sin rojo
            if evento.error:
                assert estado == cv.ERROR
                caidos.add(evento.actor)
            elif evento.actor in caidos:
                assert estado == cv.NO_OCURRE
            else:
                assert estado == cv.BIEN


# --- Elegir variante --------------------------------------------------------------------------

def test_la_correcta_va_primero_y_una_variante_que_no_existe_se_rechaza():
    assert cv.variantes_en_orden(RESUMENES) == ["correcta"] + [n for n in RESUMENES.variantes if n != "correcta"]
    assert cv.variantes_en_orden(RESUMENES, ["ingenua"]) == ["correcta", "ingenua"]
    with pytest.raises(ValueError, match="no tiene la variante 'rapida'"):
        cv.variantes_en_orden(RESUMENES, ["ingenua", "rapida"])


# --- La vista ---------------------------------------------------------------------------------

def piezas(caja):
    """Cada widget de la vista, también los que van dentro de una fila (HBox)."""
    for hijo in caja.children:
        yield hijo
        yield from piezas(hijo) if hasattr(hijo, "children") else ()


def pieza(caja, clase):
    (encontrada,) = [w for w in piezas(caja) if clase in w._dom_classes]
    return encontrada


def html_de(caja, clase):
    (encontrado,) = [w.value for w in piezas(caja) if isinstance(getattr(w, "value", None), str) and clase in w.value]
    return encontrado


@pytest.fixture
def exploraciones_contadas(monkeypatch):
    """Cuenta cuántas veces explora la vista cada variante."""
    cuenta = Counter()

    def explorar_contando(escenario, variante, modulo=None):
        cuenta[variante] += 1
        return explorar(escenario, variante, modulo)

    monkeypatch.setattr(vista, "explorar", explorar_contando)
    return cuenta


def test_la_vista_se_construye_con_sus_piezas(exploraciones_contadas):
    caja = vista.explorar_carreras(CAIDA)
    variante = pieza(caja, "carreras-variante")
    deslizador = pieza(caja, "carreras-intercalado")
    assert list(variante.options) == cv.variantes_en_orden(CAIDA)
    assert variante.value == "correcta"
    assert (deslizador.min, deslizador.max, deslizador.value) == (1, multinomial(CAIDA), 1)
    assert deslizador.continuous_update is False
    n = multinomial(CAIDA)
    assert f"{n} intercalados: {n} correctos" in html_de(caja, 'class="carreras-totales"')
    assert "carreras-carriles" in html_de(caja, "carreras-carriles")
    assert "Intercalado 1 de" in html_de(caja, 'class="carreras-panel"')
    assert dict(exploraciones_contadas) == {"correcta": 1}  # las demás, cuando se eligen


def test_mover_el_deslizador_cambia_los_carriles_y_el_panel(exploraciones):
    caja = vista.explorar_carreras(CAIDA)
    deslizador = pieza(caja, "carreras-intercalado")
    antes = html_de(caja, "carreras-carriles")
    deslizador.value = deslizador.max
    despues = html_de(caja, "carreras-carriles")
    assert despues != antes
    registro = exploraciones[(CAIDA.nombre, "correcta")].registros[-1]
    assert despues == cv.carriles_html(registro, registro, elegido=1)  # la correcta no se aparta: el paso 1
    assert f"Intercalado {deslizador.max} de {deslizador.max}" in html_de(caja, 'class="carreras-panel"')


def test_cambiar_de_variante_cambia_los_totales_y_cada_una_se_explora_una_vez(exploraciones,
                                                                            exploraciones_contadas):
    caja = vista.explorar_carreras(CAIDA)
    variante = pieza(caja, "carreras-variante")
    deslizador = pieza(caja, "carreras-intercalado")
    antes = html_de(caja, 'class="carreras-totales"')
    variante.value = "marca_primero"
    despues = html_de(caja, 'class="carreras-totales"')
    assert despues != antes
    assert cv.totales(exploraciones[(CAIDA.nombre, "marca_primero")]) in despues
    assert "pierden una entrega" in despues
    for numero in range(1, deslizador.max + 1):
        deslizador.value = numero
    variante.value = "correcta"
    variante.value = "marca_primero"
    assert html_de(caja, 'class="carreras-totales"') == despues
    assert dict(exploraciones_contadas) == {"correcta": 1, "marca_primero": 1}


def test_en_la_vista_el_paso_que_rompe_sale_en_rojo(exploraciones):
    caja = vista.explorar_carreras(CAIDA, ["marca_primero"])
    pieza(caja, "carreras-variante").value = "marca_primero"
    primero = re.search(r"el primero que falla es el n\.º (\d+)", html_de(caja, 'class="carreras-totales"'))
    pieza(caja, "carreras-intercalado").value = int(primero.group(1))
    assert "carril-rompe" in html_de(caja, "carreras-carriles")
    assert "✘" in html_de(caja, 'class="carreras-panel"')


@pytest.mark.parametrize("ajustes, mensaje", [
    ({"variantes": ["rapida"]}, "no tiene la variante &#x27;rapida&#x27;"),
    ({"intercalado": 0}, "no hay intercalado n.º 0"),
    ({"intercalado": 999}, "no hay intercalado n.º 999"),
    ({"intercalado": "tres"}, "el intercalado tiene que ser un número entero"),
], ids=["variante", "cero", "fuera", "texto"])
def test_un_ajuste_imposible_se_muestra_en_el_widget_sin_traza(ajustes, mensaje):
    caja = vista.explorar_carreras(CAIDA, **ajustes)
    texto = html_de(caja, "carreras-panel")
    assert 'class="carreras-panel error"' in texto
    assert "No se puede dibujar: " in texto and mensaje in texto
    assert "Traceback" not in texto


# --- Elegir variante, intercalado y paso al abrir; saltar al que falla ----------------------------

def que_fallan(exploracion):
    return [r.numero for r in exploracion.registros if r.fallos]


def ya_exploradas(exploraciones):
    """Un `explorador` para la vista que devuelve las exploraciones del módulo (no explora otra vez)."""
    return lambda escenario, variante, modulo: exploraciones[(escenario.nombre, variante)]


@pytest.mark.parametrize("escenario, variante", [(RESUMENES, "ingenua"), (CAIDA, "marca_primero")], ids=nombre_corto)
def test_el_vecino_que_falla_salta_los_intercalados_buenos(exploraciones, escenario, variante):
    exploracion = exploraciones[(escenario.nombre, variante)]
    fallan = que_fallan(exploracion)
    for i in range(0, exploracion.total + 2):
        assert cv.vecino_que_falla(exploracion, i, +1) == next((n for n in fallan if n > i), None), i
        assert cv.vecino_que_falla(exploracion, i, -1) == next((n for n in reversed(fallan) if n < i), None), i
    # La variante ingenua del botón, «el de al lado», no da lo mismo en este escenario: el test la pillaría.
    assert any(i + 1 != cv.vecino_que_falla(exploracion, i, +1) for i in range(exploracion.total))
    assert cv.vecino_que_falla(exploraciones[(escenario.nombre, "correcta")], 0, +1) is None


def test_la_vista_se_abre_en_la_variante_el_intercalado_y_el_paso_que_se_le_piden(exploraciones):
    ingenua = exploraciones[(CAIDA.nombre, "marca_primero")]
    correcta = exploraciones[(CAIDA.nombre, "correcta")]
    primero = que_fallan(ingenua)[0]
    caja = vista.explorar_carreras(CAIDA, variante="marca_primero", intercalado=primero,
                                   explorador=ya_exploradas(exploraciones))
    assert pieza(caja, "carreras-variante").value == "marca_primero"
    assert pieza(caja, "carreras-intercalado").value == primero
    assert html_de(caja, 'class="carreras-panel"').split(">", 1)[1].startswith(
        f"Intercalado {primero} de {ingenua.total}, variante «marca_primero».")
    # El paso elegido es el que se aparta de la correcta, el rojo; y es la fila resaltada.
    rojo = cv.desvio(ingenua.registros[primero - 1], correcta.registros[primero - 1])
    assert rojo is not None and pieza(caja, "carreras-paso").value == rojo
    assert pieza(caja, "carreras-paso").max == len(ingenua.registros[primero - 1].eventos)
    assert f"Paso {rojo} de " in html_de(caja, 'class="carreras-transacciones"')
    assert html_de(caja, "carreras-carriles") == cv.carriles_html(
        ingenua.registros[primero - 1], correcta.registros[primero - 1], elegido=rojo)
    # Con un paso pedido, ese.
    otra = vista.explorar_carreras(CAIDA, variante="marca_primero", intercalado=primero, paso=1,
                                   explorador=ya_exploradas(exploraciones))
    assert pieza(otra, "carreras-paso").value == 1 and "Paso 1 de " in html_de(otra, 'class="carreras-transacciones"')


def test_la_vista_nombra_el_motor_de_la_exploracion(exploraciones):
    caja = vista.explorar_carreras(CAIDA, explorador=ya_exploradas(exploraciones))
    assert '<b class="carreras-motor">SQLite</b>' in html_de(caja, "carreras-motor")
    # El motor sale de la exploración, no del escenario: una que dijera otro se vería.
    otra = vista.explorar_carreras(CAIDA, explorador=lambda e, v, m: _con_motor(exploraciones[(e.nombre, v)],
                                                                                 "PostgreSQL"))
    assert '<b class="carreras-motor">PostgreSQL</b>' in html_de(otra, "carreras-motor")


def _con_motor(exploracion, motor):
    import dataclasses
    return dataclasses.replace(exploracion, motor=motor)


def test_los_botones_saltan_al_anterior_y_al_siguiente_que_falla(exploraciones):
    ingenua = exploraciones[(RESUMENES.nombre, "ingenua")]
    fallan = que_fallan(ingenua)
    caja = vista.explorar_carreras(RESUMENES, variante="ingenua", explorador=ya_exploradas(exploraciones))
    deslizador, anterior, siguiente = (pieza(caja, c) for c in (
        "carreras-intercalado", "carreras-anterior-que-falla", "carreras-siguiente-que-falla"))
    assert deslizador.value == 1 < fallan[0] and anterior.disabled and not siguiente.disabled
    siguiente.click()
    assert deslizador.value == fallan[0]
    hueco = next(a for a, b in pairwise(fallan) if b > a + 1)
    deslizador.value = hueco
    siguiente.click()
    assert deslizador.value == fallan[fallan.index(hueco) + 1]
    anterior.click()
    assert deslizador.value == hueco
    deslizador.value = fallan[-1]
    assert siguiente.disabled and not anterior.disabled
    pieza(caja, "carreras-variante").value = "correcta"
    assert anterior.disabled and siguiente.disabled


def test_una_variante_inicial_que_no_se_ofrece_se_dice_en_el_widget():
    caja = vista.explorar_carreras(CAIDA, ["marca_primero"], variante="sin_unique")
    texto = html_de(caja, "carreras-panel")
    assert "No se puede dibujar: la variante inicial" in texto and "Traceback" not in texto


# --- Lo que leyó y escribió cada transacción -------------------------------------------------------

def cambios_sin_escritura(registro):
    """Las posiciones de los pasos tras los que la foto de la base cambia sin que en ese paso se
    confirme ninguna transacción que escribiera algo, según lo anotado en `Evento.operaciones`."""
    escribe, confirmadas = {}, {}
    for evento in registro.eventos:
        for op in evento.operaciones:
            clave = (evento.actor, op.transaccion)
            escribe[clave] = escribe.get(clave, False) or op.clase == bitacora.ESCRIBE
            if op.clase == bitacora.CONFIRMA or (op.suelta and op.clase == bitacora.ESCRIBE):
                confirmadas.setdefault(evento.posicion, []).append(clave)
    return [e.posicion for antes, e in pairwise(registro.eventos)
            if e.observacion != antes.observacion
            and not any(escribe[clave] for clave in confirmadas.get(e.posicion, []))]


@pytest.mark.parametrize("escenario, variante", EXPLORADAS, ids=nombre_corto)
def test_cada_cambio_de_la_base_lo_explica_una_escritura_confirmada_en_su_paso(exploraciones, escenario, variante):
    exploracion = exploraciones[(escenario.nombre, variante)]
    assert any(e.operaciones for r in exploracion.registros for e in r.eventos)
    for registro in exploracion.registros:
        assert cambios_sin_escritura(registro) == [], registro.numero


def test_una_conexion_que_no_se_anota_se_nota():
    """La variante ingenua de un paso: `reinicia` con `bd = mundo.conexiones[actor] = abrir(...)`, que
    deja en `bd` la conexión sin envolver y admite con ella. Lo que escribe cambia la base sin que
    conste en la bitácora: la comprobación lo ve."""
    import dataclasses

    def reinicia_sin_anotar(mundo):
        bd = mundo.conexiones["logs"] = mundo.funcion("abrir_buzon")(mundo.ruta)
        return "; ".join(f"{p} {mundo.funcion('admitir')(bd, p)}" for p in mundo.modulo.pendientes(bd)) or "nada"

    logs = list(CAIDA.actores["logs"])
    logs[-1] = dataclasses.replace(logs[-1], hacer=reinicia_sin_anotar)
    ingenuo = dataclasses.replace(CAIDA, actores={**CAIDA.actores, "logs": logs})
    assert any(cambios_sin_escritura(r) for r in explorar(ingenuo, "correcta").registros)


def lecturas(registro, actor, paso):
    """Las operaciones LEE de `actor` en el evento `paso` de `registro`."""
    (evento,) = [e for e in registro.eventos if (e.actor, e.paso) == (actor, paso)]
    return [op for op in evento.operaciones if op.clase == bitacora.LEE]


def test_lo_que_lee_cada_resumidor_es_lo_que_habia_en_la_base(exploraciones):
    """La primera lectura de «lee la base» devuelve el activo y su cobertura: la cobertura leída es la
    de la foto del paso anterior (o la inicial, 2, si es el primero)."""
    for registro in exploraciones[(RESUMENES.nombre, "ingenua")].registros:
        fotos = {e.posicion: e.observacion for e in registro.eventos}
        for evento in registro.eventos:
            if evento.paso == "lee la base":
                cobertura = fotos[evento.posicion - 1]["cobertura"] if evento.posicion > 1 else escenarios_resumenes.COBERTURA_INICIAL
                primera = lecturas(registro, evento.actor, evento.paso)[0]
                assert re.match(rf"→ \((\d+|NULL), {cobertura}, ", primera.resultado), (registro.numero, primera)


def _bloques(texto):
    """{(actor, número): estado} de lo que dice `transacciones`."""
    return {(m[1], int(m[2])): m[3] for m in re.finditer(r"^(\S+), transacción (\d+) \((.*)\):$", texto, re.MULTILINE)}


def test_la_caida_pierde_la_transaccion_abierta(exploraciones):
    """En la caída de `marca_primero`: la transacción que marca se confirma y la que iba a añadir el
    mensaje se pierde con la conexión (lo que dice la lección 05 del paso rojo)."""
    ingenua, correcta = (exploraciones[(CAIDA.nombre, v)] for v in ("marca_primero", "correcta"))
    registro = ingenua.registros[que_fallan(ingenua)[0] - 1]
    rojo = cv.desvio(registro, correcta.registros[registro.numero - 1])
    estados = list(_bloques(cv.transacciones(registro, rojo)).values())
    assert estados == [f"confirmada en el paso {rojo}",
                       f"perdida en el paso {rojo}: la conexión se cerró sin confirmar, no queda nada de ella"]
    assert "UPDATE buzon SET disposicion='admitida'" in cv.transacciones(registro, rojo)


def test_un_paso_sin_base_lo_dice_y_uno_que_no_existe_es_un_error(exploraciones):
    registro = exploraciones[(RESUMENES.nombre, "correcta")].registros[0]
    prepara = registro.orden.index(("A", "prepara hasta 4")) + 1
    assert cv.transacciones(registro, prepara).splitlines()[1].startswith("En este paso nadie lee ni escribe")
    for malo in (0, len(registro.eventos) + 1, "1", True):
        with pytest.raises(ValueError, match="no hay paso n.º"):
            cv.transacciones(registro, malo)


@pytest.mark.parametrize("escenario", [RESUMENES, escenarios_postgres.RESUMENES], ids=["04", "07"])
def test_el_orden_de_la_carrera_de_los_resumenes_se_lee_sin_repetir_el_actor(escenario):
    """«llegada llega el mensaje 5» repite la palabra: cada paso se lee «actor verbo…»."""
    for actor, pasos in escenario.actores.items():
        for paso in pasos:
            primera = paso.nombre.split()[0]
            assert primera[:5].lower() != actor[:5].lower(), f"{actor} {paso.nombre}"


def test_la_bitacora_numera_las_transacciones_y_apunta_lo_que_devuelve_cada_sentencia(tmp_path):
    """Una conexión de SQLite envuelta, sin explorador: cada sentencia en su transacción (las sueltas,
    una cada una), lo leído y lo escrito, y el COMMIT de un `with bd:`."""
    import sqlite3

    apuntes = bitacora.Bitacora()
    bd = bitacora.ConexionQueAnota(sqlite3.connect(tmp_path / "b.db", isolation_level=None), apuntes)
    try:
        bd.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, texto TEXT)")
        bd.execute("BEGIN IMMEDIATE")
        bd.execute("INSERT INTO t(texto) VALUES (?)", ("uno",))
        assert bd.execute("SELECT id, texto FROM t WHERE texto=?", ("uno",)).fetchone() == (1, "uno")
        bd.execute("COMMIT")
        assert [fila for fila in bd.execute("SELECT texto FROM t")] == [("uno",)]
        with bd:
            bd.execute("BEGIN")
            bd.execute("UPDATE t SET texto='dos' WHERE id=?", (7,))
    finally:
        bd.close()
    vistas = [(op.transaccion, op.clase, op.sentencia, op.resultado, op.suelta) for op in apuntes.sacar()]
    assert vistas == [
        (1, "empieza", "BEGIN IMMEDIATE", "", False),
        (1, "escribe", "INSERT INTO t(texto) VALUES ('uno')", "→ 1 fila, id 1", False),
        (1, "lee", "SELECT id, texto FROM t WHERE texto='uno'", "→ (1, 'uno')", False),
        (1, "confirma", "COMMIT", "", False),
        (2, "lee", "SELECT texto FROM t", "→ ('uno',)", True),
        (3, "empieza", "BEGIN", "", False),
        (3, "escribe", "UPDATE t SET texto='dos' WHERE id=7", "→ ninguna fila", False),
        (3, "confirma", "COMMIT (al salir de with)", "", False),
    ]
    assert apuntes.sacar() == ()  # lo recogido ya no vuelve a salir
