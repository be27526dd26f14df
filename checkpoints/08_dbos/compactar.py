"""Compactar: hacer sitio en M antes de que la petición siguiente deje de caber en la ventana.

Lección 03. El bucle llama a `compactar(modelo, M)` una vez por turno, en el único momento en
que M termina en una respuesta del modelo: recién guardada, con sus llamadas aún sin atender.
Mientras la última cuenta del servidor no pase de `UMBRAL`, no hace nada. Cuando pasa, le pide
al modelo un resumen de sus turnos viejos y devuelve una M nueva con ese resumen en su lugar.

Qué no cambia nunca: el inicio (el prompt de sistema, que lleva dentro el fichero de proyecto,
y el pedido), los `RECIENTES` turnos del final, y la lista que recibe. Como solo salen turnos
enteros, cada llamada que se queda en M conserva su observación, palabra por palabra.
"""
from entorno import HERRAMIENTAS, texto_de

# El umbral es lo que queda de la ventana después de apartar dos cosas que aún no han llegado.
VENTANA_DEL_CURSO = 8192  # la del servidor de ensayo, y la de `llama-server -c 8192`
RESERVA_DE_LA_RESPUESTA = 1024  # el doble del max_tokens de api.py: vale aunque lo subas a 1024
RESERVA_DEL_TURNO = 3072  # las observaciones que vienen: no se sabe cuánto ocupan hasta que llegan
UMBRAL = VENTANA_DEL_CURSO - RESERVA_DE_LA_RESPUESTA - RESERVA_DEL_TURNO  # 4096

RECIENTES = 2  # turnos que no se resumen: el que está en curso y el anterior

# El guion `compacta` del servidor de ensayo (curso/ensayo/recetario.py) reconoce la petición del
# resumen porque su último mensaje empieza por «Hora de compactar.»: si cambias esas tres
# palabras, cámbialas también allí.
INSTRUCCION = """Hora de compactar. Lo que escribas ahora ocupará el lugar de tus turnos \
anteriores: el harness los quita y deja solo este texto. Contesta solo con texto, sin pedir \
herramientas, en 150 palabras como mucho. Cuenta:
- qué sabes de cada fichero leído que siga siendo útil;
- qué cambiaste, qué llamadas fallaron y por qué;
- qué te falta aún del pedido."""

# Lo que precede al resumen en M: el modelo lo leerá como suyo, y tiene que saber de dónde sale.
NOTA = "Resumen que escribiste al compactar, en vez de tus turnos anteriores:\n\n"


def tokens(modelo):
    """Cuánto ocupa M ahora: la entrada de la última petición y la respuesta que acaba de llegar.

    Sale del `usage` que guardó el adaptador, porque el harness no cuenta tokens: el servidor los
    contó al contestar. La entrada viene en dos partes, la calculada y la leída de la caché.
    """
    usage = getattr(modelo, "usage", None)
    try:
        entrada = usage["input_tokens"] + (usage.get("cache_read_input_tokens") or 0)
        return entrada + usage["output_tokens"]
    except (TypeError, KeyError, AttributeError):
        raise ValueError(f"el modelo no tiene un usage con input_tokens y output_tokens (tiene "
                         f"{usage!r}), y de ahí saca compactar lo que ocupa M. Llama a compactar "
                         "después de una respuesta, con un adaptador que guarde su usage (ModeloAPI "
                         "o ModeloGuionizado)") from None


def inicio_de(M):
    """Cuántos mensajes ocupa el inicio de M: hasta el pedido, que es el primero del usuario."""
    for posicion, mensaje in enumerate(M):
        if mensaje[0] == "usuario":
            return posicion + 1
    raise ValueError(f"M no tiene pedido: ninguno de sus {len(M)} mensajes es del usuario, y sin "
                     "él compactar no sabe dónde termina el inicio, que nunca se resume")


def corte(M, k):
    """La posición de M donde empiezan sus k turnos recientes.

    El turno en curso es un solo mensaje, la respuesta que espera sus observaciones; cada uno
    de los k − 1 anteriores son dos, la respuesta y sus observaciones. Contando desde el final,
    el corte cae siempre en una respuesta, así que lo que queda delante termina en observaciones.
    """
    if k < 1:
        raise ValueError(f"k = {k}: tiene que ser al menos 1, porque el turno en curso no se resume nunca")
    if not M or M[-1][0] != "asistente":
        raise ValueError("M tiene que acabar en la respuesta del turno en curso: compacta justo "
                         "después de añadirla a M y antes de sus observaciones")
    return len(M) - (2 * k - 1)


def compactar(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """La misma M si no hace falta (o no se puede) compactar; si no, una M nueva con el resumen.

    Si el modelo falla al resumir, su excepción sale tal cual, y M sigue como estaba.
    """
    hasta_el_pedido, desde = inicio_de(M), corte(M, k)  # antes de nada: una M mal formada, error
    if tokens(modelo) <= umbral:
        return M  # queda sitio para lo que traiga este turno
    if desde - hasta_el_pedido < 2:
        return M  # entre el pedido y los recientes no hay ni un turno entero
    peticion = M[:desde] + [("usuario", INSTRUCCION)]  # empieza como la última: la caché sirve
    resumen = texto_de(modelo(peticion, HERRAMIENTAS))
    if not resumen:
        return M  # contestó sin texto (una llamada, p. ej.): nada lo sustituiría
    return M[:hasta_el_pedido] + [("usuario", NOTA + resumen)] + M[desde:]
