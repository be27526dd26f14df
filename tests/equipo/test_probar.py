"""`python -m curso probar` deja la carpeta temporal como la encontró, y si una parte no lo hace,
falla diciendo qué dejó.

Cada parte corre con su propia carpeta temporal (TMPDIR); al terminar tiene que estar vacía.
Aquí se prueba con partes pequeñas inventadas (una que deja una carpeta y otra que no) y con una
parte de verdad, que usa `tmp_path` y la carpeta del espacio que crea el conftest.py de la raíz.
"""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from curso import rutas
from curso.autor import niveles, probar

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
    salida, codigo, _, quedan, _ = probar.correr(
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
    """Las partes de tests/ juntas son todos los ficheros de tests/ menos los del navegador y los
    de los caminos, que tienen sus propias partes, y cada uno una sola vez; cada camino (un test de
    tests/caminos/) corre en una parte, y una sola vez."""
    todos = sorted(str(p.relative_to(rutas.RAIZ)) for p in (rutas.RAIZ / "tests").rglob("test_*.py"))
    assert {f.split("/")[1] for f in todos} == {"equipo", "lecciones", "navegador", "caminos"}  # por lo que prueban
    aparte = [f for f in todos if f.startswith(("tests/navegador/", "tests/caminos/"))]
    assert aparte
    repartidos = [f for lista in probar.repartir_tests_del_curso() for f in lista]
    assert sorted(repartidos) == sorted(set(todos) - set(aparte))
    en_partes = [a.split("::")[0] for _, argumentos in probar.partes() for a in argumentos
                 if a.startswith("tests/") and not a.startswith("tests/caminos/")]
    assert sorted(en_partes) == sorted(set(todos) - {f for f in todos if f.startswith("tests/caminos/")})
    caminos = [a for _, argumentos in probar.partes() for a in argumentos if a.startswith("tests/caminos/")]
    ids = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:nbval",
                          "tests/caminos"], cwd=rutas.RAIZ, capture_output=True, text=True).stdout
    assert sorted(caminos) == sorted(l for l in ids.splitlines() if "::test_" in l)


def test_el_reparto_equilibra_lo_que_tarda_cada_parte():
    """Con los segundos apuntados de cada fichero, las partes quedan a menos de un fichero (el
    más lento) de distancia. (El reparto de antes, por lo que el texto de cada fichero hace, dejaba
    entre las partes más diferencia que el fichero más lento.)"""
    apuntados = probar.tiempos_apuntados()
    assert apuntados, "faltan los tiempos apuntados (ver probar.TIEMPOS)"
    repartidos = probar.repartir_tests_del_curso()
    assert len(repartidos) == probar.PARTES_DEL_CURSO
    peso = probar.pesos([f for lista in repartidos for f in lista], apuntados)
    cargas = [sum(peso[f] for f in lista) for lista in repartidos]
    assert max(cargas) - min(cargas) <= max(peso.values())


def test_un_fichero_sin_apuntar_cuenta_como_la_mediana_y_corre_igual():
    apuntados = {"tests/a.py": 1.0, "tests/b.py": 2.0, "tests/c.py": 30.0}
    assert probar.pesos(["tests/a.py", "tests/nuevo.py"], apuntados) == {"tests/a.py": 1.0, "tests/nuevo.py": 2.0}
    assert probar.pesos(["tests/nuevo.py"], {}) == {"tests/nuevo.py": 1.0}
    # Sin tiempos apuntados, todos los ficheros siguen en alguna parte, una sola vez.
    todos = sorted(str(p.relative_to(rutas.RAIZ)) for p in probar.tests_del_curso()
                   if probar.NAVEGADOR not in p.parents and probar.CAMINOS not in p.parents)
    assert sorted(f for lista in probar.repartir_tests_del_curso(apuntados={}) for f in lista) == todos


def test_apuntar_tiempos_guarda_lo_que_ha_corrido_y_conserva_lo_demas(tmp_path):
    ruta = tmp_path / "tiempos.json"
    ruta.write_text('{"tests/equipo/test_cli.py": 9.0, "tests/equipo/test_puntos.py": 4.0, '
                    '"tests/equipo/test_que_ya_no_existe.py": 3.0}', encoding="utf-8")
    probar.apuntar_tiempos({"tests/equipo/test_cli.py": 1.234, "tests/navegador/test_navegador.py": 50.0,
                            "checkpoints/01_el_bucle/tests/test_bucle.py": 2.0}, ruta)
    # Lo que corrió, redondeado; lo que no, como estaba; ni el navegador (tiene su parte), ni los
    # puntos de control (van por punto), ni ficheros que ya no existen.
    assert probar.tiempos_apuntados(ruta) == {"tests/equipo/test_cli.py": 1.2, "tests/equipo/test_puntos.py": 4.0}


