"""`%%modulo NOMBRE --cambia`: el módulo anterior más las piezas de la celda (curso/alumno/componer.py).

Los casos pequeños fijan cada regla (sustituir en su sitio, añadir detrás de lo que precede en la
celda, decoradores y comentarios, imports, docstring); los de los cuadernos comprueban que cada
celda --cambia de solutions/ compone, sobre el punto de control anterior (o sobre lo que escribió
una celda anterior de la misma lección), exactamente el suyo, y
que volver a ejecutarla no cambia nada. Los de la magia, que un error no escribe nada.
"""
import textwrap

import nbformat
import pytest

from curso import rutas
from curso.alumno import componer, cuaderno
from curso.alumno.componer import ErrorAlComponer

ANTES = textwrap.dedent('''\
    """Un módulo de prueba.

    Lección 01. Lo primero.
    """
    import os
    from pathlib import Path

    from entorno import HERRAMIENTAS, resultado

    LIMITE = 10  # caracteres


    def uno():
        return 1


    # Un comentario pegado a dos.
    @functools.cache
    def dos():
        return 2


    class Tres:
        pass


    if __name__ == "__main__":
        uno()
    ''')


def cuerpo(texto):
    return textwrap.dedent(texto)


def test_sustituye_una_funcion_en_su_sitio_y_deja_el_resto_igual():
    hecho = componer.componer(ANTES, cuerpo('''\
        def uno():
            return "uno"
        '''))
    assert hecho.texto == ANTES.replace("return 1", 'return "uno"')
    assert hecho.cambia == ["uno()"] and not hecho.anade


def test_una_funcion_nueva_va_detras_de_la_que_la_precede_en_la_celda():
    hecho = componer.componer(ANTES, cuerpo('''\
        def uno():
            return 1


        def uno_y_medio():
            return 1.5
        '''))
    assert hecho.iguales == ["uno()"] and hecho.anade == ["uno_y_medio()"]
    assert "return 1\n\n\ndef uno_y_medio():\n    return 1.5\n\n\n# Un comentario pegado a dos." in hecho.texto


def test_un_nombre_que_no_estaba_va_al_final_antes_de_main():
    hecho = componer.componer(ANTES, "def cuatro():\n    return 4\n")
    assert hecho.anade == ["cuatro()"]
    assert hecho.texto.endswith("class Tres:\n    pass\n\n\ndef cuatro():\n    return 4\n\n\n"
                                'if __name__ == "__main__":\n    uno()\n')


def test_las_constantes_del_principio_de_la_celda_van_con_las_del_fichero():
    hecho = componer.componer(ANTES, "OTRO = 2  # más\n\n\ndef cinco():\n    return 5\n")
    assert hecho.anade == ["OTRO", "cinco()"]
    assert "LIMITE = 10  # caracteres\nOTRO = 2  # más\n\n\ndef uno():" in hecho.texto
    con_hueco = componer.componer(ANTES, "import re\n\nOTRO = 2\n").texto  # la línea en blanco de la celda
    assert "LIMITE = 10  # caracteres\n\nOTRO = 2\n\n\ndef uno():" in con_hueco
    assert hecho.texto.index("def cinco") > hecho.texto.index("class Tres")


def test_un_decorador_y_el_comentario_pegado_van_con_su_funcion():
    hecho = componer.componer(ANTES, cuerpo('''\
        # Otro comentario.
        @functools.lru_cache
        def dos():
            return "dos"
        '''))
    assert "Un comentario pegado a dos" not in hecho.texto and "@functools.cache" not in hecho.texto
    assert "# Otro comentario.\n@functools.lru_cache\ndef dos():\n    return \"dos\"\n" in hecho.texto
    assert hecho.cambia == ["dos()"]


