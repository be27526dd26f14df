"""Para quien escribe o valida el curso: los dos niveles de `python -m curso probar` y la regla que dice qué test es profundo.

`python -m curso probar` (la orden del README) corre el nivel rápido: cada test que no es profundo,
los cuadernos resueltos con `--nbval` y los del alumno con `--nbval-lax`. `probar --todo` corre los
dos niveles; `probar --profundo`, solo el resto (lo que `--todo` corre y `probar` no): es lo que
`.ci/run` llama justo después de la orden del README. Todo test corre en CI en cada cambio; el
nivel rápido prueba cada clase de cosa una vez.

Un test es **profundo** por una regla, aquí, que aplica el conftest.py de la raíz (la marca
`profundo`, con su clase como argumento): ninguna lista a mano. Es profundo si es de una de estas
clases de cosas, que prueban lo mismo muchas veces, y no es su humo (lo que de ella corre también
el nivel rápido):

- **camino**: los caminos del alumno (tests/caminos/); humo: el que lleva la marca `humo`.
- **navegador**: JupyterLab y Chromium de verdad (tests/navegador/); humo: el marcado `humo`.
- **simulacro**: las caídas en muchos puntos (`SIMULACRO`, por el nombre del test: «cien caídas al
  azar», «una caída justo después de cada paso», «muere en cada llamada…»); humo: las caídas en un
  solo punto (`CAIDAS` sin `SIMULACRO`: «una caída entre editar y apuntar…»), que la regla no
  reconoce y corren en el nivel rápido como cualquier test.
- **clase calificada**: los que piden una clase calificada de verdad (la fixture `calificada` de
  test_culpa.py: seis alumnos, dos lecciones, con colgados); humo: los que piden
  `calificada_de_humo` (test_clase_de_humo.py: tres alumnos de la lección 04, uno por cada regla
  de la culpa).
- **por ejercicio**: una familia de tests parametrizada por ejercicio, con varias instancias de cada
  uno (los errores escritos de `variantes.py`, los mutantes de `medir mutantes`, las reescrituras
  de `medir metamorfosis`, las entradas generadas del diferencial...); humo: de cada ejercicio, la
  primera instancia que se recoge. El ejercicio de una instancia (`ejercicio_de`) es su parámetro
  `ejercicio`, el atributo `.ejercicio` de uno de sus parámetros (una `Variante`, un
  `Equivalente`) o su parámetro `id` si es un id de ejercicio («4.2»). Para que una familia nueva
  sea de esta clase basta con llamar `ejercicio` a su parámetro del ejercicio.
- **medido**: lo demás que la última `python -m curso medir probar` vio gastar más de
  `PROFUNDO_CPU_S` de CPU (él y los procesos que arrancó), o que pide una fixture compartida cuya
  preparación los gastó; la medida lo apunta en `PROFUNDOS`. Humo: de un fichero en el que todo
  sería profundo, el test más barato no se apunta, y así ningún fichero se queda sin nada en el
  nivel rápido. Un test nuevo y caro corre en el nivel rápido hasta la siguiente medida.

La marca `humo` gana siempre: un test con ella no es profundo. Las celdas de los cuadernos nunca lo
son (los dos pases van enteros en el nivel rápido).
"""
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas

MARCA = "profundo"
RAPIDO = f"not {MARCA}"      # la expresión -m del nivel rápido
PROFUNDO = MARCA             # y la del resto

# Los simulacros de caídas en muchos puntos, por su nombre (la regla ingenua «caidas.*cada» tomaría
# «sin caídas, cada respuesta…»); CAIDAS, por su nombre, cualquier test de caídas (su humo: las de un punto).
CAIDAS = re.compile(r"caida|muere")
SIMULACRO = re.compile(r"caidas_al_azar|(una_caida|muere)\w*_cada_")

FIXTURE_DE_CLASE = "calificada"                 # una clase calificada de verdad
FIXTURE_DE_CLASE_DE_HUMO = "calificada_de_humo"  # la pequeña, con una regla de la culpa por alumno

PARAMETRO_DEL_EJERCICIO = "ejercicio"

