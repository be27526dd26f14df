"""Una celda de ejercicio se lee de una vez: ninguna enseña al alumno más de 150 líneas.

Se mide lo que ve el alumno: la celda de notebooks/, con los esbozos en lugar de las soluciones.
Un módulo más largo se escribe en varias celdas: la primera crea el fichero y las siguientes le
añaden piezas con `%%modulo NOMBRE --cambia` (ver curso/alumno/componer.py), como agentes.py en la
lección 06.
"""
import re

import nbformat
import pytest

from curso import rutas
from curso.comprobaciones import esbozos
from curso.comprobaciones import ejercicios

LINEAS_POR_CELDA = 150  # el objetivo del issue de andamiaje: lo que cabe en una lectura
CUADERNOS = sorted(rutas.CUADERNOS.glob("[0-9][0-9]*_*.ipynb"))


def celdas_de_ejercicio(cuaderno):
    """{id: (número de líneas, ejercicios)} de cada celda de ejercicio del cuaderno."""
    celdas = {}
    for celda in nbformat.read(cuaderno, as_version=4).cells:
        marca = esbozos.ejercicio_de(celda) if celda.cell_type == "code" else None
        if marca:
            ids = set(marca.values()) if isinstance(marca, dict) else {marca}
            celdas[celda.id] = (len(celda.source.splitlines()), ids)
    return celdas


@pytest.mark.parametrize("cuaderno", CUADERNOS, ids=lambda p: p.name)
def test_ninguna_celda_de_ejercicio_ensena_mas_de_150_lineas(cuaderno):
    largas = {id: lineas for id, (lineas, _) in celdas_de_ejercicio(cuaderno).items() if lineas > LINEAS_POR_CELDA}
    assert not largas, (f"{cuaderno.name}: celdas de ejercicio con más de {LINEAS_POR_CELDA} líneas "
                        f"{largas}; pártelas con %%modulo NOMBRE --cambia")


def test_se_mide_la_celda_de_cada_ejercicio_y_es_la_del_alumno():
    """Que la medida no pase por no encontrar nada: cada ejercicio de la lección de un cuaderno
    tiene su celda en él, y esa celda lleva el esbozo (es lo que ve el alumno, no la solución)."""
    registro = ejercicios.cargar_registro()
    for cuaderno in CUADERNOS:
        celdas = {c.id: c for c in nbformat.read(cuaderno, as_version=4).cells}
        medidos = set()
        for id, (_, ids) in celdas_de_ejercicio(cuaderno).items():
            medidos |= ids
            assert "raise NotImplementedError" in celdas[id].source, f"{cuaderno.name}, celda {id}: sin esbozo"
            assert esbozos.INICIO not in celdas[id].source, f"{cuaderno.name}, celda {id}: con la solución"
        leccion = rutas.numero_de_leccion(cuaderno.name)
        assert {id for id, e in registro.items() if e.leccion == leccion} == medidos, cuaderno.name


COMPROBAR = re.compile(r'^comprobar\("(\d+\.\d+)"\)', re.M)


def desordenados(resuelto):
    """Los ejercicios de `resuelto` que se comprueban antes de la última celda %%modulo de su
    módulo: [(ejercicio, módulo)]."""
    registro = ejercicios.cargar_registro()
    ultima, desorden = {}, []
    celdas = [c for c in nbformat.read(resuelto, as_version=4).cells if c.cell_type == "code"]
    for i, celda in enumerate(celdas):
        primera = celda.source.split("\n", 1)[0].split()
        if primera[:1] == ["%%modulo"] and len(primera) > 1:
            ultima[primera[1]] = i
    for i, celda in enumerate(celdas):
        for id in COMPROBAR.findall(celda.source):
            modulo = registro[id].modulo
            if modulo and ultima.get(modulo, -1) > i:
                desorden.append((id, modulo))
    return desorden


@pytest.mark.parametrize("resuelto", sorted(rutas.SOLUCIONES.glob("[0-9][0-9]*_*.ipynb")), ids=lambda p: p.name)
def test_un_ejercicio_se_comprueba_detras_de_la_ultima_celda_de_su_modulo(resuelto):
    """Si `comprobar` lo deja pendiente, la lección pasa a la versión de referencia del módulo, y
    una celda --cambia posterior se compondría sobre ella: el fichero del alumno acabaría con la
    solución de su ejercicio, y `comparar` ya no lo diría pendiente."""
    assert desordenados(resuelto) == [], f"{resuelto.name}: comprueba estos ejercicios después de su última celda"
