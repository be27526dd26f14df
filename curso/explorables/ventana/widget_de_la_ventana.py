"""Para los cuadernos de las lecciones 02 y 03: dos deslizadores, una barra apilada y el veredicto.

Lección 02 (y la 03, que pone la misma petición antes y después de compactar). La vista no
calcula nada: las cifras salen de `curso.explorables.ventana.presupuesto` (funciones puras, con sus tests); aquí solo se
montan los widgets y el HTML de la barra. Mover un deslizador vuelve a llamar a esas funciones y
reescribe dos trozos de HTML.

La barra es lo que mira el servidor de ensayo: la entrada, pieza a pieza, y detrás el
`max_tokens` de la respuesta (rayado). La raya continua es la ventana; la discontinua, el umbral
de la compactación.

Para una prueba en el navegador: el deslizador de la ventana lleva la clase CSS
`ventana-ventana`, el de la petición `ventana-turno`, los botones de la política
`ventana-politica`, la barra `ventana-barra`, y el veredicto está en `<pre class="veredicto-ventana">`.
"""
import html

import ipywidgets as widgets

from curso.explorables.ventana import presupuesto as v

VENTANA_MINIMA = 4096  # el recorrido del deslizador de la ventana, en pasos de 256
VENTANA_MAXIMA = 16384
PASO = 256
HOLGURA = 1.04  # la escala de la barra deja un poco de aire a la derecha

COLORES = {  # un color por tipo de pieza, y lo que dice la leyenda
    "sistema": ("#4e79a7", "prompt de sistema"),
    "proyecto": ("#76b7b2", "fichero de proyecto"),
    "herramientas": ("#59a14f", "herramientas"),
    "pedido": ("#edc948", "pedido"),
    "resumen": ("#b07aa1", "resumen"),
    "llamada": ("#f28e2b", "llamadas"),
    "observacion": ("#e15759", "observaciones"),
    "max_tokens": ("#bab0ac", "max_tokens (la respuesta)"),
}
ALTO = 26  # píxeles de cada barra


def _segmentos(piezas, escala):
    """Los divs de una barra: uno por pieza, a su sitio y con su ancho, en % de la escala."""
    trozos, izquierda = [], 0
    for p in piezas:
        color = COLORES[p.tipo][0]
        fondo = (color if p.tipo != "max_tokens" else
                 "repeating-linear-gradient(45deg,%s 0 6px,#ddd 6px 12px)" % color)
        trozos.append(
            '<div title="%s: %d tokens" style="position:absolute;top:0;bottom:0;left:%.3f%%;'
            'width:%.3f%%;background:%s;box-sizing:border-box;border-right:1px solid #fff"></div>'
            % (html.escape(p.nombre), p.tokens, 100 * izquierda / escala, 100 * p.tokens / escala,
               fondo))
        izquierda += p.tokens
    return "".join(trozos)


def _linea(tokens, escala, estilo, texto):
    """Una raya vertical de arriba abajo del dibujo (la ventana, el umbral), con su rótulo."""
    x = 100 * tokens / escala
    return ('<div style="position:absolute;top:0;bottom:0;left:%.3f%%;border-left:%s"></div>'
            '<div style="position:absolute;top:0;left:%.3f%%;font-size:11px;padding-left:3px;'
            'white-space:nowrap">%s</div>' % (x, estilo, x, html.escape(texto)))


def barra_html(filas, ventana, escala, umbral=None):
    """El dibujo: una barra por fila `(rótulo, piezas)`, la raya de la ventana y la del umbral."""
    cuerpo = []
    for rotulo, piezas in filas:
        cuerpo.append('<div style="font-size:12px;margin:16px 0 2px 0"><span style="position:relative;'
                      'z-index:1;background:rgba(255,255,255,0.85)">%s</span></div>'
                      % html.escape(rotulo))
        cuerpo.append('<div style="position:relative;height:%dpx;background:#f3f3f3">%s</div>'
                      % (ALTO, _segmentos(piezas, escala)))
    rayas = _linea(ventana, escala, "2px solid #222", "ventana %d" % ventana)
    if umbral is not None and umbral > 0:
        rayas += _linea(umbral, escala, "2px dashed #b07aa1", "umbral %d" % umbral)
    tipos = {p.tipo for _, piezas in filas for p in piezas}
    leyenda = " ".join(
        '<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;'
        'width:10px;height:10px;background:%s;margin-right:4px"></span>%s</span>' % (color, texto)
        for tipo, (color, texto) in COLORES.items() if tipo in tipos)
    return ('<div class="barra-ventana" style="font-family:sans-serif">'
            '<div style="position:relative;padding-top:4px">%s%s</div>'
            '<div style="font-size:11px;margin-top:8px">%s · raya continua: la ventana · '
            'raya discontinua: el umbral de la compactación</div></div>'
            % ("".join(cuerpo), rayas, leyenda))


def _veredicto_html(texto, error=False):
    return ('<pre class="veredicto-ventana%s" style="white-space:pre-wrap;word-break:normal;'
            'overflow-wrap:break-word">%s</pre>'
            % (" error" if error else "", html.escape(texto)))


