"""El contrato de los resúmenes (lección 04), el mismo en SQLite (`historial` y `resumenes`) y en
PostgreSQL (`historial_pg` y `resumenes_pg`): cada test corre sobre los dos (ver almacenes.py)."""
import json
import re

import psycopg
import pytest

import historial_pg
import resumenes
import resumenes_pg
import validacion
from curso.comprobaciones import hostiles

# Las fixtures de almacenes.py (almacen, y esquema_postgres y postgres, que trae de curso.postgres),
# cargadas como plugin de pytest: importadas por su nombre, los argumentos de los tests las taparían.
pytest_plugins = ["almacenes"]

EJECUCION = "r-1"
ORIGINALES = [
    "La ejecución es de solo lectura.",
    "Empieza la investigación de red.",
    "La API resuelve el nombre db.",
    "Falta comprobar el puerto configurado.",
]
SOLO_LECTURA = {"texto": "Solo lectura", "fuente": 1}


@pytest.fixture
def bd(almacen):
    """Una ejecución con los cuatro mensajes originales y un resumen activo hasta 2."""
    almacen.abrir(solo_resumenes=True)
    almacen.crear_ejecucion(EJECUCION)
    for texto in ORIGINALES:
        almacen.anotar(EJECUCION, texto)
    almacen.instalar(EJECUCION, None, 2, [SOLO_LECTURA])
    return almacen


def nombra(numero, mensaje):
    """¿Dice `mensaje` el número `numero`, como palabra? Los ejercicios 4.3 y 7.1 piden que el
    mensaje de BaseObsoleta diga cuál es el activo; con qué palabras, es cosa de cada uno."""
    return re.search(rf"\b{numero}\b", mensaje) is not None


def test_los_dos_modulos_comparten_excepcion_y_comprobaciones():
    assert resumenes_pg.BaseObsoleta is resumenes.BaseObsoleta
    assert resumenes_pg.exigir_base is validacion.exigir_base
    assert "Lección 07." in resumenes_pg.__doc__ and "Lección 07." in historial_pg.__doc__
    assert historial_pg.exigir_texto is validacion.exigir_texto


def test_anotar_numera_el_historial_sin_huecos(bd):
    assert bd.anotar(EJECUCION, "quinto") == len(ORIGINALES) + 1
    seqs = [seq for _, seq, _ in bd.filas("SELECT * FROM historial ORDER BY seq")]
    assert seqs == list(range(1, len(ORIGINALES) + 2))


@pytest.mark.parametrize("funcion, argumentos", [("activo", ()), ("contexto", ()), ("anotar", ("quinto",))])
def test_una_ejecucion_que_no_existe_lo_dice_sin_cambiar_nada(bd, funcion, argumentos):
    """Leer o anotar en una ejecución que nadie creó: un error que lo dice, en los dos motores, no
    (None, 0), un contexto vacío ni una fila huérfana."""
    antes = bd.volcado()
    with pytest.raises(ValueError, match="No existe la ejecución 'no-existe'"):
        getattr(bd, funcion)("no-existe", *argumentos)
    assert bd.volcado() == antes


def test_un_historial_sin_ejecucion_no_entra_ni_a_mano(bd):
    with pytest.raises(bd.ErrorDeIntegridad):
        bd.filas("INSERT INTO historial VALUES ('no-existe', 1, 'huérfano')")


def test_mover_el_puntero_no_borra_nada(bd):
    antes = bd.volcado()
    base, _ = bd.activo(EJECUCION)
    nuevo = bd.instalar(EJECUCION, base, 4, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    assert bd.activo(EJECUCION) == (nuevo, 4)
    despues = bd.volcado()
    assert despues["historial"] == antes["historial"]
    assert despues["resumenes"][: len(antes["resumenes"])] == antes["resumenes"]
    assert bd.filas("SELECT anterior FROM resumenes WHERE id=?", nuevo) == [(base,)]


def test_instalar_con_base_obsoleta_no_cambia_nada(bd):
    base, _ = bd.activo(EJECUCION)
    ganador = bd.instalar(EJECUCION, base, 4, [SOLO_LECTURA])
    antes = bd.volcado()
    with pytest.raises(bd.BaseObsoleta) as error:
        bd.instalar(EJECUCION, base, 3, [SOLO_LECTURA])
    assert bd.volcado() == antes
    assert nombra(ganador, str(error.value)), str(error.value)  # el activo de ahora
    assert not isinstance(error.value, ValueError)


def test_de_dos_conexiones_que_parten_de_la_misma_base_instala_una(bd):
    otra = bd.nueva()
    base, _ = bd.activo(EJECUCION)
    ganador = bd.instalar(EJECUCION, base, 4, [SOLO_LECTURA])
    with pytest.raises(bd.BaseObsoleta):
        bd.resumenes.instalar(otra, EJECUCION, base, 3, [SOLO_LECTURA])
    assert bd.activo(EJECUCION) == (ganador, 4)


def test_la_cola_conserva_lo_que_llega_durante_la_preparacion(bd):
    base, _ = bd.activo(EJECUCION)
    candidato = [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}]
    bd.anotar(EJECUCION, "El usuario pide revisar TLS.")
    bd.instalar(EJECUCION, base, 4, candidato)
    assert bd.contexto(EJECUCION)["cola"] == [(5, "El usuario pide revisar TLS.")]


