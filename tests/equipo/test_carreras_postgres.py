"""El explorador de carreras con transacciones abiertas (curso.explorables.carreras.paralelo), lección 07.

Cada actor en su hilo y su conexión; los pasos que escriben se paran antes de su COMMIT. Lo mismo
en SQLite y en PostgreSQL: la correcta cumple en todos los intercalados de los dos, y la variante
`lee_y_escribe` (el código de SQLite llevado tal cual) es correcta en SQLite y falla en PostgreSQL.
Dónde falla se calcula aquí a partir del orden de los pasos, no se copia de lo que dice el
explorador.
"""
import pytest

from curso.explorables.carreras import (explorar_en_postgres, explorar_en_sqlite, intercalados, numero_de_intercalados,
                            totales, transacciones)
from curso.explorables.carreras.escenarios.carreras_en_postgres import ESCENARIOS, RESUMENES, TARDIAS
from test_vista_carreras import _bloques, cambios_sin_escritura  # lo que cuenta la bitácora, y cómo se lee

UNO_POR_BASE = "de cada base se instala exactamente uno"
TARDIO_APARTE = "lo tardío se guarda aparte"


@pytest.fixture(scope="module")
def en_postgres(postgres):
    """explorar_en_postgres(escenario, variante), una sola vez por pareja en este módulo."""
    hechas = {}

    def explorar(escenario, variante):
        if (escenario.nombre, variante) not in hechas:
            hechas[escenario.nombre, variante] = explorar_en_postgres(escenario, variante, conexion=postgres)
        return hechas[escenario.nombre, variante]
    return explorar


@pytest.fixture(scope="module")
def en_paralelo():
    """La carrera de los resúmenes con `lee_y_escribe`, en el explorador en paralelo sobre SQLite."""
    return explorar_en_sqlite(RESUMENES, "lee_y_escribe")


def _espera(registro, actor):
    """¿Tuvo `actor` que esperar a otra transacción en este intercalado?"""
    return any(e.actor == actor and e.resultado.startswith("espera a ") for e in registro.eventos)


@pytest.mark.parametrize("nombre", list(ESCENARIOS))
def test_la_correcta_cumple_en_cada_intercalado_en_postgres(en_postgres, nombre):
    escenario = ESCENARIOS[nombre]
    exploracion = en_postgres(escenario, "correcta")
    assert exploracion.total == numero_de_intercalados(escenario.actores)
    assert exploracion.correctos == exploracion.total, exploracion.resumen()


def _antes_de_confirmar_los_dos(orden):
    """¿Empiezan A y B a instalar antes de que ninguno de los dos confirme? (el orden planeado)"""
    posicion = {(paso.actor, paso.nombre): i for i, paso in enumerate(orden)}
    instalan = max(posicion["A", "instala"], posicion["B", "instala"])
    return instalan < min(posicion["A", "confirma"], posicion["B", "confirma"])


def test_en_postgres_el_cas_espera_y_rechaza_al_que_llega_tarde(en_postgres):
    """Con la correcta, cuando A y B instalan a la vez sobre la misma base, el segundo UPDATE espera
    el cerrojo de la fila del primero y, cuando este confirma, no toca nada: base obsoleta."""
    exploracion = en_postgres(RESUMENES, "correcta")
    for registro, orden in zip(exploracion.registros, intercalados(RESUMENES.actores), strict=True):
        a_la_vez = _antes_de_confirmar_los_dos(orden)
        segundo = "B" if [p.actor for p in orden if p.nombre == "instala"][0] == "A" else "A"
        assert _espera(registro, segundo) == a_la_vez, registro.numero
        if a_la_vez:
            tras = [e for e in registro.eventos if e.actor == segundo and e.paso == "instala (tras esperar)"]
            assert [e.resultado for e in tras] == ["rechazado: base obsoleta"], registro.numero