def test_el_complemento_apunta_lo_que_tarda_cada_fichero(tmp_path, monkeypatch):
    """`-p curso.autor.probar` suma las fases de cada test a su fichero y lo apunta al acabar."""
    ruta = tmp_path / "tiempos.json"
    monkeypatch.setattr(probar, "TIEMPOS", ruta)
    monkeypatch.setattr(probar, "_segundos", {})
    informe = type("Informe", (), {})
    for nodeid, segundos in [("tests/equipo/test_cli.py::test_a", 0.5), ("tests/equipo/test_cli.py::test_a", 0.25),
                             ("tests/equipo/test_puntos.py::test_b[x]", 2.0)]:
        r = informe()
        r.nodeid, r.duration = nodeid, segundos
        probar.pytest_runtest_logreport(r)
    probar.pytest_sessionfinish(None)
    assert probar.tiempos_apuntados(ruta) == {"tests/equipo/test_cli.py": 0.8, "tests/equipo/test_puntos.py": 2.0}


def test_el_punto_de_control_mas_alto_empieza_justo_despues_de_los_tests_del_curso():
    """Las partes empiezan en el orden de la lista. El punto de control más alto corre todo lo que
    no se repite de los anteriores (es la parte más larga tras los tests del curso): si esperara
    detrás de los cuadernos, empezaría cuando las demás ya acaban y alargaría todo `probar`."""
    nombres = [nombre for nombre, _ in probar.partes()]
    mas_alto = max(rutas.puntos_de_control())
    assert nombres[:probar.PARTES_DEL_CURSO] == [f"tests del curso ({i} de {probar.PARTES_DEL_CURSO})"
                                        for i in range(1, probar.PARTES_DEL_CURSO + 1)]
    assert nombres[probar.PARTES_DEL_CURSO] == f"punto de control {mas_alto:02d}"
    # Los demás puntos de control, después de los cuadernos: son las partes más cortas.
    assert max(i for i, n in enumerate(nombres) if n.startswith("cuadernos")) < min(
        i for i, n in enumerate(nombres) if n.startswith("punto de control") and n != nombres[probar.PARTES_DEL_CURSO])


def test_los_cuadernos_del_alumno_comparten_un_espacio_y_los_resueltos_no(monkeypatch):
    """--nbval-lax notebooks/ es el camino de quien lo ejecuta todo sin resolver nada: un solo
    espacio para todas las lecciones. Cada cuaderno resuelto, en cambio, empieza con uno vacío."""
    import importlib.util
    from types import SimpleNamespace

    spec = importlib.util.spec_from_file_location("conftest_raiz", rutas.RAIZ / "conftest.py")
    raiz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(raiz)
    monkeypatch.setenv("CURSO_ESPACIO", "antes")

    def espacio_de(ruta):
        raiz.pytest_runtest_setup(SimpleNamespace(parent=SimpleNamespace(path=ruta)))
        return os.environ["CURSO_ESPACIO"]

    try:
        alumno = [espacio_de(rutas.CUADERNOS / f"0{n}_x.ipynb") for n in (1, 2)]
        resueltos = [espacio_de(rutas.SOLUCIONES / f"0{n}_x.ipynb") for n in (1, 2)]
    finally:
        raiz.pytest_unconfigure(None)
    assert alumno[0] == alumno[1]
    assert len({alumno[0], *resueltos}) == 3


# --- Los dos niveles: probar, --todo y --profundo (curso/autor/niveles.py) -----------------------------

UNO_PROFUNDO_QUE_FALLA = '''
def test_rapido_que_pasa():
    pass


def test_cien_caidas_al_azar_que_fallan():
    assert False, "el error del test profundo"
'''


@pytest.mark.humo  # la prueba de los niveles corre en los dos y en --rapido
def test_un_error_en_un_test_profundo_lo_ven_todo_y_su_resto_y_no_probar(tmp_path, capsys):
    """Un simulacro de caídas en muchos puntos es profundo por la regla (su nombre). La misma parte,
    entera (`probar --todo`), en el nivel rápido (`probar`, la orden del README) y en el resto
    (`probar --profundo`, lo que `.ci/run` llama después)."""
    shutil.copy(rutas.RAIZ / "conftest.py", tmp_path)  # la regla, como en el curso
    fichero = tmp_path / "test_con_uno_profundo.py"
    fichero.write_text(UNO_PROFUNDO_QUE_FALLA, encoding="utf-8")
    entera = [("tests del curso (1 de 1)", [str(fichero), "-p", "no:nbval"])]

    assert probar.main([], probar.nivel_rapido(entera)) == 0
    salida = capsys.readouterr().out
    assert "✔ tests del curso (1 de 1): 1 pasan, 0 fallan" in salida and "el error del test profundo" not in salida

    assert probar.main([], entera) == 1
    salida = capsys.readouterr().out
    assert "✘ tests del curso (1 de 1): 1 pasan, 1 fallan" in salida and "el error del test profundo" in salida

    assert probar.main([], probar.nivel_profundo(entera)) == 1
    salida = capsys.readouterr().out
    assert "✘ tests del curso (1 de 1): 0 pasan, 1 fallan" in salida and "el error del test profundo" in salida


