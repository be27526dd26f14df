"""El test del navegador: los widgets del curso, dibujados de verdad en JupyterLab.

Arranca JupyterLab sin pantalla en 127.0.0.1, lo recorre con el Chromium de Debian
(`/usr/bin/chromium`) y Playwright para Python, ejecuta un cuaderno entero, mueve un deslizador y
comprueba que el widget contesta. Cada test guarda una captura en `artefactos/navegador/`.

Lo estrena la lección 02 (el explorable de la ventana). Sin Chromium, en la máquina de quien
aprende, se salta diciendo por qué; en CI (`CI=true`) falla: allí `.ci/run` instala chromium.

Un servidor y un navegador para todo el módulo; las piezas están en `tests/navegador/navegador.py`.
"""
import re

import pytest

import navegador as piezas_del_navegador
from curso.explorables.ventana.presupuesto import POLITICAS
from navegador import (RAIZ, abrir_y_ejecutar, captura, esperar_texto_distinto,
                       exigir_maquetacion, exigir_navegador, nueva_pagina, poner_deslizador,
                       texto_de, unico)

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_widgets.ipynb"
CUADERNO_VENTANA = RAIZ / "solutions" / "02_la_ventana.ipynb"

# Lo bastante para que un widget que sí escucha hubiera contestado (contesta en décimas de
# segundo) y poco para no alargar el test: solo se usa donde el texto NO debe cambiar.
ESPERA_CORTA = 3

# El explorable de la ventana (curso/explorables/ventana/widget_de_la_ventana.py): las clases CSS de sus piezas.
DESLIZADOR_VENTANA = "ventana-ventana"
DESLIZADOR_TURNO = "ventana-turno"
POLITICA = ".widget-toggle-buttons.ventana-politica"
VEREDICTO_VENTANA = "pre.veredicto-ventana"
VENTANA_DEL_CURSO = 8192  # la ventana con la que empieza la lección: la petición 11 no cabe
VENTANA_QUE_BASTA = 12544  # la que calcula la lección: cabe y la compactación no salta (test_ventana)


# --- Fixtures: un servidor, un navegador, una pestaña por test ---------------------------------

# `servidor` y `navegador` son de tests/navegador/conftest.py: uno para toda la sesión.

def _captura_si_falla(request, pagina):
    """Tras el test: si ha fallado, una captura `<test>-fallo.png` para ver qué había en pantalla."""
    fallos = request.session.testsfailed
    yield pagina
    if request.session.testsfailed > fallos:
        captura(pagina, f"{request.node.name}-fallo")


@pytest.fixture
def pagina(request, navegador):
    """Una pestaña nueva para el test."""
    nueva = nueva_pagina(navegador)
    yield from _captura_si_falla(request, nueva)
    nueva.context.close()


@pytest.fixture(scope="module")
def _cuaderno_de_prueba_abierto(navegador, servidor):
    abierta = nueva_pagina(navegador)
    abrir_y_ejecutar(abierta, servidor, CUADERNO_DE_PRUEBA)
    yield abierta
    abierta.context.close()


@pytest.fixture
def cuaderno_de_prueba(request, _cuaderno_de_prueba_abierto):
    """La pestaña con el cuaderno de prueba ya ejecutado (una vez para todo el módulo)."""
    yield from _captura_si_falla(request, _cuaderno_de_prueba_abierto)


def _valor(pagina, clase_css):
    return int(texto_de(pagina, f".widget-slider.{clase_css} .widget-readout"))


# --- Sin Chromium: se salta en casa, falla en CI ------------------------------------------------

def test_sin_chromium_el_test_se_salta_diciendo_que_instalar(monkeypatch):
    monkeypatch.setattr(piezas_del_navegador, "CHROMIUM", RAIZ / "no-hay-chromium-aqui")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        exigir_navegador()


def test_en_ci_sin_chromium_el_test_falla_en_vez_de_saltarse(monkeypatch):
    monkeypatch.setattr(piezas_del_navegador, "CHROMIUM", RAIZ / "no-hay-chromium-aqui")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="En CI el test del navegador tiene que correr"):
        exigir_navegador()


