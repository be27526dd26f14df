"""El harness del alumno se sostiene solo: ningún módulo de un punto de control importa `curso`.

Lo que es solo del curso (el modelo guionizado en el proceso, el usuario del guion, los datos del
incidente) le llega al harness como argumento: `--url` del servidor, `--proyecto` y los permisos.
Así un alumno puede copiar su `mi_agente/` a otra máquina y apuntarlo a cualquier servidor de la
API de Messages.

Dos pruebas, una que lee y otra que corre:

- ningún módulo de ningún punto de control nombra `curso` en un import, ni arriba ni dentro de
  una función (un import dentro de `main` no se ve al importar el módulo, pero falla al correrlo);
- el punto de control 07 copiado solo a una carpeta vacía, con un Python sin site-packages (`-S`)
  que solo ve la biblioteca estándar y psycopg: se importan todos sus módulos, y `correr.py --url`
  y `todo_junto.py` corren de principio a fin contra un servidor de ensayo arrancado aparte
  (`python -m curso servidor`, otro proceso).
"""
import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curso import rutas
from curso.material.incidente import INCIDENTE

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
PERMISOS_DEL_GUION = ["--permitir-orden", "python3 -m unittest", "--permitir-editar", "recetario.py",
                      "--permitir-editar", "compra.py"]
# Lo que el harness puede usar además de la biblioteca estándar: psycopg (lección 07), con lo que
# trae su rueda y lo que pide.
PAQUETES_DE_FUERA = ("psycopg", "psycopg_binary", "psycopg_binary.libs", "typing_extensions.py")


def imports_de_curso(texto):
    """Las líneas de `texto` (un módulo de Python) que importan `curso`: `import curso…`,
    `from curso… import`, o `importlib.import_module("curso…")` / `__import__("curso…")`, estén
    donde estén (también dentro de una función)."""
    lineas = []
    for nodo in ast.walk(ast.parse(texto)):
        if isinstance(nodo, ast.Import):
            nombres = [alias.name for alias in nodo.names]
        elif isinstance(nodo, ast.ImportFrom):
            nombres = [nodo.module or ""] if not nodo.level else []
        elif (isinstance(nodo, ast.Call) and nodo.args and isinstance(nodo.args[0], ast.Constant)
              and isinstance(nodo.args[0].value, str)
              and ast.unparse(nodo.func) in ("importlib.import_module", "import_module", "__import__")):
            nombres = [nodo.args[0].value]
        else:
            continue
        if any(n == "curso" or n.startswith("curso.") for n in nombres):
            lineas.append(nodo.lineno)
    return sorted(lineas)


# La variante ingenua: el main de correr.py de antes, que arrancaba su propio servidor de ensayo.
# Importar el módulo no falla (el import va dentro de main); correrlo fuera del curso, sí.
CORRER_DE_ANTES = '''
import os


def main(argv=None):
    if not os.environ.get("ANTHROPIC_BASE_URL"):
        from curso.ensayo.servidor import arrancar_en_segundo_plano
        servidor = arrancar_en_segundo_plano()
    return 0
'''


@pytest.mark.parametrize("variante", ["los_puntos_de_control", "correr_de_antes"])
def test_ningun_modulo_de_un_punto_de_control_importa_curso(variante):
    if variante == "correr_de_antes":
        assert imports_de_curso(CORRER_DE_ANTES) == [7]
        return
    modulos = sorted(p for carpeta in rutas.puntos_de_control().values() for p in carpeta.glob("*.py"))
    assert len(modulos) > 30
    importan = {f"{p.parent.name}/{p.name}": imports_de_curso(p.read_text(encoding="utf-8")) for p in modulos}
    assert {nombre: lineas for nombre, lineas in importan.items() if lineas} == {}


# --- El punto de control 07, solo -------------------------------------------------------------

