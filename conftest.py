"""Configuración de pytest para todo el repositorio.

Los cuadernos y los tests escriben módulos en un espacio de trabajo. Los tests no tocan nunca
`mi_agente/`: usan uno temporal (variable CURSO_ESPACIO), y cada cuaderno que corre nbval, uno
nuevo y vacío, como el de quien empieza esa lección desde el punto de control anterior. El núcleo
de Jupyter que arranca nbval hereda la variable.
"""
import os
import tempfile

import pytest

_cuadernos_preparados = set()


def pytest_configure(config):
    if not os.environ.get("CURSO_ESPACIO"):
        os.environ["CURSO_ESPACIO"] = os.path.join(tempfile.mkdtemp(prefix="curso-pruebas-"), "espacio")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Antes de la primera celda de cada cuaderno (antes de arrancar su núcleo), un espacio nuevo."""
    cuaderno = item.parent
    if str(cuaderno.path).endswith(".ipynb") and cuaderno.path not in _cuadernos_preparados:
        _cuadernos_preparados.add(cuaderno.path)
        os.environ["CURSO_ESPACIO"] = os.path.join(tempfile.mkdtemp(prefix="curso-cuaderno-"), "espacio")
