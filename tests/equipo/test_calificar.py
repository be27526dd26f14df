"""Tests de `python -m curso calificar CARPETA`: clases de dos a cuatro alumnos y la tabla que sale.

Casi todos usan un curso de juguete (`curso_de_juguete`): dos lecciones, la 10 con `a.py` y la 11
con `b.py` y una versión nueva de `a.py` que llama a `b.g()`, igual que correr.py llama a
compactar desde la lección 03; tres ejercicios (el 10.1 escribe `a.f`; el 11.1, `b.g`; el 11.2,
`b.h`), registrados en el proceso y en el de los tests (su conftest.py), y sus tests con la marca
`contrato` de su ejercicio: lo que califica. Cada corrida de sus tests tarda un segundo, y con él se
ve lo que importa: qué lección tiene la culpa de un fallo, qué se cuelga, qué queda sin comprobar y qué
queda en marcha. Lo que necesita los ejercicios de verdad (sus avisos y sus pistas) usa la
lección 00 del curso, la más corta. Las cifras de una clase de 30 están en `medir calificar`.

La tabla (CSV, página, devoluciones) se prueba con filas hechas a mano en test_notas.py.
"""
import csv
import io
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ayudas import sigint_de_terminal, vivo

from curso import __main__ as cli
from curso import rutas
from curso.clase import calificar
from curso.comprobaciones import aparte

LIMITE_CORTO = 2  # segundos por test: los del curso de juguete tardan milésimas

# Los ejercicios del curso de juguete: se registran en este proceso y en el de los tests.
EJERCICIOS_DE_JUGUETE = """
from curso.comprobaciones import ejercicios as _ejercicios


def _devuelve(nombre, valor):
    def prueba(modulo):
        _ejercicios.igual(getattr(modulo, nombre)(), valor)
    return prueba


for _id, _leccion, _modulo, _nombre, _valor in (("10.1", 10, "a", "f", 1), ("11.1", 11, "b", "g", 1),
                                                ("11.2", 11, "b", "h", 2)):
    _ejercicios.ejercicio(_id, _leccion, f"{_nombre}() de juguete", None, [f"{_nombre}() devuelve {_valor}"],
                          modulo=_modulo)(f"{_nombre}() devuelve {_valor}")(_devuelve(_nombre, _valor))
"""
CONFTEST = ("import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
            + EJERCICIOS_DE_JUGUETE)
A_10 = "def f():\n    return 1\n"
A_11 = "from b import g\n\n\ndef f():\n    return g()\n"  # la 11 cambia a.py: ahora usa b
B_11 = "def g():\n    return 1\n\n\ndef h():\n    return 2\n"
MARCA = "@pytest.mark.contrato({!r})\n"
TESTS = {
    10: {"test_a.py": "import pytest\nimport a\n\n\n" + MARCA.format("10.1") + "def test_f_devuelve_1():\n    assert a.f() == 1\n"},
    11: {"test_a.py": "import pytest\nimport a\n\n\n" + MARCA.format("10.1") + "def test_f_devuelve_1():\n    assert a.f() == 1\n\n\n"
                      "def test_f_es_una_funcion():\n    assert callable(a.f)\n",
         "test_b.py": "import pytest\nimport b\n\n\n" + MARCA.format("11.1") + "def test_g_devuelve_1():\n    assert b.g() == 1\n\n\n"
                      + MARCA.format("11.2") + "def test_h_devuelve_2():\n    assert b.h() == 2\n\n\n"
                      + MARCA.format("11.2") + "def test_h_no_es_g():\n    assert b.h is not b.g\n"},
}


@pytest.fixture
def curso_de_juguete(tmp_path, monkeypatch):
    """Dos puntos de control, 10_uno (a.py) y 11_dos (a.py que usa b.py, y b.py); las lecciones
    10 y 11 de calificar son esas."""
    puntos = tmp_path / "checkpoints"
    for numero, nombre, modulos in ((10, "uno", {"a.py": A_10}), (11, "dos", {"a.py": A_11, "b.py": B_11})):
        carpeta = puntos / f"{numero}_{nombre}"
        (carpeta / "tests").mkdir(parents=True)
        for modulo, texto in modulos.items():
            (carpeta / modulo).write_text(texto, encoding="utf-8")
        (carpeta / "tests" / "conftest.py").write_text(CONFTEST, encoding="utf-8")
        for fichero, texto in TESTS[numero].items():
            (carpeta / "tests" / fichero).write_text(texto, encoding="utf-8")
    monkeypatch.setattr(rutas, "PUNTOS", puntos)
    monkeypatch.setattr(calificar, "LECCIONES", {10: {"ficheros": ["a.py"]}, 11: {"ficheros": ["a.py", "b.py"]}})
    from curso.comprobaciones import ejercicios
    monkeypatch.setattr(ejercicios, "REGISTRO", dict(ejercicios.cargar_registro()))
    exec(EJERCICIOS_DE_JUGUETE, {})
    return puntos


