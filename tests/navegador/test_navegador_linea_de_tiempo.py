"""El test del navegador del widget de la línea de tiempo (lección 06), dibujado de verdad en JupyterLab.

Ejecuta un cuaderno mínimo con una ejecución de la lección 06 que cae una vez y su
`explorar_linea_de_tiempo(...)` (`curso/vistas/linea_de_tiempo.py`), y mueve el deslizador: el
panel pasa a hablar del paso elegido, la columna resaltada de los carriles se mueve, y en los
carriles están la caída y la reanudación. Las piezas (servidor, navegador, esperas) están en
`tests/navegador/navegador.py`; el servidor de JupyterLab, el navegador y la pestaña de cada test son
las fixtures de conftest.py.
"""
import re

from navegador import RAIZ, abrir_y_ejecutar, captura, esperar_texto_distinto, poner_deslizador, texto_de, unico

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_linea_de_tiempo.ipynb"

# Las clases CSS del widget (curso/vistas/linea_de_tiempo.py).
DESLIZADOR = "linea-paso"
CARRILES = ".linea-carriles"
ELEGIDO = f"{CARRILES} td.linea-elegido"
PANEL = "pre.linea-panel"
CABECERA = re.compile(r"^Paso (\d+) de (\d+) · vida (\d+) · (\w+)")


def cabecera(pagina):
    encaje = CABECERA.match(texto_de(pagina, PANEL).strip())
    assert encaje, f"El panel no empieza por «Paso N de M · vida V · clase»:\n{texto_de(pagina, PANEL)}"
    paso, total, vida, clase = encaje.groups()
    return int(paso), int(total), int(vida), clase


def columna_elegida(pagina):
    """El índice (desde 0) de la columna resaltada en la primera fila de los carriles."""
    return pagina.evaluate(f"""() => {{
        const fila = document.querySelector('{CARRILES} tr');
        return [...fila.querySelectorAll('td')].findIndex(td => td.classList.contains('linea-elegido'));
    }}""")


def test_el_widget_de_la_linea_de_tiempo_responde_al_deslizador(pagina, servidor):
    abrir_y_ejecutar(pagina, servidor, CUADERNO_DE_PRUEBA)
    unico(pagina, CARRILES)
    paso, total, vida, clase = cabecera(pagina)
    assert (paso, vida) == (1, 1), texto_de(pagina, PANEL)
    filas = pagina.locator(f"{CARRILES} tr").count()
    assert filas == 3, f"Tendría que haber un carril por agente (3) y hay {filas}."
    assert pagina.locator(ELEGIDO).count() == filas and columna_elegida(pagina) == 0
    carriles = texto_de(pagina, CARRILES)
    assert "✖" in carriles and "↻" in carriles, f"Faltan la caída o la reanudación en los carriles:\n{carriles}"
    tirador = unico(pagina, f".widget-slider.{DESLIZADOR} .noUi-handle")
    assert float(tirador.get_attribute("aria-valuemax")) == total

    for destino in (total, total // 2):
        antes = texto_de(pagina, PANEL)
        poner_deslizador(pagina, DESLIZADOR, destino)
        esperar_texto_distinto(pagina, PANEL, antes)
        paso, total_ahora, vida, _ = cabecera(pagina)
        assert (paso, total_ahora) == (destino, total), texto_de(pagina, PANEL)
        assert columna_elegida(pagina) == destino - 1
        assert pagina.locator(ELEGIDO).count() == filas
    antes = texto_de(pagina, PANEL)
    poner_deslizador(pagina, DESLIZADOR, total)
    esperar_texto_distinto(pagina, PANEL, antes)
    assert cabecera(pagina)[2] == 2, "El último paso es de la vida 2, tras la caída."
    captura(pagina, "linea_de_tiempo", mostrar=CARRILES)
