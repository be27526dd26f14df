"""Fixtures que comparten los tests del curso: la carpeta temporal vigilada y PostgreSQL
(`postgres`, `esquema_postgres`: ver curso/postgres/fixtures.py). Las del navegador (un JupyterLab
y un Chromium para toda la sesión, una pestaña por test) están en tests/navegador/conftest.py.

Los tests van por lo que prueban: `equipo/` (curso/: la línea de órdenes, el servidor de ensayo,
el explorador de carreras, las vistas, las medidas...), `lecciones/` (el código de los puntos de
control, las comprobaciones de los ejercicios, las ejecuciones de cada lección) y `navegador/`
(los widgets dibujados de verdad en JupyterLab). Las ayudas comunes, en tests/ayudas.py."""
import tempfile

import pytest

from curso.postgres.fixtures import esquema_postgres, postgres  # noqa: F401  (fixtures)


# --- La carpeta temporal del sistema, vigilada ---------------------------------------------------

@pytest.fixture
def temporal(tmp_path, monkeypatch):
    """La carpeta temporal del sistema, una propia y vacía; al acabar, tiene que seguir vacía."""
    carpeta = tmp_path / "temporal_del_sistema"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    yield carpeta
    assert list(carpeta.iterdir()) == []
