"""Para los ejercicios de la lección 02: cuánto ocupó la última petición, leído del `usage`, y si la siguiente cabrá.

Cada caso está hecho para un error concreto, y su mensaje lo nombra. Las cifras de `atasco` son
las de la ejecución guionizada de la lección 02 (la petición 10, y lo que el turno 10 añade a la
11); tests/lecciones/test_errores_l02_l03.py comprueba que siguen siendo las del servidor de ensayo, y que
cada error cae en su caso.
"""
from hypothesis import strategies as st

from curso.comprobaciones.ejercicios import ejercicio, igual

caso = ejercicio(
    "2.1", leccion=2, titulo="tamano: cuántos tokens ocupó la última petición",
    nombre="tamano",
    pistas=[
        "El usage no trae el tamaño de la petición en un solo campo: separa lo que el servidor "
        "calculó (input_tokens) de lo que encontró ya en su caché (cache_read_input_tokens).",
        "Las dos partes son entrada, así que el tamaño es su suma. output_tokens no: es lo que "
        "escribió el modelo, la respuesta.",
        "Un servidor sin caché no manda cache_read_input_tokens. Léelo con "
        "usage.get(\"cache_read_input_tokens\", 0) para que la falta cuente como cero.",
    ],
)

# El usage de la petición 10 de `atasco` en el servidor de ensayo: casi toda venía de la caché.
PETICION_10 = {"input_tokens": 277, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 7112, "output_tokens": 15}


def tamano_igual(tamano, usage, esperado):
    """El caso de 2.1: `tamano(usage) == esperado`, y si no, un mensaje que dice qué se sumó."""
    obtenido = tamano(usage)
    leidos = usage.get("cache_read_input_tokens", 0)
    if obtenido == esperado + usage["output_tokens"]:
        nota = "tokens de entrada: has sumado también output_tokens, que es la respuesta"
    elif leidos and obtenido == esperado - leidos:
        nota = "tokens de entrada: falta cache_read_input_tokens, lo que venía de la caché"
    else:
        nota = "tokens de entrada de la petición"
    igual(obtenido, esperado, nota)


@caso("sin caché, el tamaño es input_tokens (el usage no trae cache_read_input_tokens)")
def _(tamano):
    tamano_igual(tamano, {"input_tokens": 1017, "output_tokens": 14}, 1017)


@caso("con caché, suma lo calculado y lo leído de la caché: la petición 10 de atasco")
def _(tamano):
    tamano_igual(tamano, PETICION_10, 277 + 7112)


@caso("no cuenta la salida: output_tokens es la respuesta, no la petición")
def _(tamano):
    tamano_igual(tamano, {"input_tokens": 50, "cache_read_input_tokens": 0, "output_tokens": 400}, 50)


# Los usage del diferencial: como los del servidor de ensayo (cache_creation_input_tokens siempre
# a 0, y a veces sin cache_read_input_tokens), con cifras de 0 a la ventana del curso.
TOKENS = st.one_of(st.integers(0, 8192), st.sampled_from([0, 1, 277, 7186]))
USAGES = st.builds(lambda entrada, cache, salida, con_cache, con_creacion: {
    "input_tokens": entrada, **({"cache_creation_input_tokens": 0} if con_creacion else {}),
    **({"cache_read_input_tokens": cache} if con_cache else {}), "output_tokens": salida},
    TOKENS, TOKENS, TOKENS, st.booleans(), st.booleans())


@caso.diferencial(entradas=USAGES, ejemplos=150, contar=lambda usage: f"tamano({usage})",
                  pistas={"lo que devuelve": "input_tokens + cache_read_input_tokens (0 si no viene); "
                                             "output_tokens no cuenta"})
def _(tamano, usage):
    return {"lo que devuelve": tamano(usage)}


caso = ejercicio(
    "2.2", leccion=2, titulo="cabe: ¿cabrá la petición siguiente en la ventana?",
    nombre="cabe",
    pistas=[
        "La petición siguiente lleva lo mismo que la última, más la respuesta que acaba de "
        "llegar, más lo que el harness le añade (el número que te pasan en observaciones).",
        "El tamaño de la última petición se calcula como en el 2.1, pero escríbelo aquí dentro: "
        "no llames a tamano, porque cada ejercicio se comprueba por separado. La respuesta son "
        "los output_tokens del mismo usage.",
        "El servidor mira la entrada y max_tokens juntos: la petición cabe si las dos cosas, "
        "sumadas, no pasan de la ventana. Justo en el límite, cabe.",
    ],
)

# Lo que el turno 10 de `atasco` añade a la petición 11 aparte de los output_tokens de su
# respuesta: la lectura de recetario.py (789) y la marca de rol del mensaje de la respuesta (6).
ANADIDO_EN_EL_TURNO_10 = 795
PETICION_11 = 277 + 7112 + 15 + ANADIDO_EN_EL_TURNO_10  # 8199: lo que contó el servidor al rechazarla


