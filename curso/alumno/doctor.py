"""Para el alumno (`python -m curso doctor`): comprueba que su máquina tiene lo que el curso necesita.

Lo usa la lección 00 y se ejecuta también con `python -m curso doctor`. Imprime una línea por
comprobación, con ✔ (bien), ✘ (falta algo obligatorio, y qué hacer) o · (opcional o solo
informativo). El informe se puede pegar tal cual en una incidencia: no lleva horas ni rutas
temporales, y las rutas del repositorio van relativas a él.

PostgreSQL (la lección 07) se comprueba de verdad: con CURSO_POSTGRES, conectando a ese servidor;
si no, arrancando uno de usar y tirar como hará la lección (initdb, pg_ctl start, una conexión) y
parándolo, un par de segundos. Solo dice «Todo listo» si también eso va bien. DBOS (la lección 08),
igual: se lanza en otro proceso con la configuración del curso y su base en SQLite, y se mira que
no abra ningún socket de red.

`revisar()` hace las comprobaciones y devuelve datos; `informe()` las convierte en texto y
`codigo()` en el código de salida (1 si falla algo obligatorio), para probar la lógica con
resultados inventados.
"""
import importlib.metadata
import os
import platform
import re
import socket
import sqlite3
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from curso import rutas

PYTHON_MINIMO = (3, 11)
EXTENSION_WIDGETS = "@jupyter-widgets/jupyterlab-manager"
CHROMIUM = Path("/usr/bin/chromium")  # el del paquete `chromium` de Debian, el que usa el test del navegador

INSTALAR_REQUISITOS = "python -m pip install -r requirements.txt"

BIEN, MAL, OPCIONAL = "✔", "✘", "·"


@dataclass(frozen=True)
class Revision:
    """El resultado de una comprobación."""
    nombre: str
    bien: bool
    detalle: str = ""
    remedio: str = ""          # qué hacer si no está bien
    obligatoria: bool = True   # si no lo es, un fallo se marca con · y no cambia el código de salida

    @property
    def marca(self):
        if self.bien:
            return BIEN
        return MAL if self.obligatoria else OPCIONAL


# ---------------------------------------------------------------- cada comprobación


def revisar_python():
    version = ".".join(map(str, sys.version_info[:3]))
    entorno = "en un entorno virtual" if sys.prefix != sys.base_prefix else "sin entorno virtual"
    minimo = ".".join(map(str, PYTHON_MINIMO))
    if sys.version_info[:2] >= PYTHON_MINIMO:
        return Revision("Python", True, f"{version} ({entorno})")
    return Revision("Python", False, f"{version}; el curso necesita {minimo} o más",
                    f"instala Python {minimo} o más y crea con él el entorno virtual")


def leer_requisitos(texto):
    """[(nombre, operador, versión)] de las líneas `nombre==versión` y `nombre>=versión` de un
    requirements.txt; se salta comentarios, líneas vacías y opciones como `-e .`."""
    requisitos = []
    for linea in texto.splitlines():
        linea = linea.split("#", 1)[0].strip()
        if not linea or linea.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*(==|>=)\s*([^\s;,]+)", linea)
        if m:
            requisitos.append(m.groups())
    return requisitos


def _tupla(version):
    """'4.6.6' → (4, 6, 6); se queda con la parte numérica del principio de cada trozo."""
    partes = []
    for trozo in version.split("."):
        m = re.match(r"\d+", trozo)
        if not m:
            break
        partes.append(int(m.group()))
    return tuple(partes)


def cumple(instalada, operador, pedida):
    """Si la versión `instalada` satisface `operador pedida` (== o >=)."""
    if operador == "==":
        return instalada == pedida or (_tupla(instalada) == _tupla(pedida) != ())
    return _tupla(instalada) >= _tupla(pedida)


