"""El simulacro de caídas de la lección 06: procesos de verdad, matados con SIGKILL, y reanudados.

Cada proceso es `python todo_junto.py reanudar` (ver CORREDOR en curso/material/simulacro.py) contra un
servidor de ensayo de este proceso, por HTTP en 127.0.0.1. El resultado con caídas se compara
con el de una ejecución sin caídas: el mismo informe, los mismos ficheros en la copia de trabajo,
cada entrega admitida una vez, cada edición aplicada una vez y el historial de cada agente igual,
mensaje a mensaje. Y cada variante ingenua, con la caída que le toca, no sale igual.

(Las cien caídas al azar están en tests/test_simulacro_06.py del curso, que corre una vez; una
caída tras cada paso, cada una en su propia ejecución, con sus peticiones y tokens repetidos, es
`python -m curso medir todo`.)
"""
import json

import pytest

from curso.ensayo.fallos import Fallos
from curso.material import simulacro
from ayudas_06 import (YA_TERMINO, caer_tras_cada_paso, caidas_al_editar, carpeta_en_memoria, copiar_ejecucion, foto,
                       hasta_el_final, lanzar, pasos_de, pasos_de_la_ejecucion, pasos_durables, preparar,
                       preparar_relectura, reanudar, servidor_que_cuenta)


@pytest.fixture(scope="module")
def servidor():
    with servidor_que_cuenta() as (url, contador):
        yield url, contador


@pytest.fixture(scope="module")
def plantilla():
    """La carpeta de una ejecución recién preparada, para copiarla en cada test."""
    with carpeta_en_memoria() as carpeta:
        preparar(carpeta / "plantilla")
        yield carpeta / "plantilla"


@pytest.fixture
def carpeta():
    with carpeta_en_memoria() as c:
        yield c


@pytest.fixture(scope="module")
def sin_caidas(plantilla, servidor):
    """(foto, pasos) de la ejecución sin caídas: la referencia."""
    url, _ = servidor
    with carpeta_en_memoria() as c:
        base = copiar_ejecucion(plantilla, c / "e")
        codigo, salida, errores = reanudar(base, url)
        assert codigo == 0, errores
        assert salida.startswith("vida 1 · el padre está completada")
        yield foto(base), pasos_de(base)


def paso_local(pasos, clase, agente):
    """El número, contado dentro de la primera vida (la vida misma es el 1), del primer paso
    `clase` de `agente`: el K de CURSO_MORIR_EN=paso:K para morir justo después de él."""
    primera = [(c, a) for _, vida, c, a in pasos if vida == 1]
    return primera.index((clase, agente)) + 1


def test_sin_caidas_cada_respuesta_y_cada_observacion_es_un_paso(sin_caidas):
    referencia, pasos = sin_caidas
    durables = pasos_durables(pasos)
    assert {c for c, _ in durables} == {"respuesta", "observaciones", "compactacion", "intencion",
                                        "resultado", "recibir", "admitir", "integracion", "terminar"}
    for agente, historial in referencia["historiales"].items():
        for rol, clase in (("asistente", "respuesta"), ("usuario", "observaciones")):
            mensajes = sum(1 for r, contenido in historial if r == rol and (rol == "asistente" or
                                                                            isinstance(contenido, list)))
            assert durables.count((clase, agente)) == mensajes, (agente, clase)


def test_una_caida_justo_despues_de_cada_paso_y_sale_igual(plantilla, servidor, carpeta, sin_caidas):
    url, contador = servidor
    referencia, pasos = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    antes = len(contador.peticiones)
    muertes = caer_tras_cada_paso(base, url, pasos)
    codigo, _, errores = reanudar(base, url)  # tras el último paso (el padre terminado), nada que hacer
    assert codigo == 1 and YA_TERMINO in errores
    assert muertes == pasos_de_la_ejecucion(pasos)  # una caída tras cada paso, en su orden
    assert foto(base) == referencia
    assert pasos_durables(pasos_de(base)) == pasos_durables(pasos)  # ninguno repetido ni saltado
    # La respuesta se apunta antes de actuar: solo la caída justo tras una petición (antes de
    # apuntar su respuesta) obliga a repetirla, una vez y la misma. Cada petición cayó una vez:
    # cada una se hizo dos veces, y ninguna más.
    hechas = [n for n, vida, clase, _ in pasos_de(base) if vida >= 1 and clase == "peticion"]
    sin_caer = sum(1 for _, vida, clase, _ in pasos if vida >= 1 and clase == "peticion")
    assert len(contador.peticiones) - antes == len(hechas) == 2 * sin_caer


