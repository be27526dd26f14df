"""Las herramientas del agente: leer, editar, ejecutar y buscar, siempre dentro de la copia de trabajo.

Lección 01. Cada una recibe la carpeta de la copia (`entorno`) y lo que pidió el modelo, y
devuelve el texto de la observación. Si algo no se puede hacer, lanza `ErrorDeHerramienta` con un
mensaje que el modelo pueda usar para corregirse: la observación llevará `is_error: true`.

Lección 05. `buscar`: las líneas que coinciden con una expresión regular, con su fichero y su
número de línea, que es lo que un hijo cita como evidencia (`logs/api.log:7`).
"""
import os
import re
import subprocess
from pathlib import Path

LIMITE_SALIDA = 6000  # caracteres de salida de una orden; lo que pase se corta con un aviso
ESPERA_ORDEN = 60  # segundos que puede durar una orden antes de cortarla
LIMITE_COINCIDENCIAS = 40  # líneas que devuelve buscar; de las demás sólo se dice cuántas son
LARGO_DE_COINCIDENCIA = 200  # caracteres de cada línea encontrada: un registro puede tener líneas enormes


class ErrorDeHerramienta(Exception):
    """Una herramienta que no ha podido hacer lo que se le pedía; el mensaje es para el modelo."""


def dentro(entorno, ruta):
    """La ruta absoluta de `ruta` dentro de la copia, o ErrorDeHerramienta si sale de ella."""
    base = Path(entorno).resolve()
    destino = (base / ruta).resolve()
    if Path(ruta).is_absolute() or not destino.is_relative_to(base):
        raise ErrorDeHerramienta(f"la ruta {ruta} sale de la copia de trabajo: usa una ruta "
                                 "relativa dentro de ella, p. ej. compra.py")
    return destino


def contenido(entorno, ruta):
    """El texto de un fichero de la copia, o ErrorDeHerramienta si no existe o no es texto."""
    fichero = dentro(entorno, ruta)
    if not fichero.is_file():
        hay = ", ".join(sorted(p.name for p in Path(entorno).iterdir() if p.is_file()))
        raise ErrorDeHerramienta(f"no existe el fichero {ruta} en la copia de trabajo. Hay: {hay}")
    try:
        return fichero.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ErrorDeHerramienta(f"{ruta} no es un fichero de texto: leer sólo abre texto") from None


def leer(entorno, ruta):
    """El contenido entero del fichero `ruta`."""
    return contenido(entorno, ruta)


def editar(entorno, ruta, antiguo, nuevo):
    """Cambia la única aparición de `antiguo` en `ruta` por `nuevo`."""
    texto = contenido(entorno, ruta)
    veces = texto.count(antiguo) if antiguo else 0
    if veces == 0:
        raise ErrorDeHerramienta(f"antiguo no aparece en {ruta}: cópialo tal cual del fichero. "
                                 "No se ha cambiado nada")
    if veces > 1:
        raise ErrorDeHerramienta(f"antiguo aparece {veces} veces en {ruta}: alárgalo hasta que "
                                 "sea único. No se ha cambiado nada")
    try:  # codificar antes de abrir el fichero: si no se puede, el fichero queda como estaba
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
    entorno_proceso = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        hecho = subprocess.run(comando, shell=True, cwd=entorno, env=entorno_proceso,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=ESPERA_ORDEN, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise ErrorDeHerramienta(f"la orden no terminó en {ESPERA_ORDEN} s y se ha cortado: "
                                 "prueba con una que termine sola") from None
    salida = hecho.stdout.replace(str(Path(entorno).resolve()) + os.sep, "")
    if len(salida) > LIMITE_SALIDA:
        sobran = len(salida) - LIMITE_SALIDA
        salida = salida[:LIMITE_SALIDA] + f"\n[… salida cortada: {sobran} caracteres más]"
    return f"código de salida {hecho.returncode}\n{salida}"


def lineas(texto):
    """Las líneas de `texto` numeradas como las numera un editor: cortando en cada salto de línea
    (no en los otros separadores de `splitlines`), y sin la línea vacía de después del último."""
    partes = texto.split("\n")
    if partes[-1] == "":
        partes.pop()
    return [parte.removesuffix("\r") for parte in partes]


def buscar(entorno, patron, ruta="."):
    """Las líneas de los ficheros de `ruta` (un fichero o una carpeta) en las que está `patron`.

    `patron` es una expresión regular de `re`, no un texto tal cual: así el modelo puede buscar
    varias cosas a la vez (`refused|reset`); un punto o un paréntesis se escapan (`\\.`). Cada
    coincidencia sale como `fichero:línea: texto`, con el fichero relativo a la copia y las
    líneas contadas desde 1, en orden de fichero y de línea. Los ficheros que no son texto, y
    los enlaces que apuntan fuera de la copia, se saltan. Pasadas LIMITE_COINCIDENCIAS líneas,
    un aviso dice cuántas faltan.
    """
    try:
        expresion = re.compile(patron)
    except re.error as e:
        raise ErrorDeHerramienta(f"el patrón {patron!r} no es una expresión regular válida ({e}). "
                                 "Para buscar un texto tal cual, escapa con \\ los caracteres "
                                 ". * + ? ( ) [ ] { } | ^ $") from None
    base = Path(entorno).resolve()
    donde = dentro(entorno, ruta)
    if donde.is_file():
        ficheros = [donde]
    elif donde.is_dir():
        ficheros = sorted((p for p in donde.rglob("*") if p.is_file() and "__pycache__" not in p.parts),
                          key=lambda p: p.relative_to(base).as_posix())
    else:
        raise ErrorDeHerramienta(f"no existe {ruta} en la copia de trabajo: busca en «.» para mirar "
                                 "en toda ella")
    encontradas = []
    for fichero in ficheros:
        if not fichero.resolve().is_relative_to(base):
            continue  # un enlace que apunta fuera de la copia: leer tampoco lo abriría
        try:
            texto = fichero.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        nombre = fichero.relative_to(base).as_posix()
        for numero, linea in enumerate(lineas(texto), 1):
            if expresion.search(linea):
                if len(linea) > LARGO_DE_COINCIDENCIA:
                    linea = linea[:LARGO_DE_COINCIDENCIA] + " […]"
                encontradas.append(f"{nombre}:{numero}: {linea}")
    if not encontradas:
        return f"ninguna línea de {ruta} coincide con {patron!r}"
    sobran = len(encontradas) - LIMITE_COINCIDENCIAS
    if sobran > 0:
        encontradas = encontradas[:LIMITE_COINCIDENCIAS] + [
            f"[… y {sobran} líneas más: afina el patrón o la ruta]"]
    return "\n".join(encontradas)
