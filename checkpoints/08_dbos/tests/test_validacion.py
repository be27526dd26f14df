"""Las comprobaciones de la entrada de `validacion.py` (lección 04): qué aceptan, qué rechazan y
que el mensaje de un rechazo no falla por el valor que cita."""
import sqlite3

import pytest

import resumenes
import validacion
from validacion import (LARGO_MAXIMO_DE_EJECUCION, MAYOR_ENTERO_SQLITE, conectar, exigir_ejecucion,
                        exigir_entero_positivo, exigir_texto, muestra)


@pytest.mark.parametrize("valor", [1, MAYOR_ENTERO_SQLITE])
def test_un_entero_positivo_que_cabe_en_sqlite_pasa(valor):
    exigir_entero_positivo(valor, "El corte")


@pytest.mark.parametrize("valor", [0, -1, MAYOR_ENTERO_SQLITE + 1, True, 1.0, "1", None])
def test_lo_que_no_es_un_entero_positivo_de_sqlite_se_rechaza_diciendo_que(valor):
    with pytest.raises(ValueError, match="El corte debe ser un entero positivo"):
        exigir_entero_positivo(valor, "El corte")


@pytest.mark.parametrize("valor, error", [("  ", "está vacío"), (b"hola", "debe ser un texto"),
                                          ("\udc80", "UTF-8")])
def test_un_texto_vacio_no_texto_o_imposible_de_guardar_se_rechaza(valor, error):
    with pytest.raises(ValueError, match=error):
        exigir_texto(valor, "El texto")


def test_un_identificador_de_ejecucion_de_mas_de_cien_caracteres_se_rechaza_diciendo_cuantos():
    exigir_ejecucion("e" * LARGO_MAXIMO_DE_EJECUCION)
    with pytest.raises(ValueError, match=rf"tiene 1048576 caracteres .*: como mucho, {LARGO_MAXIMO_DE_EJECUCION}\.$"):
        exigir_ejecucion("e" * 2**20)


def test_la_muestra_es_corta_tambien_con_valores_enormes_o_muy_anidados():
    anidado = []
    for _ in range(100_000):  # repr() agotaría la pila
        anidado = [anidado]
    for valor in ("x" * 10_000, 10**10_000, anidado, list(range(1000))):
        assert len(muestra(valor)) <= validacion.LARGO_DE_MUESTRA
    assert "cifras" in muestra(10**10_000)


def test_una_carpeta_o_un_fichero_de_texto_se_rechazan_sin_tocarlos(tmp_path):
    texto = tmp_path / "notas.txt"
    texto.write_text("no soy una base de datos\n", encoding="utf-8")
    with pytest.raises(ValueError, match="es una carpeta"):
        conectar(tmp_path)
    with pytest.raises(ValueError, match="no es una base de datos SQLite"):
        conectar(texto)
    assert texto.read_text(encoding="utf-8") == "no soy una base de datos\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notas.txt"]


def test_una_ruta_con_un_caracter_nulo_se_rechaza_diciendo_que(tmp_path):
    """sqlite3 la rechaza con «embedded null byte»; conectar lo dice en castellano y no crea nada."""
    with pytest.raises(ValueError, match="no es un nombre de fichero válido"):
        conectar(str(tmp_path / "a\0b.db"))
    assert list(tmp_path.iterdir()) == []


def test_una_base_bloqueada_por_otra_conexion_no_se_disfraza_de_otro_error(tmp_path, monkeypatch):
    """Otra conexión tiene la base en BEGIN EXCLUSIVE: la primera lectura da SQLITE_BUSY. Eso no es
    «no es una base de datos» (lo que diría quien traduce cualquier DatabaseError): sale tal cual."""
    ruta = tmp_path / "ocupada.db"
    otra = sqlite3.connect(ruta, isolation_level=None)
    otra.execute("CREATE TABLE t (x)")
    otra.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(validacion, "ESPERA_POR_OTRO_ESCRITOR_S", 0)  # sin esperar a que la suelte
    try:
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            conectar(ruta)
    finally:
        otra.rollback()
        otra.close()


def test_un_error_al_abrir_que_no_es_de_la_ruta_sale_tal_cual(tmp_path, monkeypatch):
    """Si sqlite3.connect falla por otra cosa que SQLITE_CANTOPEN (aquí, sin memoria), el error es
    el suyo, no «no se puede abrir ni crear»: la ruta no tiene la culpa."""
    def connect(*argumentos, **opciones):
        error = sqlite3.OperationalError("out of memory")
        error.sqlite_errorname = "SQLITE_NOMEM"
        raise error
    monkeypatch.setattr(sqlite3, "connect", connect)
    with pytest.raises(sqlite3.OperationalError, match="out of memory"):
        conectar(tmp_path / "nueva.db")


def test_conectar_devuelve_una_conexion_sin_transacciones_implicitas(tmp_path):
    bd = conectar(tmp_path / "nueva.db")
    try:
        assert isinstance(bd, sqlite3.Connection) and bd.isolation_level is None
    finally:
        bd.close()


def test_resumenes_cita_con_la_misma_muestra_que_importan_las_lecciones_siguientes():
    assert resumenes.muestra is validacion.muestra