def test_imports_nuevos_en_su_grupo_y_en_orden_y_del_mismo_modulo_sustituyen():
    hecho = componer.componer(ANTES, cuerpo('''\
        import json
        import sys
        from api import ErrorVentana
        from entorno import CATALOGO, resultado
        '''))
    assert ("import json\nimport os\nimport sys\nfrom pathlib import Path\n\n"
            "from api import ErrorVentana\nfrom entorno import CATALOGO, resultado\n\nLIMITE") in hecho.texto
    assert hecho.imports_nuevos == ["import json", "import sys", "from api import ErrorVentana"]
    assert hecho.imports_cambiados == ["from entorno import CATALOGO, resultado"]


def test_un_import_en_un_fichero_que_no_importaba_nada_va_tras_el_docstring():
    hecho = componer.componer('"""Doc."""\n\nX = 1\n', "import re\n")
    assert hecho.texto == '"""Doc."""\nimport re\n\nX = 1\n'


def test_el_docstring_de_la_celda_es_un_parrafo_mas_y_no_se_repite():
    celda = '"""Lección 03. Lo nuevo,\nen dos líneas.\n"""\n'
    hecho = componer.componer(ANTES, celda)
    assert hecho.texto.startswith('"""Un módulo de prueba.\n\nLección 01. Lo primero.\n\n'
                                  'Lección 03. Lo nuevo,\nen dos líneas.\n"""\nimport os\n')
    assert hecho.parrafo
    otra_vez = componer.componer(hecho.texto, celda)
    assert otra_vez.texto == hecho.texto and not otra_vez.parrafo


def test_componer_dos_veces_lo_mismo_da_lo_mismo():
    celda = cuerpo('''\
        """Lección 05. Más."""
        import re

        NUEVA = 3


        def uno():
            return "uno"


        def seis():
            return 6
        ''')
    una = componer.componer(ANTES, celda).texto
    assert componer.componer(una, celda).texto == una


def test_el_resumen_dice_lo_que_cambia_en_castellano():
    hecho = componer.componer(ANTES, "import re\n\n\ndef uno():\n    return 0\n\n\ndef siete():\n    pass\n")
    assert hecho.resumen() == ["cambia: uno()", "añade: siete()", "import nuevo: import re"]
    assert componer.componer(ANTES, "def uno():\n    return 1\n").resumen() == ["sin cambios: uno()"]


@pytest.mark.parametrize("celda, dice", [
    ("def uno(:\n    pass\n", "La celda no es Python válido (línea 1"),
    ("print('hola')\n", "La línea 1 de la celda no es un import, un def, una class ni una asignación"),
    ("def uno():\n    pass\n\n\ndef uno():\n    pass\n", "uno está dos veces en la celda"),
    ("# suelto\n\ndef uno():\n    pass\n", "comentario suelto antes de la línea 3"),
    ("def uno():\n    pass\n\n# al final\n", "acaba con un comentario suelto"),
    ("x = 1; y = 2\n", "dos sentencias"),
])
def test_una_celda_que_no_se_puede_componer_lo_dice_en_castellano(celda, dice):
    with pytest.raises(ErrorAlComponer, match=dice.replace("(", r"\(")):
        componer.componer(ANTES, celda)


def test_un_comentario_suelto_que_ya_estaba_delante_de_la_pieza_no_impide_volver_a_ejecutar():
    """Una celda que añade una sección («# --- Apoyo ---» y sus funciones) se puede ejecutar otra
    vez (el alumno corrige su ejercicio y la repite): el comentario es el mismo que ya tiene
    delante esa pieza, así que no hay duda de dónde va. Uno distinto sigue siendo un error."""
    celda = "def siete():\n    return 7\n\n\n# --- Apoyo ---\n\ndef _ocho():\n    return 8\n"
    una = componer.componer(ANTES, celda).texto
    assert "\n\n\n# --- Apoyo ---\n\ndef _ocho():" in una
    assert componer.componer(una, celda).texto == una
    with pytest.raises(ErrorAlComponer, match="comentario suelto antes de la línea 7"):
        componer.componer(una, celda.replace("Apoyo", "Otra cosa"))


def test_un_nombre_repetido_en_el_fichero_anterior_no_se_adivina():
    with pytest.raises(ErrorAlComponer, match="está 2 veces en tu m.py anterior"):
        componer.componer("X = 1\nX = 2\n", "X = 3\n", "m")


