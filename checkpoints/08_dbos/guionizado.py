"""Un modelo guionizado, sin HTTP: los guiones y las cuentas del servidor de ensayo, en el proceso.

Lección 01. Para los tests: contesta lo mismo que el servidor de ensayo del curso con el mismo
guion (el guion solo mira la petición) y lleva el mismo `usage`, pero sin red. Sus errores son
los mismos que los de `ModeloAPI`, también `ErrorVentana` cuando la petición no cabe.
"""
import json

from api import MAX_TOKENS, bloques_de, error_del_servidor, peticion
from curso.ensayo.motor import Ensayo, ErrorPeticion


class ModeloGuionizado:
    """`ModeloGuionizado("arregla")(M, HERRAMIENTAS)` → los bloques de la respuesta del guion."""

    def __init__(self, guion, ventana=8192, max_tokens=MAX_TOKENS):
        self.modelo, self.max_tokens = f"guion:{guion}", max_tokens
        self.ensayo = Ensayo(ventana=ventana)
        self.usage = None

    def __call__(self, M, herramientas=()):
        try:
            respuesta = self.ensayo.responder(peticion(M, herramientas, self.modelo, self.max_tokens))
        except ErrorPeticion as e:
            raise error_del_servidor(e.estado, json.dumps(e.cuerpo()), M=list(M)) from None
        self.usage = respuesta["usage"]
        return bloques_de(respuesta)
