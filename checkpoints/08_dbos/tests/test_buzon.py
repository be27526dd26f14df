"""El contrato de `padres.py` y `buzon.py` (lección 05): un test por invariante, sobre ficheros SQLite reales.

El contrato del encargo en sí (qué encargo y qué entrega se aceptan) está en test_encargos.py;
aquí, que el buzón lo aplique."""
import json
import sqlite3

import pytest

import buzon
import exigencias
import historial
import padres
import resumenes
from buzon import admitir, pendientes, recibir
from curso.comprobaciones import hostiles
from encargos import encargo
from padres import abrir_buzon, crear_padre, estado, mensajes, terminar

PADRE = "padre"
ENCARGO_LOGS = encargo("Encontrar en los registros cuándo deja la API de poder hablar con db.",
                       ["logs/api@v9", "logs/db@v4"], tope_de_pasos=8)
ENTREGA_LOGS = {"hallazgos": ["La API intenta conectar con db en el puerto 5433."],
                "referencias": ["logs/api@v9:17"], "incertidumbres": []}
RESULTADO = {"hallazgo": "El servicio usa el puerto 5433", "fuente": "log:17"}


@pytest.fixture
def ruta(tmp_path):
    return tmp_path / "buzon.db"


@pytest.fixture
def bd(ruta):
    """Un padre que espera a «logs» (sin encargo) y a «config»."""
    bd = abrir_buzon(ruta)
    crear_padre(bd, PADRE, ["logs", "config"])
    yield bd
    bd.close()


def volcado(bd):
    return "\n".join(bd.iterdump())


def filas(bd, sql, *parametros):
    return bd.execute(sql, parametros).fetchall()


def disposicion(bd, entrega):
    return filas(bd, "SELECT disposicion, seq_admitida FROM buzon WHERE entrega=?", entrega)[0]


def otra_conexion(ruta):
    """Otra conexión, como la de otro proceso, con SQL directo."""
    return sqlite3.connect(ruta, isolation_level=None)


# --- El esquema -----------------------------------------------------------------------------

def test_abrir_buzon_deja_claves_foraneas_wal_y_synchronous_full(bd):
    assert bd.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert bd.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert bd.execute("PRAGMA synchronous").fetchone()[0] == 2  # 2 es FULL
    with pytest.raises(sqlite3.IntegrityError):  # un hijo que nadie espera no entra ni a mano
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES ('e', 'padre', 'otro', '{}')")
    with pytest.raises(sqlite3.IntegrityError):
        bd.execute("UPDATE ejecuciones SET estado='perdida'")


def test_el_buzon_se_monta_sobre_la_base_de_la_leccion_04(ruta):
    antigua = historial.abrir(ruta)
    historial.crear_ejecucion(antigua, "r-1")
    historial.anotar(antigua, "r-1", "La ejecución es de solo lectura.")
    antigua.close()
    bd = abrir_buzon(ruta)
    assert estado(bd, "r-1") == ("en_marcha", 0)  # las ejecuciones que había siguen en marcha
    assert resumenes.contexto(bd, "r-1")["cola"] == [(1, "La ejecución es de solo lectura.")]
    historial.crear_ejecucion(bd, "r-2")  # y historial.py sigue funcionando sobre la base nueva
    assert estado(bd, "r-2") == ("en_marcha", 0)
    bd.close()


def test_el_estado_de_una_ejecucion_que_no_existe_lo_dice(bd):
    with pytest.raises(ValueError, match="No existe la ejecución 'no-existe'"):
        estado(bd, "no-existe")


def test_abrir_el_buzon_otra_vez_no_cambia_nada(bd, ruta):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    antes = volcado(bd)
    otra = abrir_buzon(ruta)
    padres.crear_esquema(otra)
    assert volcado(otra) == antes
    otra.close()


# --- Recibir --------------------------------------------------------------------------------

def test_recibir_guarda_la_carga_en_json_canonico(bd):
    assert recibir(bd, PADRE, "logs", "e-1", {"b": [1, "ñ"], "a": {"y": 2, "x": 1}}) == "recibida"
    assert filas(bd, "SELECT carga FROM buzon")[0][0] == '{"a":{"x":1,"y":2},"b":[1,"ñ"]}'


@pytest.mark.contrato("5.1")
def test_una_entrega_que_se_repite_es_duplicada_aunque_cambie_el_orden_de_las_claves(bd):
    assert recibir(bd, PADRE, "logs", "e-1", RESULTADO) == "recibida"
    antes = volcado(bd)
    assert recibir(bd, PADRE, "logs", "e-1", dict(reversed(list(RESULTADO.items())))) == "duplicada"
    assert volcado(bd) == antes


