"""`python -m curso medir celdas` sin medir nada: sus cuentas del silencio más largo y del aviso."""
from curso.medir.celdas import avisa, silencio_mas_largo


def test_una_celda_que_escribe_solo_al_final_calla_todo_lo_que_tarda():
    """La 05 de antes: 23 s sin escribir nada y la tabla al final. Su silencio es lo que tardó."""
    assert silencio_mas_largo([23.7], 23.8) == 23.7


def test_una_celda_que_escribe_al_empezar_cada_parte_calla_lo_que_tarda_una_parte():
    assert silencio_mas_largo([0.1, 2.0, 4.5, 6.0], 6.5) == 2.5


def test_la_cola_tras_la_ultima_salida_cuenta():
    """La otra cara: una celda que escribe al principio y luego calla, calla desde ahí hasta el final."""
    assert silencio_mas_largo([0.1], 9.0) == 8.9


def test_avisa_el_texto_de_antes_o_lo_primero_que_escribe():
    assert avisa("La celda tarda unos segundos.", [])
    assert avisa("", ["Importo el SDK de Anthropic (lo más lento de la celda)…\n", "408 ..."])
    assert avisa("", ["Revisando tu máquina (arrancar un PostgreSQL lleva unos segundos)\n"])


def test_no_avisa_lo_que_no_lo_dice():
    """Ni una celda muda, ni una que escribe su resultado sin decir antes que tarda, ni un «…» que
    no es lo primero que escribe (el de un widget cortado, o el de una línea del resultado)."""
    assert not avisa("Las dos ejecuciones crecen igual.", [])
    assert not avisa("", ["correcta               140 intercalados: 140 correctos\n"])
    assert not avisa("", ["resultado\n", "después…\n"])
