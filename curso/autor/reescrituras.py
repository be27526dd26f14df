"""Para `python -m curso medir metamorfosis`: la solución de referencia de un ejercicio, reescrita de maneras que no cambian lo que hace.

Un alumno que contesta bien no escribe nuestro código: dice los errores con sus palabras, usa otros
nombres, un bucle donde pusimos una comprensión, un `else` donde pusimos un `return` temprano,
su propia comprobación donde el curso le daba `exigir_texto`, parámetros `:nombre` donde pusimos
`?`, `COMMIT;` donde pusimos `COMMIT`. Cada clase de `CLASES` hace una de esas cosas, con `ast`,
sobre la región del ejercicio (lo que hay entre `# BEGIN SOLUCIÓN` y `# END SOLUCIÓN` de sus
funciones, `mutantes.region`) y nada más: el código que da el curso queda igual, y en un módulo
con varios ejercicios se reescribe uno solo.
Las expresiones regulares solo miran dentro de una cadena (si es prosa o SQL) y solo cambian los
`?` de un SQL; el código se lee y se reescribe con su árbol.

Cada reescritura conserva el significado: lo que devuelve, lo que escribe en la base y qué
excepción lanza no cambian; los mensajes cambian de palabras y conservan los valores que citan.
Si una clase no tiene nada que cambiar en un ejercicio (no hay ningún mensaje, ningún bucle...),
`reescribir` devuelve None: «no aplica», y nada se inventa.

Las funciones cambiadas se vuelven a escribir con `ast.unparse` (sin sus comentarios), en su
sitio; lo demás del fichero queda byte a byte. Esto es solo `ast` y texto: no importa ni ejecuta
nada del alumno ni del curso.
"""
import ast
import copy
import re
from dataclasses import dataclass, field

from curso.alumno import componer

# Una cadena es un mensaje si tiene prosa (dos palabras seguidas) y no es SQL.
PROSA = re.compile(r"[^\W\d_]{2,}[ \t]+[^\W\d_]{2,}")
ES_SQL = re.compile(r"\b(SELECT|UPDATE|INSERT|DELETE|BEGIN|WHERE|ON CONFLICT|COMMIT|ROLLBACK)\b")

# Las palabras que pone `mensajes` en lugar de las nuestras. Ninguna frase de la referencia queda.
ENCABEZADO = "No vale: "
SIN_VALORES = "No vale (motivo {n})."

# Los parámetros de una sentencia: `?` en sqlite3 (lecciones 04 a 06), `%s` en psycopg (la 07). Un
# texto entre comillas simples del SQL ('tardia') se salta: su contenido no es un parámetro.
MARCAS = {"?": re.compile(r"'(?:[^']|'')*'|\?"), "%s": re.compile(r"'(?:[^']|'')*'|%s")}
CON_NOMBRE = {"?": ":{}", "%s": "%({})s"}
EJECUTAN = {"execute", "executemany"}

