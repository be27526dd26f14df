"""Punto de control 01: `atender` convierte cualquier llamada del modelo en su observación.

Nada de lo que pida el modelo tumba el bucle: cada caso malo vuelve como un `tool_result` con
el mismo `tool_use_id`, `is_error: true` y un mensaje en castellano que dice qué hacer. Y lo
que el usuario niega no se hace (el de los cuadernos, `usuario_guionizado`, es del guion del
recetario: sus tests están en tests/test_recetario.py).
"""
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import entorno
import herramientas
import permisos
from curso.ensayo.recetario import usuario_guionizado
from entorno import llamada
from permisos import atender

# Todas las herramientas que `atender` sabe atender: desde la lección 05, también buscar.
CATALOGO = getattr(entorno, "CATALOGO", entorno.HERRAMIENTAS)

COMPRA = "def compra(menu):\n    return sorted(menu)\n"


def si_a_todo(nombre, entrada):
    return True


@pytest.fixture
def copia(tmp_path):
    (tmp_path / "compra.py").write_text(COMPRA, encoding="utf-8")
    (tmp_path / "bucle").symlink_to(tmp_path / "bucle")  # un enlace que apunta a sí mismo
    return tmp_path


def es_observacion_de_error(observacion, id):
    """¿Es un tool_result de error para `id`, con un mensaje de texto?"""
    return (observacion.get("type") == "tool_result" and observacion.get("tool_use_id") == id
            and observacion.get("is_error") is True and isinstance(observacion.get("content"), str)
            and observacion["content"].strip() != "")


# Cada caso: la llamada y lo que el mensaje debe decir para que el modelo se corrija.
CASOS_MALOS = {
    "faltan_argumentos": ({"id": "t1", "name": "editar", "input": {"ruta": "compra.py"}},
                          ["faltan", "antiguo", "nuevo", "No se ha hecho nada"]),
    "sobran_argumentos": ({"id": "t2", "name": "leer", "input": {"ruta": "compra.py", "lineas": "1-3"}},
                          ["sobran", "lineas", "No se ha hecho nada"]),
    "argumento_que_no_es_texto": ({"id": "t3", "name": "leer", "input": {"ruta": 3}},
                                  ["tienen que ser texto", "ruta", "No se ha hecho nada"]),
    "desde_que_no_es_un_entero": ({"id": "t3b", "name": "leer", "input": {"ruta": "compra.py", "desde": "2"}},
                                  ["tienen que ser números enteros", "desde", "No se ha hecho nada"]),
    "desde_que_es_un_booleano": ({"id": "t3c", "name": "leer", "input": {"ruta": "compra.py", "desde": True}},
                                 ["tienen que ser números enteros", "desde"]),
    "desde_cero": ({"id": "t3d", "name": "leer", "input": {"ruta": "compra.py", "desde": 0}},
                   ["la primera es la 1"]),
    "herramienta_que_no_existe": ({"id": "t4", "name": "borrar", "input": {"ruta": "compra.py"}},
                                  ["no hay ninguna herramienta", "borrar", "leer", "editar", "ejecutar"]),
    "nombre_que_no_es_texto": ({"id": "t5", "name": ["leer"], "input": {"ruta": "compra.py"}},
                               ["no hay ninguna herramienta", "leer, editar, ejecutar"]),
    "entrada_que_no_es_objeto": ({"id": "t6", "name": "leer", "input": "compra.py"},
                                 ["tiene que ser un objeto", "No se ha hecho nada"]),
    "sin_entrada": ({"id": "t7", "name": "leer"}, ["tiene que ser un objeto"]),
    "error_de_la_herramienta": ({"id": "t8", "name": "leer", "input": {"ruta": "recetas.txt"}},
                                ["no existe el fichero recetas.txt", "compra.py"]),
    "ruta_con_byte_nulo": ({"id": "t9", "name": "leer", "input": {"ruta": "compra\x00.py"}},
                           ["leer ha fallado", "Revisa los argumentos"]),
    "ruta_larguisima": ({"id": "t10", "name": "leer", "input": {"ruta": "a" * 5000}},
                        ["leer ha fallado", "Revisa los argumentos"]),
    "leer_un_bucle_de_enlaces": ({"id": "t11", "name": "leer", "input": {"ruta": "bucle"}},
                                 ["bucle de enlaces"]),
    "editar_un_bucle_de_enlaces": ({"id": "t12", "name": "editar",
                                    "input": {"ruta": "bucle/compra.py", "antiguo": "a", "nuevo": "b"}},
                                   ["bucle de enlaces"]),
}


@pytest.mark.parametrize("caso", sorted(CASOS_MALOS))
def test_cada_llamada_mala_vuelve_como_observacion_de_error(copia, caso):
    pedida, debe_decir = CASOS_MALOS[caso]
    observacion = atender(pedida, copia, si_a_todo)
    assert es_observacion_de_error(observacion, pedida["id"])
    for trozo in debe_decir:
        assert trozo in observacion["content"]
    assert str(copia) not in observacion["content"]  # la ruta de la copia no es cosa del modelo
    assert (copia / "compra.py").read_text(encoding="utf-8") == COMPRA


