"""Para `comprobar N` y `calificar`: qué tests hay en cada punto de control, cuáles califican y de qué ejercicio es cada uno, y los de los ejercicios.

- Los tests de un punto de control se leen de su código (ast), sin importarlos: importarlos
  importaría los módulos, y los del alumno solo se importan aparte (`curso/comprobaciones/aparte.py`). Un test es
  una función de test («test_bucle.py::test_x»): sus casos parametrizados cuentan juntos.
- Califican (`que_califican`) los de los ejercicios, más los de contrato de un punto de control (la
  marca `contrato`, `curso/comprobaciones/contrato.py`); los demás son de regresión y no se corren
  contra un alumno. Cada test que califica sabe su ejercicio (`ejercicio_de`), y con él su módulo
  y su lección.
- Los ejercicios que viven en un módulo (`comprobar("3.2")` en el cuaderno) se corren aparte como
  tests: la copia lleva un fichero más, EJERCICIOS, con un test por ejercicio que hace lo que hace
  `comprobar` con él: sus casos contra el módulo de la copia y, si solo esperan al esbozo de otro
  ejercicio, otra vez con la versión de referencia del módulo de ese otro.
"""
import ast
from functools import lru_cache
from pathlib import Path

from curso import rutas

EJERCICIOS = "test_ejercicios_del_curso.py"  # el fichero de los ejercicios en la copia
CUADERNO = "celdas_del_cuaderno"  # la carpeta de la copia con las celdas de los ejercicios del cuaderno


