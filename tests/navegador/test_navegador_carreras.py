"""El test del navegador del widget de las carreras (lecciones 04, 05 y 07), dibujado de verdad en JupyterLab.

Ejecuta un cuaderno con un `explorar_carreras(...)` (`curso/explorables/carreras/widget_de_las_carreras.py`) y comprueba lo que
se ve:

1. se abre donde lo deja el texto de encima: en la variante ingenua de la que habla, en su primer
   intercalado que falla (el que dice la comparación de los totales), con el paso que se aparta de la
   correcta elegido, en rojo;
2. nombra el motor en que corrió (SQLite o PostgreSQL);
3. los botones «anterior que falla» y «siguiente que falla» saltan al intercalado que falla anterior y
   al siguiente (no al de al lado), y se apagan cuando no queda ninguno;
4. para el paso elegido dice qué leyó y qué escribió cada transacción, y cambia al mover el
   deslizador del paso;
5. con la correcta, todos los intercalados salen bien y no hay a dónde saltar;
   (y la línea del orden del panel se lee sin repetir una palabra con su actor: «llegada llega»);
6. a 1400 px ningún texto se parte a mitad de palabra y ningún rótulo sale cortado.

`comprobar_widget_de_carreras(pagina, servidor, cuaderno, ...)` hace todo eso con cualquier cuaderno
que muestre UN widget de carreras. Las piezas (servidor, navegador, esperas) están en
`tests/navegador/navegador.py`; el servidor, el navegador y la pestaña de cada test, en las fixtures
de `tests/navegador/conftest.py`.
"""
import os
import re
import time
from itertools import pairwise

from navegador import (ESPERA_WIDGET, RAIZ, EsperaAgotada, abrir_y_ejecutar, captura, esperar_texto_distinto,
                       exigir_maquetacion, poner_deslizador, texto_de, unico)

CUADERNO_DE_PRUEBA = RAIZ / "tests" / "datos" / "cuaderno_de_prueba_carreras.ipynb"

# Las clases CSS del widget (curso/explorables/carreras/widget_de_las_carreras.py).
WIDGET = ".explorar-carreras"
VARIANTE = ".widget-toggle-buttons.carreras-variante"
DESLIZADOR = "carreras-intercalado"
DESLIZADOR_DE_PASO = "carreras-paso"
ANTERIOR = "button.carreras-anterior-que-falla"
SIGUIENTE = "button.carreras-siguiente-que-falla"
MOTOR = ".carreras-motor"
CARRILES = ".carreras-carriles"
PANEL = "pre.carreras-panel"
TOTALES = "pre.carreras-totales"
TRANSACCIONES = "pre.carreras-transacciones"
ROJO = f"{CARRILES} .carril-rompe"
FILA_ELEGIDA = f"{CARRILES} tr.carreras-elegido"

# La primera línea de los totales (curso.explorables.carreras.textos.totales) y lo que la comparación dice del
# primer intercalado que falla (curso.explorables.carreras.textos.comparacion).
LINEA_DE_TOTALES = re.compile(r"^(\d+) intercalados: (\d+) correctos(?:, (.+))?$")
PRIMERO_QUE_FALLA = re.compile(r"el primero que falla es el n\.º (\d+)\.")
# La primera línea de las transacciones (curso.explorables.carreras.textos.transacciones) y la de cada una.
PASO = re.compile(r"^Paso (\d+) de (\d+): (\S+) ")
TRANSACCION = re.compile(r"^(\S+), transacción (\d+) \((.*)\):$")
SENTENCIA = re.compile(r"^  paso +(\d+) · (\S+) +(.*)$")


# `servidor`, `navegador` (uno para toda la sesión) y `pagina` (una pestaña por test, con una
# captura si falla) son de tests/navegador/conftest.py.


# --- Leer lo que muestra ----------------------------------------------------------------------

def leer_totales(texto):
    """(total, correctos, fallos o None, la línea de la comparación) de lo que muestran los totales."""
    primera, _, comparacion = texto.partition("\n")
    encaje = LINEA_DE_TOTALES.match(primera.strip())
    assert encaje, f"Los totales no empiezan por «N intercalados: X correctos»:\n{texto}"
    total, correctos, fallos = encaje.groups()
    return int(total), int(correctos), fallos, comparacion.strip()


