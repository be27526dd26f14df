"""Para los tests y las celdas: un modelo guionizado sin HTTP, el motor del servidor de ensayo en el proceso.

`ModeloGuionizado("arregla")(M, HERRAMIENTAS)` contesta lo mismo que el servidor de ensayo con el
guion `guion:arregla` (el guion solo mira la petición) y lleva el mismo `usage`, pero sin red: los
tests de los puntos de control corren así miles de turnos en segundos.

Es del curso, no del harness: el harness del alumno habla con cualquier servidor de la API de
Messages por HTTP (`api.ModeloAPI`) y no sabe nada de guiones. Lo único que toma del harness es
su `api.py`, para hablar como él: la petición la arma `api.peticion` y los errores son los de
`api.error_del_servidor` (también `ErrorVentana` cuando la petición no cabe), así que el bucle los
recoge igual que los de `ModeloAPI`. Ese `api` es el que se importe con ese nombre (el del punto
de control o del espacio que va primero en sys.path), o el que se le pase.
"""
import importlib
import json

from curso.ensayo.motor import Ensayo, ErrorPeticion
from curso.ensayo.tokens import VENTANA


class ModeloGuionizado:
    """`ModeloGuionizado("arregla")(M, HERRAMIENTAS)` → los bloques de la respuesta del guion."""

    def __init__(self, guion, ventana=VENTANA, max_tokens=None, api=None):
        self.api = importlib.import_module("api") if api is None else api
        self.modelo = f"guion:{guion}"
        self.max_tokens = self.api.MAX_TOKENS if max_tokens is None else max_tokens
        self.ensayo = Ensayo(ventana=ventana)
        self.usage = None

    def __call__(self, M, herramientas=()):
        try:
            respuesta = self.ensayo.responder(self.api.peticion(M, herramientas, self.modelo, self.max_tokens))
        except ErrorPeticion as e:
            raise self.api.error_del_servidor(e.estado, json.dumps(e.cuerpo()), M=list(M)) from None
        self.usage = respuesta["usage"]
        return self.api.bloques_de(respuesta)
