"""Reintentos: un modelo que falla durante un rato no tumba la ejecución.

Lección 06. `ModeloConReintentos(ModeloAPI(...))` es un modelo más para el bucle. Si la petición
falla de una manera que se arregla esperando, espera y la repite; si no, deja pasar el error.

Qué se reintenta (`se_reintenta`). Lo mismo que el SDK oficial de Anthropic (`_should_retry`
en anthropic/_base_client.py: 408, 409, 429, cualquier 5xx y los fallos de conexión), salvo dos
cosas que el SDK no mira:

- un 408 (el servidor se cansó de esperar la petición), un 409 (la petición chocó con otra que
  cambiaba lo mismo a la vez), un 429 (demasiadas peticiones) y cualquier 5xx: 500, 502, 503 y
  504 (el servidor o su pasarela, de momento), 529 («overloaded»)...;
- pero NO el 429 de un límite de gasto (`api.LIMITES_DE_GASTO`, que la API nombra en
  `error.details.error_code`): no trae `retry-after` y cada petición fallará igual hasta que el
  límite se renueve (el mes que viene) o lo suba quien administra la cuenta. El SDK lo
  reintenta, porque solo mira el estado;
- una petición sin respuesta: conexión rechazada, cortada, un servidor que se calla... pero NO
  los errores de configuración (`SIN_ARREGLO`): una URL que no es http:// ni https://, una
  máquina cuyo nombre no se resuelve, un certificado que no vale. Esperar no los arregla;
- ningún otro 4xx (400, 401, 403, 404, 413...): la misma petición fallará igual. Tampoco un
  200 que no es una respuesta de la API (el SDK tampoco), ni lo que no es de la red: un error de
  programación no se arregla esperando.

Cuánto se espera (`espera`): lo que pida el servidor, si pide algo (`pedida`: la cabecera
`retry-after-ms`, y si no `retry-after`, como lee el SDK); si no, exponencial, `base · 2^n`
segundos antes del reintento n (desde 0), con un tope (`tope`), y con azar ("full jitter": un
valor al azar entre 0 y eso), para que muchos clientes que fallaron a la vez no vuelvan a la vez.

Cuándo se rinde (lanza `SeRinde`, que dice por qué y lleva dentro el último error):

- tras `intentos` intentos en total;
- si el servidor pide esperar más de `UNA_ESPERA_S` de una vez. Volver antes solo gasta
  peticiones que el servidor ya ha dicho que rechazará, y rendirse no pierde nada: la ejecución
  es durable, y `reanudar` sigue donde se quedó. (Versiones anteriores del SDK oficial obedecían
  `retry-after` hasta 60 s y, si pedía más, volvían antes con su propia espera; la 2.10.0 obedece
  cualquier valor.)
- si la espera acabaría después del plazo total (`plazo`, contado desde el primer intento).
  Cada intento, además, no espera al servidor más de lo que queda del plazo: a un modelo con
  `espera` (ModeloAPI) se le baja durante ese intento. Y como esa espera es de la petición entera
  (api.py), tampoco un cuerpo que se para a medias o llega a gotas pasa del plazo.

El reloj, el sueño y el azar se pueden cambiar (`reloj`, `dormir`, `azar`): los tests no esperan
de verdad. La respuesta de cada petición la apunta quien la usa ANTES de actuar (agentes.py): un
reintento repite una petición que no se contestó, nunca una cuya respuesta ya se usó.
"""
import http.client
import random
import time

import api
from api import ErrorDelModelo

REINTENTABLES = {408, 409, 429}  # los 4xx que se arreglan esperando; los 5xx, todos
SIN_ARREGLO = {"esquema", "nombre", "certificado"}  # las `causa` sin respuesta que esperar no arregla
INTENTOS = 6  # el primero y cinco reintentos
BASE_S = 1.0  # la espera antes del primer reintento, como mucho (si el servidor no pide otra)
TOPE_S = 30.0  # ninguna espera al azar pasa de aquí, por muchos reintentos que lleve
UNA_ESPERA_S = 60.0  # lo más que se espera de una vez lo que pide el servidor
PLAZO_S = 2 * api.ESPERA  # media hora: a un modelo local lento le da para una respuesta y un reintento
CUERPO_S = 10.0  # tras sus cabeceras, el cuerpo (unos KB, ya hecho) llega o el intento ha fallado
# Lo que lanza la red cuando el modelo no es un ModeloAPI, que ya lo convierte en ErrorDelModelo
# con su `causa`: conexión cortada (ConnectionResetError, http.client.RemoteDisconnected),
# rechazada, sin respuesta a tiempo (TimeoutError), o una respuesta a medias (IncompleteRead...).
DE_LA_RED = (ConnectionError, TimeoutError, http.client.HTTPException)


class SeRinde(ErrorDelModelo):
    """Un error que se arregla esperando, pero se deja de esperar: el aviso dice por qué, y
    `ultimo` es el último error (el estado, el mensaje y las cabeceras son los suyos)."""

    def __init__(self, ultimo, motivo):
        self.ultimo, self.motivo = ultimo, motivo
        super().__init__(getattr(ultimo, "estado", None), getattr(ultimo, "mensaje", str(ultimo)),
                         f"me rindo: {motivo}. El último error: {str(ultimo) or type(ultimo).__name__}",
                         getattr(ultimo, "cabeceras", None), getattr(ultimo, "codigo", None),
                         getattr(ultimo, "causa", None))


