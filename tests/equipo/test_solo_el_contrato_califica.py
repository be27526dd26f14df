"""Solo el contrato de cada ejercicio califica (issue 40 §1): los hallazgos 1, 2, 4 y 7, cada uno por el camino del alumno que lo encontró.

Cada test falla con el código de antes (main en e6cedbd) y pasa ahora; el informe de la rama dice
lo que daba cada uno allí. Los que corren `comprobar N` o `calificar` enteros llevan `lento` (el
nivel rápido ya corre esas órdenes en test_culpa.py y test_comprobar_espacio.py), salvo el de
herramientas.py, que es además el de `restaurar --fichero`. Los espacios son un punto de control con un ejercicio escrito a la
manera del alumno encima: lo que el texto del ejercicio deja elegir (sus palabras, su estilo de
parámetros SQL) no puede pintar de rojo nada; lo que está mal se achaca al ejercicio que lo tiene;
y un fichero que da el curso y falta se nombra como tal, con una orden que lo restaura sin perder
nada, sin contar contra ejercicios que no toca.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curso import rutas
from curso.clase import calificar
from curso.comprobaciones import aparte, culpa, veredicto
from curso.comprobaciones import espacio as comprobar_n

# Donde ningún test se cuelga a propósito, el límite no es lo que se prueba: con holgura.
LIMITE_SIN_COLGADOS = 90


def espacio_del_punto(numero, destino, **funciones):
    """Un espacio igual al punto de control `numero`, con {módulo: texto de una función} puestas en
    lugar de las de la referencia (como las dejaría la celda del alumno)."""
    punto = rutas.puntos_de_control()[numero]
    destino.mkdir(parents=True)
    for fichero in punto.glob("*.py"):
        shutil.copyfile(fichero, destino / fichero.name)
    for modulo, funcion in funciones.items():
        fichero = destino / f"{modulo}.py"
        fichero.write_text(con_la_funcion(fichero.read_text(encoding="utf-8"), funcion), encoding="utf-8")
    return destino, punto


def con_la_funcion(texto, funcion):
    """`texto` (un módulo) con la función del mismo nombre cambiada por `funcion`."""
    import ast
    nombre = ast.parse(funcion).body[0].name
    (vieja,) = [n for n in ast.parse(texto).body if isinstance(n, ast.FunctionDef) and n.name == nombre]
    lineas = texto.split("\n")
    lineas[vieja.lineno - 1:vieja.end_lineno] = funcion.strip("\n").split("\n")
    return "\n".join(lineas)


def cambiar(fichero, viejo, nuevo):
    texto = fichero.read_text(encoding="utf-8")
    assert texto.count(viejo) == 1, viejo
    fichero.write_text(texto.replace(viejo, nuevo), encoding="utf-8")


def rojas(comprobacion):
    return [l.texto() for l in comprobacion.lineas if l.estado not in veredicto.NO_IMPIDEN_EL_VERDE]


# ---------------------------------------------------------------- hallazgo 1: sus palabras

# El 4.2 del alumno del hallazgo 1: sus comprobaciones y sus mensajes, sin exigir_texto ni
# exigir_entero_positivo (el texto no los pide; solo la segunda pista los sugiere).
VALIDAR_CANDIDATO_SUYO = '''
def validar_candidato(bd, ejecucion, corte, candidato):
    exigir_ejecucion(ejecucion)
    exigir_entero_positivo(corte, "El corte")
    if not isinstance(candidato, list) or len(candidato) == 0:
        raise ValueError("Un resumen es una lista con alguna afirmación.")
    for n, afirmacion in enumerate(candidato, start=1):
        if not isinstance(afirmacion, dict) or sorted(afirmacion) != ["fuente", "texto"]:
            raise ValueError(f"La afirmación {n} tiene que tener texto y fuente, y nada más.")
        texto, fuente = afirmacion["texto"], afirmacion["fuente"]
        if not isinstance(texto, str) or texto.strip() == "":
            raise ValueError(f"La afirmación {n} no tiene texto.")
        if type(fuente) is not int or fuente < 1 or fuente > 2**63 - 1:
            raise ValueError(f"La fuente de la afirmación {n} no es un número de mensaje.")
        if fuente > corte:
            raise ValueError(f"La afirmación {n} cita el mensaje {fuente}, que el resumen no cubre.")
        if not en_historial(bd, ejecucion, fuente):
            raise ValueError(f"La afirmación {n} cita el mensaje {fuente}, que no está en el historial.")
'''


@pytest.mark.lento  # comprobar N de verdad: test_culpa.py y test_comprobar_espacio.py ya lo corren en el nivel rápido
def test_un_4_2_con_sus_propias_comprobaciones_y_palabras_pasa_el_cuaderno_y_comprobar_4(tmp_path, temporal):
    """Antes: el cuaderno, 5/5 ✔; `comprobar 4`, «✘ resumenes.py: falla
    test_resumenes.py::test_fuente_booleana_rechazada: … Expected regex: 'no un bool'»."""
    espacio, punto = espacio_del_punto(4, tmp_path / "mi_agente", resumenes=VALIDAR_CANDIDATO_SUYO)
    cuaderno = aparte.correr_aparte(rutas.ficheros(espacio), punto, [], ["4.2"],
                                    limite_test=LIMITE_SIN_COLGADOS)
    assert [r.estado for r in cuaderno.resultados.values()] == [aparte.PASA], cuaderno.resultados
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS, ficheros_de_tests={"test_resumenes.py"})
    assert c.en_verde and not rojas(c), rojas(c)
    # La variante ingenua, calificar también con los tests de regresión: el de las palabras de la
    # referencia lo pondría en rojo.
    palabras = "test_resumenes.py::test_un_bool_se_rechaza_diciendo_que_es_un_bool"
    corrida = aparte.correr_aparte(rutas.ficheros(espacio), punto, [palabras],
                                   limite_test=LIMITE_SIN_COLGADOS)
    assert corrida.resultados[palabras].estado == aparte.FALLA and "no un bool" in corrida.resultados[palabras].motivo


# ---------------------------------------------------------------- hallazgo 2: sus parámetros SQL

# El 5.3 del alumno del hallazgo 2: parámetros con nombre, que sqlite3 acepta.
ACTIVAR_CON_NOMBRES = '''
def activar_si_estan_todos(bd, padre):
    bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = :padre AND estado = 'esperando'
             AND NOT EXISTS (SELECT 1 FROM hijos_esperados h
                             WHERE h.padre = :padre
                               AND NOT EXISTS (SELECT 1 FROM buzon b
                                               WHERE b.padre = h.padre AND b.hijo = h.hijo
                                                 AND b.disposicion = 'admitida'))""",
        {"padre": padre},
    )
