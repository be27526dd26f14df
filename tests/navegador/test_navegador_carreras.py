"""El test del navegador del widget de las carreras (lecciones 04 y 05), dibujado de verdad en JupyterLab.

Ejecuta un cuaderno con un `explorar_carreras(...)` (`curso/carreras/widget.py`), cambia a una
variante ingenua, mueve el deslizador del intercalado y comprueba que el widget contesta: los
totales pasan a decir qué falla y los carriles cambian, con el paso que rompe en rojo.

`comprobar_widget_de_carreras(pagina, servidor, cuaderno)` hace todo eso con cualquier cuaderno
que muestre UN widget de carreras: añadir el cuaderno de una lección es un test de una línea.
Las piezas (servidor, navegador, esperas) están en `tests/navegador/navegador.py`; el servidor, el navegador
y la pestaña de cada test, en las fixtures de `tests/navegador/conftest.py`.
"""
import re

from navegador import (ESPERA_WIDGET, RAIZ, EsperaAgotada, abrir_y_ejecutar, captura,
                       esperar_texto_distinto, poner_deslizador, texto_de, unico)

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_carreras.ipynb"

# Las clases CSS del widget (curso/carreras/widget.py).
VARIANTE = ".widget-toggle-buttons.carreras-variante"
DESLIZADOR = "carreras-intercalado"
CARRILES = ".carreras-carriles"
PANEL = "pre.carreras-panel"
TOTALES = "pre.carreras-totales"
ROJO = f"{CARRILES} .carril-rompe"

# La primera línea de los totales (curso.carreras.textos.totales) y lo que la comparación dice del
# primer intercalado que falla (curso.carreras.textos.comparacion).
LINEA_DE_TOTALES = re.compile(r"^(\d+) intercalados: (\d+) correctos(?:, (.+))?$")
PRIMERO_QUE_FALLA = re.compile(r"el primero que falla es el n\.º (\d+)\.")


# `servidor`, `navegador` (uno para toda la sesión) y `pagina` (una pestaña por test, con una
# captura si falla) son de tests/navegador/conftest.py.


# --- La comprobación, para cualquier cuaderno con un widget de carreras --------------------------

def leer_totales(texto):
    """(total, correctos, fallos o None, la línea de la comparación) de lo que muestran los totales."""
    primera, _, comparacion = texto.partition("\n")
    encaje = LINEA_DE_TOTALES.match(primera.strip())
    assert encaje, f"Los totales no empiezan por «N intercalados: X correctos»:\n{texto}"
    total, correctos, fallos = encaje.groups()
    return int(total), int(correctos), fallos, comparacion.strip()


def _valor_del_deslizador(pagina):
    return int(texto_de(pagina, f".widget-slider.{DESLIZADOR} .widget-readout"))


def _mover(pagina, valor, total):
    """Mueve el deslizador a `valor` y espera a que los carriles cambien y el panel hable de `valor`."""
    antes = texto_de(pagina, CARRILES)
    poner_deslizador(pagina, DESLIZADOR, valor)
    esperar_texto_distinto(pagina, CARRILES, antes)
    cabecera = f"Intercalado {valor} de {total},"
    try:
        pagina.wait_for_function(
            """([selector, cabecera]) => {
                 const e = document.querySelectorAll(selector);
                 return e.length === 1 && e[0].innerText.startsWith(cabecera);
               }""", arg=[PANEL, cabecera], timeout=ESPERA_WIDGET * 1000)
    except EsperaAgotada as error:
        raise AssertionError(f"El panel no pasó a «{cabecera}…»; dice:\n{texto_de(pagina, PANEL)}") from error


