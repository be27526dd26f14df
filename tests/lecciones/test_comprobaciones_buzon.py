"""Cada error contra el que avisa la lección 05 lo pilla el caso de la comprobación escrito para él.

Para cada uno se escribe aquí la implementación equivocada (una función que sustituye a la buena
al final del buzon.py del punto de control 05), se corre la comprobación de su ejercicio y se
exige que fallen exactamente los casos escritos para ese error: ni otro en su lugar (el caso
equivocado, con una expectativa que apunta al revés), ni ninguno si el error pasara sin verse.
"""
import tempfile

import pytest
from ayudas import cambiar, casos_que_nombran, evaluar_con_otra_version

from curso.comprobaciones import ejercicios

ejercicios.cargar_registro()

# --- Las versiones buenas, escritas aquí; cada error sale de cambiar un trozo ---------------------

RECIBIR = '''
def recibir(bd, padre, hijo, entrega, carga):
    cuerpo = json.dumps(carga, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    with transaccion(bd):
        if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError("ese padre no existe")
        if not bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=? AND hijo=?",
                          (padre, hijo)).fetchone():
            raise PermissionError("ese padre no espera a ese hijo")
        fila = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=?", (entrega,)).fetchone()
        if fila is not None:
            if fila == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError("la misma identidad con otros datos")
        encargo = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?", (padre, hijo)).fetchone()
        if encargo and encargo[0] is not None:  # lo que entrega tiene que cumplir su encargo
            validar_entrega(json.loads(encargo[0]), carga)
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (?, ?, ?, ?)",
                   (entrega, padre, hijo, cuerpo))
    return RECIBIDA
'''

ADMITIR = '''
def admitir(bd, entrega):
    with transaccion(bd):
        fila = bd.execute(
            "SELECT b.padre, b.carga, b.disposicion, e.estado FROM buzon b "
            "JOIN ejecuciones e ON e.id = b.padre WHERE b.entrega=?", (entrega,)).fetchone()
        if fila is None:
            raise ValueError("esa entrega no está en el buzón")
        padre, cuerpo, disposicion, estado_del_padre = fila
        if disposicion != RECIBIDA:
            return disposicion
        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=?", (entrega,))
            return TARDIA
        (seq,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)).fetchone()
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
                   (padre, seq, entrega, cuerpo))
        bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?",
                   (seq, entrega))
        activar_si_estan_todos(bd, padre)
    return ADMITIDA
'''

ACTIVAR = '''
def activar_si_estan_todos(bd, padre):
    bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = ? AND estado = 'esperando'
             AND NOT EXISTS (
                 SELECT 1 FROM hijos_esperados h WHERE h.padre = ejecuciones.id
                   AND NOT EXISTS (
                       SELECT 1 FROM buzon b WHERE b.padre = h.padre AND b.hijo = h.hijo
                         AND b.disposicion = 'admitida'))""",
        (padre,))
'''

INSERTAR = '''        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
                   (padre, seq, entrega, cuerpo))
'''
MARCAR = '''        bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?",'''
ACTIVA = "        activar_si_estan_todos(bd, padre)\n"
OTRA_TRANSACCION = "    with transaccion(bd):\n"


CUENTA_MENSAJES = '''
def activar_si_estan_todos(bd, padre):
    bd.execute(
        "UPDATE ejecuciones SET estado='en_cola', version=version+1 WHERE id=? AND estado='esperando' "
        "AND (SELECT COUNT(*) FROM mensajes WHERE padre=?) >= "
        "    (SELECT COUNT(*) FROM hijos_esperados WHERE padre=?)", (padre, padre, padre))
'''

# (ejercicio, el error contra el que avisa el texto, la implementación equivocada, un trozo del
# nombre de cada caso que tiene que pillarlo)
ERRORES = [
    ("5.1", "un duplicado del transporte tratado como un error",
     cambiar(RECIBIR, ("                return DUPLICADA", "                raise ValueError('ya estaba')")),
     ["«duplicada»"]),
    ("5.1", "la misma identidad con otros datos tomada por un duplicado",
     cambiar(RECIBIR, ("""            if fila == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError("la misma identidad con otros datos")""", "            return DUPLICADA")),
     ["con otros datos", "sea cual sea"]),
    ("5.1", "aceptar la entrega de un hijo que el padre no espera",
     cambiar(RECIBIR, ("""        if not bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=? AND hijo=?",
                          (padre, hijo)).fetchone():
            raise PermissionError("ese padre no espera a ese hijo")
""", "")),
     ["no espera", "que espera otro padre"]),
    ("5.1", "recibir que además admite",
     cambiar(RECIBIR, ("    return RECIBIDA", "    admitir(bd, entrega)\n    return RECIBIDA")),
     ["recibir no admite"]),
    ("5.2", "el mensaje y la marca en dos transacciones",
     cambiar(ADMITIR, (MARCAR, OTRA_TRANSACCION + MARCAR)),
     ["cae entre sus dos escrituras"]),
    ("5.2", "marcar primero y añadir el mensaje en otra transacción",
     cambiar(ADMITIR, (INSERTAR, ""), (ACTIVA, ACTIVA + OTRA_TRANSACCION + INSERTAR)),
     ["cae entre sus dos escrituras"]),
    ("5.2", "admitir sin mirar si el padre ya terminó",
     cambiar(ADMITIR, ("""        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=?", (entrega,))
            return TARDIA
""", "")),
     ["«tardía»"]),
    ("5.2", "admitir otra vez una entrega ya admitida",
     cambiar(ADMITIR, ("""        if disposicion != RECIBIDA:
            return disposicion
""", "")),
     ["dos veces"]),
    ("5.2", "admitir sin activar al padre",
     cambiar(ADMITIR, (ACTIVA, "")),
     ["del último hijo"]),
    ("5.3", "contar mensajes en vez de mirar hijo por hijo",
     CUENTA_MENSAJES,
     ["dos entregas admitidas del mismo hijo"]),
    ("5.3", "contar una entrega recibida como si estuviera admitida",
     cambiar(ACTIVAR, ("\n                         AND b.disposicion = 'admitida'", "")),
     ["recibida y sin admitir"]),
    ("5.3", "activar sin mirar que el padre siga esperando",
     cambiar(ACTIVAR, (" AND estado = 'esperando'", "")),
     ["una sola vez", "terminado"]),
]


@pytest.fixture(autouse=True)
def temporales_aqui(tmp_path, monkeypatch):
    """Lo que las comprobaciones creen en la carpeta temporal va a la de este test."""
    carpeta = tmp_path / "temporales"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))


@pytest.mark.parametrize("id, funcion", [("5.1", RECIBIR), ("5.2", ADMITIR), ("5.3", ACTIVAR)],
                         ids=["5.1", "5.2", "5.3"])
def test_las_versiones_buenas_de_aqui_pasan_su_comprobacion(id, funcion, tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version(id, "buzon", funcion, tmp_path)
    assert not fallan and not pendientes, informe


@pytest.mark.parametrize("id, error, funcion, trozos", ERRORES, ids=[f"{e[0]} {e[1]}" for e in ERRORES])
def test_cada_error_lo_pilla_el_caso_escrito_para_el(id, error, funcion, trozos, tmp_path):
    fallan, pendientes, informe = evaluar_con_otra_version(id, "buzon", funcion, tmp_path, diferencial=False)
    assert not pendientes, informe
    assert fallan == casos_que_nombran(id, trozos), f"{error}:\n{informe}"

