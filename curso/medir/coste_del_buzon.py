"""Para `medir buzon`: cuánto cuesta el buzón durable de la lección 05, en esta máquina.

Dos cifras, cada una con su referencia:

1. cuántas entregas por segundo guarda `recibir()` y cuántas incorpora `admitir()` con
   synchronous=FULL (cada una, su COMMIT y su fsync), frente al límite físico del disco: un bucle
   que solo escribe 4 KiB y llama a fsync, en la misma carpeta y en la misma ejecución
   (objetivo: admitir, al menos a la mitad de ese límite);
2. el tiempo de explorar todos los intercalados de cada escenario del buzón, con la variante
   correcta y con todas (objetivo: menos de 2 s por escenario y variante).

Uso: python -m curso medir buzon   (o python -m curso.medir.coste_del_buzon [carpeta])   (por defecto, una carpeta temporal del disco)
"""
import os
import sys
import tempfile
import time
from pathlib import Path

from curso.explorables.carreras import explorar
from curso.rutas import cargar_modulo
from curso.explorables.carreras.escenarios import carreras_del_buzon as escenarios_buzon

RONDAS = 8
POR_RONDA = 50  # recibir, admitir y escribir se alternan en rondas: el disco cambia de ritmo
                # (otros procesos, cachés), y así las tres cifras lo sufren por igual
BLOQUE = b"x" * 4096  # una página: lo mínimo que toca el disco en cada COMMIT
OBJETIVO_EXPLORACION_S = 2.0
OBJETIVO_PROPORCION = 0.5
HIJOS = ("logs", "config")  # cada padre espera a dos: la mitad de las admisiones lo activan


def medir_exploraciones(modulo=None):
    """{escenario: (intercalados, segundos con la correcta, variantes, segundos con todas)}."""
    if modulo is None:
        modulo = cargar_modulo(escenarios_buzon.MODULO, "_buzon_05_medida")
    cifras = {}
    for nombre, escenario in escenarios_buzon.ESCENARIOS.items():
        tiempos = {}
        for variante in escenario.variantes:
            inicio = time.perf_counter()
            exploracion = explorar(escenario, variante, modulo)
            tiempos[variante] = time.perf_counter() - inicio
        cifras[nombre] = (exploracion.total, tiempos["correcta"], len(tiempos), sum(tiempos.values()))
    return cifras


def medir_durabilidad(carpeta, rondas=RONDAS, por_ronda=POR_RONDA, modulo=None):
    """(recepciones por segundo, admisiones por segundo, escrituras con fsync por segundo).

    Todo en la misma carpeta. Cada recepción guarda una entrega nueva; cada admisión incorpora
    una de las recibidas; cada escritura añade 4 KiB a un fichero y llama a fsync.
    """
    b = modulo or cargar_modulo(escenarios_buzon.MODULO, "_buzon_05_medida")
    carpeta = Path(carpeta)
    bd = b.abrir_buzon(carpeta / "medida.db")
    descriptor = os.open(carpeta / "fsync.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        total = rondas * por_ronda
        entregas = [(f"p{n // len(HIJOS):05d}", HIJOS[n % len(HIJOS)]) for n in range(total)]
        bd.execute("PRAGMA synchronous=OFF")  # los padres, deprisa: aquí no se mide crear_padre()
        for padre in dict.fromkeys(padre for padre, _ in entregas):
            b.crear_padre(bd, padre, list(HIJOS))
        bd.execute("PRAGMA synchronous=FULL")
        t_recibir = t_admitir = t_fsync = 0.0
        for ronda in range(rondas):
            lote = entregas[ronda * por_ronda:(ronda + 1) * por_ronda]
            inicio = time.perf_counter()
            for padre, hijo in lote:
                b.recibir(bd, padre, hijo, f"{padre}/{hijo}", {"hallazgo": f"resultado de {hijo}"})
            t_recibir += time.perf_counter() - inicio
            inicio = time.perf_counter()
            for padre, hijo in lote:
                b.admitir(bd, f"{padre}/{hijo}")
            t_admitir += time.perf_counter() - inicio
            inicio = time.perf_counter()
            for _ in lote:
                os.write(descriptor, BLOQUE)
                os.fsync(descriptor)
            t_fsync += time.perf_counter() - inicio
        activados = bd.execute("SELECT COUNT(*) FROM ejecuciones WHERE estado='en_cola'").fetchone()[0]
        if activados != total // len(HIJOS):
            raise RuntimeError(f"La medición activó {activados} padres, no {total // len(HIJOS)}.")
        return total / t_recibir, total / t_admitir, total / t_fsync
    finally:
        os.close(descriptor)
        bd.close()


def main(carpeta=None):
    """Mide, imprime en castellano y devuelve las cifras en un dict."""
    modulo = cargar_modulo(escenarios_buzon.MODULO, "_buzon_05_medida")
    with tempfile.TemporaryDirectory(prefix="medir-buzon-", dir=carpeta) as temporal:
        recepciones, admisiones, fsyncs = medir_durabilidad(temporal, modulo=modulo)
    exploraciones = medir_exploraciones(modulo)
    proporcion = admisiones / fsyncs
    print(f"Recepciones durables (recibir, synchronous=FULL): {recepciones:.0f} por segundo.")
    print(f"Admisiones durables (admitir, synchronous=FULL): {admisiones:.0f} por segundo.")
    print(f"Escritura de 4 KiB + fsync en el mismo disco: {fsyncs:.0f} por segundo (el límite físico).")
    print(f"Proporción de admitir: {proporcion:.2f} del límite (objetivo: al menos {OBJETIVO_PROPORCION}).")
    for nombre, (intercalados, correcta, variantes, todas) in exploraciones.items():
        print(f"Escenario «{escenarios_buzon.ESCENARIOS[nombre].nombre}»: {intercalados} intercalados, "
              f"{correcta:.2f} s con la variante correcta y {todas:.2f} s con las {variantes} variantes "
              f"(objetivo: menos de {OBJETIVO_EXPLORACION_S:.0f} s por variante).")
    return {
        "recepciones_por_s": recepciones,
        "admisiones_por_s": admisiones,
        "fsync_por_s": fsyncs,
        "proporcion": proporcion,
        "exploraciones": {nombre: {"intercalados": i, "correcta_s": c, "variantes": v, "todas_s": t}
                          for nombre, (i, c, v, t) in exploraciones.items()},
    }


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
