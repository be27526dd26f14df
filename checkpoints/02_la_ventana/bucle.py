"""El bucle del agente: pedir al modelo, ejecutar lo que pida, devolverle lo que pasó, y otra vez.

Lección 01. M es la lista de mensajes, `(rol, contenido)`: empieza con el inicio (el prompt de
sistema y el pedido) y sólo crece: cada turno añade la respuesta del modelo y, si pidió algo, un
mensaje del usuario con una observación por llamada.
"""
from entorno import HERRAMIENTAS, llamadas_de, texto_de
from permisos import atender


def bucle(modelo, inicio, entorno, tope, usuario=None):
    """Hasta que el modelo no pida nada ("fin") o hasta `tope` turnos ("tope"): (motivo, texto, M)."""
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        llamadas = llamadas_de(respuesta)
        if not llamadas:
            return "fin", texto_de(respuesta), M
        M.append(("usuario", [atender(ll, entorno, usuario) for ll in llamadas]))
    return "tope", None, M
