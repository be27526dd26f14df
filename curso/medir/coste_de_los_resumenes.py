"""Para `medir resumenes`: cuánto cuestan los resúmenes durables de la lección 04, en esta máquina.

Dos cifras, con su referencia medida en la misma ejecución:

1. el tiempo de explorar todos los intercalados del escenario estándar (objetivo: < 2 s);
2. cuántas instalaciones durables por segundo hace `instalar()` con synchronous=FULL, frente
   al límite físico del disco: un bucle que solo escribe 4 KiB y llama a fsync, en la misma
   carpeta (objetivo: al menos la mitad).

Uso: python -m curso medir resumenes   (o python -m curso.medir.coste_de_los_resumenes [carpeta])   (por defecto, una carpeta temporal del disco)
"""
import os
import sys
import tempfile
import time
from pathlib import Path

from curso.explorables.carreras import explorar
from curso.rutas import cargar_modulo
from curso.explorables.carreras.escenarios import carreras_de_los_resumenes as escenario_resumenes

RONDAS = 8
POR_RONDA = 50  # instalaciones y escrituras se alternan en rondas: el disco cambia de ritmo
                # (otros procesos, cachés), y así las dos cifras lo sufren por igual
BLOQUE = b"x" * 4096  # una página: lo mínimo que toca el disco en cada COMMIT
OBJETIVO_EXPLORACION_S = 2.0
OBJETIVO_PROPORCION = 0.5


def medir_exploracion():
    """(segundos, número de intercalados) de explorar el escenario estándar, variante correcta."""
    inicio = time.perf_counter()
    exploracion = explorar(escenario_resumenes.ESCENARIO, "correcta")
    return time.perf_counter() - inicio, exploracion.total


def medir_durabilidad(carpeta, rondas=RONDAS, por_ronda=POR_RONDA):
    """(instalaciones por segundo, escrituras con fsync por segundo), en la misma carpeta.

    Cada instalación amplía el resumen activo en un mensaje; cada escritura añade 4 KiB a un
    fichero y llama a fsync.
    """
    r = cargar_modulo(escenario_resumenes.MODULO, "_resumenes_04_medida")
    h = cargar_modulo(escenario_resumenes.MODULO.with_name("historial.py"), "_historial_04_medida")
    carpeta = Path(carpeta)
    bd = h.abrir(carpeta / "medida.db")
    descriptor = os.open(carpeta / "fsync.bin", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        h.crear_ejecucion(bd, "medida")
        total = rondas * por_ronda
        with h.transaccion(bd):  # el historial, de una vez: aquí no se mide anotar()
            bd.executemany("INSERT INTO historial VALUES ('medida', ?, ?)",
                           [(seq, f"mensaje {seq}") for seq in range(1, total + 1)])
        base, corte = None, 0
        t_instalar = t_fsync = 0.0
        for _ in range(rondas):
            inicio = time.perf_counter()
            for _ in range(por_ronda):
                corte += 1
                base = r.instalar(bd, "medida", base, corte, [{"texto": f"hasta {corte}", "fuente": corte}])
            t_instalar += time.perf_counter() - inicio
            inicio = time.perf_counter()
            for _ in range(por_ronda):
                os.write(descriptor, BLOQUE)
                os.fsync(descriptor)
            t_fsync += time.perf_counter() - inicio
        return total / t_instalar, total / t_fsync
    finally:
        os.close(descriptor)
        bd.close()


def main(carpeta=None):
    """Mide, imprime en castellano y devuelve las cifras en un dict."""
    with tempfile.TemporaryDirectory(prefix="medir-resumenes-", dir=carpeta) as temporal:
        segundos, intercalados = medir_exploracion()
        instalaciones, fsyncs = medir_durabilidad(temporal)
    proporcion = instalaciones / fsyncs
    print(f"Exploración del escenario estándar: {intercalados} intercalados en {segundos:.2f} s "
          f"(objetivo: menos de {OBJETIVO_EXPLORACION_S:.0f} s).")
    print(f"Instalaciones durables (synchronous=FULL): {instalaciones:.0f} por segundo.")
    print(f"Escritura de 4 KiB + fsync en el mismo disco: {fsyncs:.0f} por segundo (el límite físico).")
    print(f"Proporción: {proporcion:.2f} del límite (objetivo: al menos {OBJETIVO_PROPORCION}).")
    return {
        "intercalados": intercalados,
        "exploracion_s": segundos,
        "instalaciones_por_s": instalaciones,
        "fsync_por_s": fsyncs,
        "proporcion": proporcion,
    }


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
