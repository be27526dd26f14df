"""La compactación: cuando M se acerca a la ventana, el modelo resume sus turnos viejos.

Lección 03. `compactar(modelo, M)` es un paso del bucle: va justo después de añadir a M la
respuesta del modelo y antes de ejecutar sus llamadas. Si el servidor contó más de `UMBRAL`
tokens, los turnos viejos se cambian por un resumen que escribe el propio modelo. El inicio (el
prompt de sistema y el pedido) y los `RECIENTES` últimos turnos se quedan tal cual, y el corte
cae siempre entre dos turnos, así que ninguna llamada se separa de su observación.

`compactar` nunca cambia la lista que recibe: devuelve esa misma M, si no quita nada, o una nueva.
"""
from entorno import HERRAMIENTAS, texto_de

UMBRAL = 4096  # de 8192: 1024 de reserva para la respuesta y 3072 para lo que traiga el turno en curso
RECIENTES = 2  # los turnos que se quedan tal cual, contando el que está en curso

# Empieza por «Hora de compactar.»: así reconoce la petición del resumen el guion `compacta` del
# servidor de ensayo (curso/ensayo/recetario.py). Si cambias esas palabras, cámbialas allí también.
INSTRUCCION = """Hora de compactar. El harness va a cambiar tus turnos anteriores por lo que \
escribas. No llames a ninguna herramienta. Escribe, en menos de 150 palabras, lo que necesitas \
para seguir con el pedido:
- lo que has averiguado de cada fichero leído y aún importa;
- lo que has cambiado, y qué llamadas fallaron y por qué;
- lo que te falta por hacer."""

NOTA = "Resumen de tus turnos anteriores, escrito por ti mismo al compactar:\n\n"


def tokens(modelo):
    """Los tokens de M según el servidor: la entrada de la última petición más su respuesta.

    El harness no tiene tokenizador: lee el `usage` que el adaptador guardó de la última respuesta.
    """
    u = getattr(modelo, "usage", None)
    try:
        return u["input_tokens"] + (u.get("cache_read_input_tokens") or 0) + u["output_tokens"]
    except (TypeError, KeyError, AttributeError):
        raise ValueError(f"el modelo no tiene un usage con input_tokens y output_tokens (tiene {u!r}): "
                         "compactar lee de ahí cuántos tokens ocupa M. Compacta después de una "
                         "respuesta, con un adaptador que guarde su usage, como ModeloAPI o "
                         "ModeloGuionizado") from None


def inicio_de(M):
    """El índice justo después del pedido (el primer mensaje del usuario): ahí acaba el inicio."""
    for i, (rol, _) in enumerate(M):
        if rol == "usuario":
            return i + 1
    raise ValueError(f"M no tiene pedido: ninguno de sus {len(M)} mensajes es del usuario, así que "
                     "compactar no sabe dónde acaba el inicio, que no se toca")


def corte(M, k):
    """El índice donde empiezan los k turnos recientes de M.

    M acaba en la respuesta del turno en curso, que aún espera sus observaciones: los k turnos
    recientes son esa respuesta y los k − 1 turnos enteros (respuesta y observaciones) de
    delante. El corte cae en una respuesta, y lo que queda delante acaba en unas observaciones.
    """
    if k < 1:
        raise ValueError(f"k = {k}: tiene que ser al menos 1, porque el turno en curso se queda siempre")
    if not M or M[-1][0] != "asistente":
        raise ValueError("M tiene que acabar en la respuesta del turno en curso: compacta justo "
                         "después de añadirla a M y antes de sus observaciones")
    return len(M) - (2 * k - 1)


def compactar(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """M tal cual, o una M nueva con los turnos viejos cambiados por un resumen del modelo.

    Si el modelo lanza una excepción al resumir, sale tal cual y M queda como estaba.
    """
    p, c = inicio_de(M), corte(M, k)
    if tokens(modelo) <= umbral:  # cabe lo que traiga el turno en curso
        return M
    if c - p < 2:  # en medio no hay ningún turno entero que resumir
        return M
    respuesta = modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS)
    resumen = texto_de(respuesta)
    if not resumen:  # sin resumen no se quita nada
        return M
    return M[:p] + [("usuario", NOTA + resumen)] + M[c:]