def funciones_de_test(fichero):
    """Los nombres de las funciones de test de un fichero, en orden (también las de clases Test*)."""
    arbol = ast.parse(Path(fichero).read_text(encoding="utf-8"))
    nombres = []
    for nodo in arbol.body:
        if isinstance(nodo, (ast.FunctionDef, ast.AsyncFunctionDef)) and nodo.name.startswith("test"):
            nombres.append(nodo.name)
        elif isinstance(nodo, ast.ClassDef) and nodo.name.startswith("Test"):
            nombres += [f"{nodo.name}::{m.name}" for m in nodo.body
                        if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return nombres


def tests_del_punto(carpeta_punto):
    """["test_bucle.py::test_x", ...]: los tests del punto de control, fichero a fichero."""
    return [f"{f.name}::{nombre}" for f in sorted((Path(carpeta_punto) / "tests").glob("test_*.py"))
            for nombre in funciones_de_test(f)]


def ejercicios_con_modulo(carpeta_punto):
    """Los ejercicios que se comprueban en un módulo que tiene el punto de control, de su lección o de
    las anteriores, en orden: los que `comprobar N` corre con `evaluar`, como el cuaderno."""
    from curso.comprobaciones import ejercicios
    numero = rutas.numero_de_leccion(Path(carpeta_punto).name)
    modulos = {p.stem for p in Path(carpeta_punto).glob("*.py")}
    registro = ejercicios.cargar_registro()
    return ejercicios.ordenados(id for id, e in registro.items()
                                if e.modulo in modulos and e.leccion <= numero)


def que_califican(carpeta_punto, ejercicios=None):
    """{test: ejercicio} de lo que califica a un alumno contra el punto de control: los tests de
    contrato (los de su marca) y un test por ejercicio (`ejercicios`, o `ejercicios_con_modulo`),
    en ese orden."""
    from curso.comprobaciones.contrato import contratos_del_punto
    ejercicios = ejercicios_con_modulo(carpeta_punto) if ejercicios is None else ejercicios
    return {**contratos_del_punto(carpeta_punto), **{test_de_ejercicio(id): id for id in ejercicios}}


def modulo_del_ejercicio(id):
    """El módulo (sin .py) en el que se comprueba el ejercicio `id`, o None si es del cuaderno."""
    from curso.comprobaciones import ejercicios
    e = ejercicios.cargar_registro().get(id)
    return e.modulo if e else None


def leccion_del_ejercicio(id):
    from curso.comprobaciones import ejercicios
    return ejercicios.cargar_registro()[id].leccion


@lru_cache(maxsize=4)
def _lecciones_de_los_tests(puntos):
    leccion = {}
    for numero, carpeta in puntos:
        for test in tests_del_punto(carpeta):
            leccion.setdefault(test, numero)
    return leccion


def leccion_de_cada_test():
    """{test: la lección que lo trae}: la del primer punto de control que lo tiene."""
    return _lecciones_de_los_tests(tuple(sorted(rutas.puntos_de_control().items())))


def fichero_de(test):
    """test_bucle.py de «test_bucle.py::test_x[caso]»."""
    return test.split("::")[0]


def funcion_de(nodeid):
    """«test_bucle.py::test_x» de un nodeid de pytest («checkpoints/…/tests/test_bucle.py::test_x[a]»)."""
    partes = nodeid.split("::")
    return "::".join([Path(partes[0]).name, *partes[1:]]).split("[")[0]



def texto_de_los_ejercicios(ids):
    """El fichero de tests de los ejercicios `ids` (ver el docstring del módulo)."""
    return f'''"""Los ejercicios {", ".join(ids)} contra los módulos de esta copia (lo escribe curso/comprobaciones/aparte.py)."""
import shutil
from pathlib import Path

import pytest

from curso import rutas
from curso.comprobaciones import ejercicios

PUNTO = Path(__file__).resolve().parent.parent
VUELTAS = 4  # un ejercicio que espera a otro que espera a otro...


def _con_referencias(base, resultado, carpeta):
    """Una copia de `base` con la versión de referencia de los módulos a cuyos esbozos llegó."""
    otra = carpeta / f"espacio{{len(list(carpeta.iterdir()))}}"
    shutil.copytree(base, otra, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for id in resultado.esperando_a:
        e = ejercicios.REGISTRO.get(id)
        referencia = e and e.modulo and rutas.puntos_de_control()[e.leccion] / f"{{e.modulo}}.py"
        if referencia and referencia.exists():
            shutil.copyfile(referencia, otra / referencia.name)
    return otra


def _comprobar(id, request, monkeypatch, tmp_path):
    if ejercicios.buscar(id).leccion >= 7:  # el servidor de la sesión, si el conftest lo tiene
        try:
            monkeypatch.setenv("CURSO_POSTGRES", request.getfixturevalue("postgres"))
        except pytest.FixtureLookupError:
            pass
    espacio = PUNTO
    if ejercicios.buscar(id).modulo is None:
        return _del_cuaderno(id)
    resultado = ejercicios.evaluar(id, espacio=espacio)
    for _ in range(VUELTAS):
        if not resultado.solo_espera:
            break
        ejercicios.olvidar_modulos(espacio)
        espacio = _con_referencias(espacio, resultado, tmp_path)
        resultado = ejercicios.evaluar(id, espacio=espacio)
    ejercicios.olvidar_modulos(espacio)
    _decir(id, resultado)


def _del_cuaderno(id):
    """Un ejercicio que es una función del cuaderno: la de la celda del alumno, ejecutada sola aquí,
    igual que en el cuaderno (`curso/comprobaciones/celda_sola.py`)."""
    from curso.comprobaciones.celda_sola import de_la_celda
    e = ejercicios.buscar(id)
    celda = PUNTO / {CUADERNO!r} / f"{{id}}.py"
    if not celda.exists():
        pytest.fail(f"No está la celda del ejercicio {{id}} de su cuaderno.", pytrace=False)
    funcion, problema = de_la_celda(celda.read_text(encoding="utf-8"), id, e.nombre)
    if problema:
        pytest.fail(problema, pytrace=False)
    _decir(id, ejercicios.evaluar(id, objetivo=funcion))


def _decir(id, resultado):
    if resultado.aprobado:
        return
    if resultado.pendiente_propio:
        raise NotImplementedError(f"Ejercicio {{id}} pendiente: su función sigue siendo el esbozo.")
    if resultado.problema:
        pytest.fail(resultado.problema, pytrace=False)
    mala = next(l for l in resultado.lineas if l.estado != "ok")
    if mala.estado == "pendiente":
        que = f"llega a {{mala.donde}}, que todavía es un esbozo"
    elif mala.estado == "error":
        que = f"lanzó {{mala.detalle}}"
    else:
        # Con su detalle: en el diferencial, la entrada más pequeña en que no coinciden y la pista.
        que = (f"esperaba {{ejercicios.corto(mala.esperado, 80)}}, llegó {{ejercicios.corto(mala.obtenido, 80)}}"
               + (f" ({{mala.detalle}})" if mala.detalle else ""))
    explicacion = ejercicios.explicacion(ejercicios.buscar(id), mala)
    pytest.fail(f"{{mala.caso}}: {{que}}" + (f". Eso quiere decir: {{explicacion}}" if explicacion else ""), pytrace=False)
''' + "".join(f"""

def {funcion_de_ejercicio(id)}(request, monkeypatch, tmp_path):
    _comprobar({id!r}, request, monkeypatch, tmp_path)
""" for id in ids)


def funcion_de_ejercicio(id):
    """El nombre del test del ejercicio `id` en EJERCICIOS: test_ejercicio_3_2."""
    return "test_ejercicio_" + id.replace(".", "_")


def test_de_ejercicio(id):
    return f"{EJERCICIOS}::{funcion_de_ejercicio(id)}"


def ejercicio_de_test(test):
    """"3.2" de «test_ejercicios_del_curso.py::test_ejercicio_3_2», o None si no es de un ejercicio."""
    if fichero_de(test) != EJERCICIOS:
        return None
    return test.split("::")[1].removeprefix("test_ejercicio_").replace("_", ".")
