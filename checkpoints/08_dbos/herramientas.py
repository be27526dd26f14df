"""Las herramientas del agente, siempre dentro de la copia de trabajo: leer, editar y ejecutar.

Lección 01. Cada una recibe la carpeta de la copia (`entorno`) y lo que pidió el modelo, y
devuelve el texto de la observación. Si algo no se puede hacer, lanza `ErrorDeHerramienta` con un
mensaje que el modelo pueda usar para corregirse: la observación llevará `is_error: true`.

Lección 03. `leer` devuelve como mucho LIMITE_LECTURA caracteres de una vez: una observación
más grande que la reserva del turno no la arregla ninguna compactación.

Lección 05. Una cuarta, `buscar`: las líneas que coinciden con una expresión regular, con su
fichero y su número de línea, que es lo que un hijo cita como evidencia (`logs/api.log:7`).

Lección 06. `editar` cambia el fichero de una vez, y lo que se abre es lo que se comprobó.

Cambiar de una vez: el texto nuevo va a un fichero provisional de la misma carpeta, se lleva al
disco (fsync) y `os.replace` lo pone en lugar del viejo. Quien mire el fichero, y un proceso que
muera en cualquier punto, ven el de antes o el de después, nunca uno a medias (efectos.py decide
por esas dos huellas); y si no se puede escribir (un disco lleno), el de antes queda intacto.

Lo comprobado, abierto: `leer`, `buscar` y `editar` abren el fichero con `abrir`, parte a parte
desde la copia y sin pasar por ningún enlace, y no abren un fichero que tenga otros nombres (un
enlace duro) fuera de la copia.
"""
import errno
import os
import re
import stat
from pathlib import Path

from procesos import casan, correr

LIMITE_SALIDA = 6000  # caracteres de salida de una orden; lo que pase se corta con un aviso
ESPERA_ORDEN = 60  # segundos que puede durar una orden antes de cortarla

LIMITE_LECTURA = 6000  # caracteres que devuelve leer de una vez; el resto, en otras lecturas (`desde`)

LIMITE_COINCIDENCIAS = 40  # líneas que devuelve buscar; de las demás solo se dice cuántas son
LARGO_DE_COINCIDENCIA = 200  # caracteres de cada línea encontrada: un registro puede tener líneas enormes
ESPERA_BUSQUEDA = 10  # segundos que puede tardar buscar: hay patrones que no acaban nunca


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
    """El texto exacto de un fichero de la copia, o ErrorDeHerramienta si no existe o no es texto."""
    with abrir(entorno, ruta) as fichero:
        return como_texto(fichero.read(), ruta)


def abrir(entorno, ruta):
    """El fichero `ruta` de la copia, abierto en binario para leerlo.

    `dentro` comprueba la ruta por su nombre. Abrirla después por ese mismo nombre dejaría un
    hueco: entre la comprobación y la apertura, alguien podría cambiar una carpeta del camino por
    un enlace que lleve fuera de la copia. Por eso se abre paso a paso desde la carpeta de la
    copia, una parte de la ruta ya comprobada cada vez, con O_NOFOLLOW, que se niega a pasar por
    un enlace: lo que se abre es lo que se comprobó. (O_NONBLOCK: que una tubería con nombre no
    deje esperando a la herramienta.)
    """
    carpeta, _, fd = abrir_con_su_carpeta(entorno, ruta)
    os.close(carpeta)
    return open(fd, "rb")


def abrir_con_su_carpeta(entorno, ruta):
    """(la carpeta, el nombre, el fichero) de `ruta`: dos descriptores abiertos paso a paso como
    dice `abrir`, el de su carpeta y el del fichero, y el nombre del fichero en esa carpeta.
    Quien llama cierra los dos."""
    base = Path(entorno).resolve()
    partes = dentro(entorno, ruta).relative_to(base).parts
    carpeta = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    fd = None
    try:
        for parte in partes[:-1]:
            siguiente = os.open(parte, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=carpeta)
            os.close(carpeta)
            carpeta = siguiente
        if not partes:  # la copia misma
            raise IsADirectoryError(errno.EISDIR, "no es un fichero")
        fd = os.open(partes[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=carpeta)
        estado = os.fstat(fd)
        if not stat.S_ISREG(estado.st_mode):
            raise IsADirectoryError(errno.EISDIR, "no es un fichero")
        if estado.st_nlink > 1 and nombres_dentro(base, estado) < estado.st_nlink:
            raise ErrorDeHerramienta(f"{ruta} tiene otros nombres fuera de la copia de trabajo (es un "
                                     "enlace duro): abrirlo sería leer o cambiar un fichero de fuera. "
                                     "No se ha abierto")
    except (OSError, ErrorDeHerramienta) as e:
        for abierto in (fd, carpeta):
            if abierto is not None:
                os.close(abierto)
        if isinstance(e, ErrorDeHerramienta):
            raise
        if e.errno == errno.ELOOP:
            raise ErrorDeHerramienta(f"la ruta {ruta} pasa por un enlace que no se puede seguir (un "
                                     "bucle de enlaces, o un enlace que ha aparecido mientras se "
                                     "abría). No se ha cambiado nada") from None
        if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR):
            hay = ", ".join(sorted(p.name for p in base.iterdir() if p.is_file()))
            raise ErrorDeHerramienta(f"no existe el fichero {ruta} en la copia de trabajo. "
                                     f"Hay: {hay}") from None
        raise
    return carpeta, partes[-1], fd


