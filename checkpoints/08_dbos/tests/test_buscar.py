"""Punto de control 05: `buscar`, la herramienta de solo lectura de los hijos.

Lo que un patrón o una ruta del modelo no pueden hacer: colgar al harness (un patrón que da
vueltas sin fin), tumbar a `atender` (un patrón que `re` no puede compilar, un bucle de enlaces)
ni enseñarle al modelo la ruta de la copia. Y las líneas se numeran como en un editor, sean cuales
sean sus saltos de línea.
"""
import signal
import time
from contextlib import contextmanager

import pytest

import herramientas
from entorno import llamada
from herramientas import ErrorDeHerramienta, buscar
from permisos import atender


@pytest.fixture
def copia(tmp_path):
    carpeta = tmp_path / "proyecto"
    (carpeta / "logs").mkdir(parents=True)
    (carpeta / "logs" / "api.log").write_text("inicio\nerror: puerto 5433\nfin\n", encoding="utf-8")
    (carpeta / "aes.txt").write_text("a" * 40 + "!\n", encoding="utf-8")
    return carpeta


class Colgado(Exception):
    """buscar no ha vuelto a tiempo."""


@contextmanager
def como_mucho(segundos):
    """Interrumpe lo que haya dentro si pasa de `segundos` (`re` atiende a las señales): sin esto,
    un buscar colgado colgaría también los tests."""
    def cortar(*_):
        raise Colgado(f"no ha vuelto en {segundos} s")
    anterior = signal.signal(signal.SIGALRM, cortar)
    signal.setitimer(signal.ITIMER_REAL, segundos)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)


def test_un_patron_que_no_acaba_se_corta_con_un_aviso(copia, monkeypatch):
    """`(a+)+$` sobre una línea de cuarenta «a» y un «!»: la vuelta atrás catastrófica."""
    monkeypatch.setattr(herramientas, "ESPERA_BUSQUEDA", 2, raising=False)
    antes = time.monotonic()
    with como_mucho(30), pytest.raises(ErrorDeHerramienta) as error:
        buscar(copia, "(a+)+$")
    assert time.monotonic() - antes < 20
    assert "no terminó en 2 s" in str(error.value) and "Simplifícalo" in str(error.value)


def test_atender_contesta_con_un_error_a_un_patron_que_no_acaba(copia, monkeypatch):
    monkeypatch.setattr(herramientas, "ESPERA_BUSQUEDA", 2, raising=False)
    with como_mucho(30):
        observacion = atender(llamada("b1", "buscar", patron="(a+)+$", ruta="aes.txt"), copia)
    assert observacion["is_error"] is True and "se ha cortado" in observacion["content"]


@pytest.mark.parametrize("patron", ["a{4294967296}", "x{100000000000000000000}", "(" * 3000 + ")" * 3000],
                         ids=["a_2_elevado_a_32_veces", "x_10_elevado_a_20_veces", "3000_grupos_anidados"])
def test_un_patron_demasiado_grande_para_re_da_error_en_castellano(copia, patron):
    observacion = atender(llamada("b1", "buscar", patron=patron), copia)
    assert observacion["is_error"] is True
    assert "demasiado grande" in observacion["content"]


def test_x_10_elevado_a_20_es_un_texto_tal_cual(copia):
    """`x{10^20}` no es una repetición (no es un número): `re` lo toma como texto, y no está."""
    assert buscar(copia, "x{10^20}") == "ninguna línea de . coincide con 'x{10^20}'"


def test_un_bucle_de_enlaces_da_error_sin_la_ruta_de_la_copia(copia):
    (copia / "bucle").symlink_to(copia / "bucle")
    observacion = atender(llamada("b1", "buscar", patron="x", ruta="bucle"), copia)
    # Python 3.11 y 3.12 ven el bucle al resolver la ruta; 3.13 la deja a medias, y no hay nada.
    assert observacion["is_error"] is True
    assert "bucle de enlaces" in observacion["content"] or "no existe bucle" in observacion["content"]
    assert str(copia.parent) not in observacion["content"]
    # En una carpeta, el bucle se salta: no es un fichero de texto.
    assert buscar(copia, "5433") == "logs/api.log:2: error: puerto 5433"


def test_lo_que_no_es_texto_y_los_enlaces_que_salen_de_la_copia_se_saltan(copia, tmp_path):
    """Un fichero binario y un enlace a un fichero de fuera, los dos con «5433»: buscar no los
    abre (leer tampoco lo haría), y sigue con los demás."""
    (copia / "datos.bin").write_bytes(b"\xff\xfe puerto 5433 \x00")
    fuera = tmp_path / "fuera.txt"
    fuera.write_text("puerto 5433, de fuera\n", encoding="utf-8")
    (copia / "enlace.txt").symlink_to(fuera)
    assert buscar(copia, "5433") == "logs/api.log:2: error: puerto 5433"


def test_una_linea_larga_sale_cortada(copia):
    (copia / "largo.log").write_text("x" * 300 + " puerto 5433\n", encoding="utf-8")
    assert buscar(copia, "5433", "largo.log") == f"largo.log:1: {'x' * herramientas.LARGO_DE_COINCIDENCIA} […]"


def test_pasadas_las_que_caben_un_aviso_dice_cuantas_faltan(copia):
    limite = herramientas.LIMITE_COINCIDENCIAS
    (copia / "muchas.log").write_text("".join(f"error {k}\n" for k in range(limite + 7)), encoding="utf-8")
    lineas = buscar(copia, "error", "muchas.log").splitlines()
    assert lineas[:-1] == [f"muchas.log:{k + 1}: error {k}" for k in range(limite)]
    assert "7 líneas más" in lineas[-1]


def test_si_el_proceso_que_busca_falla_atender_lo_devuelve_como_error(copia, monkeypatch):
    """El proceso aparte que busca muere (aquí, su código sale con 3): una observación de error
    que dice qué probar, no un bucle caído."""
    import procesos
    monkeypatch.setattr(procesos, "BUSCADOR", "raise SystemExit(3)")
    observacion = atender(llamada("b1", "buscar", patron="5433"), copia)
    assert observacion["is_error"] is True
    assert "la búsqueda ha fallado" in observacion["content"]


@pytest.mark.parametrize("datos", [b"uno\r\ndos\r\ntres\r\n", b"uno\rdos\rtres", b"uno\r\ndos\ntres\r"])
def test_las_lineas_se_numeran_como_en_un_editor_sean_cuales_sean_los_saltos(copia, datos):
    (copia / "f.txt").write_bytes(datos)
    assert buscar(copia, "dos|tres", "f.txt") == "f.txt:2: dos\nf.txt:3: tres"
