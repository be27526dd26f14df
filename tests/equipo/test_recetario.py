"""Tests de recetario/, el proyecto con tres errores que el agente tiene que arreglar.

recetario/ se entrega roto adrede: sus tests (unittest) terminan en FAILED (failures=2, errors=3),
y tests/datos/arreglo_recetario.json guarda el arreglo, tres sustituciones exactas como las que
hace la herramienta editar. Aquí se comprueba que la entrega falla como dicen las lecciones, que
el arreglo la deja en verde, que cada error cuenta y que nadie escribe en el recetario de verdad:
todo se ejecuta sobre una copia, sin __pycache__.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curso.ensayo.recetario import usuario_guionizado
from curso.ensayo.tokens import contar
from curso.rutas import RECETARIO

ARREGLO = Path(__file__).resolve().parents[1] / "datos" / "arreglo_recetario.json"
CINCO = ["AGENTE.md", "compra.py", "recetario.py", "recetas.txt", "test_recetario.py"]
ENTREGA = "FAILED (failures=2, errors=3)"
LINEA_MAXIMA = 100

# Los tamaños con el contador del servidor de ensayo, ajustados a la traza de la lección 36:
# allí leer recetario.py costó 784 tokens, compra.py 631, las recetas unos 1155, y la salida de
# los tests que ve el agente unos 1170.
TAMANOS = {
    "AGENTE.md": (83, 91),
    "recetas.txt": (1145, 1165),
    "recetario.py": (780, 788),
    "compra.py": (627, 635),
}
SALIDA_DE_LOS_TESTS = (1145, 1195)
# Lo que devuelve ejecutar se corta a partir de aquí (LIMITE_SALIDA en herramientas.py): si la
# salida de los tests pasara, el agente no la vería entera y su tamaño ya no sería el de la traza.
CORTE_DE_EJECUTAR = 6000


def arreglos():
    """Las tres sustituciones del arreglo: [{"ruta", "antiguo", "nuevo"}, ...]."""
    return json.loads(ARREGLO.read_text(encoding="utf-8"))


def copiar(destino):
    """Una copia de recetario/ dentro de `destino`; los tests solo tocan la copia."""
    return Path(shutil.copytree(RECETARIO, destino / "recetario"))


def editar(carpeta, arreglo):
    """Lo que hace la herramienta editar: `antiguo` tiene que aparecer exactamente una vez."""
    fichero = carpeta / arreglo["ruta"]
    texto = fichero.read_text(encoding="utf-8")
    veces = texto.count(arreglo["antiguo"])
    assert veces == 1, "%r aparece %d veces en %s" % (arreglo["antiguo"], veces, arreglo["ruta"])
    fichero.write_text(texto.replace(arreglo["antiguo"], arreglo["nuevo"]), encoding="utf-8")


def unittest_en(carpeta):
    """`python -m unittest` en `carpeta`, con la salida y los errores juntos, como en ejecutar."""
    entorno = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    entorno["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-m", "unittest"], cwd=carpeta, env=entorno,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)


def correr(carpeta):
    """La salida de `python -m unittest` en `carpeta` (unittest escribe en stderr)."""
    return unittest_en(carpeta).stdout


def lo_que_ve_el_agente(carpeta):
    """La observación de ejecutar("python3 -m unittest") en `carpeta`: el código de salida y la
    salida, con las rutas de la copia relativas (`File "compra.py"`)."""
    hecho = unittest_en(carpeta)
    salida = hecho.stdout.replace(str(Path(carpeta).resolve()) + os.sep, "")
    return "código de salida %d\n%s" % (hecho.returncode, salida)


def ultima_linea(salida):
    return salida.strip().splitlines()[-1]


def cuantos_tests(salida):
    return int(re.search(r"^Ran (\d+) tests? in ", salida, re.MULTILINE).group(1))


def huella(carpeta):
    """{ruta relativa: sha256} de todo lo que hay en `carpeta`, carpetas incluidas."""
    huellas = {}
    for ruta in sorted(Path(carpeta).rglob("*")):
        nombre = ruta.relative_to(carpeta).as_posix()
        huellas[nombre] = hashlib.sha256(ruta.read_bytes()).hexdigest() if ruta.is_file() else "/"
    return huellas


def test_el_recetario_tiene_exactamente_cinco_ficheros():
    assert sorted(p.name for p in RECETARIO.iterdir()) == CINCO


def test_el_recetario_se_entrega_con_tres_errores(tmp_path):
    salida = correr(copiar(tmp_path))
    assert ultima_linea(salida) == ENTREGA, salida


def test_el_arreglo_deja_todos_los_tests_en_verde(tmp_path):
    entregado = cuantos_tests(correr(copiar(tmp_path / "antes")))
    carpeta = copiar(tmp_path / "despues")
    for arreglo in arreglos():
        editar(carpeta, arreglo)
    salida = correr(carpeta)
    assert ultima_linea(salida) == "OK", salida
    assert cuantos_tests(salida) == entregado > 0


def test_el_arreglo_son_tres_ediciones_en_los_dos_modulos():
    rutas = [a["ruta"] for a in arreglos()]
    assert len(rutas) == 3
    assert set(rutas) == {"recetario.py", "compra.py"}
    for arreglo in arreglos():
        texto = (RECETARIO / arreglo["ruta"]).read_text(encoding="utf-8")
        assert texto.count(arreglo["antiguo"]) == 1, arreglo


@pytest.mark.parametrize("cual", range(3), ids=["punto_final", "minusculas", "clave"])
def test_cada_arreglo_por_si_solo_no_basta(tmp_path, cual):
    carpeta = copiar(tmp_path)
    editar(carpeta, arreglos()[cual])
    salida = correr(carpeta)
    assert ultima_linea(salida).startswith("FAILED ("), salida
    assert ultima_linea(salida) != ENTREGA, "este arreglo no cambia nada"


@pytest.mark.parametrize("cual", range(3), ids=["punto_final", "minusculas", "clave"])
def test_sin_uno_de_los_arreglos_sigue_fallando(tmp_path, cual):
    carpeta = copiar(tmp_path)
    for i, arreglo in enumerate(arreglos()):
        if i != cual:
            editar(carpeta, arreglo)
    assert ultima_linea(correr(carpeta)).startswith("FAILED ("), "el error %d no cuenta" % cual


def test_el_recetario_no_se_modifica(tmp_path):
    antes = huella(RECETARIO)
    carpeta = copiar(tmp_path)
    for arreglo in arreglos():
        editar(carpeta, arreglo)
    correr(carpeta)
    assert huella(carpeta) != antes  # la copia sí ha cambiado: el arreglo se aplicó
    assert huella(RECETARIO) == antes
    assert not list(carpeta.rglob("__pycache__"))


def test_los_ficheros_del_recetario_estan_limpios():
    for nombre in CINCO:
        datos = (RECETARIO / nombre).read_bytes()
        texto = datos.decode("utf-8")
        assert b"\r" not in datos, "%s: finales de línea CRLF" % nombre
        assert texto.endswith("\n") and not texto.endswith("\n\n"), "%s: el final" % nombre
        for n, linea in enumerate(texto.split("\n"), 1):
            assert len(linea) <= LINEA_MAXIMA, "%s:%d pasa de %d" % (nombre, n, LINEA_MAXIMA)
            assert linea == linea.rstrip(), "%s:%d acaba en espacios" % (nombre, n)


def test_los_tamanos_son_los_de_la_traza():
    for nombre, (minimo, maximo) in TAMANOS.items():
        tokens = contar((RECETARIO / nombre).read_text(encoding="utf-8"))
        assert minimo <= tokens <= maximo, "%s: %d tokens" % (nombre, tokens)


def test_la_salida_de_los_tests_es_la_de_la_traza(tmp_path):
    carpeta = copiar(tmp_path)
    salida = lo_que_ve_el_agente(carpeta)
    assert salida.startswith("código de salida 1\n"), salida
    assert 'File "compra.py", line ' in salida and str(carpeta) not in salida, salida
    assert len(salida) <= CORTE_DE_EJECUTAR, "ejecutar la cortaría: %d caracteres" % len(salida)
    minimo, maximo = SALIDA_DE_LOS_TESTS
    tokens = contar(salida)
    assert minimo <= tokens <= maximo, "la salida de los tests: %d tokens\n%s" % (tokens, salida)


# --- El usuario de los cuadernos ---------------------------------------------------------------

@pytest.mark.parametrize("nombre, entrada", [
    ("ejecutar", {"comando": "python3 -m unittest"}),
    ("editar", {"ruta": "recetario.py", "antiguo": "a", "nuevo": "b"}),
    ("editar", {"ruta": "compra.py", "antiguo": "a", "nuevo": "b"}),
])
def test_el_usuario_guionizado_dice_que_si_a_los_tests_y_a_los_dos_modulos(nombre, entrada):
    assert usuario_guionizado(nombre, entrada) is True


@pytest.mark.parametrize("nombre, entrada", [
    ("ejecutar", {"comando": "rm -rf ."}),
    ("ejecutar", {"comando": "python3 -m unittest; rm -rf ."}),
    ("ejecutar", {"comando": "python3 -m unittest && curl http://ejemplo.com"}),
    ("ejecutar", {"comando": "python3 test_recetario.py"}),
    ("editar", {"ruta": "test_recetario.py", "antiguo": "a", "nuevo": "b"}),
    ("editar", {"ruta": "recetas.txt", "antiguo": "a", "nuevo": "b"}),
    ("editar", {"ruta": "../recetario.py", "antiguo": "a", "nuevo": "b"}),
    ("editar", {"ruta": "AGENTE.md", "antiguo": "a", "nuevo": "b"}),
    ("borrar", {"ruta": "compra.py"}),
])
def test_el_usuario_guionizado_dice_que_no_a_lo_demas(nombre, entrada):
    assert usuario_guionizado(nombre, entrada) is False
