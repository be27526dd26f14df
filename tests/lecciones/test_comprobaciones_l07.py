"""Cada error contra el que avisa la lección 07 lo pilla el caso de la comprobación escrito para él.

Como en test_comprobaciones_buzon.py: cada implementación equivocada se pone al final del módulo
del punto de control 07 (sustituye a la buena por definirse después), se comprueba su ejercicio
contra un PostgreSQL de verdad y se exige que fallen exactamente los casos escritos para ese
error. Las otras maneras correctas (un SELECT … FOR UPDATE antes de escribir) tienen que pasar.
"""
import tempfile

import pytest
from ayudas import cambiar, casos_que_nombran, evaluar_con_otra_version

from curso.comprobaciones import ejercicios
from curso.postgres.cluster import VARIABLE_DE_CONEXION

ejercicios.cargar_registro()

# --- 7.1: mover_puntero ----------------------------------------------------------------------------

MOVER = '''
def mover_puntero(bd, ejecucion, base, nuevo):
    movido = bd.execute(
        "UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s AND resumen_activo IS NOT DISTINCT FROM %s",
        (nuevo, ejecucion, base))
    if movido.rowcount == 0:
        (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
        raise BaseObsoleta(f"otro movió el puntero antes: el activo ya es el resumen {ahora}")
'''

LEER_Y_ESCRIBIR = '''
def mover_puntero(bd, ejecucion, base, nuevo):
    (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
    if ahora != base:
        raise BaseObsoleta(f"otro movió el puntero antes: el activo ya es el resumen {ahora}")
    bd.execute("UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s", (nuevo, ejecucion))
'''

# Otra manera buena: bloquear la fila, comparar en Python y escribir.
CON_FOR_UPDATE = cambiar(LEER_Y_ESCRIBIR, ("WHERE id=%s\", (ejecucion,))", "WHERE id=%s FOR UPDATE\", (ejecucion,))"))

# Otra manera buena de 7.2: un INSERT normal dentro de un SAVEPOINT; si choca, se deshace solo él.
CON_SAVEPOINT = '''
import psycopg


def recibir(bd, padre, hijo, entrega, carga):
    cuerpo = json_canonico(carga, "La carga")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=%s AND hijo=%s", (padre, hijo)).fetchone() is None:
            raise PermissionError("ese padre no espera a ese hijo")
        try:
            with bd.transaction():  # un SAVEPOINT
                bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s)",
                           (entrega, padre, hijo, cuerpo))
            return RECIBIDA
        except psycopg.errors.UniqueViolation:
            pass
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if anterior == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError("la misma identidad con otros datos")
'''

# El error: capturar la UniqueViolation sin SAVEPOINT. La transacción ya está abortada, y el SELECT de
# después falla con «current transaction is aborted».
CAPTURAR_SIN_SAVEPOINT = cambiar(CON_SAVEPOINT, ('''            with bd.transaction():  # un SAVEPOINT
                bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s)",
                           (entrega, padre, hijo, cuerpo))''', '''            bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s)",
                       (entrega, padre, hijo, cuerpo))'''))

# --- 7.2: recibir ----------------------------------------------------------------------------------

RECIBIR = '''
def recibir(bd, padre, hijo, entrega, carga):
    cuerpo = json_canonico(carga, "La carga")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=%s AND hijo=%s", (padre, hijo)).fetchone() is None:
            raise PermissionError("ese padre no espera a ese hijo")
        guardada = bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s) "
                              "ON CONFLICT (entrega) DO NOTHING", (entrega, padre, hijo, cuerpo))
        if guardada.rowcount == 1:
            return RECIBIDA
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if anterior == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError("la misma identidad con otros datos")
'''

# El recibir de buzon.py, traducido: mirar primero y después un INSERT sin ON CONFLICT.
MIRAR_E_INSERTAR = '''
def recibir(bd, padre, hijo, entrega, carga):
    cuerpo = json_canonico(carga, "La carga")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=%s AND hijo=%s", (padre, hijo)).fetchone() is None:
            raise PermissionError("ese padre no espera a ese hijo")
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if anterior is not None:
            if anterior == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError("la misma identidad con otros datos")
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s)",
                   (entrega, padre, hijo, cuerpo))
    return RECIBIDA
'''

SIN_ON_CONFLICT = '''"ON CONFLICT (entrega) DO NOTHING", (entrega, padre, hijo, cuerpo))'''
MIRA_FILAS = '''        if guardada.rowcount == 1:
            return RECIBIDA
'''
COMPARA = '''        if anterior == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError("la misma identidad con otros datos")'''