def test_un_test_apuntado_como_profundo_no_lo_ve_probar_pero_si_el_resto(tmp_path, capsys, monkeypatch):
    """Lo medido: un test de la lista PROFUNDOS lleva la marca `profundo` sin que su fichero diga nada."""
    shutil.copy(rutas.RAIZ / "conftest.py", tmp_path)  # la regla, como en el curso (tmp_path es la raíz)
    fichero = tmp_path / "test_apuntado.py"
    fichero.write_text(UNO_APUNTADO, encoding="utf-8")
    lista = tmp_path / "profundos.json"
    lista.write_text(json.dumps({"tests": {"test_apuntado.py::test_apuntado_que_falla": 9.9}, "fixtures": []}),
                     encoding="utf-8")
    monkeypatch.setenv(niveles.VARIABLE_PROFUNDOS, str(lista))
    # La raíz, dicha: si no, pytest la busca subiendo desde tmp_path, y dentro de otra corrida de
    # probar (medir probar) el nodeid salía «../curso-probar-…/test_apuntado.py::…», que la lista no tiene.
    entera = [("tests del curso (1 de 1)", [str(fichero), "-p", "no:nbval", "--rootdir", str(tmp_path)])]
    assert probar.main([], probar.nivel_rapido(entera)) == 0
    salida = capsys.readouterr().out
    assert "1 pasan, 0 fallan" in salida and "el error del test apuntado" not in salida
    assert probar.main([], probar.nivel_profundo(entera)) == 1
    assert "el error del test apuntado" in capsys.readouterr().out


def test_todo_es_el_nivel_rapido_mas_el_resto_sin_repetir_nada():
    """Cada parte de `--todo` está en el nivel rápido entera (los cuadernos, el camino de humo), en
    el resto entera (los caminos profundos) o en los dos con filtros que se complementan. Los tests
    del curso se reparten en cada nivel por lo que tardan en él, pero son los mismos ficheros."""
    rapido, resto, todo = probar.nivel_rapido(), probar.nivel_profundo(), probar.partes()
    assert niveles.RAPIDO == f"not {niveles.PROFUNDO}"

    def ficheros_del_curso(lista, filtro):
        partes = [a for n, a in lista if n.startswith("tests del curso")]
        assert all(a[-2:] == filtro for a in partes) or filtro == []
        return sorted(f for a in partes for f in a if f.startswith("tests/"))
    assert (ficheros_del_curso(rapido, ["-m", niveles.RAPIDO]) == ficheros_del_curso(resto, ["-m", niveles.PROFUNDO])
            == ficheros_del_curso(todo, []))
    rapido, resto = dict(rapido), dict(resto)
    for nombre, argumentos in todo:
        if nombre.startswith("tests del curso"):
            continue
        if nombre.startswith(probar.DE_TESTS):
            assert rapido[nombre] == [*argumentos, "-m", niveles.RAPIDO], nombre
            assert resto[nombre] == [*argumentos, "-m", niveles.PROFUNDO], nombre
        else:
            en = [nivel for nivel in (rapido, resto) if nombre in nivel]
            assert len(en) == 1 and en[0][nombre] == argumentos, nombre
    assert {n for n, _ in todo} == set(rapido) | set(resto)
    assert any(n.startswith("cuadernos") for n in rapido) and not any(n.startswith("cuadernos") for n in resto)
    caminos = {n for n, _ in todo if n.startswith("camino: ")}
    assert caminos & set(rapido) and caminos & set(resto)


def test_cada_nivel_reparte_los_tests_del_curso_por_lo_que_tardan_en_el(tmp_path):
    """En el nivel rápido pesa lo rápido de cada fichero. La ingenua (repartir por lo que tarda el
    fichero entero, los dos niveles) pone aparte el fichero de la clase calificada, que en el nivel
    rápido apenas tarda, y junta los otros dos: una parte acaba mucho después que la otra."""
    ruta = tmp_path / "tiempos.json"
    clase, a, b = "tests/equipo/test_culpa.py", "tests/equipo/test_cli.py", "tests/equipo/test_puntos.py"
    probar.apuntar_tiempos({clase: 1.0, a: 50.0, b: 50.0}, ruta, "rapido")
    probar.apuntar_tiempos({clase: 100.0}, ruta, "profundo")
    assert probar.tiempos_apuntados(ruta, "rapido") == {clase: 1.0, a: 50.0, b: 50.0}
    assert probar.tiempos_apuntados(ruta) == {clase: 101.0, a: 50.0, b: 50.0}
    rapido = probar.tiempos_apuntados(ruta, "rapido")

    def cargas(reparto):
        return sorted(sum(rapido[f] for f in lista if f in rapido) for lista in reparto)
    por_nivel = probar.repartir_tests_del_curso(2, rapido, ficheros=[clase, a, b])
    ingenuo = probar.repartir_tests_del_curso(2, probar.tiempos_apuntados(ruta), ficheros=[clase, a, b])
    assert cargas(por_nivel) == [50.0, 51.0]
    assert cargas(ingenuo) == [1.0, 100.0]


