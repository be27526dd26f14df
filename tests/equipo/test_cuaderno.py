"""La regla de los módulos del cuaderno (curso/alumno/cuaderno.py): tras una celda %%modulo, cualquier
import da el fichero que manda ahora, y lo que lo importó antes también.

Aquí, en el mismo proceso y con un espacio de juguete; los caminos del alumno
(tests/caminos/) lo prueban con núcleos de Jupyter de verdad y las lecciones enteras.
"""
import importlib
import os
import sys
from types import SimpleNamespace

import IPython
import pytest

from curso import rutas
from curso.alumno import cuaderno

ERRORES = "class ErrorDelModelo(Exception):\n    pass\n\n\nVERSION = {}\n"
QUIEN_LO_USA = ("from errores_de_prueba import ErrorDelModelo, VERSION\n\n\n"
                "def es_suyo(error):\n    return isinstance(error, ErrorDelModelo)\n")


@pytest.fixture
def espacio(tmp_path, monkeypatch):
    espacio = tmp_path / "espacio"
    espacio.mkdir()
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    monkeypatch.setattr(cuaderno.REFERENCIAS, "rutas", {})
    nombres = {}
    monkeypatch.setattr(IPython, "get_ipython", lambda: SimpleNamespace(user_ns=nombres))
    (espacio / "errores_de_prueba.py").write_text(ERRORES.format(1), encoding="utf-8")
    (espacio / "usa_errores.py").write_text(QUIEN_LO_USA, encoding="utf-8")
    yield espacio, nombres
    for nombre in ("errores_de_prueba", "usa_errores"):
        sys.modules.pop(nombre, None)
    if str(espacio) in sys.path:
        sys.path.remove(str(espacio))


def _reescribir_lo_que_otro_importo():
    """Importa `usa_errores` (que importa `errores_de_prueba`), reescribe `errores_de_prueba` con
    una celda y devuelve (la versión que ve `usa_errores`, si reconoce el error del nuevo)."""
    cuaderno._instalar_buscador()
    importlib.import_module("usa_errores")
    cuaderno.modulo("errores_de_prueba", ERRORES.format(2))
    usa, errores = importlib.import_module("usa_errores"), importlib.import_module("errores_de_prueba")
    return usa.VERSION, usa.es_suyo(errores.ErrorDelModelo())


def test_un_modulo_que_importo_al_viejo_usa_el_nuevo_tras_la_celda(espacio, capsys):
    assert _reescribir_lo_que_otro_importo() == (2, True)


def test_olvidar_solo_el_modulo_escrito_deja_dos_versiones_a_la_vez(espacio, capsys, monkeypatch):
    """La variante ingenua (olvidar solo el que la celda escribe, como un importlib.reload): el
    que lo importó se queda con la clase vieja, y un `except ErrorDelModelo` deja pasar el nuevo."""
    monkeypatch.setattr(cuaderno, "_olvidar", lambda: sys.modules.pop("errores_de_prueba", None))
    assert _reescribir_lo_que_otro_importo() == (1, False)


