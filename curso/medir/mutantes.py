"""Para quien escribe el curso (`python -m curso medir mutantes [N.M ...]`): las pruebas de mutación de cada ejercicio contra la comprobación de su cuaderno.

Los errores escritos en tests/lecciones/ son los que se nos ocurrieron; un alumno comete otros. Aquí
se cambia la solución de referencia de un ejercicio de una en una manera pequeña (un `<` por un
`<=`, un `and` por un `or`, un número por el siguiente, un `for` que no da ninguna vuelta...) y se
mira si `comprobar("N.M")` lo nota. Un mutante que la comprobación da por bueno («vivo») es, o bien
equivalente (no cambia lo que hace el código: lo dice, con su porqué, `mutantes_equivalentes.py`
junto a las comprobaciones), o bien un caso que falta en `comprobaciones/lNN.py`.

Qué se muta: solo la región entre `# BEGIN SOLUCIÓN` y `# END SOLUCIÓN` de la celda del ejercicio
en `solutions/NN_*.ipynb` (de una celda con varios ejercicios, solo las regiones de las funciones
de este). Sin las marcas, la celda es el módulo del punto de control NN; el mutante se escribe en
un espacio que es una copia de ese punto de control y se comprueba como en el cuaderno,
`ejercicios.evaluar("N.M", espacio=...)`. Un ejercicio de funciones del cuaderno (2.1, 2.2, 3.1)
recibe la función que define la celda mutada.

Los operadores: los de cosmic-ray que hacen un error de alumno (comparaciones, operadores, `and`/`or`,
`True`/`False`, números, bucles sin vueltas, excepts que no cogen nada) y dos propios, con su porqué
en su docstring: quitar una sentencia y cambiar el SQL de un texto.

Por qué cosmic-ray y no mutmut, y por qué su runner no: mutmut 3 reescribe un paquete importable
con «trampolines» y lo corre con pytest; aquí no hay ni paquete ni pytest, sino un fichero que la
comprobación carga de un espacio. cosmic-ray separa sus operadores (sobre el árbol de parso, uno
por clase: `mutation_positions`, `mutate`) de su runner (una base de datos de trabajos, un fichero
mutado en su sitio y una orden de tests por mutante): se usan sus operadores tal cual y el runner
es este, porque hace falta (1) mutar solo las líneas de la región, (2) cargar la comprobación una
vez y no por mutante (cada mutante corre en un hijo hecho con fork, que cuesta milisegundos) y
(3) cortar un mutante que no termina, con su propio recuento («por tiempo»).

Desde el diferencial (issue 40, §2), cada comprobación tiene dos partes: los casos escritos y el
diferencial (`comprobaciones/diferencial.py`). La medida dice, por ejercicio, cuántos mutantes y
cuántos errores escritos de `tests/variantes.py` pillan los casos escritos (lo de antes) y
cuántos el diferencial, y cuántos solo él: la tabla de antes y después.

Cada mutante corre en un proceso hijo, en su propio grupo: si pasa de su tiempo, se mata el grupo
entero (también los procesos que lanzase la comprobación). La lección 07 usa un PostgreSQL de usar
y tirar (o el de CURSO_POSTGRES) para todos sus mutantes.

Uso: python -m curso medir mutantes [N.M ...] [--muestra K] [--semilla S] [--vivos] [--operadores TROZO]
     [--sin-errores]
"""
import builtins
import difflib
import os
import pickle
import random
import re
import select
import shutil
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

