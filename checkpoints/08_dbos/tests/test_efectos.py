"""Las llamadas con efectos (efectos.py): intención antes, resultado después, y nunca dos veces.

Las caídas se simulan en este proceso: una excepción en el punto exacto (tras el efecto, o antes
de él) y, después, la misma llamada otra vez, como la haría el proceso que reanuda.
"""
import hashlib
import json

import pytest

import efectos
import historial
import registro
from entorno import llamada
from permisos import atender as atender_sin_efectos

TEXTO = "uno\ndos\n"
EDITAR = llamada("t1", "editar", ruta="notas.txt", antiguo="uno\n", nuevo="uno\nuno y medio\n")


class Caida(Exception):
    """El proceso muere aquí."""


def puede_editar(nombre, entrada):
    return nombre == "editar"


@pytest.fixture
def mundo(tmp_path):
    """(bd, copia, borrador): un agente «a» que puede editar, y su copia con notas.txt."""
    bd = registro.abrir(tmp_path / "e.db")
    historial.crear_ejecucion(bd, "a")
    registro.crear_agente(bd, "a", "hijo", 1, "guion:eco", [("sistema", "s"), ("usuario", "u")],
                          ["leer", "editar", "ejecutar"], "copia", 1000, 5)
    copia = tmp_path / "copia"
    copia.mkdir()
    (copia / "notas.txt").write_text(TEXTO, encoding="utf-8")
    yield bd, copia, tmp_path / efectos.BORRADOR
    bd.close()


def fila(bd, id="t1"):
    return bd.execute("SELECT antes, despues, esperado, resultado FROM llamadas WHERE agente='a' AND id=?",
                      (id,)).fetchone()


def caer(bd, donde):
    """Hace que el proceso «muera» en `donde`: tras el efecto, o justo antes de hacerlo."""
    if donde == "tras_el_efecto":
        bd.efecto = lambda: (_ for _ in ()).throw(Caida())
    else:
        efectos.atender_sin_efectos = lambda *a: (_ for _ in ()).throw(Caida())


@pytest.fixture(autouse=True)
def restaurar():
    yield
    efectos.atender_sin_efectos = atender_sin_efectos


@pytest.mark.contrato("6.1")
def test_la_intencion_se_apunta_antes_de_editar_y_el_resultado_despues(mundo):
    bd, copia, borrador = mundo
    visto = {}
    bd.efecto = lambda: visto.update(fila=fila(bd), fichero=(copia / "notas.txt").read_text())
    observacion = efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador)
    antes, despues, esperado, resultado = visto["fila"]
    assert resultado is None and visto["fichero"] == "uno\nuno y medio\ndos\n"  # hecho, aún sin apuntar
    assert antes == hashlib.sha256(TEXTO.encode()).hexdigest()
    assert esperado == observacion["content"] and not observacion.get("is_error")
    assert json.loads(fila(bd)[3]) == observacion
    assert efectos.huella(copia / "notas.txt") == despues
    assert not borrador.exists(), "el borrador no se queda"


@pytest.mark.contrato("6.1")
@pytest.mark.parametrize("donde", ["tras_el_efecto", "antes_del_efecto"])
def test_tras_una_caida_la_edicion_queda_hecha_una_vez_con_la_misma_observacion(mundo, tmp_path, donde):
    bd, copia, borrador = mundo
    sin_caida = tmp_path / "sin_caida"
    sin_caida.mkdir()
    (sin_caida / "notas.txt").write_text(TEXTO, encoding="utf-8")
    esperada = atender_sin_efectos(EDITAR, sin_caida, puede_editar)
    caer(bd, donde)
    with pytest.raises(Caida):
        efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador)
    assert fila(bd)[3] is None  # la intención, sin resultado
    efectos.atender_sin_efectos = atender_sin_efectos
    bd.efecto = lambda: None
    assert efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador) == esperada  # al reanudar
    assert (copia / "notas.txt").read_bytes() == (sin_caida / "notas.txt").read_bytes()
    assert efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador) == esperada  # y otra vez
    assert (copia / "notas.txt").read_text().count("uno y medio") == 1


def test_la_variante_ingenua_que_repite_la_llamada_edita_dos_veces(mundo):
    bd, copia, borrador = mundo
    caer(bd, "tras_el_efecto")
    with pytest.raises(Caida):
        efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador)
    atender_sin_efectos(EDITAR, copia, puede_editar)  # la ingenua: otra vez, sin mirar la intención
    assert (copia / "notas.txt").read_text().count("uno y medio") == 2


@pytest.mark.contrato("6.1")
def test_si_otro_cambio_el_fichero_entre_la_caida_y_la_reanudacion_no_se_toca(mundo):
    bd, copia, borrador = mundo
    caer(bd, "antes_del_efecto")
    with pytest.raises(Caida):
        efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador)
    efectos.atender_sin_efectos = atender_sin_efectos
    (copia / "notas.txt").write_text("uno\ndos\ntres\n", encoding="utf-8")
    observacion = efectos.atender(bd, "a", EDITAR, copia, puede_editar, borrador)
    assert observacion["is_error"] and observacion["content"].strip()  # con qué palabras, es cosa del 6.1
    assert (copia / "notas.txt").read_text() == "uno\ndos\ntres\n"


@pytest.mark.contrato("6.1")
def test_una_edicion_que_falla_no_cambia_nada_y_se_apunta_como_error(mundo):
    bd, copia, borrador = mundo
    mala = llamada("t2", "editar", ruta="notas.txt", antiguo="tres\n", nuevo="cuatro\n")
    observacion = efectos.atender(bd, "a", mala, copia, puede_editar, borrador)
    assert observacion["is_error"] and (copia / "notas.txt").read_text() == TEXTO
    assert fila(bd, "t2")[2] is None and json.loads(fila(bd, "t2")[3]) == observacion


@pytest.mark.contrato("6.1")
def test_una_orden_se_ejecuta_como_mucho_una_vez(mundo):
    bd, copia, borrador = mundo
    orden = llamada("t3", "ejecutar", comando="echo hecho >> registro.txt")
    caer(bd, "tras_el_efecto")
    with pytest.raises(Caida):
        efectos.atender(bd, "a", orden, copia, lambda nombre, entrada: True, borrador)
    bd.efecto = lambda: None
    observacion = efectos.atender(bd, "a", orden, copia, lambda nombre, entrada: True, borrador)
    assert observacion["is_error"] and "no consta si llegó a ejecutarse" in observacion["content"]
    assert (copia / "registro.txt").read_text() == "hecho\n"


@pytest.mark.contrato("6.1")
def test_lo_que_solo_mira_o_no_tiene_permiso_no_se_apunta(mundo):
    bd, copia, borrador = mundo
    leida = efectos.atender(bd, "a", llamada("t4", "leer", ruta="notas.txt"), copia, puede_editar, borrador)
    negada = efectos.atender(bd, "a", llamada("t5", "ejecutar", comando="ls"), copia, puede_editar, borrador)
    assert leida["content"] == TEXTO and negada["is_error"]
    assert bd.execute("SELECT COUNT(*) FROM llamadas").fetchone() == (0,)