@pytest.mark.contrato("5.1")
def test_la_misma_identidad_con_otros_datos_es_un_error(bd):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    antes = volcado(bd)
    for padre, hijo, carga in ((PADRE, "logs", {"hallazgo": "Otra conclusión"}),
                               (PADRE, "config", RESULTADO)):
        with pytest.raises(ValueError):  # el mensaje lo escribe el 5.1, con sus palabras
            recibir(bd, padre, hijo, "e-1", carga)
    assert volcado(bd) == antes


@pytest.mark.contrato("5.1")
def test_un_hijo_no_esperado_es_permission_error(bd):
    antes = volcado(bd)
    with pytest.raises(PermissionError):
        recibir(bd, PADRE, "intruso", "e-1", RESULTADO)
    assert volcado(bd) == antes


# mensaje None: el rechazo lo escribe el 5.1 con sus palabras; los demás, las comprobaciones que
# la celda da hechas (exigencias.py) con las suyas: el test de contrato pide el ValueError que
# pide el texto; el de regresión, las palabras de la referencia.
RECHAZOS_DE_RECIBIR = [
    (PADRE, "logs", "", RESULTADO, "La identidad de la entrega debe ser un texto no vacío"),
    (PADRE, "logs", "   ", RESULTADO, "La identidad de la entrega debe ser un texto no vacío"),
    (PADRE, "logs", 17, RESULTADO, "La identidad de la entrega debe ser un texto"),
    (PADRE, "logs", "e" * 101, RESULTADO, "como mucho 100"),
    (PADRE, "logs", hostiles.SUSTITUTO_EN_IDENTIDAD, RESULTADO, "UTF-8"),
    (None, "logs", "e-1", RESULTADO, "El padre debe ser un texto"),
    (PADRE, b"logs", "e-1", RESULTADO, "El hijo debe ser un texto"),
    ("nadie", "logs", "e-1", RESULTADO, None),  # lo dice el 5.1, con sus palabras
    (PADRE, "logs", "e-1", ["no", "es", "un", "dict"], "debe ser un dict"),
    (PADRE, "logs", "e-1", "{}", "debe ser un dict"),
    (PADRE, "logs", "e-1", {"x": hostiles.NAN}, "NaN"),
    (PADRE, "logs", "e-1", {"x": [1, hostiles.INFINITO]}, "infinito"),
    (PADRE, "logs", "e-1", {"x": hostiles.CONJUNTO}, "no es JSON"),
    (PADRE, "logs", "e-1", {"x": hostiles.BYTES}, "no es JSON"),
    (PADRE, "logs", "e-1", {1: "clave entera"}, "no es JSON puro"),
    (PADRE, "logs", "e-1", {"x": hostiles.TUPLA}, "no es JSON puro"),
    (PADRE, "logs", "e-1", {"x": hostiles.SUSTITUTO_SOLO}, "UTF-8"),
    (PADRE, "logs", "e-1", {"x": [1, hostiles.ENTERO_ENORME]}, r"contiene un entero de unas \d+ cifras"),
    (PADRE, "logs", "e-1", {"x": hostiles.anidado()}, "anida más de"),
    (PADRE, "logs", "e-1", hostiles.circular(), "anida más de"),
    (PADRE, "logs", hostiles.anidado(), RESULTADO, "La identidad de la entrega debe ser un texto"),
]


@pytest.mark.contrato("5.1")
@pytest.mark.parametrize("padre, hijo, entrega, carga, mensaje", RECHAZOS_DE_RECIBIR)
def test_recibir_rechazado_no_cambia_nada(bd, padre, hijo, entrega, carga, mensaje):
    recibir(bd, PADRE, "config", "e-0", RESULTADO)
    antes = volcado(bd)
    with pytest.raises(ValueError) as error:
        recibir(bd, padre, hijo, entrega, carga)
    assert type(error.value) is ValueError  # una nuestra, no un UnicodeEncodeError escapado
    assert not bd.in_transaction
    assert volcado(bd) == antes


@pytest.mark.parametrize("padre, hijo, entrega, carga, mensaje", [c for c in RECHAZOS_DE_RECIBIR if c[-1]])
def test_recibir_rechazado_lo_dice_con_las_palabras_de_la_referencia(bd, padre, hijo, entrega, carga, mensaje):
    with pytest.raises(ValueError, match=mensaje):
        recibir(bd, padre, hijo, entrega, carga)


