"""Todo junto sobre DBOS: preparar la ejecución del incidente y llevarla hasta el final.

Lección 08. Las mismas dos órdenes que `todo_junto.py` (lección 06), con DBOS debajo:

    python todo_junto_dbos.py preparar CARPETA --proyecto RUTA
    python todo_junto_dbos.py reanudar CARPETA [--url URL] [--base URL_DE_LA_BASE] [--ejecutor ID]
                                               [--a-la-vez N]

`preparar` deja en CARPETA la copia de trabajo (`copia/`) y `ejecucion.json`: el padre y sus dos
hijos, los de la lección 06 (mismos guiones, mismos encargos, mismo permiso de escritura). Es
atómico: el fichero se escribe con otro nombre y se renombra al final.

`reanudar` lanza DBOS con su base del sistema (por defecto `CARPETA/dbos.sqlite`; con `--base`, la
url de un PostgreSQL). Al lanzarse, DBOS recupera él solo los workflows que quedaron a medias de
este ejecutor; si la ejecución aún no había empezado, la empieza. Después espera al padre. La
primera vez y tras cada caída, la misma orden. Con `--a-la-vez N`, la primera vez los hijos van a
la cola `hijos`, con N como mucho corriendo a la vez en este ejecutor (ejercicio 8.2); sin ella,
uno tras otro.
"""
import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import flujos
import motor
from dbos import DBOS, SetWorkflowID
from hijos import SISTEMA_DE_HIJO, pedido
from todo_junto import (CODIGO_A_MEDIAS, CODIGO_NO_SE_PUEDE, ESCRITURA_DEL_HIJO_CONFIG, PADRE, PEDIDO,
                        PERMISO_DE_ESCRITURA, SISTEMA_DE_PADRE, UMBRAL_DEL_SIMULACRO, encargos)

FICHERO = "ejecucion.json"
BASE = "dbos.sqlite"
MODELOS = {"padre": "guion:padre-informe", "logs": "guion:hijo-logs", "config": "guion:hijo-config-anota"}
TOPE_DEL_PADRE = 2
COLA = "hijos"


def definiciones():
    """La ejecución: {"proyecto", "padre", "hijos"}, cada agente con lo que usa `flujos.bucle_duradero`."""
    hijos = []
    for hijo, su_encargo in encargos().items():
        escritura = ESCRITURA_DEL_HIJO_CONFIG if hijo == "config" else []
        sistema = SISTEMA_DE_HIJO + (PERMISO_DE_ESCRITURA.format(rutas=", ".join(escritura)) if escritura else "")
        hijos.append({"id": hijo, "modelo": MODELOS[hijo], "inicio": [("sistema", sistema), ("usuario", pedido(su_encargo))],
                      "herramientas": su_encargo["acciones"] + (["editar"] if escritura else []),
                      "escritura": escritura, "carpeta": "copia" if escritura else f"vistas/{hijo}",
                      "recursos": su_encargo["recursos"], "encargo": su_encargo,
                      "umbral": UMBRAL_DEL_SIMULACRO, "tope": su_encargo["tope_de_pasos"]})
    padre = {"id": PADRE, "modelo": MODELOS["padre"], "inicio": [("sistema", SISTEMA_DE_PADRE), ("usuario", PEDIDO)],
             "herramientas": [], "escritura": [], "carpeta": "copia", "umbral": UMBRAL_DEL_SIMULACRO,
             "tope": TOPE_DEL_PADRE}
    return {"proyecto": "copia", "padre": padre, "hijos": hijos}


def preparar(carpeta, proyecto):
    """Deja en `carpeta` la copia de trabajo y `ejecucion.json`. ValueError si ya hay una ejecución."""
    carpeta = Path(carpeta)
    if (carpeta / FICHERO).exists():
        raise ValueError(f"Ya hay una ejecución en {carpeta}: reanúdala, o prepara otra en otra carpeta.")
    carpeta.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(carpeta / "copia", ignore_errors=True)  # lo que dejó un preparar que no terminó
    shutil.copytree(proyecto, carpeta / "copia", ignore=shutil.ignore_patterns("__pycache__"))
    nuevo = carpeta / (FICHERO + ".nuevo")
    nuevo.write_text(json.dumps(definiciones(), ensure_ascii=False, indent=1), encoding="utf-8")
    os.rename(nuevo, carpeta / FICHERO)  # el último paso: hasta aquí, no había ninguna ejecución
    return carpeta


