"""El explorador de carreras (curso.explorables.carreras) con los escenarios del buzón de la lección 05.

Lo que cada variante rompe se comprueba intercalado a intercalado contra una condición
calculada aquí, a partir del orden de los pasos, no copiada de lo que dice el explorador.
"""
import json
import math
import sys

import pytest

from curso.explorables.carreras import ERROR_INESPERADO, explorar, intercalados
from curso.rutas import cargar_modulo
from curso.explorables.carreras.escenarios import carreras_del_buzon as escenarios
from curso.explorables.carreras.escenarios.carreras_del_buzon import CAIDA, ENTREGAS, ESCENARIOS, TERMINALES

SE_PIERDE = "ninguna entrega se pierde"
SE_DUPLICA = "ninguna entrega se duplica"
UNA_ACTIVACION = "el padre se activa una vez, tras todos sus hijos"
SIGUE_TERMINADO = "un padre terminado sigue terminado"
TARDIO_APARTE = "lo tardío se guarda aparte"
SIN_ERRORES = ERROR_INESPERADO[0]

CAE = ("logs", "admite e-logs-1 y cae")
REPITE = ("transporte", "entrega e-logs-1")


@pytest.fixture(scope="module")
def buzon():
    return cargar_modulo(escenarios.MODULO, "_buzon_05_carreras")


@pytest.fixture(scope="module")
def exploraciones(buzon):
    """Cada escenario con cada variante, explorado una sola vez para todo el módulo."""
    return {(nombre, variante): explorar(escenario, variante, buzon)
            for nombre, escenario in ESCENARIOS.items() for variante in escenario.variantes}


def multinomial(largos):
    return math.factorial(sum(largos)) // math.prod(math.factorial(n) for n in largos)


def posiciones(registro):
    return {par: i for i, par in enumerate(registro.orden)}


def resultados(registro):
    return {(e.actor, e.paso): e.resultado for e in registro.eventos}


def numeros(registros):
    return {r.numero for r in registros}


def final(registro):
    return registro.eventos[-1].observacion


def trayectoria(foto, padre="padre"):
    return [entrega for p, _, entrega in foto["mensajes"] if p == padre]


def cae_de_verdad(registro):
    """El proceso llega a su punto de caída si nadie admitió e-logs-1 antes: el transporte
    entrega después de que logs intente admitir."""
    p = posiciones(registro)
    return p[REPITE] > p[CAE]


# --- El número de intercalados -------------------------------------------------------------------

@pytest.mark.parametrize("nombre", ESCENARIOS)
def test_cada_escenario_tiene_el_numero_multinomial_de_intercalados(exploraciones, nombre):
    escenario = ESCENARIOS[nombre]
    largos = [len(pasos) for pasos in escenario.actores.values()]
    assert exploraciones[(nombre, "correcta")].total == multinomial(largos)
    assert len(set(intercalados(escenario.actores))) == multinomial(largos)


# --- La variante correcta --------------------------------------------------------------------------

@pytest.mark.parametrize("nombre", ESCENARIOS)
def test_la_variante_correcta_cumple_cada_invariante_en_cada_intercalado(exploraciones, nombre):
    exploracion = exploraciones[(nombre, "correcta")]
    assert exploracion.correctos == exploracion.total
    assert all(cuantos == 0 for cuantos in exploracion.por_fallo().values())


def test_una_entrega_repetida_deja_un_solo_mensaje_y_el_padre_se_activa_al_llegar_el_ultimo(exploraciones):
    for registro in exploraciones[("dos_hijos", "correcta")].registros:
        fotos = [e.observacion for e in registro.eventos]
        assert sorted(trayectoria(fotos[-1])) == ["e-config", "e-logs-1", "e-logs-2"]
        assert fotos[-1]["padres"]["padre"] == ("en_cola", 1)
        # Se activa justo en el primer paso tras el que hay un mensaje de cada hijo.
        con_los_dos = next(i for i, foto in enumerate(fotos)
                           if {"e-config"} <= set(trayectoria(foto)) and "e-logs-1" in trayectoria(foto))
        activado = next(i for i, foto in enumerate(fotos) if foto["padres"]["padre"][0] == "en_cola")
        assert activado == con_los_dos
        # Quien llega segundo con e-logs-1 oye «duplicada».
        repetidas = [r for (actor, paso), r in resultados(registro).items() if "e-logs-1" in paso]
        assert sorted(r.split(",")[0] for r in repetidas) == ["duplicada", "recibida"]


def test_la_caida_no_deja_nada_y_el_reinicio_admite_lo_pendiente(exploraciones):
    registros = exploraciones[("caida", "correcta")].registros
    caidas = [r for r in registros if cae_de_verdad(r)]
    assert 0 < len(caidas) < len(registros)
    for registro in registros:
        resultado = resultados(registro)[CAE]
        if registro in caidas:
            assert resultado == "cae tras añadir el mensaje, antes de marcar la entrega"
            tras_la_caida = registro.eventos[posiciones(registro)[CAE]].observacion
            assert "e-logs-1" not in trayectoria(tras_la_caida)
            assert tras_la_caida["buzon"]["e-logs-1"][2] == "recibida"
        else:
            assert resultado == "admitida: no llega a caer"
        assert trayectoria(final(registro)).count("e-logs-1") == 1
        assert final(registro)["padres"]["padre"] == ("en_cola", 1)


