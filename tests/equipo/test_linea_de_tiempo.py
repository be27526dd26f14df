"""La lógica de la línea de tiempo de la lección 06 (curso/explorables/linea_de_tiempo/carriles.py), sobre la base de una
ejecución de verdad del punto de control 06 con una caída a mitad (ver curso/material/simulacro.py).

Lo que la línea de tiempo deduce de los pasos se compara con lo que dice la base por otro camino:
la M que reconstruye el propio punto de control, las tablas de resúmenes y del buzón.
"""
import re
import shutil

import pytest

from ayudas import modulos_del_punto
from curso.explorables.linea_de_tiempo import carriles as L
from curso import rutas
from curso.material import simulacro

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
    assert texto.splitlines()[0] == f"Paso {ultimo + 1} de {ultimo + 1} · vida 2 · incidente termina"
    assert "incidente/config/1 admitida" in texto and "el padre ya está activado" in texto
    resumen = L.resumen(datos).splitlines()
    assert len(resumen) == 4 and resumen[-1] == f"{ultimo + 1} pasos en 2 vidas del proceso (reanudaciones: 1)"


def test_la_vista_resalta_la_columna_del_paso_y_dibuja_cada_marca_en_su_carril(ejecucion):
    """La vista fina (curso/explorables/linea_de_tiempo/widget_de_la_linea.py), sin navegador: una columna por paso, la
    elegida resaltada en cada carril, una barra por petición y la caída en los tres carriles."""
    from curso.explorables.linea_de_tiempo.widget_de_la_linea import SIMBOLOS, carriles_html

    datos, reanudacion = ejecucion[0], ejecucion[1]
    tabla = carriles_html(datos, reanudacion).split("</table>")[0]  # sin la leyenda
    tabla = tabla.split('<tr class="linea-eje">')[0]  # ni el eje
    filas = tabla.split("<tr>")[1:]
    assert len(filas) == len(datos["agentes"])
    for fila in filas:
        celdas = fila.split("<td")[1:]
        assert len(celdas) == len(datos["pasos"])
        assert [j for j, celda in enumerate(celdas) if "linea-elegido" in celda] == [reanudacion]
    assert tabla.count('title="petición de') == sum(1 for p in datos["pasos"] if p["clase"] == "peticion")
    assert tabla.count(SIMBOLOS["caida"][0]) == tabla.count(SIMBOLOS["reanudacion"][0]) == len(filas)


# --- Lo que se ve: el paso en palabras, dónde se abre, el eje y la leyenda ------------------------

# Las etiquetas de la columna `clase` de `pasos` que, escritas como palabras, llevarían tilde.
SIN_TILDE = re.compile(r"\b(intencion|peticion|compactacion|integracion|activacion|reanudacion)\b")


def etiquetas_a_la_vista(describir, pasos):
    """Los pasos que `describir` cuenta con la etiqueta de la base: una sin tilde, o «<clase> de <agente>»."""
    return [describir(p) for p in pasos
            if SIN_TILDE.search(describir(p)) or describir(p) == f"{p['clase']} de {p['agente']}"]


def test_cada_paso_se_cuenta_con_palabras_y_no_con_su_etiqueta(ejecucion):
    pasos = ejecucion[0]["pasos"]
    assert etiquetas_a_la_vista(L.describir, pasos) == []
    # Cada clase de paso, con su frase: dos clases distintas no se cuentan igual.
    por_clase = {}
    for p in pasos:
        por_clase.setdefault(p["clase"], set()).add(L.describir(p).replace(p["agente"] or "", "·"))
    frases = [f for conjunto in por_clase.values() for f in conjunto]
    assert len(frases) == len(set(frases)), por_clase
    assert any("intención de editar README.md" in L.describir(p) for p in pasos if p["clase"] == "intencion")
    # La variante ingenua, la de antes («intencion de config»), la comprobación la ve.
    ingenua = lambda p: f"{p['clase']} de {p['agente']}"  # noqa: E731
    assert len(etiquetas_a_la_vista(ingenua, pasos)) == len(pasos)
    assert L.describir({"clase": "nueva", "agente": "logs", "vida": 1, "detalle": {}}) == "paso «nueva» de logs"


