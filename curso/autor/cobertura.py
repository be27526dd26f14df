"""Para quien escribe el curso: el código que entrega una lección y que ningún test de su punto de
control ejecuta.

Cada lección entrega solo lo que enseña, y lo que enseña se prueba. `sin_ejercitar(N)` corre los
tests del punto de control N con coverage.py (en otro proceso, y también en los procesos que
lancen: `correr.py` y `todo_junto.py` corren como órdenes) y devuelve, de las líneas que entrega
la lección N (las de `lineas.py`: los módulos nuevos y lo que cambia en los que ya había), las
sentencias que no se ejecutaron ni una vez. Las líneas que la lección no toca son de otra lección,
y las mira la suya.

    python -m curso.autor.cobertura 1 3b 6   # las de esas lecciones (sin números, todas)

Tarda lo que tardan los tests de cada punto de control, con coverage encima: por eso el test que lo
comprueba (tests/lecciones/test_cobertura_por_leccion.py) es lento.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from curso import rutas
from curso.autor import lineas


def lineas_entregadas(numero, puntos=None):
    """{fichero: números de línea (desde 1)} de lo que entrega la lección `numero` en su punto de control."""
    return {fichero: set(lineas.numeros_nuevos(antes, despues))
            for fichero, antes, despues in lineas.versiones(numero, puntos)}


def sin_ejecutar(carpeta, ficheros, tests=None, espera=1800):
    """{fichero: sentencias no ejecutadas} de `ficheros` (nombres de la carpeta `carpeta`) al correr
    con pytest los tests de `tests` (por defecto, carpeta/tests) bajo coverage.py."""
    carpeta = Path(carpeta).resolve()
    tests = Path(tests or carpeta / "tests").resolve()
    with tempfile.TemporaryDirectory(prefix="curso-cobertura-") as temporal:
        datos, configuracion = Path(temporal) / "datos", Path(temporal) / "coveragerc"
        configuracion.write_text(
            "[run]\npatch = subprocess\nparallel = true\n"
            f"data_file = {datos}\ninclude =\n" + "".join(f"    {carpeta / f}\n" for f in ficheros),
            encoding="utf-8")
        entorno = dict(os.environ, COVERAGE_RCFILE=str(configuracion), TMPDIR=temporal)
        subprocess.run([sys.executable, "-m", "coverage", "run", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(tests)], cwd=carpeta, env=entorno, capture_output=True, text=True, timeout=espera)
        informe = Path(temporal) / "informe.json"
        for orden in (["combine", "-q"], ["json", "-q", "-o", str(informe)]):
            subprocess.run([sys.executable, "-m", "coverage", *orden], cwd=temporal, env=entorno,
                           capture_output=True, text=True, timeout=600)
        # Sin el informe, ningún test cargó ninguno de los ficheros («No data to report»).
        ficheros_medidos = json.loads(informe.read_text(encoding="utf-8"))["files"] if informe.exists() else {}
    faltan = {Path(nombre).name: set(datos["missing_lines"]) for nombre, datos in ficheros_medidos.items()}
    return {fichero: faltan.get(fichero, None) for fichero in ficheros}


def sin_ejercitar(numero, puntos=None):
    """{fichero: [(línea, texto)]} de lo que entrega la lección `numero` y ningún test de su punto de
    control ejecuta (solo los ficheros con algo así). Un fichero que los tests ni cargan sale entero."""
    puntos = rutas.puntos_de_control() if puntos is None else puntos
    entregadas = lineas_entregadas(numero, puntos)
    if not entregadas:
        return {}
    faltan = sin_ejecutar(puntos[numero], sorted(entregadas))
    resultado = {}
    for fichero, suyas in entregadas.items():
        texto = (Path(puntos[numero]) / fichero).read_text(encoding="utf-8").splitlines()
        sin = suyas if faltan[fichero] is None else suyas & faltan[fichero]
        if sin:
            resultado[fichero] = [(n, texto[n - 1].strip()) for n in sorted(sin)]
    return resultado


def main(argumentos):
    numeros = [rutas.leccion_pedida(a) for a in argumentos] or list(rutas.LECCIONES)
    codigo = 0
    for numero in numeros:
        sin = sin_ejercitar(numero)
        print(f"{numero:02d}: " + ("todo lo que entrega lo ejecuta algún test" if not sin else
                                  f"{sum(map(len, sin.values()))} sentencias sin ejecutar"), flush=True)
        for fichero, lineas_ in sin.items():
            for n, texto in lineas_:
                print(f"    {fichero}:{n}: {texto}")
        codigo = codigo or bool(sin)
    return codigo


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