def test_lo_tardio_queda_tardio_y_la_cancelacion_decide_la_ultima_entrega(exploraciones):
    for registro in exploraciones[("tardias", "correcta")].registros:
        p = posiciones(registro)
        foto = final(registro)
        for terminal in TERMINALES:
            assert foto["buzon"][f"e-{terminal}"][2] == "tardia"
            assert foto["padres"][terminal] == (terminal, 1)
            assert trayectoria(foto, terminal) == []
        a_tiempo = p[("hijo", "admite e-hijo")] < p[("cancelador", "cancela padre")]
        assert foto["buzon"]["e-hijo"][2] == ("admitida" if a_tiempo else "tardia")
        assert trayectoria(foto) == (["e-hijo"] if a_tiempo else [])
        # Activado (versión 1) y cancelado (versión 2), o cancelado sin más (versión 1).
        assert foto["padres"]["padre"] == ("cancelada", 2 if a_tiempo else 1)


# --- Lo que rompe cada variante ingenua --------------------------------------------------------------

def test_marcar_antes_de_insertar_pierde_la_entrega_si_cae_entre_medias(exploraciones):
    exploracion = exploraciones[("caida", "marca_primero")]
    caidas = numeros(r for r in exploracion.registros if cae_de_verdad(r))
    assert numeros(exploracion.que_rompen(SE_PIERDE)) == caidas
    for registro in exploracion.que_rompen(SE_PIERDE):
        assert resultados(registro)[CAE] == "cae tras marcar la entrega, antes de añadir el mensaje"
        foto = final(registro)
        assert foto["buzon"]["e-logs-1"][2] == "admitida" and "e-logs-1" not in trayectoria(foto)
        # Y el padre se activó sin el mensaje de logs.
        assert foto["padres"]["padre"] == ("en_cola", 1)
    assert numeros(exploracion.que_rompen(UNA_ACTIVACION)) == caidas
    assert exploracion.por_fallo()[SE_DUPLICA] == 0


def test_sin_unique_una_caida_entre_el_mensaje_y_la_marca_duplica_la_entrega(exploraciones):
    exploracion = exploraciones[("caida", "sin_unique")]
    caidas = numeros(r for r in exploracion.registros if cae_de_verdad(r))
    assert numeros(exploracion.que_rompen(SE_DUPLICA)) == caidas
    for registro in exploracion.que_rompen(SE_DUPLICA):
        assert trayectoria(final(registro)).count("e-logs-1") == 2
    assert exploracion.por_fallo()[SE_PIERDE] == 0


def test_con_unique_la_misma_caida_ya_no_duplica_pero_atasca_la_entrega(exploraciones):
    exploracion = exploraciones[("caida", "dos_transacciones")]
    caidas = numeros(r for r in exploracion.registros if cae_de_verdad(r))
    assert exploracion.por_fallo()[SE_DUPLICA] == 0
    assert numeros(exploracion.que_rompen(SIN_ERRORES)) == caidas
    for registro in exploracion.que_rompen(SIN_ERRORES):
        errores = [e.error for e in registro.eventos if e.error]
        assert errores and all(e.startswith("IntegrityError: UNIQUE") for e in errores)
        foto = final(registro)
        # El mensaje está dentro, pero la entrega sigue sin marcar y el padre, esperando.
        assert foto["buzon"]["e-logs-1"][2] == "recibida" and "e-logs-1" in trayectoria(foto)
        assert foto["padres"]["padre"] == ("esperando", 0)


def test_contar_mensajes_activa_al_padre_antes_de_que_llegue_config(exploraciones):
    exploracion = exploraciones[("dos_hijos", "cuenta_mensajes")]
    antes_de_config = numeros(
        r for r in exploracion.registros
        if posiciones(r)[("logs", "entrega e-logs-2")] < posiciones(r)[("config", "admite e-config")])
    assert 0 < len(antes_de_config) < exploracion.total
    assert numeros(exploracion.que_rompen(UNA_ACTIVACION)) == antes_de_config
    for registro in exploracion.que_rompen(UNA_ACTIVACION):
        assert any(e.observacion["padres"]["padre"][0] == "en_cola" and "e-config" not in trayectoria(e.observacion)
                   for e in registro.eventos)


