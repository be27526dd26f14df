"""Una fuente por lección: los cuadernos, los puntos de control y las lecciones cuadran entre sí."""
import nbformat
import pytest

from curso import rutas
from curso.autor import generar, repetidos
from curso.rutas import LECCIONES

RESUELTOS = sorted(rutas.SOLUCIONES.glob("[0-9][0-9]*_*.ipynb"))


@pytest.mark.parametrize("resuelto", RESUELTOS, ids=lambda p: p.name)
def test_el_cuaderno_del_alumno_es_lo_que_escribe_generar(resuelto):
    alumno = rutas.CUADERNOS / resuelto.name
    assert alumno.exists(), f"falta {alumno.name}: ejecuta python -m curso generar"
    assert alumno.read_text(encoding="utf-8") == generar.texto_del_alumno(resuelto), (
        f"notebooks/{resuelto.name} no es lo que escribiría generar: ejecuta python -m curso generar")


def test_cada_leccion_tiene_cuaderno_resuelto_y_punto_de_control():
    puntos = rutas.puntos_de_control()
    for numero, leccion in LECCIONES.items():
        assert (rutas.SOLUCIONES / f"{leccion['cuaderno']}.ipynb").exists()
        assert numero in puntos and puntos[numero].name == leccion.get("punto", leccion["cuaderno"])


def test_puntos_de_control_seguidos_solo_difieren_en_lo_que_declara_la_leccion():
    puntos = rutas.puntos_de_control()
    for numero in sorted(LECCIONES)[1:]:
        antes, despues = puntos[rutas.anterior(numero)], puntos[numero]
        a, d = set(rutas.ficheros(antes)), set(rutas.ficheros(despues))
        distintos = {f for f in a | d
                     if f not in a or f not in d or (antes / f).read_bytes() != (despues / f).read_bytes()}
        declarados = set(LECCIONES[numero]["ficheros"])
        assert distintos <= declarados, (
            f"la lección {numero:02d} cambia {sorted(distintos - declarados)} sin declararlo")
        assert a <= d, f"la lección {numero:02d} borra {sorted(a - d)}"


@pytest.mark.parametrize("resuelto", RESUELTOS, ids=lambda p: p.name)
def test_el_cuaderno_resuelto_termina_con_el_espacio_igual_al_punto_de_control(resuelto):
    """Tras la última celda %%modulo hay un comparar(N); nbval compara su salida, y aquí se mira cuál es."""
    numero = rutas.numero_de_leccion(resuelto.name)
    celdas = [c for c in nbformat.read(resuelto, as_version=4).cells if c.cell_type == "code"]
    # comparar(4), o comparar("3b") para una lección intercalada
    comparaciones = [i for i, c in enumerate(celdas) if c.source.strip() in (f"comparar({numero})", f'comparar("{numero}")')]
    escrituras = [i for i, c in enumerate(celdas) if c.source.startswith("%%modulo")]
    assert comparaciones, f"el cuaderno no termina comparando con el punto de control {numero:02d}"
    assert comparaciones[-1] > max(escrituras, default=-1), "hay celdas %%modulo después de comparar"
    ultima = celdas[comparaciones[-1]]
    texto = "".join(o.get("text", "") for o in ultima.outputs)
    assert f"Tu espacio coincide con el punto de control {numero:02d}" in texto, texto


def test_un_punto_de_control_no_pierde_tests_del_anterior():
    """Las carpetas tests/ también cuentan: lo que probaba el punto N-1 lo sigue probando el N."""
    puntos = rutas.puntos_de_control()
    for numero in sorted(LECCIONES)[1:]:
        antes = {p.name for p in (puntos[rutas.anterior(numero)] / "tests").glob("test_*.py")}
        despues = {p.name for p in (puntos[numero] / "tests").glob("test_*.py")}
        assert antes <= despues, f"el punto de control {numero:02d} pierde {sorted(antes - despues)}"


def test_cada_modulo_de_un_punto_de_control_tiene_un_test_suyo_que_lo_usa():
    """Un módulo está cubierto si algún test de la carpeta tests/ del mismo punto de control lo
    importa, lo carga por su nombre o ejecuta su fichero."""
    for numero in sorted(LECCIONES):
        carpeta = rutas.puntos_de_control()[numero]
        usados = set()
        for test in (carpeta / "tests").glob("test_*.py"):
            usados |= repetidos.nombres_usados(test.read_text(encoding="utf-8"))
        sin_test = sorted(p.name for p in carpeta.glob("*.py") if p.stem not in usados)
        assert not sin_test, f"el punto de control {numero:02d} no tiene tests de {sin_test}"


def test_las_copias_de_un_fichero_de_tests_son_identicas_donde_su_modulo_lo_es():
    """Entre puntos de control seguidos, un test cambia solo si la lección cambia algo de lo que
    depende: si no, sería una prueba distinta del mismo código."""
    puntos = rutas.puntos_de_control()
    for numero in sorted(LECCIONES)[1:]:
        for test in sorted((puntos[numero] / "tests").glob("test_*.py")):
            anterior = puntos[rutas.anterior(numero)] / "tests" / test.name
            if not anterior.exists() or anterior.read_bytes() == test.read_bytes():
                continue
            deps = {p.name for p in repetidos.dependencias(test, puntos[numero]) if p.parent == puntos[numero]}
            assert deps & set(LECCIONES[numero]["ficheros"]), (
                f"{test.name} cambia en el punto de control {numero:02d} sin que cambie nada de lo que prueba")


def test_todos_los_puntos_de_control_tienen_el_mismo_conftest():
    """Un solo conftest.py para los tests de todos los puntos de control: dos versiones distintas
    hacen que `repetidos` tome por pruebas distintas copias idénticas de un test, y `probar` las
    corra dos veces (con la de 01–03 y la de 04–07 corrían 153 tests de más)."""
    versiones = {}
    for numero, carpeta in rutas.puntos_de_control().items():
        versiones.setdefault((carpeta / "tests" / "conftest.py").read_bytes(), []).append(f"{numero:02d}")
    assert len(versiones) == 1, f"hay {len(versiones)} versiones de conftest.py: {sorted(versiones.values())}"
