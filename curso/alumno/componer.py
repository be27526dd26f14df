"""Para `%%modulo NOMBRE --cambia` en los cuadernos: un módulo a partir de su versión anterior y de un cambio.

Cuando una lección cambia un módulo que ya existe (la 03 le da a `agente` un parámetro más, la 05
le añade `buscar` a las herramientas), la celda enseña solo lo que cambia: las piezas nuevas o
cambiadas, cada una entera. El resto del fichero sale de la versión anterior:

- un `def`, una `class` o una asignación a un nombre sustituye a la del mismo nombre, en su
  sitio, con sus decoradores y el comentario pegado encima (sin línea en blanco en medio);
- una pieza nueva va detrás de la que la precede en la celda. Las asignaciones con que empieza
  la celda (sus constantes) van con las del principio del fichero, y un `def` o una `class`
  nueva que no sigue a ninguna otra de la celda, al final (antes de `if __name__ == "__main__":`);
- un import del mismo módulo que uno del fichero lo sustituye; uno nuevo entra en su grupo
  (biblioteca estándar o módulos propios), en orden alfabético;
- el docstring de la celda es un párrafo más del docstring del módulo (si ya lo tiene, no se
  repite: ejecutar la celda dos veces da el mismo fichero que una, también tras otra celda).

Solo texto y `ast`: aquí no se escribe ni se importa nada. Si la celda no es Python, o trae algo
que no se sabe dónde poner, `ErrorAlComponer` lo dice en castellano, y quien llama no escribe nada.
"""
import ast
import difflib
import sys
from dataclasses import dataclass, field
from itertools import pairwise

DEFINICIONES = ("def", "class")  # las piezas que PEP 8 separa con dos líneas en blanco
COMILLAS = '"""'


class ErrorAlComponer(ValueError):
    """La celda o el fichero anterior no permiten componer: el mensaje dice qué y dónde."""


@dataclass
class Pieza:
    """Una sentencia de primer nivel con lo que la acompaña."""
    clave: str | None  # el nombre, "import x", "from m", "__doc__", "__main__"; None si no tiene
    tipo: str          # "doc", "import", "def", "class", "asignacion", "main" u "otra"
    texto: list        # sus líneas: comentario pegado, decoradores y la sentencia
    hueco: list        # las líneas entre la pieza anterior y esta (en blanco o comentarios sueltos)
    linea: int         # dónde empieza, contando desde 1
    tocada: bool = False


@dataclass
class Composicion:
    """El texto compuesto y lo que ha cambiado, por nombres."""
    texto: str
    cambia: list = field(default_factory=list)
    anade: list = field(default_factory=list)
    iguales: list = field(default_factory=list)
    imports_nuevos: list = field(default_factory=list)
    imports_cambiados: list = field(default_factory=list)
    parrafo: bool = False

    def resumen(self):
        """Las líneas que dicen qué ha cambiado, en castellano."""
        lineas = [f"{que}: {', '.join(nombres)}" for que, nombres in (
            ("cambia", self.cambia), ("añade", self.anade), ("sin cambios", self.iguales)) if nombres]
        lineas += [f"{que}: {'; '.join(imports)}" for que, imports in (
            ("import nuevo", self.imports_nuevos), ("import que cambia", self.imports_cambiados)) if imports]
        if self.parrafo:
            lineas.append("docstring: un párrafo más")
        return lineas or ["nada: la celda no cambia el módulo"]


