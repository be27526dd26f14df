"""La lanzadera del simulacro (`curso/material/lanzadera.py`): hijos hechos con fork de un proceso que ya importó los módulos, que se comportan como un intérprete nuevo.

Lo que el simulacro mira de cada hijo es lo mismo que de un `subprocess.Popen`: que muere de verdad
con SIGKILL (código −9), su salida y sus errores, su entorno y su carpeta, y que ve los módulos como
están ahora en disco. Cada test compara con lo que haría un intérprete nuevo, y el de los módulos
cambiados, con la variante ingenua (una lanzadera por carpeta, sin mirar si sus módulos cambiaron).
"""
import os
import subprocess
import sys

import pytest

from curso.material import lanzadera
from curso.postgres.cluster import vivo

pytestmark = pytest.mark.skipif(not lanzadera.disponible(), reason="sin fork no hay lanzadera")


@pytest.fixture
def punto(tmp_path):
    """Una carpeta de módulos con `m.py`; al acabar, sin lanzaderas vivas."""
    carpeta = tmp_path / "punto"
    carpeta.mkdir()
    (carpeta / "m.py").write_text("VALOR = 1\n", encoding="utf-8")
    yield carpeta
    lanzadera.cerrar_todas()


def sin_lanzadera(punto, codigo, argumentos=(), **opciones):
    """Lo mismo con un intérprete nuevo, como lanzaba el simulacro antes."""
    return subprocess.Popen([sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(punto)!r})\n" + codigo,
                             *argumentos], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **opciones)


def test_un_hijo_muere_de_verdad_con_sigkill_y_lo_que_escribio_llega(punto):
    hijo = lanzadera.lanzadera_de(punto, ["m"]).lanzar(
        "import m, time\nprint('empiezo', m.VALOR, flush=True)\ntime.sleep(60)")
    assert hijo.stdout.readline() == "empiezo 1\n"
    assert hijo.poll() is None and vivo(hijo.pid)
    hijo.kill()
    assert hijo.communicate(timeout=30) == ("", "")
    assert hijo.returncode == -9
    assert not vivo(hijo.pid)


def test_el_codigo_de_salida_los_errores_el_entorno_y_la_carpeta_son_los_de_un_interprete_nuevo(punto, tmp_path):
    codigo = ("import os, sys\nprint(sys.argv[1:], os.environ['CURSO_X'], os.getcwd())\n"
              "sys.exit(sys.argv[1]) if sys.argv[1] == 'mensaje' else None\nraise ValueError('mal')")
    entorno = dict(os.environ, CURSO_X="equis")
    for argumentos in (["mensaje"], ["traza"]):
        hijo = lanzadera.lanzadera_de(punto, ["m"]).lanzar(codigo, argumentos, entorno, cwd=tmp_path)
        nuevo = sin_lanzadera(punto, codigo, argumentos, env=entorno, cwd=tmp_path)
        (salida, errores), (salida_n, errores_n) = hijo.communicate(timeout=30), nuevo.communicate(timeout=30)
        assert (hijo.returncode, salida) == (nuevo.returncode, salida_n) == (1, f"{argumentos} equis {tmp_path}\n")
        assert errores.splitlines()[-1] == errores_n.splitlines()[-1], (errores, errores_n)
    assert "Traceback" in errores and "lanzadera" not in errores  # la traza es la del código, no la suya


def test_si_un_modulo_cambia_el_siguiente_hijo_ve_el_nuevo(punto):
    """El alumno reescribe un módulo entre dos simulacros, en el mismo segundo y con el mismo largo:
    el siguiente hijo tiene que ver el nuevo. La ingenua (la lanzadera de antes, sin mirar la huella)
    le da el viejo."""
    leer = "import m\nprint(m.VALOR)"
    assert lanzadera.lanzadera_de(punto, ["m"]).lanzar(leer).communicate(timeout=30)[0] == "1\n"
    ingenua = lanzadera.Lanzadera(punto, ["m"])  # la de esta carpeta, que ya no se cambia
    try:
        assert ingenua.lanzar(leer).communicate(timeout=30)[0] == "1\n"  # ya importó m
        (punto / "m.py").write_text("VALOR = 2\n", encoding="utf-8")
        assert lanzadera.lanzadera_de(punto, ["m"]).lanzar(leer).communicate(timeout=30)[0] == "2\n"
        assert ingenua.lanzar(leer).communicate(timeout=30)[0] == "1\n"
    finally:
        ingenua.cerrar()


def test_un_modulo_que_no_se_importa_da_el_error_en_el_hijo_como_sin_lanzadera(punto):
    (punto / "m.py").write_text("def f(:\n", encoding="utf-8")
    hijo = lanzadera.lanzadera_de(punto, ["m"]).lanzar("import m")
    nuevo = sin_lanzadera(punto, "import m")
    (_, errores), (_, errores_n) = hijo.communicate(timeout=30), nuevo.communicate(timeout=30)
    assert hijo.returncode == nuevo.returncode == 1
    assert errores.splitlines()[-1] == errores_n.splitlines()[-1] and "SyntaxError" in errores


def test_al_cerrarla_no_queda_ningun_hijo_en_marcha(punto):
    la = lanzadera.lanzadera_de(punto, ["m"])
    hijos = [la.lanzar("import time\nprint('ya', flush=True)\ntime.sleep(300)") for _ in range(3)]
    for hijo in hijos:
        assert hijo.stdout.readline() == "ya\n"
    lanzadera.cerrar_todas()
    for hijo in hijos:
        hijo.stdout.close()
        hijo.stderr.close()
    assert not [h.pid for h in hijos if vivo(h.pid)]
    assert not la.viva()


def test_con_entrada_el_hijo_lee_lo_que_se_le_escribe_y_sin_ella_no_espera_nada(punto):
    la = lanzadera.lanzadera_de(punto, ["m"])
    eco = "import sys\nfor linea in sys.stdin:\n    print(linea.strip().upper(), flush=True)"
    hijo = la.lanzar(eco, entrada=True)
    hijo.stdin.write("hola\n")
    hijo.stdin.flush()
    assert hijo.stdout.readline() == "HOLA\n"
    hijo.stdin.write("adios\n")
    assert hijo.communicate(timeout=30) == ("ADIOS\n", "") and hijo.returncode == 0
    # Sin entrada, lee /dev/null: acaba enseguida, como un Popen con stdin=DEVNULL.
    assert la.lanzar(eco).communicate(timeout=30) == ("", "")
