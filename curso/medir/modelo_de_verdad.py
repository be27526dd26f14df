"""Para quien escribe o da el curso (`python -m curso medir modelo`): la velocidad de SmolLM2 en llama-server, en esta máquina.

Arranca el llama-server de `python -m curso modelo` (tiene que estar instalado: `python -m curso
modelo --solo-instalar`) y le pide, con unos 1000 y unos 7000 tokens en la entrada (los dos puntos de
las cifras de las semillas: 0,4 s y 1,6 s por token generado), 32 tokens de salida sin pararse en el
final del texto y sin caché. Las cifras son las que mide el propio llama-server (`timings` de su API
de OpenAI): tokens por segundo al leer la entrada (prefill) y al generar, y segundos por token
generado. Antes, una petición corta que carga el modelo en memoria y no cuenta.
"""
import json
import urllib.request

from curso.modelo import instalar, llama_server

ENTRADAS = (1000, 7000)
SALIDA = 32
FRASE = "El agente lee el fichero, ejecuta los tests y edita la función que falla. "


def _post(url, ruta, cuerpo):
    pedido = urllib.request.Request(url + ruta, data=json.dumps(cuerpo).encode(),
                                    headers={"content-type": "application/json"})
    with urllib.request.urlopen(pedido, timeout=1800) as respuesta:
        return json.loads(respuesta.read())


def _pedir(url, texto, salida):
    return _post(url, "/v1/chat/completions", {
        "model": llama_server.NOMBRE, "messages": [{"role": "user", "content": texto}],
        "max_tokens": salida, "temperature": 0, "ignore_eos": True, "cache_prompt": False})


def _texto_de(url, tokens):
    """Un texto de unos `tokens` tokens, contados por el tokenizador del propio modelo."""
    por_frase = len(_post(url, "/tokenize", {"content": FRASE})["tokens"])
    return FRASE * max(1, tokens // por_frase)


def medir(url):
    filas = []
    _pedir(url, "Hola.", 1)  # carga el modelo en memoria: no cuenta
    for tokens in ENTRADAS:
        t = _pedir(url, _texto_de(url, tokens), SALIDA)["timings"]
        filas.append({"entrada": t["prompt_n"], "prefill_tokens_por_s": round(t["prompt_per_second"], 1),
                      "generados": t["predicted_n"], "generacion_tokens_por_s": round(t["predicted_per_second"], 1),
                      "s_por_token_generado": round(t["predicted_ms"] / 1000 / max(1, t["predicted_n"]), 4)})
    return filas


def main():
    listo, detalle = instalar.estado()
    if not listo:
        print(f"No hay modelo de verdad: {detalle}. Primero: python -m curso modelo --solo-instalar")
        return 1
    binario, origen, modelo = llama_server.preparar()
    with llama_server.ServidorReal(binario, modelo) as servidor:
        print(f"{instalar.NOMBRE_DEL_MODELO} en llama-server ({origen}), arrancado en "
              f"{servidor.segundos_al_arrancar:.1f} s; {SALIDA} tokens generados por medida:")
        filas = medir(servidor.url)
    print(f"{'entrada':>8} {'prefill tok/s':>14} {'generación tok/s':>17} {'s por token generado':>21}")
    for f in filas:
        print(f"{f['entrada']:>8} {f['prefill_tokens_por_s']:>14} {f['generacion_tokens_por_s']:>17} "
              f"{f['s_por_token_generado']:>21}")
    print("(las semillas midieron 0,4 s por token con unos 1000 tokens en M y 1,6 s con unos 7000, con otro "
          "modelo y otra máquina)")
    return {"filas": filas}