def _clave(nodo, es_la_primera):
    """(clave, tipo) de una sentencia de primer nivel."""
    if (es_la_primera and isinstance(nodo, ast.Expr) and isinstance(nodo.value, ast.Constant)
            and isinstance(nodo.value.value, str)):
        return "__doc__", "doc"
    if isinstance(nodo, ast.Import):
        return "import " + ", ".join(a.name for a in nodo.names), "import"
    if isinstance(nodo, ast.ImportFrom):
        return "from " + "." * nodo.level + (nodo.module or ""), "import"
    if isinstance(nodo, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return nodo.name, "def"
    if isinstance(nodo, ast.ClassDef):
        return nodo.name, "class"
    objetivos = nodo.targets if isinstance(nodo, ast.Assign) else [getattr(nodo, "target", None)]
    if isinstance(nodo, (ast.Assign, ast.AnnAssign)) and len(objetivos) == 1 and isinstance(objetivos[0], ast.Name):
        return objetivos[0].id, "asignacion"
    if (isinstance(nodo, ast.If) and isinstance(nodo.test, ast.Compare)
            and isinstance(nodo.test.left, ast.Name) and nodo.test.left.id == "__name__"):
        return "__main__", "main"
    return None, "otra"


def piezas(fuente, que):
    """(piezas, cola) de `fuente`: sus sentencias de primer nivel y las líneas de después."""
    try:
        arbol = ast.parse(fuente)
    except SyntaxError as e:
        raise ErrorAlComponer(f"{que} no es Python válido (línea {e.lineno}: {e.msg}).") from None
    lineas = fuente.split("\n")
    resultado, fin_anterior = [], 0  # fin_anterior: índice de la primera línea tras la pieza anterior
    for i, nodo in enumerate(arbol.body):
        inicio = min([nodo.lineno] + [d.lineno for d in getattr(nodo, "decorator_list", [])]) - 1
        if inicio < fin_anterior:
            raise ErrorAlComponer(f"{que}: en la línea {nodo.lineno} hay dos sentencias; pon cada una en su línea.")
        while inicio > fin_anterior and lineas[inicio - 1].lstrip().startswith("#"):
            inicio -= 1  # el comentario pegado encima es de la pieza
        clave, tipo = _clave(nodo, i == 0)
        resultado.append(Pieza(clave, tipo, lineas[inicio:nodo.end_lineno], lineas[fin_anterior:inicio], inicio + 1))
        fin_anterior = nodo.end_lineno
    return resultado, lineas[fin_anterior:]


def _suelto(hueco):
    """¿Hay algo más que líneas en blanco en `hueco` (un comentario suelto)?"""
    return any(l.strip() for l in hueco)


def _comentarios(hueco):
    """Los comentarios sueltos de `hueco`, sin las líneas en blanco: el mismo delante de la misma
    pieza (la celda ejecutada otra vez) no deja duda de dónde va."""
    return [l.strip() for l in hueco if l.strip()]


def _es_de_la_biblioteca(pieza):
    nombre = pieza.clave.split()[1].split(".")[0]
    return nombre in sys.stdlib_module_names


def _orden(pieza):
    """El orden de isort: primero `import x`, después `from x import y`, cada uno por módulo."""
    palabra, modulo = pieza.clave.split(" ", 1)
    return (palabra == "from", modulo.lower())


def _importar(resultado, nueva):
    """Pone el import `nueva` en su grupo del fichero (los grupos van separados por una línea en blanco)."""
    indices = [i for i, p in enumerate(resultado) if p.tipo == "import"]
    grupos = []
    for i in indices:
        if grupos and grupos[-1][-1] == i - 1 and not resultado[i].hueco:
            grupos[-1].append(i)
        else:
            grupos.append([i])
    suyo = [g for g in grupos if _es_de_la_biblioteca(resultado[g[0]]) == _es_de_la_biblioteca(nueva)]
    nueva.hueco = []
    if suyo:
        grupo = suyo[0]
        detras = [i for i in grupo if _orden(resultado[i]) > _orden(nueva)]
        if detras:
            donde = detras[0]
            nueva.hueco, resultado[donde].hueco = resultado[donde].hueco, []
        else:
            donde = grupo[-1] + 1
    elif grupos and _es_de_la_biblioteca(nueva):  # la biblioteca estándar va delante de lo propio
        donde = grupos[0][0]
        nueva.hueco, resultado[donde].hueco = resultado[donde].hueco, [""]
    elif grupos:
        donde = grupos[-1][-1] + 1
        nueva.hueco = [""]
    else:  # el fichero no importaba nada: detrás del docstring
        donde = 1 if resultado and resultado[0].tipo == "doc" else 0
        if donde < len(resultado) and not _suelto(resultado[donde].hueco) and not resultado[donde].hueco:
            resultado[donde].hueco = [""]
    resultado.insert(donde, nueva)


def _parrafo(viejo, nuevo):
    """Las líneas del docstring `viejo` con el texto del docstring `nuevo` como último párrafo."""
    pegado = [l for l in viejo.texto if l.lstrip().startswith("#")]  # p. ej. un «#!» encima
    a = "\n".join(viejo.texto[len(pegado):])
    b = "\n".join(nuevo.texto[len([l for l in nuevo.texto if l.lstrip().startswith("#")]):])
    for texto, de_quien in ((a, "del módulo"), (b, "de la celda")):
        if not (texto.startswith(COMILLAS) and texto.endswith(COMILLAS) and len(texto) >= 2 * len(COMILLAS)):
            raise ErrorAlComponer(f"El docstring {de_quien} tiene que ir entre triples comillas dobles ({COMILLAS}).")
    cuerpo_viejo, cuerpo_nuevo = a[: -len(COMILLAS)].rstrip(), b[len(COMILLAS): -len(COMILLAS)].strip()
    if "\n\n" + cuerpo_nuevo + "\n\n" in cuerpo_viejo + "\n\n":
        # Ya lo tiene (la celda se ha ejecutado antes sobre este fichero), al final o, si otra celda
        # de la misma lección añadió después su párrafo, en medio.
        return None
    return pegado + (cuerpo_viejo + "\n\n" + cuerpo_nuevo + "\n" + COMILLAS).split("\n")


def _donde_acaba(resultado):
    """El índice donde va lo que se añade al final: antes de `if __name__ == "__main__":`."""
    for i, p in enumerate(resultado):
        if p.tipo == "main":
            return i
    return len(resultado)


def _cabecera(resultado):
    """El índice detrás de la última pieza de la cabecera del fichero: docstring, imports y lo
    que haya antes del primer def o class."""
    fin = 0
    for i, p in enumerate(resultado):
        if p.tipo in DEFINICIONES or p.tipo == "main":
            break
        fin = i + 1
    return fin


def _nombre(pieza):
    return pieza.clave + ("()" if pieza.tipo == "def" else "")


def _separar(resultado):
    """Dos líneas en blanco junto a cada def o class que se haya tocado (PEP 8)."""
    for anterior, pieza in pairwise(resultado):
        if not (anterior.tocada or pieza.tocada) or _suelto(pieza.hueco):
            continue
        if anterior.tipo in DEFINICIONES or pieza.tipo in DEFINICIONES:
            pieza.hueco = [""] * max(2, len(pieza.hueco))


def componer(anterior, cambio, nombre="el módulo"):
    """El módulo `anterior` (su texto) con las piezas de la celda `cambio`: una `Composicion`.

    Lanza ErrorAlComponer si alguno de los dos no es Python, si la celda trae algo sin nombre
    (una llamada suelta, un bucle), un nombre dos veces o un comentario suelto que no se sabe a
    qué pieza va (delante de una que ya estaba, solo vale el mismo comentario que ya tenía), o si
    el nombre que cambia está dos veces en el fichero anterior.
    """
    viejas, cola = piezas(anterior, f"Tu {nombre}.py anterior")
    nuevas, cola_de_la_celda = piezas(cambio, "La celda")
    if _suelto(cola_de_la_celda):
        raise ErrorAlComponer("La celda acaba con un comentario suelto: pégalo (sin línea en blanco) "
                              "encima de la pieza que comenta, o quítalo.")
    vistas = set()
    for p in nuevas:
        if p.clave is None:
            raise ErrorAlComponer(
                f"La línea {p.linea} de la celda no es un import, un def, una class ni una "
                "asignación a un nombre: con --cambia cada pieza necesita un nombre, para saber "
                "dónde va.")
        if p.clave in vistas:
            raise ErrorAlComponer(f"{p.clave} está dos veces en la celda.")
        vistas.add(p.clave)
        repetidas = [v for v in viejas if v.clave == p.clave]
        if len(repetidas) > 1:
            raise ErrorAlComponer(f"{p.clave} está {len(repetidas)} veces en tu {nombre}.py anterior: "
                                  "no sé cuál cambiar.")
        if _suelto(p.hueco) and (p.tipo in ("import", "doc")
                                 or (repetidas and _comentarios(repetidas[0].hueco) != _comentarios(p.hueco))):
            raise ErrorAlComponer(
                f"Hay un comentario suelto antes de la línea {p.linea} de la celda: pégalo (sin "
                "línea en blanco) a la pieza que comenta, o quítalo.")

    resultado = list(viejas)
    hecho = Composicion(texto="")
    primera_definicion = next((i for i, p in enumerate(nuevas) if p.tipo in DEFINICIONES), len(nuevas))
    colocadas = {}  # clave -> la pieza ya puesta en `resultado`
    for i, p in enumerate(nuevas):
        if p.tipo == "doc":
            if resultado and resultado[0].tipo == "doc":
                texto = _parrafo(resultado[0], p)
                if texto is not None:
                    resultado[0] = Pieza("__doc__", "doc", texto, resultado[0].hueco, 1)
                    hecho.parrafo = True
            else:
                p.hueco = []
                resultado.insert(0, p)
                hecho.parrafo = True
            continue
        vieja = next((v for v in resultado if v.clave == p.clave and not v.tocada), None)
        p.tocada = True
        if vieja is not None:
            p.hueco = vieja.hueco
            resultado[resultado.index(vieja)] = p
            if p.tipo == "import":
                if vieja.texto != p.texto:
                    hecho.imports_cambiados.append(" ".join(l.strip() for l in p.texto))
            else:
                (hecho.iguales if vieja.texto == p.texto else hecho.cambia).append(_nombre(p))
        elif p.tipo == "import":
            _importar(resultado, p)
            hecho.imports_nuevos.append(" ".join(l.strip() for l in p.texto))
        else:
            antes = [q for q in nuevas[:i] if q.tipo not in ("import", "doc")]
            if i >= primera_definicion:
                antes = [q for q in antes if nuevas.index(q) >= primera_definicion]
            if antes:
                donde = resultado.index(colocadas[antes[-1].clave]) + 1
            elif i < primera_definicion:
                donde = _cabecera(resultado)
            else:
                donde = _donde_acaba(resultado)
            resultado.insert(donde, p)
            hecho.anade.append(_nombre(p))
        colocadas[p.clave] = p
    _separar(resultado)
    lineas = [l for p in resultado for l in p.hueco + p.texto] + cola
    hecho.texto = "\n".join(lineas).rstrip("\n") + "\n"
    try:
        ast.parse(hecho.texto)
    except SyntaxError as e:  # no debería pasar: cada pieza era Python entera
        raise ErrorAlComponer(f"Al componer {nombre}.py no sale Python válido (línea {e.lineno}: {e.msg}).") from None
    return hecho


def diferencias(anterior, nuevo, nombre):
    """El diff unificado de `anterior` a `nuevo`, como texto."""
    return "".join(difflib.unified_diff(anterior.splitlines(True), nuevo.splitlines(True),
                                        f"{nombre}.py (antes)", f"{nombre}.py (ahora)"))
