"""Todo junto: el incidente de la lección 05, con un padre y dos hijos, en una ejecución durable.

Lección 06. `preparar(carpeta, proyecto)` deja en `carpeta` todo lo que la ejecución necesita:

- `copia/`: la copia de trabajo del proyecto, donde actúan las herramientas;
- `todo_junto.db`: la base, con el padre «incidente» esperando a dos hijos y los tres agentes
  (ver registro.py). El hijo «logs» es el de la lección 05, de solo lectura, en su vista. El hijo
  «config» investiga la configuración y además ESCRIBE: anota en README.md el puerto de la base.
  El encargo de la lección 05 solo delega leer y buscar, y así sigue: editar ese fichero, y solo
  ese, es un permiso aparte que el padre le da y que la base guarda (`agentes.escritura`).

Preparar es atómico: todo se construye con nombres provisionales y se renombra al final. Después,
`reanudar.reanudar(carpeta / "todo_junto.db")` la lleva hasta el final, la primera vez y tras
cada caída. Desde una terminal:

    python todo_junto.py preparar CARPETA --proyecto RUTA
    python todo_junto.py reanudar CARPETA/todo_junto.db [--url URL]

RUTA es el proyecto del incidente (en el curso, curso/material/datos/incidente), y URL la del
servidor del modelo (sin ella, la de ANTHROPIC_BASE_URL o la del servidor de ensayo).
"""
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import buzon
import historial
import pasos
import registro
from api import ErrorDelModelo
from correr import Analizador
from encargos import encargo
from hijos import SISTEMA_DE_HIJO, pedido
from reanudar import NoSePuede, SinSitio, reanudar
from reintentos import CUERPO_S, DE_LA_RED, ModeloConReintentos

PADRE = "incidente"
PEDIDO = ("La API de la tienda contesta 503 a todo desde el despliegue de las 09:11. Averigua por "
          "qué con la ayuda de dos hijos y escribe el informe.")
SISTEMA_DE_PADRE = """Eres el agente que coordina la investigación de un incidente. Has repartido \
el trabajo entre tus hijos, y el harness ha comprobado lo que entregan contra los ficheros. Con eso, \
escribe el informe: la causa probable, lo comprobado con su referencia y lo que queda por \
comprobar. No des por comprobado nada que el harness no haya comprobado."""
ESCRITURA_DEL_HIJO_CONFIG = ["README.md"]
PERMISO_DE_ESCRITURA = """

Además de mirar, tu padre te deja editar estos ficheros, y solo estos: {rutas}. Edita lo mínimo."""
# Bajo A PROPÓSITO: con el UMBRAL de compactar.py (4096) ningún agente de esta ejecución corta
# llegaría a compactar, y la lección quiere ver una compactación durable que sobrevive a caídas.
UMBRAL_DEL_SIMULACRO = 1000
# Los códigos de salida de `reanudar` (el 2 es el de argparse: argumentos que no valen). 1, «no se
# puede»: volver a lanzar la misma orden no cambiará nada (no es una base de esta lección, ya
# terminó, otro proceso la está reanudando). 3, «a medias»: lo hecho está guardado y la misma orden
# seguirá donde se quedó cuando se arregle lo de fuera (el modelo no contesta, el disco está lleno).
CODIGO_NO_SE_PUEDE, CODIGO_A_MEDIAS = 1, 3


def encargos():
    """{hijo: encargo}: el de los registros, el mismo que en la lección 05, y el de la configuración
    que anota."""
    return {
        "logs": encargo("Averigua adónde intenta conectar la API y cómo falla, según sus registros.",
                        ["logs/"]),
        "config": encargo(
            "Averigua en qué puerto escucha la base de datos, según su configuración, y anótalo "
            "en una línea nueva de la incidencia abierta de README.md.",
            ["README.md", "config/"], tope_de_pasos=8),
    }


def preparar(carpeta, proyecto):
    """Crea en `carpeta` la copia de trabajo y la base de una ejecución nueva. Devuelve la ruta
    de la base. ValueError si ya hay una ejecución en `carpeta`."""
    carpeta = Path(carpeta)
    final, copia = carpeta / registro.NOMBRE_DE_LA_BASE, carpeta / "copia"
    if final.exists():
        raise ValueError(f"Ya hay una ejecución en {carpeta}: reanúdala, o prepara otra en otra carpeta.")
    carpeta.mkdir(parents=True, exist_ok=True)
    nueva = carpeta / (registro.NOMBRE_DE_LA_BASE + ".nueva")
    for resto in (nueva, copia, carpeta / "vistas"):  # lo que dejó un preparar que no terminó
        shutil.rmtree(resto, ignore_errors=True) if resto.is_dir() else resto.unlink(missing_ok=True)
    for sufijo in ("-wal", "-shm"):
        Path(f"{nueva}{sufijo}").unlink(missing_ok=True)
    shutil.copytree(proyecto, copia, ignore=shutil.ignore_patterns("__pycache__"))
    bd = registro.abrir(nueva)
    try:
        preparar_base(bd)
    finally:
        bd.close()
    os.rename(nueva, final)  # el último paso: hasta aquí, no había ninguna ejecución a medias
    return final