@pytest.mark.contrato("5.1")
def test_una_carga_se_admite_anidada_hasta_la_profundidad_maxima_y_no_mas(bd):
    limite = exigencias.PROFUNDIDAD_MAXIMA_DE_JSON
    # El dict es el nivel 1; anidado(n) son n + 1 listas. El rechazo lo hace json_canonico, que la
    # celda del 5.1 da hecha; sus palabras, en test_recibir_rechazado_lo_dice_con_las_palabras_de_la_referencia.
    assert recibir(bd, PADRE, "logs", "e-1", {"x": hostiles.anidado(limite - 2)}) == buzon.RECIBIDA
    antes = volcado(bd)
    with pytest.raises(ValueError):
        recibir(bd, PADRE, "logs", "e-2", {"x": hostiles.anidado(limite - 1)})
    assert volcado(bd) == antes


@pytest.mark.contrato("5.1")
def test_lo_recibido_sobrevive_a_cerrar_y_reabrir(bd, ruta):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    bd.close()
    otra = abrir_buzon(ruta)
    assert pendientes(otra) == ["e-1"]
    assert json.loads(filas(otra, "SELECT carga FROM buzon")[0][0]) == RESULTADO
    otra.close()


# --- Admitir --------------------------------------------------------------------------------

@pytest.mark.contrato("5.2")
def test_admitir_pone_la_entrega_en_la_trayectoria_con_su_numero(bd):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    assert admitir(bd, "e-1") == "admitida"
    assert mensajes(bd, PADRE) == [(1, "e-1", RESULTADO)]
    assert disposicion(bd, "e-1") == ("admitida", 1)
    assert pendientes(bd) == []


@pytest.mark.contrato("5.2")
def test_una_entrega_duplicada_no_se_admite_dos_veces(bd):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    admitir(bd, "e-1")
    assert recibir(bd, PADRE, "logs", "e-1", RESULTADO) == "duplicada"  # el transporte repite
    assert admitir(bd, "e-1") == "admitida"
    assert [entrega for _, entrega, _ in mensajes(bd, PADRE)] == ["e-1"]


@pytest.mark.contrato("5.2")
def test_admitir_dos_veces_es_inofensivo(bd):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    primera = admitir(bd, "e-1")
    antes = volcado(bd)
    assert admitir(bd, "e-1") == primera == "admitida"
    assert volcado(bd) == antes


@pytest.mark.contrato("5.2")
def test_la_trayectoria_se_numera_sin_huecos_en_orden_de_admision(bd):
    crear_padre(bd, "otro", ["logs"])
    for n, (padre, hijo) in enumerate([(PADRE, "logs"), ("otro", "logs"), (PADRE, "config"), (PADRE, "logs")]):
        recibir(bd, padre, hijo, f"e-{n}", {"n": n})
    for entrega in ("e-3", "e-0", "e-1", "e-2"):  # se admiten en otro orden que se recibieron
        admitir(bd, entrega)
    assert [(seq, entrega) for seq, entrega, _ in mensajes(bd, PADRE)] == [(1, "e-3"), (2, "e-0"), (3, "e-2")]
    assert [(seq, entrega) for seq, entrega, _ in mensajes(bd, "otro")] == [(1, "e-1")]


@pytest.mark.contrato("5.3")
def test_el_padre_solo_se_activa_cuando_llegan_todos_sus_hijos(bd):
    recibir(bd, PADRE, "logs", "e-logs", RESULTADO)
    recibir(bd, PADRE, "config", "e-config", {"hallazgo": "La base escucha en 5432"})
    admitir(bd, "e-logs")
    assert estado(bd, PADRE) == ("esperando", 0)
    admitir(bd, "e-config")
    assert estado(bd, PADRE) == ("en_cola", 1)


@pytest.mark.contrato("5.3")
def test_una_correccion_del_mismo_hijo_no_cuenta_como_el_otro_hijo(bd):
    """Dos mensajes no son dos hijos: la condición mira hijo por hijo (NOT EXISTS)."""
    recibir(bd, PADRE, "logs", "e-logs-1", RESULTADO)
    recibir(bd, PADRE, "logs", "e-logs-2", {"hallazgo": "Corrige e-logs-1: el puerto es 5434"})
    admitir(bd, "e-logs-1")
    admitir(bd, "e-logs-2")
    assert len(mensajes(bd, PADRE)) == 2
    assert estado(bd, PADRE) == ("esperando", 0)


