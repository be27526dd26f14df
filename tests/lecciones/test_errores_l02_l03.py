"""Las comprobaciones de las lecciones 02 y 03 contra los errores para los que están hechas.

Cada test escribe una solución con un error concreto y pide que falle exactamente el caso escrito
para ese error, con un mensaje que lo nombre; los demás casos, en verde, para que quien se
equivoca vea una sola línea roja que le dice qué ha hecho. Y las cifras de `atasco` que usan los
casos del 2.1 y el 2.2 se comprueban contra el servidor de ensayo, para que no se queden viejas.
"""
import shutil

import pytest

from curso import rutas
from curso.alumno import cuaderno
from curso.comprobaciones import ejercicios
from curso.comprobaciones import l02
from curso.medir.redibujo_de_la_ventana import atasco


def rojos(resultado):
    """{caso: (estado, lo que dice)} de los casos que no pasan."""
    return {l.caso: (l.estado, f"{l.detalle} {l.esperado!r} {l.obtenido!r}")
            for l in resultado.lineas if l.estado != "ok"}


def caso_de(id, empieza):
    """La descripción del caso de `id` que empieza por `empieza`."""
    casos = [c.descripcion for c in ejercicios.buscar(id).casos if c.descripcion.startswith(empieza)]
    assert len(casos) == 1, (id, empieza, casos)
    return casos[0]


def falla_solo(id, objetivo, empieza, dice, espacio=None):
    """Evalúa `id` y exige que el único caso escrito en rojo sea el que empieza por `empieza`, y que su
    mensaje contenga `dice`. (Sin el diferencial, que también lo pilla: eso lo mira test_variantes.py.)"""
    resultado = ejercicios.evaluar(id, objetivo, espacio=espacio, diferencial=False)
    rojo = rojos(resultado)
    caso = caso_de(id, empieza)
    assert list(rojo) == [caso], ejercicios.informe(resultado)
    assert dice in rojo[caso][1], ejercicios.informe(resultado)


# --- Las cifras de atasco ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def traza():
    return atasco()


def test_las_cifras_de_atasco_de_las_comprobaciones_son_las_del_servidor(traza):
    usage_10 = traza["usos"][9]
    for campo in ("input_tokens", "cache_read_input_tokens", "output_tokens"):
        assert l02.PETICION_10[campo] == usage_10[campo], campo
    peticion_10, peticion_11 = traza["cuentas"][20], traza["cuentas"][22]
    assert l02.PETICION_10["input_tokens"] + l02.PETICION_10["cache_read_input_tokens"] == peticion_10
    assert l02.PETICION_11 == peticion_11  # la que el servidor rechazó
    assert traza["admitidas"][20] and not traza["admitidas"][22]


# --- 2.1 --------------------------------------------------------------------------------------

def test_2_1_lo_que_dice_el_texto_basta():
    """El texto pide sumar input_tokens y cache_read_input_tokens, y nada más: con eso pasa."""
    def tamano(usage):
        return usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)
    assert ejercicios.evaluar("2.1", tamano).aprobado


def test_2_1_olvidar_la_cache_cae_en_su_caso():
    falla_solo("2.1", lambda u: u["input_tokens"], "con caché", "falta cache_read_input_tokens")


def test_2_1_leer_la_cache_con_corchetes_cae_en_el_caso_sin_cache():
    falla_solo("2.1", lambda u: u["input_tokens"] + u["cache_read_input_tokens"], "sin caché",
               "cache_read_input_tokens")


def test_2_1_sumar_la_salida_lo_dice_en_cada_caso_que_falla():
    """Sumar output_tokens desvía todas las cuentas que tienen salida: cada línea roja nombra el
    mismo error, y la del caso hecho para él está entre ellas."""
    def tamano(usage):
        return usage["input_tokens"] + usage.get("cache_read_input_tokens", 0) + usage["output_tokens"]
    resultado = ejercicios.evaluar("2.1", tamano, diferencial=False)
    rojo = rojos(resultado)
    assert caso_de("2.1", "no cuenta la salida") in rojo
    assert all("has sumado también output_tokens" in dice for _, dice in rojo.values()), rojo


# --- 2.2 --------------------------------------------------------------------------------------

