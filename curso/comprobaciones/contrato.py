"""Para `comprobar N`, `calificar` y quien escribe el curso: qué tests de un punto de control califican (la marca `contrato`) y qué redacciones fija el texto de cada ejercicio.

Un ejercicio se califica por su **contrato**: lo que pide su texto (valores devueltos, filas y
estados de la base de datos, el tipo de una excepción, lo que un mensaje tiene que nombrar; unas
palabras, solo si el texto las fija). Lo juzgan dos cosas, y ninguna más:

- sus casos (`comprobar("N.M")`, `curso/comprobaciones/ejercicios.py::evaluar`), que corren igual
  en el cuaderno, en `comprobar N` y en `calificar` (el fichero de los ejercicios de
  `curso/comprobaciones/tests_del_curso.py`);
- los tests de los puntos de control con la marca `@pytest.mark.contrato("N.M")`: corren código
  que escribe el alumno en ese ejercicio y afirman solo hechos de su contrato. Corren con el módulo
  del alumno entre los de referencia (la regla de la culpa, `curso/comprobaciones/culpa.py`), y un
  fallo nombra su ejercicio.

Los demás tests de un punto de control son de **regresión**: fijan el código que da el curso o las
palabras de la referencia. `probar` los corre contra los puntos de control; `comprobar N` y
`calificar` no los corren: nunca califican a un alumno.

Lo que guarda la división (`tests/lecciones/test_marcas_de_contrato.py`): cada marca nombra un
ejercicio que existe y cuyo módulo tiene el punto de control; y ningún test de contrato afirma una
redacción (un `match=` de `pytest.raises`, un texto comparado con `==`, `in`, `startswith`…) que
no esté en el texto del ejercicio (`redacciones_que_no_fija`), salvo las de
`REDACCIONES_QUE_FIJA_EL_TEXTO`, cada una con su porqué. Un texto que el propio test le pasa al
código (un dato que vuelve tal cual) no es una redacción.

Todo se lee del código de los tests (ast), sin importarlos: importarlos importaría los módulos del
alumno, y esos solo se importan aparte (`curso/comprobaciones/aparte.py`).
"""
import ast
import re
import threading
from functools import lru_cache
from pathlib import Path

from curso import rutas

# `calificar` reparte la culpa de varios alumnos a la vez, en hilos; en Python 3.11, dos ast.parse a
# la vez en hilos distintos pueden lanzar «SystemError: AST constructor recursion depth mismatch»
# (CPython gh-106905): uno cada vez (aquí y en culpa.py).
UN_ARBOL_CADA_VEZ = threading.Lock()

MARCA = "contrato"  # @pytest.mark.contrato("4.2")
EXPLICACION_DE_LA_MARCA = (f"{MARCA}(ejercicio): el test corre código que escribe el alumno en ese ejercicio "
                           "y afirma solo hechos de su contrato; califica en `comprobar N` y `calificar` "
                           "(ver curso/comprobaciones/contrato.py)")

# Las redacciones que un test de contrato afirma y que el texto fija aunque no con esas mismas letras:
# {("test_x.py::test_y", "redacción"): por qué la fija el texto}.
_MARCADOR = ("el texto del 3b.1 fija la forma del marcador (`[Resultado borrado para hacer sitio: "
             "leer(ruta=\"compra.py\")…]`) y la celda da `marcador` hecha: el test mira que limpiar la use")
_DEL_GUION = ("no es una redacción del alumno: lo escribe el hijo guionizado (la cita mal copiada de "
              "config/db.toml) o la identidad «padre/hijo/n» que reparte `repartir`, código que da la celda")
