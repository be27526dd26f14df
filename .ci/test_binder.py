"""Lo que hace repo2docker (Binder) con este repositorio, repetido paso a paso sin Docker.

Lo corre .ci/run después de la orden de tests del README (necesita el paquete jupyter-repo2docker
y descargar todo requirements.txt, minutos: no cabe en el presupuesto de esa orden).

1. Qué ficheros mira y qué haría: `repo2docker --no-build` (su propio código, sin Docker) escribe
   el Dockerfile de una copia del repositorio. Python 3.11 (runtime.txt), `apt-get install
   postgresql` (apt.txt), y sus dos `pip install`: requirements.txt y, porque hay pyproject.toml,
   el curso sin -e. Sin runtime.txt ni apt.txt, lo mismo daría otro Python y ningún PostgreSQL.
2. Sus `pip install`, tal cual, en un entorno nuevo con este Python 3.11 (sin `--no-cache-dir`,
   para aprovechar lo que .ci/run ya descargó) y desde la copia, como los corre repo2docker.
3. La lección 01 desde notebooks/ de la copia, con un núcleo de ese entorno: el curso, instalado
   en site-packages, encuentra la copia subiendo desde la carpeta del cuaderno.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curso import rutas

repo2docker = pytest.importorskip("repo2docker", reason="pip install jupyter-repo2docker (lo hace .ci/run)")


def copia_del_repositorio(destino):
    """Los ficheros que sigue git, como los copia repo2docker a la imagen (COPY . ${REPO_DIR})."""
    ficheros = subprocess.run(["git", "ls-files", "-z"], cwd=rutas.RAIZ, capture_output=True, check=True
                              ).stdout.decode().split("\0")
    for relativo in filter(None, ficheros):
        origen = rutas.RAIZ / relativo
        if origen.is_file():
            (destino / relativo).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origen, destino / relativo)
    return destino


def dockerfile(repo):
    """(el Dockerfile que escribe `repo2docker --no-build`, lo que dice mientras tanto)."""
    hecho = subprocess.run([sys.executable, "-m", "repo2docker", "--no-build", "--user-id", "1000",
                            "--user-name", "jovyan", str(repo)], capture_output=True, text=True, timeout=300)
    assert hecho.returncode == 0, hecho.stderr
    return hecho.stdout, hecho.stderr


def ordenes(texto):
    """Las órdenes RUN del Dockerfile, cada una en una línea."""
    return [re.sub(r"\s*\\\n\s*", " ", m).strip() for m in re.findall(r"^RUN (.*?)(?<!\\)$", texto, re.M | re.S)]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return copia_del_repositorio(tmp_path_factory.mktemp("repo2docker") / "repo")


def test_repo2docker_elige_python_311_postgresql_e_instala_el_curso_sin_editable(repo, tmp_path):
    texto, dice = dockerfile(repo)
    assert "Building conda environment for python=3.11" in dice
    runs = ordenes(texto)
    assert any(re.search(r"apt-get install --yes --no-install-recommends .*\bpostgresql\b", r) for r in runs)
    pips = [r for r in runs if "/bin/pip install" in r]
    assert pips == ['${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir -r "requirements.txt"',
                    "${KERNEL_PYTHON_PREFIX}/bin/pip install --no-cache-dir ."]
    # Sin runtime.txt ni apt.txt (la variante ingenua): otro Python, y sin PostgreSQL para la 07.
    ingenuo = copia_del_repositorio(tmp_path / "ingenuo")
    (ingenuo / "runtime.txt").unlink()
    (ingenuo / "apt.txt").unlink()
    texto, dice = dockerfile(ingenuo)
    assert "Building conda environment for python=3.11" not in dice
    assert not any("postgresql" in r for r in ordenes(texto))


def test_los_pip_install_de_repo2docker_dejan_un_curso_que_corre_la_leccion_01(repo, tmp_path):
    texto, _ = dockerfile(repo)
    venv = tmp_path / "kernel"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    casa, temporal, espacio = tmp_path / "casa", tmp_path / "temporal", tmp_path / "espacio"
    casa.mkdir()
    temporal.mkdir()
    fuera = {"CURSO_RAIZ", "PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_DATA_DIR", "PIP_NO_CACHE_DIR"}
    entorno = {k: v for k, v in os.environ.items() if k not in fuera}
    for orden in [r for r in ordenes(texto) if "/bin/pip install" in r]:
        orden = orden.replace("${KERNEL_PYTHON_PREFIX}/bin/pip", f"{venv}/bin/python -m pip").replace(" --no-cache-dir", "")
        hecho = subprocess.run(orden + " -q", shell=True, cwd=repo, env=entorno, capture_output=True, text=True,
                               timeout=1800)
        assert hecho.returncode == 0, f"{orden}\n{hecho.stdout[-2000:]}{hecho.stderr[-2000:]}"
    programa = textwrap.dedent("""
        import json, nbformat, nbclient
        cuaderno = nbformat.read("01_el_bucle.ipynb", as_version=4)
        cuaderno.cells.append(nbformat.v4.new_code_cell(
            "import json, sys, curso, curso.rutas\\n"
            "print(json.dumps([sys.executable, curso.__file__, str(curso.rutas.RAIZ)]))"))
        nbclient.NotebookClient(cuaderno, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": "."}}).execute()
        print(cuaderno.cells[-1].outputs[0]["text"], end="")
    """)
    hecho = subprocess.run([str(venv / "bin" / "python"), "-c", programa], cwd=repo / "notebooks",
                           capture_output=True, text=True, timeout=900,
                           env={**entorno, "HOME": str(casa), "TMPDIR": str(temporal), "CURSO_ESPACIO": str(espacio)})
    assert hecho.returncode == 0, hecho.stderr[-3000:]
    ejecutable, paquete, raiz = json.loads(hecho.stdout.strip().splitlines()[-1])
    assert Path(ejecutable).parent == venv / "bin"
    assert "site-packages" in paquete and Path(paquete).is_relative_to(venv)  # pip install ., sin -e
    assert Path(raiz) == repo
    assert list(temporal.iterdir()) == []
