"""Tests de `python -m curso comprobar N`: los tests de un punto de control contra el espacio del alumno.

Las partes puras (qué test es de qué módulo, qué línea sale de unos eventos) se prueban con datos
inventados; lo demás, con espacios de verdad: una copia del punto de control 00 que pasa, una del
01 con un fallo a propósito, y espacios que se cuelgan, se mueren o importan lo que no hay. Casi
todo usa el punto de control 00 (tres tests, un par de segundos); el 01 corre una vez.

Cada test con procesos apunta la carpeta temporal del sistema a una suya y mira al final que quede
vacía: `comprobar` borra lo que crea, también si el código del alumno se cuelga.
"""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ayudas import vivo
from curso import calificar, rutas
from curso.calificar import BIEN, COLGADO, FALTA, MAL, SIN_COMPROBAR, SIN_TESTS, lineas_de, modulo_de_test

LIMITE_CORTO = 8  # segundos: de sobra para los tres tests del punto de control 00, poco para esperar


def punto(numero):
    return rutas.puntos_de_control()[numero]


def copia_del_punto(numero, destino):
    """Un espacio de alumno que es el punto de control `numero` tal cual (sus módulos, sin tests)."""
    destino.mkdir(parents=True)
    for modulo in punto(numero).glob("*.py"):
        shutil.copyfile(modulo, destino / modulo.name)
    return destino


def foto(carpeta):
    carpeta = Path(carpeta)
    return {p.relative_to(carpeta).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(carpeta.rglob("*"))}


# ---------------------------------------------------------------- partes puras


@pytest.mark.parametrize("fichero, modulo", [
    ("test_bucle.py", "bucle"),
    ("test_correr_cli.py", "correr"),
    ("test_agente_ventana.py", "agente"),
    ("test_buscar.py", "herramientas"),
    ("test_recorridos.py", None),
])
def test_cada_fichero_de_tests_es_de_su_modulo(fichero, modulo):
    modulos = ["agente", "api", "bucle", "correr", "entorno", "herramientas"]
    assert modulo_de_test(fichero, modulos) == modulo


def test_manda_el_prefijo_mas_largo_que_es_un_modulo():
    """Con `a.py` y `a_b.py`, test_a_b_c.py es de a_b; quedarse con el primer prefijo que casa
    (la variante ingenua) lo daría a `a`."""
    assert modulo_de_test("test_a_b_c.py", ["a", "a_b"]) == "a_b"
    ingenuo = next(p for p in ("a", "a_b") if "a_b_c".startswith(p))
    assert ingenuo != modulo_de_test("test_a_b_c.py", ["a", "a_b"])


def test_cada_fichero_de_tests_de_los_puntos_de_control_tiene_linea():
    """Todo test_*.py de un punto de control acaba en alguna línea: la de su módulo o la suya."""
    for carpeta in rutas.puntos_de_control().values():
        modulos = sorted(p.stem for p in carpeta.glob("*.py"))
        ficheros = sorted(p.name for p in (carpeta / "tests").glob("test_*.py"))
        lineas = lineas_de(modulos, set(modulos), ficheros, [], 0, 1)
        for f in ficheros:
            m = modulo_de_test(f, modulos)
            assert any(l.nombre == (f"{m}.py" if m else f"{f} (prueba varios módulos a la vez)")
                       for l in lineas), (carpeta.name, f)


def eventos_de(*tests, fallan=(), motivo="assert 1 == 2"):
    """Los eventos de una ejecución en la que corren `tests` ("test_a.py::test_x") en orden."""
    eventos = [{"tipo": "importa", "fichero": t.split("::")[0]} for t in tests]
    eventos += [{"tipo": "importado", "fichero": t.split("::")[0], "motivo": None} for t in tests]
    eventos.append({"tipo": "recogidos", "tests": [f"checkpoints/01_x/tests/{t}" for t in tests]})
    for t in tests:
        nodeid = f"checkpoints/01_x/tests/{t}"
        eventos.append({"tipo": "empieza", "test": nodeid})
        eventos.append({"tipo": "resultado", "test": nodeid, "fase": "call",
                        "resultado": "failed" if t in fallan else "passed",
                        "motivo": motivo if t in fallan else ""})
        eventos.append({"tipo": "resultado", "test": nodeid, "fase": "teardown", "resultado": "passed",
                        "motivo": ""})
    return eventos


