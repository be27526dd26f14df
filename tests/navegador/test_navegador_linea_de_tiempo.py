"""El test del navegador del widget de la línea de tiempo (lección 06), dibujado de verdad en JupyterLab.

Ejecuta un cuaderno mínimo con una ejecución de la lección 06 que cae una vez y su
`explorar_linea_de_tiempo(...)` (`curso/explorables/linea_de_tiempo/widget_de_la_linea.py`), como lo abre la lección, y
comprueba lo que se ve: se abre en el último paso antes de la caída (la columna de ✖), el panel
cuenta ese paso con palabras y no con etiquetas de la base, bajo los carriles hay un eje con el
número de cada paso en su columna, la leyenda explica cada color que hay en los carriles y dice la
misma dimensión de la barra («alto») que el texto de la lección, y a 1400 px ningún texto se parte a
mitad de palabra. Después mueve el deslizador: el panel pasa a hablar del paso elegido, la columna
resaltada de los carriles se mueve, y el último paso es de la vida 2. Las piezas (servidor,
navegador, esperas) están en `tests/navegador/navegador.py`; el servidor de JupyterLab, el
navegador y la pestaña de cada test son las fixtures de conftest.py.
"""
import json
import re

from navegador import (RAIZ, abrir_y_ejecutar, captura, esperar_texto_distinto, exigir_maquetacion,
                       poner_deslizador, texto_de, unico)

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_linea_de_tiempo.ipynb"
LECCION = RAIZ / "solutions" / "06_todo_junto.ipynb"

# Las clases CSS del widget (curso/explorables/linea_de_tiempo/widget_de_la_linea.py).
DESLIZADOR = "linea-paso"
CARRILES = ".linea-carriles"
ELEGIDO = f"{CARRILES} td.linea-elegido"
LEYENDA = f"{CARRILES} > div:last-child"
PANEL = "pre.linea-panel"
CABECERA = re.compile(r"^Paso (\d+) de (\d+) · vida (\d+) · (.+)$", re.MULTILINE)
CAIDA = "✖"

# Las etiquetas con que la base apunta cada clase de paso (la columna `clase` de `pasos`): son
# identificadores, sin tildes; el panel tiene que contar el paso con palabras.
CLASES_DE_PASO = ("vida", "peticion", "respuesta", "observaciones", "integracion", "limpieza", "compactacion",
                  "recibir", "admitir", "intencion", "resultado", "terminar", "reintento")
SIN_TILDE = re.compile(r"\b(intencion|peticion|compactacion|integracion|activacion|reanudacion)\b")
ETIQUETA = re.compile(rf"^({'|'.join(CLASES_DE_PASO)}) de \w+$")
DIMENSIONES = re.compile(r"\b(alto|altura|largo|longitud|ancho|anchura)\b")

# Dentro de la página: los colores que pone cada elemento con un color propio en su estilo (el de
# la letra o el del fondo), en los carriles (sin la fila del eje) y en la leyenda.
_JS_COLORES = """() => {
  const raiz = document.querySelector('.linea-carriles');
  const tabla = raiz.querySelector('table');
  const leyenda = [...raiz.children].filter(e => e.tagName === 'DIV').pop();
  const colores = (elementos) => {
    const vistos = new Set();
    for (const e of elementos) {
      const estilo = e.getAttribute('style') || '';
      const calculado = getComputedStyle(e);
      if (/(^|;)\\s*background(-color)?\\s*:/.test(estilo)) vistos.add(calculado.backgroundColor);
      if (/(^|;)\\s*color\\s*:/.test(estilo)) vistos.add(calculado.color);
    }
    return [...vistos].sort();
  };
  const filas = [...tabla.querySelectorAll('tr')].filter(tr => !tr.classList.contains('linea-eje'));
  return {carriles: colores(filas.flatMap(tr => [tr, ...tr.querySelectorAll('*')])),
          leyenda: colores(leyenda ? leyenda.querySelectorAll('*') : [])};
}"""

