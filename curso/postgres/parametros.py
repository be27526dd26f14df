"""Para los tests de la lección 07: una sentencia con los parámetros de sqlite3, escrita como la quiere psycopg.

La lección 07 corre el SQL de la 05 (el de SQLite, tal cual) sobre PostgreSQL, para ver qué se
rompe (`SqliteSobrePostgres`, en checkpoints/07_postgresql/tests/test_postgresql.py). Ese SQL lo
escribió el alumno, y sqlite3 le acepta cualquier estilo de parámetro de SQLite: `?`, `?NNN`,
`:nombre`, `@nombre` y `$nombre`, con una secuencia o con un dict. psycopg solo entiende `%s` y
`%(nombre)s`, y un `%` suelto es para él el principio de uno. `a_psycopg` traduce de uno a otro
con las reglas de SQLite (https://www.sqlite.org/lang_expr.html#parameters y
https://www.sqlite.org/c3ref/bind_parameter_name.html) y las de sqlite3 de Python 3.11
(`bind_parameters` en Modules/_sqlite/cursor.c):

- Cada parámetro tiene un número: `?` es el siguiente al mayor que ya hay; `?NNN` es el NNN; uno
  con nombre (`:a`, `@a` y `$a` son tres distintos) toma el siguiente la primera vez y el mismo
  las demás. Cuántos hay es el mayor número.
- Con una secuencia, el parámetro número i es el elemento i (de 1 en adelante), y tiene que haber
  exactamente tantos como parámetros. Con un dict, cada parámetro es el valor de su nombre sin el
  primer carácter (`:a` y `@a` toman los dos el de "a"); un `?` no tiene nombre y es un error.
- Lo que va entre comillas (textos, identificadores, `[...]`), y los comentarios, no son parámetros.

Los errores son `sqlite3.ProgrammingError`, como los de sqlite3, con su texto.
"""
import sqlite3
from collections.abc import Mapping

PREFIJOS_DE_NOMBRE = ":@$"
CIERRE = {"'": "'", '"': '"', "`": "`", "[": "]"}


def _es_de_nombre(c):
    return c.isalnum() or c == "_" or ord(c) > 127


def trocear(sql):
    """[(es_parametro, texto)] de `sql`, en orden: los trozos de SQL y los parámetros («?», «?3»,
    «:padre»)."""
    trozos, texto, i = [], [], 0
    while i < len(sql):
        c = sql[i]
        if c in CIERRE:  # un texto o un identificador entre comillas: hasta su cierre
            fin = sql.find(CIERRE[c], i + 1)
            while fin != -1 and c in "'\"" and sql[fin + 1:fin + 2] == c:  # '' y "" son la comilla
                fin = sql.find(c, fin + 2)
            fin = len(sql) if fin == -1 else fin + 1
            texto.append(sql[i:fin])
            i = fin
        elif sql.startswith("--", i):
            fin = sql.find("\n", i)
            fin = len(sql) if fin == -1 else fin
            texto.append(sql[i:fin])
            i = fin
        elif sql.startswith("/*", i):
            fin = sql.find("*/", i + 2)
            fin = len(sql) if fin == -1 else fin + 2
            texto.append(sql[i:fin])
            i = fin
        elif c == "?" or (c in PREFIJOS_DE_NOMBRE and i + 1 < len(sql) and _es_de_nombre(sql[i + 1])
                          and not (c == ":" and i > 0 and sql[i - 1] == ":")):
            fin = i + 1
            while fin < len(sql) and (sql[fin].isdigit() if c == "?" else _es_de_nombre(sql[fin])):
                fin += 1
            if texto:
                trozos.append((False, "".join(texto)))
                texto = []
            trozos.append((True, sql[i:fin]))
            i = fin
        else:
            texto.append(c)
            i += 1
    if texto:
        trozos.append((False, "".join(texto)))
    return trozos


def numeros(parametros):
    """[número de cada parámetro, en orden] y cuántos hay, con las reglas de SQLite."""
    mayor, de_cada_nombre, salida = 0, {}, []
    for p in parametros:
        if p == "?":
            mayor += 1
            numero = mayor
        elif p.startswith("?"):
            numero = int(p[1:])
            mayor = max(mayor, numero)
        elif p in de_cada_nombre:
            numero = de_cada_nombre[p]
        else:
            mayor += 1
            numero = de_cada_nombre[p] = mayor
        salida.append(numero)
    return salida, mayor


def a_psycopg(sql, parametros=()):
    """(sql, valores) para `psycopg.Connection.execute`: cada parámetro de SQLite cambiado por
    `%s`, y sus valores en el orden en que aparecen; cada `%` del SQL, doblado."""
    trozos = trocear(sql)
    marcas = [t for es, t in trozos if es]
    numero_de, cuantos = numeros(marcas)
    valores = []
    if isinstance(parametros, Mapping):
        for numero, marca in zip(numero_de, marcas, strict=True):
            if marca == "?":
                raise sqlite3.ProgrammingError(
                    f"Binding {numero} has no name, but you supplied a dictionary (which has only names).")
            if marca[1:] not in parametros:
                raise sqlite3.ProgrammingError(f"You did not supply a value for binding parameter {marca}.")
            valores.append(parametros[marca[1:]])
    else:
        secuencia = list(parametros)
        if len(secuencia) != cuantos:
            raise sqlite3.ProgrammingError(
                f"Incorrect number of bindings supplied. The current statement uses {cuantos}, and "
                f"there are {len(secuencia)} supplied.")
        valores = [secuencia[numero - 1] for numero in numero_de]
    texto = "".join("%s" if es else t.replace("%", "%%") for es, t in trozos)
    return texto, tuple(valores)