def test_una_linea_por_modulo_con_el_primer_test_que_falla():
    eventos = eventos_de("test_a.py::test_1", "test_b.py::test_1", "test_b.py::test_2",
                         "test_b.py::test_3", fallan={"test_b.py::test_2", "test_b.py::test_3"},
                         motivo="AssertionError: esperaba 3 · assert 2 == 3")
    lineas = lineas_de(["a", "b", "c"], {"a", "b", "c"}, ["test_a.py", "test_b.py"], eventos, 1, 60)
    assert [(l.nombre, l.estado) for l in lineas] == [("a.py", BIEN), ("b.py", MAL), ("c.py", SIN_TESTS)]
    assert lineas[1].detalle == ("falla test_b.py::test_2: AssertionError: esperaba 3 · assert 2 == 3 "
                                 "(y 1 test más falla)")


def test_un_colgado_se_achaca_al_modulo_del_test_que_corria():
    """El proceso murió a mitad de test_b.py::test_2: b no terminó; c, que venía después, queda
    sin comprobar; a, que ya había pasado, sigue en verde."""
    eventos = eventos_de("test_a.py::test_1", "test_b.py::test_1", "test_b.py::test_2", "test_c.py::test_1")
    corte = next(i for i, e in enumerate(eventos)
                 if e["tipo"] == "empieza" and e["test"].endswith("test_b.py::test_2")) + 1
    lineas = lineas_de(["a", "b", "c"], {"a", "b", "c"}, ["test_a.py", "test_b.py", "test_c.py"],
                       eventos[:corte], None, 7)
    assert [(l.nombre, l.estado) for l in lineas] == [("a.py", BIEN), ("b.py", COLGADO), ("c.py", SIN_COMPROBAR)]
    assert lineas[1].detalle == "no terminó en 7 s (en test_b.py::test_2)"
    # El mismo corte con el proceso terminado por su cuenta (un os._exit): muerto, no colgado.
    muerto = lineas_de(["a", "b", "c"], {"a", "b", "c"}, ["test_a.py", "test_b.py", "test_c.py"],
                       eventos[:corte], 0, 7)
    assert muerto[1].estado == MAL and "terminó de golpe en test_b.py::test_2 (código 0)" in muerto[1].detalle


def test_un_modulo_que_falta_es_su_propia_linea_y_dice_que_leccion_lo_escribe():
    eventos = eventos_de("test_a.py::test_1")
    lineas = lineas_de(["a", "b"], {"a"}, ["test_a.py", "test_b.py"], eventos, 1, 60, {"b": 3})
    assert lineas[1].estado == FALTA and lineas[1].texto() == "✘ b.py: falta en tu espacio (lo escribe la lección 03)"


def test_sin_eventos_lo_dice_una_linea_aparte():
    lineas = lineas_de(["a"], {"a"}, ["test_a.py"], [], 4, 60, salida="ERROR: algo raro\n")
    assert lineas[-1].nombre == "los tests" and lineas[-1].estado == MAL
    assert "pytest no entendió la orden" in lineas[-1].detalle and "ERROR: algo raro" in lineas[-1].detalle


# ---------------------------------------------------------------- con procesos de verdad


def test_un_espacio_igual_al_punto_de_control_pasa(tmp_path, temporal, capsys):
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    assert calificar.comprobar(0, espacio=espacio, limite=60) == 0
    salida = capsys.readouterr().out
    assert re.search(r"^✔ calentamiento\.py: \d+ tests pasan$", salida, re.MULTILINE)
    assert "✔ Tu código pasa los tests del punto de control 00." in salida


