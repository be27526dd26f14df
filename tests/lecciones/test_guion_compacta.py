"""El guion `compacta` (lección 03): la ejecución real con compactación, sobre el harness del punto 03.

Corre `agente` del punto de control 03 con `compactar`, `usuario_guionizado` y tope 10, dos veces:
con `ModeloGuionizado("compacta")` (sin red) y con `ModeloAPI("guion:compacta")` contra un servidor
de ensayo en 127.0.0.1. Comprueba las garantías del harness (compacta tres veces,
ninguna petición pasa de la punta grabada, el resumen solo calcula la instrucción, la petición de
después recalcula lo que sigue al pedido), las cifras frente a la traza real, y lo que no promete:
los tres fallos de los resúmenes. El guion solo depende de la petición: las dos ejecuciones dan
las mismas M.

Los módulos del punto de control se llaman como los de los demás (`agente`, `bucle`...): el
fixture `punto` pone su carpeta en sys.path solo mientras duran estos tests y después los quita
de sys.modules.
"""
import ast
import json
import re
import tempfile
from itertools import pairwise

import pytest
from ayudas import modulos_del_punto, sin_tiempos

from curso.ensayo.guionizado import ModeloGuionizado
from curso.material.apuntes import Apuntador
from curso.ensayo import recetario as guiones_del_recetario
from curso.ensayo.recetario import usuario_guionizado
from curso.ensayo.servidor import ServidorEnsayo
from curso.ensayo.tokens import contar
from curso.rutas import RAIZ, RECETARIO

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
TRAZA_REAL = json.loads((RAIZ / "curso" / "material" / "datos" / "traza_real.json").read_text(encoding="utf-8"))
TOLERANCIA = 0.10  # el contador del ensayo no es el tokenizador del modelo real, y el guion no es el modelo
PALABRAS = 150  # lo que pide la instrucción de compactar


@pytest.fixture(scope="module")
def punto():
    """Los módulos del punto de control 03, con su carpeta delante en sys.path."""
    with modulos_del_punto(3) as modulos:
        yield modulos


def correr(punto, modelo, carpeta, tope=10):
    apuntando = Apuntador(modelo, punto["compactar"].INSTRUCCION)
    antes, tempfile.tempdir = tempfile.tempdir, str(carpeta)  # las copias del agente, en carpeta
    try:
        motivo, texto, M, copia = punto["agente"].agente(
            apuntando, PEDIDO, RECETARIO, tope, usuario_guionizado,
            compactar=punto["compactar"].compactar, conservar=True)  # la copia, en carpeta
    finally:
        tempfile.tempdir = antes
    return {"motivo": motivo, "texto": texto, "M": M, "copia": copia, "peticiones": apuntando.peticiones}


@pytest.fixture(scope="module")
def ejecuciones(punto, tmp_path_factory):
    """La ejecución con el modelo guionizado y la misma por HTTP de verdad."""
    local = correr(punto, ModeloGuionizado("compacta", api=punto["api"]), tmp_path_factory.mktemp("local"))
    with ServidorEnsayo(0) as servidor:
        http = correr(punto, punto["api"].ModeloAPI("guion:compacta", url=servidor.url),
                      tmp_path_factory.mktemp("http"))
    return {"local": local, "http": http}


@pytest.fixture(scope="module", params=["local", "http"])
def ejecucion(request, ejecuciones):
    return ejecuciones[request.param]


def entrada(peticion):
    u = peticion["usage"]
    return u["input_tokens"] + u["cache_read_input_tokens"]


def rotulos(ejecucion):
    """«turno N» o «resumen» de cada petición, como los escribe la traza de correr.py."""
    turno, salida = 0, []
    for p in ejecucion["peticiones"]:
        turno += not p["resumen"]
        salida.append("resumen" if p["resumen"] else "turno %d" % turno)
    return salida


def resumenes(ejecucion):
    """El texto de cada resumen que escribió el modelo."""
    return [" ".join(b["text"] for b in p["respuesta"] if b["type"] == "text")
            for p in ejecucion["peticiones"] if p["resumen"]]


def llamadas_del_turno(ejecucion, n):
    i = rotulos(ejecucion).index("turno %d" % n)
    return [b for b in ejecucion["peticiones"][i]["respuesta"] if b["type"] == "tool_use"]