'''
# Los tests de regresión de la 07 que corren el SQL de buzon.py tal cual sobre PostgreSQL.
SQL_DE_LA_05_EN_POSTGRESQL = [
    "test_postgresql.py::test_admitir_de_sqlite_tal_cual_mete_un_mensaje_en_un_padre_ya_terminado",
    "test_postgresql.py::test_dos_admisiones_con_el_codigo_de_sqlite_chocan_en_postgresql",
]


@pytest.mark.lento
def test_un_5_3_con_parametros_con_nombre_no_pinta_de_rojo_comprobar_7(tmp_path, temporal):
    """Antes: ✔ en el cuaderno y en `comprobar 5` y `6`; `comprobar 7`: «✘ test_postgresql.py …
    syntax error at or near ":"», sin nombrar buzon.py ni el 5.3."""
    espacio, punto = espacio_del_punto(7, tmp_path / "mi_agente", buzon=ACTIVAR_CON_NOMBRES)
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS,
                                 ficheros_de_tests={"test_postgresql.py", "test_buzon.py"})
    assert c.en_verde and not rojas(c), rojas(c)
    # El adaptador de la 07 entiende los parámetros con nombre: los tests de regresión que corren
    # ese SQL en PostgreSQL dicen lo mismo que con el de la referencia.
    corrida = aparte.correr_aparte(rutas.ficheros(espacio), punto, SQL_DE_LA_05_EN_POSTGRESQL,
                                   limite_test=LIMITE_SIN_COLGADOS)
    assert {t: r.estado for t, r in corrida.resultados.items()} == dict.fromkeys(SQL_DE_LA_05_EN_POSTGRESQL, aparte.PASA), \
        {t: r.motivo for t, r in corrida.resultados.items()}


# ---------------------------------------------------------------- hallazgo 4: la celda sola

TAMANO = 'def tamano(usage):\n    return usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)\n'
CABE_CON_TAMANO = ("def cabe(usage, observaciones, ventana=8192, max_tokens=512):\n"
                   "    return tamano(usage) + usage[\"output_tokens\"] + observaciones + max_tokens <= ventana\n")


def ejecutar_como_ipython(texto, nombres, numero):
    """Lo que hace IPython con una celda: guarda su texto en linecache, sin fecha, y la ejecuta."""
    import linecache
    fichero = f"/tmp/ipykernel_0/celda_{numero}.py"
    linecache.cache[fichero] = (len(texto), None, texto.splitlines(True), fichero)
    exec(compile(texto, fichero, "exec"), nombres)


def test_un_cabe_que_llama_a_tamano_tiene_el_mismo_veredicto_en_el_cuaderno_y_en_calificar(tmp_path, temporal):
    """El texto del 2.2 pide no llamar a `tamano` («cada ejercicio se comprueba por separado»).
    Antes: el cuaderno, 6/6 ✔ Hecho; `calificar`, que corre la celda sola, «✘ cabe() — NameError»."""
    import linecache

    from curso.comprobaciones import ejercicios
    nombres = {}
    try:
        ejecutar_como_ipython(TAMANO, nombres, 1)
        ejecutar_como_ipython(CABE_CON_TAMANO, nombres, 2)
        en_el_cuaderno = ejercicios.evaluar("2.2", nombres["cabe"])
        assert ejercicios.evaluar("2.1", nombres["tamano"]).aprobado
    finally:
        for numero in (1, 2):
            linecache.cache.pop(f"/tmp/ipykernel_0/celda_{numero}.py", None)
    informe = ejercicios.informe(en_el_cuaderno)
    assert not en_el_cuaderno.aprobado and "`tamano` es de otra celda" in informe, informe
    # calificar, con el cuaderno que el alumno guardó con esas dos celdas
    from test_calificar import alumno, calificar_juguete, cuaderno_con
    clase = tmp_path / "clase"
    espacio = alumno(clase, "eva", {"calentamiento.py": (rutas.puntos_de_control()[0] / "calentamiento.py").read_text()})
    cuaderno_con(espacio.parent, {"2.1": TAMANO, "2.2": CABE_CON_TAMANO})
    fila = calificar_juguete(clase, tmp_path / "notas", lecciones=[2], limite=aparte.LIMITE_TEST)["eva"]
    assert fila["02 estado"].startswith("✘ cabe()"), fila["02 estado"]
    assert (fila["02 ejercicios"], fila["02 ejercicios en total"]) == ("1", "2")
    # La variante ingenua: comprobar la función con los nombres de todo el cuaderno, que la da por buena.
    assert ejercicios._evaluar(ejercicios.buscar("2.2"), nombres["cabe"], None).aprobado


# ---------------------------------------------------------------- hallazgo 7: de quién es cada fallo


@pytest.mark.lento  # comprobar N de verdad: test_culpa.py y test_comprobar_espacio.py ya lo corren en el nivel rápido
def test_un_fallo_del_4_3_se_achaca_al_4_3_y_no_cuenta_contra_el_4_2(tmp_path, temporal):
    """`= ?` en lugar de `IS ?`: con base None no mueve nunca el puntero. Antes: «(lo escribe el
    ejercicio 4.2)», con la pista del 4.2, en `comprobar 4` y en `calificar`."""
    espacio, punto = espacio_del_punto(4, tmp_path / "mi_agente")
    cambiar(espacio / "resumenes.py", "AND resumen_activo IS ?", "AND resumen_activo = ?")
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS, ficheros_de_tests={"test_resumenes.py"})
    assert c.culpables and (c.culpables[0].modulo, c.culpables[0].ejercicio) == ("resumenes", "4.3"), c.culpables
    linea = next(l for l in c.lineas if l.modulo == "resumenes")
    assert linea.ejercicio == "4.3" and "ejercicio 4.2" not in linea.detalle, linea
    # Los tests del 4.2 pasan con el 4.3 de referencia injertado: el 4.2 está hecho.
    assert c.ejercicios["4.2"].estado == aparte.PASA and c.ejercicios["4.3"].estado != aparte.PASA, c.ejercicios


@pytest.mark.lento  # comprobar N de verdad: test_culpa.py y test_comprobar_espacio.py ya lo corren en el nivel rápido
def test_un_fallo_del_5_2_se_achaca_al_5_2(tmp_path, temporal):
    """admitir numera la trayectoria contando los mensajes de todos los padres. Antes: «(lo escribe
    el ejercicio 5.1)», el primero de buzon.py."""
    espacio, punto = espacio_del_punto(5, tmp_path / "mi_agente")
    cambiar(espacio / "buzon.py", '"SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)',
            '"SELECT COUNT(*) + 1 FROM mensajes"')
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS, ficheros_de_tests={"test_buzon.py"})
    assert c.culpables and (c.culpables[0].modulo, c.culpables[0].ejercicio) == ("buzon", "5.2"), c.culpables
    assert c.ejercicios["5.1"].estado == aparte.PASA and c.ejercicios["5.3"].estado == aparte.PASA, c.ejercicios


def foto(carpeta):
    return {p.relative_to(carpeta).as_posix(): p.read_bytes() for p in sorted(Path(carpeta).rglob("*")) if p.is_file()}


def test_sin_herramientas_py_se_nombra_el_fichero_que_falta_y_la_orden_lo_restaura(tmp_path, temporal):
    """herramientas.py es código que da el curso (ningún ejercicio lo escribe). Antes: «permisos.py:
    no se puede importar … (lo escribe el ejercicio 1.2)» lo primero, y el 1.2 y el 1.3 en rojo."""
    espacio, punto = espacio_del_punto(1, tmp_path / "mi_agente")
    (espacio / "herramientas.py").unlink()
    c = comprobar_n.comprobar_en(espacio, punto, LIMITE_SIN_COLGADOS)
    primero = c.culpables[0]
    assert (primero.modulo, primero.por) == ("herramientas", culpa.FALTA), c.culpables
    orden = "python -m curso restaurar 01 --fichero herramientas.py"
    assert orden in primero.texto() and "ejercicio" not in primero.texto()
    assert rojas(c) == [next(l.texto() for l in c.lineas if l.modulo == "herramientas")], rojas(c)
    assert {id: r.estado for id, r in c.ejercicios.items()} == dict.fromkeys(["0.1", "1.1", "1.2", "1.3"], aparte.PASA)
    # La orden que dice: pone herramientas.py y no toca nada más (tampoco un permisos.py del alumno).
    (espacio / "permisos.py").write_text((espacio / "permisos.py").read_text() + "# mío\n", encoding="utf-8")
    antes = foto(espacio)
    hecha = subprocess.run([sys.executable, "-m", "curso", *orden.split()[3:]], cwd=rutas.RAIZ, text=True,
                           capture_output=True, env={**os.environ, rutas.VARIABLE_ESPACIO: str(espacio)}, timeout=120)
    assert hecha.returncode == 0, hecha.stderr
    despues = foto(espacio)
    assert despues.pop("herramientas.py") == (punto / "herramientas.py").read_bytes()
    assert despues == antes


def test_restaurar_un_fichero_guarda_antes_el_que_habia(tmp_path, monkeypatch, capsys):
    """Un herramientas.py roto del alumno no se pierde: queda en .copias/ y lo dice."""
    from curso.alumno import puntos
    espacio, punto = espacio_del_punto(1, tmp_path / "mi_agente")
    (espacio / "herramientas.py").write_text("def leer(\n", encoding="utf-8")
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    assert puntos.restaurar(1, fichero="herramientas.py") == 0
    assert (espacio / "herramientas.py").read_bytes() == (punto / "herramientas.py").read_bytes()
    (guardado,) = (espacio / ".copias").iterdir()
    assert guardado.read_text(encoding="utf-8") == "def leer(\n" and guardado.name in capsys.readouterr().out
    assert puntos.restaurar(1, fichero="no_existe.py") == puntos.ARGUMENTO_INVALIDO


@pytest.mark.lento
def test_calificar_sin_herramientas_py_cuenta_los_ejercicios_de_la_01_que_estan_bien(tmp_path, temporal):
    """Antes: «5/98 tests · 1/3 ej.» en la 01 aunque el 1.2 y el 1.3 estaban bien."""
    clase = tmp_path / "clase"
    espacio, _ = espacio_del_punto(1, clase / "ana" / "mi_agente")
    (espacio / "herramientas.py").unlink()
    assert calificar.calificar(clase, salida=tmp_path / "notas", limite=LIMITE_SIN_COLGADOS, lecciones=[1],
                               a_la_vez=1) == 0
    from test_calificar import tabla
    (fila,) = tabla(tmp_path / "notas")
    assert fila["01 estado"].startswith("✘ herramientas.py (falta)"), fila["01 estado"]
    assert fila["01 ejercicios"] == fila["01 ejercicios en total"] == "3", fila
    assert fila["01 tests"] == fila["01 tests en total"], fila
    assert "restaurar 01 --fichero herramientas.py" in fila["comentario"], fila["comentario"]
