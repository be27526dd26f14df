"""Las mediciones del curso: cuánto tarda de verdad cada pieza, en esta máquina.

Los tests no miden tiempos (un test que depende de la velocidad de la máquina falla a ratos);
las cifras de velocidad salen de aquí, con una función por medición. Cada una imprime lo que
ha medido, en castellano, y lo devuelve en un diccionario. Importar el módulo no mide nada.
"""
import json
import time
import urllib.request

from curso.ensayo import motor, tokens
from curso.ensayo.servidor import ServidorEnsayo

OBJETIVO_PETICIONES = 5.0  # segundos: 200 peticiones de unos 8000 tokens deben tardar menos
RESERVA_DE_SALIDA = 64  # max_tokens de cada petición medida: poca salida, casi todo es entrada
FRASE = "La tortilla lleva huevos, patatas y cebolla; el gazpacho, tomate y pepino.\n"


def _texto_de(tokens_deseados):
    """Un texto de unos `tokens_deseados` tokens (según `tokens.contar`)."""
    por_frase = tokens.contar(FRASE)
    return FRASE * max(1, round(tokens_deseados / por_frase))


def _peticion(numero, texto):
    # El número va al principio: cada petición es distinta desde el primer token, así que la
    # caché no ahorra nada y el servidor trocea y compara la petición entera cada vez. El
    # último mensaje es corto, como en una conversación larga: el eco contesta poco.
    return {
        "model": "guion:eco",
        "max_tokens": RESERVA_DE_SALIDA,
        "system": "Petición %d de la medición." % numero,
        "messages": [{"role": "user", "content": texto},
                     {"role": "assistant", "content": "Leído."},
                     {"role": "user", "content": "Sigue."}],
    }


def _enviar(url, peticion):
    datos = json.dumps(peticion, ensure_ascii=False).encode("utf-8")
    solicitud = urllib.request.Request(url + "/v1/messages", data=datos,
                                       headers={"content-type": "application/json"})
    with urllib.request.urlopen(solicitud, timeout=60) as respuesta:
        return json.loads(respuesta.read())


def _segundos_en_contar(peticion, repeticiones=5):
    """El mejor de varios tiempos de `motor.trocear_peticion` (el mejor es el menos ruidoso)."""
    mejor = float("inf")
    for _ in range(repeticiones):
        inicio = time.perf_counter()
        motor.trocear_peticion(peticion)
        mejor = min(mejor, time.perf_counter() - inicio)
    return mejor


def medir_servidor_peticiones(n=200, tokens=8000):
    """`n` peticiones seguidas de unos `tokens` tokens de entrada al servidor de ensayo, por HTTP.

    Mide también si contar es lineal: cuánto más cuesta trocear una petición con el cuádruple
    de texto (lineal: unas 4 veces; cuadrático: unas 16).
    """
    texto = _texto_de(tokens)
    ventana = max(motor.VENTANA_POR_DEFECTO, 2 * tokens + RESERVA_DE_SALIDA)
    with ServidorEnsayo(0, ventana) as servidor:
        entrada = servidor.ensayo.contar(_peticion(0, texto))
        inicio = time.perf_counter()
        for numero in range(n):
            _enviar(servidor.url, _peticion(numero, texto))
        segundos = time.perf_counter() - inicio
    por_segundo = n / segundos if segundos > 0 else float("inf")
    una = _segundos_en_contar(_peticion(0, texto))
    cuatro = _segundos_en_contar(_peticion(0, texto * 4))
    proporcion = cuatro / una if una > 0 else float("inf")
    cumple = segundos < OBJETIVO_PETICIONES if (n, tokens) == (200, 8000) else None
    print("Servidor de ensayo: %d peticiones de %d tokens de entrada en %.2f s (%.0f peticiones/s)."
          % (n, entrada, segundos, por_segundo))
    if cumple is not None:
        print("Objetivo: menos de %.0f s → %s." % (OBJETIVO_PETICIONES, "cumple" if cumple else "NO cumple"))
    print("Contar el cuádruple de texto cuesta %.1f veces más (lineal ≈ 4, cuadrático ≈ 16)."
          % proporcion)
    return {"peticiones": n, "tokens_de_entrada": entrada, "segundos": segundos,
            "peticiones_por_segundo": por_segundo, "proporcion_contar_4x": proporcion,
            "cumple_objetivo": cumple}