def alumno(clase, nombre, modulos, donde="mi_agente"):
    """La carpeta de un alumno con su espacio en `donde` y los módulos {nombre: texto}."""
    espacio = clase / nombre / donde
    espacio.mkdir(parents=True)
    for modulo, texto in modulos.items():
        (espacio / modulo).write_text(texto, encoding="utf-8")
    return espacio


def tabla(salida):
    """Las filas del CSV, como diccionarios por columna (sin el BOM)."""
    return list(csv.DictReader(io.StringIO((salida / "calificaciones.csv").read_text(encoding="utf-8-sig"))))


def calificar_juguete(clase, salida, **opciones):
    opciones = {"limite": LIMITE_CORTO, "a_la_vez": 2, **opciones}
    assert calificar.calificar(clase, salida=salida, **opciones) == 0
    return {fila["alumno"]: fila for fila in tabla(salida)}


# ---------------------------------------------------------------- de quién es cada fallo


def test_un_fallo_de_una_leccion_no_pinta_de_rojo_las_anteriores(curso_de_juguete, tmp_path, temporal):
    """b.g() mal (lección 11) hace fallar el test de a.py de la lección 10, porque a.py de la 11 la
    llama: con el espacio entero, la 10 saldría en rojo (lo dice «todo junto»). Repetido con
    b.py de referencia, pasa: la 10 en verde, la 11 en rojo por b.py."""
    clase = tmp_path / "clase"
    alumno(clase, "ana", {"a.py": A_11, "b.py": B_11.replace("return 1", "return 5")})
    fila = calificar_juguete(clase, tmp_path / "notas")["ana"]
    # Todo junto, el espacio entero: b.py es la culpable; a.py falla solo por ella (consecuencia).
    assert fila["todo junto"] == "✘ b.py; a.py, por b.py"
    assert fila["10 estado"] == "✔" and (fila["10 tests"], fila["10 tests en total"]) == ("1", "1")
    assert (fila["10 ejercicios"], fila["11 ejercicios"]) == ("1", "1")  # el 11.1 está mal; el 11.2, bien
    assert fila["11 estado"] == "✘ b.py"


def test_una_leccion_sin_sus_modulos_esta_sin_empezar_y_no_en_rojo(curso_de_juguete, tmp_path, temporal):
    clase = tmp_path / "clase"
    alumno(clase, "beto", {"a.py": A_10})  # hizo la 10 y no ha empezado la 11
    salida = tmp_path / "notas"
    fila = calificar_juguete(clase, salida)["beto"]
    assert fila["10 estado"] == "✔"
    assert fila["11 estado"] == "sin empezar"
    assert (fila["11 tests"], fila["11 tests en total"]) == ("0", "3")  # los de contrato de sus ejercicios
    assert '<td class="gris" title="sin empezar"><a href="#a0-11">sin empezar</a>' in \
        (salida / "calificaciones.html").read_text(encoding="utf-8")


# ---------------------------------------------------------------- tiempos


def test_un_test_colgado_queda_colgado_y_los_demas_se_comprueban(curso_de_juguete, tmp_path, temporal):
    """h() se cuelga: su test queda «colgado» (ámbar) y los demás de b.py y de a.py corren igual;
    con un solo límite para toda la lección, a.py y g() quedarían sin comprobar."""
    clase = tmp_path / "clase"
    alumno(clase, "carla", {"a.py": A_11, "b.py": B_11.replace("    return 2", "    while True:\n        pass")})
    fila = calificar_juguete(clase, tmp_path / "notas")["carla"]
    assert fila["11 estado"] == "⚠ b.py colgado"
    assert (fila["11 tests"], fila["11 tests en total"]) == ("2", "3")  # los de g() y h is not g
    assert fila["10 estado"] == "✔"


