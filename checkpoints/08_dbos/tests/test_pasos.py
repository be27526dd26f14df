"""pasos.py: qué transacciones se apuntan como paso durable, y qué hace el «disco lleno» del simulacro.

Lo que dice el docstring de pasos.py sobre lo que la envoltura ve y lo que no, comprobado aquí en
una base de verdad: una transacción que cambia filas es un paso, la acabe como la acabe de las
maneras que SQLite acepta; una que solo cambia el esquema, o que confirma `executescript()`, se
confirma sin apuntarse.
"""
import itertools
import sqlite3

import pytest

import historial
import pasos
import registro


@pytest.fixture
def bd(tmp_path, monkeypatch):
    monkeypatch.delenv(pasos.MORIR_EN, raising=False)
    monkeypatch.delenv(pasos.FALLAR_EN, raising=False)
    bd = registro.abrir(tmp_path / "e.db")
    yield bd
    bd.close()


def clases(bd):
    return [p["clase"] for p in pasos.lista(bd)]


def tablas(bd):
    return {n for (n,) in bd.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_cada_transaccion_que_cambia_filas_se_apunta_como_un_paso(bd):
    with pasos.en(bd, "fila"), historial.transaccion(bd):
        bd.execute("INSERT INTO curso VALUES ('k', 'v')")
    assert clases(bd) == ["fila"] and bd.hechos["paso"] == 1


def test_una_transaccion_que_solo_cambia_el_esquema_se_confirma_sin_apuntarse(bd):
    """total_changes solo cuenta filas de INSERT, UPDATE y DELETE: un CREATE TABLE no lo mueve. Por
    eso la transacción que crea las tablas en registro.abrir tampoco está en `pasos`."""
    with pasos.en(bd, "tabla"), historial.transaccion(bd):
        bd.execute("CREATE TABLE otra (x)")
    assert "otra" in tablas(bd) and clases(bd) == []


# Maneras de abrir y de acabar una transacción que sqlite3 acepta (https://www.sqlite.org/lang_transaction.html).
# Una `transaccion` del 4.1 puede escribir cualquiera: un alumno pone «COMMIT;» o «commit».
EMPIEZAN = ["BEGIN IMMEDIATE", "begin immediate;", "BEGIN IMMEDIATE TRANSACTION", "BEGIN", "BEGIN EXCLUSIVE;",
            "  -- el turno de escritura\nBEGIN IMMEDIATE"]
CONFIRMAN = ["COMMIT", "COMMIT;", "commit", "Commit ;", "COMMIT -- fin", "/* fin */ COMMIT;", "END", "end;",
             "COMMIT TRANSACTION", "END TRANSACTION t;", "\n\tCOMMIT\n", "commit()", "with bd:"]
DESHACEN = ["ROLLBACK", "ROLLBACK;", "rollback transaction", "rollback()", "with bd: (con una excepción)"]


def terminar(bd, como):
    """Acaba la transacción abierta en `bd` como dice `como`: una sentencia, `commit()`,
    `rollback()` o saliendo de un `with bd:` (bien, o con una excepción)."""
    if como in ("commit()", "rollback()"):
        getattr(bd, como[:-2])()
    elif como.startswith("with bd:"):
        try:
            with bd:
                if "excepción" in como:
                    raise KeyError("a propósito")
        except KeyError:
            pass
    else:
        bd.execute(como)


@pytest.mark.parametrize("empieza, confirma", list(zip(itertools.cycle(EMPIEZAN), CONFIRMAN)))
def test_cada_manera_de_confirmar_que_acepta_sqlite_apunta_el_paso(bd, empieza, confirma):
    bd.execute(empieza)
    with pasos.en(bd, "fila"):
        bd.execute("INSERT INTO curso VALUES ('k', 'v')")
        terminar(bd, confirma)
    confirmada = not bd.in_transaction and bd.execute("SELECT valor FROM curso").fetchall() == [("v",)]
    assert confirmada, "SQLite no ha confirmado: esta manera no sirve para el test"
    assert clases(bd) == ["fila"] and bd.hechos["paso"] == 1


@pytest.mark.parametrize("deshace", DESHACEN)
def test_cada_manera_de_deshacer_no_apunta_nada(bd, deshace):
    bd.execute("BEGIN IMMEDIATE")
    with pasos.en(bd, "fila"):
        bd.execute("INSERT INTO curso VALUES ('k', 'v')")
        terminar(bd, deshace)
    assert not bd.in_transaction and bd.execute("SELECT valor FROM curso").fetchall() == []
    assert clases(bd) == [] and bd.hechos["paso"] == 0


def test_volver_a_un_savepoint_no_acaba_la_transaccion_y_su_commit_se_apunta(bd):
    """ROLLBACK TO deshace hasta el SAVEPOINT y deja la transacción abierta: no es su final."""
    bd.execute("BEGIN IMMEDIATE")
    with pasos.en(bd, "fila"):
        bd.execute("INSERT INTO curso VALUES ('k', 'v')")
        bd.execute("SAVEPOINT antes_de_la_otra")
        bd.execute("INSERT INTO curso VALUES ('k2', 'v2')")
        bd.execute("ROLLBACK TO antes_de_la_otra;")
        assert bd.in_transaction
        bd.execute("COMMIT")
    assert bd.execute("SELECT clave FROM curso").fetchall() == [("k",)] and clases(bd) == ["fila"]


def test_executescript_confirma_sin_apuntar_el_paso(bd):
    """Lo único que la envoltura no ve: executescript() confirma lo abierto antes de su guion, y
    pasa de largo (el curso no lo usa)."""
    bd.execute("BEGIN IMMEDIATE")
    bd.execute("INSERT INTO curso VALUES ('k', 'v')")
    bd.executescript("SELECT 1;")
    assert bd.execute("SELECT valor FROM curso").fetchall() == [("v",)] and clases(bd) == []


def test_con_la_base_llena_lo_que_cabe_en_sus_paginas_se_sigue_confirmando(tmp_path, monkeypatch):
    """CURSO_FALLAR_EN=K:lleno no impide escribir: la base deja de crecer, como en un disco lleno."""
    monkeypatch.setenv(pasos.FALLAR_EN, "1:lleno")
    bd = registro.abrir(tmp_path / "e.db")
    try:
        with pasos.en(bd, "uno"), historial.transaccion(bd):
            bd.execute("INSERT INTO curso VALUES ('uno', 'x')")
        (paginas,) = bd.execute("PRAGMA page_count").fetchone()
        with pasos.en(bd, "cabe"), historial.transaccion(bd):  # una fila pequeña: cabe en una página que ya hay
            bd.execute("INSERT INTO curso VALUES ('dos', 'y')")
        with pytest.raises(sqlite3.OperationalError) as error:
            with pasos.en(bd, "no_cabe"), historial.transaccion(bd):
                bd.execute("INSERT INTO curso VALUES ('tres', ?)", ("z" * 100_000,))
        assert error.value.sqlite_errorname == "SQLITE_FULL"
        assert clases(bd) == ["uno", "cabe"] and bd.execute("PRAGMA page_count").fetchone() == (paginas,)
    finally:
        bd.close()
