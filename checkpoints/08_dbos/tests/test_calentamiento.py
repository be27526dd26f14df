"""Punto de control 00: el calentamiento."""
import pytest

from calentamiento import ultima_linea


@pytest.mark.contrato("0.1")
def test_devuelve_la_ultima_linea_con_texto():
    assert ultima_linea("Ran 3 tests\n\nFAILED (failures=1)\n\n") == "FAILED (failures=1)"


@pytest.mark.contrato("0.1")
def test_quita_los_espacios_de_los_extremos():
    assert ultima_linea("  OK \n") == "OK"


@pytest.mark.contrato("0.1")
def test_sin_texto_devuelve_cadena_vacia():
    assert ultima_linea(" \n\n") == ""