def _reescribir_en_el_mismo_segundo(espacio, monkeypatch):
    """Importa `comparar` (con bytecode: escribe su .pyc), lo reescribe con una celda con otro texto
    del mismo tamaño y con la misma hora que tenía, como en el mismo segundo, y devuelve lo que da
    el import siguiente."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # como en el núcleo de un alumno
    fichero = espacio / "comparar.py"
    fichero.write_text("MENOR = 1 < 2\n", encoding="utf-8")
    cuaderno._instalar_buscador()
    assert importlib.import_module("comparar").MENOR is True
    antes = fichero.stat()
    escribir = cuaderno.escribir_modulo

    def en_el_mismo_segundo(nombre, fuente):
        hecho = escribir(nombre, fuente)
        os.utime(fichero, ns=(antes.st_atime_ns, antes.st_mtime_ns))
        return hecho
    monkeypatch.setattr(cuaderno, "escribir_modulo", en_el_mismo_segundo)
    try:
        cuaderno.modulo("comparar", "MENOR = 1 > 2\n")
        assert fichero.stat().st_size == antes.st_size
        return importlib.import_module("comparar").MENOR
    finally:
        sys.modules.pop("comparar", None)


def test_una_celda_que_reescribe_un_modulo_en_el_mismo_segundo_y_tamano_da_el_nuevo(espacio, monkeypatch, capsys):
    assert _reescribir_en_el_mismo_segundo(espacio[0], monkeypatch) is False


def test_sin_borrar_el_pyc_el_import_da_la_version_de_antes(espacio, monkeypatch, capsys):
    """La variante ingenua: escribir el fichero y nada más. Python toma el .pyc del viejo por bueno."""
    monkeypatch.setattr(cuaderno, "_olvidar_el_bytecode", lambda ruta: None)
    assert _reescribir_en_el_mismo_segundo(espacio[0], monkeypatch) is True


def test_tras_la_celda_sobre_una_referencia_el_import_da_el_fichero_nuevo(espacio, tmp_path, capsys):
    """Un ejercicio pendiente hacía servir la referencia; la celda escrita de nuevo manda desde ya,
    también para el módulo que importó la referencia (el fallo de antes: la redirección se quitaba
    antes de olvidar, y la referencia se quedaba en sys.modules)."""
    referencia = tmp_path / "09_referencia" / "errores_de_prueba.py"
    referencia.parent.mkdir()
    referencia.write_text(ERRORES.format("'referencia'"), encoding="utf-8")
    cuaderno._instalar_buscador()
    cuaderno.REFERENCIAS.rutas["errores_de_prueba"] = str(referencia)
    assert importlib.import_module("usa_errores").VERSION == "referencia"
    cuaderno.modulo("errores_de_prueba", ERRORES.format(3))
    assert importlib.import_module("errores_de_prueba").VERSION == 3
    assert importlib.import_module("usa_errores").VERSION == 3


def test_los_nombres_que_el_cuaderno_tomo_del_viejo_pasan_al_nuevo(espacio, capsys):
    """`from reintentos import ModeloConReintentos` en una celda de antes: tras reescribir el
    módulo, ese nombre del cuaderno es el nuevo; lo que no viene de un módulo no se toca."""
    _, nombres = espacio
    cuaderno._instalar_buscador()
    usa = importlib.import_module("usa_errores")
    nombres.update(es_suyo=usa.es_suyo, usa_errores=usa, propio=42)
    cuaderno.modulo("errores_de_prueba", ERRORES.format(4))
    nuevo = importlib.import_module("usa_errores")
    assert nombres["usa_errores"] is nuevo and nombres["es_suyo"] is nuevo.es_suyo
    assert nombres["propio"] == 42


@pytest.fixture
def espacio_hecho_hasta(tmp_path, monkeypatch):
    """espacio_hecho_hasta(N): un espacio con todo hecho hasta la lección N (su punto de control),
    en un cuaderno de mentira. Al salir, nada de él ni de las referencias queda en sys.modules."""
    import shutil
    espacio = tmp_path / "espacio"
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    monkeypatch.setattr(cuaderno.REFERENCIAS, "rutas", {})
    monkeypatch.setattr(IPython, "get_ipython", lambda: SimpleNamespace(user_ns={}))
    monkeypatch.setattr(cuaderno, "_leccion", None)  # preparar los cambia; al salir, como estaban
    monkeypatch.setattr(cuaderno, "_delante", {})

    def copiar(numero):
        shutil.copytree(rutas.puntos_de_control()[numero], espacio,
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        return espacio
    try:
        yield copiar
    finally:
        cuaderno._de_repaso.clear()
        for nombre, m in list(sys.modules.items()):
            fichero = getattr(m, "__file__", None) or ""
            if fichero.startswith((str(espacio), str(rutas.PUNTOS))):
                del sys.modules[nombre]
        if str(espacio) in sys.path:
            sys.path.remove(str(espacio))


def test_al_volver_a_una_leccion_sus_celdas_no_escriben_encima_de_lo_posterior(espacio_hecho_hasta, capsys):
    """Con la 03 hecha, la celda %%modulo bucle de la 01 desharía el paso de compactación: no se
    escribe, lo dice, y la lección sigue con el bucle.py del punto de control 01."""
    espacio = espacio_hecho_hasta(3)
    antes = (espacio / "bucle.py").read_bytes()
    cuaderno.preparar(1)
    assert "Tu espacio va por delante de esta lección" in capsys.readouterr().out
    cuaderno.modulo("bucle", "def bucle():\n    return 'de la lección 01'\n")
    salida = capsys.readouterr().out
    assert (espacio / "bucle.py").read_bytes() == antes, salida
    assert "No escribo bucle.py" in salida and "restaurar 0" in salida
    assert importlib.import_module("bucle").__file__ == str(rutas.puntos_de_control()[1] / "bucle.py")


# --- Los nombres del curso no los tapa ningún módulo (issue 25, hallazgo 1) -------------------------

# Importa cada módulo de cada punto de control (con su carpeta delante en sys.path, como en su
# lección) y lo publica con `_publicar` en un cuaderno de mentira que ya tiene los nombres del curso.
# Escribe, en JSON, los nombres públicos de los módulos que chocan con los del curso y los que, tras
# publicar, ya no son los del curso. `ingenua` publica como antes: todos los nombres públicos.
PUBLICAR_CADA_MODULO = r"""
import io, json, sys, contextlib
from types import SimpleNamespace
import IPython
from curso import rutas
from curso.alumno import cuaderno

