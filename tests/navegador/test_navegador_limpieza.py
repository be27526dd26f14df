"""El test del navegador del explorable de la limpieza (lección 03b), dibujado de verdad en JupyterLab.

Ejecuta un cuaderno mínimo (`tests/datos/cuaderno_de_prueba_limpieza.ipynb`) con dos corridas del
atasco mandadas al motor del servidor de ensayo con una limpieza hecha a mano, y su
`mostrar_limpieza(...)` (`curso/explorables/ventana/widget_de_la_limpieza.py`). Mueve el
deslizador del turno y comprueba que las dos barras (su raya de la caché) y el veredicto pasan al
turno elegido, con las cifras que calcula aquí mismo `curso.explorables.ventana.limpieza` sobre
las mismas corridas. Debajo, la variante ingenua: el mismo widget con un deslizador que nadie
escucha; el test tiene que notar que no cambia. Las piezas (servidor, navegador, esperas) están en
`tests/navegador/navegador.py`; el servidor, el navegador y la pestaña, en conftest.py.
"""
import pytest

from corridas_de_limpieza import dos_corridas
from curso.explorables.ventana import limpieza as l
from curso.medir.redibujo_de_la_ventana import atasco
from navegador import (RAIZ, abrir_y_ejecutar, captura, esperar_texto_distinto, exigir_maquetacion,
                       poner_deslizador, texto_de, unico)

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_limpieza.ipynb"

# Las clases CSS del widget, y las que el cuaderno pone a su variante sorda.
CAJA = ".explorar-limpieza"
DESLIZADOR = "limpieza-turno"
VEREDICTO = f"{CAJA} pre.veredicto-limpieza"
BARRAS = f"{CAJA} div.limpieza-barra"
DESLIZADOR_SORDO = "limpieza-turno-sordo"
VEREDICTO_SORDO = ".limpieza-sorda pre.veredicto-limpieza"
TURNO_ELEGIDO = 5  # uno en el que «cada turno» acaba de borrar y «por tandas» todavía no
ESPERA_CORTA = 3  # solo donde el texto NO debe cambiar: un widget que escucha contesta antes


@pytest.fixture(scope="module")
def pares():
    """Las mismas corridas que hace el cuaderno, analizadas en este proceso."""
    traza = atasco()
    a, b, originales = dos_corridas(traza)
    return l.comparar(a, b, originales, traza["herramientas"], traza["fichero"])


def _barras(pagina):
    """(entrada, en_cache) de cada barra del widget, como las dibujó el navegador."""
    unico(pagina, CAJA)
    return [(int(b.get_attribute("data-entrada")), int(b.get_attribute("data-en-cache")))
            for b in pagina.locator(BARRAS).all()]


def _de(par):
    return [(p.entrada, p.en_cache) for p in par]


def test_el_explorable_de_la_limpieza_responde_al_deslizador(pagina, servidor, pares):
    abrir_y_ejecutar(pagina, servidor, CUADERNO_DE_PRUEBA)
    ultimo = len(pares)
    antes = texto_de(pagina, VEREDICTO)
    assert antes.strip() == l.veredicto(pares, ultimo), antes  # se abre en el último turno
    assert _barras(pagina) == _de(pares[ultimo - 1])

    poner_deslizador(pagina, DESLIZADOR, TURNO_ELEGIDO)
    despues = esperar_texto_distinto(pagina, VEREDICTO, antes)

    assert despues.strip() == l.veredicto(pares, TURNO_ELEGIDO), despues
    barras = _barras(pagina)
    assert barras == _de(pares[TURNO_ELEGIDO - 1])
    assert all(x != y for x, y in zip(barras, _de(pares[ultimo - 1]), strict=True))  # las dos cambian
    assert pagina.locator(f"{CAJA} div.limpieza-raya").count() == 2
    exigir_maquetacion(pagina, CAJA)
    captura(pagina, "test_el_explorable_de_la_limpieza_responde_al_deslizador", mostrar=VEREDICTO)


def test_un_explorable_que_no_escucha_al_deslizador_no_pasa_por_bueno(pagina, servidor):
    # La variante ingenua: el deslizador se mueve en la página, pero nadie en el núcleo lo
    # escucha. El test tiene que notarlo, no dar por bueno el movimiento.
    abrir_y_ejecutar(pagina, servidor, CUADERNO_DE_PRUEBA)
    antes = texto_de(pagina, VEREDICTO_SORDO)
    poner_deslizador(pagina, DESLIZADOR_SORDO, TURNO_ELEGIDO)
    with pytest.raises(AssertionError, match="no cambió"):
        esperar_texto_distinto(pagina, VEREDICTO_SORDO, antes, espera=ESPERA_CORTA)
    captura(pagina, "test_un_explorable_que_no_escucha_al_deslizador_no_pasa_por_bueno")
