"""El contrato de `historial.py` (lección 04): abrir, anotar y la transacción, sobre ficheros reales."""
import sqlite3

import pytest

import historial
from historial import abrir, anotar, crear_ejecucion, en_historial, transaccion

EJECUCION = "r-1"
ORIGINALES = [
    "La ejecución es de solo lectura.",
    "Empieza la investigación de red.",
    "La API resuelve el nombre db.",
    "Falta comprobar el puerto configurado.",
]


@pytest.fixture
def bd(tmp_path):
    """Una ejecución con los cuatro mensajes originales, sin resúmenes."""
    bd = abrir(tmp_path / "historial.db")
    crear_ejecucion(bd, EJECUCION)
    for texto in ORIGINALES:
        anotar(bd, EJECUCION, texto)
    yield bd
    bd.close()


def volcado(bd):
    return "\n".join(bd.iterdump())


def filas(bd, tabla):
    return bd.execute(f"SELECT * FROM {tabla} ORDER BY 1, 2").fetchall()


def test_abrir_crea_las_tres_tablas_del_almacen(bd):
    tablas = {nombre for (nombre,) in bd.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tablas == {"ejecuciones", "historial", "resumenes"}


def test_abrir_deja_claves_foraneas_wal_y_synchronous_full(bd):
    assert bd.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert bd.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert bd.execute("PRAGMA synchronous").fetchone()[0] == 2  # 2 es FULL
    with pytest.raises(sqlite3.IntegrityError):
        bd.execute("INSERT INTO historial VALUES ('no-existe', 1, 'huérfano')")


@pytest.mark.contrato("4.1")
def test_anotar_numera_el_historial_sin_huecos(bd):
    assert anotar(bd, EJECUCION, "quinto") == len(ORIGINALES) + 1
    seqs = [seq for _, seq, _ in filas(bd, "historial")]
    assert seqs == list(range(1, len(ORIGINALES) + 2))


def test_crear_dos_veces_la_misma_ejecucion_se_rechaza_sin_cambiar_nada(bd):
    antes = volcado(bd)
    with pytest.raises(ValueError, match="ya existe"):
        crear_ejecucion(bd, EJECUCION)
    assert volcado(bd) == antes


def test_en_historial_solo_encuentra_mensajes_de_esa_ejecucion(bd):
    crear_ejecucion(bd, "otra")
    for n in range(1, 7):
        anotar(bd, "otra", f"mensaje {n} de otra")  # «otra» tiene un 5 y un 6; «r-1», no
    assert [en_historial(bd, EJECUCION, seq) for seq in (1, 4, 5, 6)] == [True, True, False, False]
    assert en_historial(bd, "otra", 6) and not en_historial(bd, "nadie", 1)


def foto(carpeta):
    """Todo lo que hay en `carpeta`: rutas y contenidos."""
    return {str(p.relative_to(carpeta)): p.read_bytes() if p.is_file() else None for p in carpeta.rglob("*")}


@pytest.mark.parametrize("que, motivo", [
    ("nada", "La ruta de la base de datos debe ser un texto o un Path, no None"),
    ("carpeta", "es una carpeta"),
    ("texto", "no es una base de datos SQLite"),
    ("sin_carpeta", "No se puede abrir ni crear"),
])
def test_abrir_rechaza_lo_que_no_es_una_base_de_datos_sin_tocarlo(tmp_path, que, motivo):
    (tmp_path / "carpeta").mkdir()
    (tmp_path / "notas.txt").write_text("Esto no es una base de datos.\n" * 20, encoding="utf-8")
    ruta = {"nada": None, "carpeta": tmp_path / "carpeta", "texto": tmp_path / "notas.txt",
            "sin_carpeta": tmp_path / "no-existe" / "resumenes.db"}[que]
    antes = foto(tmp_path)
    with pytest.raises(ValueError, match=motivo) as error:
        abrir(ruta)
    assert type(error.value) is ValueError
    assert foto(tmp_path) == antes


@pytest.mark.contrato("4.1")
@pytest.mark.parametrize("excepcion", [ValueError, KeyboardInterrupt, SystemExit])
def test_transaccion_deshace_ante_cualquier_excepcion(bd, excepcion):
    antes = volcado(bd)
    with pytest.raises(excepcion):
        with transaccion(bd):
            bd.execute("INSERT INTO historial VALUES (?, 99, 'a medias')", (EJECUCION,))
            raise excepcion("interrumpido a mitad")
    assert not bd.in_transaction
    assert volcado(bd) == antes


def test_executescript_confirma_la_transaccion_abierta(tmp_path):
    # La trampa que evita `abrir()`: executescript() hace COMMIT antes de empezar, aunque la
    # conexión se abriera con isolation_level=None y hubiera un BEGIN pendiente.
    ruta = tmp_path / "trampa.db"
    bd = sqlite3.connect(ruta, isolation_level=None)
    bd.execute("CREATE TABLE t (x)")
    bd.execute("BEGIN IMMEDIATE")
    bd.execute("INSERT INTO t VALUES ('debería deshacerse')")
    bd.executescript("SELECT 1;")
    assert not bd.in_transaction  # la transacción ya no existe...
    with pytest.raises(sqlite3.OperationalError, match="no transaction is active"):
        bd.execute("ROLLBACK")  # ...así que no hay nada que deshacer
    bd.close()
    otra = sqlite3.connect(ruta)
    assert otra.execute("SELECT x FROM t").fetchall() == [("debería deshacerse",)]
    otra.close()


def test_el_modulo_dice_en_que_leccion_se_introdujo():
    assert "\nLección 04. " in historial.__doc__  # el párrafo que dice qué lección lo presenta
