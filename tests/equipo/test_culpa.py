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


def espacio_06(destino, modulo, viejo, nuevo):
    """Un espacio igual al punto de control 06 con `viejo` cambiado por `nuevo` en `modulo`."""
    punto = calificar.rutas.puntos_de_control()[6]
    destino.mkdir()
    for fichero in punto.glob("*.py"):
        (destino / fichero.name).write_text(fichero.read_text(encoding="utf-8"), encoding="utf-8")
    fichero = destino / f"{modulo}.py"
    fichero.write_text(cambiar(fichero.read_text(encoding="utf-8"), viejo, nuevo), encoding="utf-8")
    return destino, punto


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


def test_una_transaccion_de_historial_que_rompe_los_pasos_se_achaca_a_historial(tmp_path, temporal):
    """historial.transaccion confirma con «COMMIT;»: confirma igual, y los tests de historial.py
    pasan, pero pasos.py reconoce el final de una transacción por «COMMIT» tal cual y deja de
    apuntar los pasos, así que fallan los de pasos.py. Antes se culpaba a pasos.py, que el alumno no
    tocó; ahora a historial.py (con su ejercicio, el 4.1), y pasos.py sale como consecuencia suya."""
    espacio, punto = espacio_06(tmp_path / "mi_agente", "historial", '        bd.execute("COMMIT")\n',
                                '        bd.execute("COMMIT;")\n')
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS, ficheros_de_tests={"test_pasos.py", "test_historial.py"})
    lineas = {l.modulo: l for l in c.lineas}
    assert lineas["pasos"].estado == veredicto.CONSECUENCIA and lineas["pasos"].por == "historial", lineas["pasos"]
    assert c.culpables and c.culpables[0].modulo == "historial", c.culpables
    assert lineas["historial"].estado == veredicto.MAL and "ejercicio 4.1" in lineas["historial"].detalle