# Lo medido: más de PROFUNDO_CPU_S de CPU en la última `medir probar` (la suite entera, con las
# partes a la vez). Con 1 s, en la medida del 2026-12-07, el nivel rápido dejaba 62 tests de los
# que no son de ninguna clase, que gastaban 294 s de los 499 s de CPU de esos tests.
PROFUNDOS = rutas.RAIZ / "tests" / "datos" / "tests_profundos.json"
PROFUNDO_CPU_S = 1.0
VARIABLE_PROFUNDOS = "CURSO_PROFUNDOS"  # otra lista en vez de PROFUNDOS: para los tests de la regla


@dataclass(frozen=True)
class Prueba:
    """Lo que la regla mira de un test recogido."""
    nodeid: str
    funcion: str                                      # el nombre de la función, sin parámetros
    parametros: dict = field(default_factory=dict)    # {nombre: valor} de su parametrize
    fixtures: tuple = ()                              # todas las que pide, también las indirectas
    compartidas: tuple = ()                           # las de más alcance, «dónde::nombre»
    humo: bool = False                                # lleva la marca `humo`


def _en(carpeta):
    return lambda p: p.nodeid.startswith(carpeta)


def _marca_humo(p):
    return p.humo


ID_DE_EJERCICIO = re.compile(r"^[0-9]+b?\.[0-9]+$")


def ejercicio_de(p):
    """El ejercicio de una instancia de una familia parametrizada (ver arriba), o None."""
    if PARAMETRO_DEL_EJERCICIO in p.parametros:
        return str(p.parametros[PARAMETRO_DEL_EJERCICIO])
    for valor in p.parametros.values():
        if isinstance(getattr(valor, "ejercicio", None), str):
            return valor.ejercicio
    valor = p.parametros.get("id")
    return valor if isinstance(valor, str) and ID_DE_EJERCICIO.match(valor) else None


def _es_de_ejercicio(p):
    return ejercicio_de(p) is not None


PRIMERO_DEL_EJERCICIO = "el primero de cada ejercicio"  # el humo de «por ejercicio» (ver clases_profundas)

# (nombre, reconoce, su humo): de la primera que reconoce a un test, se mira si es su humo.
CLASES = [
    ("camino", _en("tests/caminos/"), _marca_humo),
    ("navegador", _en("tests/navegador/"), _marca_humo),
    ("simulacro", lambda p: bool(SIMULACRO.search(p.funcion)), lambda p: False),
    ("clase calificada", lambda p: bool({FIXTURE_DE_CLASE, FIXTURE_DE_CLASE_DE_HUMO} & set(p.fixtures)),
     lambda p: FIXTURE_DE_CLASE_DE_HUMO in p.fixtures and FIXTURE_DE_CLASE not in p.fixtures),
    ("por ejercicio", _es_de_ejercicio, PRIMERO_DEL_EJERCICIO),
]
MEDIDO = "medido"


def profundos_apuntados(ruta=None):
    """Lo apuntado como profundo en `ruta` (si no se da, la de CURSO_PROFUNDOS o PROFUNDOS): (ids de
    tests, fixtures compartidas); nada si no existe."""
    ruta = Path(ruta or os.environ.get(VARIABLE_PROFUNDOS) or PROFUNDOS)
    if not ruta.exists():
        return set(), set()
    datos = json.loads(ruta.read_text(encoding="utf-8"))
    return set(datos["tests"]), set(datos["fixtures"])


def clase_de(prueba):
    """(clase, es su humo) de la primera clase profunda que reconoce a `prueba`, o (None, False)."""
    for nombre, reconoce, humo in CLASES:
        if reconoce(prueba):
            return nombre, (None if humo == PRIMERO_DEL_EJERCICIO else humo(prueba))
    return None, False


def clases_profundas(pruebas, apuntados=None):
    """{nodeid: clase} de las pruebas profundas de `pruebas` (en el orden en que se recogen)."""
    tests, fixtures = profundos_apuntados() if apuntados is None else apuntados
    ejercicios_vistos = set()
    profundas = {}
    for p in pruebas:
        if p.humo:
            continue
        clase, humo = clase_de(p)
        if humo is None:  # por ejercicio: el primero que se recoge de cada ejercicio es su humo
            clave = (p.nodeid.split("[")[0], ejercicio_de(p))
            humo = clave not in ejercicios_vistos
            ejercicios_vistos.add(clave)
        if clase is None and (p.nodeid in tests or set(p.compartidas) & fixtures):
            clase = MEDIDO
        if clase is not None and not humo:
            profundas[p.nodeid] = clase
    return profundas