def pedida(error):
    """Los segundos que el servidor pide esperar antes de volver, o None si no pide nada.

    Como el SDK oficial (`_parse_retry_after_header`): primero `retry-after-ms`, en milisegundos
    (no es estándar, y es más precisa), y si no está o no es un número, `retry-after`, en
    segundos, que es lo que manda la API de Anthropic. (El SDK lee además una fecha HTTP en
    `retry-after`; aquí una fecha es como no pedir nada.)"""
    cabeceras = getattr(error, "cabeceras", None) or {}
    for nombre, por in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return float(cabeceras[nombre]) / por
        except (KeyError, TypeError, ValueError):
            pass
    return None


def se_reintenta(error):
    """¿Se arregla `error` esperando? (ver el docstring del módulo)"""
    if isinstance(error, ErrorDelModelo):
        if error.estado is None:  # no hubo respuesta: depende de por qué
            return error.causa not in SIN_ARREGLO
        if error.codigo in api.LIMITES_DE_GASTO:
            return False
        return error.estado in REINTENTABLES or error.estado >= 500
    return isinstance(error, DE_LA_RED)


def espera(n, azar, base=BASE_S, tope=TOPE_S, pedida=None):
    """Los segundos que se espera antes del reintento `n` (desde 0): `pedida`, si el servidor pidió
    más de 0; si no, al azar, entre 0 y min(tope, base · 2^n)."""
    if pedida is not None and pedida > 0:
        return pedida
    return azar.uniform(0, min(tope, base * 2 ** n))


class ModeloConReintentos:
    """Envuelve a un modelo (con `usage`) y reintenta lo que se arregla esperando.

    `al_reintentar(n, error, segundos)` (opcional) se llama antes de cada espera: para apuntarla."""

    def __init__(self, modelo, intentos=INTENTOS, base=BASE_S, tope=TOPE_S, plazo=PLAZO_S,
                 dormir=time.sleep, azar=None, reloj=time.monotonic, al_reintentar=None, cuerpo=CUERPO_S):
        if type(intentos) is not int or intentos < 1:
            raise ValueError(f"intentos tiene que ser un entero positivo, no {intentos!r}.")
        for nombre, valor in (("plazo", plazo), ("cuerpo", 1 if cuerpo is None else cuerpo)):
            if not isinstance(valor, (int, float)) or not valor > 0:
                raise ValueError(f"{nombre} tiene que ser un número de segundos mayor que 0, no {valor!r}.")
        self.modelo, self.intentos, self.base, self.tope = modelo, intentos, base, tope
        self.plazo, self.dormir, self.reloj, self.cuerpo = plazo, dormir, reloj, cuerpo
        self.azar = azar or random.Random()
        self.al_reintentar = al_reintentar
        self.reintentos = []  # (n, error, segundos) de cada reintento de este modelo

    @property
    def usage(self):
        return self.modelo.usage

    def intento(self, M, herramientas, queda):
        """Una petición al modelo; a un ModeloAPI, la `espera` de lo que `queda` y el `cuerpo` de aquí."""
        propia = getattr(self.modelo, "espera", None)
        if propia is None:
            return self.modelo(M, herramientas)
        antes = propia, getattr(self.modelo, "cuerpo", None)
        self.modelo.espera = min(propia, max(queda, 0.01))
        self.modelo.cuerpo = antes[1] if self.cuerpo is None else self.cuerpo
        try:
            return self.modelo(M, herramientas)
        finally:
            self.modelo.espera, self.modelo.cuerpo = antes

    def __call__(self, M, herramientas=()):
        """Los bloques de la respuesta a M. Como mucho `intentos` intentos, cada uno con
        `self.intento(M, herramientas, lo que queda del plazo)`; entre uno y otro, la espera de
        `espera(...)` (con lo que pida el servidor). Lo que no se reintenta sale tal cual; cuando
        deja de esperar algo que sí, SeRinde(error, por qué)."""
        fin = self.reloj() + self.plazo
        for n in range(self.intentos):
            try:
                return self.intento(M, herramientas, fin - self.reloj())
            except Exception as error:
                if not se_reintenta(error):
                    raise
                if n == self.intentos - 1:
                    raise SeRinde(error, f"{self.intentos} intentos y ninguna respuesta") from error
                segundos = espera(n, self.azar, self.base, self.tope, pedida(error))
                if segundos > UNA_ESPERA_S:
                    raise SeRinde(error, f"el servidor pide esperar {segundos:g} s, y de una vez no se "
                                         f"espera más de {UNA_ESPERA_S:g} s") from error
                if self.reloj() + segundos >= fin:
                    raise SeRinde(error, f"esperar {segundos:.2f} s más se pasaría del plazo de "
                                         f"{self.plazo:g} s") from error
                self.reintentos.append((n, error, segundos))
                if self.al_reintentar is not None:
                    self.al_reintentar(n, error, segundos)
                self.dormir(segundos)
