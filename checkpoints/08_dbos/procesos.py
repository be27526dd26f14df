"""Correr una orden de la shell sin que pueda colgar ni ensuciar al harness: con su salida cortada,
su espera y su grupo entero muerto al acabar.

Lección 01. `herramientas.ejecutar` corre así las órdenes del modelo.

Lección 05. `casan`: dónde casa una expresión regular, buscado en otro proceso que se mata si
tarda demasiado. Lo usa `herramientas.buscar`.
"""
import json
import os
import signal
import subprocess
import sys
import threading

TROZO = 8192  # caracteres que se leen de una vez de la salida de una orden
ESPERA_TUBERIA = 1  # segundos para acabar de leer la salida una vez muerto el grupo de la orden

# El proceso que busca: recibe {"patron", "textos"} por su entrada y escribe, en JSON, dónde casa
# el patrón: [índice del texto, número de línea] de cada línea, en orden.
BUSCADOR = """
import json, re, sys
pedido = json.load(sys.stdin)
expresion = re.compile(pedido["patron"])
print(json.dumps([[i, n] for i, lineas in enumerate(pedido["textos"])
                  for n, linea in enumerate(lineas, 1) if expresion.search(linea)]))
"""


def correr(comando, carpeta, espera, limite):
    """Corre `comando` con la shell en `carpeta`: (su código de salida, o None si no terminó en
    `espera` segundos; los primeros `limite` caracteres de lo que escribió; cuántos más escribió).

    - La orden corre en una sesión nueva, con su propio grupo de procesos. Cuando la shell acaba,
      o se acaba la espera, se mata al grupo entero: también lo que la orden lanzó por debajo
      (`bash -c`, un hijo de Python) o dejó en segundo plano (`sleep 30 &`). No queda nada vivo.
    - Un hilo lee la salida a trozos mientras la orden corre, y solo guarda lo que se va a
      devolver: una orden que escribe 100 MB no ocupa 100 MB aquí.
    - Su entrada es /dev/null: un `head -n 1` no se come lo que el usuario le teclea al harness.
    """
    proceso = subprocess.Popen(comando, shell=True, cwd=carpeta, start_new_session=True,
                               env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, errors="replace")
    leido = {"texto": "", "sobran": 0}

    def leer_la_salida():
        while trozo := proceso.stdout.read(TROZO):
            cabe = trozo[:max(0, limite - len(leido["texto"]))]
            leido["texto"] += cabe
            leido["sobran"] += len(trozo) - len(cabe)

    lector = threading.Thread(target=leer_la_salida, daemon=True)
    lector.start()
    try:
        codigo = proceso.wait(timeout=espera)
    except subprocess.TimeoutExpired:
        codigo = None
    try:
        os.killpg(proceso.pid, signal.SIGKILL)  # el grupo lleva el número de la shell que lo abrió
    except ProcessLookupError:
        pass  # no quedaba nadie
    proceso.wait()
    # La tubería se cierra al morir el grupo. Solo un proceso que se haya ido a otra sesión
    # (un demonio) podría tenerla abierta todavía: a ése no se le espera.
    lector.join(ESPERA_TUBERIA)
    if not lector.is_alive():
        proceso.stdout.close()
    return codigo, leido["texto"], leido["sobran"]


def casan(patron, textos, espera):
    """Dónde casa `patron` en `textos` (cada uno, una lista de líneas): [[texto, línea], ...], o
    None si la búsqueda no terminó en `espera` segundos.

    `re` no se puede interrumpir, y hay patrones que no acaban en una vida: `(a+)+$` con una
    línea de cuarenta «a» y algo más prueba cada manera de repartir las «a» entre los grupos.
    Por eso busca otro proceso de Python (-I: sin los módulos de la copia), que se mata si pasa
    de `espera`: un patrón así no puede colgar al harness. Lanza ValueError si ese proceso
    falla (quien llama ya ha comprobado que `re` compila el patrón).
    """
    if not textos:
        return []
    try:
        hecho = subprocess.run([sys.executable, "-I", "-c", BUSCADOR], text=True,
                               input=json.dumps({"patron": patron, "textos": textos}),
                               capture_output=True, timeout=espera)
    except subprocess.TimeoutExpired:
        return None
    if hecho.returncode != 0:
        raise ValueError("la búsqueda ha fallado en su proceso")
    return json.loads(hecho.stdout)