def revisar_requisitos(texto=None):
    """Una Revision por paquete de requirements.txt, con la versión instalada."""
    if texto is None:
        try:
            texto = (rutas.RAIZ / "requirements.txt").read_text(encoding="utf-8")
        except OSError:
            return [Revision("requirements.txt", False, "no lo encuentro en el repositorio",
                             "ejecuta el doctor desde una copia completa del repositorio")]
    revisiones = []
    for nombre, operador, pedida in leer_requisitos(texto):
        try:
            instalada = importlib.metadata.version(nombre)
        except importlib.metadata.PackageNotFoundError:
            revisiones.append(Revision(nombre, False, f"no está instalado (se pide {operador}{pedida})",
                                       INSTALAR_REQUISITOS))
            continue
        if cumple(instalada, operador, pedida):
            revisiones.append(Revision(nombre, True, instalada))
        else:
            revisiones.append(Revision(nombre, False, f"hay {instalada}, se pide {operador}{pedida}",
                                       INSTALAR_REQUISITOS))
    return revisiones


def revisar_sqlite():
    """La versión de la biblioteca SQLite y si admite el modo WAL en un fichero de verdad."""
    version = sqlite3.sqlite_version
    try:
        with tempfile.TemporaryDirectory() as carpeta:
            conexion = sqlite3.connect(Path(carpeta) / "prueba.db", isolation_level=None)
            try:
                modo = conexion.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            finally:
                conexion.close()
    except sqlite3.Error as error:
        return Revision("SQLite", False, f"{version}; no se pudo abrir una base de datos: {error}",
                        "comprueba que se puede escribir en la carpeta temporal del sistema")
    if str(modo).lower() == "wal":
        return Revision("SQLite", True, f"{version}, con modo WAL")
    return Revision("SQLite", False, f"{version}; no admite el modo WAL (devolvió {modo!r})",
                    "usa un Python cuyo módulo sqlite3 traiga una SQLite con WAL (3.7 o más)")


def revisar_nucleo():
    """Si Jupyter tiene un núcleo `python3` con el que ejecutar los cuadernos."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from jupyter_client.kernelspec import find_kernel_specs
            nucleos = find_kernel_specs()
    except Exception as error:  # noqa: BLE001 — cualquier fallo aquí es «no hay núcleo»
        return Revision("núcleo de Jupyter", False, f"no se pudo consultar ({type(error).__name__})",
                        INSTALAR_REQUISITOS)
    if "python3" in nucleos:
        return Revision("núcleo de Jupyter", True, "python3")
    return Revision("núcleo de Jupyter", False,
                    f"no hay núcleo python3 (hay: {', '.join(sorted(nucleos)) or 'ninguno'})",
                    "python -m ipykernel install --user")


def _carpetas_de_extensiones():
    carpetas = [Path(sys.prefix) / "share" / "jupyter" / "labextensions"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from jupyter_core.paths import jupyter_path
            carpetas += [Path(c) for c in jupyter_path("labextensions")]
    except Exception:  # noqa: BLE001 — sin jupyter_core solo miramos sys.prefix
        pass
    return carpetas


def revisar_extension_widgets():
    """Si JupyterLab tiene la extensión que dibuja los widgets (la instala ipywidgets)."""
    for carpeta in _carpetas_de_extensiones():
        if (carpeta / EXTENSION_WIDGETS).is_dir():
            return Revision("widgets en JupyterLab", True, EXTENSION_WIDGETS)
    return Revision("widgets en JupyterLab", False,
                    f"no encuentro la extensión {EXTENSION_WIDGETS}; los explorables no se verán",
                    INSTALAR_REQUISITOS + " (ipywidgets la trae) y reinicia JupyterLab")


def revisar_puerto():
    """Si se puede abrir un puerto en 127.0.0.1, donde escucha el servidor de ensayo."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as enchufe:
            enchufe.bind(("127.0.0.1", 0))
    except OSError as error:
        return Revision("puerto en 127.0.0.1", False, f"no se pudo abrir ninguno: {error.strerror or error}",
                        "el servidor de ensayo necesita escuchar en 127.0.0.1; revisa el cortafuegos "
                        "o los permisos del contenedor")
    return Revision("puerto en 127.0.0.1", True, "se puede abrir uno libre")


