"""El contrato del buzón (lección 05), el mismo en SQLite (`buzon`) y en PostgreSQL (`buzon_pg`):
cada test corre sobre los dos (ver almacenes.py)."""
import json

import pytest

import buzon
import buzon_pg
import encargos
import exigencias
import padres_pg
from curso.comprobaciones import hostiles

# Las fixtures de almacenes.py (almacen, y esquema_postgres y postgres, que trae de curso.postgres),
# cargadas como plugin de pytest: importadas por su nombre, los argumentos de los tests las taparían.
pytest_plugins = ["almacenes"]

PADRE = "padre"
ENCARGO_LOGS = {
    "objetivo": "Encontrar en los registros cuándo deja la API de poder hablar con db.",
    "recursos": ["logs/api@v9", "logs/db@v4"],
    "acciones": ["leer", "buscar"],
    "entregable": {"hallazgos": [], "referencias": [], "incertidumbres": []},
    "tope_de_pasos": 8,
    "plazo": 120,
}
ENTREGA_LOGS = {
    "hallazgos": ["La API intenta conectar con db en el puerto 5433."],
    "referencias": ["logs/api@v9:17"],
    "incertidumbres": ["No sé si db se reinició antes."],
}
RESULTADO = {"hallazgo": "El servicio usa el puerto 5433", "fuente": "log:17"}


@pytest.fixture
def bd(almacen):
    """Un padre que espera a «logs» (sin encargo) y a «config»."""
    almacen.abrir()
    almacen.crear_padre(PADRE, ["logs", "config"])
    return almacen


def disposicion(bd, entrega):
    return bd.filas("SELECT disposicion, seq_admitida FROM buzon WHERE entrega=?", entrega)[0]


def test_las_comprobaciones_del_encargo_son_las_de_la_leccion_05():
    assert padres_pg.validar_encargo is encargos.validar_encargo and buzon_pg.validar_entrega is encargos.validar_entrega
    assert padres_pg.exigir_identidad is exigencias.exigir_identidad
    assert padres_pg.json_canonico is buzon_pg.json_canonico is exigencias.json_canonico
    for nombre in ("ESPERANDO", "EN_COLA", "TERMINALES", "RECIBIDA", "ADMITIDA", "TARDIA", "DUPLICADA", "MAXIMO_DE_HIJOS"):
        assert getattr(buzon_pg, nombre) == getattr(buzon, nombre)
    for modulo in (buzon_pg, padres_pg):
        assert "Lección 07." in modulo.__doc__


# --- El esquema -------------------------------------------------------------------------------------

def test_el_esquema_no_deja_entrar_a_mano_lo_que_el_contrato_prohibe(bd):
    antes = bd.volcado()
    with pytest.raises(bd.ErrorDeIntegridad):  # un hijo que nadie espera
        bd.filas("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES ('e', 'padre', 'otro', '{}')")
    with pytest.raises(bd.ErrorDeIntegridad):  # un estado que no existe
        bd.filas("UPDATE ejecuciones SET estado='perdida'")
    assert bd.volcado() == antes


def test_el_buzon_se_monta_sobre_la_base_de_la_leccion_04(almacen):
    antigua = almacen.abrir(solo_resumenes=True)
    antigua.crear_ejecucion("r-1")
    antigua.anotar("r-1", "La ejecución es de solo lectura.")
    bd = almacen.abrir()
    assert bd.estado("r-1") == ("en_marcha", 0)
    assert bd.contexto("r-1")["cola"] == [(1, "La ejecución es de solo lectura.")]
    bd.crear_ejecucion("r-2")
    assert bd.estado("r-2") == ("en_marcha", 0)


def test_el_estado_de_una_ejecucion_que_no_existe_lo_dice(bd):
    """estado() de un padre que nadie creó: un error que lo nombra, no un estado inventado."""
    with pytest.raises(ValueError, match="No existe la ejecución 'no-existe'"):
        bd.estado("no-existe")


