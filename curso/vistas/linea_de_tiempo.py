"""La vista de la línea de tiempo de una ejecución de la lección 06: carriles, marcas y un deslizador.

Es una vista fina: todo lo que muestra sale de `curso.linea_de_tiempo` (lógica pura, probada con
pytest), que lee la base una vez. Un carril por agente; en cada carril, en el orden de los pasos
durables, cada petición es una barra del largo de sus tokens de entrada frente a la ventana (8192),
y cada compactación, entrega recibida, entrega admitida, activación, caída y reanudación es una
marca. El deslizador elige un paso: su columna se resalta en los carriles, y debajo se dice qué
guardaba la base justo después (`linea_de_tiempo.veredicto`).

Para una prueba en el navegador: el deslizador lleva la clase CSS `linea-paso`, los carriles
`linea-carriles` (la columna elegida, `linea-elegido`) y el texto del paso está en
`<pre class="linea-panel">`.
"""
import html

import ipywidgets as widgets

from curso import linea_de_tiempo as ldt

ANCHO_DE_BARRA = 60  # píxeles de una petición que llenara la ventana entera
SIMBOLOS = {  # marca -> (símbolo, color, qué es)
    "compactacion": ("◆", "#6a1b9a", "compactación"),
    "recibir": ("✉", "#1565c0", "entrega recibida"),
    "admitir": ("✔", "#2e7d32", "entrega admitida"),
    "activacion": ("▶", "#ef6c00", "activación del padre"),
    "caida": ("✖", "#c62828", "caída (kill -9)"),
    "reanudacion": ("↻", "#00838f", "reanudación"),
    "intencion": ("✎", "#795548", "intención de editar"),
    "resultado": ("✓", "#795548", "resultado de la edición"),
    "reintento": ("⟳", "#9e9d24", "reintento"),
    "terminar": ("■", "#424242", "termina"),
}
CELDA = "padding:1px 2px;vertical-align:bottom;text-align:center;min-width:10px"


def _marca(m):
    if m["clase"] == "peticion":
        alto = max(2, round(m["fraccion"] * ANCHO_DE_BARRA))
        color = "#9575cd" if m["resumen"] else "#64b5f6"
        titulo = f"petición de {m['tokens']} tokens ({m['fraccion']:.0%} de la ventana)" + (
            ", la del resumen" if m["resumen"] else "")
        return (f'<div title="{titulo}" style="width:8px;height:{alto}px;background:{color};'
                f'margin:0 auto"></div>')
    simbolo, color, que = SIMBOLOS.get(m["clase"], ("·", "#999", m["clase"]))
    return f'<span title="{html.escape(que)}" style="color:{color};font-weight:bold">{simbolo}</span>'


def carriles_html(datos, elegido, marcas=None):
    """Una tabla: una fila por agente, una columna por paso; la columna `elegido` resaltada."""
    marcas = marcas if marcas is not None else ldt.carriles(datos)
    n = len(datos["pasos"])
    filas = []
    for agente, lista in marcas.items():
        por_paso = {}
        for m in lista:
            por_paso.setdefault(m["i"], []).append(_marca(m))
        celdas = "".join(
            f'<td class="{"linea-elegido" if i == elegido else ""}" style="{CELDA};'
            f'{"background:#fff3c4" if i == elegido else ""}">{"".join(por_paso.get(i, []))}</td>'
            for i in range(n))
        filas.append(f'<tr><th style="text-align:right;padding-right:6px;font-weight:normal">'
                     f'{html.escape(agente)}</th>{celdas}</tr>')
    leyenda = " ".join(f'<span style="white-space:nowrap;margin-right:8px"><span style="color:{c}">{s}</span> '
                       f'{html.escape(q)}</span>' for s, c, q in SIMBOLOS.values())
    return ('<div class="linea-carriles" style="font-family:sans-serif;font-size:12px;overflow-x:auto">'
            f'<table style="border-collapse:collapse">{"".join(filas)}</table>'
            '<div style="font-size:11px;margin-top:4px"><span style="display:inline-block;width:8px;'
            'height:10px;background:#64b5f6"></span> petición (alto: tokens de entrada frente a la '
            f'ventana de {ldt.VENTANA}) {leyenda}</div></div>')


def _pre(texto):
    return ('<pre class="linea-panel" style="white-space:pre-wrap;margin:4px 0">'
            f'{html.escape(texto)}</pre>')


def explorar_linea_de_tiempo(ruta, paso=None):
    """El explorable de la ejecución de la base `ruta`: el resumen de cada carril, los carriles, un
    deslizador sobre los pasos durables (1..N; por defecto, el último) y el estado tras el paso
    elegido. Devuelve un `VBox`. Sin pasos, un mensaje que lo dice."""
    datos = ldt.leer(ruta)
    n = len(datos["pasos"])
    if n == 0:
        return widgets.VBox([widgets.HTML(_pre("Esta ejecución aún no ha dado ningún paso: reanúdala primero."))])
    marcas = ldt.carriles(datos)
    inicial = paso if isinstance(paso, int) and 1 <= paso <= n else n
    deslizador = widgets.IntSlider(value=inicial, min=1, max=n, step=1, description="Paso",
                                   continuous_update=False,
                                   layout=widgets.Layout(width="100%", max_width="720px"))
    deslizador.add_class("linea-paso")
    resumen = widgets.HTML(_pre(ldt.resumen(datos)).replace("linea-panel", "linea-resumen"))
    dibujo, panel = widgets.HTML(), widgets.HTML()

    def pintar(_cambio=None):
        i = deslizador.value - 1
        dibujo.value = carriles_html(datos, i, marcas)
        panel.value = _pre(ldt.veredicto(datos, i))

    deslizador.observe(pintar, names="value")
    pintar()
    caja = widgets.VBox([resumen, dibujo, deslizador, panel])
    caja.add_class("explorar-linea-de-tiempo")
    return caja