@caso(f"la petición 11 de atasco no cabe: {PETICION_11} de entrada + 512 de max_tokens > 8192")
def _(cabe):
    igual(cabe(PETICION_10, ANADIDO_EN_EL_TURNO_10, ventana=8192, max_tokens=512), False,
          f"¿cabe la petición 11, de {PETICION_11} tokens? Casi todos vienen de la caché: "
          "¿has sumado cache_read_input_tokens?")


@caso("en una ventana de 8448, la petición 11 cabe sola, pero no con sus 512 de max_tokens")
def _(cabe):
    sin_cache = {"input_tokens": 277 + 7112, "cache_read_input_tokens": 0, "output_tokens": 15}
    igual(cabe(sin_cache, ANADIDO_EN_EL_TURNO_10, ventana=8448, max_tokens=512), False,
          f"¿cabe? {PETICION_11} + 512 de max_tokens = {PETICION_11 + 512} > 8448: "
          "¿has sumado max_tokens?")


@caso("la respuesta que acaba de llegar también va en la petición siguiente")
def _(cabe):
    u = {"input_tokens": 1000, "cache_read_input_tokens": 0, "output_tokens": 300}
    igual(cabe(u, 100, ventana=1300, max_tokens=100), False,
          "¿cabe? 1000 + 300 de la respuesta + 100 + 100 de max_tokens = 1500 > 1300: "
          "¿has sumado output_tokens?")


@caso("justo en el límite, cabe")
def _(cabe):
    justo = 8192 - 512 - (277 + 7112) - 15  # lo que deja la suma en 8192 exactos
    igual(cabe(PETICION_10, justo, ventana=8192, max_tokens=512), True,
          f"¿cabe con {justo} de observaciones? La suma da 8192, igual a la ventana: ¿usas < en vez de <=?")


@caso("sin cache_read_input_tokens también funciona")
def _(cabe):
    igual(cabe({"input_tokens": 1000, "output_tokens": 100}, 100, ventana=2000, max_tokens=512),
          True, "¿cabe? 1000 + 100 + 100 + 512 = 1712 ≤ 2000, con un usage que no trae "
          "cache_read_input_tokens")


# Lo pillan dos mutantes de las pruebas de mutación (`medir mutantes 2.2`): un `.get(..., 1)` o
# `.get(..., -1)` por defecto, que el caso de arriba, lejos del límite, no ve. Se compara con el mismo
# usage con cache_read_input_tokens a 0: así un `<` por `<=` (que hace que ninguno de los dos quepa)
# no cae aquí, donde el título hablaría de la clave que falta, sino en «justo en el límite, cabe».
@caso("un usage sin cache_read_input_tokens, justo en el límite: la clave que falta cuenta como 0, ni uno más ni uno menos")
def _(cabe):
    sin, con = {"input_tokens": 1000, "output_tokens": 0}, {"input_tokens": 1000, "cache_read_input_tokens": 0,
                                                           "output_tokens": 0}  # sin salida ni max_tokens
    igual([cabe(sin, n, ventana=1100, max_tokens=0) for n in (100, 101)],
          [cabe(con, n, ventana=1100, max_tokens=0) for n in (100, 101)],
          "¿cabe, con 100 y con 101 de observaciones en una ventana de 1100? Sin cache_read_input_tokens tiene "
          "que dar lo mismo que con cache_read_input_tokens = 0")


# El diferencial: la ventana justo alrededor de lo que ocupa la petición siguiente con su
# max_tokens (uno por debajo, justo, uno por encima) y también lejos.
def _con_ventana(usage, observaciones, max_tokens, cuanto):
    siguiente = (usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage["output_tokens"]
                 + observaciones + max_tokens)
    return usage, observaciones, max(siguiente + cuanto, 1), max_tokens


@caso.diferencial(entradas=st.builds(_con_ventana, USAGES, TOKENS, st.sampled_from([512, 0, 1024, 1]),
                                     st.sampled_from([0, -1, 1, 2, -2, 5000, -5000])),
                  ejemplos=150,
                  contar=lambda e: f"cabe({e[0]}, observaciones={e[1]}, ventana={e[2]}, max_tokens={e[3]})",
                  pistas={"lo que devuelve": "input_tokens + cache_read_input_tokens (0 si falta) + output_tokens "
                                             "+ observaciones + max_tokens <= ventana"})
def _(cabe, entrada):
    usage, observaciones, ventana, max_tokens = entrada
    return {"lo que devuelve": cabe(usage, observaciones, ventana=ventana, max_tokens=max_tokens)}