@pytest.mark.parametrize("variante, sale_igual", [("correcta", True), ("repetir_sin_resultado", False)])
def test_una_caida_entre_editar_y_apuntar_su_resultado(plantilla, servidor, carpeta, sin_caidas, variante, sale_igual):
    url, _ = servidor
    referencia, _ = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    codigo, _, errores = reanudar(base, url, variante, CURSO_MORIR_EN="efecto:1")
    assert codigo == -9, errores
    assert hasta_el_final(base, url, variante) == 0
    resultado = foto(base)
    assert (resultado == referencia) is sale_igual
    nota = "Según config/db.toml, db escucha en el puerto 5432.\n"
    assert resultado["copia"]["README.md"].decode().count(nota) == (1 if sale_igual else 2)


@pytest.mark.parametrize("variante, sale_igual", [("correcta", True), ("en_su_sitio", False)])
def test_una_edicion_que_acorta_un_fichero_grande_muere_en_cada_llamada_al_sistema_y_sale_igual(
        carpeta, variante, sale_igual):
    """Una caída (SIGKILL) antes de cada llamada al sistema de `editar`, cada una en su ejecución, y
    la misma edición otra vez (ver EDITOR en curso/material/simulacro.py). La variante ingenua escribe
    encima del fichero abierto: muerta entre el write (más de 8 KiB, sin pasar por el búfer) y el
    truncate, deja un fichero sin la huella de antes ni la de después."""
    hecho = caidas_al_editar(carpeta, variante)
    assert hecho["bytes"] > 8 * 1024 and hecho["bytes_despues"] < hecho["bytes"]  # grande, y la edición lo acorta
    assert {"write", "replace" if sale_igual else "truncate"} <= set(hecho["llamadas"])
    assert [c["k"] for c in hecho["caidas"]] == list(range(1, len(hecho["llamadas"]) + 1))
    assert all(c["muerto"] for c in hecho["caidas"])  # cada hijo murió por el SIGKILL, justo ahí
    distintas = [c["llamada"] for c in hecho["caidas"] if not c["igual"]]
    assert distintas == ([] if sale_igual else ["truncate"])


@pytest.mark.parametrize("variante, sale_igual", [("correcta", True), ("entrega_nueva_en_cada_vida", False)])
@pytest.mark.parametrize("tras", ["recibir", "admitir"])
def test_una_caida_en_medio_de_una_entrega(plantilla, servidor, carpeta, sin_caidas, variante, sale_igual, tras):
    url, _ = servidor
    referencia, pasos = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    k = paso_local(pasos, tras, "config")
    codigo, _, errores = reanudar(base, url, variante, CURSO_MORIR_EN=f"paso:{k}")
    assert codigo == -9, errores
    assert hasta_el_final(base, url, variante) == 0
    resultado = foto(base)
    assert (resultado == referencia) is sale_igual
    admitidas = [t for t in resultado["trayectoria"] if t[0] == "incidente"]
    if sale_igual:
        assert len(admitidas) == 2
    else:  # la misma entrega, dos veces en el buzón (y, si ya se había admitido, dos en la trayectoria)
        assert len(resultado["buzon"]) == 3 and len(admitidas) == (3 if tras == "admitir" else 2)


def test_reanudar_desde_el_principio_en_vez_de_desde_la_base_no_sale_igual(plantilla, servidor, carpeta, sin_caidas):
    url, _ = servidor
    referencia, pasos = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    k = paso_local(pasos, "observaciones", "config")
    codigo, _, _ = reanudar(base, url, "empezar_de_cero", CURSO_MORIR_EN=f"paso:{k}")
    assert codigo == -9
    codigo, _, errores = reanudar(base, url, "empezar_de_cero")
    # O falla (la compactación durable de la lección 04 ve que M no sigue a lo guardado), o acaba distinto.
    assert codigo != 0 or foto(base) != referencia, errores


# --- Un hijo que relee: limpiar (lección 03b) antes de compactar, y sus caídas ---------------------

