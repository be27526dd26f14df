"""Para el cuaderno de la lección 06: la vista de la línea de tiempo, con carriles, marcas y un deslizador.

Es una vista fina: todo lo que muestra sale de `curso.explorables.linea_de_tiempo.carriles` (lógica pura, probada con
pytest), que lee la base una vez. Un carril por agente; en cada carril, en el orden de los pasos
durables, cada petición es una barra de alto proporcional a sus tokens de entrada frente a la
ventana (8192), morada si pedía un resumen, y cada compactación, entrega recibida, entrega admitida,
activación, caída y reanudación es una marca. Debajo de los carriles, el eje de los pasos. La
leyenda explica cada color. El deslizador elige un paso: su columna se resalta en los carriles, y
debajo se dice qué guardaba la base justo después (`linea_de_tiempo.veredicto`). Se abre en el
último paso antes de la primera caída (`linea_de_tiempo.antes_de_la_caida`), o en el último si no
cayó nunca.

Para una prueba en el navegador: el deslizador lleva la clase CSS `linea-paso`, los carriles
`linea-carriles` (la columna elegida, `linea-elegido`; la fila del eje, `linea-eje`; la leyenda,
`linea-leyenda`) y el texto del paso está en `<pre class="linea-panel">`.
"""
import html

import ipywidgets as widgets

from curso.explorables.linea_de_tiempo import carriles as ldt

ALTO_DE_BARRA = 60  # píxeles de alto de una petición que llenara la ventana entera
CADA = 5  # el eje numera un paso de cada CADA (y el primero y el elegido)
PETICION = ("#64b5f6", "petición al modelo")
PETICION_DE_RESUMEN = ("#9575cd", "petición de un resumen (la de la compactación)")
RESALTE = ("#fff3c4", "la columna del paso elegido")
SIMBOLOS = {  # marca -> (símbolo, color, qué es)
    "limpieza": ("✂", "#00897b", "limpieza de resultados viejos"),
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
# Los <pre> de JupyterLab parten las líneas por cualquier letra (word-break: break-all): aquí, por
# los espacios, y a mitad de palabra solo si una palabra sola no cabe.
PRE = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;margin:4px 0"


def _marca(m):
    if m["clase"] == "peticion":
        alto = max(2, round(m["fraccion"] * ALTO_DE_BARRA))
        color = (PETICION_DE_RESUMEN if m["resumen"] else PETICION)[0]
        titulo = f"petición de {m['tokens']} tokens ({m['fraccion']:.0%} de la ventana)" + (
            ", la del resumen" if m["resumen"] else "")
        return (f'<div title="{titulo}" style="width:8px;height:{alto}px;background:{color};'
                f'margin:0 auto"></div>')
    simbolo, color, que = SIMBOLOS.get(m["clase"], ("·", "#999", m["clase"]))
    return f'<span title="{html.escape(que)}" style="color:{color};font-weight:bold">{simbolo}</span>'


def _barra(color):
    return f'<span style="display:inline-block;width:8px;height:10px;background:{color}"></span>'


def leyenda_html():
    """La leyenda: cada color que pueden llevar los carriles, con lo que significa."""
    muestras = [
        (_barra(PETICION[0]), f"{PETICION[1]}: su alto, los tokens de entrada frente a la ventana de {ldt.VENTANA}"),
        (_barra(PETICION_DE_RESUMEN[0]), PETICION_DE_RESUMEN[1]),
        (f'<span style="display:inline-block;width:10px;height:10px;border:1px solid #ccc;'
         f'background:{RESALTE[0]}"></span>', RESALTE[1]),
    ] + [(f'<span style="color:{c}">{s}</span>', q) for s, c, q in SIMBOLOS.values()]
    return ('<div class="linea-leyenda" style="font-size:11px;margin-top:4px">'
            + " ".join(f'<span style="white-space:nowrap;margin-right:8px">{muestra} {html.escape(texto)}</span>'
                       for muestra, texto in muestras)
            + "</div>")


def _eje(n, elegido):
    """La fila del eje: el número de cada CADA pasos (y del primero y el elegido) bajo su columna."""
    celdas = "".join(
        f'<td style="{CELDA};vertical-align:top;font-size:9px;color:#555;'
        f'{"font-weight:bold" if i == elegido else ""}">'
        f'{i + 1 if i == 0 or (i + 1) % CADA == 0 or i == elegido else ""}</td>' for i in range(n))
    return (f'<tr class="linea-eje"><th style="text-align:right;padding-right:6px;font-weight:normal;'
            f'font-size:9px;color:#555;vertical-align:top">paso</th>{celdas}</tr>')


def carriles_html(datos, elegido, marcas=None):
    """Una tabla: una fila por agente, una columna por paso, la columna `elegido` (desde 0)
    resaltada, el eje de los pasos debajo y la leyenda."""
    marcas = marcas if marcas is not None else ldt.carriles(datos)
    n = len(datos["pasos"])
    filas = []
    for agente, lista in marcas.items():
        por_paso = {}
        for m in lista:
            por_paso.setdefault(m["i"], []).append(_marca(m))
        celdas = "".join(
            f'<td class="{"linea-elegido" if i == elegido else ""}" style="{CELDA};'
            f'{"background:" + RESALTE[0] if i == elegido else ""}">{"".join(por_paso.get(i, []))}</td>'
            for i in range(n))
        filas.append(f'<tr><th style="text-align:right;padding-right:6px;font-weight:normal">'
                     f'{html.escape(agente)}</th>{celdas}</tr>')
    return ('<div class="linea-carriles" style="font-family:sans-serif;font-size:12px;overflow-x:auto">'
            f'<table style="border-collapse:collapse">{"".join(filas)}{_eje(n, elegido)}</table>'
            f'{leyenda_html()}</div>')


def _pre(texto, clase="linea-panel"):
    return f'<pre class="{clase}" style="{PRE}">{html.escape(texto)}</pre>'


def paso_inicial(datos):
    """El paso (desde 1) con que se abre: el último antes de la primera caída, o el último."""
    i = ldt.antes_de_la_caida(datos)
    return len(datos["pasos"]) if i is None else i + 1


def explorar_linea_de_tiempo(ruta, paso=None):
    """El explorable de la ejecución de la base `ruta`: el resumen de cada carril, los carriles, un
    deslizador sobre los pasos durables (1..N; por defecto, `paso_inicial`: el último antes de la
    caída) y el estado tras el paso elegido. Devuelve un `VBox`. Sin pasos, un mensaje que lo dice."""
    datos = ldt.leer(ruta)
    n = len(datos["pasos"])
    if n == 0:
        return widgets.VBox([widgets.HTML(_pre("Esta ejecución aún no ha dado ningún paso: reanúdala primero."))])
    marcas = ldt.carriles(datos)
    entero = isinstance(paso, int) and not isinstance(paso, bool)
    inicial = paso if entero and 1 <= paso <= n else paso_inicial(datos)
    deslizador = widgets.IntSlider(value=inicial, min=1, max=n, step=1, description="Paso",
                                   continuous_update=False,
                                   layout=widgets.Layout(width="100%", max_width="720px"))
    deslizador.add_class("linea-paso")
    resumen = widgets.HTML(_pre(ldt.resumen(datos), "linea-resumen"))
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
