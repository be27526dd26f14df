"""`python -m curso probar` deja la carpeta temporal como la encontró, y si una parte no lo hace,
falla diciendo qué dejó.

Cada parte corre con su propia carpeta temporal (TMPDIR); al terminar tiene que estar vacía.
Aquí se prueba con partes pequeñas inventadas (una que deja una carpeta y otra que no) y con una
parte de verdad, que usa `tmp_path` y la carpeta del espacio que crea el conftest.py de la raíz.
"""
import os
import subprocess
import sys

from curso import probar, rutas

DEJA_ALGO = '''
import tempfile


def test_deja_una_carpeta():
    tempfile.mkdtemp(prefix="olvidada-")
'''

NO_DEJA_NADA = '''
import tempfile


def test_crea_y_borra():
    with tempfile.TemporaryDirectory(prefix="borrada-"):
        pass
'''


def test_probar_falla_si_una_parte_deja_algo_en_la_carpeta_temporal(tmp_path, monkeypatch, capsys):
    (tmp_path / "test_deja.py").write_text(DEJA_ALGO, encoding="utf-8")
    (tmp_path / "test_limpia.py").write_text(NO_DEJA_NADA, encoding="utf-8")
    monkeypatch.setattr(probar, "partes", lambda: [
        ("parte que deja algo", [str(tmp_path / "test_deja.py"), "-p", "no:nbval"]),
        ("parte limpia", [str(tmp_path / "test_limpia.py"), "-p", "no:nbval"])])

    assert probar.main([]) == 1

    salida = capsys.readouterr().out
    assert "✘ parte que deja algo: 1 pasan, 0 fallan; deja 1 cosa en la carpeta temporal" in salida
    assert "✔ parte limpia: 1 pasan, 0 fallan (" in salida
    [linea] = [l for l in salida.splitlines() if "olvidada-" in l]  # dice qué quedó
    assert "La carpeta temporal no queda como estaba: mira lo que dejó parte que deja algo" in salida


def test_una_parte_de_verdad_deja_la_carpeta_temporal_vacia():
    """Los tests de puntos usan `tmp_path` y el espacio temporal del conftest.py de la raíz: pytest
    guardaría sus `tmp_path` (pytest-of-USUARIO/) y el espacio quedaría si nadie los borrara."""
    salida, codigo, _, quedan = probar.correr(
        "tests de puntos", ["tests/equipo/test_puntos.py", "-k", "restaurar", "-p", "no:nbval"], [])
    assert quedan == []
    assert codigo == 0, salida


def test_pytest_a_secas_tambien_deja_la_carpeta_temporal_vacia(tmp_path):
    """Sin `probar` y sin CURSO_ESPACIO (como `python -m pytest --nbval solutions/` del README):
    el conftest.py de la raíz crea el espacio temporal y la base de los `tmp_path`, y los borra."""
    temporal = tmp_path / "temporal"
    temporal.mkdir()
    entorno = {k: v for k, v in os.environ.items() if k != rutas.VARIABLE_ESPACIO}
    hecho = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:nbval", "tests/equipo/test_puntos.py",
                            "-k", "restaurar"], cwd=rutas.RAIZ, env={**entorno, "TMPDIR": str(temporal)},
                           capture_output=True, text=True, timeout=300)
    assert hecho.returncode == 0, hecho.stdout + hecho.stderr
    assert sorted(p.name for p in temporal.iterdir()) == []


def test_los_tests_del_curso_se_reparten_sin_saltarse_ni_repetir_ninguno():
    """Las partes de tests/ juntas son todos los ficheros de tests/ menos los del navegador, que
    tienen su propia parte, y cada uno una sola vez."""
    todos = sorted(str(p.relative_to(rutas.RAIZ)) for p in (rutas.RAIZ / "tests").rglob("test_*.py"))
    assert {f.split("/")[1] for f in todos} == {"equipo", "lecciones", "navegador"}  # por lo que prueban
    navegador = [f for f in todos if f.startswith("tests/navegador/")]
    assert navegador
    repartidos = [f for mitad in probar.repartir_tests_del_curso() for f in mitad]
    assert sorted(repartidos) == sorted(set(todos) - set(navegador))
    en_partes = [a for _, argumentos in probar.partes() for a in argumentos if a.startswith("tests/")]
    assert sorted(en_partes) == todos  # cada fichero de tests/, en exactamente una parte


def test_el_reparto_equilibra_lo_que_cuesta_cada_mitad():
    mitades = probar.repartir_tests_del_curso()
    assert len(mitades) == probar.MITADES
    pesos = [sum(1 + len(probar.LO_QUE_TARDA.findall((rutas.RAIZ / f).read_text(encoding="utf-8")))
                 for f in mitad) for mitad in mitades]
    mas_pesado = max(1 + len(probar.LO_QUE_TARDA.findall(p.read_text(encoding="utf-8")))
                     for p in (rutas.RAIZ / "tests").rglob("test_*.py"))
    # El reparto voraz deja las mitades a menos de un fichero (el más pesado) de distancia.
    assert max(pesos) - min(pesos) <= mas_pesado


def test_el_punto_de_control_mas_alto_empieza_justo_despues_de_los_tests_del_curso():
    """Las partes empiezan en el orden de la lista. El punto de control más alto corre todo lo que
    no se repite de los anteriores (es la parte más larga tras los tests del curso): si esperara
    detrás de los cuadernos, empezaría cuando las demás ya acaban y alargaría todo `probar`."""
    nombres = [nombre for nombre, _ in probar.partes()]
    mas_alto = max(rutas.puntos_de_control())
    assert nombres[:probar.MITADES] == [f"tests del curso ({i} de {probar.MITADES})"
                                        for i in range(1, probar.MITADES + 1)]
    assert nombres[probar.MITADES] == f"punto de control {mas_alto:02d}"
    # Los demás puntos de control, después de los cuadernos: son las partes más cortas.
    assert max(i for i, n in enumerate(nombres) if n.startswith("cuadernos")) < min(
        i for i, n in enumerate(nombres) if n.startswith("punto de control") and n != nombres[probar.MITADES])