def test_la_cobertura_nunca_retrocede(bd):
    base, cobertura = bd.activo(EJECUCION)
    antes = bd.volcado()
    for corte in (cobertura, cobertura - 1):
        with pytest.raises(ValueError, match="no amplía la cobertura"):
            bd.instalar(EJECUCION, base, corte, [SOLO_LECTURA])
    assert bd.volcado() == antes


def test_el_corte_debe_ser_un_mensaje_del_historial(bd):
    base, _ = bd.activo(EJECUCION)
    antes = bd.volcado()
    with pytest.raises(ValueError, match="no es un mensaje del historial"):
        bd.instalar(EJECUCION, base, len(ORIGINALES) + 1, [SOLO_LECTURA])
    assert bd.volcado() == antes


def test_el_contexto_tras_reabrir_es_el_mismo(bd):
    base, _ = bd.activo(EJECUCION)
    bd.instalar(EJECUCION, base, 3, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    bd.anotar(EJECUCION, "El usuario pide revisar TLS.")
    antes = bd.contexto(EJECUCION)
    bd.reabrir()
    assert bd.contexto(EJECUCION) == antes
    assert antes["cobertura"] == 3 and [seq for seq, _ in antes["cola"]] == [4, 5]
    assert antes["resumen"] == [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}]


def test_el_contexto_sin_resumen_es_todo_el_historial(almacen):
    almacen.abrir(solo_resumenes=True)
    almacen.crear_ejecucion("r-2")
    almacen.anotar("r-2", "uno")
    assert almacen.contexto("r-2") == {"activo": None, "resumen": None, "cobertura": 0, "cola": [(1, "uno")]}
    almacen.crear_ejecucion("r-3")
    assert almacen.contexto("r-3") == {"activo": None, "resumen": None, "cobertura": 0, "cola": []}
    with pytest.raises(ValueError, match="No existe la ejecución 'r-4'"):
        almacen.contexto("r-4")


def test_un_nombre_de_ejecucion_de_un_mega_se_rechaza_igual_en_los_dos_motores(almacen):
    almacen.abrir(solo_resumenes=True)
    antes = almacen.volcado()
    with pytest.raises(ValueError) as error:
        almacen.crear_ejecucion("e" * 2**20)
    assert str(error.value).startswith("El identificador de la ejecución tiene 1048576 caracteres")
    assert almacen.volcado() == antes


def test_sin_el_limite_sqlite_guarda_el_nombre_y_postgresql_falla_en_ingles(almacen, monkeypatch):
    """La variante sin límite, la de antes: cada motor hace una cosa, y el test de arriba falla en
    los dos (SQLite lo guarda; PostgreSQL no cabe en el índice de la clave y lo dice en inglés)."""
    almacen.abrir(solo_resumenes=True)
    monkeypatch.setattr(validacion, "LARGO_MAXIMO_DE_EJECUCION", float("inf"))
    if almacen.motor == "sqlite":
        almacen.crear_ejecucion("e" * 2**20)
        assert almacen.filas("SELECT length(id) FROM ejecuciones") == [(2**20,)]
    else:
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="index row"):
            almacen.crear_ejecucion("e" * 2**20)


def test_crear_dos_veces_la_misma_ejecucion_es_un_error(bd):
    antes = bd.volcado()
    with pytest.raises(ValueError, match="ya existe"):
        bd.crear_ejecucion(EJECUCION)
    assert bd.volcado() == antes


def test_validar_candidato_acepta_o_rechaza_sin_escribir_nada(bd):
    antes = bd.volcado()
    assert bd.validar_candidato(EJECUCION, 3, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}]) is None
    with pytest.raises(ValueError):  # con qué palabras lo dice, es cosa del 4.2
        bd.validar_candidato(EJECUCION, 3, [SOLO_LECTURA, {"texto": "puerto", "fuente": 4}])
    assert bd.volcado() == antes and not bd.en_transaccion()


