"""Configuración de pytest para todo el repositorio.

Los cuadernos y los tests escriben módulos en un espacio de trabajo. Los tests no tocan nunca
`mi_agente/`: usan uno temporal (variable CURSO_ESPACIO). El núcleo de Jupyter que arranca nbval
hereda la variable:

- cada cuaderno resuelto (`solutions/`) empieza con un espacio nuevo y vacío, como el de quien
  empieza esa lección desde el punto de control anterior: así su salida, que nbval compara, es
  siempre la misma;
- los cuadernos del alumno (`notebooks/`) comparten un solo espacio, en orden, como quien los
  ejecuta todos de arriba abajo sin resolver nada: cada lección empieza con los esbozos que dejaron
  las anteriores, y tiene que correr igual (`--nbval-lax notebooks/` es ese camino del alumno).

Dos marcas por regla, aquí:

- `profundo` (con su clase): lo que `python -m curso probar` deja para `probar --todo`; la regla, con
  sus clases y el humo de cada una, está en curso/autor/niveles.py.
- `lento`: lo que `probar --rapido` (para editar) tampoco corre: cada celda de un cuaderno
  (nbval), cada test de tests/navegador/ y de tests/caminos/, cada simulacro de caídas en muchos
  puntos, que se reconoce por su nombre (`SIMULACRO`: «cien caídas al azar», «una caída en cada
  paso de…», «muere en cada llamada…»; una caída en un solo punto no lo es, y es el humo de los
  simulacros), y cada test que la última `medir probar` vio tardar (`LENTOS` de
  curso/autor/probar.py); el cuaderno resuelto de humo (`CUADERNO_DE_HUMO` de
  curso/autor/probar.py), además, `humo` (`probar --rapido` corre lo que no es profundo ni
  lento, más lo que lleva `humo`).

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
_espacio_del_alumno = None  # el que comparten los cuadernos de notebooks/


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


_LENTOS_POR_CARPETA = ("navegador", "caminos")  # carpetas de tests/ cuyos tests son todos lentos


@pytest.hookimpl(tryfirst=True)  # antes de que -m elija por las marcas
def pytest_collection_modifyitems(config, items):
    """Las marcas `profundo` y `lento` por regla (ver arriba), y `humo` en las celdas del cuaderno
    resuelto de humo."""
    from curso.autor import niveles
    from curso.autor.probar import CUADERNO_DE_HUMO, es_lento, lentos_apuntados
    from curso.medir.perfil_de_probar import fixtures_compartidas
    tests = [item for item in items if item.path.suffix != ".ipynb"]
    for item, clase in _profundos(tests, niveles):
        item.add_marker(pytest.mark.profundo(clase))
    raiz = config.rootpath
    lentos = lentos_apuntados()
    for item in items:
        if es_lento(item.nodeid, fixtures_compartidas(item), lentos):
            item.add_marker(pytest.mark.lento)
        ruta = item.path
        if ruta.suffix == ".ipynb":
            item.add_marker(pytest.mark.lento)
            if ruta.parent.name == "solutions" and ruta.stem == CUADERNO_DE_HUMO:
                item.add_marker(pytest.mark.humo)
            continue
        if niveles.SIMULACRO.search(getattr(item, "originalname", item.name)):
            item.add_marker(pytest.mark.lento)
        try:
            partes = ruta.relative_to(raiz).parts
        except ValueError:
            continue
        if len(partes) > 2 and partes[0] == "tests" and partes[1] in _LENTOS_POR_CARPETA:
            item.add_marker(pytest.mark.lento)


def _profundos(items, niveles):
    """[(item, su clase profunda)] de los `items` profundos según la regla de niveles.py."""
    pruebas = {item.nodeid: item for item in items}
    clases = niveles.clases_profundas(niveles.prueba_de(item) for item in items)
    return [(pruebas[nodeid], clase) for nodeid, clase in clases.items()]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Antes de la primera celda de cada cuaderno (antes de arrancar su núcleo), su espacio: uno
    nuevo para cada cuaderno resuelto; para los del alumno, uno para todos (el primero que llega).
    Y, si `probar` la da, la caché de las celdas pesadas (curso/material/una_vez.py)."""
    global _espacio_del_alumno
    cuaderno = item.parent
    if not str(cuaderno.path).endswith(".ipynb") or cuaderno.path in _cuadernos_preparados:
        return
    _cuadernos_preparados.add(cuaderno.path)
    from curso.material import una_vez
    if os.environ.get(una_vez.PARA_NUCLEOS):  # la caché de las celdas pesadas, para su núcleo
        os.environ[una_vez.VARIABLE] = os.environ[una_vez.PARA_NUCLEOS]
    if cuaderno.path.parent.name == "notebooks":
        if _espacio_del_alumno is None:
            _espacio_del_alumno = os.path.join(_carpeta_temporal("curso-alumno-"), "espacio")
        os.environ["CURSO_ESPACIO"] = _espacio_del_alumno
    else:
        os.environ["CURSO_ESPACIO"] = os.path.join(_carpeta_temporal("curso-cuaderno-"), "espacio")
