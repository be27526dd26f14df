"""Las variantes de tests/variantes.py contra las comprobaciones de los cuadernos: cada segunda solución pasa la suya, cada error escrito cae en el caso que dice.

Cada variante se ejecuta como la celda que escribiría el alumno: con `%%modulo X --cambia`, sobre
el módulo del punto de control de su lección (`variantes.aplicar`); las funciones del cuaderno
(lección 02 y 3.1), definidas tal cual. Lo que la comprobación da por bueno tiene que seguir bueno
en todo lo que viene después: eso lo mira test_contrato.py.
"""
import shutil
import tempfile

import pytest

from curso import rutas
import variantes
from curso.comprobaciones import ejercicios
from curso.postgres.cluster import VARIABLE_DE_CONEXION

ejercicios.cargar_registro()


def evaluar(variante, carpeta):
    """El Resultado de la comprobación del ejercicio de `variante`, con ella puesta en un espacio."""
    e = ejercicios.buscar(variante.ejercicio)
    if variante.modulo is None:
        return ejercicios.evaluar(e.id, variantes.funcion(variante, e.nombre))
    espacio = carpeta / "espacio"
    shutil.copytree(rutas.puntos_de_control()[e.leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    fichero = espacio / f"{variante.modulo}.py"
    fichero.write_text(variantes.aplicar(variante, fichero.read_text(encoding="utf-8")), encoding="utf-8")
    try:
        return ejercicios.evaluar(e.id, espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)


@pytest.fixture
def con_postgres_si_hace_falta(request, tmp_path, monkeypatch):
    """Para los ejercicios de la lección 07: el servidor de la sesión (como CURSO_POSTGRES en el
    cuaderno) y sus temporales en la carpeta de este test."""
    variante = request.node.callspec.params["variante"]
    if variante.ejercicio.startswith("7."):
        monkeypatch.setenv(VARIABLE_DE_CONEXION, request.getfixturevalue("postgres"))
        carpeta = tmp_path / "temporales"
        carpeta.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(carpeta))


def test_cada_ejercicio_tiene_su_segunda_solucion_y_algun_error():
    assert set(variantes.SEGUNDAS) == set(ejercicios.REGISTRO)
    assert {id for id, errores in variantes.ERRORES.items() if errores} == set(ejercicios.REGISTRO)


def test_cada_variante_es_del_modulo_de_su_ejercicio_y_su_celda_empieza_por_modulo():
    for v in variantes.todas():
        assert v.modulo == ejercicios.buscar(v.ejercicio).modulo, v
        primera = variantes.celda(v).split("\n", 1)[0]
        assert primera == (f"%%modulo {v.modulo} --cambia" if v.modulo else primera), v


def test_aplicar_sustituye_la_funcion_y_deja_lo_demas():
    """La ingenua (pegar la celda al final del fichero) deja dos definiciones de la función."""
    v = variantes.SEGUNDAS["1.2"]
    antes = (rutas.puntos_de_control()[1] / "permisos.py").read_text(encoding="utf-8")
    despues = variantes.aplicar(v, antes)
    assert despues.count("def permitido(") == 1 and v.texto.strip() in despues
    assert despues.count("def atender(") == 1
    pegada = antes + "\n" + v.texto
    assert pegada.count("def permitido(") == 2


@pytest.mark.parametrize("variante", list(variantes.SEGUNDAS.values()), ids=lambda v: v.ejercicio)
def test_cada_segunda_solucion_pasa_la_comprobacion_del_cuaderno(variante, tmp_path, con_postgres_si_hace_falta):
    resultado = evaluar(variante, tmp_path)
    assert resultado.aprobado, ejercicios.informe(resultado)


ERRORES = [v for id in sorted(variantes.ERRORES, key=ejercicios.clave) for v in variantes.ERRORES[id]]


@pytest.mark.parametrize("variante", ERRORES, ids=lambda v: f"{v.ejercicio} {v.nombre}")
def test_cada_error_escrito_lo_pilla_el_caso_que_dice_y_el_diferencial(variante, tmp_path, con_postgres_si_hace_falta):
    """Que falle no basta: tiene que fallar el caso escrito para ese error, y ninguno quedar pendiente.
    Y el diferencial, que no sabe de ningún error, también lo pilla (su línea es la última).

    Los errores cuyo caso es el diferencial (los del hallazgo 10 de la issue 40: plausibles, y que
    ningún caso escrito pilla) lo demuestran: todos los casos escritos en verde, el diferencial en rojo."""
    resultado = evaluar(variante, tmp_path)
    rojos = [l.caso for l in resultado.lineas if l.estado in ("fallo", "error")]
    informe = ejercicios.informe(resultado)
    assert not resultado.problema and not resultado.pendiente, informe
    assert [c for c in ejercicios.buscar(variante.ejercicio).casos if variante.caso in c.descripcion], \
        f"«{variante.caso}» no nombra ningún caso de {variante.ejercicio}"
    assert any(variante.caso in caso for caso in rojos), informe
    *escritos, dif = resultado.lineas
    assert dif.estado in ("fallo", "error"), f"el diferencial no pilla «{variante.nombre}»:\n{informe}"
    if variante.caso == variantes.LO_MISMO:
        assert all(l.estado == "ok" for l in escritos), f"un caso escrito ya lo pillaba:\n{informe}"


def test_los_errores_del_hallazgo_10_son_varios_por_ejercicio_de_la_03b_la_06_y_la_07():
    """Para cada ejercicio de la 03b, la 06 y la 07, al menos dos errores plausibles que solo pilla el
    diferencial (el test de arriba comprueba que los casos escritos no, y el diferencial sí)."""
    for id in ("3b.1", "6.1", "6.2", "6.3", "7.1", "7.2"):
        suyos = [v for v in variantes.ERRORES[id] if v.caso == variantes.LO_MISMO]
        assert len(suyos) >= 2, id
