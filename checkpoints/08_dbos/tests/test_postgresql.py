"""Lo que cambia en PostgreSQL, con un servidor de verdad: aislamiento, compare-and-swap, duplicados,
la fuerza de los cerrojos, avisos (LISTEN/NOTIFY), una conexión que cae durante el COMMIT (y cómo
saber que un COMMIT esperará a la réplica), un trabajador congelado y varios procesos que mueren.

Las carreras se recorren con `intercalar` (ver intercalar.py): A se para tras cada una de sus
sentencias y, en esa pausa, actúa B. Las variantes ingenuas se ven romper su invariante en
alguno de esos huecos; la primera es el código de SQLite tal cual (`buzon.admitir`, sin cambiar
una línea), que en SQLite es correcto y en PostgreSQL no.
"""
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

import buzon
import buzon_pg
import historial_pg
import resumenes_pg
from almacenes import Almacen
from intercalar import ESPERA_MAXIMA_S, PausaTras, intercalar

from curso.material import varias_maquinas
from curso.material.dos_conexiones import (con_ajustes, en_otro_hilo, esperar_a_que_espere, esperar_a_que_los_commits_esperen,
                                  esperar_al_ajuste)
from curso.postgres.cluster import ClusterTemporal, FaltaPostgres, esquema_de_prueba
from curso.postgres.fixtures import sin_postgres
from curso.postgres.parametros import a_psycopg

# Las fixtures de almacenes.py (esquema_postgres y postgres, que trae de curso.postgres), cargadas
# como plugin de pytest: importadas por su nombre, los argumentos de los tests las taparían.
pytest_plugins = ["almacenes"]

PADRE = "padre"
RESULTADO = {"hallazgo": "El servicio usa el puerto 5433", "fuente": "log:17"}
PUNTO = Path(__file__).resolve().parent.parent  # de aquí importan buzon_pg los trabajadores


class SqliteSobrePostgres:
    """Una conexión de PostgreSQL con la forma de una de sqlite3: el código de buzon.py corre
    sobre ella tal cual. Solo traduce lo que PostgreSQL escribe de otra manera: los parámetros, en
    cualquiera de los estilos que acepta sqlite3 («?», «?2», «:padre», «@padre», «$padre», con una
    secuencia o un dict: el 5.x no pide uno, `curso.postgres.parametros`), y BEGIN IMMEDIATE, que
    PostgreSQL no tiene, es BEGIN."""

    def __init__(self, conexion):
        self.conexion = conexion

    def execute(self, sql, parametros=()):
        return self.conexion.execute(*a_psycopg(sql.replace("BEGIN IMMEDIATE", "BEGIN"), parametros))

    @property
    def in_transaction(self):
        return self.conexion.info.transaction_status != psycopg.pq.TransactionStatus.IDLE


def traducido(funcion):
    """`funcion` de buzon.py (la de SQLite), llamada sobre una conexión de PostgreSQL."""
    return lambda conexion, *argumentos: funcion(SqliteSobrePostgres(conexion), *argumentos)


@pytest.fixture
def pg(esquema_postgres):
    almacen = Almacen("postgres", esquema_postgres).abrir()
    yield almacen
    almacen.cerrar()


@pytest.fixture
def lite(tmp_path):
    almacen = Almacen("sqlite", tmp_path / "almacen.db").abrir()
    yield almacen
    almacen.cerrar()


def recorrer(almacen, preparar, hacer_a, hacer_b, comprobar):
    """B en cada hueco de A (k = 1, 2, …), cada vez con un padre nuevo. Devuelve [(k, fallo o None)]."""
    observador = almacen.nueva() if almacen.motor == "postgres" else None
    informe = []
    for k in itertools.count(1):
        padre = f"p{k}"
        preparar(almacen, padre)
        a, b, pausado, _ = intercalar(
            almacen.motor, almacen.nueva(), lambda c, padre=padre: hacer_a(c, padre),
            almacen.nueva(), lambda c, padre=padre: hacer_b(c, padre), k, observador)
        informe.append((k, comprobar(almacen, padre, a, b)))
        if not pausado:  # A ya no llegó a la sentencia k: B fue detrás, y no quedan huecos
            return informe


# --- Admitir y terminar a la vez ---------------------------------------------------------------

def preparar_con_logs_recibida(almacen, padre):
    almacen.crear_padre(padre, ["logs", "config"])
    almacen.recibir(padre, "logs", f"{padre}-logs", RESULTADO)


def terminar_contando(buzon_, conexion, padre):
    """terminar(); lo que tenía la trayectoria en cuanto terminar volvió (leído por su conexión)."""
    buzon_.terminar(conexion, padre, "cancelada")
    return conexion.execute("SELECT count(*) FROM mensajes WHERE padre = " + ("%s" if buzon_ is buzon_pg else "?"),
                            (padre,)).fetchone()[0]