def test_un_fallo_a_proposito_sale_con_el_test_que_lo_pilla(tmp_path, temporal):
    """El punto de control 01 con `permitido` aceptando cualquier respuesta que parezca un sí: la
    línea de permisos.py nombra el test que lo pilla y lo que esperaba; las demás, en verde."""
    espacio = copia_del_punto(1, tmp_path / "mi_agente")
    permisos = espacio / "permisos.py"
    texto = permisos.read_text(encoding="utf-8")
    assert "return usuario(nombre, entrada) is True" in texto
    permisos.write_text(texto.replace("return usuario(nombre, entrada) is True",
                                      "return bool(usuario(nombre, entrada))"), encoding="utf-8")
    c = calificar.comprobar_en(espacio, punto(1), limite=180)
    assert not c.en_verde
    (mala,) = [l for l in c.lineas if l.estado not in (BIEN, SIN_TESTS)]
    assert mala.nombre == "permisos.py" and mala.estado == MAL
    assert mala.detalle.startswith("falla test_permisos.py::test_permitido_solo_acepta_un_si_de_verdad: ")
    assert "assert True is False" in mala.detalle  # lo que esperaba, no una traza
    assert "Traceback" not in mala.detalle and "\n" not in mala.detalle


def modulo_que_se_cuelga(ficha):
    """calentamiento.py cuyo `ultima_linea` arranca un hijo que duerme, apunta su pid y el suyo en
    `ficha`, y no vuelve nunca."""
    return f'''import os, subprocess, sys, time

def ultima_linea(salida):
    hijo = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open({str(ficha)!r}, "w") as f:
        f.write(f"{{os.getpid()}} {{hijo.pid}}")
    while True:
        time.sleep(0.1)
'''


def test_un_espacio_que_se_cuelga_se_corta_y_no_deja_procesos(tmp_path, temporal):
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    ficha = tmp_path / "pids.txt"
    (espacio / "calentamiento.py").write_text(modulo_que_se_cuelga(ficha), encoding="utf-8")
    t = time.monotonic()
    c = calificar.comprobar_en(espacio, punto(0), limite=LIMITE_CORTO)
    assert time.monotonic() - t < LIMITE_CORTO + 10
    (linea,) = c.lineas
    assert linea.estado == COLGADO and not c.en_verde
    assert re.fullmatch(rf"no terminó en {LIMITE_CORTO} s \(en test_calentamiento\.py::test_\w+\)", linea.detalle)
    pytest_pid, hijo_pid = map(int, ficha.read_text().split())
    assert not vivo(pytest_pid) and not vivo(hijo_pid)  # todo el grupo, también el hijo que dormía


def test_un_espacio_que_se_muere_o_importa_lo_que_no_hay_es_una_linea_roja(tmp_path, temporal):
    muere = copia_del_punto(0, tmp_path / "muere")
    (muere / "calentamiento.py").write_text("import os\nos._exit(3)\n", encoding="utf-8")
    c = calificar.comprobar_en(muere, punto(0), limite=60)
    assert [(l.nombre, l.estado) for l in c.lineas] == [("calentamiento.py", MAL)]
    assert c.lineas[0].detalle == ("el proceso de los tests terminó de golpe mientras se importaba "
                                   "test_calentamiento.py (código 3)")

    raro = copia_del_punto(0, tmp_path / "raro")
    (raro / "calentamiento.py").write_text("import paquete_que_no_existe_en_ningun_sitio\n", encoding="utf-8")
    c = calificar.comprobar_en(raro, punto(0), limite=60)
    assert [(l.nombre, l.estado) for l in c.lineas] == [("calentamiento.py", MAL)]
    assert c.lineas[0].detalle == ("test_calentamiento.py no se pudo importar: ModuleNotFoundError: "
                                   "No module named 'paquete_que_no_existe_en_ningun_sitio'")


def test_nada_de_lo_que_hace_el_codigo_llega_a_tus_ficheros(tmp_path, temporal, monkeypatch):
    """Un módulo que escribe en su carpeta, en HOME y en recetario/ al importarse: tu espacio, tu
    HOME y el recetario del curso quedan igual, y un conftest.py de tu espacio no se usa."""
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    casa = tmp_path / "casa"
    casa.mkdir()
    monkeypatch.setenv("HOME", str(casa))
    calentamiento = espacio / "calentamiento.py"
    calentamiento.write_text(
        "from pathlib import Path\nfrom curso import rutas\n"
        "Path('escrito.txt').write_text('x')\n"
        "(Path.home() / 'escrito.txt').write_text('x')\n"
        "(rutas.RECETARIO / 'escrito.txt').write_text('x')\n"
        + calentamiento.read_text(encoding="utf-8"), encoding="utf-8")
    (espacio / "conftest.py").write_text("raise SystemExit('este conftest no debe cargarse')\n",
                                         encoding="utf-8")
    antes, recetario = foto(espacio), foto(rutas.RECETARIO)
    c = calificar.comprobar_en(espacio, punto(0), limite=60)
    assert c.en_verde, [l.texto() for l in c.lineas]
    assert foto(espacio) == antes and foto(rutas.RECETARIO) == recetario
    assert list(casa.iterdir()) == []


