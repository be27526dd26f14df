"""El curso instalado sin -e, como lo dejan repo2docker (Binder) y una imagen de JupyterHub.

Un entorno virtual nuevo con `pip install --no-deps --no-build-isolation .` de una copia del paquete:
el paquete `curso` queda en su site-packages, lejos del repositorio. Las dependencias (Jupyter,
pytest...) no se vuelven a instalar: un fichero .pth le deja ver las de este entorno (así tarda
segundos y no necesita red); el paquete `curso` editable de este entorno no se ve, porque los .pth
de esa carpeta no se procesan. La lección 01 corre desde notebooks/ en un núcleo de ese Python.

Lo que hace repo2docker con este repositorio (qué ficheros mira, sus `pip install`, un cuaderno),
paso a paso con su propio código, está en .ci/test_binder.py, que corre .ci/run tras la orden de
tests del README: necesita el paquete jupyter-repo2docker y bajar todo requirements.txt.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from curso import rutas

PAQUETE = ("pyproject.toml", "curso")  # lo que necesita `pip install .` (sin el resto del repositorio)


def _entorno_limpio(casa, **mas):
    """Sin nada que apunte al curso de este entorno: ni CURSO_RAIZ, ni PYTHONPATH, ni sus núcleos."""
    fuera = {"CURSO_RAIZ", "PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "VIRTUAL_ENV"}
    entorno = {k: v for k, v in os.environ.items() if k not in fuera}
    entorno.update({"HOME": str(casa), "PYTHONDONTWRITEBYTECODE": "1", **mas})
    return entorno


@pytest.fixture(scope="module")
def instalado(tmp_path_factory):
    """(el python del entorno nuevo, una carpeta de trabajo suya)."""
    base = tmp_path_factory.mktemp("instalado")
    venv, fuente, casa = base / "venv", base / "fuente", base / "casa"
    casa.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / "bin" / "python"
    propio = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 capture_output=True, text=True, check=True).stdout.strip())
    (propio / "dependencias_del_curso.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    fuente.mkdir()
    shutil.copy(rutas.RAIZ / "pyproject.toml", fuente)
    shutil.copytree(rutas.RAIZ / "curso", fuente / "curso", ignore=shutil.ignore_patterns("__pycache__"))
    hecho = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", str(fuente)], capture_output=True, text=True, timeout=300,
                           env=_entorno_limpio(casa))
    assert hecho.returncode == 0, hecho.stdout + hecho.stderr
    assert (propio / "curso" / "rutas.py").exists()  # instalado de verdad, no editable
    return python, base


def test_instalado_sin_editable_la_leccion_01_corre_desde_notebooks(instalado):
    python, base = instalado
    espacio, temporal = base / "espacio", base / "temporal"
    temporal.mkdir()
    programa = textwrap.dedent(f"""
        import json, nbformat, nbclient
        ruta = {str(rutas.CUADERNOS / "01_el_bucle.ipynb")!r}
        cuaderno = nbformat.read(ruta, as_version=4)
        cuaderno.cells.append(nbformat.v4.new_code_cell(
            "import json, sys, curso, curso.rutas\\n"
            "print(json.dumps([sys.executable, curso.__file__, str(curso.rutas.RAIZ)]))"))
        nbclient.NotebookClient(cuaderno, timeout=300, kernel_name="python3",
                                resources={{"metadata": {{"path": {str(rutas.CUADERNOS)!r}}}}}).execute()
        print(cuaderno.cells[-1].outputs[0]["text"], end="")
    """)
    hecho = subprocess.run([str(python), "-c", programa], cwd=rutas.CUADERNOS, capture_output=True, text=True,
                           timeout=600, env=_entorno_limpio(base / "casa", CURSO_ESPACIO=str(espacio),
                                                            TMPDIR=str(temporal)))
    assert hecho.returncode == 0, hecho.stderr[-3000:]
    ejecutable, paquete, raiz = json.loads(hecho.stdout.strip().splitlines()[-1])
    assert Path(ejecutable).parent == python.parent  # el núcleo es el Python del entorno nuevo
    assert Path(paquete).is_relative_to(python.parent.parent) and "site-packages" in paquete
    assert Path(raiz) == rutas.RAIZ  # y aun así encontró el curso, subiendo desde notebooks/
    assert (espacio / "bucle.py").exists()  # la lección escribió los módulos en el espacio
    assert list(temporal.iterdir()) == []


def test_instalado_sin_editable_y_fuera_del_curso_dice_que_hacer(instalado):
    python, base = instalado
    orden = [str(python), "-c", "import curso.rutas as r; print(r.RAIZ)"]
    fuera = subprocess.run(orden, cwd=base, capture_output=True, text=True, timeout=60,
                           env=_entorno_limpio(base / "casa"))
    assert fuera.returncode == 1
    assert "CursoNoEncontrado: No encuentro la carpeta del curso" in fuera.stderr
    assert "export CURSO_RAIZ=" in fuera.stderr
    con_variable = subprocess.run(orden, cwd=base, capture_output=True, text=True, timeout=60,
                                  env=_entorno_limpio(base / "casa", CURSO_RAIZ=str(rutas.RAIZ)))
    assert con_variable.returncode == 0 and con_variable.stdout.strip() == str(rutas.RAIZ)


def test_binder_y_el_contenedor_piden_python_311_y_postgresql():
    """Lo que leen repo2docker (runtime.txt, apt.txt) y VS Code o Codespaces (.devcontainer):
    sin runtime.txt, repo2docker usa Python 3.10, y el curso necesita 3.11 o más."""
    import tomllib
    runtime = (rutas.RAIZ / "runtime.txt").read_text(encoding="utf-8").strip()
    minimo = tomllib.loads((rutas.RAIZ / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert runtime == "python-3.11" and minimo == ">=3.11"
    paquetes = [l.partition("#")[0].strip() for l in (rutas.RAIZ / "apt.txt").read_text(encoding="utf-8").splitlines()]
    assert "postgresql" in paquetes
    contenedor = json.loads((rutas.RAIZ / ".devcontainer" / "devcontainer.json").read_text(encoding="utf-8"))
    assert "python:3.11" in contenedor["image"]
    assert "postgresql" in contenedor["postCreateCommand"] and "pip install -r requirements.txt" in contenedor["postCreateCommand"]
