"""Reintentos: un modelo que falla durante un rato no tumba la ejecución.

Lección 06. `ModeloConReintentos(ModeloAPI(...))` es un modelo más para el bucle. Si la petición
falla de una manera que se arregla esperando, espera y la repite; si no, deja pasar el error.

- Se reintenta (`se_reintenta`): 429 (demasiadas peticiones), 500, 502, 503 y 504 (el servidor
  o su pasarela, de momento), 529 («overloaded»), una conexión rechazada, cortada o sin
  respuesta, y una respuesta que no llega a tiempo.
- No se reintenta nunca un 400, ni ningún otro 4xx: la misma petición fallará igual. Tampoco lo
  que no es de la red (un error de programación no se arregla esperando).
- Cuánto se espera (`espera`): exponencial, `base · 2^n` segundos antes del reintento n (desde
  0), con un tope (`tope`), y con azar ("full jitter": un valor al azar entre 0 y eso), para
  que muchos clientes que fallaron a la vez no vuelvan a la vez.
- Cuándo se rinde: tras `intentos` intentos en total, con el último error.

El reloj y el azar se pueden cambiar (`dormir`, `azar`): los tests no esperan de verdad.
La respuesta de cada petición la apunta quien la usa ANTES de actuar (agentes.py): un reintento
repite una petición que no se contestó, nunca una cuya respuesta ya se usó.
"""
import http.client
import random
import time

from api import ErrorDelModelo

REINTENTABLES = {429, 500, 502, 503, 504, 529}
INTENTOS = 6  # el primero y cinco reintentos
BASE_S = 1.0  # la espera antes del primer reintento, como mucho
TOPE_S = 30.0  # ninguna espera pasa de aquí, por muchos reintentos que lleve
# Lo que lanza la red sin que el adaptador lo convierta: conexión cortada (ConnectionResetError,
# también http.client.RemoteDisconnected), rechazada, sin respuesta a tiempo (TimeoutError), o
# una respuesta a medias (http.client.IncompleteRead y compañía).
DE_LA_RED = (ConnectionError, TimeoutError, http.client.HTTPException)


def se_reintenta(error):
    """¿Se arregla `error` esperando? (ver el docstring del módulo)"""
    if isinstance(error, ErrorDelModelo):
        return error.estado is None or error.estado in REINTENTABLES  # None: no hubo respuesta
    return isinstance(error, DE_LA_RED)


def espera(n, azar, base=BASE_S, tope=TOPE_S):
    """Los segundos que se espera antes del reintento `n` (desde 0): al azar, entre 0 y
    min(tope, base · 2^n)."""
    return azar.uniform(0, min(tope, base * 2 ** n))


class ModeloConReintentos:
    """Envuelve a un modelo (con `usage`) y reintenta lo que se arregla esperando.

    `al_reintentar(n, error, segundos)` (opcional) se llama antes de cada espera: para apuntarla."""

    def __init__(self, modelo, intentos=INTENTOS, base=BASE_S, tope=TOPE_S, dormir=time.sleep,
                 azar=None, al_reintentar=None):
        if type(intentos) is not int or intentos < 1:
            raise ValueError(f"intentos tiene que ser un entero positivo, no {intentos!r}.")
        self.modelo, self.intentos, self.base, self.tope = modelo, intentos, base, tope
        self.dormir, self.azar = dormir, azar or random.Random()
        self.al_reintentar = al_reintentar
        self.reintentos = []  # (n, error, segundos) de cada reintento de este modelo

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        for n in range(self.intentos):
            try:
                return self.modelo(M, herramientas)
            except Exception as error:
                if not se_reintenta(error) or n == self.intentos - 1:
                    raise
                segundos = espera(n, self.azar, self.base, self.tope)
                self.reintentos.append((n, error, segundos))
                if self.al_reintentar is not None:
                    self.al_reintentar(n, error, segundos)
                self.dormir(segundos)
