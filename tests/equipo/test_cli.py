"""Tests de la línea de órdenes `python -m curso`: ayuda y errores en español, código de salida 2
ante argumentos que no valen, y nada tocado cuando se rechaza una orden.

El espacio del alumno es siempre uno temporal (`CURSO_ESPACIO`), nunca el de verdad.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from curso import rutas
from curso import __main__ as cli

ERROR_DE_USO = 2
NOMBRES = [orden for orden, _, _ in cli.ORDENES]

# Lo que deja ver que un texto salió de argparse sin traducir.
INGLES = re.compile(r"\busage:|\boptions:|\barguments:|show this help|\berror: argument\b|\binvalid\b|"
                    r"\bunrecognized\b|\bexpected\b|\brequired\b|\bchoose from\b|\bambiguous\b|"
                    r"\bnot allowed\b")


def en_ingles(texto):
    return INGLES.findall(texto)


def foto(carpeta):
    carpeta = Path(carpeta)
    return {p.relative_to(carpeta).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(carpeta.rglob("*"))}


@pytest.fixture
def espacio(tmp_path):
    """Un espacio del alumno temporal con trabajo dentro, que ninguna orden rechazada debe tocar."""
    carpeta = tmp_path / "mi_agente"
    (carpeta / "datos").mkdir(parents=True)
    (carpeta / "bucle.py").write_text("def bucle():\n    return 'lo mío'\n", encoding="utf-8")
    (carpeta / "datos" / "notas.txt").write_text("ideas\n", encoding="utf-8")
    return carpeta


def curso(*argumentos, espacio):
    entorno = {**os.environ, rutas.VARIABLE_ESPACIO: str(espacio)}
    return subprocess.run([sys.executable, "-m", "curso", *argumentos], cwd=rutas.RAIZ,
                          env=entorno, capture_output=True, text=True, timeout=60)


def test_sin_orden_sale_con_2_y_lo_dice_en_espanol(espacio):
    r = curso(espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert "falta la orden" in r.stderr
    assert "uso: python -m curso" in r.stderr
    assert "usage" not in r.stderr and "error: the" not in r.stderr


@pytest.mark.parametrize("ayuda", ["--help", "-h", "--ayuda"])
def test_la_ayuda_esta_en_espanol(espacio, ayuda):
    r = curso(ayuda, espacio=espacio)
    assert r.returncode == 0
    assert r.stdout.startswith("uso: python -m curso")
    for orden, _, ayuda in cli.ORDENES:
        assert re.search(rf"^ +{orden} +{re.escape(ayuda.split()[0])}", r.stdout, re.MULTILINE), orden
    assert "muestra esta ayuda y sale" in r.stdout
    for ingles in ["usage:", "show this help", "positional arguments", "options:"]:
        assert ingles not in r.stdout


def test_la_linea_de_uso_ensena_la_misma_opcion_de_ayuda_que_la_pista_de_los_errores(espacio):
    """La pista de un error dice «--ayuda»; la línea «uso:» tiene que decir lo mismo, no «-h»."""
    r = curso("arreglar", espacio=espacio)
    assert "python -m curso --ayuda" in r.stderr
    usos = [l for l in (r.stderr + curso("--ayuda", espacio=espacio).stdout
                        + curso("probar", "--ayuda", espacio=espacio).stdout).splitlines() if l.startswith("uso:")]
    assert len(usos) == 3 and all("[--ayuda]" in l and "[-h]" not in l for l in usos), usos


def test_una_orden_desconocida_sale_con_2(espacio):
    r = curso("arreglar", espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert "'arreglar' no existe" in r.stderr
    assert "python -m curso --ayuda" in r.stderr


@pytest.mark.parametrize("argumentos", [
    ["comparar", "99"], ["comparar", "abc"], ["restaurar", "abc"], ["restaurar", "99"],
    ["restaurar", "-1"],
])
def test_un_punto_de_control_invalido_no_toca_nada(espacio, argumentos):
    antes = foto(espacio.parent)
    r = curso(*argumentos, espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert foto(espacio.parent) == antes  # ni el espacio ni una copia a su lado
    reales = rutas.puntos_de_control()
    if not reales:
        assert "No hay puntos de control" in r.stderr
    for numero, carpeta in reales.items():  # lista los que hay, con número y nombre
        assert f"{numero:02d}  {carpeta.name.split('_', 1)[1]}" in r.stderr


@pytest.mark.parametrize("argumentos", [["comparar"], ["restaurar", "1", "2"], ["medir", "nada"],
                                        ["comparar", "1", "--rapido"]])
def test_argumentos_que_no_valen_salen_con_2_sin_tocar_nada(espacio, argumentos):
    antes = foto(espacio.parent)
    with pytest.raises(SystemExit) as salida:
        cli.main(argumentos)
    assert salida.value.code == ERROR_DE_USO
    assert foto(espacio.parent) == antes


def test_los_errores_de_argparse_se_traducen():
    assert cli.traducir_error("argument --puerto: invalid int value: 'x'") == \
        "argumento --puerto: 'x' no es un número entero"
    assert cli.traducir_error("the following arguments are required: N") == "faltan argumentos: N"
    assert cli.traducir_error("unrecognized arguments: --rapido") == \
        "argumentos que no reconozco: --rapido"


def test_las_ordenes_de_puntos_llegan_a_su_funcion(tmp_path, monkeypatch, capsys):
    """`comparar` y `restaurar` por la línea de órdenes, con puntos de control inventados."""
    (tmp_path / "checkpoints" / "01_bucle").mkdir(parents=True)
    (tmp_path / "checkpoints" / "01_bucle" / "bucle.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(rutas, "PUNTOS", tmp_path / "checkpoints")
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(tmp_path / "mi_agente"))

    assert cli.main(["comparar", "01"]) == 1          # aún no hay espacio
    assert cli.main(["restaurar", "01"]) == 0
    assert cli.main(["comparar", "1"]) == 0
    (tmp_path / "mi_agente" / "bucle.py").write_text("x = 2\n", encoding="utf-8")
    assert cli.main(["comparar", "1"]) == 1
    assert "+x = 2" in capsys.readouterr().out


@pytest.mark.parametrize("orden", ["comparar", "restaurar"])
def test_un_numero_de_5000_cifras_sale_con_2_y_en_espanol(espacio, orden):
    antes = foto(espacio.parent)
    r = curso(orden, "1" * 5000, espacio=espacio)
    assert r.returncode == ERROR_DE_USO
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("No hay ningún punto de control «1111")
    assert len(r.stderr) < 2000, "el mensaje repite las 5000 cifras"
    assert foto(espacio.parent) == antes


def test_comparar_en_una_tuberia_que_se_cierra_acaba_sin_traza(espacio):
    """`python -m curso comparar 1 | head`: quien lee se va tras la primera línea."""
    # Un diff mucho mayor que el búfer de una tubería (64 KiB): comparar sigue escribiendo
    # después de que se cierre.
    (espacio / "bucle.py").write_text("".join(f"x{i} = {i}\n" for i in range(20000)), encoding="utf-8")
    entorno = {**os.environ, rutas.VARIABLE_ESPACIO: str(espacio)}
    proceso = subprocess.Popen([sys.executable, "-m", "curso", "comparar", "1"], cwd=rutas.RAIZ,
                               env=entorno, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proceso.stdout.readline().startswith("Tu espacio")
    proceso.stdout.close()
    error = proceso.stderr.read()
    proceso.stderr.close()
    assert proceso.wait(timeout=60) == cli.SALIDA_CERRADA
    assert error == ""  # ni «Traceback», ni BrokenPipeError, ni «Exception ignored»


LANZADOR = """
import sys, time
from pathlib import Path
from curso.__main__ import main
listo, salida = Path(sys.argv[1]), Path(sys.argv[2])
listo.touch()
while not salida.exists():  # todos a la vez: cuando el test crea la señal
    time.sleep(0.001)
