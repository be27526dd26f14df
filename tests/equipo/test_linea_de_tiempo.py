"""La lógica de la línea de tiempo de la lección 06 (curso/linea_de_tiempo.py), sobre la base de una
ejecución de verdad del punto de control 06 con una caída a mitad (ver curso/simulacro.py).

Lo que la línea de tiempo deduce de los pasos se compara con lo que dice la base por otro camino:
la M que reconstruye el propio punto de control, las tablas de resúmenes y del buzón.
"""
import shutil

import pytest

from ayudas import modulos_del_punto
from curso import linea_de_tiempo as L
from curso import rutas, simulacro

PUNTO = rutas.PUNTOS / "06_todo_junto"


def M_de_cada_agente(base):
    """{agente: len(M)} según el punto de control 06 (durable.reconstruir), no según los pasos."""
    with modulos_del_punto(6) as m:
        bd = m["registro"].abrir(base)
        try:
            return {a["id"]: len(m["agentes"].M_de(bd, a)) for a in m["registro"].agentes(bd)}
        finally:
            bd.close()


@pytest.fixture(scope="module")
def ejecucion():
    """(datos, i de la reanudación, M de cada agente justo tras la caída, M al final, resúmenes de
    config, pasos de preparar). Los pasos se cuentan desde 0 y desde la primera vida: el de la
    reanudación es el k de CURSO_MORIR_EN=paso:k."""
    with simulacro.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, _):
        base = simulacro.preparar(PUNTO, carpeta / "e")
        primera = [c for _, vida, c, _ in simulacro.pasos_de(base) if vida == 0]
        k = 6  # la vida y cinco pasos (el último, una respuesta apuntada): muere a mitad de los hijos
        codigo, _, errores = simulacro.reanudar(PUNTO, base, url, CURSO_MORIR_EN=f"paso:{k}")
        assert codigo == -9, errores
        shutil.copytree(carpeta / "e", carpeta / "al_caer")
        M_al_caer = M_de_cada_agente(carpeta / "al_caer" / "todo_junto.db")
        assert simulacro.hasta_el_final(PUNTO, base, url) == 0
        resumenes = simulacro._consultar(base, "SELECT COUNT(*) FROM resumenes WHERE ejecucion='config'")[0][0]
        yield L.leer(base), k, M_al_caer, M_de_cada_agente(base), resumenes, len(primera)


def test_un_carril_por_agente_con_sus_peticiones_frente_a_la_ventana(ejecucion):
    datos = ejecucion[0]
    carriles = L.carriles(datos)
    assert list(carriles) == ["incidente", "logs", "config"]
    for agente, marcas in carriles.items():
        peticiones = [m for m in marcas if m["clase"] == "peticion" and not m["resumen"]]
        respuestas = [m for rol, m in datos["historiales"][agente] if rol == "asistente"]
        assert len(peticiones) == len(respuestas)  # la caída no cayó entre una petición y su respuesta
        assert all(0 < m["tokens"] < L.VENTANA and m["fraccion"] == m["tokens"] / L.VENTANA for m in peticiones)


def test_las_compactaciones_son_las_de_la_tabla_de_resumenes(ejecucion):
    datos, _, _, _, resumenes, _ = ejecucion
    marcas = L.carriles(datos)["config"]
    assert resumenes > 0
    assert sum(1 for m in marcas if m["clase"] == "compactacion") == resumenes
    assert sum(1 for m in marcas if m["clase"] == "peticion" and m["resumen"]) == resumenes


def test_cada_entrega_se_recibe_y_se_admite_y_el_padre_se_activa_con_la_ultima(ejecucion):
    carriles = L.carriles(ejecucion[0])
    for hijo in ("logs", "config"):
        (recibida,) = [m["i"] for m in carriles[hijo] if m["clase"] == "recibir"]
        (admitida,) = [m["i"] for m in carriles[hijo] if m["clase"] == "admitir"]
        assert recibida < admitida
    ultima = max(m["i"] for h in ("logs", "config") for m in carriles[h] if m["clase"] == "admitir")
    assert [m["i"] for m in carriles["incidente"] if m["clase"] == "activacion"] == [ultima]


def test_la_caida_y_la_reanudacion_se_marcan_en_todos_los_carriles(ejecucion):
    datos, reanudacion = ejecucion[0], ejecucion[1]
    for marcas in L.carriles(datos).values():
        assert [(m["clase"], m["i"]) for m in marcas if m["clase"] in ("caida", "reanudacion")] == [
            ("caida", reanudacion - 1), ("reanudacion", reanudacion)]


def test_la_M_de_cada_agente_tras_un_paso_es_la_que_reconstruye_la_base(ejecucion):
    datos, reanudacion, M_al_caer, M_al_final, _, _ = ejecucion
    # Tras el último paso de la primera vida (justo antes de la caída), y al final.
    assert {a: e["M"] for a, e in L.estado_tras(datos, reanudacion - 1)["agentes"].items()} == M_al_caer
    assert {a: e["M"] for a, e in L.estado_tras(datos, len(datos["pasos"]) - 1)["agentes"].items()} == M_al_final


def test_las_llamadas_pendientes_y_las_intenciones_sin_resultado(ejecucion):
    datos = ejecucion[0]
    pasos = datos["pasos"]
    for i, paso in enumerate(pasos):
        estado = L.estado_tras(datos, i)["agentes"].get(paso["agente"])
        if paso["clase"] == "respuesta" and not paso["detalle"]["final"]:
            assert estado["pendientes"]
        elif paso["clase"] == "observaciones":
            assert estado["pendientes"] == []
        elif paso["clase"] == "intencion":
            assert estado["intenciones"] == [paso["detalle"]["llamada"]]
        elif paso["clase"] == "resultado":
            assert estado["intenciones"] == []


def test_el_veredicto_de_un_paso_y_el_resumen_en_texto(ejecucion):
    datos = ejecucion[0]
    ultimo = len(datos["pasos"]) - 1
    texto = L.veredicto(datos, ultimo)
    assert texto.splitlines()[0] == f"Paso {ultimo + 1} de {ultimo + 1} · vida 2 · terminar de incidente"
    assert "incidente/config/1 admitida" in texto and "el padre ya está activado" in texto
    resumen = L.resumen(datos).splitlines()
    assert len(resumen) == 4 and resumen[-1] == f"{ultimo + 1} pasos en 2 vidas del proceso (reanudaciones: 1)"


def test_la_vista_resalta_la_columna_del_paso_y_dibuja_cada_marca_en_su_carril(ejecucion):
    """La vista fina (curso/vistas/linea_de_tiempo.py), sin navegador: una columna por paso, la
    elegida resaltada en cada carril, una barra por petición y la caída en los tres carriles."""
    from curso.vistas.linea_de_tiempo import SIMBOLOS, carriles_html

    datos, reanudacion = ejecucion[0], ejecucion[1]
    tabla = carriles_html(datos, reanudacion).split("</table>")[0]  # sin la leyenda
    filas = tabla.split("<tr>")[1:]
    assert len(filas) == len(datos["agentes"])
    for fila in filas:
        celdas = fila.split("<td")[1:]
        assert len(celdas) == len(datos["pasos"])
        assert [j for j, celda in enumerate(celdas) if "linea-elegido" in celda] == [reanudacion]
    assert tabla.count('title="petición de') == sum(1 for p in datos["pasos"] if p["clase"] == "peticion")
    assert tabla.count(SIMBOLOS["caida"][0]) == tabla.count(SIMBOLOS["reanudacion"][0]) == len(filas)
