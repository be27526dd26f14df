"""`medir metamorfosis`: cada reescritura de una solución de referencia hace lo mismo que ella y cambia de verdad su texto, y la herramienta ve una comprobación que pide más que el texto.

La medida entera (`python -m curso medir metamorfosis`) es lenta y va en `medir`. Aquí:

- por cada clase de reescritura (`autor/reescrituras.py`), un ejercicio donde aplica: la reescritura
  y la referencia, cargadas de su punto de control, dan lo mismo en unos casos propios (lo que
  devuelven, la base que dejan, el tipo de excepción), y el texto de la reescritura es otro;
  las direcciones que ninguna referencia usa hoy (un `else` tras un `return` que se aplana, un
  bucle que llena una lista...), con una función escrita aquí;
- que en un módulo con varios ejercicios se reescribe solo el pedido;
- que la herramienta ve una objeción: un test de contrato inventado que pide nuestras palabras
  sale como objeción, el mismo test pidiendo solo el valor no (su variante ingenua), y un test
  que falla también sin reescribir nada sale como nota, no como objeción; en `calificar`, una
  función del cuaderno con un error sale como objeción y la buena no;
- un humo: un ejercicio, una reescritura, solo el cuaderno.
"""
import ast
import json
import shutil
import sqlite3
import types

import pytest

from curso import rutas
from curso.autor import reescrituras
import variantes
from curso.comprobaciones import aparte, ejercicios, l04
from curso.medir import metamorfosis, mutantes

ejercicios.cargar_registro()


@pytest.fixture
def sin_temporales():
    """Las bases de los casos de l04 se crean en la carpeta temporal: que se borren al acabar."""
    with ejercicios.sin_dejar_temporales():
        yield


def reescrita(id, clase):
    reg = mutantes.region(id)
    r = reescrituras.reescribir(reg, clase)
    assert r is not None, f"la clase {clase} no aplica al {id}"
    return reg, r