sys.exit(main(["restaurar", "1"]))
"""


def test_varios_restaurar_a_la_vez_dicen_la_verdad(espacio, tmp_path_factory):
    """Procesos de verdad que restauran el mismo espacio a la vez: ninguno falla ni dice algo
    falso, cada uno deja a salvo lo que había, y nada queda a medias."""
    veces = 6
    trabajo = foto(espacio)
    codigo = {p: p.read_bytes() for p in (rutas.puntos_de_control()[1]).glob("*.py")}
    senales = tmp_path_factory.mktemp("senales")  # no al lado del espacio: allí se mira qué queda
    entorno = {**os.environ, rutas.VARIABLE_ESPACIO: str(espacio)}
    procesos = [subprocess.Popen([sys.executable, "-c", LANZADOR, str(senales / f"listo-{i}"),
                                  str(senales / "ya")], cwd=rutas.RAIZ, env=entorno,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i in range(veces)]
    while len(list(senales.glob("listo-*"))) < veces:
        assert all(p.poll() is None for p in procesos), "un proceso terminó antes de empezar"
    (senales / "ya").touch()
    salidas = [(p.wait(timeout=120), *p.communicate()) for p in procesos]

    for codigo_de_salida, salida, error in salidas:
        assert "Traceback" not in error, error
        assert codigo_de_salida == 0, salida + error
    copias = sorted(espacio.parent.glob(espacio.name + ".copia-*"))
    dichas = [c for _, salida, _ in salidas for c in re.findall(r"a salvo en la carpeta (\S+),", salida)]
    assert sorted(dichas) == [c.name for c in copias]  # cada copia la anuncia uno, y existe
    assert [foto(c) for c in copias].count(trabajo) == 1  # el trabajo de verdad, entero, una vez
    restaurado = {p.name: b for p, b in codigo.items()}
    for carpeta in [espacio] + [c for c in copias if foto(c) != trabajo]:
        # lo demás es el punto de control entero: nadie movió (ni dejó) un espacio a medias
        assert {p.name: p.read_bytes() for p in carpeta.glob("*.py")} == restaurado, carpeta.name
    # Con el cerrojo, uno detrás de otro: cada uno encuentra lo que dejó el anterior y lo guarda.
    assert len(copias) == veces, "\n".join(salida + error for _, salida, error in salidas)
    assert sorted(p.name for p in espacio.parent.iterdir()) == sorted(
        [espacio.name] + [c.name for c in copias]), "quedó el cerrojo u otra cosa al lado del espacio"


PARA_PYTEST = ["-q", "tests/equipo/test_cli.py", "-k", "no ayuda", "--a", "-x"]


def lo_que_llega_a_pytest(monkeypatch, capsys):
    """Lo que `probar PARA_PYTEST` pasa a pytest, o «error de uso» si no pasa nada."""
    from curso.autor import probar
    recibidos = []
    monkeypatch.setattr(probar, "main", lambda argv, lista=None: recibidos.append(argv))
    try:
        cli.main(["probar", *PARA_PYTEST])
    except SystemExit:
        capsys.readouterr()
        return "error de uso"
    return recibidos[0]


def probar_con_remainder(analizador):
    """Lo que parece natural y no vale: un posicional REMAINDER no admite una opción al principio."""
    analizador.add_argument("pytest", nargs=argparse.REMAINDER)


def probar_con_abreviaturas(analizador):
    """Sin `allow_abbrev=False`, «--a» (de pytest) se toma por «--ayuda»."""
    analizador.pasar_el_resto("pytest", "ARGUMENTOS", "para pytest")
    analizador.allow_abbrev = True


def test_probar_pasa_a_pytest_sus_argumentos_tal_cual_y_en_su_orden(monkeypatch, capsys):
    from curso.autor import probar
    assert lo_que_llega_a_pytest(monkeypatch, capsys) == PARA_PYTEST
    for ingenua in (probar_con_remainder, probar_con_abreviaturas):
        monkeypatch.setattr(probar, "argumentos_probar", ingenua)
        assert lo_que_llega_a_pytest(monkeypatch, capsys) != PARA_PYTEST, ingenua.__name__


def test_comparar_restaurar_y_el_cuaderno_no_cargan_nbformat():
    """nbformat es lento de cargar (valida con jsonschema). Solo lo necesitan
    `generar` y `ejecutar`; si lo cargara lo que importan `comparar`, `restaurar`, `comprobar` o
    cada núcleo de un cuaderno (`curso.alumno.cuaderno`), todos lo pagarían en cada arranque."""
    hecho = subprocess.run(
        [sys.executable, "-c", "import sys\nimport curso.__main__, curso.alumno.puntos, curso.comprobaciones.ejercicios, curso.alumno.cuaderno, "
         "curso.clase.calificar, curso.comprobaciones.espacio\nprint(sorted(m for m in ('nbformat', 'jsonschema') if m in sys.modules))"],
        cwd=rutas.RAIZ, capture_output=True, text=True, timeout=60)
    assert hecho.returncode == 0, hecho.stderr
    assert hecho.stdout.strip() == "[]"


# --- la tabla de órdenes -------------------------------------------------------------------------

def ayuda_de(orden, capsys):
    with pytest.raises(SystemExit) as salida:
        cli.main([orden, "--ayuda"])
    assert salida.value.code == 0
    return capsys.readouterr().out


def test_el_detector_de_ingles_caza_a_argparse_sin_traducir(capsys):
    """La variante ingenua de las órdenes de abajo: un ArgumentParser propio, como tenían
    `servidor` y `postgres`. Su ayuda y sus errores los caza `en_ingles`; los de `Analizador`, no."""
    for clase in (argparse.ArgumentParser, cli.Analizador):
        analizador = clase(prog="python -m curso postgres")
        analizador.add_argument("--puerto", type=int)
        analizador.add_argument("n")
        textos = [analizador.format_help()]
        for malos in (["--bogus"], ["1", "--puerto", "x"], []):
            with pytest.raises(SystemExit):
                analizador.parse_args(malos)
            textos.append(capsys.readouterr().err)
        encontrados = [en_ingles(texto) for texto in textos]
        assert all(encontrados) if clase is argparse.ArgumentParser else not any(encontrados), encontrados


@pytest.mark.parametrize("orden", NOMBRES)
def test_la_ayuda_de_cada_orden_esta_en_espanol(orden, capsys):
    ayuda = ayuda_de(orden, capsys)
    assert ayuda.startswith(f"uso: {cli.PROG} {orden}")
    assert "muestra esta ayuda y sale" in ayuda
    assert en_ingles(ayuda) == []


def pasa_el_resto(orden):
    return cli.analizador(cargar=[orden]).subordenes[orden].get_default("_resto") is not None


# Con «--bogus», la que pide un N dice antes que le falta: basta con que lo diga en español.
ERRORES_DE_USO = [([orden, "--bogus"], "error: ") for orden in NOMBRES if not pasa_el_resto(orden)] + [
    (["postgres", "--bogus"], "argumentos que no reconozco: --bogus"),
    (["servidor", "--puerto", "x"], "«x»"),
    (["servidor", "--puerto", "70000"], "entre 0 y 65535"),
    (["servidor", "--fallos", "418"], "El plan de fallos tiene «418»"),
    (["servidor", "--fallos", "429:-1"], "«429:-1»"),
    (["postgres", "--puerto", "0"], "entre 1 y 65535"),
    (["comprobar", "1", "--limite", "0"], "mayor que cero"),
    (["calificar", "clase", "--a-la-vez", "dos"], "no es un número entero"),
    (["ejecutar"], "faltan argumentos: N"),
    (["medir", "nada"], "'nada' no existe"),
]


@pytest.mark.parametrize("argumentos, dice", ERRORES_DE_USO, ids=[" ".join(a) for a, _ in ERRORES_DE_USO])
def test_cada_error_de_uso_esta_en_espanol_y_sale_con_2(argumentos, dice, capsys):
    with pytest.raises(SystemExit) as salida:
        cli.main(argumentos)
    error = capsys.readouterr().err
    assert salida.value.code == ERROR_DE_USO
    assert error.startswith(f"uso: {cli.PROG} {argumentos[0]}")  # el uso de la orden, no el general
    assert dice in error
    assert en_ingles(error) == []


def test_la_ayuda_de_servidor_lista_fallos_y_la_orden_lo_acepta(monkeypatch, capsys):
    from curso.ensayo import servidor
    recibidos = []
    monkeypatch.setattr(servidor, "orden_servidor", recibidos.append)
    assert cli.main(["servidor", "--fallos", "529,corte"]) == 0
    assert [args.fallos for args in recibidos] == ["529,corte"]
    assert "--fallos" in ayuda_de("servidor", capsys)
    # La variante ingenua: la ayuda de otra declaración de las opciones, sin --fallos.
    otra = cli.Analizador(prog=f"{cli.PROG} servidor")
    otra.add_argument("--puerto", type=int)
    assert "--fallos" not in otra.format_help()


def test_cada_fila_de_la_tabla_tiene_su_funcion_en_su_modulo():
    import importlib
    for orden, modulo, _ in cli.ORDENES:
        declarar, hacer = cli.funciones(orden)
        assert callable(getattr(importlib.import_module(modulo), hacer, None)), f"falta {modulo}.{hacer}"
    assert cli.funciones("sin-bom") == ("argumentos_sin_bom", "orden_sin_bom")


MODULOS_CARGADOS = """
import contextlib, io, json, sys
from curso import __main__ as cli
def cargados():
    return sorted({modulo for _, modulo, _ in cli.ORDENES} & set(sys.modules))
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(["--ayuda"])
    except SystemExit:
        pass
    con_la_ayuda = cargados()
    cli.analizador(cargar=[orden for orden, _, _ in cli.ORDENES])  # la variante ingenua: todas