@pytest.mark.contrato("1.2")
def test_un_permiso_denegado_vuelve_como_error_y_no_cambia_nada(copia):
    pedida = llamada("t1", "editar", ruta="compra.py", antiguo="sorted", nuevo="reversed")
    observacion = atender(pedida, copia, lambda nombre, entrada: False)
    assert es_observacion_de_error(observacion, "t1")
    assert "permiso" in observacion["content"] and "No se ha hecho nada" in observacion["content"]
    assert (copia / "compra.py").read_text(encoding="utf-8") == COMPRA


@pytest.mark.contrato("1.2")
def test_sin_usuario_no_se_permite_nada_que_cambie_cosas(copia):
    assert es_observacion_de_error(atender(llamada("t1", "ejecutar", comando="touch hecho"), copia), "t1")
    assert not (copia / "hecho").exists()


@pytest.mark.contrato("1.2")
def test_leer_no_pide_permiso(copia):
    preguntas = []
    observacion = atender(llamada("t1", "leer", ruta="compra.py"), copia,
                          lambda nombre, entrada: preguntas.append(nombre) or False)
    assert observacion == {"type": "tool_result", "tool_use_id": "t1", "content": COMPRA}
    assert preguntas == []


@pytest.mark.contrato("1.2")
def test_una_llamada_buena_con_permiso_se_hace(copia):
    observacion = atender(llamada("t1", "editar", ruta="compra.py", antiguo="sorted", nuevo="reversed"),
                          copia, si_a_todo)
    assert observacion["tool_use_id"] == "t1" and not observacion.get("is_error")
    assert (copia / "compra.py").read_text(encoding="utf-8") == COMPRA.replace("sorted", "reversed")


def test_un_atender_ingenuo_se_cae_con_argumentos_que_faltan(copia):
    """La variante ingenua (llamar a la herramienta sin mirar nada) lanza TypeError con una
    llamada a la que le faltan argumentos: el test de arriba la detectaría."""
    def atender_ingenuo(pedida, entorno, usuario=None):
        contenido = getattr(herramientas, pedida["name"])(entorno, **pedida["input"])
        return {"type": "tool_result", "tool_use_id": pedida["id"], "content": contenido}
    pedida, _ = CASOS_MALOS["faltan_argumentos"]
    with pytest.raises(TypeError):
        atender_ingenuo(pedida, copia, si_a_todo)


# --- Con hypothesis: llamadas al azar ----------------------------------------------------------

# Cualquier carácter, también el byte nulo y medio par sustituto (json.loads los produce).
CUALQUIER_TEXTO = st.text(st.characters(exclude_categories=()), max_size=30)
VALORES_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | CUALQUIER_TEXTO,
    lambda hijos: st.lists(hijos, max_size=3) | st.dictionaries(CUALQUIER_TEXTO, hijos, max_size=3),
    max_leaves=8)
ARGUMENTOS = st.sampled_from(["ruta", "antiguo", "nuevo", "comando", "patron"]) | CUALQUIER_TEXTO
# Rutas que no llevan a ningún fichero de la copia ("" y "." son la copia entera: buscar las admite).
RUTAS_MALAS = ["../x", "/etc/passwd", "a/../../x", "no_existe.py", "bucle", "bucle/x", "compra.py/x",
               "a" * 5000, "compra\x00.py"]
RUTAS = st.sampled_from(["compra.py", "notas.txt", "", "."] + RUTAS_MALAS) | CUALQUIER_TEXTO
# Patrones que `re` no puede compilar, por la sintaxis o por el tamaño.
PATRONES_MALOS = ["(", "[a-", "a{4294967296}", "x{100000000000000000000}", "(" * 3000 + ")" * 3000]
ENTRADAS = (
    st.dictionaries(ARGUMENTOS, VALORES_JSON, max_size=4)
    | st.fixed_dictionaries({"ruta": RUTAS}, optional={"antiguo": CUALQUIER_TEXTO, "nuevo": CUALQUIER_TEXTO})
    | st.fixed_dictionaries({"patron": st.sampled_from(PATRONES_MALOS) | CUALQUIER_TEXTO},
                            optional={"ruta": RUTAS})
    | VALORES_JSON
)
NOMBRES = st.sampled_from([h["name"] for h in CATALOGO]) | CUALQUIER_TEXTO | VALORES_JSON
LLAMADAS = st.builds(lambda id, nombre, entrada: {"type": "tool_use", "id": id, "name": nombre,
                                                  "input": entrada},
                     st.text(min_size=1, max_size=20), NOMBRES, ENTRADAS)


def solo_editar(nombre, entrada):
    """Deja editar (dentro de una copia temporal) pero no ejecutar: al azar no se ejecuta nada."""
    return nombre == "editar"


