"""Para la lección 08 y `medir dbos`: el simulacro entero en los dos motores, los pasos por segundo y lo que tarda en volver.

Lo que el cuaderno 08 enseña con una muestra, entero y con los puntos de control del curso (06 y 08):

1. una caída justo después de cada paso (y de cada edición), cada una en su propia ejecución: el
   harness de la 06, el port a DBOS con la edición en un paso normal (`sin_8_1`) y con el 8.1;
2. cien caídas al azar en cada uno;
3. de una caída a la ejecución reanudada (el primer paso nuevo del proceso siguiente), en los dos;
4. pasos duraderos por segundo del harness del curso y de DBOS, en SQLite y, si hay, en PostgreSQL.

Las cifras de tiempo son de esta máquina y de este momento (con la calibración de
../shared/herramientas/calibrar.py, si se quieren comparar); las del simulacro salen igual en
cualquier máquina para las caídas tras cada paso, y dependen del azar y de la carga para las otras.
"""
import statistics
import sys
import time

from curso import rutas
from curso.material import dbos_08, simulacro, simulacro_dbos

CAIDAS_AL_AZAR = 100


def simulacros(motores, url, contador, carpeta, caidas=CAIDAS_AL_AZAR, aviso=None):
    """{nombre: {"referencia", "cada_paso", "azar"}} de cada (nombre, motor, punto, variante) de `motores`."""
    hecho = {}
    for nombre, motor, punto, variante in motores:
        plantilla = motor.preparar(punto, carpeta / f"plantilla-{motor.nombre}-{variante}")
        referencia = simulacro_dbos.sin_caidas(motor, punto, plantilla, url, contador, carpeta, variante)
        cada = simulacro_dbos.caidas_tras_cada_paso(motor, punto, plantilla, url, contador, carpeta, referencia,
                                                    variante, aviso=aviso)
        azar = simulacro_dbos.caidas_al_azar(motor, punto, plantilla, url, contador, carpeta, referencia, caidas,
                                             variante=variante, aviso=aviso) if caidas else []
        hecho[nombre] = {"referencia": referencia, "cada_paso": cada, "azar": azar, "plantilla": plantilla,
                         "motor": motor, "punto": punto}
    return hecho


def main():
    """`python -m curso medir dbos`."""
    puntos = rutas.puntos_de_control()
    motores = [("06", simulacro_dbos.MOTORES["06"], puntos[6], "correcta"),
               ("DBOS sin 8.1", simulacro_dbos.MOTORES["dbos"], puntos[8], "sin_8_1"),
               ("DBOS con 8.1", simulacro_dbos.MOTORES["dbos"], puntos[8], "correcta")]
    empieza = time.monotonic()
    with simulacro_dbos.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, contador):
        hecho = simulacros(motores, url, contador, carpeta)
        print("Una caída justo después de cada paso (y de cada edición), cada una en su ejecución:")
        print(simulacro_dbos.tabla({n: h["cada_paso"] for n, h in hecho.items()}))
        print(f"\n{CAIDAS_AL_AZAR} caídas al azar en cada uno (un proceso matado desde fuera tras un paso al azar, "
              "y un poco después):")
        print(simulacro_dbos.tabla({n: h["azar"] for n, h in hecho.items()}))
        for nombre, h in hecho.items():
            distintas = [f for f in h["cada_paso"] if not f["igual"]]
            print(f"{nombre}: {len(h['referencia']['pasos'])} pasos sin caídas; acaban distintas: "
                  + (", ".join(f"tras {f['clase']} de {f['agente'] or 'la edición'}" for f in distintas) or "ninguna"))
        print("\nDe una caída al primer paso nuevo del proceso siguiente (arranque de Python incluido):")
        for nombre in ("06", "DBOS con 8.1"):
            h = hecho[nombre]
            segundos = simulacro_dbos.de_la_caida_a_la_vuelta(h["motor"], h["punto"], h["plantilla"], url, carpeta,
                                                              veces=5)
            print(f"  {nombre}: mediana {statistics.median(segundos):.2f} s (de {min(segundos):.2f} a {max(segundos):.2f})")
    print("\nPasos duraderos por segundo (200 seguidos; cada paso, una transacción confirmada):")
    try:
        from curso.postgres.cluster import FaltaPostgres, servidor_de_pruebas
        with servidor_de_pruebas() as conexion:
            medidas = dbos_08.pasos_por_segundo(puntos[8], postgres=conexion)
    except FaltaPostgres as falta:
        print(f"  (sin PostgreSQL: {str(falta).splitlines()[0]})")
        medidas = dbos_08.pasos_por_segundo(puntos[8])
    for (motor, base), por_segundo in medidas.items():
        print(f"  {motor:6} en {base:10}: {por_segundo:7.0f} pasos/s")
    print(f"\nTodo: {time.monotonic() - empieza:.0f} s de reloj.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