def comprobar_widget_de_carreras(pagina, servidor, cuaderno):
    """Ejecuta `cuaderno` en el JupyterLab de `servidor` y comprueba su widget de carreras.

    1. El widget está, con la variante correcta elegida, y sus totales dicen «N intercalados:
       N correctos»; el deslizador va de 1 a N.
    2. Cambia, en el orden de los botones, a la primera variante ingenua cuyos totales dicen
       que falla algún intercalado (tiene que haber una).
    3. Mueve el deslizador: los carriles cambian. Lo lleva al primer intercalado que falla
       (el que dice la comparación): el panel lo marca con ✘ y hay un paso en rojo.

    Devuelve lo que vio ({"correcta", "ingenua", "totales", "intercalado", "panel"}) por si el
    test de una lección quiere comprobar algo más.
    """
    abrir_y_ejecutar(pagina, servidor, cuaderno)
    botones = unico(pagina, VARIANTE).locator("button.widget-toggle-button")
    nombres = [nombre.strip() for nombre in botones.all_inner_texts()]
    assert len(nombres) >= 2, f"El widget ofrece las variantes {nombres}: falta alguna ingenua."
    activo = unico(pagina, f"{VARIANTE} button.mod-active").inner_text().strip()
    assert activo == nombres[0], f"Al empezar está elegida «{activo}», no la primera, «{nombres[0]}»."

    total, correctos, fallos, _ = leer_totales(texto_de(pagina, TOTALES))
    assert (correctos, fallos) == (total, None), (
        f"La variante «{activo}» debería dar {total} de {total} correctos:\n{texto_de(pagina, TOTALES)}")
    tirador = unico(pagina, f".widget-slider.{DESLIZADOR} .noUi-handle")
    extremos = (float(tirador.get_attribute("aria-valuemin")), float(tirador.get_attribute("aria-valuemax")))
    assert extremos == (1, total), f"El deslizador va de {extremos[0]:g} a {extremos[1]:g}, no de 1 a {total}."

    # 2. La primera variante ingenua que falla en este escenario.
    ingenua = None
    for nombre in nombres[1:]:
        antes = texto_de(pagina, TOTALES)
        botones.filter(has_text=re.compile(rf"^\s*{re.escape(nombre)}\s*$")).click()
        texto = esperar_texto_distinto(pagina, TOTALES, antes)
        total_ingenua, correctos, fallos, comparacion = leer_totales(texto)
        assert total_ingenua == total, f"Con «{nombre}» cambió el número de intercalados:\n{texto}"
        assert f"«{nombre}»" in comparacion, f"La comparación no nombra la variante «{nombre}»:\n{texto}"
        if correctos < total:
            assert fallos, f"«{nombre}» tiene {total - correctos} intercalados que fallan, pero no dice qué:\n{texto}"
            ingenua = nombre
            break
    assert ingenua, f"Ninguna variante ingenua de {nombres[1:]} falla en este escenario."
    encaje = PRIMERO_QUE_FALLA.search(comparacion)
    assert encaje, f"La comparación no dice cuál es el primer intercalado que falla:\n{texto}"
    primero = int(encaje.group(1))

    # 3. Mover el deslizador cambia los carriles; en el primero que falla hay un paso en rojo.
    otro = primero if primero != _valor_del_deslizador(pagina) else (total if primero != total else 1)
    _mover(pagina, otro, total)
    if otro != primero:
        _mover(pagina, primero, total)
    panel = texto_de(pagina, PANEL)
    assert panel.startswith(f"Intercalado {primero} de {total}, variante «{ingenua}»."), panel
    assert "✘" in panel, f"El intercalado n.º {primero} falla, pero el panel no marca ninguna invariante:\n{panel}"
    assert pagina.locator(ROJO).count() == 1, (
        f"En el intercalado n.º {primero} debería haber un paso en rojo y hay {pagina.locator(ROJO).count()}.")
    captura(pagina, f"carreras_{cuaderno.stem}", mostrar=TOTALES)
    return {"correcta": activo, "ingenua": ingenua, "totales": texto, "intercalado": primero, "panel": panel}


# --- Los cuadernos ------------------------------------------------------------------------------

def test_el_widget_de_las_carreras_responde_en_el_cuaderno_de_prueba(pagina, servidor):
    visto = comprobar_widget_de_carreras(pagina, servidor, CUADERNO_DE_PRUEBA)
    assert visto["ingenua"] == "ingenua"  # en el escenario de la lección 04, la primera ingenua ya falla


def test_el_widget_de_las_carreras_responde_en_la_leccion_04(pagina, servidor):
    visto = comprobar_widget_de_carreras(pagina, servidor, RAIZ / "solutions" / "04_resumenes_en_sqlite.ipynb")
    assert visto


def test_el_widget_de_las_carreras_responde_en_la_leccion_05(pagina, servidor):
    visto = comprobar_widget_de_carreras(pagina, servidor, RAIZ / "solutions" / "05_el_buzon.ipynb")
    assert visto