def test_lee_y_escribe_es_correcta_en_sqlite_porque_el_segundo_espera_al_empezar(en_paralelo):
    """En SQLite, BEGIN IMMEDIATE: el segundo que instala espera el turno de escritura antes de leer
    nada, en los mismos intercalados en que en PostgreSQL se cruzan (ver el test siguiente)."""
    exploracion = en_paralelo
    assert exploracion.correctos == exploracion.total == numero_de_intercalados(RESUMENES.actores)
    for registro, orden in zip(exploracion.registros, intercalados(RESUMENES.actores), strict=True):
        segundo = "B" if [p.actor for p in orden if p.nombre == "instala"][0] == "A" else "A"
        assert _espera(registro, segundo) == _antes_de_confirmar_los_dos(orden), registro.numero


def test_lee_y_escribe_instala_dos_sobre_la_misma_base_en_postgres(en_postgres):
    """En PostgreSQL (READ COMMITTED), la lectura del segundo no ve lo que el primero aún no ha
    confirmado: los dos ven el puntero en la base y los dos lo mueven. Exactamente cuando los dos
    empiezan a instalar antes de que ninguno confirme."""
    exploracion = en_postgres(RESUMENES, "lee_y_escribe")
    rotos = [UNO_POR_BASE in r.fallos for r in exploracion.registros]
    esperados = [_antes_de_confirmar_los_dos(orden) for orden in intercalados(RESUMENES.actores)]
    assert rotos == esperados
    assert any(esperados)


@pytest.mark.parametrize("nombre", ["dos_hijos", "caida", "tardias"])
def test_lee_y_escribe_del_buzon_es_correcta_en_sqlite(nombre):
    exploracion = explorar_en_sqlite(ESCENARIOS[nombre], "lee_y_escribe")
    assert exploracion.correctos == exploracion.total, exploracion.resumen()
    assert any(_espera(r, a) for r in exploracion.registros for a in r.actores)  # hubo a quien esperar


def _cancela_antes_de_que_el_hijo_lea(orden):
    """¿Empieza la cancelación (y se para antes de confirmar) antes de que el hijo admita, y el hijo
    admite antes de que la cancelación confirme?"""
    posicion = {(paso.actor, paso.nombre): i for i, paso in enumerate(orden)}
    return (posicion["cancelador", "cancela padre"] < posicion["hijo", "admite e-hijo"]
            < posicion["cancelador", "confirma"])


def test_lee_y_escribe_mete_una_entrega_en_un_padre_cancelado_en_postgres(en_postgres):
    """El hijo lee al padre 'esperando' (la cancelación aún no ha confirmado), la activación espera
    el cerrojo y luego no toca nada, pero el mensaje entra: en un padre ya cancelado."""
    exploracion = en_postgres(TARDIAS, "lee_y_escribe")
    rotos = [TARDIO_APARTE in r.fallos for r in exploracion.registros]
    assert rotos == [_cancela_antes_de_que_el_hijo_lea(orden) for orden in intercalados(TARDIAS.actores)]
    assert any(rotos)
    correcta = en_postgres(TARDIAS, "correcta")
    assert correcta.registros[rotos.index(True)].correcto


@pytest.mark.parametrize("nombre", ["dos_hijos", "caida"])
def test_lee_y_escribe_del_buzon_falla_en_postgres(postgres, nombre):
    exploracion = explorar_en_postgres(ESCENARIOS[nombre], "lee_y_escribe", conexion=postgres,
                                       hasta_el_primer_fallo=True)
    assert not exploracion.registros[-1].correcto


# Cada ingenua de las lecciones 04 y 05, con el escenario que la pilla y lo que rompe.
PILLADAS = [
    ("resumenes", "ingenua", UNO_POR_BASE),
    ("resumenes", "cobertura_al_instalar", "el mensaje 5 siempre está en la cola"),
    ("resumenes", "borra_lo_resumido", "el historial sigue entero"),
    ("caida", "marca_primero", "ninguna entrega se pierde"),
    ("dos_hijos", "cuenta_mensajes", "el padre se activa una vez, tras todos sus hijos"),
    ("caida", "dos_transacciones", "ninguna entrega se pierde"),
    ("tardias", "ignora_terminados", "un padre terminado sigue terminado"),
]


