"""El explorador de carreras (curso.explorables.carreras) con el escenario de la lección 04."""
import math
from itertools import pairwise

import pytest

from curso.explorables.carreras import (Paso, carriles, dibujar_carriles, explorar, intercalados,
                            numero_de_intercalados)
from curso.explorables.carreras.escenarios.carreras_de_los_resumenes import ESCENARIO

UNO_POR_BASE = "de cada base se instala exactamente uno"
COBERTURA = "la cobertura nunca retrocede"


def multinomial(largos):
    """(n1 + n2 + ...)! / (n1! · n2! · ...), calculado aquí, no en el módulo que se prueba."""
    return math.factorial(sum(largos)) // math.prod(math.factorial(n) for n in largos)


def actores_de_juguete(largos):
    return {f"actor{i}": [Paso(f"actor{i}", f"paso {j}", lambda mundo: "") for j in range(n)]
            for i, n in enumerate(largos)}


@pytest.fixture(scope="module")
def exploraciones():
    """Cada variante del escenario, explorada una sola vez para todo el módulo."""
    return {nombre: explorar(ESCENARIO, nombre) for nombre in ESCENARIO.variantes}


def posiciones(registro):
    return {par: i for i, par in enumerate(registro.orden)}


def hubo_carrera(registro):
    """A y B leyeron la misma base: cada uno leyó antes de que el otro instalara."""
    p = posiciones(registro)
    return (p[("A", "lee la base")] < p[("B", "instala")]
            and p[("B", "lee la base")] < p[("A", "instala")])


@pytest.mark.parametrize("largos", [(3, 3, 1), (2, 2), (1, 1, 1), (4, 1), (2, 0, 3)])
def test_el_numero_de_intercalados_es_el_multinomial(largos):
    actores = actores_de_juguete(largos)
    assert len(list(intercalados(actores))) == multinomial(largos)
    assert numero_de_intercalados(actores) == multinomial(largos)


def test_el_escenario_estandar_tiene_el_numero_multinomial_de_intercalados(exploraciones):
    largos = [len(pasos) for pasos in ESCENARIO.actores.values()]
    assert exploraciones["correcta"].total == multinomial(largos)


def test_cada_intercalado_respeta_el_orden_de_cada_actor():
    todos = list(intercalados(ESCENARIO.actores))
    assert len(set(todos)) == len(todos)  # ninguno repetido
    for orden in todos:
        for actor, pasos in ESCENARIO.actores.items():
            assert [p for p in orden if p.actor == actor] == list(pasos)


def test_la_variante_correcta_cumple_cada_invariante_en_cada_intercalado(exploraciones):
    exploracion = exploraciones["correcta"]
    assert exploracion.correctos == exploracion.total
    assert all(cuantos == 0 for cuantos in exploracion.por_fallo().values())
    assert exploracion.resumen().splitlines()[1] == f"{exploracion.total} intercalados: {exploracion.total} correctos."


def test_en_la_carrera_gana_quien_instala_primero(exploraciones):
    carreras = [r for r in exploraciones["correcta"].registros if hubo_carrera(r)]
    assert carreras  # el escenario sí contiene carreras
    for registro in carreras:
        p = posiciones(registro)
        primero = "A" if p[("A", "instala")] < p[("B", "instala")] else "B"
        segundo = "B" if primero == "A" else "A"
        resultados = {(e.actor, e.paso): e.resultado for e in registro.eventos}
        assert resultados[(segundo, "instala")] == "rechazado: base obsoleta"
        assert registro.eventos[-1].observacion["activo"] == primero


def test_la_variante_ingenua_rompe_la_carrera_y_la_cobertura(exploraciones):
    exploracion = exploraciones["ingenua"]
    carreras = {r.numero for r in exploracion.registros if hubo_carrera(r)}
    retrocesos = {r.numero for r in exploracion.registros if hubo_carrera(r)
                  and posiciones(r)[("A", "instala")] < posiciones(r)[("B", "instala")]}
    # Falla exactamente donde hay carrera, y retrocede donde además A (hasta 4) instala antes.
    assert {r.numero for r in exploracion.que_rompen(UNO_POR_BASE)} == carreras
    assert {r.numero for r in exploracion.que_rompen(COBERTURA)} == retrocesos
    assert 0 < len(retrocesos) < len(carreras) < exploracion.total


