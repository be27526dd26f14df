"""El widget de las carreras: elegir variante e intercalado, y ver sus carriles, cómo acaba y los totales.

Lecciones 04 (dos resumidores y un mensaje que llega) y 05 (el buzón): sirve para cualquier
`curso.carreras.Escenario`. Es una vista fina: lo que muestra sale de `curso.carreras.textos`
(lógica pura, probada con pytest). Cada variante se explora una sola vez, la primera vez que se
elige (la correcta, al construir el widget: es la referencia); mover el deslizador solo vuelve a
escribir tres trozos de HTML.

Para una prueba en el navegador: los botones de la variante llevan la clase CSS
`carreras-variante`, el deslizador del intercalado `carreras-intercalado`, los carriles
`carreras-carriles` (cada celda con paso, `carril-<estado>`), el panel del intercalado está en
`<pre class="carreras-panel">` y los totales en `<pre class="carreras-totales">`.
"""
import html

import ipywidgets as widgets

from curso.carreras import textos as cv
from curso.carreras.explorador import explorar, numero_de_intercalados


ROJO = "#c62828"  # el de las invariantes que un intercalado rompe (✘) y el de los mensajes de error


def _pre(clase, texto, error=False):
    """Un <pre> que parte las líneas largas por los espacios; las líneas con ✘, en rojo."""
    lineas = [('<span style="color:%s">%s</span>' % (ROJO, html.escape(linea))
               if error or linea.lstrip().startswith("✘") else html.escape(linea))
              for linea in texto.split("\n")]
    return ('<pre class="%s%s" style="white-space:pre-wrap;word-break:normal;'
            'overflow-wrap:break-word;margin:4px 0">%s</pre>'
            % (clase, " error" if error else "", "\n".join(lineas)))


def dibujar(exploracion, correcta, i):
    """(HTML de los carriles, del panel y de los totales) del intercalado `i`; si `i` no vale,
    el panel dice por qué y los carriles quedan vacíos."""
    pie = _pre("carreras-totales",
               cv.totales(exploracion) + "\n" + cv.comparacion(exploracion, correcta))
    try:
        registro = cv.registro_de(exploracion, i)
    except ValueError as e:
        return "", _pre("carreras-panel", "No se puede dibujar: %s." % e, error=True), pie
    referencia = correcta.registros[i - 1] if correcta.total == exploracion.total else None
    return (cv.carriles_html(registro, referencia), _pre("carreras-panel", cv.panel(exploracion, i)),
            pie)


def explorar_carreras(escenario, variantes=None, *, modulo=None, intercalado=1, explorador=None):
    """El explorable de las carreras para `escenario` (un `curso.carreras.Escenario`).

    `variantes`: los nombres de las que se ofrecen (todas si es None); la correcta va siempre la
    primera. `modulo`: el código que se pone a prueba (por defecto, el del escenario: el del punto
    de control). `intercalado`: el que se muestra al empezar. `explorador`: quién recorre los
    intercalados, `explorador(escenario, variante, modulo)`; por defecto `explorar`, el de SQLite
    paso a paso (la lección 07 pasa `functools.partial(explorar_en_postgres, conexion=...)`).

    Devuelve un `VBox` con los botones de la variante, su descripción, los totales, el deslizador
    del intercalado (1..N), los carriles y el panel. Un ajuste imposible (una variante que no
    existe, un intercalado fuera de 1..N) no lanza nada: el widget muestra el mensaje.
    """
    try:
        nombres = cv.variantes_en_orden(escenario, variantes)
    except ValueError as e:
        return widgets.VBox([widgets.HTML(_pre("carreras-panel", "No se puede dibujar: %s." % e,
                                               error=True))])
    cache = {}

    def exploracion_de(nombre):
        if nombre not in cache:
            cache[nombre] = (explorador or explorar)(escenario, nombre, modulo)
        return cache[nombre]

    referencia = nombres[0]
    exploracion_de(referencia)
    total = numero_de_intercalados(escenario.actores)
    entero = isinstance(intercalado, int) and not isinstance(intercalado, bool)
    inicial = intercalado if entero and 1 <= intercalado <= total else 1

    control_variante = widgets.ToggleButtons(options=nombres, value=referencia,
                                             description="Variante", style={"button_width": "auto"})
    control_variante.add_class("carreras-variante")
    control_intercalado = widgets.IntSlider(value=inicial, min=1, max=total, step=1,
                                            description="Intercalado", continuous_update=False,
                                            layout=widgets.Layout(width="100%", max_width="720px"))
    control_intercalado.add_class("carreras-intercalado")
    descripcion, pie, dibujo, cuadro = (widgets.HTML() for _ in range(4))
    descripcion.add_class("carreras-descripcion")

    def pintar(nombre, i):
        descripcion.value = ('<div style="font-family:sans-serif;font-size:13px;margin:2px 0">'
                             '<b>%s</b>: %s</div>'
                             % (html.escape(escenario.nombre),
                                html.escape(escenario.variantes[nombre].descripcion)))
        dibujo.value, cuadro.value, pie.value = dibujar(exploracion_de(nombre),
                                                        exploracion_de(referencia), i)

    def al_cambiar(_cambio):
        pintar(control_variante.value, control_intercalado.value)

    control_variante.observe(al_cambiar, names="value")
    control_intercalado.observe(al_cambiar, names="value")
    pintar(referencia, intercalado)  # el valor tal cual: si no vale, el panel lo dice
    caja = widgets.VBox([control_variante, descripcion, pie, control_intercalado, dibujo, cuadro])
    caja.add_class("explorar-carreras")
    return caja