def test_lo_que_no_llega_a_correr_se_cuenta_como_sin_comprobar(curso_de_juguete, tmp_path, temporal):
    """b.py se cuelga al importarse, y con él test_a.py y test_b.py. Con 3.5 s para toda la corrida,
    lo que no llega a correr no es «colgado» ni «falla»: la celda dice cuántos quedan sin comprobar.
    Con las dos lecciones: los tests de la 10 (test_a.py, que importa a, que importa b) van delante
    y se cuelgan primero, y a los de la 11 ya no les llega la corrida."""
    espacio = alumno(tmp_path / "clase", "dani", {"a.py": A_11, "b.py": "while True:\n    pass\n"})
    lecciones = calificar.lecciones_que_se_califican()
    celda = calificar.calificar_alumno(calificar.Alumno("dani", espacio), calificar.Opciones(
        {10: lecciones[10], 11: lecciones[11]}, limite=1.5, limite_total=3.5)).celdas[11]
    assert celda.tests_pasan == 0 and celda.estado == calificar.AMBAR
    assert re.search(r"· \d sin comprobar$", celda.texto), celda.texto
    # b.py es la culpable (colgada al importarse): su línea lo dice, y cuántos suyos quedan sin comprobar.
    sin = [l for l in celda.comprobacion.lineas if "sin comprobar" in l.detalle]
    assert sin and "se acabaron los 3.5 s de CPU de la corrida" in sin[0].detalle


def test_un_ejercicio_sin_hacer_se_nombra_y_cuenta_como_no_hecho(tmp_path, temporal):
    """La lección 00 de verdad, con el esbozo que deja `generar` en calentamiento.py."""
    from curso.comprobaciones.esbozos import AVISO
    clase = tmp_path / "clase"
    esbozo = ("def ultima_linea(salida):\n    # Tu código aquí (ejercicio 0.1).\n"
              f"    raise NotImplementedError({AVISO.format(numero='0.1', funcion='ultima_linea')!r})\n")
    alumno(clase, "eva", {"calentamiento.py": esbozo})
    fila = calificar_juguete(clase, tmp_path / "notas", lecciones=[0], limite=30)["eva"]
    assert fila["00 estado"] == "✘ calentamiento.py (ejercicio 0.1 pendiente)"
    assert (fila["00 ejercicios"], fila["00 ejercicios en total"]) == ("0", "1")
    assert fila["comentario"].startswith("Lección 00, calentamiento.py: ejercicio 0.1 pendiente")


def test_la_leccion_03b_tiene_su_columna_y_la_culpa_de_un_limpiar_mal_es_de_limpiar(tmp_path, temporal):
    """La 03b de verdad: su columna se llama «03b», y un limpiar.py que borra también los últimos
    resultados se lo apunta a limpiar.py, no a bucle.py ni a agente.py, que lo usan."""
    clase = tmp_path / "clase"
    punto = rutas.puntos_de_control()[rutas.TRES_B]
    bien = {f: (punto / f).read_text(encoding="utf-8") for f in rutas.ficheros(punto) if f.endswith(".py")}
    mal = dict(bien, **{"limpiar.py": bien["limpiar.py"].replace("todos[:max(len(todos) - conservar, 0)]", "todos")})
    assert mal["limpiar.py"] != bien["limpiar.py"]
    alumno(clase, "ana", bien)
    alumno(clase, "eva", mal)
    filas = calificar_juguete(clase, tmp_path / "notas", lecciones=[rutas.TRES_B], limite=60)
    assert filas["ana"]["03b estado"] == "✔"
    assert filas["eva"]["03b estado"].startswith("✘ limpiar.py"), filas["eva"]["03b estado"]
    assert "bucle.py" not in filas["eva"]["03b estado"].split(";")[0]


# ---------------------------------------------------------------- encontrar el trabajo