def tras_terminar_nada_entra(almacen, padre, a, b):
    """Un padre terminado sigue terminado: lo que su trayectoria tenía al terminar es lo que tiene."""
    (_, error_a), (al_terminar, error_b) = a, b
    if error_a or error_b:
        return f"error: {error_a or error_b!r}"
    ahora = len(almacen.mensajes(padre))
    return None if ahora == al_terminar else f"terminó con {al_terminar} mensajes y ahora tiene {ahora}"


@pytest.mark.parametrize("conexion, error, dice", [
    (None, ValueError, "debe ser una cadena de conexión"),
    ("  ", ValueError, "debe ser una cadena de conexión"),
    ("esto no vale", ValueError, "La cadena de conexión no es válida"),
    ("postgresql://127.0.0.1:1/nadie", ConnectionError, "No se puede conectar con PostgreSQL"),  # nadie escucha
])
def test_abrir_con_una_conexion_que_no_sirve_dice_por_que_en_castellano(conexion, error, dice):
    """Sin servidor: lo que no es una cadena, una cadena que psycopg no entiende (ProgrammingError)
    y un servidor que no contesta (OperationalError) salen como ValueError o ConnectionError con
    lo que hay que hacer, no como errores de psycopg."""
    with pytest.raises(error, match=dice):
        historial_pg.abrir(conexion)


def test_admitir_de_sqlite_tal_cual_mete_un_mensaje_en_un_padre_ya_terminado(pg, lite):
    """El código de SQLite, el mismo: en SQLite, terminar no puede colarse en medio de admitir; en
    PostgreSQL (READ COMMITTED) sí, entre que admitir lee el estado del padre y escribe."""
    en_sqlite = recorrer(lite, preparar_con_logs_recibida, lambda c, p: buzon.admitir(c, f"{p}-logs"),
                         lambda c, p: terminar_contando(buzon, c, p), tras_terminar_nada_entra)
    assert [fallo for _, fallo in en_sqlite] == [None] * len(en_sqlite)
    traduccion = recorrer(pg, preparar_con_logs_recibida, lambda c, p: traducido(buzon.admitir)(c, f"{p}-logs"),
                          lambda c, p: terminar_contando(buzon_pg, c, p), tras_terminar_nada_entra)
    fallos = [(k, fallo) for k, fallo in traduccion if fallo]
    assert fallos and all("terminó con 0 mensajes y ahora tiene 1" in fallo for _, fallo in fallos), traduccion


def test_admitir_bloquea_al_padre_y_terminar_no_se_cuela(pg):
    informe = recorrer(pg, preparar_con_logs_recibida, lambda c, p: buzon_pg.admitir(c, f"{p}-logs"),
                       lambda c, p: terminar_contando(buzon_pg, c, p), tras_terminar_nada_entra)
    assert len(informe) > 3 and [fallo for _, fallo in informe] == [None] * len(informe), informe


# --- Dos hijos admitidos a la vez ----------------------------------------------------------------

def preparar_con_los_dos_recibidos(almacen, padre):
    preparar_con_logs_recibida(almacen, padre)
    almacen.recibir(padre, "config", f"{padre}-config", {"hallazgo": "La base escucha en 5432"})


def los_dos_admitidos_y_una_activacion(almacen, padre, a, b):
    if a[1] or b[1]:
        return f"error: {a[1] or b[1]!r}"
    if (a[0], b[0]) != ("admitida", "admitida"):
        return f"devolvieron {a[0]!r} y {b[0]!r}"
    seqs = sorted(seq for seq, _, _ in almacen.mensajes(padre))
    estado = almacen.estado(padre)
    return None if seqs == [1, 2] and estado == ("en_cola", 1) else f"mensajes {seqs}, estado {estado}"


def test_dos_admisiones_a_la_vez_activan_al_padre_una_vez(pg):
    informe = recorrer(pg, preparar_con_los_dos_recibidos, lambda c, p: buzon_pg.admitir(c, f"{p}-logs"),
                       lambda c, p: buzon_pg.admitir(c, f"{p}-config"), los_dos_admitidos_y_una_activacion)
    assert [fallo for _, fallo in informe] == [None] * len(informe), informe


def test_dos_admisiones_con_el_codigo_de_sqlite_chocan_en_postgresql(pg):
    informe = recorrer(pg, preparar_con_los_dos_recibidos, lambda c, p: traducido(buzon.admitir)(c, f"{p}-logs"),
                       lambda c, p: traducido(buzon.admitir)(c, f"{p}-config"), los_dos_admitidos_y_una_activacion)
    fallos = [fallo for _, fallo in informe if fallo]
    # Los dos calculan el mismo MAX(seq) + 1: el segundo INSERT choca con la clave (padre, seq).
    assert fallos and any("UniqueViolation" in fallo for fallo in fallos), informe


