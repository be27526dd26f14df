"""La división de los tests de los puntos de control, probada: qué califica (la marca `contrato`) y que lo que califica no pide redacciones que el texto no fija.

Lo que guarda `curso/comprobaciones/contrato.py` (issue 40 §1):

- cada marca nombra un solo ejercicio, que existe, se comprueba en un módulo y es de la lección
  del punto de control o de una anterior (un test de contrato sabe su ejercicio);
- ningún test de contrato afirma una redacción que el texto de su ejercicio no fija: un `match=`
  de `pytest.raises`, un texto comparado con `==` o `in`, lo que busca `startswith` o
  `re.search`; y cada redacción que se da por fijada en REDACCIONES_QUE_FIJA_EL_TEXTO sigue
  haciendo falta (si no, sobra y se quita);
- cada test de contrato llega al código de su ejercicio: con sus funciones cambiadas por el
  esbozo, falla (`lento`: una corrida por ejercicio). Un test que califica un ejercicio y pasa sin
  su código no comprueba nada de él.

Cada invariante con su variante ingenua: un test marcado que pide «no un bool», uno con la
redacción en un parámetro o en una ayuda del fichero, y un test de regresión marcado como de
contrato (pasa con el esbozo).
"""
import ast

import pytest

from curso import rutas
from curso.comprobaciones import aparte, contrato, ejercicios
from curso.comprobaciones.esbozos import AVISO

REGISTRO = ejercicios.cargar_registro()
PUNTOS = rutas.puntos_de_control()


def marcas():
    """[(punto, test, ids)] de todas las marcas de contrato de todos los puntos de control."""
    return [(n, f"{f.name}::{t}", ids) for n, carpeta in PUNTOS.items()
            for f in sorted((carpeta / "tests").glob("test_*.py"))
            for t, ids in contrato.marcas_del_fichero(f).items()]


def test_hay_tests_de_contrato_y_de_regresion_en_cada_punto_con_ejercicios_en_modulos():
    from curso.comprobaciones import tests_del_curso
    for n, carpeta in PUNTOS.items():
        contratos = contrato.contratos_del_punto(carpeta)
        todos = tests_del_curso.tests_del_punto(carpeta)
        assert set(contratos) <= set(todos)
        if n >= 1:  # desde la 01 hay código que da el curso, con sus tests de regresión
            assert contratos and len(contratos) < len(todos), carpeta.name


def test_cada_marca_nombra_un_ejercicio_de_un_modulo_de_su_punto_de_control():
    malas = []
    for n, test, ids in marcas():
        e = REGISTRO.get(ids[0]) if len(ids) == 1 else None
        modulos = {p.stem for p in PUNTOS[n].glob("*.py")}
        if e is None or e.modulo not in modulos or e.leccion > n:
            malas.append((PUNTOS[n].name, test, ids))
    assert malas == []


def test_ningun_test_de_contrato_afirma_una_redaccion_que_el_texto_no_fija():
    malas = [(PUNTOS[n].name, *mala) for n in PUNTOS for mala in contrato.redacciones_que_no_fija(PUNTOS[n])]
    assert malas == [], "\n".join(map(str, malas))


def test_cada_redaccion_que_se_da_por_fijada_hace_falta():
    afirmadas = {(test, texto) for carpeta in PUNTOS.values() for f in (carpeta / "tests").glob("test_*.py")
                 for test, _, texto, _, _ in contrato.redacciones(f)}
    sobran = set(contrato.REDACCIONES_QUE_FIJA_EL_TEXTO) - afirmadas
    assert sobran == set()


# ---------------------------------------------------------------- las variantes ingenuas

FICHERO_INGENUO = '''
import pytest
from resumenes import instalar, validar_candidato

ORIGINAL = "Ya lo he leído."


def dice(error):
    assert "debe ser un texto" in str(error)


@pytest.mark.contrato("4.2")
def test_con_match(bd):
    with pytest.raises(ValueError, match="no un bool"):
        instalar(bd, "r-1", None, True, [])


@pytest.mark.contrato("4.2")
@pytest.mark.parametrize("candidato, motivo", [([], "está vacío"), ([{"texto": ""}], None)])
def test_con_el_motivo_en_un_parametro(bd, candidato, motivo):
    with pytest.raises(ValueError, match=motivo):
        validar_candidato(bd, "r-1", 3, candidato)


@pytest.mark.contrato("4.2")
def test_con_la_redaccion_en_una_ayuda(bd):
    with pytest.raises(ValueError) as error:
        validar_candidato(bd, "r-1", 3, [{"texto": 7, "fuente": 1}])
    dice(error.value)


@pytest.mark.contrato("4.2")
def test_que_devuelve_lo_que_le_pasan(bd):
    assert validar_candidato(bd, ORIGINAL, 3, []) == "Ya lo he leído."


def test_de_regresion_con_match(bd):
    with pytest.raises(ValueError, match="no un bool"):
        instalar(bd, "r-1", None, True, [])
'''