REDACCIONES_QUE_FIJA_EL_TEXTO = {
    ("test_limpiar.py::test_el_marcador_nombra_la_herramienta_su_entrada_y_como_recuperarlo",
     'leer(ruta="f1.py")'): _MARCADOR,
    ("test_limpiar.py::test_el_marcador_nombra_la_herramienta_su_entrada_y_como_recuperarlo",
     'ejecutar(comando="python3 -m unittest")'): _MARCADOR,
    ("test_subagentes.py::test_integrar_se_queda_solo_con_lo_que_respalda_la_evidencia",
     "max_conexiones = 20"): _DEL_GUION,
    ("test_subagentes.py::test_integrar_se_queda_solo_con_lo_que_respalda_la_evidencia", "/config/1"): _DEL_GUION,
    ("test_subagentes.py::test_integrar_se_queda_solo_con_lo_que_respalda_la_evidencia", "/logs/1"): _DEL_GUION,
}

# Llamadas cuyo primer argumento es un texto que se busca en otro: lo afirman sobre la salida.
METODOS_QUE_BUSCAN = {"startswith", "endswith"}
FUNCIONES_QUE_BUSCAN = {"search", "match", "fullmatch"}


# ---------------------------------------------------------------- las marcas


def _ids_de_la_marca(decorador):
    """("4.2",) de un decorador `pytest.mark.contrato("4.2")`, o None si no es la marca."""
    if not isinstance(decorador, ast.Call):
        return None
    funcion = decorador.func
    if not (isinstance(funcion, ast.Attribute) and funcion.attr == MARCA
            and isinstance(funcion.value, ast.Attribute) and funcion.value.attr == "mark"):
        return None
    return tuple(a.value for a in decorador.args if isinstance(a, ast.Constant) and isinstance(a.value, str))


def _marca_de(nodo):
    for decorador in nodo.decorator_list:
        ids = _ids_de_la_marca(decorador)
        if ids is not None:
            return ids
    return None


