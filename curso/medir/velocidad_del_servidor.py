"""Para `medir servidor`: cuánto tarda el servidor de ensayo, en esta máquina.

Dos medidas: el recorrido `arregla` de la lección 01 entero por HTTP (`medir_servidor_arregla`) y
200 peticiones de unos 8000 tokens seguidas (`medir_servidor_peticiones`). Cada una imprime lo
que ha medido, en castellano, y lo devuelve en un diccionario.
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

from curso import rutas
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
    ventana = max(motor.VENTANA, 2 * tokens + RESERVA_DE_SALIDA)
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


# --- El recorrido arregla, de punta a punta ----------------------------------------------------

OBJETIVO_ARREGLA = 3.0  # segundos: el recorrido entero debe sentirse instantáneo en un cuaderno
PUNTO_DEL_BUCLE = 1  # el punto de control cuyo agente se mide (el de la lección 01)
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."

# Lo que corre en el proceso aparte: el agente del punto de control, importado por sus nombres
# (`from agente import agente`), como lo importa el alumno. En un proceso propio no choca con los
# módulos de otros puntos de control, que se llaman igual.
_RECORRIDO = """
import json, sys, time
punto, url, proyecto, pedido = sys.argv[1:5]
sys.path.insert(0, punto)
from agente import agente
from api import ModeloAPI
from curso.ensayo.recetario import usuario_guionizado

class Contando:
    def __init__(self, modelo):
        self.modelo, self.peticiones, self.entrada = modelo, 0, 0
    def __call__(self, M, herramientas=()):
        respuesta = self.modelo(M, herramientas)
        u = self.modelo.usage
        self.peticiones += 1
        self.entrada += u["input_tokens"] + u.get("cache_read_input_tokens", 0)
        return respuesta

modelo = Contando(ModeloAPI("guion:arregla", url=url))
inicio = time.perf_counter()
motivo, texto, M, copia = agente(modelo, pedido, proyecto, 10, usuario_guionizado)  # borra su copia
segundos = time.perf_counter() - inicio
print(json.dumps({"motivo": motivo, "texto": texto, "mensajes": len(M), "peticiones": modelo.peticiones,
                  "tokens_de_entrada": modelo.entrada, "segundos": segundos}))
"""


def medir_servidor_arregla():
    """El recorrido `arregla` de la lección 01 entero, por HTTP de verdad, cronometrado.

    Arranca un servidor de ensayo en 127.0.0.1 y, en un proceso aparte, corre el `agente` del
    punto de control 01 con `ModeloAPI("guion:arregla")` y el usuario guionizado sobre una copia
    de recetario/: copiar, ocho peticiones, las ediciones y las dos ejecuciones de los tests.
    `segundos` es el tiempo de `agente(...)`; `segundos_con_arranque`, el del proceso entero.
    """
    punto = rutas.puntos_de_control().get(PUNTO_DEL_BUCLE)
    if punto is None:
        raise RuntimeError("no encuentro el punto de control %02d en %s" % (PUNTO_DEL_BUCLE, rutas.PUNTOS))
    entorno = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    entorno.pop("ANTHROPIC_BASE_URL", None)  # el servidor es el de esta medición, no otro
    with ServidorEnsayo(0) as servidor:
        inicio = time.perf_counter()
        hecho = subprocess.run([sys.executable, "-c", _RECORRIDO, str(punto), servidor.url,
                                str(rutas.RECETARIO), PEDIDO],
                               capture_output=True, text=True, env=entorno, timeout=120)
        con_arranque = time.perf_counter() - inicio
    if hecho.returncode != 0:
        raise RuntimeError("el recorrido arregla ha fallado (código %d):\n%s"
                           % (hecho.returncode, hecho.stderr.strip()))
    cifras = json.loads(hecho.stdout.strip().splitlines()[-1])
    cifras["segundos_con_arranque"] = con_arranque
    cifras["cumple_objetivo"] = cifras["segundos"] < OBJETIVO_ARREGLA
    print("Recorrido arregla por HTTP (agente del punto de control %02d, servidor de ensayo): "
          "%d peticiones, %d tokens de entrada en total, termina con «%s», en %.2f s."
          % (PUNTO_DEL_BUCLE, cifras["peticiones"], cifras["tokens_de_entrada"], cifras["motivo"],
             cifras["segundos"]))
    print("Objetivo: menos de %.0f s → %s. Con el arranque de Python y las importaciones: %.2f s."
          % (OBJETIVO_ARREGLA, "cumple" if cifras["cumple_objetivo"] else "NO cumple", con_arranque))
    return cifras


# --- python -m curso medir servidor -------------------------------------------------------------

def main():
    """Las dos medidas del servidor; el código de salida es 1 si el recorrido no acaba en «fin»."""
    arregla = medir_servidor_arregla()
    print()
    medir_servidor_peticiones()
    return 0 if arregla["motivo"] == "fin" else 1