def revisar_chromium(ruta=CHROMIUM):
    """Chromium para el test del navegador: opcional para seguir el curso."""
    if Path(ruta).is_file():
        return Revision("Chromium", True, str(ruta), obligatoria=False)
    return Revision("Chromium", False, f"no está en {ruta}; solo lo necesita el test del navegador",
                    "apt-get install chromium", obligatoria=False)


POSTGRES = "PostgreSQL (lección 07)"


def revisar_postgres():
    """Que la lección 07 tendrá un servidor: el de CURSO_POSTGRES, que conteste; o, si no hay, uno
    de usar y tirar que arranque, acepte una conexión y se pare sin dejar nada."""
    from curso.postgres import cluster as postgres
    propia = os.environ.get(postgres.VARIABLE_DE_CONEXION)
    try:
        import psycopg
    except ImportError:
        return Revision(POSTGRES, False, "falta psycopg, el paquete con el que Python habla con él",
                        INSTALAR_REQUISITOS)
    if propia:
        try:
            with psycopg.connect(propia, connect_timeout=10) as conexion:
                version = conexion.execute("SHOW server_version").fetchone()[0]
        except psycopg.Error as error:
            return Revision(POSTGRES, False, f"el servidor de {postgres.VARIABLE_DE_CONEXION} no contesta: "
                                             f"{str(error).strip().splitlines()[0]}",
                            f"revisa la cadena de {postgres.VARIABLE_DE_CONEXION}, o quítala y la lección "
                            "arrancará un servidor de usar y tirar")
        return Revision(POSTGRES, True, f"{version}, el servidor de {postgres.VARIABLE_DE_CONEXION}")
    try:
        with postgres.ClusterTemporal() as cluster:
            with psycopg.connect(cluster.conexion, connect_timeout=10) as conexion:
                version = conexion.execute("SHOW server_version").fetchone()[0]
            programas = cluster._programas
    except postgres.FaltaPostgres as error:
        primera, _, resto = str(error).partition("\n")
        return Revision(POSTGRES, False, primera, resto.replace("\n", "\n      "))
    except (RuntimeError, OSError, psycopg.Error) as error:
        return Revision(POSTGRES, False, f"no arranca: {str(error).strip().splitlines()[0]}",
                        "python -m curso postgres lo intenta y enseña lo que dice el servidor")
    return Revision(POSTGRES, True, f"{version}: arranca uno de usar y tirar ({programas}) y se para sin dejar nada")


DBOS = "DBOS (lección 08)"


def revisar_dbos():
    """Que la lección 08 podrá lanzar DBOS: en otro proceso, con `motor.py` del punto de control 08 y
    su base del sistema en un SQLite temporal, sin abrir ningún socket de red."""
    import subprocess
    try:
        version = importlib.metadata.version("dbos")
    except importlib.metadata.PackageNotFoundError:
        return Revision(DBOS, False, "falta el paquete dbos", INSTALAR_REQUISITOS)
    from curso.material import dbos_08
    try:
        red = dbos_08.sin_red(rutas.PUNTOS / "08_dbos")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        return Revision(DBOS, False, f"no se lanza: {str(error).strip().splitlines()[-1]}", INSTALAR_REQUISITOS)
    if red["sockets_de_red"]:
        return Revision(DBOS, False, f"{version} se lanza, pero abre {red['sockets_de_red']} sockets de red",
                        "el curso va sin red: mira la configuración de motor.py (checkpoints/08_dbos)")
    sin_red = "sin abrir ningún socket de red" if red["sockets_de_red"] == 0 else "(los sockets no se cuentan fuera de Linux)"
    return Revision(DBOS, True, f"{version}: se lanza con su base en SQLite, {sin_red}")