def admitida_una_vez(almacen, padre, a, b):
    """Admitir dos veces es inofensivo: las dos devuelven «admitida» y hay un solo mensaje."""
    if a[1] or b[1]:
        return f"error: {a[1] or b[1]!r}"
    entregas = [entrega for _, entrega, _ in almacen.mensajes(padre)]
    return None if (a[0], b[0]) == ("admitida", "admitida") and entregas == [f"{padre}-logs"] else f"{a[0]}, {b[0]}, {entregas}"


@pytest.mark.parametrize("variante", ["buzon_pg", "buzon_traducido"])
def test_la_misma_entrega_admitida_dos_veces_a_la_vez_entra_una_vez(pg, variante):
    admitir = buzon_pg.admitir if variante == "buzon_pg" else traducido(buzon.admitir)
    admite = lambda c, p: admitir(c, f"{p}-logs")  # noqa: E731
    informe = recorrer(pg, preparar_con_logs_recibida, admite, admite, admitida_una_vez)
    fallos = [fallo for _, fallo in informe if fallo]
    if variante == "buzon_pg":  # tras el cerrojo del padre, se vuelve a leer la entrega
        assert fallos == [], informe
    else:
        assert fallos and all("UniqueViolation" in fallo for fallo in fallos), informe


def termina_una_vez(almacen, padre, a, b):
    """Un padre terminado sigue terminado: de dos terminar a la vez, uno termina y el otro lo dice."""
    errores = [error for _, error in (a, b) if error is not None]
    if len(errores) == 1 and "ya terminó" in str(errores[0]) and almacen.estado(padre) == ("cancelada", 1):
        return None
    return f"errores {errores!r}, estado {almacen.estado(padre)}"


def test_de_dos_terminar_a_la_vez_solo_uno_termina(pg):
    termina = lambda c, p: buzon_pg.terminar(c, p, "cancelada")  # noqa: E731
    informe = recorrer(pg, preparar_padre, termina, termina, termina_una_vez)
    assert [fallo for _, fallo in informe] == [None] * len(informe), informe


# --- Duplicados: la misma entrega, dos veces a la vez ------------------------------------------

def preparar_padre(almacen, padre):
    almacen.crear_padre(padre, ["logs", "config"])


def una_recibida_y_una_duplicada(almacen, padre, a, b):
    if a[1] or b[1]:
        return f"error: {a[1] or b[1]!r}"
    filas = almacen.filas("SELECT count(*) FROM buzon WHERE padre=?", padre)
    return None if sorted([a[0], b[0]]) == ["duplicada", "recibida"] and filas == [(1,)] else f"{a[0]}, {b[0]}, {filas}"


@pytest.mark.contrato("7.2")
def test_la_misma_entrega_recibida_a_la_vez_es_una_recibida_y_una_duplicada(pg):
    recibe = lambda c, p: buzon_pg.recibir(c, p, "logs", f"{p}-e", RESULTADO)  # noqa: E731
    informe = recorrer(pg, preparar_padre, recibe, recibe, una_recibida_y_una_duplicada)
    assert [fallo for _, fallo in informe] == [None] * len(informe), informe


def test_sin_on_conflict_la_segunda_falla_en_vez_de_ser_duplicada(pg):
    recibe = lambda c, p: traducido(buzon.recibir)(c, p, "logs", f"{p}-e", RESULTADO)  # noqa: E731
    informe = recorrer(pg, preparar_padre, recibe, recibe, una_recibida_y_una_duplicada)
    assert any(fallo and "UniqueViolation" in fallo for _, fallo in informe), informe


# --- Anotar a la vez en el mismo historial ----------------------------------------------------------

def preparar_ejecucion(almacen, ejecucion):
    almacen.crear_ejecucion(ejecucion)
    almacen.anotar(ejecucion, "primero")


def numerados_sin_huecos(almacen, ejecucion, a, b):
    if a[1] or b[1]:
        return f"error: {a[1] or b[1]!r}"
    seqs = [seq for (seq,) in almacen.filas("SELECT seq FROM historial WHERE ejecucion=? ORDER BY seq", ejecucion)]
    return None if sorted([a[0], b[0]]) == [2, 3] and seqs == [1, 2, 3] else f"devolvieron {a[0]}, {b[0]}; historial {seqs}"


def anotar_sin_cerrojo(conexion, ejecucion, texto):
    """anotar() sin el FOR UPDATE: los dos leen el mismo MAX(seq)."""
    with conexion.transaction():
        (ultimo,) = conexion.execute("SELECT COALESCE(MAX(seq), 0) FROM historial WHERE ejecucion=%s",
                                     (ejecucion,)).fetchone()
        conexion.execute("INSERT INTO historial(ejecucion, seq, texto) VALUES (%s, %s, %s)", (ejecucion, ultimo + 1, texto))
    return ultimo + 1


