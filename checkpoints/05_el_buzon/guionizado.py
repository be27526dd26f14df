"""Un modelo guionizado, sin HTTP: los guiones y las cuentas del servidor de ensayo, en el proceso.

Lección 01. Para los tests: contesta lo mismo que el servidor de ensayo del curso con el mismo
guion (el guion sólo mira la petición) y lleva el mismo `usage`, pero sin red.
"""
from api import MAX_TOKENS, ErrorDelModelo, peticion
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
            raise ErrorDelModelo(e.estado, e.mensaje) from None
        self.usage = respuesta["usage"]
        return respuesta["content"]