def test_el_espacio_se_encuentra_a_cualquier_profundidad_y_si_no_se_dice(tmp_path):
    """Un «Download ZIP» deja mi_agente/ una carpeta más abajo, junto a checkpoints/ (con todos los
    módulos, pero no es su trabajo); sin nada, «no encuentro su espacio»."""
    clase = tmp_path / "clase"
    ivan = alumno(clase, "ivan", {"calentamiento.py": ""}, donde="construye-tu-agente-main/mi_agente")
    shutil.copytree(rutas.puntos_de_control()[1], clase / "ivan" / "construye-tu-agente-main" / "checkpoints" / "01",
                    ignore=shutil.ignore_patterns("tests"))
    alumno(clase, "juan", {"bucle.py": ""}, donde=".")
    (clase / "kike").mkdir()
    (clase / "notas").mkdir()
    alumnos = calificar.alumnos_de(clase, salida=clase / "notas")
    assert [(a.nombre, a.espacio, a.donde) for a in alumnos] == [
        ("ivan", ivan, "ivan/construye-tu-agente-main/mi_agente/"),
        ("juan", clase / "juan", "juan/"), ("kike", None, "")]
    sin = calificar.calificar_alumno(alumnos[2], calificar.Opciones(calificar.lecciones_que_se_califican()))
    assert {c.texto for c in sin.celdas.values()} == {"no encuentro su espacio"}


# ---------------------------------------------------------------- lo que queda en marcha


def test_no_sobrevive_ningun_proceso_del_alumno_aunque_se_vaya_con_setsid(curso_de_juguete, tmp_path, temporal):
    ficha = tmp_path / "pid.txt"
    clase = tmp_path / "clase"
    alumno(clase, "fede", {"a.py": A_11, "b.py": B_11 + (
        "\n\nimport subprocess\n_hijo = subprocess.Popen(['sleep', '301'], start_new_session=True)\n"
        f"open({str(ficha)!r}, 'w').write(str(_hijo.pid))\n")})
    calificar_juguete(clase, tmp_path / "notas")
    pid = int(ficha.read_text())
    assert not vivo(pid), "el sleep 301 del alumno sigue en marcha"


def test_no_sobrevive_ningun_servidor_postgres_de_un_test_que_se_cuelga(curso_de_juguete, tmp_path, temporal):
    """Un test arranca un PostgreSQL (pg_ctl lo deja en su propia sesión) y se cuelga: el SIGKILL
    del límite se salta el atexit que lo pararía. Al acabar no queda ni el servidor ni su carpeta."""
    from curso.postgres.cluster import FaltaPostgres, carpeta_de_programas
    from curso.postgres.fixtures import sin_postgres
    try:
        carpeta_de_programas()
    except FaltaPostgres as error:
        sin_postgres(str(error))
    ficha = tmp_path / "servidor.txt"
    clase = tmp_path / "clase"
    alumno(clase, "gala", {"a.py": A_11, "b.py": B_11.replace("def h():\n    return 2", (
        "def h():\n    import time\n    from curso.postgres.cluster import ClusterTemporal\n"
        "    cluster = ClusterTemporal()\n    cluster.arrancar()\n"
        f"    open({str(ficha)!r}, 'w').write(f'{{cluster.pid}} {{cluster.carpeta}}')\n"
        "    while True:\n        time.sleep(0.1)"))})
    fila = calificar_juguete(clase, tmp_path / "notas", limite=8, lecciones=[11])["gala"]
    assert ficha.exists(), f"el servidor no llegó a arrancar en 8 s: {fila['11 estado']}"
    pid, carpeta = ficha.read_text().split(" ", 1)
    assert fila["11 estado"] == "⚠ b.py colgado"
    assert not vivo(int(pid)), "el servidor PostgreSQL del alumno sigue en marcha"
    assert not Path(carpeta).exists()


# ---------------------------------------------------------------- deprisa y sin perder nada