@pytest.mark.parametrize("variante", ["con_cerrojo", "sin_cerrojo"])
def test_dos_anotaciones_a_la_vez_se_numeran_sin_huecos(pg, variante):
    anotar = historial_pg.anotar if variante == "con_cerrojo" else anotar_sin_cerrojo
    informe = recorrer(pg, preparar_ejecucion, lambda c, e: anotar(c, e, "de A"), lambda c, e: anotar(c, e, "de B"),
                       numerados_sin_huecos)
    fallos = [fallo for _, fallo in informe if fallo]
    if variante == "con_cerrojo":
        assert fallos == [], informe
    else:
        assert fallos and all("UniqueViolation" in fallo for fallo in fallos), informe


class Cambiando:
    """Una conexión que ejecuta cada sentencia con `viejo` cambiado por `nuevo`: la variante de una
    función del módulo que solo difiere en eso."""

    def __init__(self, conexion, viejo, nuevo):
        self.conexion, self.viejo, self.nuevo = conexion, viejo, nuevo

    def __getattr__(self, nombre):
        return getattr(self.conexion, nombre)

    def execute(self, sql, *argumentos):
        return self.conexion.execute(sql.replace(self.viejo, self.nuevo), *argumentos)


@pytest.mark.parametrize("cerrojo", ["FOR NO KEY UPDATE", "FOR UPDATE"])
def test_anotar_no_para_el_insert_de_un_resumen_a_la_vez_solo_el_cambio_del_puntero(pg, cerrojo):
    """anotar bloquea la fila de su ejecución y no cambia su clave: FOR NO KEY UPDATE. Así el INSERT
    de instalar, cuya clave foránea pide la fila con FOR KEY SHARE, pasa; instalar espera solo al
    mover el puntero, que es escribir en esa misma fila. Con FOR UPDATE (la variante), el INSERT
    ya se para en la comprobación de la clave foránea."""
    preparar_resumen(pg, "r")
    base, _ = pg.activo("r")
    dondes = []

    def instalar_a_la_vez():
        otra = pg.nueva()
        instalacion = en_otro_hilo(resumenes_pg.instalar, otra, "r", base, 3, [{"texto": "Solo lectura", "fuente": 1}])
        _, evento, sentencia = esperar_a_que_espere(pg.conexion, otra, instalacion, evento="transactionid")
        dondes.append(sentencia.split()[0])
        return instalacion

    instalaciones = []
    conexion = PausaTras(Cambiando(pg.nueva(), "FOR NO KEY UPDATE", cerrojo),
                         lambda: instalaciones.append(instalar_a_la_vez()), cuando=lambda sql: "FOR " in sql)
    assert historial_pg.anotar(conexion, "r", "quinto") == 5
    instalaciones[0].resultado()  # anotar confirmó: instalar sigue y acaba
    assert dondes == (["UPDATE"] if cerrojo == "FOR NO KEY UPDATE" else ["INSERT"]), dondes


def creado_una_vez(almacen, padre, a, b):
    errores = [error for _, error in (a, b) if error is not None]
    if len(errores) == 1 and type(errores[0]) is ValueError and "ya existe" in str(errores[0]):
        return None
    return f"errores {errores!r}"


def test_de_dos_padres_con_el_mismo_nombre_a_la_vez_uno_se_crea_y_el_otro_ya_existe(pg):
    crea = lambda c, p: buzon_pg.crear_padre(c, p, ["logs"])  # noqa: E731
    informe = recorrer(pg, lambda almacen, padre: None, crea, crea, creado_una_vez)
    assert [fallo for _, fallo in informe] == [None] * len(informe), informe


# --- El compare-and-swap ------------------------------------------------------------------------

def preparar_resumen(almacen, ejecucion):
    almacen.crear_ejecucion(ejecucion)
    for n in range(1, 5):
        almacen.anotar(ejecucion, f"mensaje {n}")
    almacen.instalar(ejecucion, None, 2, [{"texto": "Solo lectura", "fuente": 1}])


def instalar_leyendo_y_luego_escribiendo(conexion, ejecucion, base, corte, candidato):
    """La variante ingenua: lee el puntero, lo compara en Python y escribe sin condición. Con
    BEGIN IMMEDIATE, en SQLite, nadie escribe en medio; en PostgreSQL, sí."""
    with conexion.transaction():
        (leido,) = conexion.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
        if leido != base:
            raise resumenes_pg.BaseObsoleta(f"el activo ya es {leido}")
        (nuevo,) = conexion.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (%s, %s, %s, %s) RETURNING id",
            (ejecucion, corte, json.dumps(candidato), base)).fetchone()
        conexion.execute("UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s", (nuevo, ejecucion))
    return nuevo


def de_cada_base_se_instala_uno(almacen, ejecucion, a, b):
    """Exactamente uno de los dos instala; el otro recibe BaseObsoleta; el activo es el que instaló."""
    exitos = [resultado for resultado, error in (a, b) if error is None]
    obsoletos = [error for _, error in (a, b) if isinstance(error, resumenes_pg.BaseObsoleta)]
    activo, _ = almacen.activo(ejecucion)
    if len(exitos) == 1 and len(obsoletos) == 1 and activo == exitos[0]:
        return None
    return f"instalaron {exitos}, obsoletos {len(obsoletos)}, activo {activo}"


