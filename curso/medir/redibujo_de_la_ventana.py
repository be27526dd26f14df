"""Para `medir ventana`: cuánto tarda el explorable de la ventana (lección 02) en redibujarse, en esta máquina.

Mueve 50 veces el deslizador de la ventana del widget de verdad, en este mismo proceso, y
cronometra cada cambio: el widget vuelve a llamar a las funciones puras de `curso.explorables.ventana.presupuesto` y a
escribir su HTML. Objetivo: menos de 100 ms por cambio, para que el deslizador se sienta
inmediato.

`atasco()` corre la ejecución guionizada `atasco` del punto de control 01 en un proceso aparte
(sus módulos se llaman igual que los de otros puntos de control) y devuelve su M, lo que cuenta
el servidor de ensayo de cada petición y si la admite; la usan esta medida y los tests de
`tests/equipo/test_ventana.py`.

Uso: python -m curso medir ventana
"""
import json
import os
import subprocess
import sys
import time

from curso import rutas

PUNTO_DEL_BUCLE = 1  # el punto de control cuyo agente produce la traza (el de la lección 01)
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
TOPE = 10  # los turnos de la ejecución atascada: M acaba con diez turnos enteros
MOVIMIENTOS = 50
OBJETIVO_MS = 100.0

# Lo que corre en el proceso aparte: el agente del punto de control con el modelo guionizado y
# el usuario guionizado. Después, para cada prefijo de M, lo que cuenta el motor de la petición
# que construye el propio `api.peticion` del harness; y, para cada prefijo que es una petición
# (acaba en un mensaje del usuario), si el motor la admite con el `max_tokens` de `api.py`.
_ATASCO = """
import json, shutil, sys
punto, proyecto, pedido, tope = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, punto)
from agente import agente
from api import MAX_TOKENS, peticion
from entorno import HERRAMIENTAS
from curso.ensayo.guionizado import ModeloGuionizado
from curso.ensayo.motor import Ensayo, ErrorPeticion, trocear_peticion
from curso.ensayo.recetario import usuario_guionizado

usos = []


class Apuntado(ModeloGuionizado):
    def __call__(self, M, herramientas=()):
        respuesta = super().__call__(M, herramientas)
        usos.append(dict(self.usage))
        return respuesta


resultado = agente(Apuntado("atasco"), pedido, proyecto, tope, usuario_guionizado)
motivo, M, copia = resultado[0], resultado[2], resultado[3]
if copia is not None:  # el agente de la lección 01 ya la borra él solo
    shutil.rmtree(copia.parent, ignore_errors=True)
cuentas = {len(M[:i]): len(trocear_peticion(peticion(M[:i], HERRAMIENTAS, "guion:atasco")))
           for i in range(2, len(M) + 1)}
admitidas = {}
for i in range(2, len(M) + 1, 2):
    try:
        Ensayo().responder(peticion(M[:i], HERRAMIENTAS, "guion:atasco", MAX_TOKENS))
        admitidas[i] = True
    except ErrorPeticion:
        admitidas[i] = False
print(json.dumps({"motivo": motivo, "M": M, "herramientas": HERRAMIENTAS, "cuentas": cuentas,
                  "admitidas": admitidas, "max_tokens": MAX_TOKENS, "usos": usos}, ensure_ascii=False))
"""


def atasco(tope=TOPE):
    """La ejecución `atasco` de la lección 01, con lo que dice de ella el servidor de ensayo.

    Un dict: "motivo" y "M" (de `agente`), "herramientas", "fichero" (el texto de
    recetario/AGENTE.md), "cuentas" (`cuentas[k]`: los tokens que cuenta el motor de la petición
    hecha con los k primeros mensajes de M), "admitidas" (`admitidas[k]`: si el motor admite esa
    petición, para k par), "max_tokens" (el de `api.py`) y "usos" (el `usage` de cada respuesta).
    """
    punto = rutas.puntos_de_control().get(PUNTO_DEL_BUCLE)
    if punto is None:
        raise RuntimeError("no encuentro el punto de control %02d en %s" % (PUNTO_DEL_BUCLE, rutas.PUNTOS))
    entorno = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    entorno.pop("ANTHROPIC_BASE_URL", None)
    hecho = subprocess.run([sys.executable, "-c", _ATASCO, str(punto), str(rutas.RECETARIO), PEDIDO,
                            str(tope)], capture_output=True, text=True, env=entorno, timeout=120)
    if hecho.returncode != 0:
        raise RuntimeError("la ejecución atasco ha fallado (código %d):\n%s"
                           % (hecho.returncode, hecho.stderr.strip()))
    datos = json.loads(hecho.stdout.strip().splitlines()[-1])
    return {
        "motivo": datos["motivo"],
        "M": [tuple(m) for m in datos["M"]],
        "herramientas": datos["herramientas"],
        "fichero": (rutas.RECETARIO / "AGENTE.md").read_text(encoding="utf-8"),
        "cuentas": {int(k): n for k, n in datos["cuentas"].items()},
        "admitidas": {int(k): si for k, si in datos["admitidas"].items()},
        "max_tokens": datos["max_tokens"],
        "usos": datos["usos"],
    }


def medir_deslizador(caja, movimientos=MOVIMIENTOS):
    """Milisegundos de cada cambio del deslizador de la ventana de `caja` (el VBox del explorable)."""
    deslizador = next(w for w in caja.children if "ventana-ventana" in w._dom_classes)
    valores = list(range(deslizador.min, deslizador.max + 1, deslizador.step))
    tiempos = []
    for i in range(movimientos):
        valor = valores[(i * 7 + 1) % len(valores)]  # saltos por todo el recorrido
        if valor == deslizador.value:
            valor = valores[(i * 7 + 2) % len(valores)]
        inicio = time.perf_counter()
        deslizador.value = valor  # el widget se redibuja aquí mismo, al observar el cambio
        tiempos.append(1000 * (time.perf_counter() - inicio))
    return tiempos


def main():
    """Mide el redibujado del explorable con el M real del atasco; devuelve las cifras."""
    from curso.explorables.ventana.widget_de_la_ventana import explorar_ventana

    traza = atasco()
    caja = explorar_ventana(traza["M"], traza["herramientas"], traza["fichero"])
    tiempos = medir_deslizador(caja)
    media, maximo = sum(tiempos) / len(tiempos), max(tiempos)
    cumple = maximo < OBJETIVO_MS
    print("Explorable de la ventana: %d movimientos del deslizador de la ventana, en este proceso."
          % len(tiempos))
    print("Redibujar tarda %.2f ms de media y %.2f ms como mucho." % (media, maximo))
    print("Objetivo: menos de %.0f ms por cambio → %s." % (OBJETIVO_MS, "cumple" if cumple else "NO cumple"))
    return {"movimientos": len(tiempos), "media_ms": media, "maximo_ms": maximo,
            "cumple_objetivo": cumple}


if __name__ == "__main__":
    main()
