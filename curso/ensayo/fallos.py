"""Para la lección 06 y sus tests: fallos a propósito en el servidor de ensayo, un modelo que falla durante un rato.

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

- un estado HTTP: 400, 408, 409, 429, 500, 502, 503, 504 o 529, con el cuerpo de error de
  Anthropic (el 400 sirve para ver que un cliente no reintenta lo que no se arregla reintentando);
- el estado con lo que el servidor pide esperar: `429:40` lleva la cabecera `retry-after: 40`
  (segundos) y `529:1500ms`, `retry-after-ms: 1500` (milisegundos), las dos que lee el SDK oficial;
- `gasto`: el 429 de la API cuando la organización llega a su límite de gasto: `rate_limit_error`
  con `error.details.error_code = "enforced_spend_limit_reached"` y sin `retry-after`;
- `corte`: el servidor cierra la conexión sin contestar (el cliente ve la conexión cortada);
- `lento`: la respuesta tarda `lento_s` segundos (por defecto 5) más de lo normal;
- `a_medias`: el servidor manda el estado, las cabeceras y la mitad del cuerpo, se calla
  `lento_s` segundos y cierra: un servidor que se atasca a media respuesta;
- `goteo`: manda el estado y las cabeceras, y luego el cuerpo en `TROZOS_DEL_GOTEO` trozos, con
  `lento_s` segundos de silencio antes de cada uno: un servidor (o una red) atascado que nunca
  llega a callarse del todo. Una espera que mide silencios no lo corta nunca; un plazo, sí;
- `html`: un 200 con una página HTML, como la de un proxy o un portal cautivo;
- `sin_usage`: un 200 con la respuesta de siempre, pero sin su `usage`;
- `variar` (aparte, no en la lista): una petición que ya se contestó recibe otro texto, como
  lo haría un modelo de verdad, que no repite sus respuestas. Las llamadas a herramientas no
  cambian, solo el texto.

`RelojDeEnsayo` es para los clientes que reintentan contra este servidor: un reloj que solo
avanza cuando el cliente «duerme», así sus esperas se apuntan sin esperarlas.
"""
import collections
import hashlib
import json
import re
import threading
import time

from curso.ensayo.motor import ErrorPeticion

ESTADOS = {
    400: ("invalid_request_error", "petición rechazada a propósito por el plan de fallos: reintentarla no la arregla"),
    408: ("invalid_request_error", "la petición tardó demasiado en llegar (a propósito, del plan de fallos)"),
    409: ("conflict_error", "la petición choca con otra que cambió lo mismo a la vez (a propósito, del plan de fallos)"),
    429: ("rate_limit_error", "demasiadas peticiones: espera un poco antes de reintentar"),
    500: ("api_error", "error interno del servidor (a propósito, del plan de fallos)"),
    502: ("api_error", "la pasarela no ha recibido respuesta del modelo"),
    503: ("api_error", "el servicio no está disponible ahora mismo"),
    504: ("api_error", "la pasarela se ha cansado de esperar al modelo"),
    529: ("overloaded_error", "Overloaded: el servidor está sobrecargado, reintenta más tarde"),
}
GASTO = ("enforced_spend_limit_reached",
         "límite de gasto alcanzado: el acceso vuelve el día 1 del mes que viene (a propósito, del plan de fallos)")
OTROS = ["gasto", "corte", "lento", "a_medias", "goteo", "html", "sin_usage"]
CON_ESPERA = re.compile(r"(?P<estado>\d{3}):(?P<valor>\d+(?:\.\d+)?)(?P<ms>ms)?")
LENTO_S = 5.0
TROZOS_DEL_GOTEO = 10
VARIACION = " (Lo digo con otras palabras que la vez anterior.)"  # lo que añade `variar` al texto
PAGINA_HTML = ("<!DOCTYPE html>\n<html><head><title>Inicia sesión para usar la red</title></head>\n"
               "<body><h1>Red de invitados</h1><p>Acepta las condiciones para navegar.</p></body></html>\n")


class Corte(Exception):
    """El servidor corta la conexión sin contestar (el manejador HTTP no escribe nada)."""