@pytest.fixture(scope="module")
def relectura():
    """La carpeta de una ejecución con el hijo que relee (ver RELECTURA en curso/material/simulacro.py)."""
    with carpeta_en_memoria() as carpeta:
        preparar_relectura(carpeta / "plantilla")
        yield carpeta / "plantilla"


def sin_caer(plantilla, url, carpeta, variante="correcta"):
    """(foto, pasos) de la ejecución de `plantilla`, de una vez y sin caídas."""
    base = copiar_ejecucion(plantilla, carpeta)
    codigo, _, errores = reanudar(base, url, variante)
    assert codigo == 0, errores
    return foto(base), pasos_de(base)


def turnos_de(pasos, agente, clase):
    """En qué respuesta de `agente` (contando desde 1) hubo cada paso `clase`."""
    turno, turnos = 0, []
    for _, vida, c, a in pasos:
        if a == agente and vida >= 1:
            turno += c == "respuesta"
            if c == clase:
                turnos.append(turno)
    return turnos


@pytest.fixture(scope="module")
def relectura_sin_caidas(relectura, servidor):
    url, _ = servidor
    with carpeta_en_memoria() as c:
        yield sin_caer(relectura, url, c / "e")


def test_un_hijo_que_relee_limpia_antes_de_compactar_y_compacta_mas_tarde(relectura, servidor, carpeta,
                                                                          relectura_sin_caidas):
    url, _ = servidor
    _, pasos = relectura_sin_caidas
    _, sin_limpiar = sin_caer(relectura, url, carpeta / "sin", "sin_limpiar")
    limpia, compacta = turnos_de(pasos, "config", "limpieza"), turnos_de(pasos, "config", "compactacion")
    assert not turnos_de(sin_limpiar, "config", "limpieza")
    assert limpia and compacta and limpia[0] < compacta[0]  # primero limpia; compactar llega después
    assert compacta[0] > turnos_de(sin_limpiar, "config", "compactacion")[0]  # y más tarde que sin limpiar


def entradas_de(base, agente="config"):
    """Los tokens de entrada (calculados y de la caché) de cada petición de `agente` que no era un resumen."""
    usos = [json.loads(d) for (d,) in simulacro._consultar(
        base, f"SELECT detalle FROM pasos WHERE clase='peticion' AND agente='{agente}' ORDER BY n")]
    return [u["usage"]["input_tokens"] + u["usage"]["cache_read_input_tokens"] for u in usos if not u["resumen"]]


@pytest.mark.parametrize("variante, encoge", [("correcta", True), ("olvidar_lo_limpiado", False)])
def test_la_peticion_que_sigue_a_una_limpieza_lleva_los_marcadores(relectura, servidor, carpeta,
                                                                   relectura_sin_caidas, variante, encoge):
    """La M de cada acción sale de la base: si al reconstruirla no se ponen los marcadores de los
    pasos «limpieza», lo limpiado vuelve entero en la petición siguiente."""
    url, _ = servidor
    _, pasos = relectura_sin_caidas
    base = copiar_ejecucion(relectura, carpeta / "e")
    codigo, _, errores = reanudar(base, url, variante)
    assert codigo == 0, errores
    limpia, entradas = turnos_de(pasos, "config", "limpieza")[0], entradas_de(base)
    # La petición del turno siguiente trae un resultado más, y aun así es más corta que la del turno que limpió.
    assert (entradas[limpia] < entradas[limpia - 1]) is encoge, entradas


def local_de(pasos, clase, agente, antes_de):
    """Como `paso_local`, pero del último paso `clase` de `agente` que no va después del primer
    paso `antes_de` (el mismo, si clase == antes_de)."""
    primera = [(c, a) for _, vida, c, a in pasos if vida == 1]
    hasta = primera.index((antes_de, agente))
    return max(i for i in range(hasta + 1) if primera[i] == (clase, agente)) + 1


@pytest.mark.parametrize("variante, tras, sale_igual", [("correcta", "respuesta", True),
                                                         ("correcta", "limpieza", True),
                                                         ("limpiar_otra_vez", "limpieza", False)])
