"""Cada prueba de los puntos de control corre una sola vez, y nunca se salta una que sea distinta.

Los casos montan puntos de control pequeños en una carpeta temporal: dos copias de un test que
solo se diferencian en algo de lo que el test depende (un módulo que importa, uno que importa
ese, uno que ejecuta por su nombre, el conftest.py) tienen que correr las dos.
"""
from curso import rutas
from curso.autor import repetidos

TEST_QUE_IMPORTA = "import a\n\n\ndef test_a():\n    assert a.valor() == 1\n"


def montar(raiz, numero, ficheros, tests):
    """Un punto de control NN_x en `raiz` con `ficheros` ({nombre: texto}) y `tests` ({nombre: texto})."""
    carpeta = raiz / f"{numero:02d}_x"
    (carpeta / "tests").mkdir(parents=True)
    for nombre, texto in ficheros.items():
        (carpeta / nombre).write_text(texto, encoding="utf-8")
    for nombre, texto in {"conftest.py": "# igual en todos\n", **tests}.items():
        (carpeta / "tests" / nombre).write_text(texto, encoding="utf-8")
    return carpeta


def cuantas_corren(puntos):
    corren, _ = repetidos.tests_que_corren(puntos)
    return {n: [t.name for t in tests] for n, tests in corren.items()}


def test_una_copia_identica_con_los_mismos_modulos_corre_solo_en_el_punto_mas_alto(tmp_path):
    modulos = {"a.py": "def valor():\n    return 1\n"}
    puntos = {n: montar(tmp_path, n, modulos, {"test_a.py": TEST_QUE_IMPORTA}) for n in (1, 2, 3)}
    corren, saltados = repetidos.tests_que_corren(puntos)
    assert {n: [t.name for t in ts] for n, ts in corren.items()} == {3: ["test_a.py"]}
    assert [(t.name, donde) for t, donde in saltados[1]] == [("test_a.py", 3)]


def test_si_cambia_el_modulo_que_importa_corren_las_dos(tmp_path):
    puntos = {1: montar(tmp_path, 1, {"a.py": "def valor():\n    return 1\n"}, {"test_a.py": TEST_QUE_IMPORTA}),
              2: montar(tmp_path, 2, {"a.py": "def valor():\n    return 2\n"}, {"test_a.py": TEST_QUE_IMPORTA})}
    assert cuantas_corren(puntos) == {1: ["test_a.py"], 2: ["test_a.py"]}


def test_si_cambia_un_modulo_importado_por_el_importado_corren_las_dos(tmp_path):
    a = "import b\n\n\ndef valor():\n    return b.UNO\n"
    puntos = {1: montar(tmp_path, 1, {"a.py": a, "b.py": "UNO = 1\n"}, {"test_a.py": TEST_QUE_IMPORTA}),
              2: montar(tmp_path, 2, {"a.py": a, "b.py": "UNO = 2\n"}, {"test_a.py": TEST_QUE_IMPORTA})}
    assert cuantas_corren(puntos) == {1: ["test_a.py"], 2: ["test_a.py"]}

    # La variante ingenua, que solo mira el test y lo que importa directamente, se saltaría la
    # del punto 1 aunque b.py, del que depende, es otro.
    def huella_ingenua(test, carpeta):
        return test.read_bytes() + (carpeta / "a.py").read_bytes()
    assert huella_ingenua(puntos[1] / "tests/test_a.py", puntos[1]) == \
        huella_ingenua(puntos[2] / "tests/test_a.py", puntos[2])


def test_un_modulo_que_el_test_ejecuta_por_su_nombre_cuenta_como_dependencia(tmp_path):
    test = ('import subprocess, sys\n\n\ndef test_cli():\n'
            '    subprocess.run([sys.executable, "correr.py"], check=True)\n')
    puntos = {1: montar(tmp_path, 1, {"correr.py": "print(1)\n"}, {"test_cli.py": test}),
              2: montar(tmp_path, 2, {"correr.py": "print(2)\n"}, {"test_cli.py": test})}
    assert cuantas_corren(puntos) == {1: ["test_cli.py"], 2: ["test_cli.py"]}


def test_un_modulo_cargado_por_su_nombre_en_un_texto_cuenta_como_dependencia(tmp_path):
    test = 'import importlib\n\n\ndef test_x():\n    importlib.import_module("a")\n'
    puntos = {1: montar(tmp_path, 1, {"a.py": "X = 1\n"}, {"test_x.py": test}),
              2: montar(tmp_path, 2, {"a.py": "X = 2\n"}, {"test_x.py": test})}
    assert cuantas_corren(puntos) == {1: ["test_x.py"], 2: ["test_x.py"]}


def test_si_cambia_el_conftest_corren_las_dos(tmp_path):
    modulos = {"a.py": "def valor():\n    return 1\n"}
    puntos = {n: montar(tmp_path, n, modulos, {"test_a.py": TEST_QUE_IMPORTA}) for n in (1, 2)}
    (puntos[1] / "tests" / "conftest.py").write_text("# otro\n", encoding="utf-8")
    assert cuantas_corren(puntos) == {1: ["test_a.py"], 2: ["test_a.py"]}


def test_un_modulo_que_no_toca_el_test_no_impide_saltarse_la_copia(tmp_path):
    puntos = {1: montar(tmp_path, 1, {"a.py": "def valor():\n    return 1\n", "z.py": "Z = 1\n"},
                        {"test_a.py": TEST_QUE_IMPORTA}),
              2: montar(tmp_path, 2, {"a.py": "def valor():\n    return 1\n", "z.py": "Z = 2\n"},
                        {"test_a.py": TEST_QUE_IMPORTA})}
    assert cuantas_corren(puntos) == {2: ["test_a.py"]}


def test_en_el_curso_cada_test_saltado_es_la_misma_prueba_que_una_que_corre():
    puntos = rutas.puntos_de_control()
    corren, saltados = repetidos.tests_que_corren(puntos)
    for numero, lista in saltados.items():
        for test, donde in lista:
            copia = puntos[donde] / "tests" / test.name
            assert copia in corren[donde]
            assert test.read_bytes() == copia.read_bytes()
            assert repetidos.huella(test, puntos[numero]) == repetidos.huella(copia, puntos[donde])


def test_lo_que_se_recuerda_de_cada_fichero_sigue_a_su_texto_no_a_su_ruta(tmp_path):
    """`nombres_usados` recuerda lo que sacó de cada texto (la cuenta entera recorre unos 2300
    ficheros y solo unas decenas son distintos). Si un fichero cambia entre dos cuentas del mismo
    proceso, la segunda ve lo que importa ahora: aquí, `a.py` pasa a importar `b.py`, que es
    distinto en cada punto de control (recordar por ruta daría la prueba por repetida)."""
    puntos = {n: montar(tmp_path, n, {"a.py": "X = 1\n", "b.py": f"Y = {n}\n"}, {"test_a.py": TEST_QUE_IMPORTA})
              for n in (1, 2)}
    assert cuantas_corren(puntos) == {2: ["test_a.py"]}  # b.py no cuenta: nadie lo usa
    for carpeta in puntos.values():
        (carpeta / "a.py").write_text("import b\nX = 1\n", encoding="utf-8")
    assert cuantas_corren(puntos) == {1: ["test_a.py"], 2: ["test_a.py"]}
    nombres = repetidos.nombres_usados("import b\nX = 1\n")
    assert nombres == {"b"}
    assert not hasattr(nombres, "add")  # inmutable: todas las llamadas comparten el mismo resultado
