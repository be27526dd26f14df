"""Las fixtures de los tests del navegador: un JupyterLab y un Chromium para toda la sesión, y una
pestaña por test. Las piezas (servidor, navegador, esperas, capturas) están en navegador.py."""
import pytest


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