def leer_transacciones(texto):
    """(paso, {(actor, n): (estado, [(paso, clase, sentencia y resultado)])}) de lo que muestra el
    cuadro de las transacciones."""
    lineas = texto.strip().splitlines()
    encaje = PASO.match(lineas[0])
    assert encaje, f"Las transacciones no empiezan por «Paso N de M: …»:\n{texto}"
    transacciones, actual = {}, None
    for linea in lineas[1:]:
        if (t := TRANSACCION.match(linea)):
            actual = transacciones[t[1], int(t[2])] = (t[3], [])
        elif (s := SENTENCIA.match(linea)) and actual is not None:
            actual[1].append((int(s[1]), s[2], s[3]))
    return int(encaje[1]), transacciones


def _valor(pagina, clase_css):
    return int(texto_de(pagina, f".widget-slider.{clase_css} .widget-readout"))


def _apagado(pagina, selector, esperado=True, segundos=10):
    """Si el botón está apagado, tras esperar hasta `segundos` a que quede como `esperado`: el
    widget cambia sus botones en un mensaje distinto del de sus totales, que puede llegar después
    (visto en CI: los totales de «correcta» ya estaban y «siguiente» aún no se había apagado)."""
    boton = unico(pagina, selector)
    fin = time.monotonic() + segundos
    while boton.is_disabled() != esperado and time.monotonic() < fin:
        pagina.wait_for_timeout(50)
    return boton.is_disabled()


def _cabecera_del_panel(pagina, valor, total):
    """Espera a que el panel hable del intercalado `valor`."""
    cabecera = f"Intercalado {valor} de {total},"
    try:
        pagina.wait_for_function(
            """([selector, cabecera]) => {
                 const e = document.querySelectorAll(selector);
                 return e.length === 1 && e[0].innerText.startsWith(cabecera);
               }""", arg=[PANEL, cabecera], timeout=ESPERA_WIDGET * 1000)
    except EsperaAgotada as error:
        raise AssertionError(f"El panel no pasó a «{cabecera}…»; dice:\n{texto_de(pagina, PANEL)}") from error


def _mover(pagina, valor, total):
    """Mueve el deslizador del intercalado a `valor` y espera a que el panel hable de él."""
    if _valor(pagina, DESLIZADOR) == valor:
        return
    antes = texto_de(pagina, CARRILES)
    poner_deslizador(pagina, DESLIZADOR, valor)
    esperar_texto_distinto(pagina, CARRILES, antes)
    _cabecera_del_panel(pagina, valor, total)


def _pulsar(pagina, boton, total):
    """Pulsa `boton` y devuelve el intercalado al que ha saltado (esperando a que el panel lo diga)."""
    antes = texto_de(pagina, PANEL)
    unico(pagina, boton).click()
    esperar_texto_distinto(pagina, PANEL, antes)
    valor = _valor(pagina, DESLIZADOR)
    _cabecera_del_panel(pagina, valor, total)
    return valor


def _fila_elegida(pagina):
    """El número (la primera celda) de la fila resaltada de los carriles."""
    return int(unico(pagina, FILA_ELEGIDA).locator("td").first.inner_text().strip())


# --- La comprobación, para cualquier cuaderno con un widget de carreras --------------------------