MODELO = "modelo de verdad (opcional)"


def revisar_modelo():
    """Si `python -m curso modelo` tiene ya el modelo y llama-server (sin instalar ni arrancar nada)."""
    from curso.modelo import instalar
    listo, detalle = instalar.estado()
    return Revision(MODELO, listo, detalle, "python -m curso modelo (solo si quieres un modelo de verdad)",
                    obligatoria=False)


def revisar_espacio():
    """Dónde está tu espacio de trabajo y si ya existe (lo crea la lección 00)."""
    from curso.alumno.puntos import describir_espacio
    espacio = rutas.espacio()
    if espacio.is_dir():
        return Revision("tu espacio", True, describir_espacio(espacio), obligatoria=False)
    return Revision("tu espacio", False, f"{describir_espacio(espacio)}, todavía no existe",
                    "se crea al empezar la lección 00, o con: python -m curso restaurar 0",
                    obligatoria=False)


def revisar_plataforma():
    return Revision("plataforma", True, f"{platform.system()} {platform.release()} ({platform.machine()})")


def revisar():
    """Todas las comprobaciones, en el orden en que se imprimen."""
    return [revisar_python(), *revisar_requisitos(), revisar_sqlite(), revisar_nucleo(),
            revisar_extension_widgets(), revisar_puerto(), revisar_postgres(), revisar_dbos(), revisar_chromium(),
            revisar_modelo(),
            revisar_espacio(), revisar_plataforma()]


# ---------------------------------------------------------------- el informe


def codigo(revisiones):
    """1 si falla alguna comprobación obligatoria, 0 si no."""
    return int(any(not r.bien and r.obligatoria for r in revisiones))


def informe(revisiones):
    """El informe en texto: una línea por comprobación y un veredicto al final."""
    lineas = ["Doctor del curso «Construye tu agente»"]
    for r in revisiones:
        linea = f"{r.marca} {r.nombre}: {r.detalle}" if r.detalle else f"{r.marca} {r.nombre}"
        if not r.bien and r.remedio:
            linea += f"\n    → {r.remedio}"
        lineas.append(linea)
    fallos = sum(1 for r in revisiones if not r.bien and r.obligatoria)
    solo_postgres = fallos == 1 and any(r.nombre == POSTGRES and not r.bien for r in revisiones)
    if solo_postgres:
        lineas.append(f"Listo para las lecciones 00 a 06, y la 08 en SQLite; para la 07 (y los varios procesos "
                      f"de la 08) falta PostgreSQL ({MAL}): haz lo que indica su flecha y vuelve a ejecutar: "
                      "python -m curso doctor")
    elif fallos:
        cuantas = "1 comprobación obligatoria falla" if fallos == 1 else \
            f"{fallos} comprobaciones obligatorias fallan"
        lineas.append(f"Falta algo: {cuantas} ({MAL}). Haz lo que indica la flecha y vuelve a "
                      "ejecutar: python -m curso doctor")
    else:
        lineas.append("Todo listo para seguir el curso.")
    return "\n".join(lineas)


def main(breve=False):
    """Comprueba el entorno e imprime el informe (solo el veredicto si `breve`). Devuelve el
    código de salida: 0 si está todo lo obligatorio, 1 si no."""
    if not breve:  # lo único que tarda es PostgreSQL: que no parezca colgado
        print("Revisando tu máquina (arrancar un PostgreSQL y un DBOS de prueba lleva unos segundos)…",
              file=sys.stderr, flush=True)
    revisiones = revisar()
    texto = informe(revisiones)
    print(texto.splitlines()[-1] if breve and not codigo(revisiones) else texto)
    return codigo(revisiones)


# --- python -m curso doctor -------------------------------------------------------------------

def argumentos_doctor(analizador):
    analizador.description = ("Comprueba Python, los paquetes, SQLite, Jupyter y lo demás, y dice "
                              "qué hacer con lo que falte.")


def orden_doctor(args):
    return main()