class Variante:
    def __init__(self, ejercicio):
        self.ejercicio = ejercicio


def _prueba_de(nodeid, **opciones):
    return niveles.Prueba(nodeid=nodeid, funcion=nodeid.split("::")[1].split("[")[0], **opciones)


def test_de_cada_clase_profunda_la_regla_deja_su_humo_en_el_nivel_rapido():
    P = _prueba_de
    familia = "tests/lecciones/test_m.py::test_reescrita"
    pruebas = [
        P("tests/caminos/test_c.py::test_un_paso", humo=True), P("tests/caminos/test_c.py::test_largo"),
        P("tests/navegador/test_n.py::test_de_humo", humo=True), P("tests/navegador/test_n.py::test_otro"),
        P("tests/lecciones/test_s.py::test_cien_caidas_al_azar_acaban_igual"),
        P("tests/lecciones/test_s.py::test_una_caida_entre_editar_y_apuntar"),
        P("tests/equipo/test_culpa.py::test_celda[bien]", parametros={"nombre": "bien"}, fixtures=("calificada",)),
        P("tests/equipo/test_humo.py::test_alumno[cas]", parametros={"nombre": "cas"}, fixtures=("calificada_de_humo",)),
        P(f"{familia}[1.1-nombres]", parametros={"ejercicio": "1.1", "reescritura": "nombres"}),
        P(f"{familia}[1.1-bucles]", parametros={"ejercicio": "1.1", "reescritura": "bucles"}),
        P(f"{familia}[1.2-bucles]", parametros={"ejercicio": "1.2", "reescritura": "bucles"}),
        P("tests/lecciones/test_m.py::test_un_parametro[1.1]", parametros={"ejercicio": "1.1"}),
        # El ejercicio también sale de un objeto que lo dice (una Variante) o de un `id` como «4.2».
        P("tests/lecciones/test_v.py::test_error[4.2 a]", parametros={"variante": Variante("4.2")}),
        P("tests/lecciones/test_v.py::test_error[4.2 b]", parametros={"variante": Variante("4.2")}),
        P("tests/lecciones/test_v.py::test_mutante[4.2 x]", parametros={"id": "4.2", "antes": "x"}),
        P("tests/lecciones/test_v.py::test_mutante[4.2 y]", parametros={"id": "4.2", "antes": "y"}),
        P("tests/lecciones/test_v.py::test_leccion[5]", parametros={"id": "5"}),  # un id que no es de ejercicio
        P("tests/equipo/test_x.py::test_caro"), P("tests/equipo/test_x.py::test_barato"),
        P("tests/caminos/test_c.py::test_caro_de_humo", humo=True),  # la marca humo gana a lo medido
    ]
    apuntados = ({"tests/equipo/test_x.py::test_caro", "tests/caminos/test_c.py::test_caro_de_humo"}, set())
    assert niveles.clases_profundas(pruebas, apuntados) == {
        "tests/caminos/test_c.py::test_largo": "camino",
        "tests/navegador/test_n.py::test_otro": "navegador",
        "tests/lecciones/test_s.py::test_cien_caidas_al_azar_acaban_igual": "simulacro",
        "tests/equipo/test_culpa.py::test_celda[bien]": "clase calificada",
        f"{familia}[1.1-bucles]": "por ejercicio",
        "tests/lecciones/test_v.py::test_error[4.2 b]": "por ejercicio",
        "tests/lecciones/test_v.py::test_mutante[4.2 y]": "por ejercicio",
        "tests/equipo/test_x.py::test_caro": "medido"}
    # La ingenua de las familias (su primera instancia y nada más) dejaría el 1.2 sin nada en probar.
    ingenua = [p.nodeid for p in pruebas if p.nodeid.startswith(familia)][1:]
    assert f"{familia}[1.2-bucles]" in ingenua