def nombres_dentro(base, estado):
    """Cuántos nombres de la copia llevan al fichero de `estado` (el mismo dispositivo e inodo).

    Un enlace duro es otro nombre del mismo fichero, y no se distingue del original: si el
    fichero tiene más nombres (`st_nlink`) de los que hay en la copia, alguno está fuera."""
    vistos = 0
    for carpeta, _, ficheros in os.walk(base):
        for nombre in ficheros:
            otro = os.lstat(os.path.join(carpeta, nombre))
            vistos += (otro.st_dev, otro.st_ino) == (estado.st_dev, estado.st_ino)
    return vistos


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

    El fichero no se reescribe en su sitio: el texto nuevo va a un fichero provisional de la
    misma carpeta, se lleva al disco (fsync) y `os.replace` lo pone en lugar del viejo de una
    vez. Quien mire el fichero, y un proceso que muera en cualquier punto, ven el de antes o el
    de después, nunca uno a medias; y si no se puede escribir (un disco lleno), el de antes queda
    intacto.
    """
    carpeta, nombre, fd = abrir_con_su_carpeta(entorno, ruta)
    try:
        with open(fd, "rb") as fichero:
            texto = como_texto(fichero.read(), ruta)
            modo = stat.S_IMODE(os.fstat(fichero.fileno()).st_mode)
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
        reemplazar(carpeta, nombre, datos, modo)
    finally:
        os.close(carpeta)
    return f"editado {ruta}: una sustitución"


def reemplazar(carpeta, nombre, datos, modo):
    """Pone `datos` como contenido del fichero `nombre` de la carpeta abierta `carpeta`, de una vez.

    El provisional tiene un nombre fijo para cada fichero: si un proceso murió antes de ponerlo en
    su sitio, la edición siguiente de ese fichero lo borra y lo vuelve a escribir."""
    provisional = f".{nombre}.editando"
    try:
        os.unlink(provisional, dir_fd=carpeta)
    except FileNotFoundError:
        pass
    fd = os.open(provisional, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=carpeta)
    try:
        with open(fd, "wb") as fichero:
            fichero.write(datos)
            fichero.flush()
            os.fchmod(fichero.fileno(), modo)  # los permisos del fichero de antes
            os.fsync(fichero.fileno())
        os.replace(provisional, nombre, src_dir_fd=carpeta, dst_dir_fd=carpeta)
    except BaseException:
        try:
            os.unlink(provisional, dir_fd=carpeta)
        except FileNotFoundError:
            pass
        raise
    os.fsync(carpeta)  # el cambio de nombre, también en el disco


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


def lineas(texto):
    """Las líneas de `texto` numeradas como las numera un editor: cortando en cada salto de línea,
    sea \\n, \\r\\n o \\r (no en los otros separadores de `splitlines`), y sin la línea vacía de
    después del último."""
    partes = re.split(r"\r\n|\r|\n", texto)
    if partes[-1] == "":
        partes.pop()
    return partes


def buscar(entorno, patron, ruta="."):
    """Las líneas de los ficheros de `ruta` (un fichero o una carpeta) en las que está `patron`.

    `patron` es una expresión regular de `re`, no un texto tal cual: así el modelo puede buscar
    varias cosas a la vez (`refused|reset`); un punto o un paréntesis se escapan (`\\.`). Cada
    coincidencia sale como `fichero:línea: texto`, con el fichero relativo a la copia y las
    líneas contadas desde 1, en orden de fichero y de línea. Los ficheros que no son texto, y
    los enlaces que apuntan fuera de la copia, se saltan. Pasadas LIMITE_COINCIDENCIAS líneas,
    un aviso dice cuántas faltan. Una búsqueda que tarda más de ESPERA_BUSQUEDA se corta.
    """
    try:
        re.compile(patron)
    except re.error as e:
        raise ErrorDeHerramienta(f"el patrón {patron!r} no es una expresión regular válida ({e}). "
                                 "Para buscar un texto tal cual, escapa con \\ los caracteres "
                                 ". * + ? ( ) [ ] { } | ^ $") from None
    except (OverflowError, RecursionError):
        raise ErrorDeHerramienta("el patrón es demasiado grande para `re`: repite algo demasiadas "
                                 "veces (como a{4294967296}) o anida demasiados grupos. "
                                 "Simplifícalo") from None
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
    textos = {}
    for fichero in ficheros:
        nombre = fichero.relative_to(base).as_posix()
        try:
            textos[nombre] = lineas(contenido(base, nombre))
        except ErrorDeHerramienta:
            continue  # no es texto, o es un enlace que sale de la copia: leer tampoco lo abriría
    nombres = list(textos)
    encontradas = []
    try:
        donde_casa = casan(patron, list(textos.values()), ESPERA_BUSQUEDA)
    except ValueError:
        raise ErrorDeHerramienta("la búsqueda ha fallado: prueba con un patrón más sencillo") from None
    if donde_casa is None:
        raise ErrorDeHerramienta(f"la búsqueda no terminó en {ESPERA_BUSQUEDA} s y se ha cortado: "
                                 "el patrón da demasiadas vueltas (como (a+)+, un grupo repetido "
                                 "dentro de otro). Simplifícalo")
    for i, numero in donde_casa:
        linea = textos[nombres[i]][numero - 1]
        if len(linea) > LARGO_DE_COINCIDENCIA:
            linea = linea[:LARGO_DE_COINCIDENCIA] + " […]"
        encontradas.append(f"{nombres[i]}:{numero}: {linea}")
    if not encontradas:
        return f"ninguna línea de {ruta} coincide con {patron!r}"
    sobran = len(encontradas) - LIMITE_COINCIDENCIAS
    if sobran > 0:
        encontradas = encontradas[:LIMITE_COINCIDENCIAS] + [
            f"[… y {sobran} líneas más: afina el patrón o la ruta]"]
    return "\n".join(encontradas)