ingenua = sys.argv[1] == "ingenua"
if ingenua:
    cuaderno.AYUDANTES = ()
del_curso = {n: getattr(cuaderno, n) for n in ("comprobar", "pista", "solucion", "preparar", "comparar",
                                                "comprobar_espacio")}
nombres = dict(del_curso)
IPython.get_ipython = lambda: SimpleNamespace(user_ns=nombres)
chocan, tapados, modulos = [], [], 0
for numero, carpeta in sorted(rutas.puntos_de_control().items()):
    for nombre in [m for m in list(sys.modules) if getattr(sys.modules[m], "__file__", "") and
                   str(rutas.PUNTOS) in (sys.modules[m].__file__ or "")]:
        del sys.modules[nombre]
    sys.path.insert(0, str(carpeta))
    for fichero in sorted(carpeta.glob("*.py")):
        if fichero.stem == "conftest":
            continue
        modulo = __import__(fichero.stem)
        modulos += 1
        with contextlib.redirect_stdout(io.StringIO()):
            publicados = cuaderno._publicar(modulo)
        chocan += [f"{numero:02d}/{fichero.stem}.{n}" for n in publicados if n in del_curso]
        tapados += [f"{numero:02d}/{fichero.stem}.{n}" for n, v in del_curso.items() if nombres[n] is not v]
        nombres.update(del_curso)  # el siguiente módulo, otra vez sobre los del curso
    sys.path.remove(str(carpeta))
