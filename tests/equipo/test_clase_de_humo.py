"""El humo de las clases calificadas: tres alumnos de la clase de test_culpa.py, calificados de verdad en la lección 04, uno por cada regla de la culpa.

`probar` (el nivel rápido) no califica la clase entera de test_culpa.py (seis alumnos, dos lecciones,
con colgados: la fixture `calificada`, del nivel profundo; ver curso/autor/niveles.py). Califica
esta, que ejercita una vez cada regla: un módulo que no se importa (`sintaxis_historial`), uno que
se cuelga (`colgado_resumenes`) y uno cuyos propios tests fallan con todo lo demás de referencia
(`cas`), cada uno con sus consecuencias («durable.py, por resumenes.py») y su «Lo primero que
mirar». Lo que se espera es la clave de clase_de_la_culpa.py, escrita a mano antes de correr nada.
"""
import csv
import io
import re

import pytest

import clase_de_la_culpa as clase
from curso import rutas
from curso.clase import calificar
from curso.medir.clase_de_treinta import escribir_espacio

ALUMNOS = ["sintaxis_historial", "colgado_resumenes", "cas"]  # uno por regla: no se importa, colgado, sus tests
# El límite de cada test (curso/comprobaciones/colgados.py: s de CPU, s parado, 10× de reloj). Los
# tests de la lección 04 de un espacio correcto gastan menos de 1 s de CPU y no se paran; con los 20
# de test_culpa.py, el alumno colgado (dos corridas y otra a solas al final) tardaba 178 s de reloj
# en el perfil de hoy; con 8, unos 70.
LIMITE = 8
CONSECUENCIAS = re.compile(r"((?:\w+\.py, )+)por (\w+)\.py")


@pytest.fixture(scope="module")
def calificada_de_humo(tmp_path_factory):
    """Los tres alumnos calificados una vez en la lección 04, con devoluciones: (filas del CSV por
    alumno, carpeta de salida)."""
    carpeta = tmp_path_factory.mktemp("clase_de_humo")
    punto = rutas.puntos_de_control()[clase.PUNTO]
    for nombre in ALUMNOS:
        espacio = carpeta / "clase" / nombre / "mi_agente"
        espacio.mkdir(parents=True)
        escribir_espacio(espacio, punto, nombre, [clase.ERRORES[nombre]])
    salida = carpeta / "notas"
    assert calificar.calificar(carpeta / "clase", salida=salida, limite=LIMITE, lecciones=[clase.PUNTO],
                               a_la_vez=2, devoluciones=True) == 0
    texto = (salida / "calificaciones.csv").read_text(encoding="utf-8-sig")
    return {f["alumno"]: f for f in csv.DictReader(io.StringIO(texto))}, salida


def test_la_clase_de_humo_tiene_un_alumno_por_regla_de_la_culpa():
    """Que el humo no se quede corto si cambia la clave: cada alumno cae en una regla distinta."""
    empiezan = {clase.CLAVE[nombre]["estados"][clase.PUNTO].split(" ")[0] for nombre in ALUMNOS}
    assert empiezan == {"✘", "⚠"}
    colgados = [n for n in ALUMNOS if "colgado" in clase.CLAVE[n]["estados"][clase.PUNTO]]
    no_se_importan = [n for n in ALUMNOS if "SyntaxError" in (clase.CLAVE[n]["primero"] or ("", []))[1]]
    assert len(colgados) == len(no_se_importan) == 1
    assert all(clase.CLAVE[n]["consecuencias"] for n in ALUMNOS)  # y cada uno con sus consecuencias


@pytest.mark.parametrize("nombre", ALUMNOS)
def test_cada_alumno_de_humo_sale_como_dice_la_clave(calificada_de_humo, nombre):
    filas, salida = calificada_de_humo
    clave = clase.CLAVE[nombre]
    celda = filas[nombre][f"{clase.PUNTO:02d} estado"]
    assert celda.startswith(clave["estados"][clase.PUNTO]), celda
    culpable = clave["estados"][clase.PUNTO].split(" ")[1]
    consecuencias = {m.removesuffix(".py"): c for grupo, c in CONSECUENCIAS.findall(celda)
                     for m in grupo.rstrip(", ").split(", ")}
    assert consecuencias == clave["consecuencias"], celda
    assert celda.lstrip("✘⚠ ").split(";")[0].split(" ")[0] == culpable, celda  # solo el culpable delante
    modulo, dice = clave["primero"]
    devolucion = (salida / "devoluciones" / f"{nombre}.txt").read_text(encoding="utf-8")
    primera = next(l for l in devolucion.splitlines() if l.startswith("Lo primero que mirar:"))
    assert primera.startswith(f"Lo primero que mirar: lección {clase.PUNTO:02d}, {modulo}.py: "), primera
    assert all(trozo in primera for trozo in dice), (dice, primera)
