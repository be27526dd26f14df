"""El contrato de `resumenes.py` (lección 04): un test por invariante, sobre ficheros reales."""
import json
import re
import sqlite3

import pytest

import resumenes
from curso.comprobaciones import hostiles
from historial import abrir, anotar, crear_ejecucion, transaccion
from resumenes import BaseObsoleta, activo, contexto, instalar, mover_puntero, validar_candidato

EJECUCION = "r-1"
ORIGINALES = [
    "La ejecución es de solo lectura.",
    "Empieza la investigación de red.",
    "La API resuelve el nombre db.",
    "Falta comprobar el puerto configurado.",
]
SOLO_LECTURA = {"texto": "Solo lectura", "fuente": 1}


@pytest.fixture
def ruta(tmp_path):
    return tmp_path / "resumenes.db"


@pytest.fixture
def bd(ruta):
    """Una ejecución con los cuatro mensajes originales y un resumen activo hasta 2."""
    bd = abrir(ruta)
    crear_ejecucion(bd, EJECUCION)
    for texto in ORIGINALES:
        anotar(bd, EJECUCION, texto)
    instalar(bd, EJECUCION, None, 2, [SOLO_LECTURA])
    yield bd
    bd.close()


def nombra(numero, mensaje):
    """¿Dice `mensaje` el número `numero`, como palabra? Los ejercicios 4.3 y 7.1 piden que el
    mensaje de BaseObsoleta diga cuál es el activo; con qué palabras, es cosa de cada uno."""
    return re.search(rf"\b{numero}\b", mensaje) is not None


def volcado(bd):
    return "\n".join(bd.iterdump())


def filas(bd, tabla):
    return bd.execute(f"SELECT * FROM {tabla} ORDER BY 1, 2").fetchall()


@pytest.mark.contrato("4.3")
def test_mover_el_puntero_no_borra_nada(bd):
    historial_antes = filas(bd, "historial")
    resumenes_antes = filas(bd, "resumenes")
    base, _ = activo(bd, EJECUCION)
    nuevo = instalar(bd, EJECUCION, base, 4, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    assert activo(bd, EJECUCION) == (nuevo, 4)
    assert filas(bd, "historial") == historial_antes
    # Las versiones anteriores siguen ahí, intactas; la nueva apunta a la que sustituye.
    assert filas(bd, "resumenes")[: len(resumenes_antes)] == resumenes_antes
    assert bd.execute("SELECT anterior FROM resumenes WHERE id=?", (nuevo,)).fetchone()[0] == base


@pytest.mark.contrato("4.3")
def test_instalar_con_base_obsoleta_no_cambia_nada(bd):
    base, _ = activo(bd, EJECUCION)
    ganador = instalar(bd, EJECUCION, base, 4, [SOLO_LECTURA])
    antes = volcado(bd)
    with pytest.raises(BaseObsoleta) as error:
        instalar(bd, EJECUCION, base, 3, [SOLO_LECTURA])
    assert volcado(bd) == antes
    # El mensaje dice cuál es el activo ahora, para volver a empezar desde él.
    assert nombra(ganador, str(error.value)), str(error.value)
    assert not isinstance(error.value, ValueError)


def test_la_cola_conserva_lo_que_llega_durante_la_preparacion(bd):
    base, _ = activo(bd, EJECUCION)
    candidato = [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}]  # preparado hasta 4
    anotar(bd, EJECUCION, "El usuario pide revisar TLS.")  # llega mientras se prepara
    instalar(bd, EJECUCION, base, 4, candidato)
    assert contexto(bd, EJECUCION)["cola"] == [(5, "El usuario pide revisar TLS.")]


def test_la_cobertura_nunca_retrocede(bd):
    base, cobertura = activo(bd, EJECUCION)
    antes = volcado(bd)
    for corte in (cobertura, cobertura - 1):
        with pytest.raises(ValueError, match="no amplía la cobertura"):
            instalar(bd, EJECUCION, base, corte, [SOLO_LECTURA])
    assert volcado(bd) == antes


def test_el_corte_debe_ser_un_mensaje_del_historial(bd):
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    with pytest.raises(ValueError, match="no es un mensaje del historial"):
        instalar(bd, EJECUCION, base, len(ORIGINALES) + 1, [SOLO_LECTURA])
    assert volcado(bd) == antes