@pytest.fixture(scope="module")
def aparte(tmp_path_factory):
    """(python, entorno, carpeta): el punto de control 07 copiado solo a una carpeta vacía, y cómo
    correr en ella un Python que no ve más que la biblioteca estándar y psycopg."""
    raiz = tmp_path_factory.mktemp("aparte")
    harness = raiz / "harness"
    harness.mkdir()
    for modulo in (rutas.puntos_de_control()[7]).glob("*.py"):
        shutil.copy(modulo, harness / modulo.name)
    sitio = raiz / "sitio"  # psycopg y lo suyo, sin nada más de site-packages
    sitio.mkdir()
    paquetes = Path(importlib.util.find_spec("psycopg").origin).parent.parent
    for nombre in PAQUETES_DE_FUERA:
        if (paquetes / nombre).exists():
            (sitio / nombre).symlink_to(paquetes / nombre)
    temporal = raiz / "tmp"
    temporal.mkdir()
    entorno = {"PATH": os.environ["PATH"], "PYTHONPATH": str(sitio), "TMPDIR": str(temporal),
               "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
    return [sys.executable, "-S"], entorno, harness


@pytest.fixture(scope="module")
def servidor_aparte():
    """La URL de un `python -m curso servidor` en otro proceso, en un puerto libre."""
    proceso = subprocess.Popen([sys.executable, "-m", "curso", "servidor", "--puerto", "0"],
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        primera = proceso.stdout.readline()  # «Servidor de ensayo en http://127.0.0.1:P (…)»
        assert primera.startswith("Servidor de ensayo en http://127.0.0.1:"), primera
        yield primera.split(" en ", 1)[1].split(" ", 1)[0]
    finally:
        proceso.terminate()
        proceso.wait(timeout=30)
        proceso.stdout.close()


def correr(aparte, *argumentos, cwd=None):
    python, entorno, harness = aparte
    return subprocess.run([*python, *argumentos], cwd=cwd or harness, env=entorno, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("variante", ["aparte", "con_site_packages"])
def test_aparte_no_se_ve_el_curso(aparte, variante):
    """Lo que da sentido a las pruebas de abajo: el Python de la carpeta aparte no encuentra `curso`
    (con sus site-packages, la variante ingenua, sí lo encontraría) y sí psycopg."""
    python, entorno, harness = aparte
    if variante == "con_site_packages":
        aparte = ([sys.executable], entorno, harness)
    hecho = correr(aparte, "-c", "import psycopg; import curso")
    assert (hecho.returncode != 0 and "No module named 'curso'" in hecho.stderr) is (variante == "aparte"), \
        hecho.stderr


def test_aparte_se_importan_todos_los_modulos(aparte):
    nombres = sorted(p.stem for p in aparte[2].glob("*.py"))
    hecho = correr(aparte, "-c", "import " + ", ".join(nombres))
    assert hecho.returncode == 0, hecho.stderr


def test_aparte_correr_py_arregla_el_recetario(aparte, servidor_aparte):
    hecho = correr(aparte, "correr.py", str(rutas.RECETARIO), PEDIDO, "--url", servidor_aparte, *PERMISOS_DEL_GUION)
    assert hecho.returncode == 0 and hecho.stderr == "", hecho.stderr
    (final,) = [linea for linea in hecho.stdout.splitlines() if linea.startswith("fin · ")]
    copia = Path(final.split("la copia está en ")[1])
    try:
        tests = correr(aparte, "-m", "unittest", cwd=copia)
        assert tests.returncode == 0, tests.stderr
    finally:
        shutil.rmtree(copia.parent)


def test_aparte_todo_junto_prepara_y_reanuda_el_incidente(aparte, servidor_aparte, tmp_path):
    preparado = correr(aparte, "todo_junto.py", "preparar", str(tmp_path / "e"), "--proyecto", str(INCIDENTE))
    assert preparado.returncode == 0, preparado.stderr
    hecho = correr(aparte, "todo_junto.py", "reanudar", str(tmp_path / "e" / "todo_junto.db"), "--url", servidor_aparte)
    assert hecho.returncode == 0, hecho.stderr
    assert hecho.stdout.startswith("vida 1 · el padre está completada"), hecho.stdout