def test_el_diff_dice_antes_y_ahora():
    hecho = componer.componer(ANTES, "def uno():\n    return 0\n")
    diff = componer.diferencias(ANTES, hecho.texto, "m")
    assert diff.startswith("--- m.py (antes)\n+++ m.py (ahora)\n")
    assert "-    return 1\n+    return 0\n" in diff


# --- Las celdas --cambia de los cuadernos ----------------------------------------------------------

def celdas_que_cambian():
    """(lección, nombre, cuerpo de la celda sin marcas, id) de cada celda %%modulo ... --cambia."""
    for ruta in sorted(rutas.SOLUCIONES.glob("[0-9][0-9]*_*.ipynb")):
        for celda in nbformat.read(ruta, as_version=4).cells:
            primera, _, resto = celda.source.partition("\n")
            if celda.cell_type == "code" and primera.startswith("%%modulo") and "--cambia" in primera.split():
                yield rutas.numero_de_leccion(ruta.name), primera.split()[1], cuaderno.sin_marcas(resto), celda.id


CELDAS = list(celdas_que_cambian())


def versiones_de(leccion, nombre):
    """[(id, texto que deja la celda)] de cada celda %%modulo `nombre` de la lección, en orden, como
    las ejecuta el cuaderno: una sin --cambia escribe el fichero entero; una --cambia compone sobre
    lo que dejó la anterior (en la misma lección, o el punto de control anterior)."""
    ruta = next(rutas.SOLUCIONES.glob(f"{leccion:02d}_*.ipynb"))
    anterior = rutas.puntos_de_control()[rutas.anterior(leccion)] / f"{nombre}.py"
    texto = anterior.read_text(encoding="utf-8") if anterior.exists() else None
    versiones = []
    for celda in nbformat.read(ruta, as_version=4).cells:
        primera, _, resto = celda.source.partition("\n")
        if celda.cell_type != "code" or primera.split()[:2] != ["%%modulo", nombre]:
            continue
        if "--cambia" in primera.split():
            assert texto is not None, f"la celda {celda.id} cambia {nombre}.py, que aún no existe"
            texto = componer.componer(texto, cuaderno.sin_marcas(resto), nombre).texto
        else:
            texto = cuaderno.sin_marcas(resto).rstrip("\n") + "\n"
        versiones.append((celda.id, texto))
    return versiones


MODULOS_QUE_CAMBIAN = sorted({(leccion, nombre) for leccion, nombre, _, _ in CELDAS})


def test_hay_celdas_que_cambian_en_las_lecciones_03_05_y_06():
    assert {(n, m) for n, m, _, _ in CELDAS} >= {(3, "bucle"), (3, "agente"), (3, "correr"), (5, "entorno"),
                                                   (5, "herramientas"), (5, "permisos"), (6, "agentes")}


@pytest.mark.parametrize("leccion, nombre", MODULOS_QUE_CAMBIAN, ids=[f"{n:02d} {m}" for n, m in MODULOS_QUE_CAMBIAN])
def test_las_celdas_que_cambian_componen_su_punto_de_control_sobre_el_anterior(leccion, nombre):
    """El punto de control anterior (o lo que escribió una celda de antes en la misma lección, como
    la primera de agentes.py en la 06) más las celdas --cambia, en orden, es, byte a byte, el de
    la lección."""
    final = (rutas.puntos_de_control()[leccion] / f"{nombre}.py").read_text(encoding="utf-8")
    versiones = versiones_de(leccion, nombre)
    assert versiones[-1][1] == final, f"tras la celda {versiones[-1][0]}, {nombre}.py no es el del punto de control"


@pytest.mark.parametrize("leccion, nombre, celda, id", CELDAS, ids=[f"{c[0]:02d} {c[1]} {c[3]}" for c in CELDAS])
def test_volver_a_ejecutar_una_celda_que_cambia_no_cambia_el_punto_de_control(leccion, nombre, celda, id):
    """Sobre el módulo del punto de control de su lección, que ya la lleva, la celda no cambia nada."""
    final = (rutas.puntos_de_control()[leccion] / f"{nombre}.py").read_text(encoding="utf-8")
    assert componer.componer(final, celda, nombre).texto == final


