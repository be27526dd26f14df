"""Una edición como mucho una vez bajo DBOS: la intención en un paso, la edición en otro, y mirar antes.

Lección 08. DBOS ejecuta cada paso al menos una vez: si el proceso muere después de que `editar`
cambie el fichero y antes de que DBOS guarde la salida del paso, al recuperar el paso se ejecuta
entero otra vez, y una edición que añade texto lo añade dos veces. DBOS no puede saberlo: el
fichero no está en su base.

La idea de la lección 06, con DBOS debajo. En vez de la tabla `llamadas`, dos pasos:

1. `intencion_de_editar`: ensaya la edición en una copia del fichero (un borrador) y devuelve la
   huella de ANTES, la de DESPUÉS y la observación que dará. DBOS guarda esa salida: es la fila de
   intención, en la base del sistema;
2. `aplicar_edicion`: con la intención ya guardada, MIRA PRIMERO el fichero (`aplicar_una_vez`):
   con la huella de antes, edita; con la de después, la edición ya se hizo antes de una caída y
   devuelve la observación esperada sin tocar nada; con otra, alguien más lo cambió, y no se toca.

Si el proceso muere en el paso 1, se repite el ensayo: no ha cambiado nada. Si muere en el 2, antes
o después de editar, el paso 2 se repite y mira el fichero antes de hacer nada. La salida guardada
del paso 1 no cambia al recuperar: por eso la huella de antes es la de antes de la primera vez.
"""
import shutil

from dbos import DBOS

import herramientas
import motor
from efectos import BORRADOR, huella, se_ejecutaria
from entorno import resultado
from permisos import atender


def ensayar(entorno, llamada, borrador):
    """{"antes", "despues", "esperado"} de editar `llamada` en `entorno`, sin tocarlo: la edición
    se hace sobre una copia del fichero en la carpeta `borrador`, que se borra antes y después. Si
    falla en el borrador (antiguo no aparece...), fallará igual de verdad sin cambiar nada:
    `despues` y `esperado` son None.

    El borrador tiene un sitio fijo, en la carpeta de la ejecución (como en la lección 06): un
    proceso que muere a mitad del ensayo lo deja ahí, y el siguiente lo borra al empezar. Una
    carpeta temporal nueva en cada ensayo se quedaría para siempre en la del sistema."""
    ruta = llamada["input"]["ruta"]
    fichero = herramientas.dentro(entorno, ruta)
    despues = esperado = None
    shutil.rmtree(borrador, ignore_errors=True)
    if fichero.is_file():
        copia = herramientas.dentro(borrador, ruta)
        copia.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fichero, copia)
        try:
            esperado = herramientas.editar(borrador, **llamada["input"])
            despues = huella(copia)
        except herramientas.ErrorDeHerramienta:
            pass
        shutil.rmtree(borrador, ignore_errors=True)
    return {"antes": huella(fichero), "despues": despues, "esperado": esperado}


def aplicar_una_vez(entorno, llamada, intencion, usuario):
    """La observación de la edición `llamada` en `entorno`, con su `intencion` (de `ensayar`) ya
    guardada: mira el fichero antes de editar, y nunca edita dos veces.

    - la huella del fichero es la de antes (o la intención no tiene esperado: la edición falla sin
      cambiar nada): se edita con `permisos.atender`, como siempre;
    - es la de después: ya se editó antes de una caída; la observación es la esperada;
    - es otra: alguien más cambió el fichero; no se toca, y la observación es un error que lo dice.
    """
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if intencion["esperado"] is None or ahora == intencion["antes"]:
        return atender(llamada, entorno, usuario)
    if ahora == intencion["despues"]:
        return resultado(llamada["id"], intencion["esperado"])
    return resultado(llamada["id"], f"{llamada['input']['ruta']} ha cambiado desde que se pidió esta "
                     "edición, y no se sabe por qué: no se ha tocado. Léelo otra vez antes de editarlo",
                     error=True)


def escritor(escritura):
    """El usuario que da permiso para editar las rutas de `escritura`, y nada más."""
    def usuario(nombre, entrada):
        return nombre == "editar" and entrada.get("ruta") in escritura
    return usuario


@DBOS.step()
def intencion_de_editar(llamada, carpeta):
    """El paso 1: la intención (ver `ensayar`), guardada por DBOS antes de editar."""
    return ensayar(motor.CARPETA / carpeta, llamada, motor.CARPETA / BORRADOR)


@DBOS.step()
def aplicar_edicion(llamada, carpeta, escritura, intencion):
    """El paso 2: la edición, mirando antes el fichero (ver `aplicar_una_vez`)."""
    return aplicar_una_vez(motor.CARPETA / carpeta, llamada, intencion, escritor(escritura))


def editar_como_mucho_una_vez(llamada, carpeta, escritura):
    """Dentro de un workflow: los dos pasos, uno tras otro. Devuelve la observación."""
    return aplicar_edicion(llamada, carpeta, escritura, intencion_de_editar(llamada, carpeta))


def es_una_edicion(llamada, escritura):
    """¿Es `llamada` una edición que `permisos.atender` llegaría a hacer? (Con los argumentos mal
    o sin permiso contesta un error sin tocar nada: esa va en un paso normal.)"""
    return llamada.get("name") == "editar" and se_ejecutaria(llamada, escritor(escritura))