def test_apuntar_profundos_mira_la_cpu_deja_el_humo_de_cada_fichero_y_las_fixtures_caras(tmp_path):
    """Lo medido. Un test que espera mucho y no gasta (un límite de tiempo que vence) no es
    profundo: la ingenua que mira el reloj lo sería. Un fichero en el que todo es caro deja el más
    barato. Una fixture cara hace profundos a todos los que la piden, no solo al que la pagó."""
    ruta = tmp_path / "profundos.json"
    caro = niveles.PROFUNDO_CPU_S * 3
    clase = "tests/c.py::cara"
    pruebas = {"tests/a.py::test_espera": {"cpu": 0.1, "segundos": 60.0},
               "tests/a.py::test_caro": {"cpu": caro, "segundos": 1.0},
               "tests/b.py::test_caro": {"cpu": caro, "segundos": 1.0},
               "tests/b.py::test_mas_caro": {"cpu": caro * 2, "segundos": 1.0},
               "tests/c.py::test_paga": {"cpu": caro, "cpu_preparacion": caro, "nuevas": [clase], "compartidas": [clase]},
               "tests/c.py::test_la_usa": {"cpu": 0.1, "compartidas": [clase]},
               "tests/c.py::test_sin_ella": {"cpu": 0.1},
               "solutions/01_el_bucle.ipynb::Cell 3": {"cpu": caro}}
    assert niveles.apuntar_profundos(pruebas, ruta) == 4
    assert niveles.profundos_apuntados(ruta) == (
        {"tests/a.py::test_caro", "tests/b.py::test_mas_caro", "tests/c.py::test_paga", "tests/c.py::test_la_usa"},
        {clase})
    ingenua = {n for n, p in pruebas.items() if p.get("segundos", 0) > 10}
    assert "tests/a.py::test_espera" in ingenua


def test_en_el_curso_cada_clase_profunda_tiene_su_humo_en_probar(tmp_path):
    """Con la regla de verdad sobre los tests de verdad (recogidos, no corridos): de cada clase
    profunda hay algo en el resto y algo en el nivel rápido; de los simulacros, en el nivel rápido,
    una caída en un solo punto; y de cada familia por ejercicio, una instancia por ejercicio."""
    donde = ["tests/caminos", "tests/navegador", "tests/lecciones", "tests/equipo/test_culpa.py",
             "tests/equipo/test_clase_de_humo.py", "checkpoints/07_postgresql/tests/test_simulacro.py"]
    apuntado = tmp_path / "niveles.json"
    hecho = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:nbval",
                            "-p", "curso.autor.niveles", *donde], cwd=rutas.RAIZ, capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, **{niveles.VARIABLE_NIVELES: str(apuntado)}))
    assert hecho.returncode == 0, hecho.stdout + hecho.stderr
    recogidos = json.loads(apuntado.read_text(encoding="utf-8"))
    for clase in {clase for clase, _, _ in niveles.CLASES}:
        de_la_clase = [d for d in recogidos.values() if d["clase"] == clase]
        assert any(d["profundo"] == clase for d in de_la_clase), (clase, "nada en el resto")
        if clase == "simulacro":  # su humo no es de la clase: las caídas en un solo punto
            rapidos = [n for n, d in recogidos.items() if not d["profundo"] and niveles.CAIDAS.search(n.split("::")[1])]
        else:
            rapidos = [d for d in de_la_clase if not d["profundo"]]
        assert rapidos, (clase, "sin humo en el nivel rápido")
    familias = {(n.split("[")[0], d["ejercicio"]) for n, d in recogidos.items() if d["clase"] == "por ejercicio"}
    con_humo = {(n.split("[")[0], d["ejercicio"]) for n, d in recogidos.items()
                if d["clase"] == "por ejercicio" and not d["profundo"]}
    assert familias == con_humo, sorted(familias - con_humo)  # de cada ejercicio de cada familia, uno


# --- Las dos velocidades: --rapido y --leccion N ----------------------------------------------------

UNO_LENTO_QUE_FALLA = '''
import pytest


def test_rapido_que_pasa():
    pass


@pytest.mark.lento
def test_lento_que_falla():
    assert False, "el error del test lento"
'''


def test_un_error_en_un_test_lento_no_lo_ve_rapido_pero_si_probar(tmp_path, capsys):
    """La misma parte, entera (como en `probar`) y pasada por `a_rapido` (como en `--rapido`)."""
    fichero = tmp_path / "test_con_uno_lento.py"
    fichero.write_text(UNO_LENTO_QUE_FALLA, encoding="utf-8")
    entera = [("tests del curso (1 de 1)", [str(fichero), "-p", "no:nbval"])]

    assert probar.main([], probar.a_rapido(entera)) == 0
    salida = capsys.readouterr().out
    assert "✔ tests del curso (1 de 1): 1 pasan, 0 fallan" in salida and "el error del test lento" not in salida

    assert probar.main([], entera) == 1
    salida = capsys.readouterr().out
    assert "✘ tests del curso (1 de 1): 1 pasan, 1 fallan" in salida and "el error del test lento" in salida


def _prueba(segundos, preparacion=0.0, nuevas=(), compartidas=(), cpu=0.0):
    return {"segundos": segundos, "cpu": cpu, "preparacion": preparacion, "nuevas": list(nuevas),
            "compartidas": list(compartidas)}