# Las funciones que consumen un generador entero: cambiarlo por una lista hecha antes no cambia nada.
CONSUMEN = {"list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "dict", "join"}


@dataclass
class Reescritura:
    """Una solución reescrita: el texto entero (módulo o celda) y las piezas que cambian."""
    id: str
    clase: str
    modulo: str | None   # None: una función del cuaderno (la celda entera es `texto`)
    texto: str
    piezas: str          # las piezas de primer nivel cambiadas, enteras (una celda `%%modulo --cambia`)
    cambios: int         # cuántos sitios se han reescrito


@dataclass
class Contexto:
    """Lo que una clase necesita saber del ejercicio: sus líneas y los nombres que ya hay."""
    lineas: set
    marca_sql: str
    usados: set = field(default_factory=set)     # todos los nombres del módulo
    globales: set = field(default_factory=set)   # los que el módulo define en su primer nivel

    def en_region(self, nodo):
        return getattr(nodo, "lineno", None) in self.lineas

    def nuevo_nombre(self, base):
        """Un nombre que no está en el módulo, a partir de `base`."""
        base = re.sub(r"\W", "_", base.encode("ascii", "ignore").decode()) or "valor"
        if not base.isidentifier():
            base = "v_" + base
        nombre, n = base, 1
        while nombre in self.usados:
            n += 1
            nombre = f"{base}{n}"
        self.usados.add(nombre)
        return nombre


# ---------------------------------------------------------------- utilidades de ast


def _listas_de_sentencias(nodo):
    """(nodo, campo) de cada lista de sentencias que cuelga directamente de `nodo`."""
    for campo in ("body", "orelse", "finalbody"):
        lista = getattr(nodo, campo, None)
        if isinstance(lista, list) and lista and isinstance(lista[0], ast.stmt):
            yield nodo, campo
    for manejador in getattr(nodo, "handlers", []) or []:
        yield manejador, "body"


def _por_listas(nodo, hacer):
    """Aplica `hacer(lista) -> lista` a cada lista de sentencias bajo `nodo`, de dentro afuera."""
    for padre, campo in list(_listas_de_sentencias(nodo)):
        for hijo in getattr(padre, campo):
            if not isinstance(hijo, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                _por_listas(hijo, hacer)
        setattr(padre, campo, hacer(getattr(padre, campo)))


def _nombres(nodo):
    return {n.id for n in ast.walk(nodo) if isinstance(n, ast.Name)}


def _renombrar(nodo, cambio):
    """`nodo` (una copia) con cada Name de `cambio` renombrado."""
    nodo = copy.deepcopy(nodo)
    for n in ast.walk(nodo):
        if isinstance(n, ast.Name) and n.id in cambio:
            n.id = cambio[n.id]
    return nodo


def _sentencia(fuente):
    return ast.parse(fuente).body


def _termina(cuerpo):
    """¿Sale siempre el bloque por su última sentencia (return o raise)?"""
    return bool(cuerpo) and isinstance(cuerpo[-1], (ast.Return, ast.Raise))


def _etiqueta(expr):
    """Cómo nombraría un alumno el valor `expr` en su mensaje: su nombre, su atributo o su clave."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        return str(expr.slice.value)
    if isinstance(expr, ast.Call):
        return _etiqueta(expr.func)
    if isinstance(expr, ast.Subscript):
        return _etiqueta(expr.value)
    return "valor"


# ---------------------------------------------------------------- mensajes


def _texto_fijo(nodo):
    if isinstance(nodo, ast.Constant) and isinstance(nodo.value, str):
        return nodo.value
    if isinstance(nodo, ast.JoinedStr):
        return "".join(v.value for v in nodo.values if isinstance(v, ast.Constant))
    return None


def _no_son_mensajes(funcion):
    """Los ids de las cadenas que no son mensajes aunque tengan prosa: claves, comparaciones,
    docstrings y lo que recibe un execute()."""
    fuera = set()
    for n in ast.walk(funcion):
        if isinstance(n, ast.Dict):
            fuera.update(id(k) for k in n.keys if k is not None)
        elif isinstance(n, ast.Compare):
            fuera.update(id(x) for x in [n.left, *n.comparators])
        elif isinstance(n, ast.Subscript):
            fuera.add(id(n.slice))
        elif isinstance(n, ast.Expr):
            fuera.add(id(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in EJECUTAN:
            fuera.update(id(a) for a in n.args)
    return fuera


def mensajes(funcion, ctx):
    """Cada mensaje de la región, con otras palabras: `No vale: numero = 2; fuente = 7.` (los mismos
    valores, con su conversión, y el nombre que el código les da); uno sin valores, `No vale (motivo
    N).`, distinto para cada mensaje distinto."""
    fuera, cambios, sueltos = _no_son_mensajes(funcion), [0], {}

    class Mensajes(ast.NodeTransformer):
        def visit_JoinedStr(self, nodo):
            return self._cambiar(nodo)

        def visit_Constant(self, nodo):
            return self._cambiar(nodo)

        def _cambiar(self, nodo):
            texto = _texto_fijo(nodo)
            if (texto is None or id(nodo) in fuera or not ctx.en_region(nodo) or not PROSA.search(texto)
                    or ES_SQL.search(texto)):
                return nodo
            cambios[0] += 1
            valores = [v for v in getattr(nodo, "values", []) if isinstance(v, ast.FormattedValue)]
            if not valores:
                n = sueltos.setdefault(texto, len(sueltos) + 1)
                return ast.copy_location(ast.Constant(SIN_VALORES.format(n=n)), nodo)
            partes = [ast.Constant(ENCABEZADO)]
            for i, v in enumerate(valores):
                partes += [ast.Constant(("; " if i else "") + f"{_etiqueta(v.value)} = "), v]
            partes.append(ast.Constant("."))
            return ast.copy_location(ast.JoinedStr(_juntar(partes)), nodo)

    Mensajes().visit(funcion)
    return cambios[0]


def _juntar(partes):
    """Las partes de un f-string con las constantes seguidas en una."""
    juntas = []
    for p in partes:
        if isinstance(p, ast.Constant) and juntas and isinstance(juntas[-1], ast.Constant):
            juntas[-1] = ast.Constant(juntas[-1].value + p.value)
        else:
            juntas.append(p)
    return juntas


# ---------------------------------------------------------------- SQL con nombres


def sql(funcion, ctx):
    """Cada `execute(SQL, (a, b))` de la región con parámetros por nombre: `?` pasa a `:a` (en la 07,
    `%s` a `%(a)s`) y la tupla, a un dict `{"a": a, "b": b}`. Un mismo valor, un mismo nombre."""
    marca, cambios = ctx.marca_sql, 0
    for n in ast.walk(funcion):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in EJECUTAN
                and ctx.en_region(n) and len(n.args) == 2 and isinstance(n.args[1], (ast.Tuple, ast.List))
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
            continue
        texto, valores = n.args[0].value, n.args[1].elts
        marcas = [m for m in MARCAS[marca].finditer(texto) if m.group() == marca]
        if not marcas or len(marcas) != len(valores) or any(isinstance(v, ast.Starred) for v in valores):
            continue
        nombres, de_cada = [], {}
        for v in valores:
            clave = ast.dump(v)
            if clave not in de_cada:
                de_cada[clave] = _nombre_de_parametro(v, set(de_cada.values()))
            nombres.append(de_cada[clave])
        trozos, desde = [], 0
        for m, nombre in zip(marcas, nombres, strict=True):
            trozos += [texto[desde:m.start()], CON_NOMBRE[marca].format(nombre)]
            desde = m.end()
        n.args[0] = ast.Constant("".join(trozos) + texto[desde:])
        unicos = list(dict.fromkeys(nombres))
        primero = {nombre: v for nombre, v in reversed(list(zip(nombres, valores, strict=True)))}
        n.args[1] = ast.Dict(keys=[ast.Constant(k) for k in unicos], values=[primero[k] for k in unicos])
        cambios += 1
    return cambios


def _nombre_de_parametro(expr, usados):
    base = re.sub(r"\W", "_", ast.unparse(expr) if not isinstance(expr, (ast.Name, ast.Attribute))
                  else _etiqueta(expr)).strip("_").lower() or "valor"
    base = re.sub(r"_+", "_", base.encode("ascii", "ignore").decode()) or "valor"
    if not base[0].isalpha():
        base = "v_" + base
    nombre, n = base, 1
    while nombre in usados:
        n += 1
        nombre = f"{base}_{n}"
    return nombre


# ---------------------------------------------------------------- sentencias con punto y coma


def sentencias(funcion, ctx):
    """Cada sentencia SQL que la región manda (el texto de un `execute`), con un `;` al final, o sin
    él si ya lo tenía: `COMMIT` pasa a `COMMIT;`. sqlite3 y psycopg aceptan las dos formas de una
    sentencia sola (`test_sqlite_acepta_una_sentencia_acabada_en_punto_y_coma`)."""
    cambios = 0
    for n in ast.walk(funcion):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in EJECUTAN
                and ctx.en_region(n) and n.args and isinstance(n.args[0], ast.Constant)
                and isinstance(n.args[0].value, str) and ES_SQL.search(n.args[0].value)):
            continue
        texto = n.args[0].value.rstrip()
        n.args[0] = ast.Constant(texto[:-1].rstrip() if texto.endswith(";") else texto + ";")
        cambios += 1
    return cambios


# ---------------------------------------------------------------- nombres locales


def _ligaduras(funcion):
    """{nombre: [(línea, nodo)]} de cada aparición de un nombre en la función (Name y `except … as`)."""
    apariciones = {}
    for n in ast.walk(funcion):
        if isinstance(n, ast.Name):
            apariciones.setdefault(n.id, []).append((n.lineno, n))
        elif isinstance(n, ast.ExceptHandler) and n.name:
            apariciones.setdefault(n.name, []).append((n.lineno, n))
    return apariciones


def nombres(funcion, ctx):
    """Cada nombre local de la región (los que la región asigna y que solo aparecen en ella), con
    otro: `fila` pasa a `mi_fila`. Los parámetros y los nombres del módulo no cambian."""
    parametros = {a.arg for a in ast.walk(funcion) if isinstance(a, ast.arg)}
    declarados = {x for n in ast.walk(funcion) if isinstance(n, (ast.Global, ast.Nonlocal)) for x in n.names}
    asignados = {n.id for n in ast.walk(funcion) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    asignados |= {n.name for n in ast.walk(funcion) if isinstance(n, ast.ExceptHandler) and n.name}
    cambios = 0
    for nombre, donde in sorted(_ligaduras(funcion).items()):
        if (nombre not in asignados or nombre in parametros or nombre in declarados or nombre == "_"
                or nombre in ctx.globales
                or not all(linea in ctx.lineas for linea, _ in donde)):
            continue
        nuevo = ctx.nuevo_nombre(f"mi_{nombre}")
        for _, n in donde:
            if isinstance(n, ast.Name):
                n.id = nuevo
            else:
                n.name = nuevo
        cambios += 1
    return cambios


# ---------------------------------------------------------------- bucles y comprensiones


def bucles(funcion, ctx):
    """Bucles ↔ comprensiones, en los dos sentidos y en la misma pasada (cada uno sobre lo que
    había, no sobre lo que la otra dirección acaba de escribir):

    - `x = []` seguido de `for … : [if …:] x.append(e)` pasa a `x = [e for … if …]`; y
      `for v in it: if c: return e` pasa a `next(((e,) for v in it if c), None)` y su `if`;
    - una comprensión (o un generador que se consume entero: `join`, `sorted`, `list`...) pasa a
      un bucle que llena una lista (o un conjunto, o un dict) antes de la sentencia; `any`/`all`,
      a un bucle que para en cuanto sabe la respuesta."""
    originales = {id(n) for n in ast.walk(funcion)
                  if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))}
    cambios = [0]

    def hacer(lista):
        lista = _a_comprensiones(lista, funcion, ctx, cambios)
        return _a_bucles(lista, ctx, originales, cambios)
    _por_listas(funcion, hacer)
    return cambios[0]


def _fuera_del_bucle(bucle, funcion, nombres_del_bucle):
    """¿Aparece alguno de `nombres_del_bucle` en la función fuera de `bucle`?"""
    dentro = {id(n) for n in ast.walk(bucle)}
    return any(isinstance(n, ast.Name) and n.id in nombres_del_bucle and id(n) not in dentro
               for n in ast.walk(funcion))


def _a_comprensiones(lista, funcion, ctx, cambios):
    nueva, i = [], 0
    while i < len(lista):
        s = lista[i]
        siguiente = lista[i + 1] if i + 1 < len(lista) else None
        if (isinstance(s, ast.For) and not s.orelse and ctx.en_region(s)
                and not _fuera_del_bucle(s, funcion, _nombres(s.target))):
            cambio = _devuelve_el_primero(s, ctx)
            if cambio:
                nueva += cambio
                cambios[0] += 1
                i += 1
                continue
        if (isinstance(s, ast.Assign) and isinstance(siguiente, ast.For) and ctx.en_region(s)
                and ctx.en_region(siguiente)):
            comprension = _llena_una_coleccion(s, siguiente, funcion)
            if comprension is not None:
                nueva.append(ast.copy_location(ast.Assign([s.targets[0]], comprension), s))
                cambios[0] += 1
                i += 2
                continue
        nueva.append(s)
        i += 1
    return nueva


def _devuelve_el_primero(bucle, ctx):
    """`for v in it: if c: return e` → `hallado = next(((e,) for v in it if c), None)` y
    `if hallado is not None: return hallado[0]` (la tupla: `e` podría ser None)."""
    if len(bucle.body) != 1 or not isinstance(bucle.body[0], ast.If):
        return None
    si = bucle.body[0]
    if si.orelse or len(si.body) != 1 or not isinstance(si.body[0], ast.Return) or si.body[0].value is None:
        return None
    generador = ast.GeneratorExp(ast.Tuple([si.body[0].value], ast.Load()),
                                 [ast.comprehension(bucle.target, bucle.iter, [si.test], 0)])
    hallado = ctx.nuevo_nombre("hallado")
    primero = ast.Assign([ast.Name(hallado, ast.Store())],
                         ast.Call(ast.Name("next", ast.Load()), [generador, ast.Constant(None)], []))
    devolver = _sentencia(f"if {hallado} is not None:\n    return {hallado}[0]")[0]
    return [ast.copy_location(primero, bucle), ast.copy_location(devolver, bucle)]


def _llena_una_coleccion(asignacion, bucle, funcion):
    """La comprensión equivalente a `x = []` + `for …: [if c:] x.append(e)` (o set/.add, o
    dict/x[k] = v), o None si no es ese patrón."""
    if len(asignacion.targets) != 1 or not isinstance(asignacion.targets[0], ast.Name) or bucle.orelse:
        return None
    x, vacio = asignacion.targets[0].id, asignacion.value
    tipo = ("list" if isinstance(vacio, ast.List) and not vacio.elts else
            "dict" if isinstance(vacio, ast.Dict) and not vacio.keys else
            "set" if (isinstance(vacio, ast.Call) and isinstance(vacio.func, ast.Name) and vacio.func.id == "set"
                      and not vacio.args and not vacio.keywords) else None)
    cuerpo, condiciones = bucle.body, []
    if len(cuerpo) == 1 and isinstance(cuerpo[0], ast.If) and not cuerpo[0].orelse:
        condiciones, cuerpo = [cuerpo[0].test], cuerpo[0].body
    if tipo is None or len(cuerpo) != 1 or _fuera_del_bucle(bucle, funcion, _nombres(bucle.target)):
        return None
    s = cuerpo[0]
    generadores = [ast.comprehension(bucle.target, bucle.iter, condiciones, 0)]
    if tipo in ("list", "set") and isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        llamada = s.value
        if (isinstance(llamada.func, ast.Attribute) and isinstance(llamada.func.value, ast.Name)
                and llamada.func.value.id == x and llamada.func.attr == ("append" if tipo == "list" else "add")
                and len(llamada.args) == 1 and not llamada.keywords
                and x not in _nombres(llamada.args[0]) | _nombres(bucle.iter)
                and not any(x in _nombres(c) for c in condiciones)):
            return (ast.ListComp if tipo == "list" else ast.SetComp)(llamada.args[0], generadores)
    if (tipo == "dict" and isinstance(s, ast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], ast.Subscript) and isinstance(s.targets[0].value, ast.Name)
            and s.targets[0].value.id == x and x not in _nombres(s.value) | _nombres(s.targets[0].slice)):
        return ast.DictComp(s.targets[0].slice, s.value, generadores)
    return None


def _donde_se_evalua_ya(sentencia):
    """Las expresiones de `sentencia` que se evalúan una vez, al empezar, pase lo que pase (las de
    su cabecera): de ahí se puede sacar una comprensión a un bucle anterior."""
    if isinstance(sentencia, (ast.Return, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return [sentencia.value] if sentencia.value is not None else []
    if isinstance(sentencia, ast.If):
        return [sentencia.test]
    if isinstance(sentencia, ast.For):
        return [sentencia.iter]
    if isinstance(sentencia, ast.Raise):
        return [sentencia.exc] if sentencia.exc is not None else []
    if isinstance(sentencia, ast.With):
        return [item.context_expr for item in sentencia.items]
    return []


def _comprensiones_seguras(expr, originales):
    """(comprensión, llamada que la consume o None) de cada comprensión de `expr` que se evalúa
    siempre y entera: ni dentro de un and/or, un `x if c else y`, una lambda u otra comprensión."""
    encontradas = []

    def mirar(n, padre):
        if isinstance(n, (ast.Lambda, ast.BoolOp, ast.IfExp)):
            return
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if id(n) in originales:
                if isinstance(n, ast.GeneratorExp):
                    if _consume(padre, n):
                        encontradas.append((n, padre))
                else:
                    encontradas.append((n, None))
            return
        for hijo in ast.iter_child_nodes(n):
            mirar(hijo, n)
    mirar(expr, None)
    return encontradas


def _nombre_llamado(llamada):
    f = llamada.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _consume(padre, generador):
    """¿Es `generador` el único argumento de una llamada que lo recorre entero (o any/all)?"""
    return (isinstance(padre, ast.Call) and padre.args == [generador] and not padre.keywords
            and (_nombre_llamado(padre) in CONSUMEN or (_nombre_llamado(padre) in ("any", "all")
                                                         and isinstance(padre.func, ast.Name)
                                                         and len(generador.generators) == 1)))


def _a_bucles(lista, ctx, originales, cambios):
    nueva = []
    for s in lista:
        if ctx.en_region(s):
            for expr in _donde_se_evalua_ya(s):
                for comprension, llamada in _comprensiones_seguras(expr, originales):
                    antes, en_su_lugar = _bucle_de(comprension, llamada, ctx)
                    nueva += [ast.copy_location(a, s) for a in antes]
                    _sustituir(s, llamada if llamada is not None and _nombre_llamado(llamada) in ("any", "all")
                               else comprension, en_su_lugar)
                    cambios[0] += 1
        nueva.append(s)
    return nueva


def _bucle_de(comprension, llamada, ctx):
    """(sentencias, expresión): el bucle que hace lo mismo que `comprension` y lo que queda en su lugar."""
    propios = {}
    for g in comprension.generators:
        for nombre in sorted(_nombres(g.target)):
            propios.setdefault(nombre, ctx.nuevo_nombre(f"cada_{nombre}"))
    todo_o_algo = _nombre_llamado(llamada) if llamada is not None else None
    if todo_o_algo in ("any", "all"):
        resultado = ctx.nuevo_nombre("hay_alguno" if todo_o_algo == "any" else "todos_cumplen")
        inicio = _sentencia(f"{resultado} = {todo_o_algo == 'all'}")
        cumple = _renombrar(comprension.elt, propios)
        prueba = cumple if todo_o_algo == "any" else ast.UnaryOp(ast.Not(), cumple)
        mas_adentro = [ast.If(prueba, _sentencia(f"{resultado} = {todo_o_algo == 'any'}\nbreak"), [])]
    else:
        clase = type(comprension)
        resultado = ctx.nuevo_nombre({ast.SetComp: "conjunto", ast.DictComp: "tabla"}.get(clase, "lista"))
        inicio = _sentencia(f"{resultado} = " + {ast.SetComp: "set()", ast.DictComp: "{}"}.get(clase, "[]"))
        if clase is ast.DictComp:
            mas_adentro = [ast.Assign([ast.Subscript(ast.Name(resultado, ast.Load()),
                                                     _renombrar(comprension.key, propios), ast.Store())],
                                      _renombrar(comprension.value, propios))]
        else:
            metodo = "add" if clase is ast.SetComp else "append"
            mas_adentro = [ast.Expr(ast.Call(ast.Attribute(ast.Name(resultado, ast.Load()), metodo, ast.Load()),
                                             [_renombrar(comprension.elt, propios)], []))]
    for i, g in reversed(list(enumerate(comprension.generators))):
        for condicion in reversed(g.ifs):
            mas_adentro = [ast.If(_renombrar(condicion, propios), mas_adentro, [])]
        iterable = g.iter if i == 0 else _renombrar(g.iter, propios)  # el primero se evalúa fuera
        mas_adentro = [ast.For(_renombrar(g.target, propios), iterable, mas_adentro, [])]
    return inicio + mas_adentro, ast.Name(resultado, ast.Load())


def _sustituir(raiz, viejo, nuevo):
    for n in ast.walk(raiz):
        for campo, valor in ast.iter_fields(n):
            if valor is viejo:
                setattr(n, campo, nuevo)
                return
            if isinstance(valor, list) and any(v is viejo for v in valor):
                setattr(n, campo, [nuevo if v is viejo else v for v in valor])
                return
    raise LookupError("la comprensión no está en su sentencia")


# ---------------------------------------------------------------- return temprano ↔ else


def retorno(funcion, ctx):
    """`if c: return …` (o raise) seguido de más sentencias pasa a `if c: return … else: <las
    demás>`; y un `if c: return … else: …` pasa a `if c: return …` con lo del else detrás."""
    con_else = {id(n) for n in ast.walk(funcion) if isinstance(n, ast.If) and n.orelse}
    sin_else = {id(n) for n in ast.walk(funcion) if isinstance(n, ast.If) and not n.orelse}
    cambios = [0]

    def hacer(lista):
        nueva = []
        for i, s in enumerate(lista):
            if isinstance(s, ast.If) and ctx.en_region(s) and _termina(s.body):
                if id(s) in con_else:
                    nueva += [ast.copy_location(ast.If(s.test, s.body, []), s), *s.orelse]
                    cambios[0] += 1
                    continue
                resto = lista[i + 1:]
                if id(s) in sin_else and resto and all(ctx.en_region(r) for r in resto):
                    nueva.append(ast.copy_location(ast.If(s.test, s.body, hacer(resto)), s))
                    cambios[0] += 1
                    return nueva
            nueva.append(s)
        return nueva
    _por_listas(funcion, hacer)
    return cambios[0]


# ---------------------------------------------------------------- las ayudas del curso, a mano

# Lo que hace cada ayuda del curso, escrito como lo escribiría un alumno: la misma comprobación (lo
# que acepta y lo que rechaza, con el mismo tipo de excepción) y su propio mensaje, que nombra lo
# que comprueba (`que`, p. ej. «El texto de la afirmación 2») y no el valor. VALOR es el argumento.
AYUDAS = {
    # validacion.exigir_texto(valor, que, vacio_permitido=False)
    ("exigir_texto", False): '''
if not isinstance(VALOR, str) or not VALOR.strip():
    raise ValueError(MENSAJE(": hace falta un texto con algo escrito."))
try:
    VALOR.encode("utf-8")
except UnicodeEncodeError:
    raise ValueError(MENSAJE(": tiene caracteres que no se guardan en UTF-8.")) from None
''',
    ("exigir_texto", True): '''
if not isinstance(VALOR, str):
    raise ValueError(MENSAJE(": hace falta un texto."))
try:
    VALOR.encode("utf-8")
except UnicodeEncodeError:
    raise ValueError(MENSAJE(": tiene caracteres que no se guardan en UTF-8.")) from None
''',
    # validacion.exigir_entero_positivo(valor, que): un int de verdad (no un bool), de 1 a 2**63 - 1
    ("exigir_entero_positivo", False): '''
if type(VALOR) is not int or VALOR < 1 or VALOR >= 2 ** 63:
    raise ValueError(MENSAJE(": hace falta un número entero de 1 en adelante que quepa en SQLite."))
''',
}


def ayudas(funcion, ctx):
    """Cada llamada de la región a una ayuda del curso (`exigir_texto`, `exigir_entero_positivo`)
    cambiada por la comprobación y el `raise` del alumno (ver AYUDAS)."""
    cambios = [0]

    def hacer(lista):
        nueva = []
        for s in lista:
            propias = _a_mano(s) if ctx.en_region(s) else None
            if propias is None:
                nueva.append(s)
            else:
                nueva += [ast.copy_location(p, s) for p in propias]
                cambios[0] += 1
        return nueva
    _por_listas(funcion, hacer)
    return cambios[0]


def _a_mano(sentencia):
    """Las sentencias del alumno en lugar de `sentencia`, si es una llamada a una ayuda de AYUDAS."""
    if not (isinstance(sentencia, ast.Expr) and isinstance(sentencia.value, ast.Call)
            and isinstance(sentencia.value.func, ast.Name)):
        return None
    llamada = sentencia.value
    vacio = next((k.value for k in llamada.keywords if k.arg == "vacio_permitido"),
                 llamada.args[2] if len(llamada.args) > 2 else ast.Constant(False))
    plantilla = AYUDAS.get((llamada.func.id, getattr(vacio, "value", None)))
    if plantilla is None or len(llamada.args) < 2:
        return None
    valor, que = llamada.args[0], llamada.args[1]
    if not isinstance(valor, (ast.Name, ast.Subscript, ast.Attribute)):
        return None  # se evaluaría varias veces: que lo haga quien tenga una variable

    class Rellenar(ast.NodeTransformer):
        def visit_Name(self, n):
            return copy.deepcopy(valor) if n.id == "VALOR" else n

        def visit_Call(self, n):
            if isinstance(n.func, ast.Name) and n.func.id == "MENSAJE":
                return ast.JoinedStr(_juntar(_partes_de(que) + [ast.Constant(n.args[0].value)]))
            self.generic_visit(n)
            return n
    return [Rellenar().visit(s) for s in _sentencia(plantilla)]


def _partes_de(que):
    """Las partes de un f-string que empieza por `que` (un texto, un f-string u otra expresión)."""
    if isinstance(que, ast.JoinedStr):
        return [copy.deepcopy(v) for v in que.values]
    if isinstance(que, ast.Constant) and isinstance(que.value, str):
        return [ast.Constant(que.value)]
    return [ast.FormattedValue(copy.deepcopy(que), -1, None)]


# ---------------------------------------------------------------- las clases y reescribir


CLASES = {
    "mensajes": (mensajes, "cada mensaje con otras palabras, con los mismos valores"),
    "sql": (sql, "parámetros SQL por nombre (:nombre, %(nombre)s) y la llamada con un dict"),
    "sentencias": (sentencias, "cada sentencia SQL con `;` al final (o sin él)"),
    "nombres": (nombres, "otros nombres para las variables locales"),
    "bucles": (bucles, "bucles ↔ comprensiones"),
    "retorno": (retorno, "return temprano ↔ else"),
    "ayudas": (ayudas, "la comprobación y el raise propios en lugar de exigir_texto y compañía"),
}


def funciones_de(arbol, lineas):
    """Las definiciones de función (también métodos) más internas que contienen alguna de `lineas`."""
    todas = [n for n in ast.walk(arbol) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    elegidas = {}
    for linea in lineas:
        dentro = [f for f in todas if f.lineno <= linea <= f.end_lineno]
        if dentro:
            f = max(dentro, key=lambda f: f.lineno)
            elegidas[id(f)] = f
    return sorted(elegidas.values(), key=lambda f: f.lineno)


def _globales(arbol):
    """Los nombres que define el primer nivel del módulo: asignaciones, imports, def y class."""
    nombres = set()
    for n in arbol.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            nombres.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            nombres.update((a.asname or a.name).split(".")[0] for a in n.names)
        else:
            nombres.update(x.id for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store))
    return nombres


def _empalmar(texto, cambiadas):
    """`texto` con cada función de `cambiadas` ([(original, nueva)]) reescrita en su sitio."""
    lineas = texto.split("\n")
    for original, nueva in sorted(cambiadas, key=lambda par: -par[0].lineno):
        inicio = min([original.lineno] + [d.lineno for d in original.decorator_list]) - 1
        lineas[inicio:original.end_lineno] = _sangrado(ast.unparse(nueva), " " * original.col_offset)
    return "\n".join(lineas)


def _sangrado(texto, sangria):
    """Las líneas de `texto` con `sangria` delante, salvo las de dentro de un texto de varias líneas
    (un docstring: su contenido ya lleva la sangría que tenía)."""
    dentro = {linea for n in ast.walk(ast.parse(texto)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
              for linea in range(n.lineno + 1, n.end_lineno + 1)}
    return [sangria + l if l and i not in dentro else l for i, l in enumerate(texto.split("\n"), 1)]


def piezas_cambiadas(antes, despues, nombre):
    """Las piezas de primer nivel de `despues` que no son iguales en `antes`, enteras, como las
    escribiría una celda `%%modulo NOMBRE --cambia`."""
    viejas = {(p.clave, tuple(p.texto)) for p in componer.piezas(antes, nombre)[0]}
    nuevas = [p for p in componer.piezas(despues, nombre)[0] if (p.clave, tuple(p.texto)) not in viejas]
    return "\n\n\n".join("\n".join(p.texto) for p in nuevas) + "\n"


def reescribir(reg, clase):
    """La `Reescritura` de la región `reg` (de `mutantes.region`) con la clase `clase`, o None si
    la clase no tiene nada que cambiar en ella («no aplica»)."""
    hacer, _ = CLASES[clase]
    arbol = ast.parse(reg.texto)
    ctx = Contexto(set(reg.lineas), "%s" if str(reg.leccion) == "7" else "?",
                   {n.id for n in ast.walk(arbol) if isinstance(n, ast.Name)}
                   | {a.arg for a in ast.walk(arbol) if isinstance(a, ast.arg)}, _globales(arbol))
    cambiadas, cambios = [], 0
    for funcion in funciones_de(arbol, reg.lineas):
        nueva = copy.deepcopy(funcion)
        hechos = hacer(nueva, ctx)
        if hechos:
            cambiadas.append((funcion, ast.fix_missing_locations(nueva)))
            cambios += hechos
    if not cambiadas:
        return None
    texto = _empalmar(reg.texto, cambiadas)
    if texto == reg.texto:
        return None
    compile(texto, f"<{reg.id} {clase}>", "exec")  # una reescritura que no compila es un defecto de aquí
    piezas = piezas_cambiadas(reg.texto, texto, reg.modulo or "la celda") if reg.modulo else texto
    return Reescritura(reg.id, clase, reg.modulo, texto, piezas, cambios)
