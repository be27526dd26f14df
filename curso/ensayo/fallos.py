"""Fallos a propósito en el servidor de ensayo (lección 06): un modelo que falla durante un rato.

Un servidor de verdad a veces no contesta: 429 (demasiadas peticiones), 500, 503, 529
(«overloaded»), una conexión que se corta, una respuesta que no llega a tiempo. El servidor de
ensayo los puede provocar, siempre igual, con un PLAN: la lista de lo que les pasa a los
intentos sucesivos de CADA petición distinta.

    ServidorEnsayo(fallos="529,429,corte")      # o python -m curso servidor --fallos 529,429,corte

Con ese plan, el primer intento de cada petición recibe un 529, el segundo un 429, el tercero
encuentra la conexión cortada y el cuarto, la respuesta de siempre. Dos peticiones son la misma
si su cuerpo JSON es el mismo: un reintento lo es, y un reinicio del cliente también; así el
plan no depende de cuántos clientes haya ni de en qué orden lleguen. `cada=N` limita los fallos
a una de cada N peticiones distintas (la N-ésima, la 2N-ésima...), en el orden en que llegan.

Lo que puede llevar el plan:

- un estado HTTP: 400, 429, 500, 502, 503, 504 o 529, con el cuerpo de error de Anthropic (el
  400 sirve para ver que un cliente no reintenta lo que no se arregla reintentando);
- `corte`: el servidor cierra la conexión sin contestar (el cliente ve la conexión cortada);
- `lento`: la respuesta tarda `lento_s` segundos (por defecto 5) más de lo normal;
- `variar` (aparte, no en la lista): una petición que ya se contestó recibe otro texto, como
  lo haría un modelo de verdad, que no repite sus respuestas. Las llamadas a herramientas no
  cambian, solo el texto.
"""
import collections
import hashlib
import json
import threading
import time

from curso.ensayo.motor import ErrorPeticion

ESTADOS = {
    400: ("invalid_request_error", "petición rechazada a propósito por el plan de fallos: reintentarla no la arregla"),
    429: ("rate_limit_error", "demasiadas peticiones: espera un poco antes de reintentar"),
    500: ("api_error", "error interno del servidor (a propósito, del plan de fallos)"),
    502: ("api_error", "la pasarela no ha recibido respuesta del modelo"),
    503: ("api_error", "el servicio no está disponible ahora mismo"),
    504: ("api_error", "la pasarela se ha cansado de esperar al modelo"),
    529: ("overloaded_error", "Overloaded: el servidor está sobrecargado, reintenta más tarde"),
}
LENTO_S = 5.0
VARIACION = " (Lo digo con otras palabras que la vez anterior.)"  # lo que añade `variar` al texto


class Corte(Exception):
    """El servidor corta la conexión sin contestar (el manejador HTTP no escribe nada)."""


def leer_plan(plan):
    """La lista de fallos de un plan como «529,429,corte»; ValueError, en castellano, si no vale."""
    if isinstance(plan, (list, tuple)):
        partes = [str(p).strip() for p in plan]
    else:
        partes = [p.strip() for p in str(plan).split(",") if p.strip()]
    validos = [str(e) for e in ESTADOS] + ["corte", "lento"]
    for parte in partes:
        if parte not in validos:
            raise ValueError(f"El plan de fallos tiene «{parte}», que no es ninguno de estos: {', '.join(validos)}.")
    return [int(p) if p.isdigit() else p for p in partes]


class Fallos:
    """Un plan de fallos, que `envolver` aplica a `Ensayo.responder_con_tiempo`. Es seguro entre hilos."""

    def __init__(self, plan="", cada=1, variar=False, lento_s=LENTO_S):
        if type(cada) is not int or cada < 1:
            raise ValueError(f"cada tiene que ser un entero positivo, no {cada!r}.")
        self.plan, self.cada, self.variar, self.lento_s = leer_plan(plan), cada, variar, lento_s
        self._intentos = collections.Counter()  # huella de la petición -> intentos vistos
        self._respondidas = collections.Counter()  # huella -> veces que se contestó de verdad
        self._orden = {}  # huella -> en qué orden llegó por primera vez (desde 1)
        self._cerrojo = threading.Lock()
        self.aplicados = []  # (orden de la petición, intento, fallo) de cada fallo provocado

    def decidir(self, peticion):
        """(fallo o None, huella) para esta llegada de `peticion`."""
        huella = hashlib.sha256(json.dumps(peticion, sort_keys=True).encode()).hexdigest()
        with self._cerrojo:
            intento = self._intentos[huella]
            self._intentos[huella] += 1
            orden = self._orden.setdefault(huella, len(self._orden) + 1)
            fallo = self.plan[intento] if intento < len(self.plan) and orden % self.cada == 0 else None
            if fallo is not None:
                self.aplicados.append((orden, intento, fallo))
        return fallo, huella

    def envolver(self, responder):
        """`responder(peticion) -> (respuesta, segundos)`, con el plan aplicado."""
        def con_fallos(peticion):
            fallo, huella = self.decidir(peticion)
            if fallo == "corte":
                raise Corte()
            if fallo == "lento":
                time.sleep(self.lento_s)
            elif fallo is not None:
                tipo, mensaje = ESTADOS[fallo]
                raise ErrorPeticion(fallo, tipo, mensaje)
            respuesta, segundos = responder(peticion)
            with self._cerrojo:
                antes = self._respondidas[huella]
                self._respondidas[huella] += 1
            if self.variar and antes:
                for bloque in respuesta["content"]:  # ya se contestó antes: otro texto
                    if bloque["type"] == "text":
                        bloque["text"] += VARIACION * antes
            return respuesta, segundos
        return con_fallos


def con_fallos(ensayo, fallos):
    """El mismo `ensayo`, con `fallos` (un Fallos, un plan en texto, o None: ninguno) aplicados."""
    if fallos is None or fallos == "":
        return ensayo
    if not isinstance(fallos, Fallos):
        fallos = Fallos(fallos)
    ensayo.fallos = fallos
    ensayo.responder_con_tiempo = fallos.envolver(ensayo.responder_con_tiempo)
    return ensayo