def test_el_contexto_tras_reabrir_es_el_mismo(bd, ruta):
    base, _ = activo(bd, EJECUCION)
    instalar(bd, EJECUCION, base, 3, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    anotar(bd, EJECUCION, "El usuario pide revisar TLS.")
    antes = contexto(bd, EJECUCION)
    bd.close()
    otra = abrir(ruta)
    try:
        assert contexto(otra, EJECUCION) == antes
    finally:
        otra.close()
    assert antes["cobertura"] == 3 and [seq for seq, _ in antes["cola"]] == [4, 5]


@pytest.mark.contrato("4.2")
def test_validar_candidato_acepta_o_rechaza_sin_escribir_nada(bd):
    antes = volcado(bd)
    assert validar_candidato(bd, EJECUCION, 3, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}]) is None
    with pytest.raises(ValueError):  # con qué palabras lo dice, es cosa del 4.2
        validar_candidato(bd, EJECUCION, 3, [SOLO_LECTURA, {"texto": "puerto", "fuente": 4}])
    assert volcado(bd) == antes and not bd.in_transaction


@pytest.mark.contrato("4.3")
def test_mover_puntero_solo_lo_mueve_desde_su_base(bd):
    base, _ = activo(bd, EJECUCION)
    with transaccion(bd):  # una versión nueva, todavía sin activar
        nuevo = bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, 3, ?, ?)",
                           (EJECUCION, json.dumps([SOLO_LECTURA]), base)).lastrowid
    for leida in (None, nuevo):  # ninguna de las dos es la activa
        with pytest.raises(BaseObsoleta) as error:
            mover_puntero(bd, EJECUCION, leida, nuevo)
        assert nombra(base, str(error.value)), str(error.value)
        assert activo(bd, EJECUCION) == (base, 2)
    mover_puntero(bd, EJECUCION, base, nuevo)
    assert activo(bd, EJECUCION) == (nuevo, 3)


@pytest.mark.contrato("4.2")
def test_una_fuente_heredada_sigue_siendo_valida(bd):
    # El tramo nuevo es 3-4, pero el resumen conserva la restricción del mensaje 1.
    base, _ = activo(bd, EJECUCION)
    nuevo = instalar(bd, EJECUCION, base, 4, [SOLO_LECTURA, {"texto": "db resuelve", "fuente": 3}])
    assert contexto(bd, EJECUCION)["resumen"][0] == SOLO_LECTURA
    assert activo(bd, EJECUCION) == (nuevo, 4)


@pytest.mark.contrato("4.2")
def test_una_fuente_posterior_al_corte_o_de_otra_ejecucion_es_rechazada(bd):
    crear_ejecucion(bd, "r-2")
    for n in range(6):
        anotar(bd, "r-2", f"mensaje {n + 1} de r-2")
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    for fuente in (4, 6):  # 4 existe pero está tras el corte 3; 6 solo existe en r-2
        with pytest.raises(ValueError):
            instalar(bd, EJECUCION, base, 3, [{"texto": "algo", "fuente": fuente}])
    assert volcado(bd) == antes


@pytest.mark.contrato("4.2")
def test_fuente_booleana_rechazada(bd):
    # True == 1 en Python, y el mensaje 1 existe: sin comprobar el tipo exacto, pasaría. Con qué
    # palabras se rechaza, es cosa del 4.2 (el texto pide un ValueError, no unas palabras).
    assert True == 1 and isinstance(True, int)
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    with pytest.raises(ValueError):
        instalar(bd, EJECUCION, base, 3, [{"texto": "Solo lectura", "fuente": True}])
    with pytest.raises(ValueError):
        instalar(bd, EJECUCION, base, True, [SOLO_LECTURA])
    assert volcado(bd) == antes


def test_un_bool_se_rechaza_diciendo_que_es_un_bool(bd):
    """Las palabras de la referencia (las de exigir_entero_positivo, de validacion.py)."""
    base, _ = activo(bd, EJECUCION)
    with pytest.raises(ValueError, match="no un bool"):
        instalar(bd, EJECUCION, base, 3, [{"texto": "Solo lectura", "fuente": True}])
    with pytest.raises(ValueError, match="no un bool"):
        instalar(bd, EJECUCION, base, True, [SOLO_LECTURA])


# motivo None: el rechazo lo escribe el 4.2 con sus palabras; los demás, en la referencia,
# exigir_texto y exigir_entero_positivo (validacion.py), que la segunda pista del 4.2 sugiere usar
# y que el texto no pide: el test de contrato pide el ValueError; el de regresión, las palabras.
CANDIDATOS_MAL_FORMADOS = [
    ({"texto": "x", "fuente": 1}, None),
    ([], None),
    (["Solo lectura"], None),
    ([{"texto": "x"}], None),
    ([{"texto": "x", "fuente": 1, "extra": 0}], None),
    ([{"texto": "   ", "fuente": 1}], "vacío"),
    ([{"texto": 7, "fuente": 1}], "debe ser un texto"),
    ([{"texto": "x", "fuente": "1"}], "entero positivo"),
    ([{"texto": "x", "fuente": 1.0}], "entero positivo"),
    ([{"texto": "x", "fuente": 0}], "entero positivo"),
    ([{"texto": "x", "fuente": hostiles.FUERA_DE_UINT64}], "entero positivo"),
]


