"""La orden de los tests del README: `python -m curso probar`.

Corre, cada parte en su propio proceso de pytest y con un espacio de trabajo temporal:

1. los tests del curso (`tests/`);
2. los tests de cada punto de control (`checkpoints/NN_*/tests/`), uno a uno, porque sus módulos
   se llaman igual (`bucle`, `entorno`...);
3. los cuadernos resueltos con `--nbval` (se comparan las salidas);
4. los cuadernos del alumno con `--nbval-lax` (sólo que corran sin errores).

Las partes corren de dos en dos; al final, la salida de cada una, una línea por parte y el
total. Devuelve 0 sólo si todo pasa.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from curso import rutas

PARTES_A_LA_VEZ = 2  # la máquina de referencia del curso tiene dos núcleos


# Las partes que no son cuadernos no necesitan el plugin de nbval, que tarda unos segundos en
# cargarse (importa todo Jupyter) en cada proceso de pytest.
SIN_NBVAL = ["-p", "no:nbval"]


def partes():
    """[(nombre, argumentos de pytest)], de la que más tarda a la que menos (se reparten mejor)."""
    navegador = sorted(str(p.relative_to(rutas.RAIZ)) for p in (rutas.RAIZ / "tests").glob("test_navegador*.py"))
    lista = [("tests del curso", ["tests", "--ignore-glob=tests/test_navegador*.py", *SIN_NBVAL]),
             ("tests del navegador (JupyterLab + Chromium)", [*navegador, "-rs", *SIN_NBVAL]),
             ("cuadernos resueltos (--nbval)",
              ["--nbval", "--nbval-sanitize-with", "nbval_sanitizar.cfg", "solutions"]),
             ("cuadernos del alumno (--nbval-lax)", ["--nbval-lax", "notebooks"])]
    for numero, carpeta in sorted(rutas.puntos_de_control().items(), reverse=True):
        if (carpeta / "tests").is_dir():
            lista.append((f"punto de control {numero:02d}",
                          [str(carpeta.relative_to(rutas.RAIZ) / "tests"), *SIN_NBVAL]))
    return lista


def cuenta(salida, clave):
    """El número de `clave` ("passed", "failed"...) de la última línea de pytest, o 0."""
    m = re.search(rf"(\d+) {clave}", salida.strip().split("\n")[-1] if salida.strip() else "")
    return int(m.group(1)) if m else 0


def correr(nombre, argumentos, extra):
    """Corre una parte en su propio pytest y con su propio espacio temporal: (salida, código, s)."""
    with tempfile.TemporaryDirectory(prefix="curso-probar-") as tmp:
        entorno = dict(os.environ, CURSO_ESPACIO=os.path.join(tmp, "espacio"))
        orden = [sys.executable, "-m", "pytest", "-q", *argumentos, *extra]
        print(f"▶ empieza {nombre}", flush=True)
        t = time.monotonic()
        hecho = subprocess.run(orden, cwd=rutas.RAIZ, env=entorno, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        segundos = time.monotonic() - t
    print(f"{'✔' if hecho.returncode == 0 else '✘'} termina {nombre} ({segundos:.0f} s)", flush=True)
    return f"=== {nombre}: {' '.join(orden[1:])}\n{hecho.stdout}", hecho.returncode, segundos


def main(argv=None):
    """Corre todas las partes, de dos en dos (la máquina del curso tiene dos núcleos)."""
    extra = list(argv or [])
    a_la_vez = max(1, min(PARTES_A_LA_VEZ, os.cpu_count() or 1))
    inicio = time.monotonic()
    lista = partes()
    print(f"{len(lista)} partes, {a_la_vez} a la vez:", flush=True)
    with ThreadPoolExecutor(max_workers=a_la_vez) as grupo:
        hechas = list(grupo.map(lambda parte: correr(*parte, extra), lista))
    filas, pasan_total, fallan_total = [], 0, 0
    for (nombre, _), (salida, codigo, segundos) in zip(lista, hechas):
        print("\n" + salida, end="")
        pasan = cuenta(salida, "passed")
        fallan = cuenta(salida, "failed") + cuenta(salida, "error")
        pasan_total, fallan_total = pasan_total + pasan, fallan_total + fallan
        filas.append(f"{'✔' if codigo == 0 else '✘'} {nombre}: {pasan} pasan, {fallan} fallan ({segundos:.0f} s)")
    print("\n=== Resumen")
    print("\n".join(filas))
    print(f"Tiempo total: {time.monotonic() - inicio:.0f} s")
    print(f"{pasan_total} passed, {fallan_total} failed")
    return 0 if all(codigo == 0 for _, codigo, _ in hechas) else 1
