"""El bucle del agente: pedir al modelo, ejecutar lo que pida, devolverle lo que pasó, y otra vez.

Lección 01. M es la lista de mensajes, `(rol, contenido)`: empieza con el inicio (el prompt de
sistema y el pedido) y solo crece: cada turno añade la respuesta del modelo y, si pidió algo, un
mensaje del usuario con una observación por llamada.
"""
from entorno import HERRAMIENTAS, llamadas_de, texto_de
from permisos import atender


def bucle(modelo, inicio, entorno, tope, usuario=None):
    """Pide, atiende y vuelve a pedir hasta que el modelo no pida nada ("fin") o se llegue a
    `tope` turnos ("tope"). Devuelve el motivo, el texto final (None si no lo hay) y M."""
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        if not pedidas:
            return "fin", texto_de(respuesta), M
        observaciones = [atender(pedida, entorno, usuario) for pedida in pedidas]
        M.append(("usuario", observaciones))
    return "tope", None, M
