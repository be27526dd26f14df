"""El bucle del agente: pedir al modelo, ejecutar lo que pida, devolverle lo que pasó, y otra vez.

Lección 01. M es la lista de mensajes, `(rol, contenido)`: empieza con el inicio (el prompt de
sistema y el pedido), y cada turno añade la respuesta del modelo y, si pidió algo, un mensaje del
usuario con una observación por llamada.

Lección 03. M ya no sólo crece: una compactación cambia turnos enteros por un mensaje. Con
`compactar`, el bucle la intenta en cada turno entre la respuesta y sus observaciones; sin él,
todo sigue como en la lección 01.
"""
from entorno import HERRAMIENTAS, llamadas_de, texto_de
from permisos import atender


def bucle(modelo, inicio, entorno, tope, usuario=None, compactar=None):
    """Hasta que el modelo no pida nada ("fin") o hasta `tope` turnos ("tope"): (motivo, texto, M)."""
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        llamadas = llamadas_de(respuesta)
        if not llamadas:
            return "fin", texto_de(respuesta), M
        if compactar is not None:  # lección 03: M acaba en la respuesta, y el usage acaba de medirla
            M = compactar(modelo, M)
        M.append(("usuario", [atender(ll, entorno, usuario) for ll in llamadas]))
    return "tope", None, M