def test_apuntar_lentos_deja_fuera_lo_rapido_y_el_humo_de_cada_fichero_todo_lento(tmp_path):
    """Un fichero con algo rápido: solo lo lento va a la lista. Un fichero en el que todo es lento:
    el más rápido se queda fuera, para que --rapido corra algo de él (sin eso, desaparecería)."""
    ruta = tmp_path / "lentos.json"
    lento = probar.LENTO_S * 3
    probar.apuntar_lentos({"tests/a.py::test_rapido": _prueba(probar.LENTO_S / 2), "tests/a.py::test_lento": _prueba(lento),
                           "tests/b.py::test_menos_lento": _prueba(lento), "tests/b.py::test_muy_lento": _prueba(lento * 2)},
                          ruta)
    assert probar.lentos_apuntados(ruta) == ({"tests/a.py::test_lento", "tests/b.py::test_muy_lento"}, set())


def test_un_test_que_gasta_mucha_cpu_es_lento_aunque_tarde_poco(tmp_path):
    """El reloj de la pasada entera cambia con la carga; la CPU, no. Un test que no espera nada y
    gasta más de LENTO_CPU_S tarda menos de LENTO_S en reloj: mirar solo el reloj (la variante
    ingenua) lo deja en --rapido."""
    ruta = tmp_path / "lentos.json"
    pruebas = {"tests/d.py::test_al_azar": _prueba(probar.LENTO_S / 2, cpu=probar.LENTO_CPU_S * 2),
               "tests/d.py::test_corto": _prueba(probar.LENTO_S / 2, cpu=probar.LENTO_CPU_S / 10)}
    probar.apuntar_lentos(pruebas, ruta)
    assert probar.lentos_apuntados(ruta) == ({"tests/d.py::test_al_azar"}, set())
    ingenua = {n for n, p in pruebas.items() if p["segundos"] > probar.LENTO_S}
    assert "tests/d.py::test_al_azar" not in ingenua


def test_una_fixture_lenta_hace_lentos_a_todos_los_que_la_piden_y_no_solo_al_que_la_pago(tmp_path):
    """La clase calificada de test_culpa.py la paga el primer test que la pide; sin él, la pagaría el
    segundo. Apuntar solo al primero (la variante ingenua) deja la fixture en --rapido."""
    ruta = tmp_path / "lentos.json"
    clase = "tests/c.py::calificada"
    pruebas = {"tests/c.py::test_uno": _prueba(90, preparacion=89, nuevas=[clase], compartidas=[clase]),
               "tests/c.py::test_dos": _prueba(0.1, compartidas=[clase]),
               "tests/c.py::test_sin_la_clase": _prueba(0.1)}
    probar.apuntar_lentos(pruebas, ruta)
    lentos = probar.lentos_apuntados(ruta)
    assert [n for n, p in pruebas.items() if probar.es_lento(n, p["compartidas"], lentos)] == [
        "tests/c.py::test_uno", "tests/c.py::test_dos"]
    ingenua = ({n for n, p in pruebas.items() if p["segundos"] > probar.LENTO_S}, set())
    assert not probar.es_lento("tests/c.py::test_dos", [clase], ingenua)


UNO_APUNTADO = '''"""Un fichero de tests de usar y tirar de test_probar.py: uno pasa y el otro, apuntado como lento, falla."""


def test_corto():
    pass


def test_apuntado_que_falla():
    assert False, "el error del test apuntado"
'''


def test_un_test_apuntado_como_lento_no_lo_ve_rapido_pero_si_probar(tmp_path, capsys, monkeypatch):
    """La regla del conftest.py de la raíz: un test de la lista LENTOS lleva la marca `lento`
    sin que su fichero diga nada, y --rapido no lo corre."""
    carpeta = rutas.RAIZ / "tests" / "equipo"
    fichero = carpeta / f"test_apuntado_{os.getpid()}.py"  # dentro del curso: su id es el de la lista
    try:
        fichero.write_text(UNO_APUNTADO, encoding="utf-8")
        nodeid = f"{fichero.relative_to(rutas.RAIZ).as_posix()}::test_apuntado_que_falla"
        lista = tmp_path / "lentos.json"
        lista.write_text(json.dumps({"tests": {nodeid: 9.9}, "fixtures": []}), encoding="utf-8")
        monkeypatch.setenv(probar.VARIABLE_LENTOS, str(lista))
        entera = [("tests del curso (1 de 1)", [str(fichero), "-p", "no:nbval"])]
        assert probar.main([], probar.a_rapido(entera)) == 0
        salida = capsys.readouterr().out
        assert "1 pasan, 0 fallan" in salida and "el error del test apuntado" not in salida
        assert probar.main([], entera) == 1
        assert "el error del test apuntado" in capsys.readouterr().out
    finally:
        fichero.unlink(missing_ok=True)