def test_la_cache_solo_vuelve_a_correr_lo_que_ha_cambiado(curso_de_juguete, tmp_path, temporal, capsys):
    """Por el contenido de lo que entra en cada corrida: hugo no cambia nada y sale de la caché; iris
    arregla b.py y corre; juan, que se cuelga, no cambia nada pero corre otra vez (un colgado no se
    guarda: no es un veredicto final), y sale igual."""
    clase, salida = tmp_path / "clase", tmp_path / "notas"
    alumno(clase, "hugo", {"a.py": A_11, "b.py": B_11})
    iris = alumno(clase, "iris", {"a.py": A_11, "b.py": B_11.replace("return 1", "return 5")})
    # el bucle en una línea: la de su colgado sale igual las dos veces
    alumno(clase, "juan", {"a.py": A_11, "b.py": B_11.replace("    return 2", "    while True: pass")})
    primera = calificar_juguete(clase, salida)
    assert "corridas de tests, 0 de la caché)." in capsys.readouterr().out
    (iris / "b.py").write_text(B_11 + "# arreglado\n", encoding="utf-8")
    segunda = calificar_juguete(clase, salida)
    progreso = capsys.readouterr().out
    assert re.search(r"\] hugo .*\(\d+ s, 0 corridas, 1 de la caché", progreso)
    assert re.search(r"\] juan .*\(\d+ s, 1 corridas\)", progreso)
    assert re.search(r"\] iris .*\(\d+ s, 1 corridas", progreso)
    assert primera["hugo"] == segunda["hugo"] and primera["juan"] == segunda["juan"]
    assert segunda["iris"]["11 estado"] == "✔"


def b_que_se_cuelga_la_primera_vez(marca):
    """b.py cuyo h() se cuelga (un bucle) la primera vez que corre y después no: como un test que
    la carga dejó colgado. La primera vez deja `marca`."""
    return B_11.replace("    return 2", f"""    import pathlib
    marca = pathlib.Path({str(marca)!r})
    if not marca.exists():
        marca.touch()
        while True:
            pass
    return 2""")


def test_un_colgado_se_vuelve_a_correr_a_solas_al_final_y_no_se_guarda(curso_de_juguete, tmp_path, temporal,
                                                                       monkeypatch, capsys):
    """El h() de lola se cuelga solo la primera vez: al acabar la clase se vuelve a correr a solas y
    su celda es la de esa vez, en verde; el colgado no queda en la caché (otra calificación no
    corre nada). Las dos variantes ingenuas la dejan colgada: sin volver a correr, y volviendo a
    correr pero con el colgado guardado en la caché (la vuelta lo lee de ella)."""
    clase = tmp_path / "clase"
    alumno(clase, "kiko", {"a.py": A_11, "b.py": B_11})
    lola = alumno(clase, "lola", {"a.py": A_11, "b.py": b_que_se_cuelga_la_primera_vez(tmp_path / "marca")})
    fila = calificar_juguete(clase, tmp_path / "notas")["lola"]
    salida = capsys.readouterr().out
    assert "⚠ b.py colgado" in salida  # la primera vez
    assert "Otra vez, a solas, lo que se colgó de 1 alumnos" in salida and "[1/1 a solas] lola" in salida
    assert fila["11 estado"] == "✔" and fila["11 tests"] == "3"  # los de contrato de sus ejercicios
    calificar_juguete(clase, tmp_path / "notas")
    assert re.search(r"\] lola .*\(\d+ s, 0 corridas, 1 de la caché", capsys.readouterr().out)

    # Sin volver a correr a solas, queda el colgado de la primera vez.
    (tmp_path / "marca").unlink()
    with monkeypatch.context() as m:
        m.setattr(calificar, "otra_vez_a_solas", lambda filas, opciones: None)
        assert calificar_juguete(clase, tmp_path / "sin_vuelta")["lola"]["11 estado"] == "⚠ b.py colgado"
    # Guardando el colgado en la caché (como antes), la vuelta a solas lo lee de ella.
    (tmp_path / "marca").unlink()
    with monkeypatch.context() as m:
        m.setattr(aparte, "es_estable", lambda r: r.estado not in (aparte.SALTADO, aparte.SIN_COMPROBAR))
        assert calificar_juguete(clase, tmp_path / "guardando")["lola"]["11 estado"] == "⚠ b.py colgado"
    capsys.readouterr()
    (lola / "b.py").write_text(B_11, encoding="utf-8")