# Los operadores de cosmic-ray que se usan. De los de operadores binarios y de comparación (uno
# por pareja: 213 en total) solo los cambios que un alumno haría: + por -, < por <=, == por !=...;
# `a + b` por `a ** b` o `==` por `is` no son errores de nadie y solo alargan la medida.
COMPARACIONES = ("Eq", "NotEq", "Lt", "LtE", "Gt", "GtE")
OPERADORES = (
    [f"core/ReplaceComparisonOperator_{a}_{b}" for a in COMPARACIONES for b in COMPARACIONES if a != b]
    + ["core/ReplaceComparisonOperator_Is_IsNot", "core/ReplaceComparisonOperator_IsNot_Is"]
    + [f"core/ReplaceBinaryOperator_{a}_{b}" for a, b in (
        ("Add", "Sub"), ("Sub", "Add"), ("Mul", "Div"), ("Div", "Mul"), ("FloorDiv", "Div"),
        ("Div", "FloorDiv"), ("Mod", "FloorDiv"), ("BitOr", "BitAnd"), ("BitAnd", "BitOr"), ("Sub", "BitOr"))]
    + ["core/ReplaceUnaryOperator_USub_UAdd", "core/ReplaceUnaryOperator_Delete_Not",
       "core/AddNot", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue",
       "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd",
       "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
       "core/NumberReplacer", "core/ZeroIterationForLoop", "core/ExceptionReplacer"]
)



def quitar_sentencia():
    """El primer operador propio: una sentencia simple cambiada por `pass` (olvidar un paso: el COMMIT,
    apuntar el resultado, comprobar el número de filas). cosmic-ray no tiene ninguno que quite una
    sentencia, y es el error más corriente. Es un `Operator` de cosmic-ray: lo aplica su mismo
    `mutate_code`."""
    from cosmic_ray.operators.operator import Example, Operator
    from parso.python.tree import Keyword

    class QuitarSentencia(Operator):
        def mutation_positions(self, node):
            if node.type == "simple_stmt":
                for hijo in self._sentencias(node):
                    yield (hijo.start_pos, hijo.end_pos)

        def mutate(self, node, index):
            hijo = self._sentencias(node)[index]
            nuevo = Keyword("pass", hijo.start_pos, prefix=hijo.get_first_leaf().prefix)
            node.children[node.children.index(hijo)] = nuevo
            nuevo.parent = node
            return node

        @staticmethod
        def _sentencias(node):
            return [h for h in node.children if h.type not in ("operator", "newline")
                    and not (h.type == "keyword" and h.value == "pass")]

        @classmethod
        def examples(cls):
            return (Example("x = 1\n", "pass\n"),)
    return QuitarSentencia


# Lo que cambia `CambioEnSQL` en el texto de una sentencia SQL: los errores que un alumno comete en
# el SQL, que cosmic-ray no ve (no muta ningún texto; mutmut solo los envuelve en «XX», lo que rompe
# la sintaxis y no enseña nada).
ES_SQL = re.compile(r"\b(SELECT|UPDATE|INSERT|DELETE|BEGIN|WHERE|ON CONFLICT)\b")
SIEMPRE = r" AND (CAST(\1 AS TEXT) IS NULL OR TRUE)"  # verdad con cualquier valor del parámetro, en SQLite y en PostgreSQL
CAMBIOS_SQL = (
    (r"IS NOT DISTINCT FROM", "="),                     # el NULL = NULL de PostgreSQL
    (r"\bIS (\?|%s)", r"= \1"),                        # el de SQLite
    (r"\bNOT EXISTS\b", "EXISTS"),
    (r"\bAND\b", "OR"),
    # Una condición menos. Si compara con un parámetro, queda uno que siempre es verdad y lo usa: así la
    # sentencia sigue teniendo tantos parámetros como valores le llegan, como la de un alumno que la
    # olvidó (y no falla por eso, sino por lo que hace).
    (r"\s+AND\s+[\w.]+\b\s*(?:=|\bIS NOT DISTINCT FROM\b|\bIS\b)\s*(?!NOT\b)('[^']*'|[\w.]+\b)(?!\s*\()", ""),
    (r"\s+AND\s+[\w.]+\b\s*(?:=|\bIS NOT DISTINCT FROM\b|\bIS\b)\s*(%s|\?)", SIEMPRE),
    (r"\bWHERE\s+[\w.]+\b\s*=\s*(%s|\?)\s+AND\b", r"WHERE (CAST(\1 AS TEXT) IS NULL OR TRUE) AND"),
    (r"\s*ON CONFLICT\b.*?DO NOTHING", ""),
    (r"\bBEGIN IMMEDIATE\b", "BEGIN"),
    (r"\s+FOR UPDATE\b", ""),
    (r"\s*\+\s*1\b", ""),                               # version + 1
)


