"""Para los tests de los almacenes (lecciones 04, 05 y 07): la tabla única de valores hostiles que deben rechazar.

Los usan los tests de checkpoints/*/tests (los que `python -m curso comprobar N` copia junto a los
módulos del alumno; ya importan `curso.*`) y los de tests/lecciones, que los sortean con hypothesis.
Cada valor está aquí una vez, con la razón de que sea hostil; cada test elige los que le tocan y
dice qué mensaje en castellano espera de su módulo (eso no es de esta tabla: depende del contrato).

Lo que los hace hostiles no es que sean raros, sino que rompen algo que está debajo del arnés si
el arnés no los para antes: SQLite, psycopg, json.dumps, repr() o la pila de Python.
"""
import sys

# --- Textos que no se pueden escribir en UTF-8 ---------------------------------------------------
# Medio par sustituto, suelto: Python lo guarda en un str, pero no lo codifica en UTF-8, así que
# sqlite3, psycopg y json.dumps(ensure_ascii=False) fallan con un UnicodeEncodeError en inglés.
SUSTITUTO_EN_IDENTIDAD = "e-\ud800"   # una identidad de entrega que lo lleva al final
SUSTITUTO_SOLO = "\udfff"             # el texto entero es medio par
SUSTITUTO_EN_MEDIO = "a\udc80b"       # el que deja surrogateescape al leer un byte que no es UTF-8
SUSTITUTO_EN_EJECUCION = "r-\ud800"   # una identidad de ejecución que lo lleva al final
SUSTITUTOS_SUELTOS = (SUSTITUTO_EN_IDENTIDAD, SUSTITUTO_SOLO, SUSTITUTO_EN_MEDIO)

# --- Números que JSON no tiene --------------------------------------------------------------------
# json.dumps los escribe (NaN, Infinity) sin quejarse, pero lo escrito no es JSON: otro lector no
# lo lee, y NaN != NaN rompe cualquier comparación.
NAN = float("nan")
INFINITO = float("inf")

# --- Enteros que no caben o que no se pueden escribir ---------------------------------------------
# Un INTEGER de SQLite y un BIGINT de PostgreSQL tienen 64 bits con signo: 2**63 es el primero
# que no cabe (sqlite3 lo rechaza con un OverflowError en inglés).
FUERA_DE_INT64 = 2**63
FUERA_DE_UINT64 = 2**64     # tampoco cabe sin signo
MUY_FUERA_DE_INT64 = 2**70
# Desde Python 3.11, ni repr() ni str() ni json.dumps escriben un entero de más de 4300 cifras
# (ValueError «Exceeds the limit»): un mensaje de error que lo cite con {!r} falla él mismo.
CIFRAS_QUE_REPR_NO_ESCRIBE = sys.int_info.default_max_str_digits + 1
ENTERO_ENORME = 10**5000


def enorme(cifras, signo=1):
    """Un entero de `cifras` + 1 cifras (con `cifras` >= CIFRAS_QUE_REPR_NO_ESCRIBE, repr() no lo
    escribe), positivo o negativo según `signo`."""
    return signo * (10**cifras + 7)


# --- Valores que agotan la pila ------------------------------------------------------------------
# repr(), json.dumps y cualquier recorrido recursivo agotan la pila de Python (RecursionError)
# con unos mil niveles de anidamiento; con 5000 no hay límite de recursión que lo salve.
PROFUNDIDAD_QUE_AGOTA_LA_PILA = 5000


def anidado(niveles=PROFUNDIDAD_QUE_AGOTA_LA_PILA):
    """Una lista dentro de una lista... `niveles` veces (`niveles` + 1 listas en total)."""
    valor = []
    for _ in range(niveles):
        valor = [valor]
    return valor


def circular():
    """Un dict que se contiene a sí mismo: json.dumps lo rechaza («Circular reference detected»)
    y un recorrido ingenuo no termina nunca."""
    valor = {"x": 1}
    valor["yo"] = valor
    return valor


# --- Valores que no son JSON ---------------------------------------------------------------------
# json.dumps rechaza los conjuntos, los bytes, los complejos y un objeto cualquiera con un
# TypeError en inglés; las tuplas las escribe como listas (y al leerlas ya no son tuplas).
CONJUNTO = {1, 2}
BYTES = b"bytes"
TUPLA = (1, 2)
COMPLEJO = 1j
NO_JSON = (NAN, INFINITO, -INFINITO, BYTES, CONJUNTO, TUPLA, COMPLEJO, object())