# --- La magia -------------------------------------------------------------------------------------

@pytest.fixture
def espacio(tmp_path, monkeypatch):
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(tmp_path / "espacio"))
    monkeypatch.setattr(cuaderno.REFERENCIAS, "rutas", {})
    (tmp_path / "espacio").mkdir()
    yield tmp_path / "espacio"
    cuaderno._olvidar()


def test_la_magia_compone_sobre_el_fichero_del_espacio_y_dice_que_cambia(espacio, capsys):
    (espacio / "prueba_componer.py").write_text('"""Doc."""\n\n\ndef a():\n    return 1\n', encoding="utf-8")
    cuaderno.modulo("prueba_componer --cambia", "def b():\n    # BEGIN SOLUCIÓN\n    return a() + 1\n    # END SOLUCIÓN\n")
    assert (espacio / "prueba_componer.py").read_text(encoding="utf-8") == (
        '"""Doc."""\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return a() + 1\n')
    salida = capsys.readouterr().out
    assert "prueba_componer.py escrito en tu espacio: tu versión anterior, con el cambio de esta celda" in salida
    assert "  añade: b()" in salida


def test_con_un_error_la_magia_no_escribe_nada(espacio, capsys):
    ruta = espacio / "prueba_componer.py"
    ruta.write_text("def a():\n    return 1\n", encoding="utf-8")
    cuaderno.modulo("prueba_componer --cambia", "def b(:\n")
    assert ruta.read_text(encoding="utf-8") == "def a():\n    return 1\n"
    assert not (espacio / cuaderno.CARPETA_DE_COPIAS).exists()
    salida = capsys.readouterr().out
    assert "✘ La celda no es Python válido" in salida and "No se ha escrito nada" in salida


def test_sin_version_anterior_la_magia_no_escribe_nada(espacio, capsys, monkeypatch):
    monkeypatch.setattr(cuaderno, "_leccion", None)
    cuaderno.modulo("prueba_componer --cambia", "def b():\n    pass\n")
    assert not (espacio / "prueba_componer.py").exists()
    assert "ejecuta la primera celda de la lección" in capsys.readouterr().out


def test_una_opcion_que_no_existe_se_dice(espacio, capsys):
    cuaderno.modulo("prueba_componer --cambio", "X = 1\n")
    assert not (espacio / "prueba_componer.py").exists()
    assert "las opciones son --cambia" in capsys.readouterr().out


def test_con_un_ejercicio_pendiente_compone_sobre_la_referencia_y_guarda_la_del_alumno(espacio, tmp_path, capsys):
    referencia = tmp_path / "09_referencia" / "prueba_componer.py"
    referencia.parent.mkdir()
    referencia.write_text("def a():\n    return 1\n", encoding="utf-8")
    suyo = "def a():\n    raise NotImplementedError('Ejercicio 9.9 pendiente')\n"
    (espacio / "prueba_componer.py").write_text(suyo, encoding="utf-8")
    cuaderno.REFERENCIAS.rutas["prueba_componer"] = str(referencia)
    cuaderno.modulo("prueba_componer --cambia", "def b():\n    return 2\n")
    assert (espacio / "prueba_componer.py").read_text(encoding="utf-8") == (
        "def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    (copia,) = (espacio / cuaderno.CARPETA_DE_COPIAS).iterdir()
    assert copia.read_text(encoding="utf-8") == suyo
    assert "prueba_componer" not in cuaderno.REFERENCIAS.rutas  # desde ahora, su fichero
    salida = capsys.readouterr().out
    assert "la versión de referencia (09_referencia: tu prueba_componer.py tiene un ejercicio pendiente)" in salida
    assert "tu versión, con el ejercicio pendiente, está copiada en .copias/" in salida
