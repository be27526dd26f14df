"""El agente: el inicio de M (prompt de sistema, fichero de proyecto y pedido) y una ejecución.

Lección 01. `agente` trabaja siempre sobre una copia temporal del proyecto, así que el proyecto
original (p. ej. recetario/, con sus tres errores) queda igual para la ejecución siguiente.

Lección 03. `agente` le pasa `compactar` al bucle. Y si una petición no cabe en la ventana ni
así (la compactación mira M antes de las observaciones del turno, y las de un turno pueden pasar
de su reserva: cada `leer` trae hasta LIMITE_LECTURA caracteres, cada `ejecutar` hasta
LIMITE_SALIDA, y un turno puede pedir varias), el agente para con el motivo "ventana", el aviso
del error como texto y M tal como iba, en vez de reventar.

Lección 03. El prompt dice lo que hace ahora `leer`.

Lección 03b. `agente` le pasa también `limpiar` al bucle, que limpia antes de compactar.
"""
import shutil
import tempfile
from pathlib import Path

from api import ErrorVentana
from bucle import bucle

SISTEMA = """Eres un agente de programación que trabaja en la copia de trabajo de un proyecto. \
Solo puedes actuar con las herramientas. Todo lo que sabes del proyecto es lo que está en esta \
conversación.

Cómo trabajas:
- Antes de editar un fichero, léelo (otra vez, si ha pasado tiempo desde la última lectura): \
editar solo funciona si copias el texto antiguo tal cual, con sus comillas, sus espacios y sus \
saltos de línea.
- Cambia lo mínimo que arregle el problema. No reescribas un fichero entero.
- Después de cambiar algo, ejecuta los tests para comprobarlo. No digas que algo funciona sin \
haberlo comprobado.
- Si una herramienta devuelve un error, lee el mensaje: dice qué ha fallado y qué hacer.
- Cuando hayas terminado, o si no puedes seguir, contesta solo con texto: un resumen breve de lo \
que has cambiado y de cómo ha quedado cada test.

Las herramientas (las rutas son relativas a la copia de trabajo; no puedes salir de ella):
- leer(ruta, desde) devuelve el fichero desde su línea desde (si no la das, la 1), como mucho \
6000 caracteres: si no cabe, una nota dice con qué desde seguir. No pide permiso.
- editar(ruta, antiguo, nuevo) cambia el texto antiguo, que tiene que aparecer exactamente una \
vez, por el nuevo; si no, no cambia nada y lo dice. Cita solo las líneas que cambian y alguna \
de alrededor si hace falta para que sea único. Pide permiso.
- ejecutar(comando) ejecuta una orden de la shell en la copia de trabajo y devuelve su código de \
salida y lo que escribió. Una orden que pasa de 60 s se corta; de su salida llegan como mucho \
6000 caracteres. Pide permiso.

Lo que pide permiso se le pregunta al usuario. Si lo deniega, no lo intentes de otra manera: \
explica qué querías hacer y por qué.

El fichero de proyecto, AGENTE.md, dice qué es el proyecto y cómo se ejecutan sus tests:

"""
FICHERO_DE_PROYECTO = "AGENTE.md"


def inicio(pedido, proyecto):
    """El principio de M: el prompt de sistema con el fichero de proyecto, y el pedido."""
    ficha = Path(proyecto) / FICHERO_DE_PROYECTO
    guia = ficha.read_text(encoding="utf-8") if ficha.exists() else "(este proyecto no tiene AGENTE.md)"
    return [("sistema", SISTEMA + guia), ("usuario", pedido)]


def agente(modelo, pedido, proyecto, tope=10, usuario=None, compactar=None, *, conservar=False,
           limpiar=None):
    """Corre el bucle sobre una copia temporal de `proyecto`: (motivo, texto, M, copia).

    La copia está en una carpeta `agente-…` de la carpeta temporal del sistema. Al terminar se
    borra y `copia` es None; con `conservar=True` se queda, `copia` es su ruta, y quien la pidió
    la borra cuando ya no la necesite (`shutil.rmtree(copia.parent)`). Si algo falla a medias,
    se borra siempre: nadie sabría dónde estaba.
    """
    carpeta = Path(tempfile.mkdtemp(prefix="agente-"))
    copia = carpeta / Path(proyecto).name
    try:
        shutil.copytree(proyecto, copia, ignore=shutil.ignore_patterns("__pycache__"))
        motivo, texto, M = bucle(modelo, inicio(pedido, copia), copia, tope, usuario, compactar, limpiar)
    except ErrorVentana as e:  # no cabe ni compactando: se para aquí, sin perder M
        motivo, texto, M = "ventana", str(e), e.M
    except BaseException:
        shutil.rmtree(carpeta, ignore_errors=True)
        raise
    if not conservar:
        shutil.rmtree(carpeta, ignore_errors=True)
        copia = None
    return motivo, texto, M, copia
