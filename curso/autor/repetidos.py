"""Para `probar`: qué tests de los puntos de control merece la pena correr, cada prueba distinta una sola vez.

Cada punto de control lleva sus propios tests (`pytest checkpoints/NN` funciona solo), y muchos
son copias: `test_bucle.py` es el mismo fichero en los puntos 01 a 05. Pero una copia idéntica que
prueba módulos idénticos da exactamente el mismo resultado, y correrla cinco veces no comprueba
nada más. Esta es la cuenta de `python -m curso probar` para correr cada una una sola vez.

Dos ficheros de tests, en dos puntos de control, son la misma prueba si coinciden byte a byte
ellos, el `conftest.py` de su carpeta y todo lo del punto de control de lo que pueden depender:
los módulos que importan o nombran, y lo que esos importan o nombran a su vez. «Nombrar» cuenta
(un test que ejecuta `correr.py` en un subproceso no lo importa, pero lo escribe; uno que carga
un módulo con `import_module("bucle")` lo escribe como texto), así que la cuenta peca de
prudente: ante la duda, dos ficheros son pruebas distintas y corren las dos.
De cada prueba repetida corre la copia del punto de control más alto.
"""
import ast
import functools
import hashlib
import re

FICHERO_PY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\.py\b")


# Los mismos ficheros se repiten en casi todos los puntos de control (módulos y tests idénticos),
# y recorrer el AST de cada uno es lo que más cuesta: un texto ya visto da los mismos nombres, así
# que se recuerdan por su texto: de miles de recorridos quedan unas decenas, uno por texto
# distinto (probar hace la cuenta antes de lanzar ninguna parte, así que se nota en cada pasada).
@functools.lru_cache(maxsize=None)
def nombres_usados(texto):
    """Los nombres de módulo de los que `texto` puede depender: los que importa (según su AST),
    los ficheros `nombre.py` que escribe y los textos que son un nombre (`import_module("x")`)."""
    nombres = set(FICHERO_PY.findall(texto))
    try:
        arbol = ast.parse(texto)
    except SyntaxError:
        return frozenset(nombres | set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", texto)))  # ante la duda, todo
    for nodo in ast.walk(arbol):
        if isinstance(nodo, ast.Import):
            nombres.update(a.name.split(".")[0] for a in nodo.names)
        elif isinstance(nodo, ast.ImportFrom) and nodo.module and not nodo.level:
            nombres.add(nodo.module.split(".")[0])
        elif isinstance(nodo, ast.Constant) and isinstance(nodo.value, str) and nodo.value.isidentifier():
            nombres.add(nodo.value)
    return frozenset(nombres)  # inmutable: el mismo resultado lo comparten todas las llamadas


def dependencias(test, carpeta):
    """Los ficheros de `carpeta` (el punto de control) y de su tests/ de los que depende `test`."""
    locales = {p.stem: p for p in sorted(carpeta.glob("*.py"))}
    locales.update({p.stem: p for p in sorted((carpeta / "tests").glob("*.py")) if p != test})
    vistos, pendientes = set(), [test]
    while pendientes:
        fichero = pendientes.pop()
        for nombre in nombres_usados(fichero.read_text(encoding="utf-8")):
            if nombre in locales and locales[nombre] not in vistos:
                vistos.add(locales[nombre])
                pendientes.append(locales[nombre])
    return sorted(vistos)


def huella(test, carpeta):
    """Lo que hace que dos copias de `test` sean la misma prueba: un resumen de sus bytes, los de
    su conftest.py y los de cada fichero del que depende (con su nombre)."""
    h = hashlib.sha256()
    conftest = test.parent / "conftest.py"
    for fichero in [test, *([conftest] if conftest.exists() else []), *dependencias(test, carpeta)]:
        h.update(fichero.relative_to(carpeta).as_posix().encode() + b"\0")
        h.update(fichero.read_bytes() + b"\0")
    return h.hexdigest()


def tests_que_corren(puntos):
    """De {número: carpeta del punto de control}, ({número: [tests que corren]}, {número: [(test,
    número donde ya corre)]}): cada prueba repetida, solo en el punto de control más alto."""
    donde = {}  # huella -> (número, test) de la copia que corre
    for numero in sorted(puntos, reverse=True):
        for test in sorted((puntos[numero] / "tests").glob("test_*.py")):
            donde.setdefault(huella(test, puntos[numero]), (numero, test))
    corren, saltados = {}, {}
    for numero in sorted(puntos):
        for test in sorted((puntos[numero] / "tests").glob("test_*.py")):
            elegido, copia = donde[huella(test, puntos[numero])]
            if copia == test:
                corren.setdefault(numero, []).append(test)
            else:
                saltados.setdefault(numero, []).append((test, elegido))
    return corren, saltados