def test_las_redacciones_ingenuas_se_encuentran_y_los_datos_no(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_ingenuo.py").write_text(FICHERO_INGENUO, encoding="utf-8")
    malas = {(test.split("::")[1], texto) for test, _, texto, _ in contrato.redacciones_que_no_fija(tmp_path)}
    assert malas == {("test_con_match", "no un bool"), ("test_con_el_motivo_en_un_parametro", "está vacío"),
                     ("test_con_la_redaccion_en_una_ayuda", "debe ser un texto")}
    # Lo que el test le pasó al código vuelve tal cual: no es una redacción. Y uno sin marca no
    # califica: puede pedir las palabras de la referencia.
    assert contrato.contratos_del_punto(tmp_path) == {
        f"test_ingenuo.py::{t}": "4.2" for t in ("test_con_match", "test_con_el_motivo_en_un_parametro",
                                                 "test_con_la_redaccion_en_una_ayuda", "test_que_devuelve_lo_que_le_pasan")}


def test_una_palabra_del_texto_no_fija_un_mensaje():
    """«vacío» está en el texto del 4.2 («texto no vacío»), pero eso no dice con qué palabras se
    rechaza: como patrón de un mensaje, una sola palabra no vale; como valor («fin»), sí."""
    texto = contrato.texto_del_ejercicio("4.2")
    assert "vacío" in texto and not contrato.lo_fija(texto, "vacío", es_patron=True)
    assert contrato.lo_fija(contrato.texto_del_ejercicio("1.3"), "fin")
    assert contrato.lo_fija(contrato.texto_del_ejercicio("3b.1"), "Si lo necesitas, vuelve a pedirlo")


# ---------------------------------------------------------------- llegan al código de su ejercicio


def con_esbozo(texto, funciones, id):
    """El módulo `texto` con el cuerpo de `funciones` (del nivel del módulo o de una clase) cambiado
    por el esbozo del ejercicio `id`, como lo deja `generar` en el cuaderno del alumno."""
    lineas = texto.split("\n")
    cuerpos = [n for n in ast.walk(ast.parse(texto))
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in funciones]
    for n in sorted(cuerpos, key=lambda n: -n.lineno):
        sangria = " " * n.body[0].col_offset
        aviso = AVISO.format(numero=id, funcion=n.name)
        lineas[n.body[0].lineno - 1:n.end_lineno] = [f"{sangria}raise NotImplementedError({aviso!r})"]
    return "\n".join(lineas)


def test_el_esbozo_cambia_solo_las_funciones_del_ejercicio():
    texto = (PUNTOS[4] / "resumenes.py").read_text(encoding="utf-8")
    con = con_esbozo(texto, contrato.funciones_del_ejercicio("4.3"), "4.3")
    assert "def validar_candidato" in con and con.count("Ejercicio 4.3 pendiente") == 1
    compile(con, "resumenes.py", "exec")


# Los de la 07 que necesitan PostgreSQL corren con el de la sesión (fixture `postgres`).
@pytest.mark.lento
@pytest.mark.parametrize("id", [id for id, e in sorted(REGISTRO.items()) if e.modulo])
def test_cada_test_de_contrato_llega_al_codigo_de_su_ejercicio(id, tmp_path, postgres, monkeypatch):
    """En el punto de control más alto que tiene sus tests de contrato, con sus funciones en el
    esbozo: todos fallan (casi todos, diciendo que llegan a ese esbozo; alguno, como los de
    durable.py que apuntan el error de la ejecución, con lo que no sale). La variante ingenua, un test de regresión marcado
    (test_api.py, que no usa ningún ejercicio), pasaría con el esbozo."""
    from curso.postgres.cluster import VARIABLE_DE_CONEXION
    monkeypatch.setenv(VARIABLE_DE_CONEXION, postgres)
    e = REGISTRO[id]
    punto = max(n for n in PUNTOS if id in contrato.contratos_del_punto(PUNTOS[n]).values()) \
        if any(id in contrato.contratos_del_punto(c).values() for c in PUNTOS.values()) else None
    if punto is None:
        pytest.skip(f"el ejercicio {id} no tiene tests de contrato: lo califica su comprobación")
    carpeta = PUNTOS[punto]
    suyos = [t for t, i in contrato.contratos_del_punto(carpeta).items() if i == id]
    modulo = tmp_path / f"{e.modulo}.py"
    modulo.write_text(con_esbozo((carpeta / f"{e.modulo}.py").read_text(encoding="utf-8"),
                                 contrato.funciones_del_ejercicio(id), id), encoding="utf-8")
    ficheros = {p.name: p for p in carpeta.glob("*.py")}
    ficheros[modulo.name] = modulo
    corrida = aparte.correr_aparte(ficheros, carpeta, suyos, limite_test=90)
    assert set(corrida.resultados) == set(suyos)
    pasan = [t for t, r in corrida.resultados.items() if r.estado not in (aparte.FALLA, aparte.MUERTO)]
    assert pasan == [], f"no fallan con el esbozo del {id}: {pasan}"


@pytest.mark.lento
def test_un_test_de_regresion_pasa_con_el_esbozo_y_por_eso_no_califica(tmp_path):
    """La variante ingenua del anterior: un test del código que da el curso (test_api.py) no llega
    al 1.3: con bucle() en su esbozo, pasa. Con la marca del 1.3, lo daría por hecho sin mirarlo."""
    carpeta = PUNTOS[1]
    modulo = tmp_path / "bucle.py"
    modulo.write_text(con_esbozo((carpeta / "bucle.py").read_text(encoding="utf-8"), ("bucle",), "1.3"),
                      encoding="utf-8")
    ficheros = {**{p.name: p for p in carpeta.glob("*.py")}, "bucle.py": modulo}
    api = "test_api.py::test_devuelve_los_bloques_y_guarda_el_usage"
    corrida = aparte.correr_aparte(ficheros, carpeta, [api, "test_bucle.py::test_m_solo_crece"], limite_test=90)
    assert corrida.resultados[api].estado == aparte.PASA
    assert corrida.resultados["test_bucle.py::test_m_solo_crece"].pendiente == "1.3"
