"""Para los cuadernos: el widget de las carreras, una vista fina sobre `textos.py`.

El widget de las carreras: elegir variante, intercalado y paso, y ver sus carriles, cómo acaba,
los totales y lo que leyó y escribió cada transacción en el paso elegido.

Lecciones 04 (dos resumidores y un mensaje que llega), 05 (el buzón) y 07 (las mismas carreras en
PostgreSQL): sirve para cualquier `curso.explorables.carreras.Escenario`. Es una vista fina: lo que muestra sale
de `curso.explorables.carreras.textos` (lógica pura, probada con pytest). Cada variante se explora una sola vez,
la primera vez que se elige (la correcta, al construir el widget: es la referencia); mover un
deslizador o pulsar un botón solo vuelve a escribir unos trozos de HTML.

Para una prueba en el navegador: los botones de la variante llevan la clase CSS
`carreras-variante`, el deslizador del intercalado `carreras-intercalado` y el del paso
`carreras-paso`, los botones que saltan al intercalado que falla anterior y al siguiente
`carreras-anterior-que-falla` y `carreras-siguiente-que-falla`; el motor (SQLite o PostgreSQL) está
en `.carreras-motor`, los carriles en `.carreras-carriles` (cada celda con paso, `carril-<estado>`;
la fila del paso elegido, `carreras-elegido`), y en `<pre>` el panel del intercalado
(`carreras-panel`), los totales (`carreras-totales`) y las transacciones del paso
(`carreras-transacciones`).
"""
import html

import ipywidgets as widgets

from curso.explorables.carreras import textos as cv
from curso.explorables.carreras.explorador import explorar, numero_de_intercalados


ROJO = "#c62828"  # el de las invariantes que un intercalado rompe (✘) y el de los mensajes de error


def _pre(clase, texto, error=False):
    """Un <pre> que parte las líneas largas por los espacios, nunca a mitad de palabra (JupyterLab
    pone `word-break: break-all` en los <pre> de las salidas); las líneas con ✘, en rojo."""
    lineas = [('<span style="color:%s">%s</span>' % (ROJO, html.escape(linea))
               if error or linea.lstrip().startswith("✘") else html.escape(linea))
              for linea in texto.split("\n")]
    return ('<pre class="%s%s" style="white-space:pre-wrap;word-break:normal;'
            'overflow-wrap:break-word;margin:4px 0">%s</pre>'
            % (clase, " error" if error else "", "\n".join(lineas)))


def dibujar(exploracion, correcta, i, paso=None):
    """(HTML de los carriles, del panel, de los totales y de las transacciones) del intercalado
    `i` con el paso `paso` elegido (por defecto, el que se aparta de la correcta, o el primero);
    si `i` o `paso` no valen, el panel lo dice y lo demás queda vacío."""
    pie = _pre("carreras-totales",
               cv.totales(exploracion) + "\n" + cv.comparacion(exploracion, correcta))
    try:
        registro = cv.registro_de(exploracion, i)
        referencia = correcta.registros[i - 1] if correcta.total == exploracion.total else None
        paso = paso_inicial(registro, referencia) if paso is None else paso
        transacciones = cv.transacciones(registro, paso)
    except ValueError as e:
        return "", _pre("carreras-panel", "No se puede dibujar: %s." % e, error=True), pie, ""
    return (cv.carriles_html(registro, referencia, elegido=paso), _pre("carreras-panel", cv.panel(exploracion, i)),
            pie, _pre("carreras-transacciones", transacciones))


def paso_inicial(registro, referencia):
    """El paso que se elige al llegar a un intercalado: el primero que se aparta de la variante
    correcta (el rojo), y si no hay ninguno, el primero."""
    return cv.desvio(registro, referencia) or 1


def _entero(valor):
    return isinstance(valor, int) and not isinstance(valor, bool)