def test_rapido_solo_deja_de_lo_lento_su_humo_y_de_cada_clase_corre_alguno():
    """Lo que recoge --rapido de lo que es lento por regla: de los cuadernos, solo las celdas del
    cuaderno de humo; de los caminos y del navegador, solo lo marcado `humo`, y al menos un test de
    cada uno. Sin la regla del conftest.py de la raíz, -m "not lento or humo" lo recogería todo."""
    lista = dict(probar.partes_rapidas())
    humo = next(a for n, a in lista.items() if n.startswith("humo del navegador"))
    recogidos = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval", "-m", probar.RAPIDO,
                                "solutions", *(a for a in humo if a.startswith("tests/"))],
                               cwd=rutas.RAIZ, capture_output=True, text=True, timeout=300).stdout
    ids = [linea for linea in recogidos.splitlines() if "::" in linea]
    cuadernos = {i.split("::")[0] for i in ids if i.split("::")[0].endswith(".ipynb")}
    assert cuadernos == {f"solutions/{probar.CUADERNO_DE_HUMO}.ipynb"}, ids
    for carpeta in ("tests/caminos/", "tests/navegador/"):
        de_la_carpeta = [i for i in ids if i.startswith(carpeta)]
        todos = [str(p.relative_to(rutas.RAIZ)) for p in (rutas.RAIZ / carpeta).glob("test_*.py")]
        assert 1 <= len(de_la_carpeta) < sum(p.read_text(encoding="utf-8").count("\ndef test_") for p in
                                             map(rutas.RAIZ.joinpath, todos)), (carpeta, ids)
    # Ni el pase del alumno ni los caminos enteros ni el navegador entero tienen parte en --rapido.
    assert not any("--nbval-lax" in a or any(x.startswith("tests/caminos/test_caminos.py::") for x in a)
                   for a in lista.values())


def test_leccion_4_corre_su_cuaderno_y_sus_tests_y_no_los_de_la_6():
    argumentos = [a for _, lista in probar.partes_de_la_leccion(4) for a in lista]
    assert "solutions/04_resumenes_en_sqlite.ipynb" in argumentos
    assert "notebooks/04_resumenes_en_sqlite.ipynb" in argumentos
    assert "checkpoints/04_resumenes_en_sqlite/tests" in argumentos
    assert "tests/lecciones/test_resumenes_fiabilidad.py" in argumentos  # el almacén de la lección 04
    assert "tests/equipo/test_carreras.py" in argumentos  # su explorable
    assert not [a for a in argumentos if "06_" in a or a.endswith("_06.py") or "linea_de_tiempo" in a], argumentos
    # Los de la 06, con la 06.
    de_la_6 = [a for _, lista in probar.partes_de_la_leccion(6) for a in lista]
    assert {"solutions/06_todo_junto.ipynb", "tests/lecciones/test_simulacro_06.py",
            "tests/lecciones/test_comprobaciones_l06.py"} <= set(de_la_6)
    assert not [a for a in de_la_6 if "04_" in a], de_la_6


def test_cada_leccion_corre_sus_comprobaciones_y_nada_de_los_caminos():
    for numero in rutas.LECCIONES:
        ficheros = probar.tests_de_la_leccion(numero)
        propio = rutas.RAIZ / "tests" / "lecciones" / f"test_comprobaciones_l{numero:02d}.py"
        assert not propio.exists() or str(propio.relative_to(rutas.RAIZ)) in ficheros, numero
        assert not [f for f in ficheros if f.startswith("tests/caminos/")]


def test_leccion_que_no_existe_y_rapido_con_leccion_son_errores_en_castellano(capsys):
    from curso.__main__ import main as curso_main
    assert curso_main(["probar", "--leccion", "99"]) == 2
    assert "No hay lección 99" in capsys.readouterr().out
    with pytest.raises(SystemExit) as salida:
        curso_main(["probar", "--rapido", "--leccion", "4"])
    assert salida.value.code == 2
    assert "no se puede usar junto con" in capsys.readouterr().err


# --- La CPU de cada parte y el perfil de `medir probar` ---------------------------------------------

QUEMA_EN_UN_HIJO = '''
import subprocess
import sys
import time


def test_un_hijo_gasta_cpu_y_el_test_duerme():
    subprocess.run([sys.executable, "-c",
                    "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1.5: pass"], check=True)
    time.sleep(2)
'''


def test_la_cpu_de_una_parte_y_de_un_test_cuentan_la_de_sus_hijos_y_no_el_tiempo_que_espera(tmp_path):
    """1,5 s de CPU en un nieto de `probar` (el hijo del pytest de la parte) cuentan, en la parte y
    en el test del perfil; los 2 s que duerme el test, no. Con la CPU del pytest solo (sin la de
    sus hijos) saldría menos de 1,5 s; con su tiempo, más de 3,5 s."""
    from curso.medir import perfil_de_probar
    fichero = tmp_path / "test_quema.py"
    fichero.write_text(QUEMA_EN_UN_HIJO, encoding="utf-8")
    perfil = tmp_path / "perfil"
    perfil.mkdir()
    salida, codigo, segundos, _, cpu = probar.correr(
        "quema", [str(fichero), "-p", "no:nbval", "-p", "curso.medir.perfil_de_probar"], [],
        {perfil_de_probar.VARIABLE: str(perfil)})
    assert codigo == 0, salida
    assert 1.5 <= cpu < segundos - 1.5
    pruebas, _, _ = perfil_de_probar.leer(perfil)
    [(nodeid, test)] = pruebas.items()
    assert nodeid.endswith("test_quema.py::test_un_hijo_gasta_cpu_y_el_test_duerme")
    assert 1.5 <= test["cpu"] < test["segundos"] - 1.5
    assert test["arranca"] == {"python -c": 1}