def test_ignorar_los_terminados_los_reabre_y_activa_dos_veces(exploraciones):
    tardias = exploraciones[("tardias", "ignora_terminados")]
    assert tardias.que_rompen(SIGUE_TERMINADO) == list(tardias.registros)
    assert tardias.que_rompen(TARDIO_APARTE) == list(tardias.registros)
    for registro in tardias.registros:
        assert all(final(registro)["padres"][t][0] == "en_cola" for t in TERMINALES)
    # Con el padre ya en cola, la corrección de logs lo vuelve a activar.
    dos_hijos = exploraciones[("dos_hijos", "ignora_terminados")]
    despues = numeros(
        r for r in dos_hijos.registros
        if posiciones(r)[("logs", "entrega e-logs-2")] > posiciones(r)[("config", "admite e-config")])
    assert numeros(dos_hijos.que_rompen(UNA_ACTIVACION)) == despues
    assert all(final(r)["padres"]["padre"] == ("en_cola", 2) for r in dos_hijos.que_rompen(UNA_ACTIVACION))


def test_cada_invariante_tiene_una_variante_ingenua_que_la_rompe(exploraciones):
    invariantes = {inv.nombre for escenario in ESCENARIOS.values() for inv in escenario.invariantes}
    assert invariantes == {SE_PIERDE, SE_DUPLICA, UNA_ACTIVACION, SIGUE_TERMINADO, TARDIO_APARTE}
    for invariante in invariantes:
        rompen = {clave: e.por_fallo().get(invariante, 0) for clave, e in exploraciones.items()}
        assert all(cuantos == 0 for (_, variante), cuantos in rompen.items() if variante == "correcta")
        assert any(cuantos > 0 for cuantos in rompen.values()), invariante


def test_cada_variante_ingenua_rompe_algo_en_algun_escenario(exploraciones):
    for variante in CAIDA.variantes:
        if variante != "correcta":
            assert any(exploraciones[(nombre, variante)].correctos < exploraciones[(nombre, variante)].total
                       for nombre in ESCENARIOS), variante


# --- El texto, el determinismo y cómo se carga el módulo --------------------------------------------

def test_el_texto_de_la_exploracion_nombra_lo_que_falla(exploraciones):
    exploracion = exploraciones[("caida", "marca_primero")]
    texto = exploracion.resumen()
    fallos = dict(exploracion.invariantes)
    for invariante in (SE_PIERDE, UNA_ACTIVACION):
        cuantos = exploracion.por_fallo()[invariante]
        primero = exploracion.que_rompen(invariante)[0]
        assert f"{cuantos} {fallos[invariante]}" in texto
        assert f"Rompen «{invariante}»: {cuantos}. El primero, n.º {primero.numero}" in texto
    assert "padre en_cola v1, trayectoria [e-config]" in texto  # la entrega perdida no está


def test_la_exploracion_del_buzon_es_determinista(exploraciones, buzon):
    otra = explorar(CAIDA, "sin_unique", buzon)
    assert otra.registros == exploraciones[("caida", "sin_unique")].registros
    assert otra.resumen() == exploraciones[("caida", "sin_unique")].resumen()


def test_las_cargas_del_escenario_cumplen_sus_encargos(buzon):
    for entrega, (_, hijo, carga) in ENTREGAS.items():
        if hijo in escenarios.ENCARGOS:
            assert buzon.validar_entrega(escenarios.ENCARGOS[hijo], carga) is None, entrega


def test_cargar_modulo_da_a_buzon_el_historial_de_su_carpeta_y_no_deja_rastro():
    impostor = type(sys)("historial")  # otro «historial» ya importado, como el del alumno
    sys.modules["historial"] = impostor
    ruta_antes = list(sys.path)
    try:
        modulo = cargar_modulo(escenarios.MODULO, "_buzon_05_vecinos")
        # buzon.py usa `transaccion` de historial.py: la de su carpeta, no la del impostor
        assert modulo.transaccion.__wrapped__.__code__.co_filename == str(escenarios.MODULO.with_name("historial.py"))
        assert sys.modules["historial"] is impostor
        assert sys.path == ruta_antes
    finally:
        sys.modules.pop("historial", None)
        sys.modules.pop("_buzon_05_vecinos", None)
    assert "historial" not in sys.modules


def test_la_caida_no_ejecuta_nada_mas_ni_el_rollback(tmp_path, buzon):
    """ConexionQueCae: tras la segunda escritura no llega nada a SQLite; cerrar deshace."""
    bd = buzon.abrir_buzon(tmp_path / "caida.db")
    buzon.crear_padre(bd, "padre", ["logs"])
    padre, hijo, carga = ENTREGAS["e-hijo"]
    buzon.recibir(bd, padre, "logs", "e-1", carga)
    conexion = escenarios.ConexionQueCae(bd)
    with pytest.raises(escenarios.Caida, match="cae tras añadir el mensaje, antes de marcar la entrega"):
        buzon.admitir(conexion, "e-1")
    assert bd.in_transaction  # nadie hizo ROLLBACK: el proceso murió
    bd.close()
    bd = buzon.abrir_buzon(tmp_path / "caida.db")
    assert buzon.pendientes(bd) == ["e-1"] and buzon.mensajes(bd, "padre") == []
    assert json.loads(bd.execute("SELECT carga FROM buzon").fetchone()[0]) == carga
    bd.close()
