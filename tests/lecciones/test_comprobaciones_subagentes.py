"""Cada error contra el que avisa el ejercicio 5.4 lo pilla el caso de la comprobación escrito para él.

Como en test_comprobaciones_buzon.py: para cada error, una versión equivocada (la del punto de
control 05 con un trozo cambiado, añadida al final de su subagentes.py, donde sustituye a la buena),
se corre la comprobación del 5.4 y se exige que fallen exactamente los casos escritos para ese
error: ni otro en su lugar, ni ninguno si el error pasara sin verse.
"""
import ast
import tempfile

import pytest
from ayudas import cambiar, casos_que_nombran, evaluar_con_otra_version

from curso import rutas
from curso.comprobaciones import ejercicios

ejercicios.cargar_registro()

# --- Las versiones buenas son las del punto de control; cada error sale de cambiar un trozo --------

def fuente(nombre):
    """El texto de la función `nombre` de subagentes.py del punto de control 05."""
    texto = (rutas.puntos_de_control()[5] / "subagentes.py").read_text(encoding="utf-8")
    (nodo,) = [n for n in ast.parse(texto).body if isinstance(n, ast.FunctionDef) and n.name == nombre]
    return "\n" + ast.get_source_segment(texto, nodo) + "\n"


POR_QUE_NO = fuente("por_que_no")
VERIFICAR = fuente("verificar")

ABRIR = '''        texto = herramientas.contenido(proyecto, partes["ruta"])  # como leer: sin salir del proyecto
    except herramientas.ErrorDeHerramienta as e:
        return str(e)
'''
CUANTAS = '''    if numero > len(lineas):
        return f"{partes['ruta']} solo tiene {len(lineas)} líneas"
'''
SU_REFERENCIA = "        referencia = referencias[i] if i < len(referencias) else None\n"


VOTANDO = cambiar(VERIFICAR, ("        if motivo is None:",
                              "        if motivo is None or carga['hallazgos'].count(hallazgo) > 1:"))
CUALQUIER_REFERENCIA = cambiar(VERIFICAR, (
    "        motivo = por_que_no(hallazgo, referencia, proyecto)\n",
    "        motivo = por_que_no(hallazgo, referencia, proyecto)\n"
    "        if any(por_que_no(hallazgo, r, proyecto) is None for r in referencias):\n"
    "            motivo = None\n"))

# (el error contra el que avisa el texto, la implementación equivocada, un trozo del nombre de
# cada caso que tiene que pillarlo)
ERRORES = [
    ("dar por bueno un hallazgo sin cita",
     cambiar(POR_QUE_NO, ('        return "no cita entre « » el texto que lo respalda"', "        return None")),
     ["sin cita"]),
    ("dar por bueno un hallazgo sin referencia",
     cambiar(POR_QUE_NO, ('        return "no tiene referencia"', "        return None")), ["sin referencia"]),
    ("tomar una referencia sin línea como buena",
     cambiar(POR_QUE_NO, ('        return f"la referencia {referencia!r} no dice la línea (ruta:línea)"',
                          "        return None")),
     ["sin número de línea", "la línea 0"]),
    ("buscar la cita en todo el fichero y no en su línea",
     cambiar(POR_QUE_NO, ("        if cita not in linea:", "        if cita not in texto:")),
     ["no en otra del fichero"]),
    ("mirar solo la primera cita",
     cambiar(POR_QUE_NO, ("    for cita in citas:\n", "    for cita in citas[:1]:\n")), ["cuentan las dos"]),
    ("no mirar si el fichero tiene esa línea",
     cambiar(POR_QUE_NO, (CUANTAS, "")), ["que el fichero no tiene"]),
    ("aceptar la línea 0 (que sería la última)",
     cambiar(POR_QUE_NO, ("    partes = REFERENCIA.fullmatch(referencia)\n",
                          "    partes = re.fullmatch(r'(?P<ruta>[^:]+):(?P<linea>\\d+)', referencia)\n")),
     ["la línea 0"]),
    ("abrir el fichero por su cuenta, saliendo del proyecto",
     "import pathlib\n" + cambiar(POR_QUE_NO, (ABRIR, '''        texto = (pathlib.Path(proyecto) / partes["ruta"]).read_text(encoding="utf-8")
    except OSError as e:
        return str(e)
''')),
     ["sale del proyecto"]),
    ("no atrapar el error de un fichero que no se puede leer",
     cambiar(POR_QUE_NO, (ABRIR, '''        texto = herramientas.contenido(proyecto, partes["ruta"])
    finally:
        pass
''')), ["sale del proyecto", "no está en el proyecto"]),
    ("verificar cada hallazgo con la primera referencia",
     cambiar(VERIFICAR, (SU_REFERENCIA, "        referencia = referencias[0]\n")),
     ["su mismo orden", "cambiadas de orden", "sin su referencia", "los que sobran"]),
    ("verificar con la referencia que encaje, sea la que sea",
     CUALQUIER_REFERENCIA, ["cambiadas de orden", "los que sobran"]),
    ("verificar sin mirar cuántas referencias hay",
     cambiar(VERIFICAR, (SU_REFERENCIA, "        referencia = referencias[i]\n")), ["sin su referencia", "los que sobran"]),
    ("descartar sin decir por qué",
     cambiar(VERIFICAR, ("dict(fila, motivo=motivo)", "fila")), ["sin su referencia"]),
    ("votar: lo que se repite se da por bueno", VOTANDO, ["sin votar", "los que sobran"]),
]


@pytest.fixture(autouse=True)
def temporales_aqui(tmp_path, monkeypatch):
    """Lo que las comprobaciones creen en la carpeta temporal va a la de este test."""
    carpeta = tmp_path / "temporales"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))


def test_sin_cambios_las_dos_funciones_pasan_su_comprobacion(tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version("5.4", "subagentes", POR_QUE_NO + VERIFICAR, tmp_path)
    assert not fallan and not pendientes, informe


@pytest.mark.parametrize("error, funcion, trozos", ERRORES, ids=[e[0] for e in ERRORES])
def test_cada_error_lo_pilla_el_caso_escrito_para_el(error, funcion, trozos, tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version("5.4", "subagentes", funcion, tmp_path, diferencial=False)
    assert not pendientes, informe
    assert fallan == casos_que_nombran("5.4", trozos), f"{error}:\n{informe}"