def cabe_con(error):
    """La solución del 2.2 con un error: "cache", "max_tokens", "salida", "estricto" o "corchetes"."""
    def cabe(usage, observaciones, ventana=8192, max_tokens=512):
        leidos = usage["cache_read_input_tokens"] if error == "corchetes" else usage.get(
            "cache_read_input_tokens", 0)
        ahora = usage["input_tokens"] + (0 if error == "cache" else leidos)
        siguiente = ahora + (0 if error == "salida" else usage["output_tokens"]) + observaciones
        pide = siguiente + (0 if error == "max_tokens" else max_tokens)
        return pide < ventana if error == "estricto" else pide <= ventana
    return cabe


def test_2_2_la_solucion_pasa():
    assert ejercicios.evaluar("2.2", cabe_con(None)).aprobado


@pytest.mark.parametrize("error, empieza, dice", [
    ("cache", "la petición 11 de atasco no cabe", "cache_read_input_tokens"),
    ("max_tokens", "en una ventana de 8448", "has sumado max_tokens"),
    ("salida", "la respuesta que acaba de llegar", "has sumado output_tokens"),
    ("estricto", "justo en el límite", "< en vez de <="),
    ("corchetes", "sin cache_read_input_tokens", "KeyError"),
])
def test_2_2_cada_error_cae_en_su_caso(error, empieza, dice):
    if error not in TAMBIEN_22:
        return falla_solo("2.2", cabe_con(error), empieza, dice)
    resultado = ejercicios.evaluar("2.2", cabe_con(error), diferencial=False)
    rojo, caso = rojos(resultado), caso_de("2.2", empieza)
    assert sorted(rojo) == sorted([caso, caso_de("2.2", TAMBIEN_22[error])]), ejercicios.informe(resultado)
    assert dice in rojo[caso][1], ejercicios.informe(resultado)


# El caso del límite con un usage sin cache_read_input_tokens (lo pidió un mutante de `medir mutantes
# 2.2`: un `.get(..., 1)`) pilla también los corchetes, sin remedio: un usage sin esa clave. Un < por <=
# ya no (issue 44, punto 3): compara con el mismo usage con la clave a 0, y su título no engaña.
TAMBIEN_22 = {"corchetes": "un usage sin cache_read_input_tokens"}


# --- 3.3 --------------------------------------------------------------------------------------

SOLUCION = "    return M[:hasta_el_pedido] + [(\"usuario\", NOTA + resumen)] + M[desde:]\n"
EN_SU_SITIO = "    M[hasta_el_pedido:desde] = [(\"usuario\", NOTA + resumen)]\n    return M\n"
PETICION = "    resumen = texto_de(modelo(peticion, HERRAMIENTAS))\n"
SIN_HERRAMIENTAS = "    resumen = texto_de(modelo(peticion))\n"


def compactar_con(tmp_path, cambio):
    """Un espacio con el punto de control 03 y su compactar.py cambiado por `cambio` (viejo, nuevo)."""
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[3], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    fuente = ejercicios.celda_resuelta("3.3").source.split("\n", 1)[1]  # sin la línea %%modulo
    viejo, nuevo = cambio
    assert fuente.count(viejo) == 1, "la solución de referencia ya no tiene esa línea"
    (espacio / "compactar.py").write_text(cuaderno.sin_marcas(fuente.replace(viejo, nuevo)), encoding="utf-8")
    return espacio


@pytest.fixture
def evaluar_en(tmp_path):
    vistos = []

    def evaluar(cambio, *args):
        espacio = compactar_con(tmp_path, cambio)
        vistos.append(espacio)
        falla_solo("3.3", None, *args, espacio=espacio)
    yield evaluar
    for espacio in vistos:
        ejercicios.olvidar_modulos(espacio)


def test_3_3_modificar_m_en_su_sitio_cae_solo_en_su_caso(evaluar_en):
    evaluar_en((SOLUCION, EN_SU_SITIO), "no modifica la M", "modificaste M en su sitio")


def test_3_3_pedir_el_resumen_sin_herramientas_cae_en_el_caso_de_la_peticion(evaluar_en):
    evaluar_en((PETICION, SIN_HERRAMIENTAS), "el resumen se pide", "las herramientas de la petición del resumen")