def test_cada_ingenua_tiene_su_escenario():
    ingenuas = {v for e in ESCENARIOS.values() for v in e.variantes} - {"correcta", "lee_y_escribe"}
    assert ingenuas == {variante for _, variante, _ in PILLADAS}


@pytest.mark.parametrize("nombre, variante, invariante", PILLADAS)
def test_cada_ingenua_la_pilla_su_escenario_en_postgres(postgres, nombre, variante, invariante):
    exploracion = explorar_en_postgres(ESCENARIOS[nombre], variante, conexion=postgres, hasta_el_primer_fallo=True)
    assert invariante in exploracion.registros[-1].fallos, exploracion.resumen()


def test_dos_veces_lo_mismo(postgres, en_postgres):
    """Nada lo decide un reloj: dos exploraciones dan los mismos eventos, fotos y resultados."""
    una = en_postgres(TARDIAS, "lee_y_escribe")
    otra = explorar_en_postgres(TARDIAS, "lee_y_escribe", conexion=postgres)
    assert una == otra


def test_sin_superusuario_vacia_y_prepara_cada_vez_con_el_mismo_resultado(postgres, en_postgres, monkeypatch):
    """Con un usuario sin privilegios (un servidor de CURSO_POSTGRES), cada intercalado empieza con
    TRUNCATE y `preparar` otra vez, no con la copia: lo que sale es lo mismo."""
    from curso.explorables.carreras import paralelo

    monkeypatch.setattr(paralelo.EnPostgres, "_superusuario", lambda self: False)
    hasta_que_falla = explorar_en_postgres(TARDIAS, "lee_y_escribe", conexion=postgres, hasta_el_primer_fallo=True)
    completa = en_postgres(TARDIAS, "lee_y_escribe")
    assert not hasta_que_falla.registros[-1].correcto
    assert hasta_que_falla.registros == completa.registros[:len(hasta_que_falla.registros)]


def test_sin_servidor_lo_dice_en_castellano(monkeypatch):
    monkeypatch.delenv("CURSO_POSTGRES", raising=False)
    with pytest.raises(ValueError, match="Falta el servidor"):
        explorar_en_postgres(TARDIAS, "correcta")


def test_el_widget_de_siempre_dibuja_una_exploracion_en_paralelo(en_postgres):
    from curso.explorables.carreras import explorar_carreras

    caja = explorar_carreras(TARDIAS, ["lee_y_escribe"], explorador=lambda e, v, m: en_postgres(e, v))
    textos = " ".join(getattr(hijo, "value", "") for hijo in caja.children if isinstance(getattr(hijo, "value", None), str))
    assert totales(en_postgres(TARDIAS, "correcta")) in textos
    assert '<b class="carreras-motor">PostgreSQL</b>' in textos  # el motor, el de la exploración


# --- Lo que leyó y escribió cada transacción, en PostgreSQL ----------------------------------

def test_cada_cambio_de_la_base_lo_explica_una_escritura_confirmada_en_postgres(en_postgres):
    for escenario in (RESUMENES, TARDIAS):
        for registro in en_postgres(escenario, "lee_y_escribe").registros:
            assert cambios_sin_escritura(registro) == [], (escenario.nombre, registro.numero)