def cargar(texto, reg, carpeta, nombre):
    """El módulo del ejercicio con `texto`, en una copia de su punto de control (con sus vecinos)."""
    espacio = carpeta / nombre
    shutil.copytree(rutas.puntos_de_control()[reg.leccion], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (espacio / f"{reg.modulo}.py").write_text(texto, encoding="utf-8")
    return rutas.cargar_modulo(espacio / f"{reg.modulo}.py", f"_{reg.modulo}_{nombre}")


def los_dos(id, clase, carpeta):
    """(referencia, reescrita, Reescritura): el módulo del ejercicio de las dos maneras."""
    reg, r = reescrita(id, clase)
    return cargar(reg.texto, reg, carpeta, "referencia"), cargar(r.texto, reg, carpeta, "reescrita"), r


def funciones_cambiadas(reg, r):
    """Los nombres de las funciones (y métodos) cuyo código cambia la reescritura."""
    def por_nombre(texto):
        return {n.name: ast.dump(n) for n in ast.walk(ast.parse(texto)) if isinstance(n, ast.FunctionDef)}
    antes, despues = por_nombre(reg.texto), por_nombre(r.texto)
    return {nombre for nombre in antes if antes[nombre] != despues.get(nombre)}


def que_pasa(funcion, *argumentos):
    """("vale", lo devuelto) o (el nombre de la excepción, su mensaje)."""
    try:
        return "vale", funcion(*argumentos)
    except Exception as error:  # noqa: BLE001 - se compara lo que sea
        return type(error).__name__, str(error)


def sin_mensajes(resultados):
    return [(que, valor if que == "vale" else None) for que, valor in resultados]


# ---------------------------------------------------------------- cada clase, en un ejercicio


LINEAS = ["", "a", "a\n\n", "  x  \n  \n", "a\nb\n", "\n\n", "\t\n y", "uno\r\ndos\r\n", " \n último "]


def test_nombres_cambia_los_locales_y_ultima_linea_da_lo_mismo(tmp_path):
    referencia, otra, r = los_dos("0.1", "nombres", tmp_path)
    assert "mi_linea" in r.texto and "for linea in" not in r.texto
    assert [otra.ultima_linea(s) for s in LINEAS] == [referencia.ultima_linea(s) for s in LINEAS]


def test_bucles_pasa_un_for_con_return_a_next_y_da_lo_mismo(tmp_path):
    referencia, otra, r = los_dos("0.1", "bucles", tmp_path)
    assert "next(" in r.texto and "for linea in reversed" not in r.texto.split("next(")[0]
    assert [otra.ultima_linea(s) for s in LINEAS] == [referencia.ultima_linea(s) for s in LINEAS]


RESPUESTAS = [[], [{"type": "text", "text": " hola "}],
              [{"type": "text", "text": "leo"}, {"type": "tool_use", "id": "a", "name": "leer", "input": {}},
               {"type": "text", "text": "y edito"}, {"type": "tool_use", "id": "b", "name": "editar", "input": {}}],
              [{"type": "tool_result", "tool_use_id": "a", "content": "x"}, {"tipo": "raro"}]]


def test_bucles_pasa_las_comprensiones_de_entorno_a_bucles_y_dan_lo_mismo(tmp_path):
    reg, r = reescrita("1.1", "bucles")
    assert funciones_cambiadas(reg, r) == {"llamadas_de", "texto_de"}
    assert ".append(" in r.piezas and " for b in " not in r.piezas
    referencia, otra, _ = los_dos("1.1", "bucles", tmp_path)
    for funcion in ("llamadas_de", "texto_de"):
        assert [getattr(otra, funcion)(x) for x in RESPUESTAS] == [getattr(referencia, funcion)(x) for x in RESPUESTAS]


class Usuario:
    def __init__(self, respuesta):
        self.respuesta, self.preguntas = respuesta, []

    def __call__(self, nombre, entrada):
        self.preguntas.append((nombre, entrada))
        return self.respuesta


def test_retorno_pasa_los_return_tempranos_de_permitido_a_else_y_da_lo_mismo(tmp_path):
    referencia, otra, r = los_dos("1.2", "retorno", tmp_path)
    assert "else:" in r.piezas and "else:" not in mutantes.region("1.2").texto.split("def permitido")[1].split("def ")[0]
    for nombre in ("leer", "editar", "ejecutar", "nada"):
        for respuesta in (True, False, "sí", 1, None):
            casos = []
            for modulo in (referencia, otra):
                usuario = Usuario(respuesta)
                casos.append((modulo.permitido(nombre, {"ruta": "a"}, usuario), usuario.preguntas,
                              modulo.permitido(nombre, {"ruta": "a"}, None)))
            assert casos[0] == casos[1], (nombre, respuesta)


def casos_del_puntero(resumenes):
    """Lo que hace `mover_puntero` de `resumenes` en tres casos de l04: mover, llegar tarde y la
    primera vez (base None): qué pasa en cada uno y la base que deja."""
    resultados = []
    for caso in ("mueve", "tarde", "primera"):
        ref, bd = l04.con_historial()
        uno = ref.instalar(bd, "e", None, 2, [{"texto": "uno", "fuente": 2}])
        dos = ref.instalar(bd, "e", uno, 3, [{"texto": "dos", "fuente": 3}])
        if caso == "primera":
            bd.execute("UPDATE ejecuciones SET resumen_activo=NULL WHERE id='e'")
        base, nuevo = {"mueve": (dos, uno), "tarde": (uno, uno), "primera": (None, dos)}[caso]
        resultados.append((*que_pasa(resumenes.mover_puntero, bd, "e", base, nuevo), "\n".join(bd.iterdump())))
    return resultados


def test_sql_pasa_los_parametros_de_mover_puntero_a_nombres_y_deja_la_misma_base(tmp_path, sin_temporales):
    referencia, otra, r = los_dos("4.3", "sql", tmp_path)
    assert ":nuevo" in r.piezas and ":ejecucion" in r.piezas and "?" not in r.piezas
    antes, despues = casos_del_puntero(referencia), casos_del_puntero(otra)
    assert [(a[0], a[2]) for a in antes] == [(d[0], d[2]) for d in despues]
    assert [a[0] for a in antes] == ["vale", "BaseObsoleta", "vale"]


def test_mensajes_cambia_las_palabras_de_base_obsoleta_y_conserva_sus_valores(tmp_path, sin_temporales):
    referencia, otra, r = los_dos("4.3", "mensajes", tmp_path)
    antes, despues = casos_del_puntero(referencia), casos_del_puntero(otra)
    assert [(a[0], a[2]) for a in antes] == [(d[0], d[2]) for d in despues]
    (_, nuestro, _), (_, suyo, _) = antes[1], despues[1]
    assert nuestro != suyo and "vuelve a leer el activo" not in suyo
    assert all(valor in suyo for valor in ("el resumen 1", "el resumen 2"))  # la base de la que partía y el activo


def casos_de_la_transaccion(historial):
    """Lo que hace `transaccion` de `historial`: un bloque que acaba bien, uno que lanza, y si quedó
    una transacción abierta; y la base que dejan."""
    bd = sqlite3.connect(":memory:", isolation_level=None)
    bd.execute("CREATE TABLE t(x)")
    resultados = []
    for falla in (False, True):
        try:
            with historial.transaccion(bd):
                bd.execute("INSERT INTO t VALUES (?)", (int(falla),))
                if falla:
                    raise KeyError("a propósito")
            resultados.append(("vale", bd.in_transaction))
        except KeyError:
            resultados.append(("KeyError", bd.in_transaction))
    return resultados, list(bd.iterdump())


def test_sentencias_acaba_el_sql_de_la_transaccion_en_punto_y_coma_y_hace_lo_mismo(tmp_path):
    referencia, otra, r = los_dos("4.1", "sentencias", tmp_path)
    assert "'COMMIT;'" in r.piezas and "'ROLLBACK;'" in r.piezas and "'BEGIN IMMEDIATE;'" in r.piezas
    antes, despues = casos_de_la_transaccion(referencia), casos_de_la_transaccion(otra)
    assert antes == despues and antes[0] == [("vale", False), ("KeyError", False)]


def test_el_4_1_con_commit_y_punto_y_coma_da_sus_pasos_durables_en_la_06(tmp_path):
    """La 06 envuelve la conexión y apunta un paso en cada fin de transacción: con la transacción
    del 4.1 escrita con «COMMIT;» (tan válida como «COMMIT»), cada una que cambia filas se sigue
    apuntando. Con el pasos.py que solo reconocía «COMMIT» tal cual, no se apuntaba ninguna."""
    _, r = reescrita("4.1", "sentencias")
    espacios = metamorfosis.espacios_con([r], tmp_path)
    espacio, puestas = espacios[6]
    assert puestas == [r] and "'COMMIT;'" in (espacio / "historial.py").read_text(encoding="utf-8")
    tests = ["test_pasos.py::test_cada_transaccion_que_cambia_filas_se_apunta_como_un_paso",
             "test_pasos.py::test_con_la_base_llena_lo_que_cabe_en_sus_paginas_se_sigue_confirmando"]
    corrida = metamorfosis._correr(espacio, rutas.puntos_de_control()[6], tests, 60)
    assert {t: corrida.resultados[t].estado for t in tests} == dict.fromkeys(tests, aparte.PASA)


CANDIDATOS = [[{"texto": "bien", "fuente": 1}], [{"texto": "  ", "fuente": 1}], [{"texto": 7, "fuente": 1}],
              [{"texto": "a\udc80b", "fuente": 1}], [{"texto": "x", "fuente": True}], [{"texto": "x", "fuente": 0}],
              [{"texto": "x", "fuente": 2**63}], [{"texto": "x", "fuente": 2**63 - 1}], [{"texto": "x", "fuente": "1"}],
              [{"texto": "x", "fuente": 1.0}], [{"texto": "x", "fuente": 4}], [{"texto": "", "fuente": 2}]]


def test_ayudas_cambia_exigir_texto_por_la_comprobacion_del_alumno_y_acepta_y_rechaza_lo_mismo(tmp_path, sin_temporales):
    referencia, otra, r = los_dos("4.2", "ayudas", tmp_path)
    assert "exigir_texto(" not in r.piezas and "exigir_entero_positivo(afirmacion" not in r.piezas
    _, bd = l04.con_historial()
    antes = [que_pasa(referencia.validar_candidato, bd, "e", 3, c) for c in CANDIDATOS]
    despues = [que_pasa(otra.validar_candidato, bd, "e", 3, c) for c in CANDIDATOS]
    assert sin_mensajes(antes) == sin_mensajes(despues)
    assert [que for que, _ in antes].count("vale") == 1
    assert antes[1][1] != despues[1][1] and "afirmación 1" in despues[1][1]  # sus palabras, y qué afirmación


def test_mensajes_de_umbral_una_funcion_del_cuaderno():
    reg, r = reescrita("3.1", "mensajes")
    de = {}
    for nombre, texto in (("referencia", reg.texto), ("reescrita", r.texto)):
        exec(compile(texto, nombre, "exec"), de.setdefault(nombre, {}))  # noqa: S102 - la celda del cuaderno
    casos = [(8192, 1024, 3072), (100, 60, 40), (100, 99, 0), (10, 20, 30)]
    antes = [que_pasa(de["referencia"]["umbral"], *c) for c in casos]
    despues = [que_pasa(de["reescrita"]["umbral"], *c) for c in casos]
    assert sin_mensajes(antes) == sin_mensajes(despues)
    for (que, nuestro), (_, suyo), caso in zip(antes, despues, casos, strict=True):
        if que != "vale":
            assert nuestro != suyo and all(str(v) in suyo for v in caso)


# ---------------------------------------------------------------- las direcciones que hoy no usa ninguna referencia

SINTETICA = '''
def f(xs, c):
    hechos = []
    for x in xs:
        if x > c:
            hechos.append(x * 2)
    vistos = set()
    for y in xs:
        vistos.add(y % 3)
    if c < 0:
        return None
    else:
        total = sum(z for z in xs) + len(vistos)
    if all(v > 0 for v in xs):
        return hechos, sorted(vistos), total, "todos"
    return hechos, sorted(vistos), total, any(w == c for w in xs)
'''


def region_sintetica(texto=SINTETICA):
    lineas = set(range(3, len(texto.split("\n")) + 1))
    return mutantes.Region("9.9", 9, None, "f", texto, lineas)


@pytest.mark.parametrize("clase, antes, despues", [
    ("bucles", "hechos.append(", "hechos = [x * 2 for x in xs if x > c]"),
    ("bucles", "vistos.add(", "vistos = {y % 3 for y in xs}"),
    ("bucles", "sum(z for z in xs)", "lista.append(cada_z)"),
    ("bucles", "all(v > 0 for v in xs)", "todos_cumplen = True"),
    ("bucles", "any(w == c for w in xs)", "hay_alguno = False"),
    ("retorno", "    else:\n        total", "\n    total = sum("),
])
def test_las_direcciones_que_hoy_no_usa_ninguna_referencia_dan_lo_mismo(clase, antes, despues):
    reg = region_sintetica()
    r = reescrituras.reescribir(reg, clase)
    assert antes in reg.texto and antes not in r.texto and despues in r.texto
    de = {}
    for nombre, texto in (("referencia", reg.texto), ("reescrita", r.texto)):
        exec(compile(texto, nombre, "exec"), de.setdefault(nombre, {}))  # noqa: S102 - código escrito aquí
    for xs, c in (([], 0), ([1, 2, 3], 1), ([-1, 5], -2), ([0, 3, 6], 3), ([4], 9)):
        assert de["reescrita"]["f"](list(xs), c) == de["referencia"]["f"](list(xs), c), (xs, c)


def test_sin_nada_que_cambiar_no_aplica():
    """La 2.1 es una suma en una línea: ningún mensaje, ningún SQL, ningún nombre local, ningún bucle."""
    reg = mutantes.region("2.1")
    assert all(reescrituras.reescribir(reg, clase) is None for clase in reescrituras.CLASES)


# ---------------------------------------------------------------- un ejercicio de un módulo con varios


@pytest.mark.parametrize("id, suya, otras", [
    ("4.2", "validar_candidato", {"mover_puntero"}),
    ("4.3", "mover_puntero", {"validar_candidato"}),
    ("5.3", "activar_si_estan_todos", {"recibir", "admitir"}),
])
def test_en_un_modulo_con_varios_ejercicios_se_reescribe_solo_el_pedido(id, suya, otras):
    for clase in reescrituras.CLASES:
        reg = mutantes.region(id)
        r = reescrituras.reescribir(reg, clase)
        if r is None:
            continue
        assert funciones_cambiadas(reg, r) == {suya}, clase
        assert f"def {suya}(" in r.piezas and not any(f"def {o}(" in r.piezas for o in otras)


# ---------------------------------------------------------------- la herramienta ve una objeción

# Tests inventados para el limpiar.py de la 03b. Tres de contrato: uno pide nuestras palabras (el texto
# del 3b.1 no las fija: debe salir como objeción), su variante honesta pide solo el valor (no), y uno
# falla con o sin reescritura (no es una objeción: un test roto). Y uno de regresión que pide nuestras
# palabras: no califica (`comprobar N` no lo corre), así que tampoco objeta.
TESTS_INVENTADOS = '''
import pytest

import limpiar


@pytest.mark.contrato("3b.1")
def test_conservar_negativo_con_nuestras_palabras():
    with pytest.raises(ValueError, match="son cuántos resultados del final"):
        limpiar.limpiar([], 10**6, conservar=-1)


@pytest.mark.contrato("3b.1")
def test_conservar_negativo_nombra_el_valor():
    with pytest.raises(ValueError, match="-1"):
        limpiar.limpiar([], 10**6, conservar=-1)


@pytest.mark.contrato("3b.1")
def test_roto():
    assert limpiar.CONSERVAR == 99


def test_de_regresion_con_nuestras_palabras():
    with pytest.raises(ValueError, match="son cuántos resultados del final"):
        limpiar.limpiar([], 10**6, conservar=-1)
'''


@pytest.mark.lento
def test_un_test_que_pide_nuestras_palabras_sale_como_objecion_y_uno_roto_como_nota(tmp_path, monkeypatch):
    reg, r = reescrita("3b.1", "mensajes")
    real = rutas.puntos_de_control()[rutas.TRES_B]
    inventado = tmp_path / "checkpoints" / real.name
    shutil.copytree(real, inventado, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (inventado / "tests").mkdir()
    shutil.copyfile(real / "tests" / "conftest.py", inventado / "tests" / "conftest.py")
    (inventado / "tests" / "test_limpiar_inventado.py").write_text(TESTS_INVENTADOS, encoding="utf-8")
    monkeypatch.setattr(rutas, "puntos_de_control", lambda: {rutas.TRES_B: inventado})
    veredictos = {("3b.1", "mensajes"): metamorfosis.Veredicto("3b.1", "mensajes")}
    metamorfosis.por_comprobar([r], veredictos, tmp_path / "trabajo", limite=60, decir=lambda *a, **k: None)
    v = veredictos["3b.1", "mensajes"]
    assert (v.estado, v.etapa, v.test) == (
        metamorfosis.OBJETA, "comprobar 03b", "test_limpiar_inventado.py::test_conservar_negativo_con_nuestras_palabras")
    assert "son cuántos resultados del final" in v.motivo and not v.otras  # la que pide el valor no objeta
    assert len(v.notas) == 1 and "test_roto" in v.notas[0] and "también sin reescribir" in v.notas[0]
    assert v.cubre == ["03b"]


@pytest.mark.lento
def test_calificar_ve_una_funcion_del_cuaderno_con_un_error_y_no_la_buena(tmp_path):
    _, buena = reescrita("2.2", "nombres")
    mala = reescrituras.Reescritura("2.2", "a mano", None, buena.texto.replace("max_tokens <=", "max_tokens <"),
                                    "", 1)
    assert mala.texto != buena.texto
    for r, objeta in ((buena, False), (mala, True)):
        veredictos = {("2.2", r.clase): metamorfosis.Veredicto("2.2", r.clase)}
        metamorfosis.por_calificar([r], veredictos, tmp_path / r.clase, decir=lambda *a, **k: None)
        v = veredictos["2.2", r.clase]
        assert (v.estado == metamorfosis.OBJETA) is objeta, v
        if objeta:
            assert (v.etapa, v.test) == ("calificar (lección 02)", "test_ejercicios_del_curso.py::test_ejercicio_2_2")
            assert "justo en el límite" in v.motivo
        else:
            assert v.cubre == ["calificar"]


def test_solo_corre_lo_que_califica_y_depende_de_lo_reescrito_y_cada_ejercicio_una_vez(tmp_path):
    """Lo que corre la etapa de comprobar para el 4.2 reescrito: solo tests de contrato y comprobaciones
    de ejercicios (lo que califica `comprobar N`, nunca uno de regresión), la comprobación de un
    ejercicio una vez por cada versión de su módulo (y lo que importa), y la del 4.2 en el punto más
    alto, valiendo por todos los que tienen su mismo resumenes.py."""
    from curso.comprobaciones import contrato, tests_del_curso
    _, r = reescrita("4.2", "ayudas")
    espacios = metamorfosis.espacios_con([r], tmp_path)
    de_cada_punto, lecciones = metamorfosis.lo_que_se_corre(espacios)
    todos = [t for tests in de_cada_punto.values() for t in tests]
    assert todos
    for n, tests in de_cada_punto.items():
        califican = set(contrato.contratos_del_punto(espacios[n][0])) | {
            t for t in tests if tests_del_curso.ejercicio_de_test(t)}
        assert set(tests) <= califican, (n, set(tests) - califican)
    huellas = [(t, metamorfosis._huella_del_ejercicio(t, espacios[n][0])) for n, tests in de_cada_punto.items()
               for t in tests if tests_del_curso.ejercicio_de_test(t)]
    assert len(huellas) == len(set(huellas))  # repetida solo donde su módulo (o lo que importa) es otro
    suyo = tests_del_curso.test_de_ejercicio("4.2")
    (punto,) = [n for n, tests in de_cada_punto.items() if suyo in tests]
    assert punto == max(espacios) and lecciones[punto, suyo] == sorted(espacios)


def test_solo_corren_los_ficheros_de_tests_que_dependen_del_modulo_reescrito():
    punto = rutas.puntos_de_control()[rutas.TRES_B]
    dependen = {t.name for t in (punto / "tests").glob("test_*.py") if metamorfosis._depende(t, punto, {"limpiar"})}
    assert "test_limpiar.py" in dependen and "test_calentamiento.py" not in dependen


# ---------------------------------------------------------------- el humo y el recorrido del cuaderno


def test_humo_una_reescritura_por_el_cuaderno(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    resultado = metamorfosis.main(["0.1", "--clases", "nombres", "--solo-cuaderno", "--salida", "tabla.md"])
    v = resultado["veredictos"]["0.1", "nombres"]
    assert (v.estado, v.cubre, resultado["cumple_objetivo"]) == (metamorfosis.VERDE, ["cuaderno"], True)
    assert "| 0.1 | ✔ cuaderno |" in (tmp_path / "tabla.md").read_text(encoding="utf-8")
    guardado = json.loads((tmp_path / "tabla.json").read_text(encoding="utf-8"))
    assert guardado["veredictos"][0]["estado"] == metamorfosis.VERDE


def test_una_reescritura_que_cambia_lo_que_hace_objeta_en_el_cuaderno(tmp_path):
    """La variante ingenua de la etapa del cuaderno: una «reescritura» que no conserva el
    significado (la última línea aunque esté vacía) tiene que salir como objeción."""
    reg = mutantes.region("0.1")
    mala = types.SimpleNamespace(texto=reg.texto.replace("if linea.strip():", "if True:"))
    v = metamorfosis.Veredicto("0.1", "a mano")
    metamorfosis.por_el_cuaderno(reg, mala, v, tmp_path)
    assert (v.estado, v.etapa) == (metamorfosis.OBJETA, "cuaderno")


@pytest.mark.lento
def test_cada_reescritura_de_cada_ejercicio_pasa_la_comprobacion_del_cuaderno():
    """El recorrido entero de la primera etapa: ninguna comprobación del cuaderno pide más que el
    texto a ninguna reescritura (y cada ejercicio tiene al menos una que aplica, salvo los de
    `SIN_REESCRITURAS`)."""
    veredictos, _ = metamorfosis.medir(mutantes.todos_los_ejercicios(), etapas=(metamorfosis.CUADERNO,),
                                       decir=lambda *a, **k: None)
    objetan = {k: f"{v.test}: {v.motivo}" for k, v in veredictos.items() if v.estado == metamorfosis.OBJETA}
    assert not objetan
    con_alguna = {id for (id, _), v in veredictos.items() if v.estado == metamorfosis.VERDE}
    assert set(mutantes.todos_los_ejercicios()) - con_alguna == SIN_REESCRITURAS


@pytest.mark.lento
def test_una_reescritura_pasa_por_el_punto_de_su_leccion_y_por_todos_los_siguientes():
    """El 0.1 con otros nombres, por el cuaderno y los puntos 00 a 07: calentamiento.py no cambia en
    ninguno, así que su test corre una sola vez (en el 07) y vale por los nueve."""
    veredictos, _ = metamorfosis.medir(["0.1"], ["nombres"], etapas=(metamorfosis.CUADERNO, metamorfosis.COMPROBAR),
                                       decir=lambda *a, **k: None)
    v = veredictos["0.1", "nombres"]
    assert v.estado == metamorfosis.VERDE, v
    assert v.cubre == ["cuaderno"] + [f"{n:02d}" for n in sorted(rutas.puntos_de_control())]


# Los ejercicios en los que no aplica ninguna clase: una expresión de una línea sin nombres, mensajes,
# SQL ni bucles.
SIN_REESCRITURAS = {"2.1", "3.2"}


def test_la_reescritura_sql_de_la_07_usa_el_estilo_de_psycopg():
    _, r = reescrita("7.2", "sql")
    assert "VALUES (%(entrega)s, %(padre)s, %(hijo)s, %(cuerpo)s)" in r.piezas and "{'entrega': entrega" in r.piezas
    assert "VALUES (%s" not in r.piezas
    assert "WHERE id=%s" in r.piezas  # lo de antes de la región, que da el curso, no cambia


def test_una_reescritura_puesta_en_su_punto_de_control_es_el_texto_reescrito():
    """Lo que se prueba en comprobar y calificar (la celda --cambia compuesta sobre el módulo del
    punto de control) es lo mismo que lo que se probó en el cuaderno."""
    for id, clase in (("4.2", "mensajes"), ("6.3", "retorno"), ("5.3", "sql")):
        reg, r = reescrita(id, clase)
        compuesto = variantes.aplicar(metamorfosis.variante_de(r), reg.texto)
        assert ast.dump(ast.parse(compuesto)) == ast.dump(ast.parse(r.texto)), (id, clase)


def test_sqlite_acepta_una_sentencia_acabada_en_punto_y_coma():
    """Lo que hace la clase sentencias es válido en sqlite3: `COMMIT;` confirma como `COMMIT`."""
    bd = sqlite3.connect(":memory:", isolation_level=None)
    bd.execute("CREATE TABLE t(a);")
    bd.execute("BEGIN IMMEDIATE;")
    bd.execute("INSERT INTO t VALUES (?);", (1,))
    bd.execute("COMMIT;")
    assert not bd.in_transaction and bd.execute("SELECT a FROM t;").fetchall() == [(1,)]


def test_sqlite_acepta_los_parametros_por_nombre_con_un_dict():
    """Lo que hace la clase sql es válido en sqlite3 (el contrato de la 04 a la 06 lo permite)."""
    bd = sqlite3.connect(":memory:")
    bd.execute("CREATE TABLE t(a, b)")
    bd.execute("INSERT INTO t VALUES (:a, :b)", {"a": 1, "b": None})
    assert bd.execute("SELECT a FROM t WHERE b IS :b", {"b": None}).fetchall() == [(1,)]