def preparar_base(bd):
    """Las filas de una ejecución nueva: la versión, el padre con sus hijos y los tres agentes."""
    with pasos.en(bd, "preparar"):
        with historial.transaccion(bd):
            bd.executemany("INSERT INTO curso(clave, valor) VALUES (?, ?)",
                           [("version", registro.VERSION), ("copia", "copia")])
        hijos = encargos()
        buzon.crear_padre(bd, PADRE, hijos)
        registro.crear_agente(bd, PADRE, "padre", 0, "guion:padre-informe",
                              [("sistema", SISTEMA_DE_PADRE), ("usuario", PEDIDO)], [], "copia",
                              UMBRAL_DEL_SIMULACRO, 2)
        for orden, (hijo, modelo) in enumerate((("logs", "guion:hijo-logs"),
                                                ("config", "guion:hijo-config-anota")), 1):
            historial.crear_ejecucion(bd, hijo)
            escritura = ESCRITURA_DEL_HIJO_CONFIG if hijo == "config" else []
            sistema = SISTEMA_DE_HIJO + (
                PERMISO_DE_ESCRITURA.format(rutas=", ".join(escritura)) if escritura else "")
            registro.crear_agente(
                bd, hijo, "hijo", orden, modelo,
                [("sistema", sistema), ("usuario", pedido(hijos[hijo]))],
                hijos[hijo]["acciones"] + (["editar"] if escritura else []),
                "copia" if escritura else f"vistas/{hijo}", UMBRAL_DEL_SIMULACRO,
                hijos[hijo]["tope_de_pasos"], escritura)


def explicar(error):
    """Un error de SQLite al guardar un paso, dicho para quien tiene que arreglarlo."""
    que = {"SQLITE_FULL": "el disco está lleno", "SQLITE_READONLY": "la base es de solo lectura"}.get(
        getattr(error, "sqlite_errorname", ""), str(error))
    return (f"La base de datos no ha podido guardar un paso ({que}). Ese paso se ha deshecho entero y "
            "los anteriores siguen guardados: cuando se pueda escribir, vuelve a reanudar.")


def main(argv=None):
    p = Analizador(prog="python todo_junto.py", description=__doc__.split("\n")[0])  # correr.py: en castellano
    ordenes = p.add_subparsers(dest="orden", required=True)
    preparar_ = ordenes.add_parser("preparar", help="crea una ejecución nueva en CARPETA")
    preparar_.add_argument("carpeta")
    preparar_.add_argument("--proyecto", required=True,
                           help="el proyecto que se copia (el del incidente: curso/material/datos/incidente)")
    reanudar_ = ordenes.add_parser("reanudar", help="lleva hasta el final la ejecución de BASE")
    reanudar_.add_argument("base")
    reanudar_.add_argument("--url", help="el servidor del modelo (por defecto, ANTHROPIC_BASE_URL)")
    reanudar_.add_argument("--cuerpo", type=float, default=CUERPO_S, metavar="S",
                           help="segundos que puede tardar el cuerpo de una respuesta tras sus cabeceras "
                                f"antes de darlo por atascado y reintentar (por defecto, {CUERPO_S:g})")
    a = p.parse_args(argv)
    if a.orden == "preparar":
        try:
            print(f"Ejecución preparada: {preparar(a.carpeta, a.proyecto)}")
        except ValueError as e:
            print(e, file=sys.stderr)
            return CODIGO_NO_SE_PUEDE
        return 0
    from api import ModeloAPI
    try:
        hecho = reanudar(a.base, lambda nombre: ModeloConReintentos(ModeloAPI(nombre, url=a.url), cuerpo=a.cuerpo))
    except NoSePuede as e:  # SinSitio (un disco lleno) también lo es, pero se arregla
        print(e, file=sys.stderr)
        return CODIGO_A_MEDIAS if isinstance(e, SinSitio) else CODIGO_NO_SE_PUEDE
    except sqlite3.OperationalError as e:
        print(explicar(e), file=sys.stderr)
        return CODIGO_A_MEDIAS
    except (ErrorDelModelo, *DE_LA_RED) as e:
        print(f"El modelo no ha contestado ({e}). Lo hecho hasta aquí está guardado: vuelve a "
              "reanudar cuando conteste.", file=sys.stderr)
        return CODIGO_A_MEDIAS
    print(f"vida {hecho['vida']} · el padre está {hecho['estado']}")
    if hecho["informe"]:
        print(hecho["informe"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