print(json.dumps([con_la_ayuda, cargados()]))
"""


def test_la_ayuda_general_no_importa_ningun_modulo_de_orden():
    hecho = subprocess.run([sys.executable, "-c", MODULOS_CARGADOS], cwd=rutas.RAIZ,
                           capture_output=True, text=True, timeout=60)
    assert hecho.returncode == 0, hecho.stderr
    con_la_ayuda, con_todas = json.loads(hecho.stdout)
    assert con_la_ayuda == []
    assert con_todas == sorted({modulo for _, modulo, _ in cli.ORDENES})  # la ingenua sí se ve


# Los README de los tres lectores: el del alumno, la guía de quien da el curso y el mapa de quien lo mantiene.
README_DE_CADA_LECTOR = ("README.md", "GUIA_DEL_INSTRUCTOR.md", "curso/README.md")


def ordenes_del_readme(texto):
    """Cada `python -m curso X` que nombran los README (no sus opciones, como --ayuda)."""
    return set(re.findall(r"python -m curso\s+([a-z][a-z_-]*)", texto))


def diferencias_con_la_tabla(texto):
    """(las que nombra el README y no están en la tabla, las de la tabla que no nombra)."""
    nombradas = ordenes_del_readme(texto)
    return sorted(nombradas - set(NOMBRES)), sorted(set(NOMBRES) - nombradas)


def test_los_readme_nombran_exactamente_las_ordenes_de_la_tabla():
    readme = "\n".join((rutas.RAIZ / r).read_text(encoding="utf-8") for r in README_DE_CADA_LECTOR)
    assert diferencias_con_la_tabla(readme) == ([], [])
    # La variante ingenua: un README que olvida una orden y nombra otra que no existe.
    olvidada = NOMBRES[-1]
    otro = re.sub(rf"python -m curso\s+{olvidada}\b", "python -m curso arreglar", readme)
    assert diferencias_con_la_tabla(otro) == (["arreglar"], [olvidada])