def test_mover_puntero_solo_lo_mueve_desde_su_base(bd):
    base, _ = bd.activo(EJECUCION)
    with bd.transaccion():  # una versión nueva, todavía sin activar
        [(nuevo,)] = bd.filas("INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, 3, ?, ?) "
                              "RETURNING id", EJECUCION, json.dumps([SOLO_LECTURA]), base)
    for leida in (None, nuevo):
        with pytest.raises(bd.BaseObsoleta) as error:
            with bd.transaccion():
                bd.mover_puntero(EJECUCION, leida, nuevo)
        assert nombra(base, str(error.value)), str(error.value)
        assert bd.activo(EJECUCION) == (base, 2)
    with bd.transaccion():
        bd.mover_puntero(EJECUCION, base, nuevo)
    assert bd.activo(EJECUCION) == (nuevo, 3)


def test_una_fuente_heredada_sigue_siendo_valida(bd):
    base, _ = bd.activo(EJECUCION)
    nuevo = bd.instalar(EJECUCION, base, 4, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    assert bd.contexto(EJECUCION)["resumen"][0] == SOLO_LECTURA
    assert bd.activo(EJECUCION) == (nuevo, 4)


def test_una_fuente_posterior_al_corte_o_de_otra_ejecucion_es_rechazada(bd):
    bd.crear_ejecucion("r-2")
    for n in range(6):
        bd.anotar("r-2", f"mensaje {n + 1} de r-2")
    base, _ = bd.activo(EJECUCION)
    antes = bd.volcado()
    for fuente in (4, 6):
        with pytest.raises(ValueError):
            bd.instalar(EJECUCION, base, 3, [{"texto": "algo", "fuente": fuente}])
    assert bd.volcado() == antes


def test_fuente_booleana_rechazada(bd):
    base, _ = bd.activo(EJECUCION)
    antes = bd.volcado()
    with pytest.raises(ValueError, match="no un bool"):
        bd.instalar(EJECUCION, base, 3, [{"texto": "Solo lectura", "fuente": True}])
    with pytest.raises(ValueError, match="no un bool"):
        bd.instalar(EJECUCION, base, True, [SOLO_LECTURA])
    assert bd.volcado() == antes


# motivo None: el rechazo lo escribe el 4.2 con sus palabras; los demás, exigir_texto y
# exigir_entero_positivo (validacion.py), que el ejercicio da hechas.
@pytest.mark.parametrize("candidato, motivo", [
    ({"texto": "x", "fuente": 1}, None),
    ([], None),
    (["Solo lectura"], None),
    ([{"texto": "x", "fuente": 1, "extra": 0}], None),
    ([{"texto": "   ", "fuente": 1}], "vacío"),
    ([{"texto": 7, "fuente": 1}], "debe ser un texto"),
    ([{"texto": "x", "fuente": 1.0}], "entero positivo"),
    ([{"texto": "x", "fuente": hostiles.FUERA_DE_UINT64}], "entero positivo"),
])
def test_un_candidato_mal_formado_no_cambia_nada(bd, candidato, motivo):
    base, _ = bd.activo(EJECUCION)
    antes = bd.volcado()
    with pytest.raises(ValueError, match=motivo):
        bd.instalar(EJECUCION, base, 3, candidato)
    assert bd.volcado() == antes and not bd.en_transaccion()


@pytest.mark.parametrize("ejecucion, base, corte, motivo", [
    ("no-existe", None, 3, "No existe la ejecución"),
    (7, None, 3, "La ejecución debe ser un texto"),
    (EJECUCION, 99, 3, "no es un resumen de la ejecución"),
    (EJECUCION, "1", 3, "La base debe ser un entero"),
    (EJECUCION, 1, None, "El corte debe ser un entero"),
])
def test_argumentos_mal_formados_no_cambian_nada(bd, ejecucion, base, corte, motivo):
    antes = bd.volcado()
    with pytest.raises(ValueError, match=motivo):
        bd.instalar(ejecucion, base, corte, [SOLO_LECTURA])
    assert bd.volcado() == antes


def test_el_puntero_nunca_senala_un_resumen_de_otra_ejecucion(bd):
    bd.crear_ejecucion("r-2")
    for n in range(3):
        bd.anotar("r-2", f"mensaje {n + 1} de r-2")
    ajeno = bd.instalar("r-2", None, 2, [SOLO_LECTURA])
    base, _ = bd.activo(EJECUCION)
    antes = bd.volcado()
    with pytest.raises(ValueError, match="no es un resumen de la ejecución 'r-2'"):
        bd.instalar("r-2", base, 3, [SOLO_LECTURA])  # la base es de r-1
    with pytest.raises(ValueError, match=f"El resumen nuevo {ajeno} no es un resumen de la ejecución 'r-1'"):
        bd.mover_puntero(EJECUCION, base, ajeno)
    assert bd.volcado() == antes


def test_el_esquema_tampoco_deja_cruzar_resumenes_de_una_ejecucion_a_otra(bd):
    bd.crear_ejecucion("r-2")
    bd.anotar("r-2", "mensaje 1 de r-2")
    ajeno = bd.instalar("r-2", None, 1, [SOLO_LECTURA])
    antes = bd.volcado()
    with pytest.raises(bd.ErrorDeIntegridad):
        bd.filas("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", ajeno, EJECUCION)
    with pytest.raises(bd.ErrorDeIntegridad):
        bd.filas("INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, 3, '[]', ?)", EJECUCION, ajeno)
    assert bd.volcado() == antes


@pytest.mark.parametrize("ejecucion, base, nuevo, motivo", [
    (EJECUCION, None, hostiles.MUY_FUERA_DE_INT64, "El resumen nuevo debe ser un entero positivo"),
    (EJECUCION, None, hostiles.ENTERO_ENORME, r"un entero de unas \d+ cifras"),
    (EJECUCION, None, 99, "El resumen nuevo 99 no es un resumen de la ejecución 'r-1'"),
    ([[[[["r-1"]]]]], None, 1, "La ejecución debe ser un texto"),
], ids=["2**70", "10**5000", "inexistente", "ejecucion-anidada"])
def test_mover_puntero_mal_llamado_no_cambia_nada(bd, ejecucion, base, nuevo, motivo):
    antes = bd.volcado()
    with pytest.raises(ValueError, match=motivo) as error:
        bd.mover_puntero(ejecucion, base, nuevo)
    assert type(error.value) is ValueError
    assert bd.volcado() == antes


@pytest.mark.parametrize("corte", [hostiles.NAN, "3", True, hostiles.FUERA_DE_INT64],
                         ids=["nan", "texto", "bool", "2**63"])
def test_validar_candidato_exige_un_corte_entero(bd, corte):
    with pytest.raises(ValueError, match="El corte debe ser un entero positivo"):
        bd.validar_candidato(EJECUCION, corte, [SOLO_LECTURA])


@pytest.mark.parametrize("excepcion", [ValueError, KeyboardInterrupt])
def test_transaccion_deshace_ante_cualquier_excepcion(bd, excepcion):
    antes = bd.volcado()
    with pytest.raises(excepcion):
        with bd.transaccion():
            bd.filas("INSERT INTO historial VALUES (?, 99, 'a medias')", EJECUCION)
            raise excepcion("interrumpido a mitad")
    assert not bd.en_transaccion()
    assert bd.volcado() == antes


def test_la_restriccion_del_principio_sobrevive_a_dos_compactaciones(almacen):
    bd = almacen.abrir(solo_resumenes=True)
    bd.crear_ejecucion(EJECUCION)
    bd.anotar(EJECUCION, "Regla: la ejecución es de solo lectura.")
    for n in range(2, 7):
        bd.anotar(EJECUCION, f"paso {n} de la investigación")
    for corte in (3, 6):
        ctx = bd.contexto(EJECUCION)
        heredado = ctx["resumen"] or [{"texto": "Solo lectura", "fuente": 1}]
        bd.instalar(EJECUCION, ctx["activo"], corte, heredado + [{"texto": f"hecho hasta {corte}", "fuente": corte}])
    bd.reabrir()
    cadena = []
    [(actual,)] = bd.filas("SELECT resumen_activo FROM ejecuciones WHERE id=?", EJECUCION)
    while actual is not None:
        [(cobertura, cuerpo, actual)] = bd.filas("SELECT cobertura, cuerpo, anterior FROM resumenes WHERE id=?", actual)
        cadena.append((cobertura, json.loads(cuerpo)))
    assert [cobertura for cobertura, _ in cadena] == [6, 3]
    for _, cuerpo in cadena:
        assert {"texto": "Solo lectura", "fuente": 1} in cuerpo


# --- La diferencia declarada ----------------------------------------------------------------------

def test_el_caracter_nulo_solo_cabe_en_sqlite(bd):
    """Un TEXT de PostgreSQL no puede contener «\\x00»; uno de SQLite sí. PostgreSQL lo rechaza
    con un ValueError antes de tocar nada: la única diferencia de comportamiento, y declarada."""
    antes = bd.volcado()
    if bd.motor == "sqlite":
        assert bd.anotar(EJECUCION, "a\x00b") == len(ORIGINALES) + 1
        return
    for hacer in (lambda: bd.anotar(EJECUCION, "a\x00b"), lambda: bd.crear_ejecucion("r\x00")):
        with pytest.raises(ValueError, match="carácter nulo") as error:
            hacer()
        assert type(error.value) is ValueError
    assert bd.volcado() == antes
