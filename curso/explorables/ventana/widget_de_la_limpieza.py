"""Para el cuaderno de la lección 03b: un deslizador de turno, dos barras (una por política) con la raya de la caché, y el veredicto.

Lección 03b (limpiar lo viejo). La vista no calcula nada: las cifras salen de
`curso.explorables.ventana.limpieza` (funciones puras, con sus tests); aquí solo se montan los
widgets y el HTML. Mover el deslizador vuelve a pedir el veredicto y redibuja las dos barras.

Cada barra es una petición del turno elegido, escalada a la ventana de 8192: las piezas del inicio
y las llamadas con los colores del explorable de la ventana, cada resultado entero en su color y
cada resultado borrado (su marcador) en otro, y detrás el `max_tokens` de la respuesta (rayado).
La raya negra gruesa es la de la caché: a su izquierda, lo que el servidor leyó de la caché; a su
derecha (sombreado), lo que vuelve a calcular.

Para una prueba en el navegador: el deslizador lleva la clase CSS `limpieza-turno`, cada barra es
un `div.limpieza-barra` con `data-entrada` y `data-en-cache`, la raya es `div.limpieza-raya`, y
el veredicto está en `<pre class="veredicto-limpieza">`; la caja entera, `explorar-limpieza`.
"""
import html

import ipywidgets as widgets

from curso.explorables.ventana import limpieza as l
from curso.explorables.ventana import presupuesto as v
from curso.explorables.ventana.widget_de_la_ventana import COLORES as COLORES_DE_LA_VENTANA

HOLGURA = 1.04  # la escala deja un poco de aire a la derecha de la ventana
ALTO = 26  # píxeles de cada barra
COLORES = dict(COLORES_DE_LA_VENTANA)
COLORES.pop("observacion")  # aquí cada resultado va entero o borrado
COLORES[l.ENTERO] = ("#e15759", "resultado entero")
COLORES[l.BORRADO] = ("#9c755f", "resultado borrado (su marcador)")


def _segmentos(piezas, escala):
    trozos, izquierda = [], 0
    for p in piezas:
        color = COLORES.get(p.tipo, ("#999", p.tipo))[0]
        fondo = (color if p.tipo != "max_tokens" else
                 "repeating-linear-gradient(45deg,%s 0 6px,#ddd 6px 12px)" % color)
        trozos.append(
            '<div class="limpieza-pieza limpieza-%s" title="%s: %d tokens" style="position:absolute;'
            'top:0;bottom:0;left:%.3f%%;width:%.3f%%;background:%s;box-sizing:border-box;'
            'border-right:1px solid #fff"></div>'
            % (p.tipo, html.escape(p.nombre), p.tokens, 100 * izquierda / escala,
               100 * p.tokens / escala, fondo))
        izquierda += p.tokens
    return "".join(trozos)


def _barra(nombre, p, escala, max_tokens):
    """Una fila: su rótulo, la barra con sus piezas, la raya de la caché y lo recalculado sombreado."""
    raya = 100 * p.en_cache / escala
    rotulo = "%s: %d tokens · %d de la caché · recalcula %d" % (nombre, p.entrada, p.en_cache,
                                                                 p.recalculados)
    return ('<div style="font-size:12px;margin:14px 0 2px 0">%s</div>'
            '<div class="limpieza-barra" data-entrada="%d" data-en-cache="%d" '
            'style="position:relative;height:%dpx;background:#f3f3f3">%s'
            '<div style="position:absolute;top:0;bottom:0;left:%.3f%%;width:%.3f%%;'
            'background:repeating-linear-gradient(-45deg,rgba(0,0,0,0.25) 0 2px,transparent 2px 6px)">'
            '</div><div class="limpieza-raya" style="position:absolute;top:-4px;bottom:-4px;'
            'left:%.3f%%;border-left:3px solid #111"></div></div>'
            % (html.escape(rotulo), p.entrada, p.en_cache, ALTO,
               _segmentos(list(p.piezas) + [v.pieza_de_la_respuesta(max_tokens)], escala),
               raya, 100 * p.recalculados / escala, raya))


# Una muestra de la leyenda: el cuadrado de color y lo que dice.
MUESTRA = ('<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;'
           'width:10px;height:10px;background:{0};margin-right:4px"></span>{1}</span>')
PIE = (" · raya negra: la de la caché (a la izquierda, leído de la caché; sombreado, recalculado)"
       " · raya discontinua: la ventana de {0}")


def leyenda_html(tipos, ventana):
    """La leyenda de los colores que salen en el dibujo, y qué es cada raya."""
    muestras = [MUESTRA.format(color, texto) for tipo, (color, texto) in COLORES.items() if tipo in tipos]
    return '<div style="font-size:11px;margin-top:8px">' + " ".join(muestras) + PIE.format(ventana) + "</div>"


def barras_html(par, nombres, ventana, escala, max_tokens=v.MAX_TOKENS):
    """El dibujo de un turno: una barra por política, la raya de la ventana y la leyenda."""
    filas = "".join(_barra(n, p, escala, max_tokens) for n, p in zip(nombres, par, strict=False))
    raya = ('<div style="position:absolute;top:0;bottom:0;left:%.3f%%;border-left:2px dashed #222">'
            '</div>' % (100 * ventana / escala))
    tipos = {q.tipo for p in par for q in p.piezas} | {"max_tokens"}
    return ('<div class="barras-limpieza" style="font-family:sans-serif">'
            '<div style="position:relative">' + filas + raya + "</div>"
            + leyenda_html(tipos, ventana) + "</div>")


def _veredicto_html(texto, error=False):
    return ('<pre class="veredicto-limpieza%s" style="white-space:pre-wrap;word-break:normal;'
            'overflow-wrap:break-word">%s</pre>' % (" error" if error else "", html.escape(texto)))


def mostrar_limpieza(corrida_a, corrida_b, originales, herramientas, proyecto, nombres=l.NOMBRES,
                     turno=None, ventana=v.VENTANA, max_tokens=v.MAX_TOKENS):
    """El explorable de la lección 03b: las dos corridas, turno a turno, una barra encima de otra.

    `corrida_a` y `corrida_b` son listas de `(M, usage)`, una por petición; `originales`, el
    contenido original de cada tool_result por su tool_use_id; `proyecto`, el AGENTE.md (texto o
    ruta) que lleva el prompt de sistema, o None. Sin `turno`, se abre en el último. Devuelve un
    `VBox` con el deslizador, las barras y el veredicto de `limpieza.veredicto`.
    """
    pares = l.comparar(corrida_a, corrida_b, originales, herramientas, proyecto)
    turno = len(pares) if turno is None else turno
    l.par_del_turno(pares, turno)  # un turno que no existe se dice aquí, antes de dibujar nada
    mas_larga = max(p.entrada for par in pares for p in par) + max_tokens
    escala = HOLGURA * max(ventana, mas_larga)
    control = widgets.IntSlider(value=turno, min=1, max=len(pares), step=1, description="Turno",
                                continuous_update=False)
    control.add_class("limpieza-turno")
    dibujo, veredicto = widgets.HTML(), widgets.HTML()
    dibujo.add_class("limpieza-dibujo")

    def pintar(_cambio=None):
        par = pares[control.value - 1]
        dibujo.value = barras_html(par, nombres, ventana, escala, max_tokens)
        veredicto.value = _veredicto_html(l.veredicto(pares, control.value, nombres))

    control.observe(pintar, names="value")
    pintar()
    caja = widgets.VBox([control, dibujo, veredicto])
    caja.add_class("explorar-limpieza")
    return caja