def dibujar(piezas, ventana, turno, politica, escala, max_tokens=v.MAX_TOKENS,
            resumen=v.RESUMEN_SUPUESTO):
    """(HTML de la barra, HTML del veredicto) para unos ajustes; un ajuste imposible da su mensaje."""
    try:
        resultado = v.aplicar(piezas, ventana, turno, max_tokens, resumen)[politica]
        texto = v.veredicto(piezas, ventana, turno, max_tokens, resumen)
    except ValueError as e:
        return "", _veredicto_html("No se puede dibujar: %s." % e, error=True)
    respuesta = [v.pieza_de_la_respuesta(max_tokens)]
    entera = v.peticion_n(piezas, turno)
    filas = [("Petición %d entera: %d tokens + %d de max_tokens = %d"
              % (turno, resultado.original, max_tokens, resultado.original + max_tokens),
              list(entera) + respuesta),
             ("Con «%s»: %d tokens + %d de max_tokens = %d"
              % (v.POLITICAS[politica][0], resultado.peticion, max_tokens, resultado.pide),
              list(resultado.conserva) + respuesta)]
    return barra_html(filas, ventana, escala, v.umbral(ventana)), _veredicto_html(texto)


def explorar_ventana(M, herramientas, fichero_de_proyecto, ventana=v.VENTANA, turno=None,
                     max_tokens=v.MAX_TOKENS, resumen=v.RESUMEN_SUPUESTO, politica="compacta"):
    """El explorable de la lección 02: la petición `turno` de M frente a una ventana.

    Sin `turno`, la última que se puede formar con M (la que ya no cabía, en `atasco`). Devuelve
    un `VBox` con el deslizador de la ventana, el de la petición, la política que se dibuja, la
    barra y el veredicto, que es el texto de `curso.explorables.ventana.presupuesto.veredicto`.
    """
    piezas = v.piezas_de(M, herramientas, fichero_de_proyecto)
    ultima = v.numero_de_peticiones(piezas)
    entero = lambda x: isinstance(x, int) and not isinstance(x, bool)  # noqa: E731
    inicial_v = ventana if entero(ventana) else v.VENTANA
    turno = ultima if turno is None else turno
    inicial_t = turno if entero(turno) else ultima
    control_ventana = widgets.IntSlider(
        value=inicial_v, min=min(VENTANA_MINIMA, inicial_v), max=max(VENTANA_MAXIMA, inicial_v),
        step=PASO, description="Ventana", continuous_update=False)
    control_ventana.add_class("ventana-ventana")
    control_turno = widgets.IntSlider(
        value=inicial_t, min=min(1, inicial_t), max=max(ultima, inicial_t), step=1,
        description="Petición", continuous_update=False)
    control_turno.add_class("ventana-turno")
    control_politica = widgets.ToggleButtons(
        options=[(etiqueta, clave) for clave, (etiqueta, _) in v.POLITICAS.items()],
        value=politica if politica in v.POLITICAS else "compacta", description="Dibujar",
        style={"button_width": "auto"})  # cada botón, del ancho de su rótulo: ninguno sale cortado
    control_politica.add_class("ventana-politica")
    mas_larga = sum(p.tokens for p in v.peticion_n(piezas, ultima)) + max(max_tokens, 0)
    escala = HOLGURA * max(control_ventana.max, mas_larga)
    barra, veredicto = widgets.HTML(), widgets.HTML()
    barra.add_class("ventana-barra")
    veredicto.add_class("ventana-veredicto")

    def pintar(ventana, turno, politica):
        barra.value, veredicto.value = dibujar(piezas, ventana, turno, politica, escala,
                                               max_tokens, resumen)

    def al_cambiar(_cambio):
        pintar(control_ventana.value, control_turno.value, control_politica.value)

    for control in (control_ventana, control_turno, control_politica):
        control.observe(al_cambiar, names="value")
    pintar(ventana, turno, control_politica.value)  # los valores tal cual: si no valen, se dice
    caja = widgets.VBox([control_ventana, control_turno, control_politica, barra, veredicto])
    caja.add_class("explorar-ventana")
    return caja


def mostrar_antes_y_despues(M_antes, M_despues, herramientas, fichero_de_proyecto, ventana=v.VENTANA,
                            max_tokens=v.MAX_TOKENS, primer_turno_despues=1):
    """Lección 03: la misma petición antes y después de compactar, una barra encima de la otra.

    El texto de debajo es `curso.explorables.ventana.presupuesto.antes_y_despues`, una línea por barra.
    """
    antes = v.piezas_de(M_antes, herramientas, fichero_de_proyecto)
    despues = v.piezas_de(M_despues, herramientas, fichero_de_proyecto, primer_turno_despues)
    try:
        texto = v.antes_y_despues(antes, despues, ventana, max_tokens)
    except ValueError as e:
        return widgets.VBox([widgets.HTML(_veredicto_html("No se puede dibujar: %s." % e, True))])
    respuesta = [v.pieza_de_la_respuesta(max_tokens)]
    lineas = texto.split("\n")
    escala = HOLGURA * max(ventana, sum(p.tokens for p in antes) + max_tokens)
    filas = [(lineas[0], list(antes) + respuesta), (lineas[1], list(despues) + respuesta)]
    dibujo = widgets.HTML(barra_html(filas, ventana, escala, v.umbral(ventana)))
    caja = widgets.VBox([dibujo, widgets.HTML(_veredicto_html(texto))])
    caja.add_class("ventana-antes-y-despues")
    return caja
