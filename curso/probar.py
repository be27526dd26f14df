"""La orden de los tests del README: `python -m curso probar`.

Corre, cada parte en su propio proceso de pytest y con un espacio de trabajo temporal:

1. los tests del curso (`tests/`);
2. los tests de cada punto de control (`checkpoints/NN_*/tests/`), uno a uno, porque sus módulos
   se llaman igual (`bucle`, `entorno`...);
3. los cuadernos resueltos con `--nbval` (se comparan las salidas);
4. los cuadernos del alumno con `--nbval-lax` (sólo que corran sin errores).

Al final, una línea por parte y el total. Devuelve 0 sólo si todo pasa.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

from curso import rutas


def partes():
    """[(nombre, argumentos de pytest)] en el orden en que se corren."""
    lista = [("tests del curso", ["tests"])]
    for numero, carpeta in rutas.puntos_de_control().items():
        if (carpeta / "tests").is_dir():
            lista.append((f"punto de control {numero:02d}", [str(carpeta.relative_to(rutas.RAIZ) / "tests")]))
    lista.append(("cuadernos resueltos (--nbval)",
                  ["--nbval", "--nbval-sanitize-with", "nbval_sanitizar.cfg", "solutions"]))
    lista.append(("cuadernos del alumno (--nbval-lax)", ["--nbval-lax", "notebooks"]))
    return lista


def cuenta(salida, clave):
    m = re.search(rf"(\d+) {clave}", salida.strip().split("\n")[-1] if salida.strip() else "")
    return int(m.group(1)) if m else 0


def main(argv=None):
    extra = list(argv or [])
    total_pasan = total_fallan = 0
    filas, fallo = [], False
    inicio = time.monotonic()
    for nombre, argumentos in partes():
        with tempfile.TemporaryDirectory(prefix="curso-probar-") as tmp:
            entorno = dict(os.environ, CURSO_ESPACIO=os.path.join(tmp, "espacio"))
            orden = [sys.executable, "-m", "pytest", "-q", *argumentos, *extra]
            print(f"\n=== {nombre}: {' '.join(orden[1:])}", flush=True)
            t = time.monotonic()
            hecho = subprocess.run(orden, cwd=rutas.RAIZ, env=entorno, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        print(hecho.stdout, end="", flush=True)
        pasan, fallan = cuenta(hecho.stdout, "passed"), cuenta(hecho.stdout, "failed") + cuenta(hecho.stdout, "error")
        total_pasan, total_fallan = total_pasan + pasan, total_fallan + fallan
        mal = hecho.returncode != 0
        fallo |= mal
        filas.append(f"{'✘' if mal else '✔'} {nombre}: {pasan} pasan, {fallan} fallan "
                     f"({time.monotonic() - t:.0f} s)")
    print("\n=== Resumen")
    print("\n".join(filas))
    print(f"Tiempo total: {time.monotonic() - inicio:.0f} s")
    print(f"{total_pasan} passed, {total_fallan} failed")
    return 1 if fallo else 0
