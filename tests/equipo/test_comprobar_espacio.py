"""Tests de `python -m curso comprobar N`: los tests de un punto de control contra el espacio del alumno.

Las partes puras (qué test es de qué módulo, qué línea sale de unos resultados, qué dice el informe
de una vuelta) se prueban con datos inventados; lo demás, con espacios de verdad: una copia del
punto de control 00 que pasa, una del 01 con un fallo a propósito, y espacios que se cuelgan, se
mueren o importan lo que no hay. Casi todo usa el punto de control 00 (tres tests, un par de
segundos); el 01 corre una vez.

Cada test con procesos apunta la carpeta temporal del sistema a una suya y mira al final que quede
vacía: `comprobar` borra lo que crea, también si el código del alumno se cuelga.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ayudas import vivo
from curso import rutas
from curso.comprobaciones import aparte, tests_del_curso
from curso.comprobaciones import espacio as comprobar_aparte
from curso.comprobaciones.aparte import Resultado
from curso.comprobaciones.veredicto import BIEN, COLGADO, FALTA, MAL, SIN_TESTS, lineas_de, modulo_de_test

LIMITE_CORTO = 4  # segundos por test: de sobra para los del punto de control 00, poco para esperar


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


def test_cada_fichero_de_tests_corre_entero_en_un_proceso_y_los_procesos_llevan_parecido():
    """Un fichero repartido entre procesos (la ingenua: uno de cada cuatro tests) prepara sus
    fixtures de módulo en cada uno; entero, una vez. Y ningún proceso lleva mucho más que otro."""
    punto = rutas.puntos_de_control()[6]
    tests = tests_del_curso.tests_del_punto(punto)
    grupos = comprobar_aparte.partir(tests, 4)
    assert sorted(t for g in grupos for t in g) == sorted(tests)
    ficheros = [{tests_del_curso.fichero_de(t) for t in g} for g in grupos]
    assert sum(map(len, ficheros)) == len(set().union(*ficheros))  # ningún fichero en dos procesos
    mayor = max(sum(1 for t in tests if tests_del_curso.fichero_de(t) == f) for f in set().union(*ficheros))
    assert max(map(len, grupos)) - min(map(len, grupos)) <= mayor
    ingenua = [tests[i::4] for i in range(4)]
    assert any(len({tests_del_curso.fichero_de(t) for t in g} & {tests_del_curso.fichero_de(t) for t in h}) > 0
               for g in ingenua for h in ingenua if g is not h)


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
        lineas = lineas_de(modulos, set(modulos), tests_del_curso.tests_del_punto(carpeta), {})
        for f in ficheros:
            m = modulo_de_test(f, modulos)
            assert any(l.nombre == (f"{m}.py" if m else f"{f} (prueba varios módulos a la vez)")
                       for l in lineas), (carpeta.name, f)


def test_una_linea_por_modulo_con_el_primer_test_que_falla():
    resultados = {"test_a.py::test_1": Resultado(aparte.PASA),
                  "test_b.py::test_1": Resultado(aparte.PASA),
                  "test_b.py::test_2": Resultado(aparte.FALLA, "AssertionError: esperaba 3 · assert 2 == 3"),
                  "test_b.py::test_3": Resultado(aparte.FALLA, "otra cosa")}
    lineas = lineas_de(["a", "b", "c"], {"a", "b", "c"}, list(resultados), resultados)
    assert [(l.nombre, l.estado) for l in lineas] == [("a.py", BIEN), ("b.py", MAL), ("c.py", SIN_TESTS)]
    assert lineas[1].detalle == ("falla el test «2» (test_b.py): AssertionError: esperaba 3 · assert 2 == 3 "
                                 "(y 1 test más falla)")


def test_un_test_que_llega_a_un_esbozo_nombra_su_ejercicio():
    esbozo = Resultado(aparte.FALLA, "NotImplementedError: Ejercicio 3.2 pendiente: …", pendiente="3.2")
    resultados = {"test_compactar.py::test_1": esbozo, "test_compactar.py::test_2": esbozo,
                  "test_compactar.py::test_3": Resultado(aparte.PASA)}
    (linea,) = lineas_de(["compactar"], {"compactar"}, list(resultados), resultados)
    assert linea.texto() == "✘ compactar.py: ejercicio 3.2 pendiente (llegan a su esbozo 2 tests)"


def test_un_fallo_en_un_test_de_varios_modulos_dice_en_que_modulo_fallo():
    """test_recorridos.py usa varios módulos: su línea (y la celda de calificar) nombra el del
    alumno en el que saltó la excepción, no solo el fichero de tests."""
    from curso.clase.calificar import _quien
    resultados = {"test_recorridos.py::test_arregla": Resultado(aparte.FALLA, "ValueError: M mal formada", donde="compactar")}
    (linea,) = lineas_de(["compactar"], {"compactar"}, list(resultados), resultados)[1:]
    assert linea.detalle == "falla el test «arregla» (test_recorridos.py) (en compactar.py): ValueError: M mal formada"
    assert _quien(linea) == "compactar.py"


class _Lector:
    """Lo que `aparte._repartir` lee de una vuelta, inventado."""

    def __init__(self, eventos, importando=None, corriendo=None, donde=None):
        self.eventos, self.importando, self.corriendo, self.donde = eventos, importando, corriendo, donde


def eventos_de(*tests):
    """Los eventos de una vuelta en la que corren y pasan `tests` ("test_a.py::test_x"), en orden."""
    eventos = [{"tipo": "recogidos", "tests": [f"checkpoints/01_x/tests/{t}" for t in tests]}]
    for t in tests:
        nodeid = f"checkpoints/01_x/tests/{t}"
        eventos += [{"tipo": "empieza", "test": nodeid},
                    {"tipo": "resultado", "test": nodeid, "fase": "call", "resultado": "passed", "motivo": ""},
                    {"tipo": "resultado", "test": nodeid, "fase": "teardown", "resultado": "passed", "motivo": ""}]
    return eventos


def test_un_colgado_se_achaca_al_test_que_corria_y_los_demas_siguen_pendientes():
    """La vuelta se paró a mitad de test_b.py::test_2 (pasó de su límite): ese queda colgado, con el
    módulo donde estaba; a, que ya había pasado, pasa; test_c, que venía después, sigue pendiente
    para la vuelta siguiente (no «sin comprobar», que es lo que haría un solo límite para todo)."""
    todos = ["test_a.py::test_1", "test_b.py::test_1", "test_b.py::test_2", "test_c.py::test_1"]
    eventos = eventos_de(*todos)
    corte = next(i for i, e in enumerate(eventos)
                 if e["tipo"] == "empieza" and e["test"].endswith("test_b.py::test_2")) + 1
    corrida = aparte.Corrida()
    culpables = aparte._repartir(corrida, todos, _Lector(eventos[:corte], corriendo=eventos[corte - 1]["test"],
                                                         donde=("b", "12")), None, "limite", 7)
    assert culpables == ["test_b.py::test_2"]
    assert {t: r.estado for t, r in corrida.resultados.items()} == {
        "test_a.py::test_1": aparte.PASA, "test_b.py::test_1": aparte.PASA, "test_b.py::test_2": aparte.COLGADO}
    assert corrida.resultados["test_b.py::test_2"].motivo == "no terminó en 7 s (estaba en b.py, línea 12)"
    # El mismo corte con el proceso terminado por su cuenta (un os._exit): muerto, no colgado.
    corrida = aparte.Corrida()
    aparte._repartir(corrida, todos, _Lector(eventos[:corte], corriendo=eventos[corte - 1]["test"]), 0, "", 7)
    assert corrida.resultados["test_b.py::test_2"].estado == aparte.MUERTO
    assert corrida.resultados["test_b.py::test_2"].motivo == "el proceso de los tests terminó de golpe (código 0)"


def test_faulthandler_dice_en_que_modulo_de_la_copia_estaba():
    pila = ('Current thread 0x00007f (most recent call first):\n'
            '  File "/usr/lib/python3.11/time.py", line 3 in sleep\n'
            '  File "/tmp/x/checkpoints/03_c/bucle.py", line 23 in bucle\n'
            '  File "/tmp/x/checkpoints/03_c/tests/test_bucle.py", line 40 in test_y\n')
    assert aparte.donde_estaba(pila, "/tmp/x/checkpoints/03_c") == ("bucle", "23")
    assert aparte.donde_estaba(pila.replace("03_c/bucle.py", "03_c/tests/ayuda.py"), "/tmp/x/checkpoints/03_c") is None


def test_un_modulo_que_falta_es_su_propia_linea_y_dice_que_leccion_lo_escribe():
    resultados = {"test_a.py::test_1": Resultado(aparte.PASA)}
    lineas = lineas_de(["a", "b"], {"a"}, ["test_a.py::test_1", "test_b.py::test_1"], resultados, leccion_de={"b": 3})
    assert lineas[1].estado == FALTA and lineas[1].texto() == "✘ b.py: falta en tu espacio (lo escribe la lección 03)"


def test_si_pytest_no_puede_ni_empezar_lo_que_falta_queda_sin_comprobar_diciendo_por_que(tmp_path, temporal):
    """Un test que no existe: pytest sale con 4 sin correr nada, y la corrida no insiste."""
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    corrida = aparte.correr_aparte(rutas.ficheros(espacio), punto(0),
                                   ["test_calentamiento.py::test_que_no_existe"], limite_test=30)
    (resultado,) = corrida.resultados.values()
    assert resultado.estado == aparte.SIN_COMPROBAR and corrida.vueltas == 1
    assert resultado.motivo.startswith("los tests no pudieron correr (pytest no entendió la orden)")


# ---------------------------------------------------------------- con procesos de verdad


def test_un_espacio_igual_al_punto_de_control_pasa(tmp_path, temporal, capsys):
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    assert comprobar_aparte.comprobar(0, espacio=espacio, limite=60) == 0
    salida = capsys.readouterr().out
    assert re.search(r"^✔ calentamiento\.py: \d+ tests pasan y la comprobación del 0\.1 pasa$", salida, re.MULTILINE)
    assert ("✔ Tu código cumple el contrato de sus 1 ejercicio: pasa su comprobación y los 3 tests de contrato "
            "del punto de control 00.") in salida


def test_un_fallo_a_proposito_sale_con_el_test_que_lo_pilla(tmp_path, temporal):
    """El punto de control 01 con `permitido` aceptando cualquier respuesta que parezca un sí: la
    línea de permisos.py nombra lo primero que lo pilla (la comprobación del 1.2, la del cuaderno,
    antes que sus tests de contrato) y lo que esperaba; las demás, en verde."""
    espacio = copia_del_punto(1, tmp_path / "mi_agente")
    permisos = espacio / "permisos.py"
    texto = permisos.read_text(encoding="utf-8")
    assert "return usuario(nombre, entrada) is True" in texto
    permisos.write_text(texto.replace("return usuario(nombre, entrada) is True",
                                      "return bool(usuario(nombre, entrada))"), encoding="utf-8")
    c = comprobar_aparte.comprobar_en(espacio, punto(1), limite=180)
    assert not c.en_verde
    (mala,) = [l for l in c.lineas if l.estado not in (BIEN, SIN_TESTS)]
    assert mala.nombre == "permisos.py" and mala.estado == MAL
    assert mala.detalle.startswith('falla la comprobación del ejercicio 1.2 (comprobar("1.2")): solo un True ')
    assert "esperaba False, llegó True" in mala.detalle  # lo que esperaba, no una traza
    assert "(y 1 test más falla)" in mala.detalle and mala.ejercicio == "1.2"
    assert "Traceback" not in mala.detalle and "\n" not in mala.detalle


def modulo_que_se_cuelga(ficha):
    """calentamiento.py cuyo `ultima_linea` se cuelga con una salida vacía (solo en uno de los tres
    tests): antes arranca un hijo que duerme en su propia sesión y apunta su pid y el suyo en `ficha`."""
    return f'''import os, subprocess, sys, time

def ultima_linea(salida):
    if salida.strip():
        return salida.strip().splitlines()[-1].strip()
    hijo = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    with open({str(ficha)!r}, "w") as f:
        f.write(f"{{os.getpid()}} {{hijo.pid}}")
    while True:
        time.sleep(0.1)
'''


def test_un_test_que_se_cuelga_se_corta_los_demas_siguen_y_no_queda_nada(tmp_path, temporal):
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    ficha = tmp_path / "pids.txt"
    (espacio / "calentamiento.py").write_text(modulo_que_se_cuelga(ficha), encoding="utf-8")
    c = comprobar_aparte.comprobar_en(espacio, punto(0), limite=LIMITE_CORTO)
    (linea,) = c.lineas
    assert linea.estado == COLGADO and not c.en_verde
    # Duerme a ratos sin pedir CPU: lo para la regla de «parado» (curso/comprobaciones/colgados.py).
    # Lo primero que se cuelga es la comprobación del 0.1 (sus casos llaman con una salida vacía).
    assert re.fullmatch(rf"la comprobación del ejercicio 0\.1 \(comprobar\(\"0\.1\"\)\) colgado: no terminó en "
                        rf"{LIMITE_CORTO} s parado, sin pedir CPU ni disco \(¿espera algo que no llega\?\) "
                        rf"\(estaba en calentamiento\.py, línea \d+\) \(y 1 otro\) \(lo escribe el ejercicio 0\.1\)",
                        linea.detalle), linea.detalle
    assert (c.tests_pasan, c.tests_total) == (2, 3)  # los otros dos corrieron igual
    pytest_pid, hijo_pid = map(int, ficha.read_text().split())
    assert not vivo(pytest_pid) and not vivo(hijo_pid)  # también el hijo, que se fue a otra sesión


def test_cambiar_el_espacio_a_mitad_de_una_comprobacion_no_cambia_su_veredicto(tmp_path, temporal, monkeypatch):
    """Hallazgo 9 de la issue 40: calentamiento.py no quita los espacios, y el alumno lo arregla en
    el cuaderno en cuanto acaba el primer test. El veredicto es el del espacio al empezar, igual
    que sin tocarlo: falla el test de los espacios. La variante ingenua, que copia el espacio en cada corrida
    (la de la culpa llega después del arreglo), mezcla los dos: «falla solo con tus demás módulos»."""
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    bueno = (espacio / "calentamiento.py").read_text(encoding="utf-8")
    malo = bueno.replace("return linea.strip()", "return linea")
    assert malo != bueno

    def comprobar(arreglar_a_mitad):
        (espacio / "calentamiento.py").write_text(malo, encoding="utf-8")
        hechos = []

        def avisar(test, falla):
            hechos.append(test)
            if arreglar_a_mitad and len(hechos) == 1:
                (espacio / "calentamiento.py").write_text(bueno, encoding="utf-8")
        c = comprobar_aparte.comprobar_en(espacio, punto(0), limite=60, avisar=avisar)
        return [l.texto() for l in c.lineas]

    quieto = comprobar(arreglar_a_mitad=False)
    # Lo primero, la comprobación del 0.1 (la del cuaderno), con su caso de los espacios.
    assert quieto[0].startswith('✘ calentamiento.py: falla la comprobación del ejercicio 0.1 (comprobar("0.1")): '
                                "quita los espacios"), quieto[0]
    assert comprobar(arreglar_a_mitad=True) == quieto
    # La variante ingenua: sin foto, cada corrida copia lo que haya en el espacio en ese momento.
    monkeypatch.setattr(comprobar_aparte, "tomar_foto", lambda espacio, destino: espacio)
    assert "falla solo con tus demás módulos" in comprobar(arreglar_a_mitad=True)[0]


def test_un_espacio_que_se_muere_o_importa_lo_que_no_hay_es_una_linea_roja(tmp_path, temporal):
    muere = copia_del_punto(0, tmp_path / "muere")
    (muere / "calentamiento.py").write_text("import os\nos._exit(3)\n", encoding="utf-8")
    c = comprobar_aparte.comprobar_en(muere, punto(0), limite=60)
    assert [(l.nombre, l.estado) for l in c.lineas] == [("calentamiento.py", MAL)]
    assert c.lineas[0].detalle == ("el proceso de los tests terminó de golpe al importar test_calentamiento.py "
                                   "(código 3) (fallan los 3 tests) (1 sin comprobar) (lo escribe el ejercicio 0.1)")

    raro = copia_del_punto(0, tmp_path / "raro")
    (raro / "calentamiento.py").write_text("import paquete_que_no_existe_en_ningun_sitio\n", encoding="utf-8")
    c = comprobar_aparte.comprobar_en(raro, punto(0), limite=60)
    assert [(l.nombre, l.estado) for l in c.lineas] == [("calentamiento.py", MAL)]
    # No se puede importar: con el fichero de SU espacio, la línea y su texto (regla de la culpa).
    assert c.lineas[0].detalle == (f"no se puede importar: ModuleNotFoundError: No module named "
                                   f"'paquete_que_no_existe_en_ningun_sitio' · en {raro}/calentamiento.py, línea 1: "
                                   "`import paquete_que_no_existe_en_ningun_sitio` (lo escribe el ejercicio 0.1)")


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
    c = comprobar_aparte.comprobar_en(espacio, punto(0), limite=60)
    assert c.en_verde, [l.texto() for l in c.lineas]
    assert foto(espacio) == antes and foto(rutas.RECETARIO) == recetario
    assert list(casa.iterdir()) == []


def test_un_modulo_que_falta_en_el_espacio(tmp_path, temporal):
    espacio = tmp_path / "mi_agente"
    espacio.mkdir()
    (espacio / "otro.py").write_text("X = 1\n", encoding="utf-8")
    c = comprobar_aparte.comprobar_en(espacio, punto(0), limite=60)
    assert [(l.nombre, l.estado, l.detalle) for l in c.lineas] == [
        ("calentamiento.py", FALTA, "falta en tu espacio (lo escribe la lección 00)")]
    assert (c.tests_pasan, c.tests_total) == (0, 3)


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
    assert re.search(r'^✘ calentamiento\.py: falla la comprobación del ejercicio 0\.1 \(comprobar\("0\.1"\)\): ',
                     r.stdout, re.MULTILINE)
    assert list((tmp_path / "temporal").iterdir()) == []


def test_la_orden_con_un_punto_que_no_existe_o_un_limite_que_no_vale_sale_con_2(tmp_path):
    r = curso("comprobar", "99", "--espacio", str(tmp_path))
    assert r.returncode == 2 and "No hay ningún punto de control «99»" in r.stderr
    assert "python -m curso comprobar 00" in r.stderr
    r = curso("comprobar", "0", "--limite", "0")
    assert r.returncode == 2 and "tiene que ser mayor que cero" in r.stderr


def test_desde_el_cuaderno(tmp_path, temporal, monkeypatch, capsys):
    from curso.alumno.cuaderno import comprobar_espacio
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(copia_del_punto(0, tmp_path / "mi_agente")))
    comprobar_espacio(0)
    salida = capsys.readouterr().out
    assert "✔ calentamiento.py" in salida and "de CURSO_ESPACIO" in salida


def test_los_tests_corren_sin_cargar_complementos_que_no_usan(tmp_path, temporal):
    """El proceso de los tests no carga los complementos de pytest de hypothesis ni de nbval: el de
    hypothesis cargaría hypothesis entero (medio segundo de CPU en cada comprobación, y `calificar`
    hace una por alumno y lección). Lo que usa hypothesis lo importa él (el diferencial de cada
    ejercicio, el punto de control 01), sin su complemento."""
    espacio = copia_del_punto(0, tmp_path / "mi_agente")
    ficha = tmp_path / "cargados.txt"
    calentamiento = espacio / "calentamiento.py"
    calentamiento.write_text(  # lo que hay cargado cuando el proceso de los tests ya acaba
        f"import atexit, sys\natexit.register(lambda: open({str(ficha)!r}, 'w').write(str(sorted("
        "m for m in ('_hypothesis_pytestplugin', 'nbval') if m in sys.modules))))\n"
        + calentamiento.read_text(encoding="utf-8"), encoding="utf-8")
    c = comprobar_aparte.comprobar_en(espacio, punto(0), limite=60)
    assert c.en_verde, [l.texto() for l in c.lineas]
    assert ficha.read_text() == "[]"


# --- Los ejercicios del cuaderno, que comprobar N no mira (issue 44, punto 6) -----------------------

def _lo_que_dice_comprobar(n, tmp_path, monkeypatch, capsys):
    """Lo que escribe `comprobar n` tras sus tests (aquí, ninguno: solo interesa lo de después)."""
    from curso.comprobaciones import veredicto
    monkeypatch.setattr(comprobar_aparte, "comprobar_en", lambda *a, **k: veredicto.Comprobacion(n, "x"))
    comprobar_aparte.comprobar(n, espacio=tmp_path)
    return capsys.readouterr().out


def test_comprobar_2_dice_donde_se_comprueban_el_2_1_y_el_2_2(tmp_path, monkeypatch, capsys):
    """`comprobar 2` no decía nada del 2.1 y el 2.2, que son funciones del cuaderno: ahora dice
    que sus tests no los miran y que se comprueban en el cuaderno, con comprobar("2.1")."""
    salida = _lo_que_dice_comprobar(2, tmp_path, monkeypatch, capsys)
    assert "Los ejercicios 2.1 y 2.2 son funciones del cuaderno" in salida, salida
    assert 'comprobar("2.1") y comprobar("2.2")' in salida, salida


def test_comprobar_1_no_habla_de_ejercicios_del_cuaderno(tmp_path, monkeypatch, capsys):
    """La otra cara: hasta la 01 todos los ejercicios escriben un módulo; no hay nada que decir."""
    assert "funciones del cuaderno" not in _lo_que_dice_comprobar(1, tmp_path, monkeypatch, capsys)


def test_comprobar_7_nombra_cada_ejercicio_del_cuaderno(tmp_path, monkeypatch, capsys):
    """Desde la 03, también el 3.1: cada ejercicio sin módulo de las lecciones hechas."""
    from curso.comprobaciones import ejercicios
    salida = _lo_que_dice_comprobar(7, tmp_path, monkeypatch, capsys)
    sin_modulo = [id for id, e in ejercicios.cargar_registro().items() if e.modulo is None]
    assert sin_modulo and all(f'comprobar("{id}")' in salida for id in sin_modulo), salida


# ---------------------------------------------------------------- lo que califica, y de qué ejercicio


def test_cada_test_que_califica_cae_en_la_linea_del_modulo_de_su_ejercicio():
    """Los tests de contrato y la comprobación de cada ejercicio: en la línea del módulo de su
    ejercicio (un test de contrato del 7.2 en test_postgresql.py va en la de buzon_pg.py)."""
    from curso.comprobaciones.tests_del_curso import modulo_del_ejercicio
    for carpeta in rutas.puntos_de_control().values():
        ejercicio_de = comprobar_aparte.lo_que_califica(carpeta)
        modulos = comprobar_aparte.modulos_de(carpeta)
        assert all(modulo_del_ejercicio(id) in modulos for id in ejercicio_de.values()), carpeta.name
        lineas = lineas_de(modulos, set(modulos), list(ejercicio_de), {}, ejercicio_de=ejercicio_de,
                           modulo_de=lambda t, de=ejercicio_de: modulo_del_ejercicio(de[t]))
        assert {l.modulo for l in lineas} == set(modulos)  # ninguna de un fichero de tests suelto


def test_la_linea_de_un_fallo_dice_su_ejercicio_y_primero_el_mas_temprano():
    """En resumenes.py, falla un test de contrato del 4.3 y otro del 4.2: la línea empieza por el del
    4.2 y lo nombra; la comprobación de un ejercicio va delante de sus tests."""
    from curso.comprobaciones.tests_del_curso import test_de_ejercicio
    t43, t42, c43 = "test_resumenes.py::test_a", "test_resumenes.py::test_b", test_de_ejercicio("4.3")
    ejercicio_de = {t43: "4.3", t42: "4.2", c43: "4.3"}
    resultados = {t43: Resultado(aparte.FALLA, "mal"), t42: Resultado(aparte.FALLA, "peor"),
                  c43: Resultado(aparte.PASA)}
    (linea,) = lineas_de(["resumenes"], {"resumenes"}, [t43, t42, c43], resultados,
                         modulo_de=lambda t: "resumenes", ejercicio_de=ejercicio_de)
    assert linea.ejercicio == "4.2" and linea.detalle.startswith("falla el test «b» (test_resumenes.py) (ejercicio 4.2): peor")
    resultados[c43] = Resultado(aparte.FALLA, "su caso")
    (linea,) = lineas_de(["resumenes"], {"resumenes"}, [t43, t42, c43], resultados,
                         modulo_de=lambda t: "resumenes", ejercicio_de=ejercicio_de)
    assert linea.detalle.startswith('falla el test «b» (test_resumenes.py) (ejercicio 4.2)')
    del resultados[t42], ejercicio_de[t42]
    (linea,) = lineas_de(["resumenes"], {"resumenes"}, [t43, c43], resultados,
                         modulo_de=lambda t: "resumenes", ejercicio_de=ejercicio_de)
    assert linea.detalle.startswith('falla la comprobación del ejercicio 4.3 (comprobar("4.3")): su caso')


def test_un_fichero_del_curso_que_falta_dice_como_restaurarlo_solo_a_el():
    from curso.comprobaciones import veredicto
    linea = veredicto.falta("herramientas", 1, 1)
    assert linea.texto() == ("✘ herramientas.py: falta en tu espacio: es código que da el curso en la lección 01; "
                             "restáuralo con python -m curso restaurar 01 --fichero herramientas.py")
    assert veredicto.falta("compactar", 3, 3).texto() == "✘ compactar.py: falta en tu espacio (lo escribe la lección 03)"


def test_un_ejercicio_hecho_pasa_su_comprobacion_y_sus_tests_de_contrato():
    from curso.comprobaciones import veredicto
    from curso.comprobaciones.tests_del_curso import test_de_ejercicio
    c42, t42 = test_de_ejercicio("4.2"), "test_resumenes.py::test_b"
    resultados = {c42: Resultado(aparte.PASA), t42: Resultado(aparte.FALLA, "peor")}
    (de,) = veredicto.ejercicios_de([c42, t42], resultados, {c42: "4.2", t42: "4.2"}).values()
    assert de.estado == aparte.FALLA and de.motivo == "el test «b» (test_resumenes.py): peor"
    resultados[t42] = Resultado(aparte.PASA)
    assert veredicto.ejercicios_de([c42, t42], resultados, {c42: "4.2", t42: "4.2"})["4.2"].estado == aparte.PASA