class ErrorConCabeceras(ErrorPeticion):
    """Un error del plan con cabeceras (`retry-after`...) y, si lo trae, `error.details.error_code`."""

    def __init__(self, estado, tipo, mensaje, cabeceras=None, codigo=None):
        super().__init__(estado, tipo, mensaje)
        self.cabeceras, self.codigo = dict(cabeceras or {}), codigo

    def cuerpo(self):
        cuerpo = super().cuerpo()
        if self.codigo:
            cuerpo["error"]["details"] = {"error_code": self.codigo}
        return cuerpo


class Cruda(Exception):
    """Una respuesta que el manejador HTTP escribe tal cual: `datos` (bytes) con su tipo. Si
    `parada_s`, manda la mitad, se calla esos segundos y cierra. Si `goteo_s`, la manda entera en
    TROZOS_DEL_GOTEO trozos, con esos segundos de silencio antes de cada uno."""

    def __init__(self, estado, tipo, datos, parada_s=None, goteo_s=None):
        super().__init__(estado)
        self.estado, self.tipo, self.datos, self.parada_s = estado, tipo, datos, parada_s
        self.goteo_s = goteo_s


def leer_plan(plan):
    """La lista de fallos de un plan como «529,429,corte»; ValueError, en castellano, si no vale."""
    if isinstance(plan, (list, tuple)):
        partes = [str(p).strip() for p in plan]
    else:
        partes = [p.strip() for p in str(plan).split(",") if p.strip()]
    validos = [str(e) for e in ESTADOS] + OTROS
    for parte in partes:
        con_espera = CON_ESPERA.fullmatch(parte)
        if parte not in validos and not (con_espera and int(con_espera["estado"]) in ESTADOS):
            raise ValueError(f"El plan de fallos tiene «{parte}», que no es ninguno de estos: "
                             f"{', '.join(validos)}, o un estado con lo que pide esperar (429:40, "
                             "529:1500ms).")
    return [int(p) if p.isdigit() else p for p in partes]


def error_del_plan(fallo):
    """El ErrorPeticion de un fallo del plan que es un estado HTTP (`429`, `429:40`, `gasto`)."""
    if fallo == "gasto":
        codigo, mensaje = GASTO
        return ErrorConCabeceras(429, "rate_limit_error", mensaje, codigo=codigo)
    con_espera = CON_ESPERA.fullmatch(str(fallo))
    estado = int(con_espera["estado"]) if con_espera else fallo
    tipo, mensaje = ESTADOS[estado]
    if not con_espera:
        return ErrorPeticion(estado, tipo, mensaje)
    cabecera = "retry-after-ms" if con_espera["ms"] else "retry-after"
    return ErrorConCabeceras(estado, tipo, mensaje, {cabecera: con_espera["valor"]})


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

    @property
    def llegadas(self):
        """Cuántas peticiones han llegado, con fallo o sin él."""
        with self._cerrojo:
            return sum(self._intentos.values())

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
            if fallo == "html":
                raise Cruda(200, "text/html; charset=utf-8", PAGINA_HTML.encode())
            if fallo == "lento":
                time.sleep(self.lento_s)
            elif fallo not in (None, "a_medias", "goteo", "sin_usage"):
                raise error_del_plan(fallo)
            respuesta, segundos = responder(peticion)
            if fallo == "a_medias":
                raise Cruda(200, "application/json", json.dumps(respuesta).encode(), self.lento_s)
            if fallo == "goteo":
                raise Cruda(200, "application/json", json.dumps(respuesta).encode(), goteo_s=self.lento_s)
            if fallo == "sin_usage":
                raise Cruda(200, "application/json",
                            json.dumps({k: v for k, v in respuesta.items() if k != "usage"}).encode())
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


class RelojDeEnsayo:
    """Un reloj para un cliente que reintenta: solo avanza cuando el cliente duerme.

        reloj = RelojDeEnsayo()
        ModeloConReintentos(modelo, dormir=reloj.dormir, reloj=reloj)

    `reloj()` da los segundos que lleva «dormidos»; `esperas` los apunta uno a uno."""

    def __init__(self):
        self.ahora, self.esperas = 0.0, []

    def __call__(self):
        return self.ahora

    def dormir(self, segundos):
        self.esperas.append(segundos)
        self.ahora += segundos
