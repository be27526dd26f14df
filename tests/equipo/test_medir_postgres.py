"""`python -m curso medir postgres` en pequeño: que su código corra entero y sus cuentas cuadren.

Las cifras de velocidad no se comprueban (dependen de la máquina); lo que sí: cada motor y cada
número de trabajadores tiene su cifra, la proporción es su cociente, la exploración da los
intercalados del escenario y el simulacro cuenta sus caídas y no pierde ni repite nada.
"""
from curso.explorables.carreras import numero_de_intercalados
from curso.explorables.carreras.escenarios.carreras_en_postgres import TARDIAS
from curso.medir import postgres_frente_a_sqlite as medir


def test_medir_postgres_en_pequeno(postgres, capsys):
    cifras = medir.main(postgres, trabajadores=(1, 2), admisiones=8, rondas=2, padres=6,
                        escenarios=["tardias"], trabajadores_del_simulacro=4)
    assert set(cifras["admisiones_por_s"]) == {1, 2}
    for fila in cifras["admisiones_por_s"].values():
        assert fila["postgres"] > 0 and fila["sqlite"] > 0
        assert fila["proporcion"] == fila["postgres"] / fila["sqlite"]
    assert cifras["exploraciones"] == {"tardias": {"intercalados": numero_de_intercalados(TARDIAS.actores),
                                                   "segundos": cifras["exploraciones"]["tardias"]["segundos"]}}
    simulacro = cifras["simulacro"]
    assert (simulacro["entregas"], simulacro["perdidas"], simulacro["repetidas"], simulacro["errores"]) == (12, 0, 0, {})
    assert simulacro["sigkill"] == 2 and simulacro["corte"] == 2  # los impares y los pares de 4
    assert simulacro["padres_activados_una_vez"] == 6
    assert cifras["cumple_objetivo"] is True
    salida = capsys.readouterr().out
    assert "0 perdidas, 0 repetidas" in salida and "PostgreSQL/SQLite" in salida


def test_cada_percance_llega_antes_de_la_ultima_entrega():
    for entregas, trabajadores in [(12, 4), (12, 8), (60, 8), (2, 3)]:
        tabla = medir.percances(entregas, trabajadores)
        assert sorted(tabla) == list(range(1, trabajadores + 1))
        assert {p for p, _ in tabla.values()} == ({"sigkill", "corte"} if trabajadores > 1 else {"sigkill"})
        assert all(1 <= tras < entregas for _, tras in tabla.values())