@pytest.fixture(scope="module")
def copia_del_modulo():
    carpeta = Path(tempfile.mkdtemp(prefix="permisos-"))
    (carpeta / "proyecto").mkdir()
    (carpeta / "proyecto" / "bucle").symlink_to(carpeta / "proyecto" / "bucle")
    (carpeta / "x").write_text("fuera\n", encoding="utf-8")
    yield carpeta / "proyecto"
    shutil.rmtree(carpeta)


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pedida=LLAMADAS)
def test_ninguna_llamada_al_azar_tumba_a_atender(copia_del_modulo, pedida):
    (copia_del_modulo / "compra.py").write_text(COMPRA, encoding="utf-8")
    (copia_del_modulo / "notas.txt").write_text("hola\n", encoding="utf-8")
    observacion = atender(pedida, copia_del_modulo, solo_editar)
    assert observacion["type"] == "tool_result"
    assert observacion["tool_use_id"] == pedida["id"]
    assert isinstance(observacion["content"], str)
    assert (copia_del_modulo.parent / "x").read_text(encoding="utf-8") == "fuera\n"


def llamada_mala(nombre, estropeo, valor):
    """Una llamada a la herramienta `nombre` con todos sus argumentos y uno de ellos estropeado:
    un valor que no es texto, una ruta que no lleva a un fichero de la copia, o un patrón que
    `re` no acepta."""
    esquema = next(h for h in CATALOGO if h["name"] == nombre)["input_schema"]
    entrada = {argumento: "compra.py" for argumento in esquema["required"]}
    if estropeo == "tipo":
        entrada[sorted(esquema["properties"])[0]] = valor
    elif estropeo == "ruta" and "ruta" in esquema["properties"]:
        entrada["ruta"] = valor
    elif estropeo == "patron" and "patron" in esquema["properties"]:
        entrada["patron"] = valor
    else:
        entrada["sobra"] = valor
    return {"type": "tool_use", "id": "t1", "name": nombre, "input": entrada}


LLAMADAS_MALAS = (
    st.builds(llamada_mala, st.sampled_from([h["name"] for h in CATALOGO]), st.just("tipo"),
              VALORES_JSON.filter(lambda v: not isinstance(v, str)))
    | st.builds(llamada_mala, st.sampled_from([h["name"] for h in CATALOGO]), st.just("ruta"),
                st.sampled_from(RUTAS_MALAS))
    | st.builds(llamada_mala, st.sampled_from([h["name"] for h in CATALOGO]), st.just("patron"),
                st.sampled_from(PATRONES_MALOS))
    | st.builds(lambda nombre, entrada: {"type": "tool_use", "id": "t1", "name": nombre, "input": entrada},
                (CUALQUIER_TEXTO | VALORES_JSON).filter(lambda n: n not in [h["name"] for h in CATALOGO]),
                ENTRADAS)
)


@settings(max_examples=200, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pedida=LLAMADAS_MALAS)
def test_toda_llamada_mala_a_cualquier_herramienta_vuelve_como_error(copia_del_modulo, pedida):
    """Con cualquier herramienta del catálogo, un argumento estropeado (de tipo, una ruta que sale,
    que no existe o que da vueltas, un patrón imposible) o un nombre que no existe: atender
    contesta con una observación de error, sin la ruta de la copia, y no lanza nada."""
    (copia_del_modulo / "compra.py").write_text(COMPRA, encoding="utf-8")
    observacion = atender(pedida, copia_del_modulo, si_a_todo)
    assert es_observacion_de_error(observacion, "t1"), observacion
    assert str(copia_del_modulo) not in observacion["content"]
    assert (copia_del_modulo / "compra.py").read_text(encoding="utf-8") == COMPRA
    assert (copia_del_modulo.parent / "x").read_text(encoding="utf-8") == "fuera\n"


# --- El usuario de los cuadernos ---------------------------------------------------------------

@pytest.mark.contrato("1.2")
def test_el_usuario_guionizado_decide_lo_que_atender_hace(tmp_path):
    """Con el usuario guionizado, editar recetas.txt vuelve como permiso denegado."""
    (tmp_path / "recetas.txt").write_text("Tortilla: huevos.\n", encoding="utf-8")
    observacion = atender(llamada("t1", "editar", ruta="recetas.txt", antiguo="huevos", nuevo="ajo"),
                          tmp_path, usuario_guionizado)
    assert es_observacion_de_error(observacion, "t1") and "permiso" in observacion["content"]
    assert (tmp_path / "recetas.txt").read_text(encoding="utf-8") == "Tortilla: huevos.\n"


@pytest.mark.contrato("1.2")
def test_permitido_solo_acepta_un_si_de_verdad():
    """Un usuario que contesta algo que no es True (p. ej. la cadena "no") no da permiso."""
    assert permisos.permitido("ejecutar", {"comando": "ls"}, lambda n, e: "no") is False
