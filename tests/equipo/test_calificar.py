"""Tests de `python -m curso calificar CARPETA`: una clase de tres alumnos (uno bien, uno con un fallo
y uno que se cuelga) contra la lección 00, y la tabla que sale, en CSV y en HTML.

La lección 00 basta: lo que se prueba aquí es la tabla y que ningún alumno pare a los demás; cómo
se comprueba un espacio contra puntos de control más grandes está en test_comprobar_espacio.py.
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

import pytest

from ayudas import sigint_de_terminal, vivo

from curso import __main__ as cli
from curso import calificar, rutas
from curso.calificar import BIEN, COLGADO, FALTA, MAL, SIN_TESTS, Comprobacion, Linea, celda

LIMITE_CORTO = 8  # segundos por alumno y lección: de sobra para la lección 00, poco para esperar


def espacio_de(carpeta, calentamiento=None):
    """Un espacio con los módulos del punto de control 00 (o con otro calentamiento.py)."""
    carpeta.mkdir(parents=True)
    for modulo in rutas.puntos_de_control()[0].glob("*.py"):
        shutil.copyfile(modulo, carpeta / modulo.name)
    if calentamiento is not None:
        (carpeta / "calentamiento.py").write_text(calentamiento, encoding="utf-8")
    return carpeta


CON_FALLO = "def ultima_linea(salida):\n    return salida\n"
SE_CUELGA = "import time\n\ndef ultima_linea(salida):\n    while True:\n        time.sleep(0.1)\n"


def test_una_clase_de_tres_sale_en_la_tabla_sin_que_el_colgado_pare_a_nadie(tmp_path, temporal, capsys):
    clase = tmp_path / "clase"
    espacio_de(clase / "ana")
    espacio_de(clase / "beto", CON_FALLO)
    espacio_de(clase / "carla", SE_CUELGA)
    salida = tmp_path / "notas"
    codigo = calificar.calificar(clase, salida=salida, limite=LIMITE_CORTO, lecciones=[0], a_la_vez=2)
    assert codigo == 0
    progreso = capsys.readouterr().out
    for alumno in ("ana", "beto", "carla"):
        assert re.search(rf"^\[\d/3\] {alumno} · lección 00: ", progreso, re.MULTILINE)

    filas = list(csv.reader(io.StringIO((salida / "calificaciones.csv").read_text(encoding="utf-8"))))
    assert filas[0] == ["alumno", "00_antes_de_empezar", "lecciones en verde"]
    assert filas[1:] == [["ana", "✔", "1"],
                         ["beto", "✘ calentamiento.py", "0"],
                         ["carla", f"✘ calentamiento.py (no terminó en {LIMITE_CORTO} s)", "0"]]
    assert not (clase / "calificaciones.csv").exists()  # con --salida, la tabla va allí

    pagina = (salida / "calificaciones.html").read_text(encoding="utf-8")
    assert pagina.count('<td class="bien"') == 1 and pagina.count('<td class="mal"') == 2
    assert "Verde (✔)</strong> quiere decir" in pagina
    for de_fuera in ("http://", "https://", "<link", "<script", "src=", "url(", "@import"):
        assert de_fuera not in pagina  # una página sola, sin nada de fuera


def test_una_celda_dice_que_modulos_no_pasan_y_cuantos_faltan_si_son_muchos():
    def con(*lineas):
        return Comprobacion(1, "el_bucle", list(lineas), 30)
    varios = "test_r.py (prueba varios módulos a la vez)"
    assert celda(con(Linea("a.py", BIEN), Linea("e.py", SIN_TESTS))) == "✔"
    assert celda(con(Linea("a.py", MAL, "falla x"), Linea("b.py", FALTA), Linea("c.py", COLGADO),
                     Linea(varios, MAL))) == "✘ b.py (falta), a.py, c.py (no terminó en 30 s), test_r.py"
    # La lección sin empezar: no una lista de todos sus módulos, sino cuántos faltan.
    assert celda(con(*(Linea(f"{m}.py", FALTA) for m in "abc"), Linea(varios, MAL))) == \
        "✘ faltan 3 módulos, test_r.py"


def test_un_ctrl_c_para_la_clase_sin_dejar_procesos_ni_carpetas(tmp_path):
    """Los tests corren en otro grupo de procesos, así que el Ctrl-C del terminal no les llega:
    calificar los para él, no empieza ningún otro y no escribe tabla."""
    clase = tmp_path / "clase"
    ficha = tmp_path / "pid.txt"
    espacio_de(clase / "ana", "import os, time\n\ndef ultima_linea(salida):\n"
                              f"    open({str(ficha)!r}, 'w').write(str(os.getpid()))\n"
                              "    while True:\n        time.sleep(0.1)\n")
    espacio_de(clase / "beto")
    temporal = tmp_path / "temporal"
    temporal.mkdir()
    proceso = subprocess.Popen([sys.executable, "-m", "curso", "calificar", str(clase), "--lecciones", "0",
                                "--limite", "120"], cwd=rutas.RAIZ, env={**os.environ, "TMPDIR": str(temporal)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=sigint_de_terminal)
    try:
        fin = time.monotonic() + 60
        while not ficha.exists() or not ficha.read_text():
            assert time.monotonic() < fin and proceso.poll() is None
            time.sleep(0.1)
        proceso.send_signal(signal.SIGINT)
        salida, errores = proceso.communicate(timeout=20)
    finally:
        if proceso.poll() is None:  # solo si el test ya ha fallado
            proceso.kill()
            proceso.communicate()
    assert proceso.returncode == calificar.INTERRUMPIDO
    assert "Interrumpido" in errores and "Traceback" not in errores
    assert "beto" not in salida  # no empezó al siguiente
    assert not (clase / "calificaciones.csv").exists()
    assert not vivo(int(ficha.read_text()))
    assert list(temporal.iterdir()) == []


def test_la_pagina_escapa_lo_que_viene_de_los_alumnos():
    mala = Comprobacion(0, "antes_de_empezar", [Linea("<b>x.py</b>", MAL, "falla <script>")], 5)
    pagina = calificar.pagina_html([("<img src=x>", {0: mala})], {0: "antes_de_empezar"}, 5)
    assert "<img" not in pagina and "<script" not in pagina and "<b>x" not in pagina
    assert "&lt;img src=x&gt;" in pagina


def test_un_espacio_que_ni_se_puede_copiar_es_una_celda_roja(tmp_path, monkeypatch, capsys):
    clase = tmp_path / "clase"
    (clase / "roto").mkdir(parents=True)
    (clase / "sano").mkdir()

    def comprobar_en(espacio, punto, limite, parar=None):
        if espacio.name == "roto":
            raise PermissionError(13, "Permission denied")
        return Comprobacion(0, "antes_de_empezar", [Linea("calentamiento.py", BIEN, "3 tests pasan")], limite)

    monkeypatch.setattr(calificar, "comprobar_en", comprobar_en)
    assert calificar.calificar(clase, lecciones=[0], limite=5) == 0
    filas = list(csv.reader(io.StringIO((clase / "calificaciones.csv").read_text(encoding="utf-8"))))
    assert filas[1:] == [
        ["roto", "✘ el espacio no se pudo comprobar: PermissionError: [Errno 13] Permission denied", "0"],
        ["sano", "✔", "1"]]


def test_cada_subcarpeta_es_un_alumno_y_si_trae_mi_agente_dentro_se_usa_ese(tmp_path):
    clase = tmp_path / "clase"
    (clase / "ana").mkdir(parents=True)
    (clase / "ana" / "bucle.py").write_text("", encoding="utf-8")
    (clase / "beto" / "mi_agente").mkdir(parents=True)
    (clase / ".oculta").mkdir()
    (clase / "notas").mkdir()
    (clase / "suelto.txt").write_text("", encoding="utf-8")
    assert calificar.espacios_de(clase, salida=clase / "notas") == [
        ("ana", clase / "ana"), ("beto", clase / "beto" / "mi_agente")]


def test_la_orden_sin_carpeta_o_con_una_leccion_que_no_hay_sale_con_2(tmp_path, capsys):
    assert cli.main(["calificar", str(tmp_path / "no_existe")]) == 2
    assert "no es una carpeta" in capsys.readouterr().err
    assert cli.main(["calificar", str(tmp_path), "--lecciones", "99"]) == 2
    assert "No hay punto de control con tests para la lección 99" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # no escribió ninguna tabla