def dos_instalaciones_desde_la_misma_base(pg, instalar):
    """[(k, fallo o None)]: dos `instalar` desde la misma base, B en cada hueco de A."""
    candidato = [{"texto": "Solo lectura", "fuente": 1}]
    informe = []
    for k in itertools.count(1):
        ejecucion = f"r{k}"
        preparar_resumen(pg, ejecucion)
        base, _ = pg.activo(ejecucion)
        a, b, pausado, _ = intercalar(
            "postgres", pg.nueva(), lambda c, ejecucion=ejecucion, base=base: instalar(c, ejecucion, base, 4, candidato),
            pg.nueva(), lambda c, ejecucion=ejecucion, base=base: instalar(c, ejecucion, base, 3, candidato), k, pg.nueva())
        informe.append((k, de_cada_base_se_instala_uno(pg, ejecucion, a, b)))
        if not pausado:
            return informe


@pytest.mark.contrato("7.1")
def test_de_dos_instalaciones_desde_la_misma_base_gana_una(pg):
    informe = dos_instalaciones_desde_la_misma_base(pg, resumenes_pg.instalar)
    assert [fallo for _, fallo in informe if fallo] == [], informe


def test_de_dos_instalaciones_ingenuas_desde_la_misma_base_se_pierde_una_sin_saberlo(pg):
    """La variante ingenua: los dos «instalaron», y el primero se perdió sin que nadie lo supiera."""
    informe = dos_instalaciones_desde_la_misma_base(pg, instalar_leyendo_y_luego_escribiendo)
    fallos = [fallo for _, fallo in informe if fallo]
    assert fallos and all("obsoletos 0" in fallo for fallo in fallos), informe


# --- Despertar al padre: LISTEN/NOTIFY -------------------------------------------------------------

# Un aviso confirmado llega en milisegundos; este es el tope para decir «no llegó ninguno».
SIN_AVISO_S = 0.3


@pytest.fixture
def escucha(pg):
    escucha = buzon_pg.escuchar(pg.destino)
    yield escucha
    escucha.close()


def test_el_aviso_sale_al_confirmar_y_no_antes(pg, escucha):
    preparar_con_los_dos_recibidos(pg, PADRE)
    pg.admitir(f"{PADRE}-logs")
    assert buzon_pg.esperar_avisos(escucha, SIN_AVISO_S) == []  # falta config: nadie avisa
    antes_del_commit = []
    conexion = PausaTras(pg.nueva(), lambda: antes_del_commit.append(buzon_pg.esperar_avisos(escucha, SIN_AVISO_S)),
                         cuando=lambda sql: "pg_notify" in sql)
    assert buzon_pg.admitir(conexion, f"{PADRE}-config") == "admitida"
    assert antes_del_commit == [[]]  # pg_notify ya se había ejecutado, pero la transacción seguía abierta
    assert buzon_pg.esperar_avisos(escucha, ESPERA_MAXIMA_S) == [PADRE]


def test_si_la_admision_se_deshace_no_hay_aviso(pg, escucha):
    preparar_con_los_dos_recibidos(pg, PADRE)
    pg.admitir(f"{PADRE}-logs")
    antes = pg.volcado()

    def cae():
        raise RuntimeError("el proceso cae antes del COMMIT")

    with pytest.raises(RuntimeError, match="antes del COMMIT"):
        buzon_pg.admitir(PausaTras(pg.nueva(), cae, cuando=lambda sql: "pg_notify" in sql), f"{PADRE}-config")
    assert pg.volcado() == antes
    assert buzon_pg.esperar_avisos(escucha, SIN_AVISO_S) == []


def test_el_aviso_no_es_durable_y_el_trabajo_se_encuentra_consultando(pg):
    """Un padre que no escuchaba cuando llegó su último hijo no recibe el aviso nunca: lo encuentra
    al consultar. Primero se escucha y después se consulta, o un aviso entre medias se perdería."""
    preparar_con_los_dos_recibidos(pg, PADRE)
    pg.crear_padre("otro", ["logs"])
    pg.admitir(f"{PADRE}-logs")
    pg.admitir(f"{PADRE}-config")  # el padre se activa sin nadie escuchando
    escucha = buzon_pg.escuchar(pg.destino)
    try:
        assert buzon_pg.esperar_avisos(escucha, SIN_AVISO_S) == []
        assert buzon_pg.padres_en_cola(pg.conexion) == [PADRE]
        pg.recibir("otro", "logs", "otro-logs", RESULTADO)
        pg.admitir("otro-logs")  # ahora sí escucha
        assert buzon_pg.esperar_avisos(escucha, ESPERA_MAXIMA_S) == ["otro"]
        assert buzon_pg.padres_en_cola(pg.conexion) == ["otro", PADRE]
    finally:
        escucha.close()


# --- Una conexión que cae a mitad de una transacción o durante el COMMIT -----------------------------