def explorar_carreras(escenario, variantes=None, *, variante=None, modulo=None, intercalado=1, paso=None,
                      explorador=None):
    """El explorable de las carreras para `escenario` (un `curso.explorables.carreras.Escenario`).

    `variantes`: los nombres de las que se ofrecen (todas si es None); la correcta va siempre la
    primera. `variante`: la que se muestra al empezar (por defecto, la correcta); `intercalado`, el
    intercalado con que se abre, y `paso`, el paso elegido en él (por defecto, el que se aparta de
    la correcta). Lo natural es abrirlo donde lo deja el texto de encima, p. ej. en el primer
    intercalado que falla de una ingenua: `intercalado=next(r.numero for r in ingenua.registros
    if r.fallos)`. `modulo`: el código que se pone a prueba (por defecto, el del escenario: el del
    punto de control). `explorador`: quién recorre los intercalados, `explorador(escenario,
    variante, modulo)`; por defecto `explorar`, el de SQLite paso a paso (la lección 07 le pasa
    las exploraciones de PostgreSQL ya hechas).

    Devuelve un `VBox` con los botones de la variante, su descripción y el motor donde corrió, los
    totales, el deslizador del intercalado (1..N) entre los botones que saltan al anterior y al
    siguiente que fallan, los carriles, el deslizador del paso, lo que leyó y escribió cada
    transacción en ese paso, y el panel del intercalado. Un ajuste imposible (una variante que no
    existe, un intercalado o un paso fuera de rango) no lanza nada: el widget muestra el mensaje.
    """
    try:
        nombres = cv.variantes_en_orden(escenario, variantes)
        if variante is not None and variante not in nombres:
            raise ValueError(f"la variante inicial {variante!r} no está entre las que se ofrecen "
                             f"({', '.join(nombres)})")
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
    elegida = variante or referencia
    total = numero_de_intercalados(escenario.actores)
    inicial = intercalado if _entero(intercalado) and 1 <= intercalado <= total else 1

    control_variante = widgets.ToggleButtons(options=nombres, value=elegida,
                                             description="Variante", style={"button_width": "auto"})
    control_variante.add_class("carreras-variante")
    ancho = widgets.Layout(width="100%", max_width="720px")
    etiquetas = {"description_width": "initial"}  # el rótulo entero, sin «Intercala…»
    # Entre los dos botones, el deslizador ocupa lo que quede: los tres, en una fila.
    control_intercalado = widgets.IntSlider(value=inicial, min=1, max=total, step=1, description="Intercalado",
                                            continuous_update=False, style=etiquetas,
                                            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="260px"))
    control_intercalado.add_class("carreras-intercalado")
    anterior = widgets.Button(description="◀ anterior que falla", layout=widgets.Layout(width="auto"),
                              tooltip="el intercalado anterior en que esta variante rompe alguna invariante")
    anterior.add_class("carreras-anterior-que-falla")
    siguiente = widgets.Button(description="siguiente que falla ▶", layout=widgets.Layout(width="auto"),
                               tooltip="el intercalado siguiente en que esta variante rompe alguna invariante")
    siguiente.add_class("carreras-siguiente-que-falla")
    control_paso = widgets.IntSlider(value=1, min=1, max=1, step=1, description="Paso", continuous_update=False,
                                     layout=ancho, style=etiquetas)
    control_paso.add_class("carreras-paso")
    descripcion, pie, dibujo, cuadro, transacciones = (widgets.HTML() for _ in range(5))
    descripcion.add_class("carreras-descripcion")
    estado = {"pintando": False}

    def registro_actual():
        try:
            return cv.registro_de(exploracion_de(control_variante.value), control_intercalado.value)
        except ValueError:
            return None

    def pintar(i, paso=None):
        nombre = control_variante.value
        exploracion = exploracion_de(nombre)
        descripcion.value = ('<div style="font-family:sans-serif;font-size:13px;margin:2px 0">'
                             '<b>%s</b>, en <b class="carreras-motor">%s</b>: %s</div>'
                             % (html.escape(escenario.nombre), html.escape(exploracion.motor),
                                html.escape(escenario.variantes[nombre].descripcion)))
        dibujo.value, cuadro.value, pie.value, transacciones.value = dibujar(
            exploracion, exploracion_de(referencia), i, paso)
        anterior.disabled = cv.vecino_que_falla(exploracion, i if _entero(i) else 0, -1) is None
        siguiente.disabled = cv.vecino_que_falla(exploracion, i if _entero(i) else 0, +1) is None
        registro = registro_actual() if _entero(i) and i == control_intercalado.value else None
        estado["pintando"] = True
        try:
            with control_paso.hold_trait_notifications():
                control_paso.disabled = registro is None
                if registro is not None:
                    elegido = paso if _entero(paso) else paso_inicial(
                        registro, exploracion_de(referencia).registros[i - 1]
                        if exploracion_de(referencia).total == exploracion.total else None)
                    control_paso.max = max(len(registro.eventos), 1)
                    control_paso.value = min(max(elegido, 1), control_paso.max)
        finally:
            estado["pintando"] = False

    def al_cambiar(_cambio):
        pintar(control_intercalado.value)

    def al_elegir_paso(_cambio):
        if estado["pintando"]:
            return
        pintar(control_intercalado.value, control_paso.value)

    def saltar(sentido):
        destino = cv.vecino_que_falla(exploracion_de(control_variante.value), control_intercalado.value, sentido)
        if destino is not None:
            control_intercalado.value = destino  # su observador vuelve a pintar

    control_variante.observe(al_cambiar, names="value")
    control_intercalado.observe(al_cambiar, names="value")
    control_paso.observe(al_elegir_paso, names="value")
    anterior.on_click(lambda _boton: saltar(-1))
    siguiente.on_click(lambda _boton: saltar(+1))
    pintar(intercalado, paso)  # los valores tal cual: si no valen, el panel lo dice
    navegar = widgets.HBox([anterior, control_intercalado, siguiente],
                           layout=widgets.Layout(align_items="center", max_width="1000px"))
    caja = widgets.VBox([control_variante, descripcion, pie, navegar, dibujo, control_paso, transacciones, cuadro])
    caja.add_class("explorar-carreras")
    return caja
