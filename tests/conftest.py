"""Fixtures que comparten los tests del curso: un JupyterLab y un Chromium para toda la sesión, y
PostgreSQL (`postgres`, `esquema_postgres`: ver curso/pruebas_postgres.py)."""
import tempfile

import pytest

from curso.pruebas_postgres import esquema_postgres, postgres  # noqa: F401  (fixtures)


# --- Los tests del navegador: un JupyterLab y un Chromium para toda la sesión --------------------

@pytest.fixture(scope="session")
def servidor(tmp_path_factory):
    """La url de un JupyterLab que sirve una carpeta temporal (los cuadernos se copian ahí)."""
    from navegador import exigir_navegador, servidor_jupyter
    exigir_navegador()
    with servidor_jupyter(tmp_path_factory.mktemp("jupyter")) as (url, _proceso):
        yield url


@pytest.fixture(scope="session")
def navegador():
    from navegador import abrir_navegador, exigir_navegador
    exigir_navegador()
    with abrir_navegador() as chromium:
        yield chromium


@pytest.fixture
def pagina(request, navegador):
    """Una pestaña nueva para el test; si el test falla, una captura `<test>-fallo.png`."""
    from navegador import captura, nueva_pagina
    nueva = nueva_pagina(navegador)
    fallos = request.session.testsfailed
    yield nueva
    if request.session.testsfailed > fallos:
        captura(nueva, f"{request.node.name}-fallo")
    nueva.context.close()


# --- La carpeta temporal del sistema, vigilada ---------------------------------------------------

@pytest.fixture
def temporal(tmp_path, monkeypatch):
    """La carpeta temporal del sistema, una propia y vacía; al acabar, tiene que seguir vacía."""
    carpeta = tmp_path / "temporal_del_sistema"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    yield carpeta
    assert list(carpeta.iterdir()) == []
