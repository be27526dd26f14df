"""Tests de la regla de la culpa (`curso/comprobaciones/culpa.py`): una clase sintética calificada, su clave, y la misma culpa en `comprobar N`.

La clase y su clave están en clase_de_la_culpa.py. Para cada alumno se mira la celda de cada
lección, el módulo que «Lo primero que mirar» nombra (siempre un culpable: uno colgado, si no uno
que no se importa, si no el del ejercicio más temprano) y que los módulos que fallan solo por otro
salen como consecuencia suya («durable.py, por resumenes.py»). Antes de la regla (e020d44) la
celda de un error de sintaxis en historial.py era «✘ validacion.py, historial.py, resumenes.py,
durable.py», el comentario de un bucle en resumenes.py hablaba de validacion.py, los ejercicios
sin comprobar contaban 0 y un mi_agente/ vacío era «no encuentro su espacio».
"""
import csv
import io
import re

import pytest

import clase_de_la_culpa as clase
from curso.clase import calificar
from curso.comprobaciones import espacio as comprobar_n
from curso.comprobaciones import veredicto
from curso.medir.clase_de_treinta import cambiar

# `curso.comprobaciones.culpa` se importa dentro de los tests que lo usan: así este fichero también
# corre sobre el código de antes de la regla (e020d44), y lo que falla allí falla por lo que dice.

LIMITE = 20  # segundos por test: los de las lecciones 01 y 04 tardan menos de diez, también con la máquina muy ocupada
# Donde ningún test se cuelga a propósito, el límite no es lo que se prueba: con holgura, para que una
# máquina lenta y muy ocupada no convierta un test lento en un colgado (pasó en CI con el de hypothesis
# de test_bucle.py, a más de 20 s).
LIMITE_SIN_COLGADOS = 90
CONSECUENCIAS = re.compile(r"((?:\w+\.py, )+)por (\w+)\.py")


@pytest.fixture(scope="module")
def calificada(tmp_path_factory):
    """La clase sintética calificada una vez (lecciones 01 y 04, con devoluciones): (espacios, filas
    del CSV por alumno, carpeta de salida)."""
    carpeta = tmp_path_factory.mktemp("clase_de_la_culpa")
    espacios = clase.armar(carpeta / "clase")
    salida = carpeta / "notas"
    assert calificar.calificar(carpeta / "clase", salida=salida, limite=LIMITE, lecciones=clase.LECCIONES,
                               a_la_vez=2, devoluciones=True) == 0
    texto = (salida / "calificaciones.csv").read_text(encoding="utf-8-sig")
    filas = {f["alumno"]: f for f in csv.DictReader(io.StringIO(texto))}
    for f in filas.values():  # se ve en el informe de un test que falle
        print(f["alumno"], "|", f["01 estado"], "|", f["04 estado"], "|", f["todo junto"], "|", f["comentario"])
    return espacios, filas, salida


def consecuencias_de(texto):
    """{módulo: culpable} de lo que dice una celda o una línea («a.py, b.py, por c.py»)."""
    return {m.removesuffix(".py"): c for grupo, c in CONSECUENCIAS.findall(texto)
            for m in grupo.rstrip(", ").split(", ")}


def culpables_de(texto):
    """Los módulos que una celda nombra como culpables: lo que va antes de sus consecuencias."""
    antes = texto.lstrip("✘⚠ ").split(" · ")[0].split("; ")[0]
    if CONSECUENCIAS.search(antes):
        return []
    return [m.split(" ")[0].removesuffix(".py") for m in antes.split(", ")]


@pytest.mark.parametrize("nombre", list(clase.CLAVE))
def test_cada_celda_dice_lo_que_dice_la_clave(calificada, nombre):
    _, filas, _ = calificada
    fila, clave = filas[nombre], clase.CLAVE[nombre]
    for n, empieza in clave["estados"].items():
        celda = fila[f"{n:02d} estado"]
        assert celda.startswith(empieza), (n, celda)
        if empieza[:1] in "✘⚠":
            # El culpable y solo él va delante: ni sus consecuencias ni módulos que el alumno no tocó.
            assert culpables_de(celda) == [empieza.split(" ")[1].removesuffix(".py")], celda
    cuarta = fila[f"{clase.PUNTO:02d} estado"]
    assert consecuencias_de(cuarta) == clave["consecuencias"], cuarta


