"""La compactación durable (lección 04) frente a la de memoria (lección 03), en la ejecución `compacta`.

Corre `agente` del punto de control 04 dos veces con `ModeloGuionizado("compacta")`,
`usuario_guionizado` y tope 10: una con `compactar` (M solo en memoria) y otra con
`CompactacionDurable` sobre un fichero SQLite de verdad, que se cierra y se vuelve a abrir
después de cada turno. Comprueba que se instalan tres resúmenes con la cobertura creciente, que
cada petición que envió el bucle se reconstruye desde el fichero reabierto, y que las peticiones
son las mismas que con la compactación en memoria (el mismo corte, el mismo resumen, el mismo
usage): el almacén cambia dónde vive M, no lo que ve el modelo.

Los módulos del punto de control se llaman como los de los demás (`agente`, `bucle`...): el
fixture `punto` pone su carpeta la primera en sys.path solo mientras duran estos tests y después
los quita de sys.modules.
"""
import copy
import json
import sqlite3
import tempfile
from itertools import pairwise

import pytest
from ayudas import modulos_del_punto, sin_tiempos

from curso.ensayo.guionizado import ModeloGuionizado
from curso.material.apuntes import Apuntador
from curso.ensayo.recetario import usuario_guionizado
from curso.rutas import RECETARIO

PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."
EJECUCION = "compacta"


@pytest.fixture(scope="module")
def punto():
    """Los módulos del punto de control 04, con su carpeta delante en sys.path."""
    with modulos_del_punto(4) as modulos:
        yield modulos


def correr(punto, carpeta, compactador):
    """La ejecución guionizada `compacta` con `compactador`; cada paso apunta la M que devolvió."""
    salidas = []

    def paso(modelo, M):
        salida = compactador(modelo, M)
        salidas.append(copy.deepcopy(salida))
        return salida

    modelo = Apuntador(ModeloGuionizado("compacta", api=punto["api"]), punto["compactar"].INSTRUCCION)
    antes, tempfile.tempdir = tempfile.tempdir, str(carpeta)  # las copias del agente, en carpeta
    try:
        motivo, _, M, _ = punto["agente"].agente(modelo, PEDIDO, RECETARIO, 10,
                                                 usuario_guionizado, compactar=paso)
    finally:
        tempfile.tempdir = antes
    return {"motivo": motivo, "M": M, "peticiones": modelo.peticiones, "salidas": salidas}


@pytest.fixture(scope="module")
def en_memoria(punto, tmp_path_factory):
    return correr(punto, tmp_path_factory.mktemp("memoria"), punto["compactar"].compactar)


@pytest.fixture(scope="module")
def en_sqlite(punto, tmp_path_factory):
    """La misma ejecución con CompactacionDurable; tras cada turno, el fichero se cierra, se reabre
    y se reconstruye M con una conexión nueva."""
    h, d = punto["historial"], punto["durable"]
    carpeta = tmp_path_factory.mktemp("sqlite")
    ruta = carpeta / "m.db"
    inicio = punto["agente"].inicio(PEDIDO, RECETARIO)
    compactador = d.CompactacionDurable(h.abrir(ruta), EJECUCION)
    reconstruidas = [reabrir_y_reconstruir(punto, ruta, inicio)]  # antes del primer turno

    def reabriendo(modelo, M):
        try:
            return compactador(modelo, M)
        finally:
            compactador.bd.close()
            compactador.bd = h.abrir(ruta)
            reconstruidas.append(reabrir_y_reconstruir(punto, ruta, inicio))

    try:
        ejecucion = correr(punto, carpeta, reabriendo)
    finally:
        compactador.bd.close()
    ejecucion.update(ruta=ruta, inicio=inicio, reconstruidas=reconstruidas)
    return ejecucion


def reabrir_y_reconstruir(punto, ruta, inicio):
    bd = punto["historial"].abrir(ruta)
    try:
        return punto["durable"].reconstruir(bd, EJECUCION, inicio)
    finally:
        bd.close()


def versiones(ruta):
    """[(id, cobertura, anterior, afirmaciones)], leídas con SQL directo."""
    bd = sqlite3.connect(ruta, isolation_level=None)
    try:
        filas = bd.execute("SELECT id, cobertura, anterior, cuerpo FROM resumenes WHERE ejecucion=? ORDER BY id",
                           (EJECUCION,)).fetchall()
    finally:
        bd.close()
    return [(i, cobertura, anterior, json.loads(cuerpo)) for i, cobertura, anterior, cuerpo in filas]


def test_se_instalan_tres_resumenes_y_cada_uno_cubre_mas_que_el_anterior(en_sqlite):
    assert en_sqlite["motivo"] == "tope"
    guardadas = versiones(en_sqlite["ruta"])
    coberturas = [cobertura for _, cobertura, _, _ in guardadas]
    assert len(guardadas) == 3 and all(a < b for a, b in pairwise(coberturas))
    assert [anterior for _, _, anterior, _ in guardadas] == [None] + [i for i, _, _, _ in guardadas[:-1]]


def test_cada_peticion_que_envio_el_bucle_se_reconstruye_tras_reabrir(en_sqlite):
    """La petición de cada turno es lo que el fichero reabierto daba tras el turno anterior, más las
    observaciones de ese turno (que el bucle añade después de compactar)."""
    turnos = [p["M"] for p in en_sqlite["peticiones"] if not p["resumen"]]
    reconstruidas = en_sqlite["reconstruidas"]
    assert len(turnos) == len(reconstruidas) - 1 == 10
    assert turnos[0] == reconstruidas[0] == en_sqlite["inicio"]
    # la última reconstruida no la envía ningún turno (el bucle llegó al tope): zip la deja fuera
    for enviada, reconstruida in zip(turnos[1:], reconstruidas[1:], strict=False):
        assert enviada[:-1] == reconstruida and enviada[-1][0] == "usuario"
    assert reconstruidas[1:] == en_sqlite["salidas"]  # y es la M que devolvió cada paso
    assert reconstruidas[-1] == en_sqlite["M"][:-1]  # la M final, sin las observaciones del turno 10


def test_las_peticiones_son_las_mismas_que_con_la_compactacion_en_memoria(en_sqlite, en_memoria):
    durables, memoria = en_sqlite["peticiones"], en_memoria["peticiones"]
    assert len(durables) == len(memoria) == 13  # diez turnos y tres resúmenes
    for turno, (d, m) in enumerate(zip(durables, memoria, strict=True), 1):
        assert d["resumen"] == m["resumen"], turno
        assert sin_tiempos(d["M"]) == sin_tiempos(m["M"]), turno  # el mismo corte, el mismo resumen
        assert d["usage"] == m["usage"], turno
        assert sin_tiempos(d["respuesta"]) == sin_tiempos(m["respuesta"]), turno
    assert sin_tiempos(en_sqlite["salidas"]) == sin_tiempos(en_memoria["salidas"])


def test_cada_resumen_guardado_es_la_respuesta_del_modelo_a_su_peticion(en_sqlite, punto):
    texto_de = punto["entorno"].texto_de
    escritos = [texto_de(p["respuesta"]) for p in en_sqlite["peticiones"] if p["resumen"]]
    guardadas = versiones(en_sqlite["ruta"])
    assert [afirmaciones[0]["texto"] for _, _, _, afirmaciones in guardadas] == escritos
    assert [afirmaciones[0]["fuente"] for _, _, _, afirmaciones in guardadas] == [c for _, c, _, _ in guardadas]