def test_un_backend_que_muere_a_mitad_de_admitir_no_deja_nada_y_reintentar_admite_una_vez(pg):
    preparar_con_los_dos_recibidos(pg, PADRE)
    antes = pg.volcado()
    victima, observador = pg.nueva(), pg.nueva()
    with observador.transaction():  # otro tiene al padre: la admisión se queda esperando a mitad
        observador.execute("SELECT 1 FROM ejecuciones WHERE id=%s FOR UPDATE", (PADRE,))
        admision = en_otro_hilo(buzon_pg.admitir, victima, f"{PADRE}-logs")
        esperar_a_que_espere(pg.conexion, victima, admision, evento="transactionid")
        pg.filas("SELECT pg_terminate_backend(?)", victima.info.backend_pid)
        with pytest.raises(psycopg.OperationalError):
            admision.resultado()
    assert pg.volcado() == antes  # ni el mensaje ni la marca: la transacción no se confirmó
    otra = pg.nueva()
    assert buzon_pg.admitir(otra, f"{PADRE}-logs") == "admitida"
    assert [entrega for _, entrega, _ in pg.mensajes(PADRE)] == [f"{PADRE}-logs"]


@pytest.fixture(scope="module")
def servidor_propio():
    """Un cluster solo para este módulo: el test de la réplica que no existe cambia su configuración."""
    try:
        with ClusterTemporal() as cluster:
            yield cluster.conexion
    except FaltaPostgres as error:
        sin_postgres(str(error))


def commit_que_escribe(conexion):
    """(conexión, llamada): una transacción que escribe en el WAL, con su COMMIT ya en marcha en otro hilo."""
    bd = psycopg.connect(conexion)
    bd.add_notice_handler(lambda aviso: None)
    bd.execute("SELECT pg_logical_emit_message(true, 'prueba', 'x')")
    return bd, en_otro_hilo(bd.commit)


def test_la_espera_a_la_replica_sincrona_no_se_fia_de_show_sino_de_un_commit_que_espera(servidor_propio):
    """Con el checkpointer sin releer la configuración (aquí, parado con SIGSTOP: lo mismo que en
    medio de un CHECKPOINT largo), SHOW ya dice la réplica y un COMMIT aún no espera: la espera
    ingenua (`esperar_al_ajuste`) vuelve demasiado pronto. `esperar_a_que_los_commits_esperen` no
    vuelve hasta que el checkpointer sigue y pone la marca; después, un COMMIT sí espera."""
    with psycopg.connect(servidor_propio, autocommit=True) as mirador:
        (checkpointer,) = mirador.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'").fetchone()
        os.kill(checkpointer, signal.SIGSTOP)
        try:
            mirador.execute("ALTER SYSTEM SET synchronous_standby_names = 'replica_que_no_existe'")
            mirador.execute("SELECT pg_reload_conf()")
            with psycopg.connect(servidor_propio) as ingenua:
                esperar_al_ajuste(ingenua, "synchronous_standby_names", "replica_que_no_existe")
                ingenua.execute("SELECT pg_logical_emit_message(true, 'prueba', 'x')")
                commit = en_otro_hilo(ingenua.commit)
                with pytest.raises(RuntimeError, match="no esperó"):
                    esperar_a_que_espere(mirador, ingenua, commit, "SyncRep")
            espera = en_otro_hilo(esperar_a_que_los_commits_esperen, mirador, servidor_propio)
            time.sleep(0.5)  # decenas de sondas, y ninguna espera mientras el checkpointer no siga
            assert not espera.acabada()
        finally:
            os.kill(checkpointer, signal.SIGCONT)
        try:
            assert espera.resultado() == ("IPC", "SyncRep", "COMMIT")
            victima, commit = commit_que_escribe(servidor_propio)
            with victima:
                assert esperar_a_que_espere(mirador, victima, commit, "SyncRep")[:2] == ("IPC", "SyncRep")
                mirador.execute("SELECT pg_cancel_backend(%s)", (victima.info.backend_pid,))
                commit.resultado()
        finally:
            mirador.execute("ALTER SYSTEM RESET synchronous_standby_names")
            mirador.execute("SELECT pg_reload_conf()")
            esperar_al_ajuste(mirador, "synchronous_standby_names", "")