def test_el_texto_de_la_exploracion_nombra_lo_que_falla(exploraciones):
    exploracion = exploraciones["ingenua"]
    texto = exploracion.resumen()
    fallos = dict(exploracion.invariantes)
    por_fallo = exploracion.por_fallo()
    assert f"{exploracion.total} intercalados: {exploracion.correctos} correctos" in texto
    for invariante in (UNO_POR_BASE, COBERTURA):
        assert f"{por_fallo[invariante]} {fallos[invariante]}" in texto
        primero = exploracion.que_rompen(invariante)[0]
        assert f"Rompen «{invariante}»: {por_fallo[invariante]}. El primero, n.º {primero.numero}" in texto


def test_cada_invariante_tiene_una_variante_ingenua_que_la_rompe(exploraciones):
    for invariante in ESCENARIO.invariantes:
        rompen = {nombre: e.por_fallo()[invariante.nombre] for nombre, e in exploraciones.items()}
        assert rompen["correcta"] == 0
        assert any(cuantos > 0 for cuantos in rompen.values()), invariante.nombre


def test_un_error_inesperado_se_anota_y_los_demas_siguen(exploraciones):
    exploracion = exploraciones["borra_lo_resumido"]
    con_error = [r for r in exploracion.registros if any(e.error for e in r.eventos)]
    assert con_error
    for registro in con_error:
        assert "ningún paso falla sin control" in registro.fallos
        assert len(registro.eventos) == len(registro.orden) == sum(map(len, ESCENARIO.actores.values()))


def test_la_exploracion_es_determinista(exploraciones):
    otra = explorar(ESCENARIO, "ingenua")
    assert otra.por_resultado() == exploraciones["ingenua"].por_resultado()
    assert otra.por_fallo() == exploraciones["ingenua"].por_fallo()
    assert otra.registros == exploraciones["ingenua"].registros
    assert otra.resumen() == exploraciones["ingenua"].resumen()


def test_carriles_da_una_fila_por_paso(exploraciones):
    registro = exploraciones["correcta"].registros[0]
    filas = carriles(registro)
    assert [(actor, paso) for actor, paso, _, _ in filas] == list(registro.orden)
    assert [posicion for _, _, posicion, _ in filas] == list(range(1, len(filas) + 1))


def celdas(linea, separador):
    """Corta una línea del dibujo por las columnas que marca la línea separadora («--+----+--»)."""
    cortes = [-2] + [i for i, c in enumerate(separador) if c == "+"] + [len(separador) + 1]
    return [linea[a + 2:b - 1].strip() for a, b in pairwise(cortes)]


def test_dibujar_carriles_pone_cada_actor_en_su_columna(exploraciones):
    registro = exploraciones["ingenua"].que_rompen(COBERTURA)[0]
    dibujo = dibujar_carriles(registro)
    lineas = dibujo.splitlines()
    separador = lineas[1]
    assert celdas(lineas[0], separador) == ["#"] + list(registro.actores)
    assert len(lineas) == 2 + len(registro.eventos)
    for linea, (actor, paso, posicion, resultado) in zip(lineas[2:], carriles(registro), strict=True):
        fila = celdas(linea, separador)
        columna = 1 + list(registro.actores).index(actor)
        assert fila[0] == str(posicion)
        assert fila[columna] == f"{paso} → {resultado}"
        assert all(c == "" for i, c in enumerate(fila[1:], 1) if i != columna)
    assert dibujar_carriles(registro) == dibujo


def test_explorar_rechaza_una_variante_desconocida():
    with pytest.raises(ValueError, match="no tiene la variante 'rapida'"):
        explorar(ESCENARIO, "rapida")


def test_al_avanzar_se_llama_tras_cada_intercalado_con_el_total():
    """El progreso de una celda que explora (issue 44, punto 4): `al_avanzar(hechos, total)` tras
    cada intercalado, de 1 al total, y el total es el de la exploración: una celda que escribe un
    punto cada tantos escribe siempre los mismos, en cualquier máquina."""
    avances = []
    exploracion = explorar(ESCENARIO, "correcta", al_avanzar=lambda hechos, total: avances.append((hechos, total)))
    total = multinomial([len(p) for p in ESCENARIO.actores.values()])
    assert exploracion.total == total and avances == [(n, total) for n in range(1, total + 1)]