@pytest.mark.contrato("5.3")
def test_el_padre_se_activa_una_sola_vez(bd):
    for entrega, hijo in (("e-1", "logs"), ("e-2", "config"), ("e-3", "logs"), ("e-4", "config")):
        recibir(bd, PADRE, hijo, entrega, {"entrega": entrega})
        admitir(bd, entrega)
    assert estado(bd, PADRE) == ("en_cola", 1)
    assert len(mensajes(bd, PADRE)) == 4  # lo que llega después entra en la trayectoria, sin reactivar


@pytest.mark.contrato("5.2")
@pytest.mark.parametrize("final", padres.TERMINALES)
def test_un_padre_terminado_sigue_terminado(bd, final):
    recibir(bd, PADRE, "logs", "e-logs", RESULTADO)
    admitir(bd, "e-logs")
    terminar(bd, PADRE, final)
    antes = estado(bd, PADRE)
    recibir(bd, PADRE, "config", "e-config", {"hallazgo": "tarde"})
    assert admitir(bd, "e-config") == "tardia"
    assert estado(bd, PADRE) == antes == (final, 1)
    with pytest.raises(ValueError, match="ya terminó"):
        terminar(bd, PADRE, "completada")
    assert estado(bd, PADRE) == antes


@pytest.mark.contrato("5.2")
def test_la_entrega_tardia_se_guarda(bd):
    terminar(bd, PADRE, "cancelada")
    carga = {"hallazgo": "Resultado tardío"}
    assert recibir(bd, PADRE, "logs", "e-tarde", carga) == "recibida"
    assert admitir(bd, "e-tarde") == "tardia"
    assert admitir(bd, "e-tarde") == "tardia"  # también es inofensivo admitirla otra vez
    assert disposicion(bd, "e-tarde") == ("tardia", None)
    assert json.loads(filas(bd, "SELECT carga FROM buzon WHERE entrega='e-tarde'")[0][0]) == carga
    assert mensajes(bd, PADRE) == []
    assert pendientes(bd) == []


@pytest.mark.contrato("5.2")
def test_admitir_una_entrega_desconocida_es_value_error(bd):
    antes = volcado(bd)
    for entrega, mensaje in (("nadie", None), ("", "texto no vacío"),  # «nadie»: lo dice el 5.2
                             (None, "texto no vacío"), (3, "texto no vacío")):
        with pytest.raises(ValueError, match=mensaje):
            admitir(bd, entrega)
    assert volcado(bd) == antes


class CaeAntesDeMarcar:
    """Una conexión que falla justo antes de marcar la entrega, ya añadido el mensaje."""

    def __init__(self, bd):
        self.bd = bd

    def __getattr__(self, nombre):
        return getattr(self.bd, nombre)

    def execute(self, sql, *argumentos):
        sql_normalizado = " ".join(sql.split()).lower()
        if sql_normalizado.startswith("update buzon") and "seq_admitida" in sql_normalizado:
            raise RuntimeError("caída simulada: el mensaje ya está, la marca de admitida no")
        return self.bd.execute(sql, *argumentos)


@pytest.mark.contrato("5.2")
def test_un_fallo_entre_el_mensaje_y_la_marca_no_deja_nada(bd, ruta):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    antes = volcado(bd)
    with pytest.raises(RuntimeError, match="caída simulada"):
        admitir(CaeAntesDeMarcar(bd), "e-1")
    assert volcado(bd) == antes  # ni el mensaje: la transacción entera se deshizo
    bd.close()
    otra = abrir_buzon(ruta)
    assert pendientes(otra) == ["e-1"]
    assert admitir(otra, "e-1") == "admitida"
    assert [entrega for _, entrega, _ in mensajes(otra, PADRE)] == ["e-1"]
    otra.close()


@pytest.mark.contrato("5.2")
def test_lo_admitido_lo_ve_otra_conexion_en_cuanto_admitir_vuelve(bd, ruta):
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    admitir(bd, "e-1")
    otra = otra_conexion(ruta)
    assert otra.execute("SELECT disposicion FROM buzon WHERE entrega='e-1'").fetchone() == ("admitida",)
    assert otra.execute("SELECT COUNT(*) FROM mensajes").fetchone() == (1,)
    otra.close()


# --- Crear y terminar padres ----------------------------------------------------------------

