"""Las herramientas del agente, siempre dentro de la copia de trabajo: leer, editar y ejecutar.

Lección 01. Cada una recibe la carpeta de la copia (`entorno`) y lo que pidió el modelo, y
devuelve el texto de la observación. Si algo no se puede hacer, lanza `ErrorDeHerramienta` con un
mensaje que el modelo pueda usar para corregirse: la observación llevará `is_error: true`.

Lección 03. `leer` devuelve como mucho LIMITE_LECTURA caracteres de una vez: una observación
más grande que la reserva del turno no la arregla ninguna compactación.
"""
import os
import re
from pathlib import Path

from procesos import correr

LIMITE_SALIDA = 6000  # caracteres de salida de una orden; lo que pase se corta con un aviso
ESPERA_ORDEN = 60  # segundos que puede durar una orden antes de cortarla

LIMITE_LECTURA = 6000  # caracteres que devuelve leer de una vez; el resto, en otras lecturas (`desde`)


class ErrorDeHerramienta(Exception):
    """Una herramienta que no ha podido hacer lo que se le pedía; el mensaje es para el modelo."""


# --- Rutas: siempre dentro de la copia ---------------------------------------------------------

def dentro(entorno, ruta):
    """La ruta absoluta de `ruta` dentro de la copia, ya sin enlaces, o ErrorDeHerramienta si sale."""
    base = Path(entorno).resolve()
    try:
        destino = (base / ruta).resolve()
    except RuntimeError:  # así avisan Python 3.11 y 3.12 de un enlace que acaba apuntando a sí mismo
        raise ErrorDeHerramienta(f"la ruta {ruta} pasa por un bucle de enlaces: no lleva a ningún "
                                 "fichero") from None
    if Path(ruta).is_absolute() or not destino.is_relative_to(base):
        raise ErrorDeHerramienta(f"la ruta {ruta} sale de la copia de trabajo: usa una ruta "
                                 "relativa dentro de ella, p. ej. compra.py")
    return destino


def como_texto(datos, ruta):
    """Los bytes de un fichero como texto, tal cual: sus saltos de línea (\\n, \\r\\n o \\r) no se tocan."""
    try:
        return datos.decode("utf-8")
    except UnicodeDecodeError:
        raise ErrorDeHerramienta(f"{ruta} no es un fichero de texto: leer solo abre texto") from None


def contenido(entorno, ruta):
    """El texto exacto de un fichero corriente de la copia (ni una carpeta ni una tubería, que dejaría
    esperando), o ErrorDeHerramienta si no existe o no es texto."""
    fichero = dentro(entorno, ruta)
    if not fichero.is_file():
        hay = ", ".join(sorted(p.name for p in Path(entorno).resolve().iterdir() if p.is_file()))
        raise ErrorDeHerramienta(f"no existe el fichero {ruta} en la copia de trabajo. Hay: {hay}")
    return como_texto(fichero.read_bytes(), ruta)


# --- Las herramientas --------------------------------------------------------------------------

def leer(entorno, ruta, desde=1):
    """El fichero `ruta` byte a byte (también sus \\r, si los tiene), desde su línea `desde` (la
    primera es la 1) hasta el final... o hasta donde quepa.

    Lo que se devuelve de una vez no pasa de LIMITE_LECTURA caracteres: si no cabe, van las
    líneas enteras que caben (o, si la primera ya no cabe sola, su principio) y una nota al final
    que dice qué líneas son y con qué `desde` pedir las siguientes. Un fichero que cabe entero se
    devuelve entero, sin nota.
    """
    if desde < 1:
        raise ErrorDeHerramienta(f"desde cuenta líneas y la primera es la 1, no {desde}: pide, por "
                                 "ejemplo, desde=1")
    texto = contenido(entorno, ruta)
    lineas = [m.group(0) for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", texto)]
    if desde > max(len(lineas), 1):
        raise ErrorDeHerramienta(f"{ruta} tiene {len(lineas)} líneas: no hay línea {desde}")
    trozo, dadas = "", 0
    for linea in lineas[desde - 1:]:
        if len(trozo) + len(linea) > LIMITE_LECTURA:
            break
        trozo, dadas = trozo + linea, dadas + 1
    if desde == 1 and dadas == len(lineas):
        return trozo  # el fichero entero, sin nota
    if dadas == 0:  # la línea `desde`, sola, ya no cabe: va su principio
        larga = lineas[desde - 1]
        trozo, dadas = larga[:LIMITE_LECTURA], 1
        nota = (f"[… la línea {desde} de {ruta} tiene {len(larga)} caracteres, más de los "
                f"{LIMITE_LECTURA} que leer devuelve de una vez: arriba van los primeros")
    else:
        nota = f"[… leídas las líneas {desde} a {desde + dadas - 1} de las {len(lineas)} de {ruta}"
    siguiente = desde + dadas
    nota += (f". Para seguir, pide leer con desde={siguiente}]" if siguiente <= len(lineas)
             else ": hasta el final]")
    return trozo + ("" if trozo.endswith(("\n", "\r")) else "\n") + nota


def editar(entorno, ruta, antiguo, nuevo):
    """Cambia la única aparición de `antiguo` en `ruta` por `nuevo`; el resto queda byte a byte igual.

    Se escribe en su sitio (la lección 06, donde una caída a mitad importa, lo cambia de una vez).
    """
    texto = contenido(entorno, ruta)
    veces = texto.count(antiguo) if antiguo else 0
    if veces == 0:
        raise ErrorDeHerramienta(f"antiguo no aparece en {ruta}: cópialo tal cual del fichero. "
                                 "No se ha cambiado nada")
    if veces > 1:
        raise ErrorDeHerramienta(f"antiguo aparece {veces} veces en {ruta}: alárgalo hasta que "
                                 "sea único. No se ha cambiado nada")
    try:  # codificar antes de escribir: si no se puede, el fichero queda como estaba
        datos = texto.replace(antiguo, nuevo).encode("utf-8")
    except UnicodeEncodeError:
        raise ErrorDeHerramienta("nuevo lleva caracteres que no se pueden guardar en UTF-8 "
                                 "(medio par sustituto): quítalos. No se ha cambiado nada") from None
    dentro(entorno, ruta).write_bytes(datos)
    return f"editado {ruta}: una sustitución"


def ejecutar(entorno, comando):
    """Ejecuta `comando` con la shell en la copia: su código de salida y su salida, cortada si es larga.

    Las rutas de la copia salen relativas (`File "compra.py"`): el modelo no necesita saber dónde
    está la copia, y así la salida no depende de dónde se haya hecho la copia.
    """
    prefijo = str(Path(entorno).resolve()) + os.sep
    # Se guarda un poco más que el límite: una ruta de la copia partida por el corte no se quitaría.
    codigo, salida, sobran = correr(comando, entorno, ESPERA_ORDEN, LIMITE_SALIDA + len(prefijo))
    if codigo is None:
        raise ErrorDeHerramienta(f"la orden no terminó en {ESPERA_ORDEN} s y se ha cortado: "
                                 "prueba con una que termine sola")
    salida = salida.replace(prefijo, "")
    sobran += max(0, len(salida) - LIMITE_SALIDA)
    if sobran:
        salida = salida[:LIMITE_SALIDA] + f"\n[… salida cortada: {sobran} caracteres más]"
    return f"código de salida {codigo}\n{salida}"