# (ejercicio, módulo, el error, la implementación equivocada, un trozo del nombre de cada caso que lo pilla)
ERRORES = [
    ("7.1", "resumenes_pg", "leer el puntero y después escribirlo (el compare-and-swap de Python)",
     LEER_Y_ESCRIBIR, ["a la vez"]),
    ("7.1", "resumenes_pg", "comparar con = (NULL = NULL no es verdad)",
     cambiar(MOVER, ("IS NOT DISTINCT FROM %s", "= %s")), ["base None", "solo se mueve el puntero"]),
    ("7.1", "resumenes_pg", "el IS de SQLite, que PostgreSQL no entiende con un parámetro",
     cambiar(MOVER, ("IS NOT DISTINCT FROM %s", "IS %s")),
     ["sigue en la base", "otro lo movió antes", "base None", "a la vez", "solo se mueve el puntero"]),
    ("7.1", "resumenes_pg", "no mirar el número de filas",
     cambiar(MOVER, ('''    if movido.rowcount == 0:
        (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
        raise BaseObsoleta(f"otro movió el puntero antes: el activo ya es el resumen {ahora}")
''', "")), ["otro lo movió antes", "a la vez"]),
    ("7.1", "resumenes_pg", "un mensaje de BaseObsoleta que no dice cuál es el activo",
     cambiar(MOVER, ('''f"otro movió el puntero antes: el activo ya es el resumen {ahora}"''',
                     '''"otro movió el puntero antes"''')), ["otro lo movió antes"]),
    ("7.1", "resumenes_pg", "un UPDATE sin condición sobre la base",
     cambiar(MOVER, (" AND resumen_activo IS NOT DISTINCT FROM %s", ""), ("(nuevo, ejecucion, base)", "(nuevo, ejecucion)")),
     ["otro lo movió antes", "a la vez"]),
    ("7.2", "buzon_pg", "mirar primero e insertar sin ON CONFLICT (el recibir de SQLite)",
     MIRAR_E_INSERTAR, ["justo antes de tu INSERT"]),
    ("7.2", "buzon_pg", "un INSERT sin ON CONFLICT y sin mirar: el duplicado es un error de clave",
     cambiar(RECIBIR, (SIN_ON_CONFLICT, '''"", (entrega, padre, hijo, cuerpo))''')),
     ["un reintento", "con otros datos", "justo antes de tu INSERT"]),
    ("7.2", "buzon_pg", "ON CONFLICT DO NOTHING sin mirar cuántas filas insertó: siempre «recibida»",
     cambiar(RECIBIR, (MIRA_FILAS + '''        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
''' + COMPARA, "        return RECIBIDA")),
     ["un reintento", "con otros datos", "justo antes de tu INSERT"]),
    ("7.2", "buzon_pg", "mirar primero, y luego ON CONFLICT DO NOTHING sin mirar cuántas filas",
     cambiar(MIRAR_E_INSERTAR, ('''(%s, %s, %s, %s)",''', '''(%s, %s, %s, %s) ON CONFLICT DO NOTHING",''')),
     ["justo antes de tu INSERT"]),
    ("7.2", "buzon_pg", "cero filas tomado siempre por un duplicado, sin comparar los datos",
     cambiar(RECIBIR, (COMPARA, "        return DUPLICADA")), ["con otros datos"]),
]


@pytest.fixture(autouse=True)
def servidor_y_temporales(postgres, tmp_path, monkeypatch):
    """Las comprobaciones usan el servidor de la sesión (como en el cuaderno, por CURSO_POSTGRES), y
    lo que creen en la carpeta temporal va a la de este test."""
    monkeypatch.setenv(VARIABLE_DE_CONEXION, postgres)
    carpeta = tmp_path / "temporales"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))


@pytest.mark.parametrize("id, modulo, funcion", [
    ("7.1", "resumenes_pg", MOVER), ("7.1", "resumenes_pg", CON_FOR_UPDATE), ("7.2", "buzon_pg", RECIBIR),
    ("7.2", "buzon_pg", CON_SAVEPOINT),
], ids=["7.1 UPDATE condicional", "7.1 SELECT FOR UPDATE", "7.2 ON CONFLICT", "7.2 SAVEPOINT"])
def test_las_versiones_buenas_de_aqui_pasan_su_comprobacion(id, modulo, funcion, tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version(id, modulo, funcion, tmp_path)
    assert not fallan and not pendientes, informe


@pytest.mark.parametrize("id, modulo, error, funcion, trozos", ERRORES, ids=[f"{e[0]} {e[2]}" for e in ERRORES])
def test_cada_error_lo_pilla_el_caso_escrito_para_el(id, modulo, error, funcion, trozos, tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version(id, modulo, funcion, tmp_path, diferencial=False)
    assert not pendientes, informe
    assert fallan == casos_que_nombran(id, trozos), f"{error}:\n{informe}"


def test_capturar_la_unique_violation_sin_savepoint_lo_pilla_cada_caso_y_lo_explica_en_castellano(tmp_path):
    """El error de capturar la UniqueViolation sin SAVEPOINT llega como «current transaction is
    aborted», que no dice qué hay que cambiar. Lo pillan los tres casos (cada uno lee lo guardado
    tras un duplicado), y cada uno lo explica en castellano."""
    fallan, pendientes, informe = evaluar_con_otra_version("7.2", "buzon_pg", CAPTURAR_SIN_SAVEPOINT, tmp_path,
                                                           diferencial=False)
    assert not pendientes, informe
    assert fallan == casos_que_nombran("7.2", ["un reintento", "con otros datos", "justo antes de tu INSERT"]), informe
    assert "current transaction is aborted" not in informe, informe
    assert informe.count("(PostgreSQL ya había abortado tu transacción por un error anterior") == 3, informe
    assert informe.count("llegó:    'InFailedSqlTransaction (SQLSTATE 25P02)'") == 3, informe


def test_sin_servidor_cada_caso_lo_dice_en_una_linea_y_remite_a_curso_postgres(tmp_path, monkeypatch):
    """Sin CURSO_POSTGRES ni programas de PostgreSQL, ningún caso pasa ni lanza una traza: cada uno
    dice que falta el servidor, en pocas líneas, y dónde se explica cómo conseguirlo."""
    monkeypatch.delenv(VARIABLE_DE_CONEXION)
    vacia = tmp_path / "sin_programas"
    vacia.mkdir()
    monkeypatch.setenv("CURSO_POSTGRES_BIN", str(vacia))
    fallan, pendientes, informe = evaluar_con_otra_version("7.2", "buzon_pg", RECIBIR, tmp_path)
    assert fallan == {caso.descripcion for caso in ejercicios.buscar("7.2").casos} and not pendientes, informe
    assert informe.count("python -m curso postgres") == len(fallan), informe
    assert "Traceback" not in informe and len(informe.splitlines()) == 2 + 3 * len(fallan), informe