# Dentro de la página: la fila del eje, si la hay: si está debajo de los carriles, cuántas
# columnas tienen los carriles, y cada rótulo del eje con su columna y si cae dentro de ella.
_JS_EJE = """() => {
  const tabla = document.querySelector('.linea-carriles table');
  const eje = tabla.querySelector('tr.linea-eje');
  if (!eje) return null;
  const carriles = [...tabla.querySelectorAll('tr')].filter(tr => tr !== eje);
  const ultimo = carriles[carriles.length - 1];
  const columnas = [...ultimo.querySelectorAll('td')].map(td => td.getBoundingClientRect());
  const celdas = [...eje.querySelectorAll('td')];
  return {
    debajo: eje.getBoundingClientRect().top >= ultimo.getBoundingClientRect().bottom - 1,
    columnas: columnas.length,
    celdas: celdas.length,
    rotulos: celdas.map((td, i) => {
      const r = td.getBoundingClientRect(), centro = r.left + r.width / 2, texto = td.innerText.trim();
      return texto ? [i, texto, i < columnas.length && columnas[i].left <= centro && centro <= columnas[i].right]
                   : null;
    }).filter(x => x),
  };
}"""


def cabecera(pagina):
    encaje = CABECERA.search(texto_de(pagina, PANEL).strip())
    assert encaje, f"El panel no empieza por «Paso N de M · vida V · qué pasó»:\n{texto_de(pagina, PANEL)}"
    paso, total, vida, que = encaje.groups()
    return int(paso), int(total), int(vida), que


def columna_elegida(pagina):
    """El índice (desde 0) de la columna resaltada en la primera fila de los carriles."""
    return pagina.evaluate(f"""() => {{
        const fila = document.querySelector('{CARRILES} tr');
        return [...fila.querySelectorAll('td')].findIndex(td => td.classList.contains('linea-elegido'));
    }}""")


def columna_de(pagina, simbolo):
    """El índice (desde 0) de la columna de la primera fila de los carriles donde está `simbolo`."""
    return pagina.evaluate(f"""(simbolo) => {{
        const fila = document.querySelector('{CARRILES} tr');
        return [...fila.querySelectorAll('td')].findIndex(td => td.innerText.includes(simbolo));
    }}""", simbolo)


def exigir_palabras_y_no_etiquetas(pagina):
    """El panel cuenta el paso con palabras: ni una etiqueta sin tilde ni «respuesta de config»."""
    panel = texto_de(pagina, PANEL)
    assert not SIN_TILDE.search(panel), f"El panel usa una etiqueta sin tilde («{SIN_TILDE.search(panel)[0]}»):\n{panel}"
    que = cabecera(pagina)[3]
    assert not ETIQUETA.match(que), f"El panel cuenta el paso con la etiqueta de la base, «{que}»."


def dimensiones_de_la_barra_en_la_leccion():
    """Las palabras de dimensión («alto», «largo»…) de cada frase de la lección 06 que habla de una
    barra de la línea de tiempo (las celdas de texto desde «## La línea de tiempo»)."""
    celdas = json.loads(LECCION.read_text(encoding="utf-8"))["cells"]
    textos = ["".join(c["source"]) for c in celdas if c["cell_type"] == "markdown"]
    desde = next(i for i, t in enumerate(textos) if t.startswith("## La línea de tiempo"))
    frases = [f for t in textos[desde:] for f in re.split(r"(?<=[.:;])\s", t) if "barra" in f]
    assert frases, "La lección 06 no describe la barra de una petición en la línea de tiempo."
    return {d for f in frases for d in DIMENSIONES.findall(f)}


