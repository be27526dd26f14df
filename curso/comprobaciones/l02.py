"""Lección 02: el tamaño de una petición, leído del `usage`, y si la siguiente cabrá."""
from curso.ejercicios import ejercicio, igual

caso = ejercicio(
    "2.1", leccion=2, titulo="tamano: cuántos tokens ocupó la última petición",
    nombre="tamano",
    pistas=[
        "El servidor no dice el tamaño en un solo número: lo reparte entre lo que tuvo que "
        "calcular (input_tokens) y lo que ya tenía en la caché (cache_read_input_tokens).",
        "Súmalos. Un servidor sin caché no manda cache_read_input_tokens: usa "
        "usage.get(\"cache_read_input_tokens\", 0).",
        "La API de Anthropic tiene además cache_creation_input_tokens (lo que se guardó en la "
        "caché en esa petición): también es entrada. return input + leídos + creados.",
    ],
)


@caso("sin caché, el tamaño es input_tokens")
def _(tamano):
    igual(tamano({"input_tokens": 1069, "output_tokens": 23}), 1069)


@caso("con caché, suma lo calculado y lo leído de la caché")
def _(tamano):
    igual(tamano({"input_tokens": 277, "cache_read_input_tokens": 4915, "output_tokens": 23}), 5192)


@caso("cuenta también lo que se escribió en la caché")
def _(tamano):
    u = {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 1000,
         "output_tokens": 5}
    igual(tamano(u), 1110)


@caso("no cuenta la salida: output_tokens es la respuesta, no la petición")
def _(tamano):
    igual(tamano({"input_tokens": 50, "cache_read_input_tokens": 0, "output_tokens": 400}), 50)


caso = ejercicio(
    "2.2", leccion=2, titulo="cabe: ¿cabrá la petición siguiente en la ventana?",
    nombre="cabe",
    pistas=[
        "La petición siguiente es la de ahora, más la respuesta que acaba de llegar, más las "
        "observaciones que el harness le va a añadir.",
        "El tamaño de la de ahora es tamano(usage) (ejercicio 2.1); la respuesta, "
        "usage[\"output_tokens\"]; las observaciones, el número que te pasan.",
        "El servidor la rechaza si esa petición más max_tokens pasa de la ventana: "
        "return siguiente + max_tokens <= ventana.",
    ],
)

ULTIMA = {"input_tokens": 277, "cache_read_input_tokens": 7164, "output_tokens": 23}


@caso("la petición 11 de atasco no cabe: 7441 + 23 + 810 + 512 > 8192")
def _(cabe):
    igual(cabe(ULTIMA, 810, ventana=8192, max_tokens=512), False)


@caso("con una observación pequeña, sí cabe")
def _(cabe):
    igual(cabe(ULTIMA, 200, ventana=8192, max_tokens=512), True)


@caso("justo en el límite cabe; un token más, no")
def _(cabe):
    igual(cabe(ULTIMA, 8192 - 512 - 7441 - 23, ventana=8192, max_tokens=512), True)
    igual(cabe(ULTIMA, 8192 - 512 - 7441 - 23 + 1, ventana=8192, max_tokens=512), False)


@caso("una ventana mayor cambia la respuesta")
def _(cabe):
    igual(cabe(ULTIMA, 810, ventana=11776, max_tokens=512), True)


@caso("sin cache_read_input_tokens también funciona")
def _(cabe):
    igual(cabe({"input_tokens": 1000, "output_tokens": 100}, 100, ventana=2000, max_tokens=512), True)