def fixtures_compartidas(item):
    """Las fixtures de más alcance que un test (de módulo, de sesión...) que pide `item`, cada una
    como «dónde se define::nombre»: la misma se prepara una vez para todos los que la piden."""
    definiciones = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}) or {}
    return sorted(f"{defs[-1].baseid}::{nombre}" for nombre, defs in definiciones.items()
                  if defs and defs[-1].scope != "function")


def prueba_de(item):
    """La `Prueba` de un item de pytest."""
    llamada = getattr(item, "callspec", None)
    return Prueba(nodeid=item.nodeid, funcion=getattr(item, "originalname", item.name),
                  parametros=dict(llamada.params) if llamada else {},
                  fixtures=tuple(getattr(item, "fixturenames", ())),
                  compartidas=tuple(fixtures_compartidas(item)),
                  humo=item.get_closest_marker("humo") is not None)


def apuntar_profundos(pruebas, ruta=None):
    """Escribe en `ruta` (PROFUNDOS) lo medido como profundo de una pasada entera. `pruebas`:
    {id: {"cpu", "cpu_preparacion", "nuevas", "compartidas"}}, lo que apunta `medir probar`.

    - Una fixture compartida es profunda si su preparación (`nuevas`) gastó más de PROFUNDO_CPU_S;
      lo es entonces cada test que la pide, aunque la pagara otro.
    - Un test es profundo si gastó más de PROFUNDO_CPU_S.
    - De un fichero en el que todo sería profundo, el test más barato no se apunta ni se le cuentan
      sus fixtures: es su humo.
    Las celdas de los cuadernos no se apuntan nunca. Devuelve cuántos tests quedan apuntados."""
    pruebas = {n: p for n, p in pruebas.items() if not n.split("::")[0].endswith(".ipynb")}
    fixtures = {f for p in pruebas.values() if p.get("cpu_preparacion", 0) > PROFUNDO_CPU_S
                for f in p.get("nuevas", ())}

    def caro(p):
        return p["cpu"] > PROFUNDO_CPU_S or any(f in fixtures for f in p.get("compartidas", ()))
    por_fichero = {}
    for nodeid, p in pruebas.items():
        por_fichero.setdefault(nodeid.split("::")[0], []).append((p["cpu"], nodeid))
    humos = {min(lista)[1] for lista in por_fichero.values() if all(caro(pruebas[n]) for _, n in lista)}
    libres = {f for h in humos for f in pruebas[h].get("compartidas", ())}
    fixtures -= libres
    tests = {n: round(p["cpu"], 1) for n, p in pruebas.items() if n not in humos and caro(p)}
    ruta = ruta or PROFUNDOS
    ruta.write_text(json.dumps({"tests": dict(sorted(tests.items())), "fixtures": sorted(fixtures)},
                               indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(tests)


# --- Para ver los niveles: `-p curso.autor.niveles` con CURSO_NIVELES ------------------------------

VARIABLE_NIVELES = "CURSO_NIVELES"  # el fichero donde se apunta el nivel de cada test recogido


def pytest_collection_finish(session):
    """Con CURSO_NIVELES, apunta en ese fichero, de cada test recogido (sin las celdas de los
    cuadernos): la clase profunda que lo reconoce (o null), su marca `profundo` (la clase, o null,
    si corre en el nivel rápido) y su ejercicio, si es de una familia por ejercicio. Lo usa el test de los niveles (tests/equipo/test_probar.py)."""
    ruta = os.environ.get(VARIABLE_NIVELES)
    if not ruta:
        return
    niveles = {}
    for item in session.items:
        if item.path.suffix == ".ipynb":
            continue
        marca, prueba = item.get_closest_marker(MARCA), prueba_de(item)
        niveles[item.nodeid] = {"clase": clase_de(prueba)[0], "profundo": marca.args[0] if marca else None,
                                "ejercicio": ejercicio_de(prueba)}
    Path(ruta).write_text(json.dumps(niveles, ensure_ascii=False), encoding="utf-8")