def test_abrir_el_buzon_otra_vez_no_cambia_nada(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    antes = bd.volcado()
    otra = bd.nueva()
    bd.buzon.crear_esquema(otra)
    assert bd.volcado() == antes


# --- Recibir -------------------------------------------------------------------------------------

def test_recibir_guarda_la_carga_en_json_canonico(bd):
    assert bd.recibir(PADRE, "logs", "e-1", {"b": [1, "ñ"], "a": {"y": 2, "x": 1}}) == "recibida"
    assert bd.filas("SELECT carga FROM buzon") == [('{"a":{"x":1,"y":2},"b":[1,"ñ"]}',)]


def test_una_entrega_que_se_repite_es_duplicada_aunque_cambie_el_orden_de_las_claves(bd):
    assert bd.recibir(PADRE, "logs", "e-1", RESULTADO) == "recibida"
    antes = bd.volcado()
    assert bd.recibir(PADRE, "logs", "e-1", dict(reversed(list(RESULTADO.items())))) == "duplicada"
    assert bd.volcado() == antes


def test_la_misma_identidad_con_otros_datos_es_un_error(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    antes = bd.volcado()
    for padre, hijo, carga in ((PADRE, "logs", {"hallazgo": "Otra conclusión"}), (PADRE, "config", RESULTADO)):
        with pytest.raises(ValueError):  # en SQLite, el mensaje lo escribe el 5.1 con sus palabras
            bd.recibir(padre, hijo, "e-1", carga)
    assert bd.volcado() == antes


def test_un_hijo_no_esperado_es_permission_error(bd):
    antes = bd.volcado()
    with pytest.raises(PermissionError):
        bd.recibir(PADRE, "intruso", "e-1", RESULTADO)
    assert bd.volcado() == antes


@pytest.mark.parametrize("padre, hijo, entrega, carga, mensaje", [
    (PADRE, "logs", "", RESULTADO, "La identidad de la entrega debe ser un texto no vacío"),
    (PADRE, "logs", 17, RESULTADO, "La identidad de la entrega debe ser un texto"),
    (PADRE, "logs", "e" * 101, RESULTADO, "como mucho 100"),
    (PADRE, "logs", hostiles.SUSTITUTO_EN_IDENTIDAD, RESULTADO, "UTF-8"),
    (None, "logs", "e-1", RESULTADO, "El padre debe ser un texto"),
    ("nadie", "logs", "e-1", RESULTADO, None),  # en SQLite lo dice el 5.1, con sus palabras
    (PADRE, "logs", "e-1", "{}", "debe ser un dict"),
    (PADRE, "logs", "e-1", {"x": hostiles.NAN}, "NaN"),
    (PADRE, "logs", "e-1", {1: "clave entera"}, "no es JSON puro"),
    (PADRE, "logs", "e-1", {"x": [1, hostiles.ENTERO_ENORME]}, r"contiene un entero de unas \d+ cifras"),
    (PADRE, "logs", "e-1", {"x": hostiles.anidado()}, "anida más de"),
])
def test_recibir_rechazado_no_cambia_nada(bd, padre, hijo, entrega, carga, mensaje):
    bd.recibir(PADRE, "config", "e-0", RESULTADO)
    antes = bd.volcado()
    with pytest.raises(ValueError, match=mensaje) as error:
        bd.recibir(padre, hijo, entrega, carga)
    assert type(error.value) is ValueError
    assert not bd.en_transaccion()
    assert bd.volcado() == antes


def test_una_carga_con_el_caracter_nulo_cabe_en_los_dos(bd):
    """En la carga, json.dumps escribe «\\x00» como «\\u0000»: el texto guardado no lo lleva."""
    assert bd.recibir(PADRE, "logs", "e-1", {"x": "a\x00b"}) == "recibida"
    assert bd.admitir("e-1") == "admitida"
    assert bd.mensajes(PADRE) == [(1, "e-1", {"x": "a\x00b"})]


def test_lo_recibido_sobrevive_a_cerrar_y_reabrir(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    bd.reabrir()
    assert bd.pendientes() == ["e-1"]
    assert json.loads(bd.filas("SELECT carga FROM buzon")[0][0]) == RESULTADO


def test_pendientes_en_el_orden_en_que_llegaron(bd):
    for entrega in ("e-c", "e-a", "e-b"):
        bd.recibir(PADRE, "logs", entrega, {"n": entrega})
    bd.admitir("e-a")
    assert bd.pendientes() == ["e-c", "e-b"]


# --- Admitir -------------------------------------------------------------------------------------

def test_admitir_pone_la_entrega_en_la_trayectoria_con_su_numero(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    assert bd.admitir("e-1") == "admitida"
    assert bd.mensajes(PADRE) == [(1, "e-1", RESULTADO)]
    assert disposicion(bd, "e-1") == ("admitida", 1)
    assert bd.pendientes() == []


def test_una_entrega_duplicada_no_se_admite_dos_veces(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    bd.admitir("e-1")
    assert bd.recibir(PADRE, "logs", "e-1", RESULTADO) == "duplicada"
    assert bd.admitir("e-1") == "admitida"
    assert [entrega for _, entrega, _ in bd.mensajes(PADRE)] == ["e-1"]


def test_admitir_dos_veces_es_inofensivo(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    primera = bd.admitir("e-1")
    antes = bd.volcado()
    assert bd.admitir("e-1") == primera == "admitida"
    assert bd.volcado() == antes


def test_la_trayectoria_se_numera_sin_huecos_en_orden_de_admision(bd):
    bd.crear_padre("otro", ["logs"])
    for n, (padre, hijo) in enumerate([(PADRE, "logs"), ("otro", "logs"), (PADRE, "config"), (PADRE, "logs")]):
        bd.recibir(padre, hijo, f"e-{n}", {"n": n})
    for entrega in ("e-3", "e-0", "e-1", "e-2"):
        bd.admitir(entrega)
    assert [(seq, entrega) for seq, entrega, _ in bd.mensajes(PADRE)] == [(1, "e-3"), (2, "e-0"), (3, "e-2")]
    assert [(seq, entrega) for seq, entrega, _ in bd.mensajes("otro")] == [(1, "e-1")]


def test_el_padre_solo_se_activa_cuando_llegan_todos_sus_hijos(bd):
    bd.recibir(PADRE, "logs", "e-logs", RESULTADO)
    bd.recibir(PADRE, "config", "e-config", {"hallazgo": "La base escucha en 5432"})
    bd.admitir("e-logs")
    assert bd.estado(PADRE) == ("esperando", 0)
    bd.admitir("e-config")
    assert bd.estado(PADRE) == ("en_cola", 1)


def test_una_correccion_del_mismo_hijo_no_cuenta_como_el_otro_hijo(bd):
    bd.recibir(PADRE, "logs", "e-logs-1", RESULTADO)
    bd.recibir(PADRE, "logs", "e-logs-2", {"hallazgo": "Corrige e-logs-1: el puerto es 5434"})
    bd.admitir("e-logs-1")
    bd.admitir("e-logs-2")
    assert len(bd.mensajes(PADRE)) == 2
    assert bd.estado(PADRE) == ("esperando", 0)


def test_el_padre_se_activa_una_sola_vez(bd):
    for entrega, hijo in (("e-1", "logs"), ("e-2", "config"), ("e-3", "logs"), ("e-4", "config")):
        bd.recibir(PADRE, hijo, entrega, {"entrega": entrega})
        bd.admitir(entrega)
    assert bd.estado(PADRE) == ("en_cola", 1)
    assert len(bd.mensajes(PADRE)) == 4


@pytest.mark.parametrize("final", buzon.TERMINALES)
def test_un_padre_terminado_sigue_terminado(bd, final):
    bd.recibir(PADRE, "logs", "e-logs", RESULTADO)
    bd.admitir("e-logs")
    bd.terminar(PADRE, final)
    antes = bd.estado(PADRE)
    bd.recibir(PADRE, "config", "e-config", {"hallazgo": "tarde"})
    assert bd.admitir("e-config") == "tardia"
    assert bd.estado(PADRE) == antes == (final, 1)
    with pytest.raises(ValueError, match="ya terminó"):
        bd.terminar(PADRE, "completada")
    assert bd.estado(PADRE) == antes


def test_la_entrega_tardia_se_guarda(bd):
    bd.terminar(PADRE, "cancelada")
    carga = {"hallazgo": "Resultado tardío"}
    assert bd.recibir(PADRE, "logs", "e-tarde", carga) == "recibida"
    assert bd.admitir("e-tarde") == bd.admitir("e-tarde") == "tardia"
    assert disposicion(bd, "e-tarde") == ("tardia", None)
    assert bd.mensajes(PADRE) == [] and bd.pendientes() == []


def test_admitir_una_entrega_desconocida_es_value_error(bd):
    antes = bd.volcado()
    for entrega, mensaje in (("nadie", None), ("", "texto no vacío"), (3, "texto no vacío")):  # «nadie»: el 5.2
        with pytest.raises(ValueError, match=mensaje):
            bd.admitir(entrega)
    assert bd.volcado() == antes


class CaeAntesDeMarcar:
    """Una conexión que falla justo antes de marcar la entrega, ya añadido el mensaje."""

    def __init__(self, conexion):
        self.conexion = conexion

    def __getattr__(self, nombre):
        return getattr(self.conexion, nombre)

    def execute(self, sql, *argumentos):
        normalizado = " ".join(sql.split()).lower()
        if normalizado.startswith("update buzon") and "seq_admitida" in normalizado:
            raise RuntimeError("Fallo antes de marcar la entrega admitida")
        return self.conexion.execute(sql, *argumentos)


def test_un_fallo_entre_el_mensaje_y_la_marca_no_deja_nada(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    antes = bd.volcado()
    with pytest.raises(RuntimeError, match="antes de marcar"):
        bd.buzon.admitir(CaeAntesDeMarcar(bd.conexion), "e-1")
    assert bd.volcado() == antes and not bd.en_transaccion()
    bd.reabrir()
    assert bd.pendientes() == ["e-1"]
    assert bd.admitir("e-1") == "admitida"
    assert [entrega for _, entrega, _ in bd.mensajes(PADRE)] == ["e-1"]


def test_lo_admitido_lo_ve_otra_conexion_en_cuanto_admitir_vuelve(bd):
    otra = bd.nueva()
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    bd.admitir("e-1")
    assert bd.filas("SELECT disposicion FROM buzon WHERE entrega='e-1'", conexion=otra) == [("admitida",)]
    assert bd.filas("SELECT COUNT(*) FROM mensajes", conexion=otra) == [(1,)]


def test_la_trayectoria_no_admite_una_entrega_dos_veces_ni_a_mano(bd):
    bd.recibir(PADRE, "logs", "e-1", RESULTADO)
    bd.admitir("e-1")
    with pytest.raises(bd.ErrorDeIntegridad):
        bd.filas("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, 2, 'e-1', '{}')", PADRE)


# --- Crear y terminar padres ---------------------------------------------------------------------

@pytest.mark.parametrize("padre, hijos, mensaje", [
    (PADRE, ["logs"], "ya existe"),
    ("nuevo", [], "entre 1 y"),
    ("nuevo", [f"h{i}" for i in range(buzon.MAXIMO_DE_HIJOS + 1)], "entre 1 y"),
    ("nuevo", ["logs", "logs"], "repetidos"),
    ("nuevo", "logs", "lista de nombres"),
    ("nuevo", [""], "El nombre de un hijo"),
    ("nuevo", {"logs": {"objetivo": "x"}}, "El encargo debe tener exactamente las claves"),
    ("", ["logs"], "El padre debe ser un texto"),
])
def test_crear_padre_rechazado_no_cambia_nada(bd, padre, hijos, mensaje):
    antes = bd.volcado()
    with pytest.raises(ValueError, match=mensaje):
        bd.crear_padre(padre, hijos)
    assert bd.volcado() == antes


@pytest.mark.parametrize("padre, final, mensaje", [
    (PADRE, "en_cola", "El estado final debe ser uno de"),
    ("nadie", "completada", "No existe la ejecución 'nadie'"),
])
def test_terminar_rechazado_no_cambia_nada(bd, padre, final, mensaje):
    antes = bd.volcado()
    with pytest.raises(ValueError, match=mensaje):
        bd.terminar(padre, final)
    assert bd.volcado() == antes


def test_recibir_aplica_el_encargo_del_hijo(almacen):
    bd = almacen.abrir()
    bd.crear_padre(PADRE, {"logs": ENCARGO_LOGS, "config": None})
    antes = bd.volcado()
    with pytest.raises(ValueError, match="no está dentro de los recursos permitidos"):
        bd.recibir(PADRE, "logs", "e-1", {**ENTREGA_LOGS, "referencias": ["/etc/passwd"]})
    assert bd.volcado() == antes
    assert bd.recibir(PADRE, "logs", "e-1", ENTREGA_LOGS) == "recibida"
    assert bd.recibir(PADRE, "config", "e-2", RESULTADO) == "recibida"
    # La misma identidad con otros datos que además incumplen el encargo: un ValueError y nada
    # cambia en los dos. (El mensaje puede ser uno u otro: SQLite mira antes si ya estaba, y
    # PostgreSQL valida antes de su INSERT … ON CONFLICT.)
    antes = bd.volcado()
    with pytest.raises(ValueError):
        bd.recibir(PADRE, "logs", "e-1", {**ENTREGA_LOGS, "referencias": ["/etc/passwd"]})
    assert bd.volcado() == antes


# --- El recorrido entero ---------------------------------------------------------------------------

def test_dos_resultados_una_activacion_un_duplicado_y_tres_terminales_intactos(almacen):
    bd = almacen.abrir()
    bd.crear_padre(PADRE, ["logs", "config"])
    assert bd.recibir(PADRE, "logs", "entrega-1", RESULTADO) == "recibida"
    assert bd.recibir(PADRE, "logs", "entrega-1", RESULTADO) == "duplicada"
    bd.reabrir()
    with pytest.raises(RuntimeError):
        bd.buzon.admitir(CaeAntesDeMarcar(bd.conexion), "entrega-1")
    bd.reabrir()
    assert bd.mensajes(PADRE) == [] and bd.pendientes() == ["entrega-1"]
    assert bd.admitir("entrega-1") == bd.admitir("entrega-1") == "admitida"
    assert bd.estado(PADRE) == ("esperando", 0)
    bd.recibir(PADRE, "config", "entrega-2", {"hallazgo": "La base escucha en 5432"})
    bd.admitir("entrega-2")
    assert len(bd.mensajes(PADRE)) == 2
    assert bd.estado(PADRE) == ("en_cola", 1)
    for final in buzon.TERMINALES:
        bd.crear_padre(final, ["tardio"])
        bd.terminar(final, final)
        bd.recibir(final, "tardio", f"tarde-{final}", {"hallazgo": "Resultado tardío"})
        assert bd.admitir(f"tarde-{final}") == "tardia"
        assert bd.estado(final) == (final, 1)
    assert bd.filas("SELECT COUNT(*) FROM mensajes") == [(2,)]
    assert bd.filas("SELECT COUNT(*) FROM buzon WHERE disposicion='tardia'") == [(3,)]
