"""Configuración de pytest para todo el repositorio.

Los cuadernos y los tests escriben módulos en un espacio de trabajo. Los tests no tocan nunca
`mi_agente/`: usan uno temporal (variable CURSO_ESPACIO), y cada cuaderno que corre nbval, uno
nuevo y vacío, como el de quien empieza esa lección desde el punto de control anterior. El núcleo
de Jupyter que arranca nbval hereda la variable.

Una sesión de pytest deja la carpeta temporal del sistema como la encontró: las carpetas que crea
este fichero (los espacios y la base de los `tmp_path` de pytest, que si no guardaría las de las
tres últimas sesiones) se borran al terminar. Para conservar los `tmp_path` de una sesión y
mirarlos, dale tú la carpeta: `--basetemp=CARPETA`.
"""
import os
import shutil
import tempfile

import pytest

_cuadernos_preparados = set()
_carpetas_de_la_sesion = []  # las que hay que borrar al terminar
_espacio_de_antes = None


def _carpeta_temporal(prefijo):
    carpeta = tempfile.mkdtemp(prefix=prefijo)
    _carpetas_de_la_sesion.append(carpeta)
    return carpeta


@pytest.hookimpl(tryfirst=True)  # antes que el pytest_configure de pytest que lee --basetemp
def pytest_configure(config):
    global _espacio_de_antes
    _espacio_de_antes = os.environ.get("CURSO_ESPACIO")
    if not _espacio_de_antes:
        os.environ["CURSO_ESPACIO"] = os.path.join(_carpeta_temporal("curso-pruebas-"), "espacio")
    if config.option.basetemp is None:
        config.option.basetemp = _carpeta_temporal("curso-pytest-")


def pytest_unconfigure(config):
    for carpeta in _carpetas_de_la_sesion:
        shutil.rmtree(carpeta, ignore_errors=True)
    _carpetas_de_la_sesion.clear()
    if _espacio_de_antes:
        os.environ["CURSO_ESPACIO"] = _espacio_de_antes
    else:
        os.environ.pop("CURSO_ESPACIO", None)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Antes de la primera celda de cada cuaderno (antes de arrancar su núcleo), un espacio nuevo."""
    cuaderno = item.parent
    if str(cuaderno.path).endswith(".ipynb") and cuaderno.path not in _cuadernos_preparados:
        _cuadernos_preparados.add(cuaderno.path)
        os.environ["CURSO_ESPACIO"] = os.path.join(_carpeta_temporal("curso-cuaderno-"), "espacio")