def test_que_arranca_nombra_cada_clase_de_proceso():
    from curso.medir.perfil_de_probar import que_arranca
    python = sys.executable
    assert que_arranca([python, "-m", "ipykernel_launcher", "-f", "k.json"]) == "núcleo de Jupyter"
    assert que_arranca([python, "-P", "-m", "curso.clase.guardian", "--", python, "-m", "pytest"]) == \
        "python -m curso.clase.guardian"
    assert que_arranca([python, "-c", "print(1)"]) == "python -c"
    assert que_arranca([python, "/tmp/x/correr.py", "--guion"]) == "python correr.py"
    assert que_arranca(["/usr/lib/postgresql/16/bin/initdb", "-D", "d"]) == "initdb"
    # Las de shell=True, juntas: cada una lleva sus datos («sleep 300.27 & echo lanzado»).
    assert que_arranca("echo hola") == que_arranca("sleep 300.27 & echo lanzado") == "orden de shell (sh -c)"


def test_el_perfil_suma_por_fichero_y_ordena_por_cpu():
    from curso.medir.perfil_de_probar import informe, por_fichero
    pruebas = {"tests/a.py::test_1": {"cpu": 1.0, "segundos": 2.0, "arranca": {"núcleo de Jupyter": 1}},
               "tests/a.py::test_2": {"cpu": 2.5, "segundos": 1.0, "arranca": {"núcleo de Jupyter": 2}},
               "tests/b.py::test_3": {"cpu": 3.0, "segundos": 3.0, "arranca": {}}}
    ficheros = por_fichero(pruebas)
    assert ficheros["tests/a.py"]["cpu"] == 3.5 and ficheros["tests/a.py"]["tests"] == 2
    assert ficheros["tests/a.py"]["arranca"] == {"núcleo de Jupyter": 3}
    texto = informe([("parte", 10.0, 7.0, 6.5)], pruebas, {"initdb": 1})
    # El fichero a (3,5 s) antes que el b (3 s); el test 3 antes que el 2; lo arrancado, sumado.
    assert texto.index("| tests/a.py | 2 | 3.5 |") < texto.index("| tests/b.py | 1 | 3.0 |")
    assert texto.index("tests/b.py::test_3") < texto.index("tests/a.py::test_2") < texto.index("tests/a.py::test_1")
    assert "| núcleo de Jupyter | 3 |" in texto and "| initdb | 1 |" in texto
    assert "| parte | 10 | 7.0 | 6.5 | 0.5 |" in texto


def test_la_regla_de_los_simulacros_marca_las_caidas_en_muchos_puntos_y_no_las_de_uno():
    """SIMULACRO (curso/autor/niveles.py) reconoce por el nombre los simulacros de caídas en muchos
    puntos; una caída en un solo punto, o «sin caídas», no es lenta (es el humo de los simulacros)."""
    from curso.autor.niveles import SIMULACRO
    lentos = ["test_cien_caidas_al_azar_no_pierden_ni_duplican_nada",
              "test_una_caida_justo_despues_de_cada_paso_y_sale_igual",
              "test_una_caida_en_cada_paso_de_instalar_deja_el_resumen_antiguo_o_el_nuevo",
              "test_una_edicion_que_acorta_un_fichero_grande_muere_en_cada_llamada_al_sistema_y_sale_igual"]
    de_un_punto = ["test_una_caida_entre_editar_y_apuntar_su_resultado",
                   "test_sin_caidas_cada_respuesta_y_cada_observacion_es_un_paso",  # la regla ingenua «caidas.*cada»
                   "test_la_caida_no_deja_nada_y_el_reinicio_admite_lo_pendiente"]
    assert [n for n in lentos if not SIMULACRO.search(n)] == []
    assert [n for n in de_un_punto if SIMULACRO.search(n)] == []
    # Y en el curso hay de los dos: simulacros que --rapido deja y caídas de un punto que corre.
    nombres = {n for carpeta in (rutas.RAIZ / "tests", rutas.RAIZ / "checkpoints")
               for f in carpeta.rglob("test_*.py")
               for n in re.findall(r"def (test_\w+)", f.read_text(encoding="utf-8"))}
    assert set(lentos) <= nombres and set(de_un_punto) <= nombres