def test_el_widget_de_la_linea_de_tiempo_responde_al_deslizador(pagina, servidor):
    abrir_y_ejecutar(pagina, servidor, CUADERNO_DE_PRUEBA)
    unico(pagina, CARRILES)
    filas = pagina.locator(f"{CARRILES} tr:not(.linea-eje)").count()
    assert filas == 3, f"Tendría que haber un carril por agente (3) y hay {filas}."
    carriles = texto_de(pagina, CARRILES)
    assert CAIDA in carriles and "↻" in carriles, f"Faltan la caída o la reanudación en los carriles:\n{carriles}"
    paso, total, vida, que = cabecera(pagina)
    tirador = unico(pagina, f".widget-slider.{DESLIZADOR} .noUi-handle")
    assert float(tirador.get_attribute("aria-valuemax")) == total

    # Se abre en la caída: el último paso de la vida 1, el de la columna de ✖, del que habla la
    # celda de la lección (la intención de editar, apuntada antes de una edición que no llega a
    # tener resultado), no en el último paso de la ejecución.
    caida = columna_de(pagina, CAIDA)
    assert (paso, vida) == (caida + 1, 1), (
        f"El widget se abre en el paso {paso} (vida {vida}), no en el de la caída ({caida + 1}):\n{texto_de(pagina, PANEL)}")
    assert columna_elegida(pagina) == caida and pagina.locator(ELEGIDO).count() == filas
    assert "intención de editar" in que, que
    exigir_palabras_y_no_etiquetas(pagina)

    # Un eje de pasos bajo los carriles: el número de cada paso rotulado, en su columna.
    eje = pagina.evaluate(_JS_EJE)
    assert eje is not None, "Bajo los carriles no hay un eje con los números de los pasos (tr.linea-eje)."
    assert eje["debajo"] and eje["celdas"] == eje["columnas"] == total, eje
    rotulados = {int(texto): dentro for _, texto, dentro in eje["rotulos"]}
    assert [i + 1 for i, _, _ in eje["rotulos"]] == [int(t) for _, t, _ in eje["rotulos"]], eje["rotulos"]
    assert all(rotulados.values()), f"Algún número del eje no cae bajo su columna: {eje['rotulos']}"
    assert 1 in rotulados and paso in rotulados and len(rotulados) >= total // 5, sorted(rotulados)

    # La leyenda explica cada color de los carriles (las barras moradas de los resúmenes también),
    # y dice de la barra la misma dimensión que el texto de la lección.
    colores = pagina.evaluate(_JS_COLORES)
    sin_explicar = sorted(set(colores["carriles"]) - set(colores["leyenda"]))
    assert not sin_explicar, f"Colores de los carriles que la leyenda no explica: {sin_explicar} (leyenda: {colores['leyenda']})"
    en_la_leyenda = set(DIMENSIONES.findall(texto_de(pagina, LEYENDA)))
    assert len(en_la_leyenda) == 1, f"La leyenda tendría que decir qué mide la barra: {en_la_leyenda}"
    en_la_leccion = dimensiones_de_la_barra_en_la_leccion()
    assert en_la_leccion == en_la_leyenda, (
        f"La leyenda mide la barra por su «{en_la_leyenda.pop()}», y la lección 06 dice {sorted(en_la_leccion)}.")

    # A 1400 px, ningún texto del widget se parte a mitad de palabra («recibida / s»).
    exigir_maquetacion(pagina, ".explorar-linea-de-tiempo")

    for destino in (total, total // 2):
        antes = texto_de(pagina, PANEL)
        poner_deslizador(pagina, DESLIZADOR, destino)
        esperar_texto_distinto(pagina, PANEL, antes)
        paso, total_ahora, vida, _ = cabecera(pagina)
        assert (paso, total_ahora) == (destino, total), texto_de(pagina, PANEL)
        assert columna_elegida(pagina) == destino - 1
        assert pagina.locator(ELEGIDO).count() == filas
        exigir_palabras_y_no_etiquetas(pagina)
    antes = texto_de(pagina, PANEL)
    poner_deslizador(pagina, DESLIZADOR, total)
    esperar_texto_distinto(pagina, PANEL, antes)
    assert cabecera(pagina)[2] == 2, "El último paso es de la vida 2, tras la caída."
    captura(pagina, "linea_de_tiempo", mostrar=CARRILES)
