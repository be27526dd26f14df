"""CI: la tarea de la lección 01 (el agente y su traza sobre recetario/) con un modelo de verdad, SmolLM2 en llama-server.

Lo corre .ci/run en el tramo del modelo de verdad, después de `python -m curso modelo --comparar`.
Arranca llama-server (el de la caché, ya construido por `--solo-instalar`) en un puerto libre y
corre, en otro proceso y con los módulos del punto de control 01, `agente` con la `Traza` de
correr.py y un `ModeloAPI` que apunta a él (lo que hace una celda de la lección). Lo que conteste
el modelo no es un fallo (uno de 135M parámetros casi nunca llama a una herramienta); un fallo
del harness sí: una traza de Python, un código que no sea 0 ni el 1 de un ErrorDelModelo dicho en
castellano, o que no termine.
"""
import os
import subprocess
import sys
import tempfile
import time

from curso import rutas
from curso.modelo import llama_server

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
# Lo que corre el otro proceso, en la carpeta del punto de control 01: la lección 01 con el usuario
# del guion (sí a los tests y a editar sus dos módulos, no a lo demás).
LECCION_01 = """
import sys
from agente import agente
from api import ErrorDelModelo, ModeloAPI
from correr import Traza

def usuario(nombre, entrada):
    if nombre == "ejecutar":
        return entrada.get("comando") == "python3 -m unittest"
    return nombre == "editar" and entrada.get("ruta") in ("recetario.py", "compra.py")

url, modelo, proyecto, pedido, tope = sys.argv[1:]
try:
    motivo, texto, M, _ = agente(Traza(ModeloAPI(modelo, url=url)), pedido, proyecto, int(tope), usuario)
except ErrorDelModelo as e:
    sys.exit(f"lección 01: {e}")
print(f"{motivo} · {len(M)} mensajes en M")
"""
TOPE = "3"  # turnos: cada uno puede escribir 512 tokens, minutos en una CPU (0,65 tokens/s con la máquina cargada)
ESPERA_S = 3600  # tres turnos así caben de sobra; pasarse es que algo se ha colgado


def main():
    binario, origen, modelo = llama_server.preparar()
    punto = rutas.puntos_de_control()[1]
    with llama_server.ServidorReal(binario, modelo) as servidor, \
            tempfile.TemporaryDirectory(prefix="curso-ci-modelo-") as temporal:
        print(f"llama-server ({origen}) en {servidor.url}, arrancado en {servidor.segundos_al_arrancar:.1f} s",
              flush=True)
        entorno = {**os.environ, "ANTHROPIC_BASE_URL": servidor.url, "TMPDIR": temporal}
        inicio = time.monotonic()
        try:
            hecho = subprocess.run([sys.executable, "-c", LECCION_01, servidor.url, llama_server.NOMBRE,
                                    str(rutas.RAIZ / "recetario"), PEDIDO, TOPE],
                                   cwd=punto, env=entorno, capture_output=True, text=True, timeout=ESPERA_S,
                                   stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print(f"✘ la lección 01 no ha terminado en {ESPERA_S} s: algo se ha colgado", file=sys.stderr)
            return 1
        segundos = time.monotonic() - inicio
    print(hecho.stdout)
    print(hecho.stderr, file=sys.stderr)
    print(f"la lección 01 con {modelo.name}: código {hecho.returncode} en {segundos:.0f} s")
    if "Traceback" in hecho.stderr:
        print("✘ el harness se ha caído con una traza de Python", file=sys.stderr)
        return 1
    if hecho.returncode == 1 and hecho.stderr.lstrip().startswith("lección 01:"):
        print("· el modelo o el servidor dieron un error que el harness dijo en castellano: no es un fallo")
        return 0
    if hecho.returncode != 0:
        print(f"✘ la lección 01 ha acabado con el código {hecho.returncode}", file=sys.stderr)
        return 1
    print("✔ el harness ha corrido la lección 01 con un modelo de verdad de principio a fin")
    return 0


if __name__ == "__main__":
    sys.exit(main())