def comprobar_widget_de_carreras(pagina, servidor, cuaderno, *, variante, motor, que_fallan=None,
                                 mirar_el_paso=None, comprobar_el_paso=None):
    """Ejecuta `cuaderno` en el JupyterLab de `servidor` y comprueba su widget de carreras.

    `variante` es la ingenua de la que habla el texto de encima del widget y `motor`, el motor en
    que corrió la exploración («SQLite» o «PostgreSQL»). `que_fallan`, si se sabe (calculado en el
    proceso del test), la lista de los intercalados en que esa variante falla: con ella se comprueba
    que los botones saltan de uno que falla al siguiente por encima de los que no. Devuelve lo que
    vio ({"primero", "total", "paso", "transacciones"}) por si el test de una lección quiere
    comprobar algo más.
    """
    abrir_y_ejecutar(pagina, servidor, cuaderno)
    botones = unico(pagina, VARIANTE).locator("button.widget-toggle-button")
    nombres = [nombre.strip() for nombre in botones.all_inner_texts()]
    assert nombres[0] == "correcta" and variante in nombres, f"El widget ofrece las variantes {nombres}."

    # 1. Se abre en la variante del texto, en su primer intercalado que falla, con el paso rojo elegido.
    activo = unico(pagina, f"{VARIANTE} button.mod-active").inner_text().strip()
    assert activo == variante, f"Al empezar está elegida «{activo}», no «{variante}», la del texto de encima."
    total, correctos, fallos, comparacion = leer_totales(texto_de(pagina, TOTALES))
    assert correctos < total and fallos, f"«{variante}» tendría que fallar en algún intercalado:\n{texto_de(pagina, TOTALES)}"
    assert f"«{variante}»" in comparacion, comparacion
    primero = int(PRIMERO_QUE_FALLA.search(comparacion).group(1))
    assert que_fallan is None or que_fallan[0] == primero, (que_fallan, comparacion)
    tirador = unico(pagina, f".widget-slider.{DESLIZADOR} .noUi-handle")
    assert (float(tirador.get_attribute("aria-valuemin")), float(tirador.get_attribute("aria-valuemax"))) == (1, total)
    assert _valor(pagina, DESLIZADOR) == primero, (
        f"Se abre en el intercalado {_valor(pagina, DESLIZADOR)}, no en el primero que falla, el n.º {primero}.")
    panel = texto_de(pagina, PANEL)
    assert panel.startswith(f"Intercalado {primero} de {total}, variante «{variante}»."), panel
    assert "✘" in panel, f"El intercalado n.º {primero} falla, pero el panel no marca ninguna invariante:\n{panel}"
    # La línea del orden se lee como frases: «actor verbo…», sin «llegada llega el mensaje 5».
    orden = next(linea for linea in panel.splitlines() if linea.startswith("Orden: "))
    palabras = re.findall(r"\w+", orden)
    repetidas = [f"{a} {b}" for a, b in pairwise(palabras) if len(a) >= 5 and a[:5].lower() == b[:5].lower()]
    assert not repetidas, f"El orden repite una palabra con su actor ({', '.join(repetidas)}):\n{orden}"
    assert pagina.locator(ROJO).count() == 1, f"Tendría que haber un paso en rojo y hay {pagina.locator(ROJO).count()}."
    rojo = int(pagina.locator(ROJO).locator("xpath=ancestor::tr/td[1]").inner_text().strip())
    assert _valor(pagina, DESLIZADOR_DE_PASO) == rojo == _fila_elegida(pagina), (
        f"El paso elegido ({_valor(pagina, DESLIZADOR_DE_PASO)}) tendría que ser el rojo ({rojo}), resaltado.")

    # 2. El motor, a la vista.
    assert texto_de(pagina, MOTOR) == motor, f"El widget dice que corrió en «{texto_de(pagina, MOTOR)}», no en {motor}."
    assert f"en {motor}" in texto_de(pagina, f"{WIDGET} .carreras-descripcion")

    # 4. Lo que leyó y escribió cada transacción en el paso rojo: el actor del paso, con lo que
    # escribió; y al mover el deslizador del paso, el cuadro y la fila resaltada lo siguen.
    paso, transacciones = leer_transacciones(texto_de(pagina, TRANSACCIONES))
    actor_del_paso = PASO.match(texto_de(pagina, TRANSACCIONES))[3]
    assert paso == rojo, texto_de(pagina, TRANSACCIONES)
    del_actor = [sentencias for (actor, _), (_, sentencias) in transacciones.items() if actor == actor_del_paso]
    assert any(clase == "escribe" for sentencias in del_actor for _, clase, _ in sentencias), (
        f"En el paso {rojo} {actor_del_paso} escribe en la base, y no se ve:\n{texto_de(pagina, TRANSACCIONES)}")
    otro_paso = mirar_el_paso(pagina) if mirar_el_paso else (1 if rojo != 1 else 2)
    antes = texto_de(pagina, TRANSACCIONES)
    poner_deslizador(pagina, DESLIZADOR_DE_PASO, otro_paso)
    texto = esperar_texto_distinto(pagina, TRANSACCIONES, antes)
    assert leer_transacciones(texto)[0] == otro_paso and _fila_elegida(pagina) == otro_paso
    if comprobar_el_paso:
        comprobar_el_paso(texto)

    # 6. La maquetación, a 1400 px, con todo a la vista.
    exigir_maquetacion(pagina, WIDGET)

    # 3. Los saltos, por encima de los intercalados buenos: desde el 1 al primero que falla (si el 1
    # no falla), y de ahí al siguiente y de vuelta; o, si el primero es el 1, por encima de un hueco
    # de la lista de los que fallan. Sin una de las dos cosas, el test no distinguiría «el siguiente
    # que falla» de «el de al lado».
    assert _apagado(pagina, ANTERIOR), f"Antes del n.º {primero}, el primero que falla, no hay ninguno."
    if primero > 1:
        _mover(pagina, 1, total)
        assert not _apagado(pagina, SIGUIENTE, esperado=False)
        assert _pulsar(pagina, SIGUIENTE, total) == primero
        siguiente = _pulsar(pagina, SIGUIENTE, total)
        assert siguiente > primero and "✘" in texto_de(pagina, PANEL), texto_de(pagina, PANEL)
        assert que_fallan is None or siguiente == que_fallan[1]
        assert _pulsar(pagina, ANTERIOR, total) == primero
    else:
        assert que_fallan is not None, "Si el primero que falla es el 1, hace falta la lista de los que fallan."
        hueco = next(a for a, b in pairwise(que_fallan) if b > a + 1)
        _mover(pagina, hueco, total)
        assert _pulsar(pagina, SIGUIENTE, total) == que_fallan[que_fallan.index(hueco) + 1]
        assert _pulsar(pagina, ANTERIOR, total) == hueco

    # 5. La correcta: todos bien, y nada a dónde saltar.
    antes = texto_de(pagina, TOTALES)
    botones.filter(has_text=re.compile(r"^\s*correcta\s*$")).click()
    total_correcta, correctos, fallos, _ = leer_totales(esperar_texto_distinto(pagina, TOTALES, antes))
    assert (total_correcta, correctos, fallos) == (total, total, None), texto_de(pagina, TOTALES)
    assert _apagado(pagina, ANTERIOR) and _apagado(pagina, SIGUIENTE)
    captura(pagina, f"carreras_{cuaderno.stem}", mostrar=TOTALES)


