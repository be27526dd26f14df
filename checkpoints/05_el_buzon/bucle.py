"""El bucle del agente: el modelo pide, el harness atiende, y lo que pasó vuelve al modelo.

Lección 01. M es la conversación, una lista de `(rol, contenido)` que empieza por el inicio (el
prompt de sistema y el pedido). Cada turno le añade la respuesta del modelo y, si esa respuesta
pidió herramientas, un mensaje del usuario con la observación de cada llamada.

Lección 03. Con `compactar`, M también puede encoger: en cada turno, con la respuesta ya en M y
sus llamadas sin atender, `compactar` puede cambiar turnos viejos enteros por un resumen. Sin
`compactar`, el bucle es el de la lección 01.
"""
from entorno import HERRAMIENTAS, llamadas_de, texto_de
from permisos import atender


def bucle(modelo, inicio, entorno, tope, usuario=None,  # usuario: quien contesta a los permisos
          compactar=None):  # lección 03: hace sitio en M entre la respuesta y sus observaciones
    """Turnos hasta que el modelo conteste sin pedir nada ("fin") o hasta `tope` ("tope").

    Devuelve (motivo, el texto final o None, M).
    """
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        if not pedidas:
            return "fin", texto_de(respuesta), M
        if compactar is not None:
            # Aquí M acaba en la respuesta, y el usage del modelo es el de la petición que la trajo.
            M = compactar(modelo, M)
        observaciones = [atender(pedida, entorno, usuario) for pedida in pedidas]
        M.append(("usuario", observaciones))
    return "tope", None, M