@pytest.mark.contrato("4.2")
@pytest.mark.parametrize("candidato, motivo", CANDIDATOS_MAL_FORMADOS)
def test_un_candidato_mal_formado_no_cambia_nada(bd, candidato, motivo):
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    with pytest.raises(ValueError):
        instalar(bd, EJECUCION, base, 3, candidato)
    assert volcado(bd) == antes


@pytest.mark.parametrize("candidato, motivo", [c for c in CANDIDATOS_MAL_FORMADOS if c[1]])
def test_un_candidato_mal_formado_se_rechaza_con_las_palabras_de_la_referencia(bd, candidato, motivo):
    base, _ = activo(bd, EJECUCION)
    with pytest.raises(ValueError, match=motivo):
        instalar(bd, EJECUCION, base, 3, candidato)


@pytest.mark.parametrize("ejecucion, base, corte, motivo", [
    ("no-existe", None, 3, "No existe la ejecución"),
    (7, None, 3, "La ejecución debe ser un texto"),
    (EJECUCION, 99, 3, "no es un resumen de la ejecución"),
    (EJECUCION, "1", 3, "La base debe ser un entero"),
    (EJECUCION, True, 3, "La base debe ser un entero"),
    (EJECUCION, 1, 3.0, "El corte debe ser un entero"),
    (EJECUCION, 1, None, "El corte debe ser un entero"),
])
def test_argumentos_mal_formados_no_cambian_nada(bd, ejecucion, base, corte, motivo):
    antes = volcado(bd)
    with pytest.raises(ValueError, match=motivo):
        instalar(bd, ejecucion, base, corte, [SOLO_LECTURA])
    assert volcado(bd) == antes


@pytest.mark.parametrize("leer", [activo, contexto])
def test_leer_de_una_ejecucion_que_no_existe_lo_dice_sin_cambiar_nada(bd, leer):
    """activo() y contexto() de una ejecución que nadie creó: un error que lo dice, no (None, 0)
    ni un contexto vacío como si existiera."""
    antes = volcado(bd)
    with pytest.raises(ValueError, match="No existe la ejecución 'no-existe'"):
        leer(bd, "no-existe")
    assert volcado(bd) == antes


def test_la_base_de_otra_ejecucion_es_rechazada(bd):
    crear_ejecucion(bd, "r-2")
    for n in range(4):
        anotar(bd, "r-2", f"mensaje {n + 1} de r-2")
    base_ajena, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    with pytest.raises(ValueError, match="no es un resumen de la ejecución 'r-2'"):
        instalar(bd, "r-2", base_ajena, 3, [SOLO_LECTURA])
    assert volcado(bd) == antes


def test_el_puntero_nunca_senala_un_resumen_de_otra_ejecucion(bd):
    crear_ejecucion(bd, "r-2")
    for n in range(3):
        anotar(bd, "r-2", f"mensaje {n + 1} de r-2")
    ajeno = instalar(bd, "r-2", None, 2, [SOLO_LECTURA])
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    with pytest.raises(ValueError, match=f"El resumen nuevo {ajeno} no es un resumen de la ejecución 'r-1'"):
        mover_puntero(bd, EJECUCION, base, ajeno)
    assert volcado(bd) == antes and activo(bd, EJECUCION)[0] == base


def test_el_esquema_tampoco_deja_cruzar_resumenes_de_una_ejecucion_a_otra(bd):
    # La variante ingenua: SQL a mano, sin las comprobaciones del módulo. Ni el puntero ni la
    # versión anterior de un resumen pueden ser de otra ejecución.
    crear_ejecucion(bd, "r-2")
    anotar(bd, "r-2", "mensaje 1 de r-2")
    ajeno = instalar(bd, "r-2", None, 1, [SOLO_LECTURA])
    antes = volcado(bd)
    with pytest.raises(sqlite3.IntegrityError):
        bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", (ajeno, EJECUCION))
    with pytest.raises(sqlite3.IntegrityError):
        bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, 3, '[]', ?)",
                   (EJECUCION, ajeno))
    assert volcado(bd) == antes