def test_un_modulo_que_falta_en_el_espacio(tmp_path, temporal):
    espacio = tmp_path / "mi_agente"
    espacio.mkdir()
    (espacio / "otro.py").write_text("X = 1\n", encoding="utf-8")
    c = calificar.comprobar_en(espacio, punto(0), limite=60)
    assert [(l.nombre, l.estado, l.detalle) for l in c.lineas] == [
        ("calentamiento.py", FALTA, "falta en tu espacio (lo escribe la lección 00)")]


def curso(*argumentos, entorno=None):
    return subprocess.run([sys.executable, "-m", "curso", *argumentos], cwd=rutas.RAIZ,
                          env={**os.environ, **(entorno or {})}, capture_output=True, text=True,
                          timeout=120)


def test_la_orden_comprueba_tu_espacio_y_sale_con_1_si_algo_falla(tmp_path):
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    (tmp_path / "temporal").mkdir()
    calentamiento = espacio / "calentamiento.py"
    calentamiento.write_text(calentamiento.read_text(encoding="utf-8") + "\n\ndef ultima_linea(salida):\n"
                             "    return ''\n", encoding="utf-8")
    r = curso("comprobar", "0", entorno={rutas.VARIABLE_ESPACIO: str(espacio),
                                         "TMPDIR": str(tmp_path / "temporal")})
    assert r.returncode == 1, r.stderr
    assert re.search(r"^✘ calentamiento\.py: falla test_calentamiento\.py::test_\w+: ", r.stdout, re.MULTILINE)
    assert list((tmp_path / "temporal").iterdir()) == []


def test_la_orden_con_un_punto_que_no_existe_o_un_limite_que_no_vale_sale_con_2(tmp_path):
    r = curso("comprobar", "99", "--espacio", str(tmp_path))
    assert r.returncode == 2 and "No hay ningún punto de control «99»" in r.stderr
    assert "python -m curso comprobar 00" in r.stderr
    r = curso("comprobar", "0", "--limite", "0")
    assert r.returncode == 2 and "tiene que ser mayor que cero" in r.stderr


def test_desde_el_cuaderno(tmp_path, temporal, monkeypatch, capsys):
    from curso.cuaderno import comprobar_espacio
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(copia_del_punto(0, tmp_path / "mi_agente")))
    comprobar_espacio(0)
    salida = capsys.readouterr().out
    assert "✔ calentamiento.py" in salida and "de CURSO_ESPACIO" in salida


def test_los_tests_corren_sin_cargar_complementos_que_no_usan(tmp_path, temporal):
    """El proceso de los tests no carga hypothesis si ningún test lo importa: su complemento de
    pytest lo cargaría entero (medio segundo de CPU en cada comprobación, y `calificar` hace una
    por alumno y lección). Los tests que lo usan lo importan ellos (el punto de control 01)."""
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    ficha = tmp_path / "cargados.txt"
    calentamiento = espacio / "calentamiento.py"
    calentamiento.write_text(  # lo que hay cargado cuando el proceso de los tests ya acaba
        f"import atexit, sys\natexit.register(lambda: open({str(ficha)!r}, 'w').write(str(sorted("
        "m for m in ('hypothesis', 'nbval') if m in sys.modules))))\n"
        + calentamiento.read_text(encoding="utf-8"), encoding="utf-8")
    c = calificar.comprobar_en(espacio, punto(0), limite=60)
    assert c.en_verde, [l.texto() for l in c.lineas]
    assert ficha.read_text() == "[]"