def cambio_en_sql():
    """El segundo operador propio: un cambio de CAMBIOS_SQL dentro de un texto que es SQL. Un
    `Operator` de cosmic-ray sobre las hojas `string` de parso, como los suyos."""
    from cosmic_ray.operators.operator import Example, Operator

    class CambioEnSQL(Operator):
        def mutation_positions(self, node):
            for _ in self._cambios(node):
                yield (node.start_pos, node.end_pos)

        def mutate(self, node, index):
            inicio, fin, nuevo = self._cambios(node)[index]
            node.value = node.value[:inicio] + nuevo + node.value[fin:]
            return node

        @staticmethod
        def _cambios(node):
            if node.type != "string" or not ES_SQL.search(node.value):
                return []
            return [(m.start(), m.end(), m.expand(nuevo)) for patron, nuevo in CAMBIOS_SQL
                    for m in re.finditer(patron, node.value)]

        @classmethod
        def examples(cls):
            return (Example('q = "SELECT 1 WHERE a IS NOT DISTINCT FROM %s"\n', 'q = "SELECT 1 WHERE a = %s"\n'),)
    return CambioEnSQL


PROPIOS = {"curso/QuitarSentencia": quitar_sentencia, "curso/CambioEnSQL": cambio_en_sql}
OPERADORES = OPERADORES + list(PROPIOS)


def operador(nombre):
    """Una instancia nueva del operador `nombre` (de cosmic-ray, o de PROPIOS)."""
    if nombre in PROPIOS:
        return PROPIOS[nombre]()()
    from cosmic_ray.plugins import get_operator
    return get_operator(nombre)()


# Cuánto puede tardar un mutante: tantas veces lo que tarda la referencia, y nunca menos de esto.
VECES_LA_REFERENCIA = 5
MINIMO_S = 8


@dataclass
class Region:
    """El código de un ejercicio: el texto que se muta y las líneas (de 1 en adelante) que se pueden mutar."""
    id: str
    leccion: int
    modulo: str          # el módulo del espacio; None si es una función del cuaderno
    nombre: str          # la función que se comprueba
    texto: str           # el módulo (o la celda) sin las marcas de solución
    lineas: set = field(default_factory=set)


@dataclass
class Mutante:
    id: str
    operador: str
    vez: int             # la ocurrencia del operador en el texto (la de cosmic-ray)
    texto: str           # el texto mutado
    antes: str           # las líneas que cambian, sin sangría
    despues: str

    @property
    def clave(self):
        """Lo que nombra al mutante en la lista de equivalentes: ejercicio, línea de antes y de después."""
        return (self.id, self.antes, self.despues)


# --- la región de cada ejercicio ---------------------------------------------------------------