@pytest.mark.parametrize("nombre", list(clase.CLAVE))
def test_lo_primero_que_mirar_es_su_culpable(calificada, nombre):
    _, filas, salida = calificada
    clave = clase.CLAVE[nombre]
    devolucion = (salida / "devoluciones" / f"{nombre}.txt").read_text(encoding="utf-8")
    primera = next((l for l in devolucion.splitlines() if l.startswith("Lo primero que mirar:")), None)
    if clave["primero"] is None:
        assert primera is None, primera
        return
    modulo, dice = clave["primero"]
    assert primera is not None, devolucion
    assert re.match(rf"Lo primero que mirar: lección \d\d, {modulo}\.py: ", primera), primera
    for trozo in dice:
        assert trozo in primera, (trozo, primera)
    assert filas[nombre]["comentario"].split(": ")[0].endswith(f"{modulo}.py"), filas[nombre]["comentario"]


def test_lo_que_no_se_comprobo_no_cuenta_como_cero(calificada):
    """permisos.py colgado: los ejercicios de la 01 que no llegaron a correr van vacíos en el CSV
    (un libro de notas leería 0 como un cero), y el comentario dice por qué; la página, «sin comprobar»."""
    _, filas, salida = calificada
    fila = filas["colgado_permisos"]
    assert fila["01 ejercicios"] == "" and fila["ejercicios"] == "", fila
    assert "sin comprobar" in fila["comentario"].lower()
    assert "sin comprobar" in (salida / "calificaciones.html").read_text(encoding="utf-8")
    assert filas["bien"]["01 ejercicios"] == filas["bien"]["01 ejercicios en total"] != ""


def test_un_espacio_vacio_esta_sin_empezar_y_no_perdido(calificada):
    _, filas, _ = calificada
    fila = filas["sin_empezar"]
    assert fila["espacio"] == "sin_empezar/mi_agente/"
    assert fila["todo junto"] == "sin empezar"


@pytest.mark.parametrize("nombre", ["sintaxis_historial", "cas"])
def test_comprobar_n_culpa_al_mismo_modulo_que_calificar(calificada, nombre, temporal):
    """La misma regla: `comprobar 04` sobre el mismo espacio pone primero al mismo culpable, con
    las mismas consecuencias marcadas, y enseña las rutas de SU espacio, no las de la copia."""
    espacios, filas, _ = calificada
    c = comprobar_n.comprobar_en(espacios[nombre], calificar.rutas.puntos_de_control()[clase.PUNTO],
                                 LIMITE_SIN_COLGADOS)
    modulo, dice = clase.CLAVE[nombre]["primero"]
    assert c.culpables and c.culpables[0].modulo == modulo
    assert filas[nombre]["comentario"].split(": ")[0].endswith(f"{modulo}.py")
    marcadas = {l.modulo: l.por for l in c.lineas if l.estado == veredicto.CONSECUENCIA}
    assert marcadas == clase.CLAVE[nombre]["consecuencias"], [l.texto() for l in c.lineas]
    informe = veredicto.informe(c, "tu espacio")
    assert f"Lo primero que mirar: {modulo}.py" in informe
    assert "curso-comprobar-" not in informe and "checkpoints/04" not in informe.split("\n", 1)[1]
    if nombre == "sintaxis_historial":
        assert f"{espacios[nombre]}/historial.py, línea" in informe


# ---------------------------------------------------------------- la regla, sin correr tests


def test_el_orden_de_los_culpables_colgado_luego_sin_importar_luego_el_ejercicio_mas_temprano():
    """La ingenua, por orden alfabético o de aparición, pondría delante a compactar.py."""
    from curso.comprobaciones import culpa
    culpables = [culpa.Culpa("compactar", culpa.SUS_TESTS), culpa.Culpa("durable", culpa.NO_SE_IMPORTA),
                 culpa.Culpa("resumenes", culpa.COLGADO), culpa.Culpa("bucle", culpa.SUS_TESTS)]
    assert [c.modulo for c in culpa.ordenar(culpables)] == ["resumenes", "durable", "bucle", "compactar"]


def test_un_error_de_sintaxis_se_dice_con_fichero_linea_y_texto_sin_ejecutar_nada(tmp_path):
    from curso.comprobaciones import culpa
    fichero = tmp_path / "historial.py"
    fichero.write_text("import os\nos._exit(3)\ndef abrir(ruta)\n    pass\n", encoding="utf-8")
    dice = culpa.error_de_sintaxis(fichero, "mi_agente/")
    assert dice.startswith("mi_agente/historial.py, línea 3: `def abrir(ruta)`"), dice
    (tmp_path / "bien.py").write_text("x = 1\n", encoding="utf-8")
    assert culpa.error_de_sintaxis(tmp_path / "bien.py", "mi_agente/") == ""


def test_un_nombre_que_falta_se_achaca_al_modulo_que_no_lo_tiene():
    from curso.comprobaciones import culpa
    motivo = "ImportError: cannot import name 'a_medias' from 'agentes' (mi_agente/agentes.py)"
    assert culpa.culpable_de_la_importacion(motivo, {"agentes", "reanudar"}) == "agentes"
    assert culpa.culpable_de_la_importacion(motivo, {"reanudar"}) is None  # no es suyo: no se le culpa


