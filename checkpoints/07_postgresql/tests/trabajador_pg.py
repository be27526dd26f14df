"""Un trabajador del simulacro de la lección 07: un proceso, con su propia conexión, que entrega y
admite todas las entregas de un plan, en su propio orden (el de su semilla).

Es como una máquina más: varios a la vez repiten las mismas entregas (duplicados de verdad,
entre procesos), el test los mata con SIGKILL o les corta la conexión (pg_terminate_backend).
Si la conexión cae, no sabe si su último COMMIT llegó a confirmarse: vuelve a conectar y repite
la misma entrega, con la misma identidad, que es lo que hace seguro el reintento.

Uso: python trabajador_pg.py CONEXION SEMILLA PLAN_JSON, donde el plan es una lista de
[padre, hijo, entrega, carga]. Escribe una línea por suceso: «pid N» (su backend, al conectar),
«hecha ENTREGA» y «reconecta».
"""
import json
import random
import sys

import psycopg

import buzon_pg


def conectar(conexion):
    bd = buzon_pg.abrir_buzon(conexion)
    print("pid", bd.info.backend_pid, flush=True)
    return bd


def main(conexion, semilla, plan):
    orden = list(plan)
    random.Random(semilla).shuffle(orden)
    bd = conectar(conexion)
    for padre, hijo, entrega, carga in orden:
        while True:
            try:
                buzon_pg.recibir(bd, padre, hijo, entrega, carga)
                buzon_pg.admitir(bd, entrega)
                break
            except (psycopg.OperationalError, psycopg.InterfaceError):  # la conexión se cortó
                print("reconecta", flush=True)
                bd = conectar(conexion)
        print("hecha", entrega, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3]))