@pytest.mark.parametrize("ejecucion, base, nuevo, motivo", [
    (EJECUCION, None, hostiles.MUY_FUERA_DE_INT64, "El resumen nuevo debe ser un entero positivo"),
    (EJECUCION, None, hostiles.ENTERO_ENORME, r"un entero de unas \d+ cifras"),
    (EJECUCION, "1", 1, "La base debe ser un entero positivo"),
    (EJECUCION, None, 99, "El resumen nuevo 99 no es un resumen de la ejecución 'r-1'"),
    ("no-existe", None, 1, "no es un resumen de la ejecución 'no-existe'"),
    ([[[[["r-1"]]]]], None, 1, "La ejecución debe ser un texto"),
], ids=["2**70", "10**5000", "base-texto", "inexistente", "de-otra-ejecucion", "ejecucion-anidada"])
def test_mover_puntero_mal_llamado_no_cambia_nada(bd, ejecucion, base, nuevo, motivo):
    antes = volcado(bd)
    with pytest.raises(ValueError, match=motivo) as error:
        mover_puntero(bd, ejecucion, base, nuevo)
    assert type(error.value) is ValueError
    assert volcado(bd) == antes


@pytest.mark.parametrize("corte", [hostiles.NAN, None, "3", 3.0, True, 0, hostiles.FUERA_DE_INT64,
                                   hostiles.ENTERO_ENORME],
                         ids=["nan", "None", "texto", "float", "bool", "cero", "2**63", "10**5000"])
def test_validar_candidato_exige_un_corte_entero(bd, corte):
    # validar_candidato es pública: no puede dar por bueno un corte que nadie comprobó.
    with pytest.raises(ValueError, match="El corte debe ser un entero positivo") as error:
        validar_candidato(bd, EJECUCION, corte, [SOLO_LECTURA])
    assert type(error.value) is ValueError


def test_un_entero_enorme_o_un_valor_muy_anidado_se_rechazan_con_su_mensaje(bd):
    # repr() no escribe enteros de más de 4300 cifras y agota la pila con lo muy anidado: el
    # mensaje de un rechazo no puede fallar por culpa del valor que cita.
    anidado, enorme = hostiles.anidado(), hostiles.ENTERO_ENORME
    base, _ = activo(bd, EJECUCION)
    antes = volcado(bd)
    for argumentos, motivo in (
        ((EJECUCION, base, enorme, [SOLO_LECTURA]), r"El corte debe ser .*, no un entero de unas \d+ cifras"),
        ((EJECUCION, base, 3, [{"texto": "x", "fuente": -enorme}]), r"La fuente de la afirmación 1 .*cifras"),
        ((anidado, base, 3, [SOLO_LECTURA]), r"La ejecución debe ser un texto no vacío, no \[\[\["),
        ((EJECUCION, base, 3, [{"texto": anidado, "fuente": 1}]), "El texto de la afirmación 1 debe ser un texto"),
        ((EJECUCION, base, 3, anidado), None),  # lo dice el 4.2, con sus palabras
    ):
        with pytest.raises(ValueError, match=motivo) as error:
            instalar(bd, *argumentos)
        assert type(error.value) is ValueError
    assert volcado(bd) == antes


def test_la_restriccion_del_principio_sobrevive_a_dos_compactaciones(ruta):
    bd = abrir(ruta)
    crear_ejecucion(bd, EJECUCION)
    anotar(bd, EJECUCION, "Regla: la ejecución es de solo lectura.")
    for n in range(2, 7):
        anotar(bd, EJECUCION, f"paso {n} de la investigación")
    # Cada compactación parte del resumen activo y conserva sus afirmaciones.
    for corte in (3, 6):
        ctx = contexto(bd, EJECUCION)
        heredado = ctx["resumen"] or [{"texto": "Solo lectura", "fuente": 1}]
        nuevo = heredado + [{"texto": f"hecho hasta {corte}", "fuente": corte}]
        instalar(bd, EJECUCION, ctx["activo"], corte, nuevo)
    bd.close()

    bd = abrir(ruta)
    cadena = []
    (actual,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=?", (EJECUCION,)).fetchone()
    while actual is not None:
        cobertura, cuerpo, actual = bd.execute(
            "SELECT cobertura, cuerpo, anterior FROM resumenes WHERE id=?", (actual,)
        ).fetchone()
        cadena.append((cobertura, json.loads(cuerpo)))
    bd.close()
    assert [cobertura for cobertura, _ in cadena] == [6, 3]
    for _, cuerpo in cadena:
        assert {"texto": "Solo lectura", "fuente": 1} in cuerpo


def test_el_modulo_dice_en_que_leccion_se_introdujo():
    assert "\nLección 04. " in resumenes.__doc__  # el párrafo que dice qué lección lo presenta
