"""El widget de las carreras (lecciones 04 y 05): sus textos y sus carriles (`curso.carreras.textos`)
y la vista fina que los coloca (`curso.carreras.widget`).

Lo esperado se cuenta aquí, registro a registro, o se deduce del orden de los pasos; no se copia
de lo que dicen las funciones que se prueban.
"""
import math
import re
from collections import Counter
from html.parser import HTMLParser

import pytest

from curso.carreras import textos as cv
from curso.carreras import ERROR_INESPERADO, explorar
from curso.carreras.escenarios import buzon as escenarios_buzon
from curso.carreras.escenarios import resumenes as escenarios_resumenes
from curso.carreras import widget as vista

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
        for etiqueta, celda in zip(por_escenario, fila[1:-1]):
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
    for fila, evento, estado in zip(tabla.filas, registro.eventos, cv.estados(registro, otro)):
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
    for registro, referencia in zip(ingenua.registros, correcta.registros):
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
        for evento, estado in zip(registro.eventos, cv.estados(registro)):  # sin referencia: sin rojo
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

def pieza(caja, clase):
    (encontrada,) = [w for w in caja.children if clase in w._dom_classes]
    return encontrada


def html_de(caja, clase):
    (encontrado,) = [w.value for w in caja.children if isinstance(w.value, str) and clase in w.value]
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
    assert despues == cv.carriles_html(registro, registro)
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