def test_se_abre_en_el_ultimo_paso_antes_de_la_caida(ejecucion):
    from curso.explorables.linea_de_tiempo.widget_de_la_linea import paso_inicial

    datos, reanudacion = ejecucion[0], ejecucion[1]
    assert L.antes_de_la_caida(datos) == reanudacion - 1
    assert paso_inicial(datos) == reanudacion  # el deslizador cuenta desde 1
    sin_caida = dict(datos, pasos=datos["pasos"][:reanudacion])  # la vida 1 sola: no cayó nunca
    assert L.antes_de_la_caida(sin_caida) is None and paso_inicial(sin_caida) == reanudacion


def colores(fragmento):
    """Los colores (de letra o de fondo) que aparecen en los estilos de un trozo de HTML."""
    return set(re.findall(r"(?:background|color):(#[0-9a-f]{6})", fragmento))


def colores_sin_explicar(html):
    tabla, leyenda = html.split("</table>")
    tabla = tabla.split('<tr class="linea-eje">')[0]
    return colores(tabla) - colores(leyenda)


def test_la_leyenda_explica_cada_color_de_los_carriles(ejecucion):
    from curso.explorables.linea_de_tiempo import widget_de_la_linea as vista

    datos, reanudacion = ejecucion[0], ejecucion[1]
    dibujo = vista.carriles_html(datos, reanudacion)
    assert {vista.PETICION[0], vista.PETICION_DE_RESUMEN[0], vista.RESALTE[0]} <= colores(dibujo.split("</table>")[0])
    assert colores_sin_explicar(dibujo) == set()
    # La leyenda de antes (sin la barra morada ni la columna resaltada) deja colores sin explicar.
    vieja = dibujo.replace(vista.PETICION_DE_RESUMEN[1], "").split('<div class="linea-leyenda"')
    sin_morado = vieja[0] + re.sub(r"background:%s" % vista.PETICION_DE_RESUMEN[0], "", vieja[1])
    assert colores_sin_explicar(sin_morado) == {vista.PETICION_DE_RESUMEN[0]}


def test_el_eje_numera_los_pasos_bajo_su_columna(ejecucion):
    from curso.explorables.linea_de_tiempo.widget_de_la_linea import CADA, carriles_html

    datos = ejecucion[0]
    n, elegido = len(datos["pasos"]), 7
    eje = carriles_html(datos, elegido).split('<tr class="linea-eje">')[1].split("</tr>")[0]
    celdas = [re.sub(r"<[^>]+>", "", c) for c in eje.split("<td")[1:]]
    assert len(celdas) == n
    rotulos = {i: int(texto.split(">")[-1]) for i, texto in enumerate(celdas) if texto.split(">")[-1]}
    assert all(numero == i + 1 for i, numero in rotulos.items())
    assert set(rotulos) == {0, elegido} | {i for i in range(n) if (i + 1) % CADA == 0}


def test_las_limpiezas_de_un_hijo_que_relee_son_marcas_de_su_carril_antes_de_compactar():
    """Con el hijo que relee (RELECTURA en curso/material/simulacro.py): cada paso «limpieza» de la
    base es una marca de su carril, contada con palabras, y la primera va antes de la primera
    compactación. La ejecución del incidente no limpia: esta es la que lo enseña."""
    with simulacro.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, _):
        base = simulacro.preparar_relectura(PUNTO, carpeta / "e")
        codigo, _, errores = simulacro.reanudar(PUNTO, base, url)
        assert codigo == 0, errores
        datos = L.leer(base)
        apuntadas = simulacro._consultar(base, "SELECT COUNT(*) FROM pasos WHERE clase='limpieza' AND agente='config'")
    marcas = L.carriles(datos)["config"]
    limpiezas = [m["i"] for m in marcas if m["clase"] == "limpieza"]
    compactaciones = [m["i"] for m in marcas if m["clase"] == "compactacion"]
    assert len(limpiezas) == apuntadas[0][0] > 0
    assert compactaciones and limpiezas[0] < compactaciones[0]
    assert etiquetas_a_la_vista(L.describir, datos["pasos"]) == []
    assert all("limpia resultados viejos" in L.describir(datos["pasos"][i]) for i in limpiezas)