def funciones_de_test(arbol):
    """[(nombre, nodo, ids de su marca o None)] de las funciones de test de un fichero (también las
    de clases Test*, «TestX::test_y», con la marca de su clase si no tienen la suya)."""
    funciones = []
    for nodo in arbol.body:
        if isinstance(nodo, (ast.FunctionDef, ast.AsyncFunctionDef)) and nodo.name.startswith("test"):
            funciones.append((nodo.name, nodo, _marca_de(nodo)))
        elif isinstance(nodo, ast.ClassDef) and nodo.name.startswith("Test"):
            de_la_clase = _marca_de(nodo)
            funciones += [(f"{nodo.name}::{m.name}", m, _marca_de(m) or de_la_clase) for m in nodo.body
                          if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return funciones


def _arbol(texto):
    """ast.parse, uno cada vez (calificar trabaja en hilos: ver UN_ARBOL_CADA_VEZ)."""
    with UN_ARBOL_CADA_VEZ:
        return ast.parse(texto)


@lru_cache(maxsize=512)
def _marcas(ruta, _cambio):
    arbol = _arbol(Path(ruta).read_text(encoding="utf-8"))
    return {nombre: ids for nombre, _, ids in funciones_de_test(arbol) if ids is not None}


def marcas_del_fichero(fichero):
    """{nombre del test: (ejercicio,)} de los tests con la marca de contrato de un fichero."""
    fichero = Path(fichero)
    return _marcas(str(fichero), fichero.stat().st_mtime_ns)


def contratos_del_punto(carpeta_punto):
    """{«test_x.py::test_y»: "4.2"}: los tests de contrato de un punto de control, fichero a fichero."""
    contratos = {}
    for fichero in sorted((Path(carpeta_punto) / "tests").glob("test_*.py")):
        for nombre, ids in marcas_del_fichero(fichero).items():
            contratos[f"{fichero.name}::{nombre}"] = ids[0] if len(ids) == 1 else ids
    return contratos


# ---------------------------------------------------------------- lo que escribe cada ejercicio


@lru_cache(maxsize=64)
def funciones_del_ejercicio(id):
    """Los nombres de las funciones que escribe el alumno en el ejercicio `id`: las de su celda del
    cuaderno resuelto que tienen una región de solución suya («corte» para el 3.2); () si no se sabe."""
    from curso.comprobaciones import ejercicios
    from curso.comprobaciones.esbozos import INICIO, ejercicio_de
    try:
        celda = ejercicios.celda_resuelta(id)
    except (LookupError, OSError):  # un ejercicio sin cuaderno (los de un curso de juguete)
        e = ejercicios.REGISTRO.get(id)
        return (e.nombre,) if e is not None and e.nombre else ()
    marca = ejercicio_de(celda)
    lineas = celda.source.split("\n")
    fuente = "\n".join(["", *lineas[1:]]) if lineas[0].startswith("%%") else celda.source  # mismas líneas
    regiones = [i + 1 for i, l in enumerate(fuente.split("\n")) if l.strip() == INICIO]
    definiciones = [n for n in ast.walk(_arbol(fuente)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    nombres = []
    for region in regiones:
        dentro = [d for d in definiciones if d.lineno <= region <= d.end_lineno]
        if not dentro:
            continue
        d = min(dentro, key=lambda d: d.end_lineno - d.lineno)
        if (marca.get(d.name) if isinstance(marca, dict) else marca) == id and d.name not in nombres:
            nombres.append(d.name)
    return tuple(nombres)


# ---------------------------------------------------------------- el texto de cada ejercicio


def _normalizar(texto):
    """Sin lo que el markdown añade (comillas invertidas, asteriscos) y con los espacios juntos."""
    return re.sub(r"\s+", " ", re.sub(r"[`*]", "", texto))


@lru_cache(maxsize=64)
def texto_del_ejercicio(id):
    """Lo que el alumno lee para hacer el ejercicio `id`: las celdas de texto de su cuaderno hasta la
    celda del ejercicio, y esa celda tal como la recibe (con el esbozo, sus docstrings y comentarios)."""
    import nbformat

    from curso.comprobaciones import ejercicios
    from curso.comprobaciones.esbozos import ejercicio_de
    e = ejercicios.buscar(id)
    partes = []
    for ruta in sorted(Path(rutas.CUADERNOS).glob(f"{e.leccion:02d}_*.ipynb")):
        for celda in nbformat.read(ruta, as_version=4).cells:
            marca = ejercicio_de(celda)
            if marca == id or (isinstance(marca, dict) and id in marca.values()):
                partes.append(celda.source)
                return _normalizar("\n".join(partes))
            if celda.cell_type == "markdown":
                partes.append(celda.source)
    raise LookupError(f"El cuaderno de la lección {e.leccion:02d} no tiene la celda del ejercicio {id}.")


def lo_fija(texto, redaccion, es_patron=False):
    """¿Fija `texto` (el de un ejercicio) la redacción `redaccion`? Tiene que estar en él, letra a
    letra (una sola palabra, como palabra entera: «fin», «duplicada»). Un patrón (`match=` de
    `pytest.raises`, `re.search`) casa con mensajes: una palabra suelta del texto («vacío», de
    «texto no vacío») no fija cómo lo dice un mensaje, así que un patrón necesita dos palabras."""
    normal = _normalizar(redaccion).strip()
    if not normal:
        return True
    if re.fullmatch(r"\w+", normal):
        return not es_patron and re.search(rf"\b{re.escape(normal)}\b", texto, re.IGNORECASE) is not None
    return normal.lower() in texto.lower()


# ---------------------------------------------------------------- las redacciones de un test


def _textos(nodo, constantes):
    """Los textos literales de una expresión: una constante, las partes fijas de un f-string, los de
    una tupla o lista de ellos, o el de un nombre que es una constante del fichero."""
    if isinstance(nodo, ast.Constant) and isinstance(nodo.value, str):
        return [nodo.value]
    if isinstance(nodo, ast.JoinedStr):
        return [v.value for v in nodo.values if isinstance(v, ast.Constant) and v.value.strip()]
    if isinstance(nodo, (ast.Tuple, ast.List, ast.Set)):
        return [t for e in nodo.elts for t in _textos(e, constantes)]
    if isinstance(nodo, ast.Dict):
        return [t for v in nodo.values for t in _textos(v, constantes)]
    if isinstance(nodo, ast.Name) and nodo.id in constantes:
        valor = constantes[nodo.id]
        return [valor] if isinstance(valor, str) else [v for v in valor if isinstance(v, str)]
    return []


def _constantes(arbol):
    """{NOMBRE: texto} de las asignaciones de un texto a un nombre en el nivel del fichero."""
    return {d.id: n.value.value for n in arbol.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for d in n.targets if isinstance(d, ast.Name)}


def _parametros(funcion):
    """{argumento: [valores]} de los `pytest.mark.parametrize` de una función de test."""
    parametros = {}
    for decorador in getattr(funcion, "decorator_list", []):
        if not (isinstance(decorador, ast.Call) and isinstance(decorador.func, ast.Attribute)
                and decorador.func.attr == "parametrize" and len(decorador.args) >= 2):
            continue
        nombres, valores = decorador.args[:2]
        if isinstance(nombres, ast.Constant) and isinstance(nombres.value, str):
            nombres = [n.strip() for n in nombres.value.split(",") if n.strip()]
        elif isinstance(nombres, (ast.Tuple, ast.List)):
            nombres = [n.value for n in nombres.elts if isinstance(n, ast.Constant)]
        else:
            continue
        if not isinstance(valores, (ast.List, ast.Tuple)):
            continue
        for fila in valores.elts:
            columnas = fila.elts if len(nombres) > 1 and isinstance(fila, (ast.Tuple, ast.List)) else [fila]
            for nombre, valor in zip(nombres, columnas, strict=False):
                parametros.setdefault(nombre, []).append(
                    valor.value if isinstance(valor, ast.Constant) else None)
    return parametros


def _textos_del_nivel(arbol):
    """{NOMBRE: textos} de lo que se asigna en el nivel del fichero (datos de los tests, casi siempre)."""
    textos = {}
    for n in arbol.body:
        if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
            dentro = {c.value for c in ast.walk(n.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            for destino in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                for nombre in ast.walk(destino):
                    if isinstance(nombre, ast.Name):
                        textos.setdefault(nombre.id, set()).update(dentro)
    return textos


def _es_pytest_raises(llamada):
    f = llamada.func
    return isinstance(f, ast.Attribute) and f.attr == "raises" and isinstance(f.value, ast.Name) and f.value.id == "pytest"


def _literal(nodo, constantes):
    """¿Es `nodo` un texto escrito en el test (una constante, un f-string, una colección de ellos o
    el nombre de uno), y no algo calculado?"""
    if isinstance(nodo, (ast.Constant, ast.JoinedStr)):
        return isinstance(nodo, ast.JoinedStr) or isinstance(nodo.value, str)
    if isinstance(nodo, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return True
    return isinstance(nodo, ast.Name) and nodo.id in constantes


def _afirmadas(funcion, constantes):
    """[(texto, es_patron, línea)] de lo que afirma una función sobre textos escritos en el test (un
    `match=`, un lado de una comparación, lo que se busca con `startswith` o `re.search`), y los
    nodos de esos textos (para no contarlos como datos)."""
    lados = []
    for nodo in ast.walk(funcion):
        if isinstance(nodo, ast.Call) and _es_pytest_raises(nodo):
            lados += [(clave.value, True, nodo.lineno) for clave in nodo.keywords if clave.arg == "match"]
        elif isinstance(nodo, ast.Assert):
            for dentro in ast.walk(nodo.test):
                if isinstance(dentro, ast.Compare) and any(
                        isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in dentro.ops):
                    lados += [(lado, False, nodo.lineno) for lado in [dentro.left, *dentro.comparators]
                              if _literal(lado, constantes)]
                elif isinstance(dentro, ast.Call) and dentro.args:
                    f = dentro.func
                    nombre = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                    if nombre in METODOS_QUE_BUSCAN | FUNCIONES_QUE_BUSCAN:
                        lados.append((dentro.args[0], nombre in FUNCIONES_QUE_BUSCAN, nodo.lineno))
    afirmadas = [(t, es_patron, linea) for lado, es_patron, linea in lados for t in _textos(lado, constantes)]
    return afirmadas, {n for lado, _, _ in lados for n in ast.walk(lado)}


def es_dato(texto, datos):
    """¿Sale `texto` de lo que el test le pasó al código? Está en uno de sus textos, o cada una de
    sus líneas lo está (un fichero que el test escribió y luego editó, p. ej.)."""
    if any(texto in d for d in datos):
        return True
    lineas = [l.strip() for l in texto.splitlines() if l.strip()]
    return bool(lineas) and all(any(l in d for d in datos) for l in lineas)


def _usadas(funcion, del_fichero):
    """La función de test y lo del fichero que usa, directa o indirectamente: las funciones y clases
    que nombra y las fixtures que pide por sus argumentos."""
    vistas, pendientes = [], [funcion]
    while pendientes:
        actual = pendientes.pop()
        if any(actual is v for v in vistas):
            continue
        vistas.append(actual)
        argumentos = [a.arg for a in actual.args.args] if isinstance(actual, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        nombres = {n.id for n in ast.walk(actual) if isinstance(n, ast.Name)} | set(argumentos)
        pendientes += [del_fichero[n] for n in nombres if n in del_fichero]
    return vistas


def redacciones(fichero):
    """[(test, ejercicio, redacción, es_patron, línea)] de lo que afirman sobre textos los tests de
    contrato de `fichero` (y lo del fichero que usan), sin los datos que el propio test le pasa al
    código: un texto que está en alguno de ellos (en el cuerpo de lo que usa, en una constante del
    fichero que usa fuera de sus afirmaciones o en un parámetro que no afirma) vuelve tal cual."""
    arbol = _arbol(Path(fichero).read_text(encoding="utf-8"))
    constantes = _constantes(arbol)
    del_fichero = {n.name: n for n in arbol.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    del_nivel = _textos_del_nivel(arbol)
    salida = []
    for nombre, nodo, ids in funciones_de_test(arbol):
        if not ids:
            continue
        usadas = _usadas(nodo, del_fichero)
        parametros = _parametros(nodo)
        afirmadas, nodos = [], set()
        for f in usadas:
            a, n = _afirmadas(f, {**constantes, **(parametros if f is nodo else {})})
            afirmadas += a
            nodos |= n
        dentro = [n for f in usadas for sentencia in f.body for n in ast.walk(sentencia) if n not in nodos]
        nombrados = {n.id for n in dentro if isinstance(n, ast.Name)}
        datos = ({n.value for n in dentro if isinstance(n, ast.Constant) and isinstance(n.value, str)}
                 | {t for c, textos in del_nivel.items() if c in nombrados for t in textos}
                 | {v for p, valores in parametros.items() if p in nombrados for v in valores if isinstance(v, str)})
        for texto, es_patron, linea in dict.fromkeys(afirmadas):
            if texto.strip() and not es_dato(texto, datos):
                salida.append((f"{Path(fichero).name}::{nombre}", ids[0], texto, es_patron, linea))
    return salida


def redacciones_que_no_fija(carpeta_punto):
    """[(test, ejercicio, redacción, línea)] de los tests de contrato de un punto de control que
    afirman una redacción que el texto de su ejercicio no fija (ni está en
    REDACCIONES_QUE_FIJA_EL_TEXTO). Tiene que estar vacía."""
    malas = []
    for fichero in sorted((Path(carpeta_punto) / "tests").glob("test_*.py")):
        for test, id, texto, es_patron, linea in redacciones(fichero):
            if (test, texto) in REDACCIONES_QUE_FIJA_EL_TEXTO:
                continue
            if not lo_fija(texto_del_ejercicio(id), texto, es_patron):
                malas.append((test, id, texto, linea))
    return malas