def reanudar(carpeta, base=None, ejecutor=motor.EJECUTOR, a_la_vez=None):
    """Lleva la ejecución de `carpeta` hasta el final; devuelve lo que devuelve `flujos.padre`.
    ValueError si no hay ejecución en `carpeta` o si ya terminó. `a_la_vez`: ver el docstring."""
    carpeta = Path(carpeta).resolve()
    if not (carpeta / FICHERO).is_file():
        raise ValueError(f"No hay ninguna ejecución en {carpeta}: prepárala con «python todo_junto_dbos.py "
                         "preparar CARPETA».")
    motor.CARPETA = carpeta
    motor.arrancar(base or motor.url_sqlite(carpeta / BASE), ejecutor)
    try:
        if a_la_vez is not None:  # la cola vive en la base del sistema: sus hijos la encuentran al recuperar
            DBOS.register_queue(COLA, worker_concurrency=a_la_vez)
        estado = DBOS.get_workflow_status(PADRE)
        if estado is not None and estado.status == "SUCCESS":
            raise ValueError(f"La ejecución de {carpeta} ya terminó: no hay nada que reanudar.")
        if estado is None:  # la primera vez: se empieza con lo que dice ejecucion.json
            ejecucion = json.loads((carpeta / FICHERO).read_text(encoding="utf-8"))
            ejecucion["cola"] = COLA if a_la_vez is not None else None
            with SetWorkflowID(PADRE):
                DBOS.start_workflow(flujos.padre, ejecucion)
        return DBOS.retrieve_workflow(PADRE).get_result()  # si estaba a medias, lo recupera DBOS
    finally:
        motor.parar()


def main(argv=None):
    p = argparse.ArgumentParser(prog="python todo_junto_dbos.py", description=__doc__.split("\n")[0])
    ordenes = p.add_subparsers(dest="orden", required=True)
    preparar_ = ordenes.add_parser("preparar", help="crea una ejecución nueva en CARPETA")
    preparar_.add_argument("carpeta")
    preparar_.add_argument("--proyecto", required=True,
                           help="el proyecto que se copia (el del incidente: curso/material/datos/incidente)")
    reanudar_ = ordenes.add_parser("reanudar", help="lleva hasta el final la ejecución de CARPETA")
    reanudar_.add_argument("carpeta")
    reanudar_.add_argument("--url", help="el servidor del modelo (por defecto, ANTHROPIC_BASE_URL)")
    reanudar_.add_argument("--base", help="la base del sistema de DBOS (por defecto, CARPETA/dbos.sqlite)")
    reanudar_.add_argument("--ejecutor", default=motor.EJECUTOR, help="el executor_id de este proceso")
    reanudar_.add_argument("--a-la-vez", type=int, help="los hijos, en una cola con este límite (8.2)")
    a = p.parse_args(argv)
    if a.orden == "preparar":
        try:
            print(f"Ejecución preparada: {preparar(a.carpeta, a.proyecto)}")
        except ValueError as e:
            print(e, file=sys.stderr)
            return CODIGO_NO_SE_PUEDE
        return 0
    if a.url:
        os.environ["ANTHROPIC_BASE_URL"] = a.url  # la lee ModeloAPI en cada paso `pedir`
    try:
        hecho = reanudar(a.carpeta, a.base, a.ejecutor, a.a_la_vez)
    except ValueError as e:
        print(e, file=sys.stderr)
        return CODIGO_NO_SE_PUEDE
    print(f"el padre está {hecho['estado']}")
    print(hecho["informe"] or "\n".join(hecho["problemas"]))
    return 0 if hecho["estado"] == "completada" else CODIGO_A_MEDIAS


if __name__ == "__main__":
    sys.exit(main())