@pytest.mark.parametrize("paso", ["recibir", "admitir"])
def test_si_la_conexion_cae_durante_el_commit_reintentar_con_la_misma_identidad_es_seguro(servidor_propio, paso):
    """El COMMIT se queda esperando a una réplica síncrona que no existe: en ese momento ya está
    escrito en el disco del servidor, pero el cliente no lo sabe. Se corta la conexión
    (pg_terminate_backend): el cliente ve un error y no sabe si se confirmó. Sí se confirmó, y el
    servidor lo dice en un WARNING antes de cerrar (un corte de red no diría nada).
    Reintentar con la misma identidad de entrega no duplica nada."""
    with esquema_de_prueba(servidor_propio) as destino:
        almacen = Almacen("postgres", destino).abrir()
        try:
            almacen.crear_padre(PADRE, ["logs", "config"])
            if paso == "admitir":
                almacen.recibir(PADRE, "logs", "e-1", RESULTADO)
            almacen.filas("ALTER SYSTEM SET synchronous_standby_names = 'replica_que_no_existe'")
            try:
                almacen.filas("SELECT pg_reload_conf()")
                # No basta con que SHOW diga la réplica: lo que decide es una marca que pone el
                # checkpointer al releer la configuración. Se espera a ver un COMMIT esperando.
                esperar_a_que_los_commits_esperen(almacen.conexion, destino)
                victima = almacen.nueva()  # un backend que arranca ahora ya tiene el ajuste nuevo
                avisos = []  # los campos se copian en el acto: el aviso solo vale durante la llamada
                victima.add_notice_handler(lambda aviso: avisos.append(
                    (aviso.severity_nonlocalized, aviso.sqlstate, aviso.message_detail)))
                hacer = {"recibir": lambda: buzon_pg.recibir(victima, PADRE, "logs", "e-1", RESULTADO),
                         "admitir": lambda: buzon_pg.admitir(victima, "e-1")}[paso]
                llamada = en_otro_hilo(hacer)
                esperar_a_que_espere(almacen.conexion, victima, llamada, evento="SyncRep")
                almacen.filas("SELECT pg_terminate_backend(?)", victima.info.backend_pid)
                with pytest.raises(psycopg.OperationalError):
                    llamada.resultado()
            finally:
                almacen.filas("ALTER SYSTEM RESET synchronous_standby_names")
                almacen.filas("SELECT pg_reload_conf()")
            # El servidor avisó antes de cerrar: la transacción ya estaba confirmada en local.
            assert [aviso[:2] for aviso in avisos] == [("WARNING", "57P01")]
            assert "already committed locally" in avisos[0][2]
            # El cliente no lo sabe, pero se confirmó:
            assert almacen.filas("SELECT disposicion FROM buzon WHERE entrega='e-1'") == [
                ("recibida",) if paso == "recibir" else ("admitida",)]
            reintento = almacen.nueva()
            esperar_al_ajuste(reintento, "synchronous_standby_names", "")
            if paso == "recibir":
                assert buzon_pg.recibir(reintento, PADRE, "logs", "e-1", RESULTADO) == "duplicada"
            assert buzon_pg.admitir(reintento, "e-1") == "admitida"
            assert buzon_pg.admitir(reintento, "e-1") == "admitida"
            assert almacen.mensajes(PADRE) == [(1, "e-1", RESULTADO)]
            # La variante ingenua: el reintento con una identidad nueva es otra entrega, y el
            # resultado que ya se había confirmado entra dos veces.
            assert buzon_pg.recibir(reintento, PADRE, "logs", "e-1-otra-vez", RESULTADO) == "recibida"
            assert buzon_pg.admitir(reintento, "e-1-otra-vez") == "admitida"
            assert [carga for _, _, carga in almacen.mensajes(PADRE)] == [RESULTADO, RESULTADO]
        finally:
            almacen.cerrar()


# --- Un trabajador congelado con la fila del padre bloqueada ------------------------------------------

def test_abrir_pone_limites_a_las_esperas_y_la_cadena_de_conexion_manda(pg):
    """Sin límites (lo que PostgreSQL trae: 0), un cerrojo de un proceso colgado no se suelta nunca."""
    ajustes = list(historial_pg.LIMITES)
    mostrar = lambda bd: {a: bd.execute(f"SHOW {a}").fetchone()[0] for a in ajustes}  # noqa: E731
    with (historial_pg.abrir(pg.destino) as de_abrir, psycopg.connect(pg.destino) as sin_abrir,
          historial_pg.abrir(con_ajustes(pg.destino, lock_timeout="1s")) as propia):
        con_los_de_abrir = mostrar(de_abrir)
        assert all(valor not in ("0", "0ms") for valor in con_los_de_abrir.values()), con_los_de_abrir
        assert mostrar(sin_abrir)["idle_in_transaction_session_timeout"] == mostrar(sin_abrir)["lock_timeout"] == "0"
        assert mostrar(propia) == {**con_los_de_abrir, "lock_timeout": "1s"}
        assert propia.execute("SHOW search_path").fetchone() == pg.conexion.execute("SHOW search_path").fetchone()