# ---------------------------------------------------------------- en comprobar N, lección 06


def espacio_del_punto(numero, destino, modulo, viejo, nuevo):
    """Un espacio igual al punto de control `numero` con `viejo` cambiado por `nuevo` en `modulo`."""
    punto = calificar.rutas.puntos_de_control()[numero]
    destino.mkdir()
    for fichero in punto.glob("*.py"):
        (destino / fichero.name).write_text(fichero.read_text(encoding="utf-8"), encoding="utf-8")
    fichero = destino / f"{modulo}.py"
    fichero.write_text(cambiar(fichero.read_text(encoding="utf-8"), viejo, nuevo), encoding="utf-8")
    return destino, punto


def espacio_06(destino, modulo, viejo, nuevo):
    return espacio_del_punto(6, destino, modulo, viejo, nuevo)


def test_un_nombre_que_falta_en_tu_agentes_py_apunta_a_tu_agentes_py(tmp_path, temporal):
    """reanudar.py importa `a_medias` de agentes.py, y en el del alumno se llama de otra forma: los
    tests que importan reanudar no se pueden importar. Antes el mensaje apuntaba a
    «…/checkpoints/06_todo_junto/agentes.py» (la copia) y agentes.py salía «sin tests propios aquí»
    mientras los demás se ponían en rojo; ahora la culpable es TU agentes.py."""
    from curso.comprobaciones import culpa
    espacio, punto = espacio_06(tmp_path / "mi_agente", "agentes", "def a_medias(bd, agente):",
                                "def a_medio_hacer(bd, agente):")
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS, ficheros_de_tests={"test_efectos.py", "test_reintentos.py"})
    assert c.culpables and c.culpables[0].modulo == "agentes" and c.culpables[0].por == culpa.NO_SE_IMPORTA
    linea = next(l for l in c.lineas if l.nombre == "agentes.py")
    assert linea.estado == veredicto.MAL and "a_medias" in linea.detalle, linea
    informe = veredicto.informe(c, "tu espacio")
    assert "checkpoints/06_todo_junto/agentes.py" not in informe and f"{espacio}/agentes.py" in informe, informe
    # test_reintentos.py importa reanudar, que no se importa: consecuencia; nadie más sale en rojo.
    assert {l.modulo for l in c.lineas if l.estado == veredicto.CONSECUENCIA} == {"reintentos"}, c.lineas
    assert [l.modulo for l in c.lineas if l.estado == veredicto.MAL] == ["agentes"]


def test_un_contexto_que_da_la_cola_al_reves_se_achaca_a_resumenes(tmp_path, temporal):
    """resumenes.contexto (código que da la celda del 4.2 y el 4.3) devuelve la cola al revés: los
    tests de contrato de resumenes.py pasan (ninguno mira la cola), pero con él fallan los de
    durable.py, que arma la M con ella. Se culpa a resumenes.py, que el alumno tocó, y durable.py sale
    como consecuencia suya. (Antes este test era el de un «COMMIT;» en historial.transaccion que
    rompía los pasos de la 06: test_pasos.py es de regresión del código que da el curso, y el texto
    del 4.1 no pide esas letras; ver el informe de la rama contrato.)"""
    espacio, punto = espacio_del_punto(4, tmp_path / "mi_agente", "resumenes", "AND seq>? ORDER BY seq\"",
                                "AND seq>? ORDER BY seq DESC\"")
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS,
                                 ficheros_de_tests={"test_durable.py", "test_resumenes.py"})
    lineas = {l.modulo: l for l in c.lineas}
    assert lineas["durable"].estado == veredicto.CONSECUENCIA and lineas["durable"].por == "resumenes", lineas["durable"]
    assert c.culpables and c.culpables[0].modulo == "resumenes", c.culpables
    assert lineas["resumenes"].estado == veredicto.MAL and "con él fallan los de durable.py" in lineas["resumenes"].detalle


# ---------------------------------------------------------------- cada fallo, de su ejercicio