def test_cada_fila_se_escribe_al_acabar_su_alumno_y_un_ctrl_c_guarda_lo_hecho(tmp_path):
    """La lección 00 de verdad, en otro proceso: ana acaba enseguida; beto se cuelga. Con su fila
    ya en el CSV llega el Ctrl-C: queda ana (y la página, diciendo que falta uno), no queda ningún
    proceso de beto ni nada en la carpeta temporal."""
    clase = tmp_path / "clase"
    ficha = tmp_path / "pid.txt"
    referencia = (rutas.puntos_de_control()[0] / "calentamiento.py").read_text(encoding="utf-8")
    alumno(clase, "ana", {"calentamiento.py": referencia})
    alumno(clase, "beto", {"calentamiento.py": "import os, time\n\ndef ultima_linea(salida):\n"
                                               f"    open({str(ficha)!r}, 'w').write(str(os.getpid()))\n"
                                               "    while True:\n        time.sleep(0.1)\n"})
    temporal = tmp_path / "temporal"
    temporal.mkdir()
    salida = tmp_path / "notas"
    proceso = subprocess.Popen([sys.executable, "-m", "curso", "calificar", str(clase), "--lecciones", "0",
                                "--limite", "120", "--a-la-vez", "2", "--salida", str(salida)],
                               cwd=rutas.RAIZ, env={**os.environ, "TMPDIR": str(temporal)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_de_terminal)
    try:
        fin = time.monotonic() + 90
        while not (ficha.exists() and ficha.read_text() and "\nana," in _leer(salida / "calificaciones.csv")):
            assert time.monotonic() < fin and proceso.poll() is None, proceso.communicate()
            time.sleep(0.1)
        proceso.send_signal(signal.SIGINT)
        _, errores = proceso.communicate(timeout=30)
    finally:
        if proceso.poll() is None:  # solo si el test ya ha fallado
            proceso.kill()
            proceso.communicate()
    assert proceso.returncode == calificar.INTERRUMPIDO
    assert "Interrumpido" in errores and "Traceback" not in errores
    assert [f["alumno"] for f in tabla(salida)] == ["ana"]
    assert "faltan 1 alumnos por calificar" in (salida / "calificaciones.html").read_text(encoding="utf-8")
    assert not vivo(int(ficha.read_text()))
    assert list(temporal.iterdir()) == []


def _leer(ruta):
    try:
        return Path(ruta).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return ""


def test_tras_el_primer_alumno_dice_cuanto_queda(curso_de_juguete, tmp_path, temporal, capsys):
    clase = tmp_path / "clase"
    for nombre in ("uno", "dos", "tres"):
        alumno(clase, nombre, {"a.py": A_10})
    calificar_juguete(clase, tmp_path / "notas", a_la_vez=1)
    lineas = [l for l in capsys.readouterr().out.splitlines() if l.startswith("[")]
    assert [bool(re.search(r"; quedan unos \d+ s como mucho", l)) for l in lineas] == [True, True, False]
    # Otra vez, todo de la caché: ningún alumno corre tests, y no hay estimación que valga (la de
    # antes contaba los de la caché como trabajo hecho y prometía segundos que luego eran minutos).
    calificar_juguete(clase, tmp_path / "notas", a_la_vez=1)
    lineas = [l for l in capsys.readouterr().out.splitlines() if l.startswith("[")]
    assert lineas and not any("quedan unos" in l for l in lineas)


def test_la_estimacion_cuenta_solo_los_alumnos_que_corrieron_tests():
    """Dos alumnos de la caché (0 corridas, 0.1 s) y uno que corrió (40 s): quedan 2, a uno a la vez,
    son 80 s; la cuenta ingenua (lo transcurrido entre los hechos) diría 27 s."""
    filas = [calificar.Fila(calificar.Alumno(n), segundos=s, corridas=c)
             for n, s, c in (("a", 0.1, 0), ("b", 0.1, 0), ("c", 40.0, 3))]
    assert "quedan unos 80 s como mucho" in calificar._estimacion(filas, 2, 1)
    assert calificar._estimacion(filas[:2], 2, 1) == ""


# ---------------------------------------------------------------- lo que no se puede calificar


def test_un_espacio_que_ni_se_puede_copiar_es_una_celda_roja_y_no_para_la_clase(curso_de_juguete, tmp_path,
                                                                                 monkeypatch):
    clase = tmp_path / "clase"
    alumno(clase, "roto", {"a.py": A_10})
    alumno(clase, "sano", {"a.py": A_10})
    de_verdad = aparte.correr_aparte

    def correr_aparte(ficheros, *argumentos, **opciones):
        if any("roto" in str(f) for f in ficheros.values()):
            raise PermissionError(13, "Permission denied")
        return de_verdad(ficheros, *argumentos, **opciones)

    monkeypatch.setattr(aparte, "correr_aparte", correr_aparte)
    filas = calificar_juguete(clase, tmp_path / "notas")
    assert filas["roto"]["10 estado"] == "✘ el espacio no se pudo comprobar: PermissionError: [Errno 13] Permission denied"
    assert filas["sano"]["10 estado"] == "✔"


def test_la_orden_sin_carpeta_con_una_leccion_que_no_hay_o_sin_modulos_sale_con_2(tmp_path, capsys):
    assert cli.main(["calificar", str(tmp_path / "no_existe")]) == 2
    assert "no es una carpeta" in capsys.readouterr().err
    with pytest.raises(SystemExit) as salida:  # argparse la rechaza antes de mirar la carpeta
        cli.main(["calificar", str(tmp_path), "--lecciones", "99"])
    assert salida.value.code == 2
    assert "«99» no es una lección del curso; las lecciones son 00, 01" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no escribió nada


# ---------------------------------------------------------------- la lección 02, de su cuaderno


def cuaderno_con(carpeta, celdas):
    """notebooks/02_la_ventana.ipynb del curso en `carpeta`, con el texto de `celdas` ({id: texto})
    en las celdas de esos ejercicios: como lo deja un alumno que las escribió."""
    import json
    datos = json.loads((rutas.CUADERNOS / "02_la_ventana.ipynb").read_text(encoding="utf-8"))
    for celda in datos["cells"]:
        id = celda.get("metadata", {}).get("curso", {}).get("ejercicio")
        if id in celdas:
            celda["source"] = celdas[id]
    (carpeta / "notebooks").mkdir(parents=True, exist_ok=True)
    (carpeta / "notebooks" / "02_la_ventana.ipynb").write_text(json.dumps(datos), encoding="utf-8")


def test_la_leccion_02_se_califica_por_las_celdas_de_su_cuaderno(tmp_path, temporal):
    """Los ejercicios 2.1 y 2.2 son funciones del cuaderno, no módulos: se califican las celdas del
    cuaderno que está junto a su mi_agente/ (antes, `--lecciones 2` no calificaba nada y salía con 2).
    Las respuestas buenas son las de solutions/ (no se escribe aquí lo que deben dar)."""
    from curso.clase import cuadernos_de_la_clase as cuadernos
    import variantes
    buenas = cuadernos.celdas_de_ejercicios(rutas.SOLUCIONES / "02_la_ventana.ipynb")
    clase = tmp_path / "clase"
    for nombre, celdas in (("bien", buenas),
                           ("olvida_la_cache", {**buenas, "2.1": buenas["2.1"].replace(
                               ' + usage.get("cache_read_input_tokens", 0)', "", 1)}),
                           ("otra_solucion", {id: variantes.celda(variantes.SEGUNDAS[id]) for id in buenas}),
                           ("esbozo", {}), ("sin_cuaderno", None)):
        espacio = alumno(clase, nombre, {"calentamiento.py": (rutas.puntos_de_control()[0] / "calentamiento.py").read_text()})
        if celdas is not None:
            cuaderno_con(espacio.parent, celdas)
    assert "cache_read_input_tokens" not in \
        cuadernos.celdas_de_ejercicios(clase / "olvida_la_cache" / "notebooks" / "02_la_ventana.ipynb")["2.1"]
    filas = calificar_juguete(clase, tmp_path / "notas", lecciones=[2], limite=aparte.LIMITE_TEST)
    assert filas["bien"]["02 estado"] == "✔"
    assert (filas["bien"]["02 ejercicios"], filas["bien"]["02 ejercicios en total"]) == ("2", "2")
    assert filas["olvida_la_cache"]["02 estado"].startswith("✘ tamano()")
    assert filas["olvida_la_cache"]["02 ejercicios"] == "1"
    assert "2.1" in filas["olvida_la_cache"]["comentario"]
    # La segunda solución buena de cada ejercicio (tests/variantes.py), escrita de otra
    # manera, también sale verde: lo que acepta la comprobación del cuaderno lo acepta calificar.
    assert filas["otra_solucion"]["02 estado"] == "✔"
    assert filas["otra_solucion"]["02 ejercicios"] == "2"
    assert filas["esbozo"]["02 estado"] == "sin empezar"  # el cuaderno tal como lo da el curso
    assert filas["sin_cuaderno"]["02 estado"].startswith("no encuentro su cuaderno (02_la_ventana.ipynb")



# ---------------------------------------------------------------- lo que lee el alumno (issue 44·7)

# Dos tests de contrato escritos como se escriben (un assert sin mensaje), que fallan con un a.py
# cuyo f() sí devuelve 1: lo que pytest dice de ellos lleva «+ where», la dirección de un objeto y
# el nombre de la función de test.
CONTRATO_CON_ASSERTS = ('import pytest\nimport a\n\n\ndef es_de_verdad(x):\n    return x is True\n\n\n'
                        + MARCA.format("10.1") + "def test_la_conexion_queda_sin_transaccion():\n"
                        "    assert not a.CONEXION.in_transaction\n\n\n"
                        + MARCA.format("10.1") + "def test_lista_dice_que_si():\n    assert es_de_verdad(a.lista())\n")
A_CON_TRANSACCION = ("import sqlite3\n\nCONEXION = sqlite3.connect(':memory:', isolation_level=None)\n"
                     "CONEXION.execute('BEGIN')\n\n\ndef f():\n    return 1\n\n\ndef lista():\n    return 'si'\n")
LO_QUE_NO_LEE_UN_ALUMNO = ("+ where", " object at 0x", "assert ", "::test_", "test_la_conexion")


def test_la_devolucion_dice_en_castellano_lo_que_falla_sin_lo_de_pytest(curso_de_juguete, tmp_path, temporal):
    """La devolución de un alumno, el comentario del CSV y la página dicen qué comprueba el test
    que falla, con palabras, y su ejercicio y su pista; nada de lo de pytest. La variante ingenua,
    el motivo tal como lo da pytest (`motivo_corto`), lo lleva todo."""
    from curso.comprobaciones.aparte import en_castellano, motivo_corto
    (curso_de_juguete / "10_uno" / "tests" / "test_a_conexion.py").write_text(CONTRATO_CON_ASSERTS, encoding="utf-8")
    clase = tmp_path / "clase"
    alumno(clase, "rosa", {"a.py": A_CON_TRANSACCION})
    salida = tmp_path / "notas"
    fila = calificar_juguete(clase, salida, lecciones=[10], devoluciones=True)["rosa"]
    devolucion = (salida / "devoluciones" / "rosa.txt").read_text(encoding="utf-8")
    for texto in (devolucion, fila["comentario"]):
        assert not [x for x in LO_QUE_NO_LEE_UN_ALUMNO if x in texto], texto
        assert "el test «la conexion queda sin transaccion» (test_a_conexion.py)" in texto
        assert "ejercicio 10.1" in texto and "f() devuelve 1" in texto  # su ejercicio y su pista
    crudo = "assert not True\n +  where True = <sqlite3.Connection object at 0x7f11db40be20>.in_transaction"
    assert "0x7f11db40be20" in motivo_corto(crudo) and en_castellano(crudo) == ""


@pytest.mark.parametrize("crudo, dicho", [
    ("assert 3 == 4\n +  where 3 = f(3)", "esperaba 4, llegó 3"),
    ("AssertionError: el bucle tiene que parar\nassert 3 == 4\n +  where 3 = f(3)", "el bucle tiene que parar"),
    ("Failed: DID NOT RAISE <class 'sqlite3.IntegrityError'>", "esperaba que lanzara IntegrityError, y no lanzó nada"),
    ("AssertionError: assert 'abc' in ['x', 'y']", "esperaba encontrar 'abc' en ['x', 'y']"),
    ("assert [1, 2, 3] == [1, 2, 4]\n  \n  At index 2 diff: 3 != 4\n  Use -v to get more diff",
     "esperaba [1, 2, 4], llegó [1, 2, 3]"),
    ("AssertionError: Regex pattern did not match.\n  Expected regex: 'no un bool'\n  Actual message: 'otra'",
     "el mensaje del error no dice lo esperado: esperaba algo como 'no un bool', llegó 'otra'"),
    ("assert False\n +  where False = es_observacion_de_error(<bloque>)", ""),
])
def test_lo_que_dice_pytest_de_una_asercion_se_dice_en_castellano(crudo, dicho):
    from curso.comprobaciones.aparte import en_castellano
    assert en_castellano(crudo) == dicho
