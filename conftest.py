"""Configuración de pytest para todo el repositorio.

Los cuadernos y los tests escriben módulos en un espacio de trabajo. Si quien lanza pytest no ha
dicho cuál (variable CURSO_ESPACIO), se usa uno temporal: los tests no tocan nunca `mi_agente/`.
El núcleo de Jupyter que arranca nbval hereda la variable.
"""
import os
import tempfile


def pytest_configure(config):
    if not os.environ.get("CURSO_ESPACIO"):
        os.environ["CURSO_ESPACIO"] = os.path.join(tempfile.mkdtemp(prefix="curso-pruebas-"), "espacio")