def test_en_postgres_b_lee_el_puntero_de_antes_y_su_update_espera_a_a(en_postgres):
    """En el primer intercalado en que `lee_y_escribe` falla: cuando B lee, la transacción de A ya
    movió el puntero y no ha confirmado, y B lee el de antes (READ COMMITTED); el UPDATE de B queda
    anotado como espera en su paso «instala» y hecho, con su fila, en «instala (tras esperar)», no en
    el paso de A que lo desbloqueó."""
    import re

    from curso.explorables.carreras import bitacora

    exploracion = en_postgres(RESUMENES, "lee_y_escribe")
    registro = next(r for r in exploracion.registros if r.fallos)
    eventos = {(e.actor, e.paso): e for e in registro.eventos}
    lee = eventos["B", "lee la base y prepara hasta 3"]
    movido = [op for op in eventos["A", "instala"].operaciones if op.sentencia.startswith("UPDATE ejecuciones")]
    leido = [op for op in lee.operaciones if op.clase == bitacora.LEE]
    assert eventos["A", "instala"].posicion < lee.posicion < eventos["A", "confirma"].posicion
    assert re.search(r"resumen_activo=(\d+)", movido[0].sentencia)[1] != re.search(r"\((\d+),", leido[0].resultado)[1]
    assert "A, transacción" in transacciones(registro, lee.posicion)
    espera = [op.clase for op in eventos["B", "instala"].operaciones if op.sentencia.startswith("UPDATE ejecuciones")]
    hecho = [(op.clase, op.resultado) for op in eventos["B", "instala (tras esperar)"].operaciones
             if op.sentencia.startswith("UPDATE ejecuciones")]
    assert espera == [bitacora.ESPERA] and hecho == [(bitacora.ESCRIBE, "→ 1 fila")]
    assert not any(op.sentencia.startswith("UPDATE") for op in eventos["A", "confirma"].operaciones)


# --- Lo que leyó y escribió cada transacción, en SQLite con el explorador en paralelo ------------

def test_en_paralelo_cada_cambio_lo_explica_una_escritura_confirmada_en_su_paso(en_paralelo):
    for registro in en_paralelo.registros:
        assert cambios_sin_escritura(registro) == [], registro.numero


def test_en_un_paso_salen_sus_transacciones_y_las_que_siguen_abiertas(en_paralelo):
    """En el paso en que B lee la base mientras A tiene su instalación sin confirmar, salen las dos:
    la de B (lo que leyó) y la de A (abierta, con lo que ya escribió). La variante ingenua, solo lo
    de ese paso, se dejaría la de A."""
    registro = next(r for r in en_paralelo.registros
                    if r.orden.index(("A", "instala")) < r.orden.index(("B", "lee la base y prepara hasta 3"))
                    < r.orden.index(("A", "confirma")))
    lee = registro.orden.index(("B", "lee la base y prepara hasta 3")) + 1
    texto = transacciones(registro, lee)
    bloques = _bloques(texto)
    assert texto.startswith(f"Paso {lee} de {len(registro.eventos)}: B lee la base y prepara hasta 3 → ")
    abiertas = [clave for clave, estado in bloques.items() if estado.startswith("sigue abierta")]
    assert [actor for actor, _ in abiertas] == ["A"], texto
    assert any(actor == "B" for actor, _ in bloques), texto
    assert "UPDATE ejecuciones SET resumen_activo=" in texto and "→ 1 fila" in texto
    solo_del_paso = {(registro.eventos[lee - 1].actor, op.transaccion) for op in registro.eventos[lee - 1].operaciones}
    assert set(bloques) - solo_del_paso == set(abiertas)


def test_una_transaccion_que_se_confirma_en_otro_paso_dice_donde(en_paralelo):
    registro = next(r for r in en_paralelo.registros
                    if r.orden.index(("A", "instala")) < r.orden.index(("A", "confirma")) - 1)
    instala = registro.orden.index(("A", "instala")) + 1
    confirma = registro.orden.index(("A", "confirma")) + 1
    en_instala, en_confirma = _bloques(transacciones(registro, instala)), _bloques(transacciones(registro, confirma))
    (clave,) = [k for k in en_confirma if k[0] == "A"]
    assert en_instala[clave].startswith("sigue abierta") and en_confirma[clave] == f"confirmada en el paso {confirma}"
    assert [l for l in transacciones(registro, confirma).splitlines() if "· confirma" in l] == [
        f"  paso {confirma:>2} · confirma COMMIT"]