def test_injertar_pone_de_referencia_las_funciones_de_los_otros_ejercicios():
    """Para juzgar el 4.2 solo, el 4.3 del alumno se cambia por el de referencia: lo demás, suyo."""
    from curso.comprobaciones import culpa
    suyo = "import json\n\n\ndef validar(x):\n    return 'suyo'\n\n\ndef mover(x):\n    return 'mal'\n"
    referencia = "import json\n\n\ndef validar(x):\n    return 'ref'\n\n\n@decorada\ndef mover(x):\n    return 'bien'\n\n\ndef otra():\n    pass\n"
    nuevo = culpa.injertar(suyo, referencia, ["mover"])
    assert "return 'suyo'" in nuevo and "@decorada\ndef mover(x):\n    return 'bien'" in nuevo and "'mal'" not in nuevo
    assert "def otra():" in culpa.injertar(suyo, referencia, ["otra"])  # la que no tiene va al final
    assert culpa.injertar("def validar(:\n", referencia, ["mover"]) is None
    assert culpa.injertar(suyo, referencia, ["no_existe"]) is None


def test_el_ejercicio_de_un_culpable_es_el_de_lo_que_falla_y_no_el_primero_del_modulo():
    """resumenes.py tiene el 4.2 y el 4.3; falla el test de contrato del 4.3 y pasa la comprobación
    del 4.2. La variante ingenua, el primer ejercicio que escribe el módulo, diría 4.2."""
    from curso.comprobaciones import aparte, culpa
    from curso.comprobaciones.tests_del_curso import test_de_ejercicio
    tests = ["test_resumenes.py::test_a", "test_resumenes.py::test_b", test_de_ejercicio("4.2"), test_de_ejercicio("4.3")]
    ejercicio_de = {tests[0]: "4.2", tests[1]: "4.3", tests[2]: "4.2", tests[3]: "4.3"}
    resultados = {tests[0]: aparte.Resultado(aparte.PASA), tests[1]: aparte.Resultado(aparte.FALLA, "x"),
                  tests[2]: aparte.Resultado(aparte.PASA), tests[3]: aparte.Resultado(aparte.PASA)}
    c = culpa.Culpa("resumenes", culpa.SUS_TESTS, ejercicio=culpa.ejercicio_de_cada_modulo()["resumenes"])
    assert c.ejercicio == "4.2"  # la ingenua
    assert culpa._ejercicio_de_la_culpa(c, tests, resultados, {}, ejercicio_de, lambda t: "resumenes",
                                        "mi_agente", "mi_agente/") == "4.3"
    # Si falla la comprobación de un ejercicio, manda la suya (los casos de cada uno son solo suyos).
    resultados[tests[3]] = aparte.Resultado(aparte.FALLA, "y")
    resultados[tests[0]] = aparte.Resultado(aparte.FALLA, "z")
    assert culpa._ejercicio_de_la_culpa(c, tests, resultados, {}, ejercicio_de, lambda t: "resumenes",
                                        "mi_agente", "mi_agente/") == "4.3"


def test_un_fichero_del_curso_que_falta_es_el_culpable_y_no_quien_lo_importa():
    from curso.comprobaciones import culpa
    motivo = ("permisos.py no se puede importar: ModuleNotFoundError: No module named 'herramientas' · "
              "en mi_agente/permisos.py, línea 7: `import herramientas`")
    assert culpa.que_falta(motivo, {"permisos", "bucle"}, {"permisos", "bucle", "herramientas"}) == "herramientas"
    assert culpa.que_falta(motivo, {"permisos", "herramientas"}, {"permisos", "herramientas"}) is None  # lo tiene
    assert culpa.que_falta("No module named 'numpy'", {"permisos"}, {"permisos"}) is None  # no es del curso
    dada = culpa.Culpa("herramientas", culpa.FALTA, restaurar="python -m curso restaurar 01 --fichero herramientas.py")
    assert dada.texto() == ("falta en tu espacio; es código que da el curso: restáuralo con "
                            "python -m curso restaurar 01 --fichero herramientas.py")


def test_lo_que_falla_solo_por_un_fichero_del_curso_no_cuenta_contra_nadie():
    """La consecuencia de un culpable que es código del curso cuenta lo que dio con él de referencia;
    la de un culpable del alumno, como salió (nombrándolo)."""
    from curso.comprobaciones import aparte, culpa
    junto = {"t1": aparte.Resultado(aparte.FALLA, "No module named 'herramientas'"),
             "t2": aparte.Resultado(aparte.FALLA, "por resumenes")}
    reparto = culpa.Reparto(culpables=[culpa.Culpa("herramientas", culpa.FALTA, restaurar="…"),
                                       culpa.Culpa("resumenes", culpa.SUS_TESTS)],
                            por={"t1": "herramientas", "t2": "resumenes"},
                            aislados={"t1": aparte.Resultado(aparte.PASA), "t2": aparte.Resultado(aparte.PASA)})
    resultados, por = culpa.resultados_para(reparto, junto, lambda t: "permisos")
    assert resultados["t1"].estado == aparte.PASA and "t1" not in por
    assert resultados["t2"].estado == aparte.FALLA and por["t2"] == "resumenes"