# --- El harness del test, con el cuaderno de prueba ----------------------------------------------

@pytest.mark.humo  # el test del navegador que corre también `probar --rapido`
def test_el_navegador_ve_un_widget_y_lo_mueve(cuaderno_de_prueba):
    pagina = cuaderno_de_prueba
    antes = _valor(pagina, "prueba-deslizador")
    # El eco lo calcula el núcleo: «doble» no lo sabe el navegador por sí solo.
    assert texto_de(pagina, "pre.prueba-eco") == f"valor={antes} doble={2 * antes}"

    nuevo = antes + 32
    poner_deslizador(pagina, "prueba-deslizador", nuevo)
    despues = esperar_texto_distinto(pagina, "pre.prueba-eco", f"valor={antes} doble={2 * antes}")

    assert despues == f"valor={nuevo} doble={2 * nuevo}"
    captura(pagina, "test_el_navegador_ve_un_widget_y_lo_mueve")


def test_un_eco_que_no_escucha_al_deslizador_no_pasa_por_bueno(cuaderno_de_prueba):
    # La variante ingenua del cuaderno de prueba: el deslizador se mueve en la página, pero nadie
    # en el núcleo observa su valor. El test tiene que notarlo, no dar por bueno el movimiento.
    pagina = cuaderno_de_prueba
    antes = texto_de(pagina, "pre.prueba-eco-sordo")
    poner_deslizador(pagina, "prueba-sordo", _valor(pagina, "prueba-sordo") + 32)

    with pytest.raises(AssertionError, match="no cambió"):
        esperar_texto_distinto(pagina, "pre.prueba-eco-sordo", antes, espera=ESPERA_CORTA)
    captura(pagina, "test_un_eco_que_no_escucha_al_deslizador_no_pasa_por_bueno")


# --- Lección 02: el explorable de la ventana ----------------------------------------------------

def _linea_de_la_compactacion(veredicto):
    lineas = [linea for linea in veredicto.splitlines() if "compacta" in linea]
    assert len(lineas) == 1, f"El veredicto no tiene una línea de la compactación:\n{veredicto}"
    return lineas[0]


def _cabe(veredicto):
    """Lo que dice la primera línea del veredicto: True si «cabe», False si «no cabe»."""
    primera = veredicto.splitlines()[0]
    if re.search(r"\bno cabe\b", primera):
        return False
    assert re.search(r"\bcabe\b", primera), f"El veredicto no dice si cabe:\n{veredicto}"
    return True


def test_el_explorable_de_la_ventana_responde_al_deslizador(pagina, servidor):
    abrir_y_ejecutar(pagina, servidor, CUADERNO_VENTANA)
    unico(pagina, f".widget-slider.{DESLIZADOR_TURNO}")
    assert _valor(pagina, DESLIZADOR_VENTANA) == VENTANA_DEL_CURSO
    antes = texto_de(pagina, VEREDICTO_VENTANA)
    assert not _cabe(antes), f"Con la ventana de {VENTANA_DEL_CURSO} la petición no cabe:\n{antes}"

    poner_deslizador(pagina, DESLIZADOR_VENTANA, VENTANA_QUE_BASTA)
    despues = esperar_texto_distinto(pagina, VEREDICTO_VENTANA, antes)

    assert str(VENTANA_QUE_BASTA) in despues.splitlines()[0], despues
    assert _cabe(despues), f"Con la ventana de {VENTANA_QUE_BASTA} la petición cabe:\n{despues}"
    assert "no salta" in _linea_de_la_compactacion(despues), despues

    # Los tres botones de la política, con su nombre entero a la vista (no «lo descarta el har…»),
    # y ningún texto del explorable partido a mitad de palabra.
    botones = unico(pagina, POLITICA).locator("button")
    assert [b.strip() for b in botones.all_inner_texts()] == [nombre for nombre, _ in POLITICAS.values()]
    exigir_maquetacion(pagina, ".explorar-ventana")
    captura(pagina, "test_el_explorable_de_la_ventana_responde_al_deslizador", mostrar=VEREDICTO_VENTANA)