def ficheros(carpeta):
    return {p.relative_to(carpeta).as_posix(): p.read_bytes() for p in sorted(carpeta.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


# --- Lo que promete el harness ------------------------------------------------------------------

def test_la_instruccion_empieza_por_la_marca_del_guion(punto):
    """El acoplamiento entre compactar.py y el guion, que no importa el harness."""
    assert punto["compactar"].INSTRUCCION.startswith(guiones_del_recetario.MARCA_DEL_RESUMEN)


def test_la_compactacion_salta_tres_veces_despues_de_los_turnos_5_7_y_10(ejecucion):
    assert ejecucion["motivo"] == "tope"
    r = rotulos(ejecucion)
    assert r.count("resumen") == 3
    assert [r[i - 1] for i, x in enumerate(r) if x == "resumen"] == ["turno 5", "turno 7", "turno 10"]
    grabados = [p["que"] for p in TRAZA_REAL["compactando"]["peticiones"]]
    assert [x for x in r if x in grabados] == grabados  # en el mismo orden que la traza real


def test_ninguna_peticion_pasa_de_la_punta_grabada_y_sin_compactar_si(punto, ejecucion, tmp_path):
    punta = max(p["tokens_de_entrada"] for p in TRAZA_REAL["compactando"]["peticiones"])
    mayor = max(entrada(p) for p in ejecucion["peticiones"])
    assert mayor <= punta * (1 + TOLERANCIA / 2)
    # El atasco, que es la misma ejecución sin compactar, llega mucho más arriba.
    sin = Apuntador(ModeloGuionizado("atasco", api=punto["api"]), None)
    antes, tempfile.tempdir = tempfile.tempdir, str(tmp_path)
    try:
        punto["agente"].agente(sin, PEDIDO, RECETARIO, 10, usuario_guionizado)
    finally:
        tempfile.tempdir = antes
    assert max(entrada(p) for p in sin.peticiones) > mayor + 2000


def test_cada_resumen_solo_calcula_la_instruccion(punto, ejecucion):
    instruccion = contar(punto["compactar"].INSTRUCCION)
    grabada = TRAZA_REAL["compactando"]["tokens_calculados_por_cada_resumen"]
    for p in ejecucion["peticiones"]:
        if p["resumen"]:
            assert instruccion <= p["usage"]["input_tokens"] <= instruccion + 5  # y su marca de rol
            assert abs(p["usage"]["input_tokens"] - grabada) <= TOLERANCIA * grabada
            assert p["usage"]["cache_read_input_tokens"] == entrada(p) - p["usage"]["input_tokens"] > 2000


def test_la_peticion_de_despues_de_compactar_recalcula_lo_que_sigue_al_pedido(punto, ejecucion):
    peticiones = ejecucion["peticiones"]
    ensayo = ModeloGuionizado("compacta", api=punto["api"]).ensayo
    herramientas = punto["entorno"].HERRAMIENTAS
    despues = [b for a, b in pairwise(peticiones) if a["resumen"]]
    assert len(despues) == 2 and peticiones[-1]["resumen"]  # después del tercer resumen, el tope
    for p in despues:
        inicio = ensayo.contar(punto["api"].peticion(p["M"][:2], herramientas, "guion:compacta"))
        recalculado = entrada(p) - inicio
        # lo que va detrás del pedido se calcula entero, salvo quizá el principio de la nota
        assert p["usage"]["input_tokens"] >= recalculado - contar(punto["compactar"].NOTA) - 5
    grabado = TRAZA_REAL["compactando"]["tokens_recalculados_en_el_turno_6"]
    assert abs(despues[0]["usage"]["input_tokens"] - grabado) <= TOLERANCIA * grabado


def test_cada_peticion_cerca_de_la_traza_real(ejecucion):
    mias = list(zip(rotulos(ejecucion), ejecucion["peticiones"], strict=True))
    for grabada in TRAZA_REAL["compactando"]["peticiones"]:
        que, real = grabada["que"], grabada["tokens_de_entrada"]
        i = next(j for j, (r, _) in enumerate(mias) if r == que)
        _, p = mias.pop(i) if que == "resumen" else mias[i]
        assert abs(entrada(p) - real) <= TOLERANCIA * real, f"{que}: {entrada(p)} frente a {real}"


def test_el_inicio_y_cada_llamada_con_su_observacion_llegan_al_final(punto, ejecucion):
    M = ejecucion["M"]
    assert M[:2] == punto["agente"].inicio(PEDIDO, ejecucion["copia"])
    bloques = [bloque for _, contenido in M if isinstance(contenido, list) for bloque in contenido]
    usos = [x["id"] for x in bloques if x["type"] == "tool_use"]
    resultados = [x["tool_use_id"] for x in bloques if x["type"] == "tool_result"]
    assert usos == resultados == ["toolu_ensayo_9_0", "toolu_ensayo_10_0"]


# --- Lo que no promete: los tres fallos de los resúmenes -----------------------------------------

def test_los_resumenes_estan_en_castellano_y_en_menos_de_150_palabras(ejecucion):
    textos = resumenes(ejecucion)
    assert len(textos) == 3 and len(set(textos)) == 3
    for t in textos:
        assert 0 < len(t.split()) <= PALABRAS
        assert " los " in t and " que " in t


def codigo_y_docstring(fuente, nombre):
    """(el código de la función `nombre` sin su docstring, su docstring)."""
    funcion = next(n for n in ast.parse(fuente).body if isinstance(n, ast.FunctionDef) and n.name == nombre)
    docstring = ast.get_docstring(funcion)
    return "\n".join(ast.unparse(n) for n in funcion.body[1:]), docstring


def test_el_primer_resumen_cree_el_docstring_de_ingredientes_y_no_su_codigo(ejecucion):
    primero = resumenes(ejecucion)[0]
    codigo, docstring = codigo_y_docstring((RECETARIO / "recetario.py").read_text(encoding="utf-8"),
                                           "ingredientes")
    assert "minúsculas" in docstring and "lower" not in codigo  # lo dice el docstring; el código, no
    assert re.search(r"ingredientes ya los normaliza: los pasa a minúsculas", primero)
    assert "recetario.py está bien" in primero
    assert "El error está en compra.py" in primero


def test_el_turno_7_cita_una_veces_que_no_existe_y_el_9_la_repite(ejecucion):
    compra = (RECETARIO / "compra.py").read_text(encoding="utf-8")
    (siete,), (nueve,) = llamadas_del_turno(ejecucion, 7), llamadas_del_turno(ejecucion, 9)
    assert (siete["name"], siete["input"]["ruta"]) == ("editar", "compra.py")
    assert "veces(recetario" in siete["input"]["antiguo"] and "veces(recetario" not in compra
    assert "Devuelve una lista de tuplas (ingrediente, veces)" in siete["input"]["antiguo"]
    assert siete["input"]["antiguo"] not in compra
    (ocho,) = llamadas_del_turno(ejecucion, 8)
    assert ocho["input"] == {"ruta": "compra.py"}  # entre las dos, lee compra.py...
    assert nueve["input"] == siete["input"]  # ...y vuelve a citar lo mismo
    # El turno 7 se escribió con el primer resumen en M y sin ninguna lectura de compra.py.
    i = rotulos(ejecucion).index("turno 7")
    lecturas = [x["input"].get("ruta") for _, contenido in ejecucion["peticiones"][i]["M"]
                if isinstance(contenido, list) for x in contenido
                if x["type"] == "tool_use" and x["name"] == "leer"]
    assert "compra.py" not in lecturas


def test_el_ultimo_resumen_dice_que_modifico_compra_py_y_no_se_modifico_nada(ejecucion):
    assert "he modificado compra.py" in resumenes(ejecucion)[-1]
    assert ficheros(ejecucion["copia"]) == ficheros(RECETARIO)
    editados = [b for p in ejecucion["peticiones"] for b in p["respuesta"] if b["type"] == "tool_use"
                and b["name"] == "editar"]
    originales = {b["input"]["ruta"]: (RECETARIO / b["input"]["ruta"]).read_text(encoding="utf-8")
                  for b in editados}
    assert editados and all(b["input"]["antiguo"] not in originales[b["input"]["ruta"]] for b in editados)


# --- El guion solo depende de la petición -----------------------------------------------------------

def test_las_dos_ejecuciones_dan_las_mismas_m(ejecuciones):
    local, http = ejecuciones["local"], ejecuciones["http"]
    assert len(local["peticiones"]) == len(http["peticiones"]) == 13
    for a, b in zip(local["peticiones"], http["peticiones"], strict=True):
        assert sin_tiempos(a["M"]) == sin_tiempos(b["M"])
        assert a["respuesta"] == b["respuesta"] and a["usage"] == b["usage"]
    assert sin_tiempos(local["M"]) == sin_tiempos(http["M"])


def test_el_guion_contesta_lo_mismo_a_la_misma_peticion_suelta(punto, ejecuciones):
    """Cada petición de la ejecución, pedida otra vez a un servidor recién arrancado, y al revés."""
    peticiones = ejecuciones["local"]["peticiones"]
    herramientas = punto["entorno"].HERRAMIENTAS
    for p in reversed(peticiones):
        modelo = ModeloGuionizado("compacta", api=punto["api"])
        assert modelo(p["M"], herramientas) == p["respuesta"]


def test_turno_de_sigue_contando_despues_de_compactar(ejecucion):
    """Sin compactar, el turno es el número de respuestas más uno; después, lo dicen los ids."""
    i = rotulos(ejecucion).index("turno 6")
    M = ejecucion["peticiones"][i]["M"]
    mensajes = [{"role": {"usuario": "user", "asistente": "assistant"}[r], "content": c} for r, c in M[1:]]
    assert sum(1 for m in mensajes if m["role"] == "assistant") == 2
    assert guiones_del_recetario.turno_de({"messages": mensajes}) == 6


def test_arregla_con_compactacion_sigue_terminando_con_los_tests_en_verde(punto, tmp_path):
    """Con 4096 de umbral, `arregla` también compacta (después del turno 7) y termina igual."""
    hecho = correr(punto, ModeloGuionizado("arregla", api=punto["api"]), tmp_path)
    assert hecho["motivo"] == "fin" and "OK" in hecho["texto"]
    assert [p["resumen"] for p in hecho["peticiones"]].count(True) == 1