print(json.dumps({"modulos": modulos, "chocan": chocan, "tapados": tapados}))
"""


def _publicar_cada_modulo(variante):
    import json
    import subprocess
    hecho = subprocess.run([sys.executable, "-c", PUBLICAR_CADA_MODULO, variante], cwd=rutas.RAIZ,
                           capture_output=True, text=True, timeout=300)
    assert hecho.returncode == 0, hecho.stderr
    return json.loads(hecho.stdout.strip().splitlines()[-1])


def test_ningun_modulo_de_ninguna_leccion_tapa_los_nombres_del_curso():
    """Todos los módulos de todos los puntos de control: los que definen un nombre del curso
    (reanudar.comprobar, todo_junto.preparar) no lo dejan en el cuaderno."""
    visto = _publicar_cada_modulo("la_del_curso")
    assert visto["modulos"] > 40 and visto["chocan"], visto  # hay choques que evitar, y se miran todos
    assert visto["tapados"] == [], visto


def test_publicar_todos_los_nombres_tapa_comprobar_con_el_de_reanudar():
    """La variante ingenua (publicar todo nombre público): cada choque tapa el nombre del curso."""
    visto = _publicar_cada_modulo("ingenua")
    assert visto["tapados"] == visto["chocan"] and "06/reanudar.comprobar" in visto["tapados"], visto


def test_el_choque_se_dice_una_vez(espacio, capsys, monkeypatch):
    """Una celda %%modulo que define `comprobar`: el cuaderno sigue con el del curso, y lo dice la
    primera vez que se escribe, no cada vez."""
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_choques_avisados", set())
    nombres["comprobar"] = cuaderno.comprobar
    for vez in (1, 2):
        cuaderno.modulo("errores_de_prueba", ERRORES.format(vez) + "\n\ndef comprobar(ruta):\n    return ruta\n")
    salida = capsys.readouterr().out
    assert nombres["comprobar"] is cuaderno.comprobar
    assert salida.count("errores_de_prueba.comprobar no se deja en el cuaderno") == 1, salida
    assert importlib.import_module("errores_de_prueba").comprobar("x") == "x"


# --- La referencia de un módulo que importa otro nuevo de la lección (issue 25, hallazgo 7) ---------

@pytest.fixture
def espacio_sin_hijos(tmp_path, monkeypatch):
    """El espacio de quien hizo la 05 saltándose la celda %%modulo hijos: subagentes.py no importa."""
    import shutil
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[5], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (espacio / "hijos.py").unlink()
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    monkeypatch.setattr(cuaderno.REFERENCIAS, "rutas", {})
    monkeypatch.setattr(IPython, "get_ipython", lambda: SimpleNamespace(user_ns={}))
    monkeypatch.setattr(cuaderno, "_leccion", 5)
    yield espacio
    for nombre, m in list(sys.modules.items()):
        fichero = getattr(m, "__file__", None) or ""
        if fichero.startswith((str(espacio), str(rutas.PUNTOS))):
            del sys.modules[nombre]
    if str(espacio) in sys.path:
        sys.path.remove(str(espacio))


def test_sin_la_celda_de_hijos_comprobar_5_4_sigue_con_las_referencias_y_lo_dice(espacio_sin_hijos, capsys):
    cuaderno.comprobar("5.4")
    salida = capsys.readouterr().out
    assert "hijos.py no está en tu espacio" in salida and "%%modulo hijos" in salida, salida
    subagentes = importlib.import_module("subagentes")
    assert subagentes.__file__ == str(rutas.puntos_de_control()[5] / "subagentes.py")
    assert not (espacio_sin_hijos / "hijos.py").exists()  # su espacio no se toca


def test_importar_la_referencia_sin_mas_lanza_por_hijos(espacio_sin_hijos, capsys, monkeypatch):
    """La variante ingenua (importar la referencia tal cual): la traza del hallazgo 7."""
    monkeypatch.setattr(cuaderno, "_importar_la_referencia", lambda m, carpeta, leccion: importlib.import_module(m))
    with pytest.raises(ModuleNotFoundError, match="hijos"):
        cuaderno.comprobar("5.4")


# --- Una celda que necesita otra lo dice (issue 25, §2) ---------------------------------------------

def _lanzado(codigo, globales):
    try:
        exec(codigo, globales)
    except Exception as exc:  # noqa: BLE001 - es lo que se quiere ver
        return exc
    raise AssertionError(f"{codigo!r} no lanzó")


def test_un_modulo_de_una_leccion_que_no_se_escribio_dice_que_celda_lo_escribe(espacio, monkeypatch):
    _, nombres = espacio
    error = _lanzado("import hijos", nombres)
    frase = cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__)
    assert "hijos.py no está en tu espacio" in frase and "«%%modulo hijos» de la lección 05" in frase, frase


def test_un_nombre_de_otra_celda_de_la_leccion_dice_cual_lo_define(espacio, monkeypatch):
    """`bd` sin la celda que lo define (lección 04): la frase cita el principio de esa celda."""
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 4)
    error = _lanzado("crear_ejecucion(bd, 'e')", nombres)
    frase = cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__)
    assert frase is not None and "«crear_ejecucion» no está definido" in frase, frase
    assert "%%modulo historial" in frase, frase


def test_un_name_error_de_dentro_de_un_modulo_se_queda_con_su_traza(espacio):
    """La otra cara: un NameError que lanza el código de un módulo es un error de ese módulo, no
    una celda que falta; explicarlo como «ejecuta las de arriba» escondería dónde está."""
    _, nombres = espacio
    dentro = {}
    exec("def roto():\n    return bd\n", dentro)
    nombres["roto"] = dentro["roto"]
    error = _lanzado("roto()", nombres)
    assert cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__) is None


def test_un_nombre_que_otra_celda_define_dentro_de_un_if_tambien_se_encuentra(espacio, monkeypatch):
    """Lo que encontró el camino de la semilla 1 (después de los primeros arreglos): la 01 define
    `URL` dentro de un `if`; saltándose esa celda, c35b daba la traza de siempre."""
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)
    error = _lanzado("URL + '/v1'", nombres)
    frase = cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__)
    assert frase is not None and "«URL» no está definido" in frase, frase


def _espacio_de_la_03_con_bucle_de(espacio, monkeypatch, punto):
    """Lección 03 en curso, con los módulos del punto de control 03 salvo bucle.py, que es el de `punto`."""
    carpeta, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 3)
    puntos = rutas.puntos_de_control()
    for f in rutas.LECCIONES[3]["ficheros"]:
        (carpeta / f).write_bytes((puntos[3] / f).read_bytes())
    (carpeta / "bucle.py").write_bytes((puntos[punto] / "bucle.py").read_bytes())
    error = _lanzado("def bucle(M, compactar=None):\n    pass\nbucle([], 1, 2, 3)", nombres)
    return cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__)


def test_un_type_error_con_el_modulo_de_la_leccion_anterior_dice_que_celda_lo_reescribe(espacio, monkeypatch):
    """Hallazgo de la semilla 2 (lección 03, celdas c16 y c17): sin ejecutar «%%modulo bucle», la
    celda llama a bucle() como lo deja esa celda y salta un TypeError; la frase nombra la celda."""
    frase = _espacio_de_la_03_con_bucle_de(espacio, monkeypatch, 2)
    assert frase is not None and "bucle.py de tu espacio sigue como en el punto de control 02" in frase, frase
    assert "«%%modulo bucle»" in frase and "compactar.py" not in frase, frase


def test_un_type_error_con_los_modulos_al_dia_se_queda_con_su_traza(espacio, monkeypatch):
    """La otra cara, la variante ingenua que explicaría cualquier TypeError como una celda saltada:
    con bucle.py ya como en el punto 03, el TypeError es un error de la celda, y su traza lo dice."""
    assert _espacio_de_la_03_con_bucle_de(espacio, monkeypatch, 3) is None


def test_un_type_error_con_un_modulo_editado_por_ti_se_queda_con_su_traza(espacio, monkeypatch):
    """Un bucle.py que no es ni el de antes ni el de ahora es tuyo: la frase no puede saber qué pasa."""
    carpeta, _ = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 3)
    puntos = rutas.puntos_de_control()
    (carpeta / "bucle.py").write_text((puntos[2] / "bucle.py").read_text(encoding="utf-8") + "\n# mío\n",
                                      encoding="utf-8")
    _, nombres = espacio
    error = _lanzado("len(1)", nombres)
    assert cuaderno._que_celda_falta(SimpleNamespace(user_ns=nombres), error, error.__traceback__) is None


# --- La celda que de verdad define un nombre (issue 44, punto 1) -----------------------------------

def _celda_de(leccion, empieza):
    """El texto de la celda de código de `leccion` (en notebooks/) que empieza por `empieza`."""
    (celda,) = [c for c in _celdas_de(leccion) if c.startswith(empieza)]
    return celda


def _celdas_de(leccion):
    import json
    ruta = rutas.CUADERNOS / f"{rutas.LECCIONES[leccion]['cuaderno']}.ipynb"
    return ["".join(c["source"]) for c in json.loads(ruta.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


def _frase_de_la_celda(nombres, fuente):
    """Lo que dice el cuaderno cuando la celda `fuente`, ejecutándose, lanza su NameError (sin sus
    imports de módulos del espacio, que este espacio de juguete no tiene: el nombre que falta es otro)."""
    sin_imports = "\n".join(l for l in fuente.split("\n")
                            if not l.startswith(("from calentamiento", "from herramientas")))
    error = _lanzado(sin_imports, nombres)
    ip = SimpleNamespace(user_ns=nombres, history_manager=SimpleNamespace(input_hist_raw=["", fuente]))
    return cuaderno._que_celda_falta(ip, error, error.__traceback__)


def test_un_nombre_local_de_una_funcion_de_un_modulo_no_es_de_su_celda(espacio, monkeypatch):
    """Lección 01, la celda que cuenta lo que pasó en `atasco` sin la de `atasco`: `M` la define
    esa celda, no «%%modulo bucle», donde `M` es una variable de dentro de la función."""
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)
    frase = _frase_de_la_celda(nombres, _celda_de(1, "from collections import Counter"))
    assert frase is not None and "«M» no está definido" in frase, frase
    assert "%%modulo" not in frase and "copia_atascada" in frase, frase


def test_la_variante_ingenua_cuenta_lo_de_dentro_de_las_funciones_y_nombra_el_modulo(espacio, monkeypatch):
    """La variante ingenua, la de antes: cualquier nombre asignado en la celda, también dentro de
    una función, y la primera celda que lo tiene. Nombra «%%modulo bucle»: el test de arriba la pilla."""
    import ast
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)

    def todos(fuente):
        codigo = fuente.split("\n", 1)[1] if fuente.startswith("%%modulo") else fuente
        try:
            return {n.id: "" for n in ast.walk(ast.parse(codigo)) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        except SyntaxError:
            return {}
    monkeypatch.setattr(cuaderno, "_ligados", todos)
    monkeypatch.setattr(cuaderno, "_celda_en_curso", lambda ip: None)
    frase = _frase_de_la_celda(nombres, _celda_de(1, "from collections import Counter"))
    assert "%%modulo bucle" in frase, frase


def test_un_nombre_que_solo_define_una_celda_de_mas_abajo_no_se_atribuye(espacio, monkeypatch):
    """`copia_atascada` en la celda de `arregla` (la define la de `atasco`, más abajo): no hay celda
    de más arriba que lo defina, y decir que la hay mandaría a buscarla donde no está."""
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)
    fuente = _celda_de(1, "from agente import agente\nfrom api import ModeloAPI\nfrom correr import Traza\n"
                          "from curso.ensayo.recetario import usuario_guionizado\nfrom curso.rutas import RECETARIO\n\n"
                          "PEDIDO")
    ip = SimpleNamespace(user_ns=nombres, history_manager=SimpleNamespace(input_hist_raw=[fuente]))
    assert "copia_atascada" in cuaderno._ligados(_celda_de(1, "from agente import agente\nfrom api import ModeloAPI\n"
                                                              "from correr import Traza\nfrom curso.ensayo.recetario "
                                                              "import usuario_guionizado\nfrom curso.rutas import "
                                                              "RECETARIO\n\ntraza"))
    error = _lanzado("copia_atascada", nombres)
    assert cuaderno._que_celda_falta(ip, error, error.__traceback__) is None


# --- El servidor de ensayo del cuaderno, parado (issue 44, punto 2) --------------------------------

def _rechazada_por(servidor):
    """El error que da el ModeloAPI del punto de control 01 contra `servidor`, ya parado."""
    api = rutas.cargar_modulo(rutas.puntos_de_control()[1] / "api.py", "_api_de_prueba_44")
    try:
        api.ModeloAPI("guion:arregla", url=servidor.url)([("sistema", "Eres un agente."), ("usuario", "hola")])
    except api.ErrorDelModelo as error:
        return error
    raise AssertionError("contestó un servidor parado")


def test_el_servidor_del_cuaderno_parado_dice_que_celda_lo_vuelve_a_arrancar(espacio, monkeypatch):
    """Lección 01 tras la celda que para el servidor: la de `arregla` otra vez. El mensaje del
    harness propone «python -m curso servidor» (otro servidor, en el 8765; URL sigue en el viejo);
    el cuaderno dice lo que lo arregla: la celda que lo arranca, «import os»."""
    from curso.ensayo.servidor import arrancar_en_segundo_plano
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)
    servidor = arrancar_en_segundo_plano()
    servidor.parar()
    nombres.update(servidor=servidor, URL=servidor.url)
    error = _rechazada_por(servidor)
    assert "python -m curso servidor" in str(error)  # lo que decía, y no lo arregla
    actual = _celda_de(1, "from agente import agente\nfrom api import ModeloAPI\nfrom correr import Traza\n"
                          "from curso.ensayo.recetario import usuario_guionizado\nfrom curso.rutas import RECETARIO\n\n"
                          "PEDIDO")
    ip = SimpleNamespace(user_ns=nombres, history_manager=SimpleNamespace(input_hist_raw=[actual]))
    frase = cuaderno._servidor_parado(ip, error)
    assert frase is not None and servidor.url in frase, frase
    assert "vuelve a ejecutar la celda que lo arranca, la que empieza «import os»" in frase, frase


def test_una_conexion_rechazada_por_otro_servidor_no_es_la_del_cuaderno(espacio, monkeypatch):
    """La otra cara: el servidor parado no es ninguno de los del cuaderno (el de ANTHROPIC_BASE_URL,
    por ejemplo): el cuaderno no sabe qué lo arranca, y no dice nada."""
    from curso.ensayo.servidor import arrancar_en_segundo_plano
    _, nombres = espacio
    monkeypatch.setattr(cuaderno, "_leccion", 1)
    suyo, otro = arrancar_en_segundo_plano(), arrancar_en_segundo_plano()
    otro.parar()
    try:
        nombres.update(servidor=suyo)
        assert cuaderno._servidor_parado(SimpleNamespace(user_ns=nombres), _rechazada_por(otro)) is None
    finally:
        suyo.parar()


# --- Volver a una lección con todo hecho (issue 40, hallazgo 3) ------------------------------------

def _volver_a_la_03(espacio_hecho_hasta, capsys):
    """preparar(3) y comprobar("1.2") con la 07 hecha: (lo que dice preparar, lo que dice comprobar)."""
    espacio_hecho_hasta(7)
    cuaderno.preparar(3)
    primera = capsys.readouterr().out
    cuaderno.comprobar("1.2")
    return primera, capsys.readouterr().out


def test_al_volver_a_la_03_con_la_07_hecha_ningun_ejercicio_hecho_sale_pendiente(espacio_hecho_hasta, capsys):
    """Hallazgo 3: la 03 sirve el entorno.py del punto de control 02, y el 1.2 se comprobaba con tu
    permisos.py de la 05, que importa CATALOGO de él: «no se puede importar», y por eso «pendiente».
    Se comprueba con tus módulos de ahora; el cuaderno sigue con los del punto de control 02."""
    primera, comprobado = _volver_a_la_03(espacio_hecho_hasta, capsys)
    assert "Tu espacio va por delante de esta lección" in primera, primera
    assert "pendiente" not in primera, primera
    assert "✔ Hecho" in comprobado and "CATALOGO" not in comprobado, comprobado
    entorno = importlib.import_module("entorno")
    assert entorno.__file__ == str(rutas.puntos_de_control()[2] / "entorno.py")  # el repaso sigue


def test_comprobar_con_lo_que_sirve_el_repaso_da_pendiente_lo_hecho(espacio_hecho_hasta, capsys, monkeypatch):
    """La variante ingenua, la de antes: comprobar con lo que sirve el repaso (entorno.py de la 02)."""
    monkeypatch.setattr(cuaderno, "_evaluar_con_tus_modulos",
                        lambda id, objetivo=None, salvo=(): cuaderno.ejercicios.evaluar(id, objetivo))
    primera, comprobado = _volver_a_la_03(espacio_hecho_hasta, capsys)
    assert "El ejercicio 1.2 sigue pendiente" in primera, primera
    assert "cannot import name 'CATALOGO'" in comprobado, comprobado


# --- Una celda --cambia que sustituye la función de un ejercicio lo dice (issue 40, hallazgo 8) -----

def _celda_resuelta_que_empieza(leccion, empieza):
    import json
    ruta = rutas.SOLUCIONES / f"{rutas.LECCIONES[leccion]['cuaderno']}.ipynb"
    (celda,) = ["".join(c["source"]) for c in json.loads(ruta.read_text(encoding="utf-8"))["cells"]
                if c["cell_type"] == "code" and "".join(c["source"]).startswith(empieza)]
    return celda


def _la_celda_de_bucle_de_la_03(espacio_hecho_hasta, capsys, bucle_tuyo):
    """La 03 con la 02 hecha y `bucle_tuyo` (o el del curso) en bucle.py: lo que dice la celda
    «%%modulo bucle --cambia» y el espacio."""
    from variantes import SEGUNDAS, aplicar
    espacio = espacio_hecho_hasta(2)
    if bucle_tuyo:
        bucle = espacio / "bucle.py"
        bucle.write_text(aplicar(SEGUNDAS["1.3"], bucle.read_text(encoding="utf-8")), encoding="utf-8")
    cuaderno.preparar(3)
    capsys.readouterr()
    linea, celda = _celda_resuelta_que_empieza(3, "%%modulo bucle --cambia").split("\n", 1)
    cuaderno.modulo(linea.removeprefix("%%modulo "), celda)
    return capsys.readouterr().out, espacio


def test_la_celda_de_bucle_de_la_03_dice_que_sustituye_tu_bucle_del_1_3(espacio_hecho_hasta, capsys):
    """Hallazgo 8: tu `bucle` del 1.3 (un `while turnos < tope`) se sustituye entero por el de la
    lección, y «tu versión anterior, con el cambio de esta celda» hacía creer que tu código seguía
    ahí. La celda lo dice, y dice dónde queda tu fichero de antes, que tiene tu bucle."""
    salida, espacio = _la_celda_de_bucle_de_la_03(espacio_hecho_hasta, capsys, bucle_tuyo=True)
    assert "sustituye entera tu bucle() (la de tu ejercicio 1.3)" in salida, salida
    (copia,) = (espacio / cuaderno.CARPETA_DE_COPIAS).glob("bucle.py.*")
    assert f"{cuaderno.CARPETA_DE_COPIAS}/{copia.name}" in salida, salida
    assert "while turnos < tope" in copia.read_text(encoding="utf-8")
    assert "while turnos < tope" not in (espacio / "bucle.py").read_text(encoding="utf-8")


def test_con_el_bucle_del_curso_la_celda_no_avisa_de_nada(espacio_hecho_hasta, capsys):
    """La otra cara: con el bucle.py del curso no hay nada tuyo que perder, y la celda no avisa (un
    aviso siempre, la variante ingenua, acostumbraría a no leerlo)."""
    salida, _ = _la_celda_de_bucle_de_la_03(espacio_hecho_hasta, capsys, bucle_tuyo=False)
    assert "cambia: bucle()" in salida and "sustituye" not in salida, salida