def que_fallan(escenario, variante):
    """Los intercalados en que falla `variante`, calculados aquí con el explorador (SQLite)."""
    from curso.explorables.carreras import explorar
    return [r.numero for r in explorar(escenario, variante).registros if r.fallos]


# --- Los cuadernos ------------------------------------------------------------------------------

def test_el_widget_de_las_carreras_en_postgresql_como_en_la_leccion_07(pagina, servidor):
    if not os.environ.get("CURSO_POSTGRES"):
        from curso.postgres.cluster import FaltaPostgres, carpeta_de_programas
        from curso.postgres.fixtures import sin_postgres
        try:
            carpeta_de_programas()
        except FaltaPostgres as error:
            sin_postgres(str(error))
    comprobar_widget_de_carreras(pagina, servidor, CUADERNO_DE_PRUEBA, variante="lee_y_escribe", motor="PostgreSQL",
                                 mirar_el_paso=paso_en_que_lee_el_segundo,
                                 comprobar_el_paso=el_segundo_lee_el_puntero_de_antes)


def paso_en_que_lee_el_segundo(pagina):
    """El paso (desde 1) del segundo «lee la base» de los carriles."""
    filas = pagina.locator(f"{CARRILES} tbody tr").all_inner_texts()
    return [i + 1 for i, fila in enumerate(filas) if re.search(r"\blee la base\b", fila)][1]


def el_segundo_lee_el_puntero_de_antes(texto):
    """En el paso en que el segundo resumidor lee la base, el primero tiene su transacción abierta:
    ya movió el puntero (sin confirmar), y el que lee, en READ COMMITTED, ve todavía el de antes."""
    paso, transacciones = leer_transacciones(texto)
    movido = [re.search(r"SET resumen_activo=(\d+)", sentencia)[1]
              for (estado, sentencias) in transacciones.values() if estado.startswith("sigue abierta")
              for _, clase, sentencia in sentencias if clase == "escribe" and "SET resumen_activo=" in sentencia]
    leido = [re.search(r"→ (?:\d+ filas: )?\((\d+),", sentencia)[1]
             for (_, sentencias) in transacciones.values()
             for en, clase, sentencia in sentencias if en == paso and clase == "lee" and "resumen_activo" in sentencia]
    assert len(movido) == 1 and len(leido) == 1, texto
    assert leido != movido, f"Se lee el puntero {leido[0]}, el que otra transacción movió sin confirmar:\n{texto}"


def test_el_widget_de_las_carreras_en_la_leccion_04(pagina, servidor):
    from curso.explorables.carreras.escenarios.carreras_de_los_resumenes import ESCENARIO
    comprobar_widget_de_carreras(pagina, servidor, RAIZ / "solutions" / "04_resumenes_en_sqlite.ipynb",
                                 variante="ingenua", motor="SQLite", que_fallan=que_fallan(ESCENARIO, "ingenua"))


def test_el_widget_de_las_carreras_en_la_leccion_05(pagina, servidor):
    from curso.explorables.carreras.escenarios.carreras_del_buzon import CAIDA
    comprobar_widget_de_carreras(pagina, servidor, RAIZ / "solutions" / "05_el_buzon.ipynb",
                                 variante="marca_primero", motor="SQLite", que_fallan=que_fallan(CAIDA, "marca_primero"))