def region(id):
    """La `Region` del ejercicio `id`, leída de su celda del cuaderno resuelto."""
    import ast

    from curso.comprobaciones import ejercicios, esbozos
    e = ejercicios.buscar(id)
    celda = ejercicios.celda_resuelta(id)
    fuente = celda.source.split("\n")
    es_modulo = fuente[0].startswith("%%modulo")
    if es_modulo:
        fuente = fuente[1:]
    # Las líneas de cada región, contadas en el texto sin las marcas.
    texto, regiones, inicio = [], [], None
    for linea in fuente:
        if linea.strip() == esbozos.INICIO:
            inicio = len(texto) + 1
        elif linea.strip() == esbozos.FIN:
            regiones.append((inicio, len(texto)))
        else:
            texto.append(linea)
    texto = "\n".join(texto).rstrip("\n") + "\n"
    marca = esbozos.ejercicio_de(celda)
    if isinstance(marca, dict):  # varios ejercicios en la celda: solo las regiones de las funciones de este
        funciones = [n for n in ast.walk(ast.parse(texto)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

        def de_quien(linea):
            dentro_de = [f for f in funciones if f.lineno <= linea <= f.end_lineno]
            return marca.get(max(dentro_de, key=lambda f: f.lineno).name) if dentro_de else None
        regiones = [(a, b) for a, b in regiones if de_quien(a) == id]
    lineas = {n for a, b in regiones for n in range(a, b + 1)}
    if es_modulo:
        # Una celda puede escribir solo el principio del módulo (otra celda, más abajo, le añade el
        # resto con `--cambia`): el texto que se muta es el del punto de control, que empieza igual.
        # Y una celda `--cambia` (el 8.2) trae solo unas piezas del módulo: cada región se busca, tal
        # cual, en el del punto de control, y sus líneas son las de allí.
        from curso import rutas
        del_punto = (rutas.puntos_de_control()[e.leccion] / f"{e.modulo}.py").read_text(encoding="utf-8")
        if "--cambia" in celda.source.split("\n", 1)[0].split():
            lineas = set()
            for a, b in regiones:
                trozo = "\n".join(texto.split("\n")[a - 1:b]) + "\n"
                if del_punto.count(trozo) != 1:
                    raise LookupError(f"{e.modulo}.py del punto de control {e.leccion:02d} no tiene, una vez, "
                                      f"la solución del ejercicio {id}: ejecuta `python -m curso ejecutar "
                                      f"{e.leccion:02d} --sincronizar`.")
                inicio = del_punto[:del_punto.index(trozo)].count("\n") + 1
                lineas |= set(range(inicio, inicio + b - a + 1))
        elif not del_punto.startswith(texto.rstrip("\n")):
            raise LookupError(f"{e.modulo}.py del punto de control {e.leccion:02d} no empieza por la "
                              f"celda del ejercicio {id}: ejecuta `python -m curso ejecutar "
                              f"{e.leccion:02d} --sincronizar`.")
        texto = del_punto
    return Region(id, e.leccion, e.modulo if es_modulo else None, e.nombre, texto, lineas)


# --- los mutantes ---------------------------------------------------------------------------------

def _cambio(original, mutado):
    """(las líneas de antes, las de después) que cambian, sin sangría, unidas por saltos de línea."""
    antes, despues = [], []
    for etiqueta, i1, i2, j1, j2 in difflib.SequenceMatcher(None, original, mutado).get_opcodes():
        if etiqueta != "equal":
            antes += [l.strip() for l in original[i1:i2]]
            despues += [l.strip() for l in mutado[j1:j2]]
    return "\n".join(antes), "\n".join(despues)


def mutantes(reg, operadores=OPERADORES):
    """Los mutantes de la región `reg`: uno por operador (de `operadores`) y posición dentro de sus líneas."""
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    hechos = []
    original = reg.texto.split("\n")
    for nombre in operadores:
        vez = 0
        for nodo in ast_nodes(get_ast(reg.texto)):
            for (linea, _), _fin in operador(nombre).mutation_positions(nodo):
                if linea in reg.lineas:
                    texto = mutate_code(reg.texto, operador(nombre), vez)
                    if texto is not None and texto != reg.texto:
                        antes, despues = _cambio(original, texto.split("\n"))
                        hechos.append(Mutante(reg.id, nombre, vez, texto, antes, despues))
                vez += 1
    return hechos


def compila(mutante):
    try:
        compile(mutante.texto, "<mutante>", "exec")
    except SyntaxError:
        return False
    return True


# --- un mutante, en un hijo -----------------------------------------------------------------------

class Corrida(NamedTuple):
    """Un `Veredicto` dado en un hijo, con lo que tardó."""
    estado: str
    detalle: str
    segundos: float
    escritos: bool
    diferencial: bool


class Veredicto(NamedTuple):
    """Lo que dice la comprobación de un mutante (o de un error escrito): su estado ("vivo", "muerto"
    o "tiempo"), qué casos fallan, y si lo pillan los casos escritos y si lo pilla el diferencial."""
    estado: str
    detalle: str
    escritos: bool = False
    diferencial: bool = False


def evaluar_aqui(reg, texto, espacio, limite, diferencial=True):
    """En el hijo: la comprobación de `reg.id` con `texto` en lugar de la referencia (un `Veredicto`).
    Con diferencial=False, solo sus casos escritos (lo que era la comprobación antes del diferencial)."""
    from cosmic_ray.exceptions import CosmicRayTestingException

    from curso.comprobaciones import ejercicios
    builtins.CosmicRayTestingException = CosmicRayTestingException  # la que pone ExceptionReplacer
    ejercicios.LIMITE_SEGUNDOS = limite
    objetivo = None
    if reg.modulo is None:
        celda = {"__name__": "__celda__"}
        try:
            exec(compile(texto, "celda.py", "exec"), celda)  # noqa: S102 - la celda del cuaderno, mutada
        except Exception as exc:  # noqa: BLE001 - el mutante puede romper la celda
            return Veredicto("muerto", f"la celda no se ejecuta: {ejercicios.describir(exc)}", True, True)
        objetivo = celda[reg.nombre]
    else:
        (espacio / f"{reg.modulo}.py").write_text(texto, encoding="utf-8")
    resultado = ejercicios.evaluar(reg.id, objetivo=objetivo, espacio=espacio, diferencial=diferencial)
    if resultado.aprobado:
        return Veredicto("vivo", "")
    if resultado.problema:  # no se importa: lo pillaría cualquiera
        return Veredicto("muerto", resultado.problema, True, True)
    casos = {c.descripcion: c for c in ejercicios.buscar(reg.id).casos}
    malas = [l for l in resultado.lineas if l.estado != "ok"]
    escritos = any(casos[l.caso].diferencial is None for l in malas)
    diferencial = any(casos[l.caso].diferencial is not None for l in malas)
    if any("TimeoutError" in (l.detalle or "") for l in malas):
        return Veredicto("tiempo", "un caso pasó de su tiempo", escritos, diferencial)
    return Veredicto("muerto", "; ".join(l.caso for l in malas), escritos, diferencial)


def evaluar_en_un_hijo(reg, texto, espacio, limite_s):
    """Corre la comprobación con `texto` en un proceso hijo (fork), con `limite_s` segundos en
    total; si no acaba, mata su grupo de procesos. Devuelve (estado, detalle, segundos).
    El hijo crea sus temporales en una carpeta del padre, que la borra al acabar: un hijo matado
    no llega a borrar los suyos. Devuelve (estado, detalle, segundos, lo pillan los escritos, lo pilla
    el diferencial); uno que no acaba se cuenta para los dos (se colgaría igual sin el diferencial)."""
    temporal = tempfile.mkdtemp(prefix="mutante-")
    lectura, escritura = os.pipe()
    empiezo = time.monotonic()
    pid = os.fork()
    if pid == 0:  # el hijo
        os.close(lectura)
        os.setpgid(0, 0)
        tempfile.tempdir = temporal
        os.environ["TMPDIR"] = temporal
        try:
            salida = tuple(evaluar_aqui(reg, texto, espacio, max(2, limite_s / 2)))
        except BaseException as exc:  # noqa: BLE001 - lo que sea, el padre tiene que saberlo
            salida = ("muerto", f"la comprobación lanzó {type(exc).__name__}: {exc}", True, True)
        with os.fdopen(escritura, "wb") as tubo:
            pickle.dump(salida, tubo)
        os._exit(0)
    os.close(escritura)
    datos, acabado = b"", False
    with os.fdopen(lectura, "rb") as tubo:
        while not acabado:
            queda = limite_s - (time.monotonic() - empiezo)
            if queda <= 0:
                break
            listos, _, _ = select.select([tubo], [], [], queda)
            if listos:
                trozo = os.read(tubo.fileno(), 65536)
                datos += trozo
                acabado = not trozo
    if not acabado:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.waitpid(pid, 0)
    shutil.rmtree(temporal, ignore_errors=True)
    segundos = time.monotonic() - empiezo
    if not acabado:
        return Corrida("tiempo", f"pasó de {limite_s:.0f} s", segundos, True, True)
    try:
        estado, detalle, escritos, diferencial = pickle.loads(datos)
    except Exception:  # noqa: BLE001 - el hijo murió sin decir nada: el mutante lo tumbó
        return Corrida("muerto", "el proceso de la comprobación murió sin acabar", segundos, True, True)
    return Corrida(estado, detalle, segundos, escritos, diferencial)



def espacio_para(reg, carpeta):
    """Una copia del punto de control de la lección de `reg`, sin sus tests, en `carpeta`/espacio."""
    from curso import rutas
    espacio = Path(carpeta) / "espacio"
    shutil.copytree(rutas.puntos_de_control()[reg.leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    return espacio


# --- la medida --------------------------------------------------------------------------------------

@dataclass
class Cuenta:
    id: str
    hechos: int = 0
    muertos: int = 0
    vivos: list = field(default_factory=list)
    equivalentes: list = field(default_factory=list)
    tiempo: int = 0
    no_compilan: int = 0
    problema: str = ""
    # De los mutantes que mueren (también por tiempo): los que pillan los casos escritos (lo de
    # antes del diferencial) y los que pilla el diferencial (con o sin los escritos).
    por_escritos: int = 0
    por_diferencial: int = 0
    solo_diferencial: int = 0
    # Los errores escritos de variantes.py: cuántos hay, y cuántos pillan los casos escritos y el diferencial.
    errores: int = 0
    errores_por_escritos: int = 0
    errores_por_diferencial: int = 0
    errores_vivos: list = field(default_factory=list)

    @property
    def puntuacion(self):
        """Muertos (también por tiempo) entre los que cuentan: sin equivalentes ni los que no compilan."""
        cuentan = self.hechos - len(self.equivalentes) - self.no_compilan
        return (self.muertos + self.tiempo) / cuentan if cuentan else 1.0

    @property
    def puntuacion_antes(self):
        """Lo mismo, con solo los casos escritos: la de antes del diferencial."""
        cuentan = self.hechos - len(self.equivalentes) - self.no_compilan
        return self.por_escritos / cuentan if cuentan else 1.0

    def apuntar(self, corrida):
        """Un mutante comprobado (ni equivalente ni sin compilar)."""
        if corrida.estado == "vivo":
            return
        self.muertos += corrida.estado == "muerto"
        self.tiempo += corrida.estado == "tiempo"
        self.por_escritos += corrida.escritos
        self.por_diferencial += corrida.diferencial
        self.solo_diferencial += corrida.diferencial and not corrida.escritos


def medir_ejercicio(id, muestra=None, semilla=0, decir=print, operadores=OPERADORES, errores=True):
    """La `Cuenta` de las pruebas de mutación del ejercicio `id` (todos sus mutantes, o `muestra` al
    azar), y de sus errores escritos (los de variantes.py) si `errores`."""
    from curso.medir import de_los_tests
    de_los_tests()
    from mutantes_equivalentes import es_equivalente
    reg = region(id)
    todos = mutantes(reg, operadores)
    if muestra is not None and muestra < len(todos):
        todos = random.Random(f"{semilla}-{id}").sample(todos, muestra)
    cuenta = Cuenta(id, hechos=len(todos))
    with tempfile.TemporaryDirectory(prefix=f"mutantes-{id}-") as carpeta:
        espacio = espacio_para(reg, carpeta)
        estado, detalle, referencia_s, *_ = evaluar_en_un_hijo(reg, reg.texto, espacio, 120)
        if estado != "vivo":
            cuenta.problema = f"la referencia no pasa su comprobación ({detalle})"
            return cuenta
        limite = max(MINIMO_S, VECES_LA_REFERENCIA * referencia_s)
        if errores:
            medir_errores(cuenta, reg, espacio, limite, decir)
        decir(f"{id}: {len(todos)} mutantes (la referencia tarda {referencia_s:.1f} s; cada mutante, "
              f"como mucho {limite:.0f} s)")
        for n, m in enumerate(todos, 1):
            estado = "no compila" if not compila(m) else "equivalente" if es_equivalente(m) else None
            if estado is None:
                corrida = evaluar_en_un_hijo(reg, m.texto, espacio, limite)
                cuenta.apuntar(corrida)
                estado = corrida.estado
            if estado == "no compila":
                cuenta.no_compilan += 1
            elif estado == "equivalente":
                cuenta.equivalentes.append(m)
            elif estado == "vivo":
                cuenta.vivos.append(m)
                decir(f"  vivo · {m.operador} (vez {m.vez})\n      - {m.antes}\n      + {m.despues}")
            if n % 10 == 0 or n == len(todos):
                decir(f"  {id}: {n}/{len(todos)} · muertos {cuenta.muertos}, vivos {len(cuenta.vivos)}, "
                      f"por tiempo {cuenta.tiempo}; los pillan los casos escritos {cuenta.por_escritos}, "
                      f"el diferencial {cuenta.por_diferencial} (solo él, {cuenta.solo_diferencial})")
    return cuenta


def texto_con_error(reg, variante):
    """El texto que se mide con el error escrito `variante` en lugar de la referencia de `reg`."""
    from curso.medir import de_los_tests
    de_los_tests()
    import variantes
    return variante.texto if variante.modulo is None else variantes.aplicar(variante, reg.texto)


def medir_errores(cuenta, reg, espacio, limite, decir=print):
    """Los errores escritos del ejercicio de `reg` (variantes.ERRORES), cada uno en un hijo como un
    mutante: cuántos pillan los casos escritos y cuántos el diferencial."""
    from curso.medir import de_los_tests
    de_los_tests()
    import variantes
    lista = variantes.ERRORES.get(reg.id, [])
    cuenta.errores = len(lista)
    for variante in lista:
        corrida = evaluar_en_un_hijo(reg, texto_con_error(reg, variante), espacio, limite)
        cuenta.errores_por_escritos += corrida.estado != "vivo" and corrida.escritos
        cuenta.errores_por_diferencial += corrida.estado != "vivo" and corrida.diferencial
        if corrida.estado == "vivo":
            cuenta.errores_vivos.append(variante.nombre)
    decir(f"{reg.id}: {cuenta.errores} errores escritos; los pillan los casos escritos {cuenta.errores_por_escritos}, "
          f"el diferencial {cuenta.errores_por_diferencial}"
          + (f"; se cuelan {', '.join(cuenta.errores_vivos)}" if cuenta.errores_vivos else ""))


def tabla(cuentas):
    """La tabla de la medida, en Markdown: los errores escritos y los mutantes que pillan los casos
    escritos solos (antes) y con el diferencial (después)."""
    filas = ["| ejercicio | errores escritos | los pillan los casos escritos | los pilla el diferencial | mutantes | "
             "muertos antes (casos escritos) | muertos después (y el diferencial) | los mata el diferencial | "
             "solo el diferencial | vivos | equivalentes | por tiempo | no compilan | puntuación antes → después |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cuentas:
        if c.problema:
            filas.append(f"| {c.id} | – | – | – | – | – | – | – | – | – | – | – | – | {c.problema} |")
        else:
            filas.append(f"| {c.id} | {c.errores} | {c.errores_por_escritos} | {c.errores_por_diferencial} | {c.hechos} | "
                         f"{c.por_escritos} | {c.muertos + c.tiempo} | {c.por_diferencial} | {c.solo_diferencial} | "
                         f"{len(c.vivos)} | {len(c.equivalentes)} | {c.tiempo} | {c.no_compilan} | "
                         f"{c.puntuacion_antes:.0%} → {c.puntuacion:.0%} |")
    return "\n".join(filas)


def todos_los_ejercicios():
    from curso.comprobaciones import ejercicios
    return ejercicios.ordenados(ejercicios.cargar_registro())


def analizador():
    from curso.__main__ import Analizador  # el de todas las órdenes: en castellano, con --ayuda
    a = Analizador(prog="python -m curso medir mutantes",
                   description="Pruebas de mutación de cada ejercicio contra su comprobación.")
    a.add_argument("ejercicios", nargs="*", metavar="N.M", help="los ejercicios (todos, si no se dice ninguno)")
    a.add_argument("--muestra", type=int, default=None, metavar="K",
                   help="solo K mutantes al azar de cada ejercicio (la medida entera es lenta)")
    a.add_argument("--semilla", default="0", help="la semilla de la muestra (la misma semilla, la misma muestra)")
    a.add_argument("--vivos", action="store_true", help="al final, cada mutante vivo con su cambio")
    a.add_argument("--operadores", default="", metavar="TROZO",
                   help="solo los operadores cuyo nombre contiene TROZO (p. ej. CambioEnSQL)")
    a.add_argument("--sin-errores", action="store_true",
                   help="sin medir los errores escritos de variantes.py (solo los mutantes)")
    return a


def main(argumentos=()):
    """`python -m curso medir mutantes [N.M ...]`: la tabla de las pruebas de mutación. Devuelve las cuentas
    (con `cumple_objetivo`: ningún mutante vivo, y la salida es 0) o 2 si algún ejercicio no existe."""
    opciones = analizador().parse_args(list(argumentos))
    ids = opciones.ejercicios or todos_los_ejercicios()
    desconocidos = [i for i in ids if i not in todos_los_ejercicios()]
    if desconocidos:
        print(f"No hay ningún ejercicio {', '.join(desconocidos)}. Los que hay: {', '.join(todos_los_ejercicios())}.")
        return 2
    sys.dont_write_bytecode = True  # un .pyc de otro mutante del mismo tamaño y segundo se tomaría por este
    cuentas = []
    with ExitStack() as pila:
        for id in ids:
            region_de_id = region(id)
            if region_de_id.leccion == 7 and "CURSO_POSTGRES" not in os.environ:
                from curso.postgres.cluster import servidor_de_pruebas
                os.environ["CURSO_POSTGRES"] = pila.enter_context(servidor_de_pruebas())
                pila.callback(os.environ.pop, "CURSO_POSTGRES", None)
            operadores = [o for o in OPERADORES if opciones.operadores in o]
            cuentas.append(medir_ejercicio(id, opciones.muestra, opciones.semilla, operadores=operadores,
                                           errores=not opciones.sin_errores))
            sys.stdout.flush()
    print()
    if opciones.muestra is not None:
        print(f"(una muestra de {opciones.muestra} mutantes por ejercicio, semilla {opciones.semilla})")
    print(tabla(cuentas))
    if opciones.vivos:
        for c in cuentas:
            for m in c.vivos:
                print(f"\n{m.id} · {m.operador} (vez {m.vez})\n- {m.antes}\n+ {m.despues}")
    vivos = sum(len(c.vivos) for c in cuentas)
    # El objetivo: ningún mutante vivo sin explicar, y ninguna referencia que no pase (sale con 1 si no).
    return {"cuentas": cuentas, "vivos": vivos, "cumple_objetivo": vivos == 0 and not any(c.problema for c in cuentas)}