def test_una_caida_justo_antes_o_justo_despues_de_limpiar(relectura, servidor, carpeta, relectura_sin_caidas,
                                                         variante, tras, sale_igual):
    """Tras la respuesta del turno que limpia, la acción se repite entera; tras la limpieza, se sigue
    con M limpia y con lo liberado que apuntó el paso. La variante ingenua no mira si el turno ya
    limpió: limpia otra vez la M ya limpia, no libera nada, y compacta en ese mismo turno."""
    url, _ = servidor
    referencia, pasos = relectura_sin_caidas
    base = copiar_ejecucion(relectura, carpeta / "e")
    k = local_de(pasos, tras, "config", antes_de="limpieza")
    codigo, _, errores = reanudar(base, url, variante, CURSO_MORIR_EN=f"paso:{k}")
    assert codigo == -9, errores
    assert hasta_el_final(base, url, variante) == 0
    assert (foto(base) == referencia) is sale_igual
    limpia = turnos_de(pasos, "config", "limpieza")[0]
    if sale_igual:  # ninguna limpieza ni compactación repetida, saltada o movida de turno
        assert pasos_durables(pasos_de(base)) == pasos_durables(pasos)
    else:
        assert limpia in turnos_de(pasos_de(base), "config", "compactacion")


@pytest.mark.parametrize("fallo, dice", [("lleno", "el disco está lleno"), ("solo_lectura", "la base es de solo lectura")])
def test_si_la_base_no_admite_un_paso_se_dice_y_una_reanudacion_posterior_acaba_igual(
        plantilla, servidor, carpeta, sin_caidas, fallo, dice):
    url, _ = servidor
    referencia, _ = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    codigo, _, errores = reanudar(base, url, CURSO_FALLAR_EN=f"12:{fallo}")
    assert codigo == 3 and dice in errores and "vuelve a reanudar" in errores, errores
    assert "Traceback" not in errores
    assert hasta_el_final(base, url) == 0
    assert foto(base) == referencia


def test_dos_procesos_reanudan_a_la_vez_y_solo_uno_sigue(plantilla, servidor, carpeta, sin_caidas):
    url, contador = servidor
    referencia, _ = sin_caidas
    base = copiar_ejecucion(plantilla, carpeta / "e")
    contador.pausa.clear()  # el servidor retiene las peticiones: el primero se queda esperando
    primero = lanzar(base, url)
    try:
        for _ in range(200):  # hasta que el primero tiene el cerrojo (y espera al modelo)
            if (carpeta / "e" / "todo_junto.db.cerrojo").exists() and pasos_de(base)[-1][2] == "vida":
                break
            primero.poll() is None or pytest.fail(primero.stderr.read())
            __import__("time").sleep(0.02)
        codigo, _, errores = reanudar(base, url)
        assert codigo == 1 and "ya la está reanudando el proceso" in errores, errores
    finally:
        contador.pausa.set()
    salida, errores = primero.communicate(timeout=60)
    assert primero.returncode == 0, errores
    assert foto(base) == referencia


@pytest.mark.parametrize("variante, sale_igual", [("correcta", True), ("apuntar_despues_de_actuar", False)])
def test_con_un_modelo_que_no_repite_sus_respuestas_hay_que_apuntarlas_antes_de_actuar(
        plantilla, carpeta, variante, sale_igual):
    """Un modelo de verdad no contesta dos veces lo mismo (aquí, el plan `variar` del servidor).
    Quien actúa antes de apuntar la respuesta tiene que volver a pedirla tras una caída, y apunta
    una respuesta que no es la que usó; quien la apunta antes no vuelve a pedirla."""
    with servidor_que_cuenta(Fallos(variar=True)) as (url, _):  # un servidor para cada ejecución
        base = copiar_ejecucion(plantilla, carpeta / "referencia")
        assert reanudar(base, url, variante)[0] == 0
        referencia, pasos = foto(base), pasos_de(base)
    with servidor_que_cuenta(Fallos(variar=True)) as (url, _):
        base = copiar_ejecucion(plantilla, carpeta / "e")
        k = paso_local(pasos, "resultado", "config")  # la edición, hecha y apuntada; la respuesta, no
        codigo, _, errores = reanudar(base, url, variante, CURSO_MORIR_EN=f"paso:{k}")
        assert codigo == -9, errores
        assert hasta_el_final(base, url, variante) == 0
    resultado = foto(base)
    assert (resultado == referencia) is sale_igual
    assert resultado["copia"] == referencia["copia"]  # la edición, una vez en los dos casos (efectos.py)