@pytest.mark.parametrize("limite", ["el de abrir", "ninguno"])
def test_un_trabajador_congelado_con_la_fila_del_padre_la_suelta_al_limite_de_inactividad(pg, limite):
    """Un trabajador (un proceso de verdad) se para con SIGSTOP dentro de admitir, con la fila del
    padre bloqueada. Con el límite de inactividad en transacción (aquí medio segundo, no los 10 s
    de abrir, para no esperar), el servidor cierra su sesión: el padre termina, y el trabajador, al
    seguir, reconecta y repite la entrega, que llega tarde. Sin límite (la variante), nadie suelta
    la fila: el padre solo sale rindiéndose (su lock_timeout, aquí también de medio segundo)."""
    preparar_con_logs_recibida(pg, PADRE)
    inactividad = "500ms" if limite == "el de abrir" else 0
    trabajador = con_ajustes(pg.destino, idle_in_transaction_session_timeout=inactividad)
    with varias_maquinas.Congelado(trabajador, PUNTO, (PADRE, "logs", f"{PADRE}-logs", RESULTADO)) as congelado:
        assert congelado.parado()
        padre = pg.nueva()
        padre.execute("SET lock_timeout = '500ms'")
        if limite == "el de abrir":
            buzon_pg.terminar(padre, PADRE, "cancelada")
            assert pg.estado(PADRE) == ("cancelada", 1)
            assert congelado.seguir() == ["reconecta", f"hecha {PADRE}-logs tardia"]
        else:
            with pytest.raises(psycopg.errors.LockNotAvailable):
                buzon_pg.terminar(padre, PADRE, "cancelada")
            assert pg.filas("SELECT state FROM pg_stat_activity WHERE pid = ?", congelado.backend) == [
                ("idle in transaction",)]
    assert pg.mensajes(PADRE) == []


# --- Varias máquinas: procesos que compiten por las mismas filas, y que mueren -------------------------

# Los trabajadores y quien los lanza, los mata y cuenta son los de curso/material/varias_maquinas.py, el
# simulacro del cuaderno: cada uno es `python -m curso.material.varias_maquinas`, que importa buzon_pg de
# este punto de control. Sus percances (PERCANCES): dos SIGKILL y dos cortes desde el servidor.
PADRES_DEL_SIMULACRO = 12
HIJOS_DEL_SIMULACRO = ("logs", "config")


def plan_del_simulacro(almacen, padres):
    """Las entregas del simulacro, [padre, hijo, entrega, carga], con sus padres ya creados."""
    for n in range(padres):
        almacen.crear_padre(f"p{n}", list(HIJOS_DEL_SIMULACRO))
    return [(f"p{n}", hijo, f"p{n}-{hijo}", {"hijo": hijo, "padre": n})
            for n in range(padres) for hijo in HIJOS_DEL_SIMULACRO]


def perdidas_y_dobles(almacen, plan):
    """Qué resultados del plan no entraron en la trayectoria de su padre, y cuántos entraron más de
    una vez. Se cuentan por lo que dicen (padre y carga), no por su identidad de entrega."""
    veces = {(padre, json.dumps(carga, sort_keys=True)): 0 for padre, _, _, carga in plan}
    for padre, cuerpo in almacen.filas("SELECT padre, carga FROM mensajes"):
        veces[(padre, json.dumps(json.loads(cuerpo), sort_keys=True))] += 1
    return sorted(clave for clave, n in veces.items() if n == 0), sum(n > 1 for n in veces.values())


def test_si_cada_trabajador_inventa_su_identidad_cada_resultado_entra_una_vez_por_trabajador(pg):
    """La variante ingenua del simulacro: la identidad la pone quien envía (entrega-de-N), no la
    entrega. Sin cortes ni muertes, los dos trabajadores meten cada resultado dos veces."""
    plan = plan_del_simulacro(pg, 3)
    entorno = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PUNTO), *(p for p in sys.path if p)]))
    for numero in (1, 2):
        suyo = [(p, h, f"{e}-de-{numero}", c) for p, h, e, c in plan]
        subprocess.run([sys.executable, "-m", "curso.material.varias_maquinas", pg.destino, str(numero), json.dumps(suyo)],
                       env=entorno, stdout=subprocess.DEVNULL, check=True, timeout=ESPERA_MAXIMA_S)
    assert perdidas_y_dobles(pg, plan) == ([], len(plan))


def test_trabajadores_que_mueren_ni_pierden_ni_duplican_entregas(pg):
    plan = plan_del_simulacro(pg, PADRES_DEL_SIMULACRO)
    cuenta = varias_maquinas.simulacro(pg.destino, PUNTO, plan, varias_maquinas.PERCANCES)
    assert cuenta.pop("errores") == {}
    assert cuenta["sigkill"] == 2 and cuenta["corte"] == 2 and cuenta["reconecta"] >= 2, cuenta
    # Al reanudar, lo recibido y sin admitir se admite (lo que dejara a medias un proceso muerto).
    for entrega in pg.pendientes():
        pg.admitir(entrega)
    assert perdidas_y_dobles(pg, plan) == ([], 0)
    assert pg.filas("SELECT disposicion, count(*) FROM buzon GROUP BY disposicion") == [("admitida", len(plan))]
    for n in range(PADRES_DEL_SIMULACRO):
        assert [seq for seq, _, _ in pg.mensajes(f"p{n}")] == [1, 2]
        assert pg.estado(f"p{n}") == ("en_cola", 1)
