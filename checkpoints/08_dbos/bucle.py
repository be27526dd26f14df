"""El bucle del agente: pedir al modelo, ejecutar lo que pida, devolverle lo que pasó, y otra vez.

Lección 01. M es la lista de mensajes, `(rol, contenido)`: empieza con el inicio (el prompt de
sistema y el pedido) y solo crece: cada turno añade la respuesta del modelo y, si pidió algo, un
mensaje del usuario con una observación por llamada.

Lección 03. Con `compactar`, M también puede encoger: en cada turno, con la respuesta ya en M y
sus llamadas sin atender, `compactar` puede cambiar turnos viejos enteros por un resumen. Sin
`compactar`, el bucle es el de la lección 01.

Lección 03b. Con `limpiar`, antes de compactar se prueba la capa barata: cambiar resultados viejos
por marcadores. Primero se limpia; `compactar` ve lo que ocupa M ya limpia (el `usage` menos lo
liberado) y solo resume si no bastó; y si ni así cabe, el servidor rechaza la petición (la ventana).
"""
from compactar import tokens
from entorno import HERRAMIENTAS, llamadas_de, texto_de
from limpiar import Descontado
from permisos import atender


def bucle(modelo, inicio, entorno, tope, usuario=None,  # usuario: quien contesta a los permisos
          compactar=None,  # lección 03: hace sitio en M entre la respuesta y sus observaciones
          limpiar=None):  # lección 03b: limpiar(M, usado) → (M, liberados), antes de compactar
    """Pide, atiende y vuelve a pedir hasta que el modelo no pida nada ("fin") o se llegue a
    `tope` turnos ("tope"). Devuelve el motivo, el texto final (None si no lo hay) y M."""
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        if not pedidas:
            return "fin", texto_de(respuesta), M
        visto = modelo  # lo que compactar mira: el modelo, o el modelo menos lo que se limpió
        if limpiar is not None:
            M, liberados = limpiar(M, tokens(modelo))
            visto = Descontado(modelo, liberados) if liberados else modelo
        if compactar is not None:
            # Aquí M acaba en la respuesta, y el usage del modelo es el de la petición que la trajo.
            M = compactar(visto, M)
        observaciones = [atender(pedida, entorno, usuario) for pedida in pedidas]
        M.append(("usuario", observaciones))
    return "tope", None, M
