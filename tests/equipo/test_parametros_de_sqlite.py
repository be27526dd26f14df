"""Tests de `curso.postgres.parametros`: el SQL de SQLite del alumno, con cualquier estilo de parámetro que acepte sqlite3, corre sobre PostgreSQL (hallazgo 2 de la issue 40).

Un 5.3 con `WHERE id = :padre` y `{"padre": padre}` es sqlite3 válido y pasaba el cuaderno y
`comprobar 5` y `6`; `comprobar 7` lo daba por malo porque el adaptador de la lección 07 solo
traducía «?». La comprobación diferencial: la misma sentencia, con los mismos parámetros, en
sqlite3 y traducida (devuelta a «?» para correrla también en sqlite3, y de verdad en PostgreSQL),
da lo mismo; y lo que sqlite3 rechaza, la traducción también lo rechaza.
"""
import sqlite3

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curso.postgres.parametros import a_psycopg, numeros, trocear

NOMBRES = st.sampled_from(["padre", "a", "b", "hijo_1", "ñu"])
PARAMETRO = st.one_of(st.just("?"), st.integers(1, 4).map(lambda n: f"?{n}"),
                      st.tuples(st.sampled_from(":@$"), NOMBRES).map("".join))
# Lo que no es un parámetro aunque lo parezca: dentro de comillas, en un comentario, un % suelto.
SEÑUELO = st.sampled_from(["'¿?'", "'a:b @c $d'", "'it''s ?'", '"?"', "'100%'", "/* ? :x */ 1", "'%s'"])
VALORES = st.one_of(st.integers(-5, 5), st.text(max_size=4), st.none())


def sentencia(columnas):
    return "SELECT " + ", ".join(columnas)


def en_sqlite(sql, parametros):
    with sqlite3.connect(":memory:") as bd:
        return bd.execute(sql, parametros).fetchall()


def de_vuelta_a_sqlite(sql, valores):
    """La sentencia traducida, con sus %s como «?» y sus %% como %, corrida en sqlite3."""
    return en_sqlite(sql.replace("%%", "\0").replace("%s", "?").replace("\0", "%"), valores)


@st.composite
def sentencias_con_parametros(draw):
    columnas = draw(st.lists(st.one_of(PARAMETRO, SEÑUELO), min_size=1, max_size=6))
    marcas = [t for es, t in trocear(sentencia(columnas)) if es]
    _, cuantos = numeros(marcas)
    if draw(st.booleans()):  # con una secuencia, a veces de otra longitud
        parametros = draw(st.lists(VALORES, min_size=cuantos, max_size=cuantos) | st.lists(VALORES, max_size=5))
    else:  # con un dict, a veces sin alguno
        nombres = {m[1:] for m in marcas if m[0] in ":@$"} | draw(st.sets(NOMBRES, max_size=2))
        parametros = {n: draw(VALORES) for n in nombres if draw(st.integers(0, 9))}
    return sentencia(columnas), parametros


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(sentencias_con_parametros())
def test_la_traduccion_da_lo_mismo_que_sqlite3_o_el_mismo_rechazo(caso):
    sql, parametros = caso
    try:
        esperado = en_sqlite(sql, parametros)
    except sqlite3.ProgrammingError:
        with pytest.raises(sqlite3.ProgrammingError):
            a_psycopg(sql, parametros)
        return
    assert de_vuelta_a_sqlite(*a_psycopg(sql, parametros)) == esperado


def test_la_traduccion_ingenua_de_antes_no_entiende_los_nombres():
    """La variante de antes (cambiar cada «?» por «%s») deja «:padre» tal cual: PostgreSQL lo lee
    como sintaxis, y el `?` de un texto se convierte en un parámetro que no existe."""
    sql = "SELECT id FROM padres WHERE id = :padre AND nota <> '¿?'"
    ingenua = sql.replace("?", "%s")
    assert ":padre" in ingenua and "'¿%s'" in ingenua
    assert a_psycopg(sql, {"padre": "p"}) == ("SELECT id FROM padres WHERE id = %s AND nota <> '¿?'", ("p",))


@pytest.mark.parametrize("sql, parametros", [
    ("SELECT ? + ?2, :x", (1, 2)),  # :x toma el 3
    ("SELECT :padre, @padre, $padre", {"padre": 7}),
    ("SELECT ?3, ?1", (1, 2, 3)),
    ("SELECT 'a%' || ?, 50 % 7", ("b",)),
])
def test_cada_estilo_de_sqlite3_corre_igual_en_postgresql(esquema_postgres, sql, parametros):
    if isinstance(parametros, tuple) and ":x" in sql:
        parametros = parametros + (3,)
    esperado = en_sqlite(sql, parametros)
    traducido, valores = a_psycopg(sql, parametros)
    with psycopg.connect(esquema_postgres) as pg:
        # PostgreSQL no sabe el tipo de un parámetro suelto en un SELECT: se lo dice la forma del valor
        tipado = traducido.replace("%s", "%s::text") if "||" in sql else traducido.replace("%s", "%s::int")
        assert [tuple(f) for f in pg.execute(tipado, valores).fetchall()] == esperado
