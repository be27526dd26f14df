"""pasos.py: qué transacciones se apuntan como paso durable, y qué hace el «disco lleno» del simulacro.

Lo que dice el docstring de pasos.py sobre lo que la envoltura ve y lo que no, comprobado aquí en
una base de verdad: una transacción que cambia filas es un paso; una que solo cambia el esquema,
o que acaba con otro texto que `COMMIT`, se confirma sin apuntarse.
"""
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


def test_un_commit_con_otro_texto_confirma_sin_apuntar_el_paso(bd):
    """La envoltura reconoce el final de una transacción por el texto «COMMIT» tal cual."""
    bd.execute("BEGIN IMMEDIATE")
    bd.execute("INSERT INTO curso VALUES ('k', 'v')")
    bd.execute("COMMIT;")
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