@pytest.mark.parametrize("padre, hijos, mensaje", [
    (PADRE, ["logs"], "ya existe"),
    ("nuevo", [], "entre 1 y"),
    ("nuevo", [f"h{i}" for i in range(padres.MAXIMO_DE_HIJOS + 1)], "entre 1 y"),
    ("nuevo", ["logs", "logs"], "repetidos"),
    ("nuevo", "logs", "lista de nombres"),
    ("nuevo", [""], "El nombre de un hijo"),
    ("nuevo", {"logs": {"objetivo": "x"}}, "El encargo debe tener exactamente las claves"),
    ("", ["logs"], "El padre debe ser un texto"),
    ("nuevo", {"logs": {**ENCARGO_LOGS, "plazo": 10**400}}, "positivo y finito"),
])
def test_crear_padre_rechazado_no_cambia_nada(bd, padre, hijos, mensaje):
    antes = volcado(bd)
    with pytest.raises(ValueError, match=mensaje):
        crear_padre(bd, padre, hijos)
    assert volcado(bd) == antes


@pytest.mark.parametrize("padre, final, mensaje", [
    (PADRE, "en_cola", "El estado final debe ser uno de"),
    (PADRE, "terminada", "El estado final debe ser uno de"),
    ("nadie", "completada", "No existe la ejecución 'nadie'"),
])
def test_terminar_rechazado_no_cambia_nada(bd, padre, final, mensaje):
    antes = volcado(bd)
    with pytest.raises(ValueError, match=mensaje):
        terminar(bd, padre, final)
    assert volcado(bd) == antes


@pytest.mark.contrato("5.1")
def test_recibir_aplica_el_encargo_del_hijo(ruta):
    bd = abrir_buzon(ruta)
    crear_padre(bd, PADRE, {"logs": ENCARGO_LOGS, "config": None})
    antes = volcado(bd)
    with pytest.raises(ValueError):  # las palabras son las de encargos.py: test_encargos.py
        recibir(bd, PADRE, "logs", "e-1", dict(ENTREGA_LOGS, referencias=["/etc/passwd"]))
    assert volcado(bd) == antes
    assert recibir(bd, PADRE, "logs", "e-1", ENTREGA_LOGS) == "recibida"
    assert recibir(bd, PADRE, "config", "e-2", RESULTADO) == "recibida"  # config no tiene encargo
    bd.close()


# --- El recorrido entero, como en la lección --------------------------------------------------------

@pytest.mark.contrato("5.3")
def test_dos_resultados_una_activacion_un_duplicado_y_tres_terminales_intactos(ruta):
    bd = abrir_buzon(ruta)
    crear_padre(bd, PADRE, ["logs", "config"])
    assert recibir(bd, PADRE, "logs", "entrega-1", RESULTADO) == "recibida"
    assert recibir(bd, PADRE, "logs", "entrega-1", RESULTADO) == "duplicada"
    bd.close()  # el proceso se cierra antes de admitir

    bd = abrir_buzon(ruta)
    with pytest.raises(RuntimeError):
        admitir(CaeAntesDeMarcar(bd), "entrega-1")
    bd.close()

    bd = abrir_buzon(ruta)
    assert mensajes(bd, PADRE) == [] and pendientes(bd) == ["entrega-1"]
    assert admitir(bd, "entrega-1") == admitir(bd, "entrega-1") == "admitida"
    assert estado(bd, PADRE) == ("esperando", 0)
    recibir(bd, PADRE, "config", "entrega-2", {"hallazgo": "La base escucha en 5432"})
    admitir(bd, "entrega-2")
    assert len(mensajes(bd, PADRE)) == 2
    assert estado(bd, PADRE) == ("en_cola", 1)

    for final in padres.TERMINALES:
        crear_padre(bd, final, ["tardio"])
        terminar(bd, final, final)
        recibir(bd, final, "tardio", f"tarde-{final}", {"hallazgo": "Resultado tardío"})
        assert admitir(bd, f"tarde-{final}") == "tardia"
        assert estado(bd, final) == (final, 1)
    assert filas(bd, "SELECT COUNT(*) FROM mensajes") == [(2,)]
    assert filas(bd, "SELECT COUNT(*) FROM buzon WHERE disposicion='tardia'") == [(3,)]
    bd.close()


def test_la_trayectoria_no_admite_una_entrega_dos_veces_ni_a_mano(bd):
    """El UNIQUE de `mensajes.entrega` protege aunque el código de arriba se equivoque."""
    recibir(bd, PADRE, "logs", "e-1", RESULTADO)
    admitir(bd, "e-1")
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, 2, 'e-1', '{}')", (PADRE,))
