"""Tests de lo que escribe `calificar` (curso/clase/notas.py): el CSV, la página y las devoluciones, con
filas hechas a mano (sin correr ningún test), y la página de verdad en Chromium a 1400 píxeles."""
import csv
import io
from pathlib import Path

from curso.clase import calificar, notas
from curso.comprobaciones import aparte, veredicto
from curso.comprobaciones.aparte import Resultado
from curso.comprobaciones.veredicto import Comprobacion, Linea

LECCIONES = {0: calificar.Leccion(0, "antes_de_empezar", ["calentamiento"], {"calentamiento"}, ["0.1"]),
             3: calificar.Leccion(3, "compactar", ["compactar", "bucle"], {"compactar"}, ["3.2", "3.3"])}


def celda(n, lineas, pasan, total, ejercicios=None, sin=0):
    c = Comprobacion(n if n is not None else 3, "x", lineas, 30, pasan, total, ejercicios or {}, sin_comprobar=sin)
    return calificar.celda_de(n, c)


def fila_de(nombre, celdas, todo_junto, donde=None):
    return calificar.Fila(calificar.Alumno(nombre, Path("/x"), donde if donde is not None else f"{nombre}/mi_agente/"),
                          celdas, todo_junto)


BIEN_00 = celda(0, [Linea("calentamiento.py", veredicto.BIEN, "3 tests pasan")], 3, 3, {"0.1": Resultado(aparte.PASA)})
PENDIENTE_03 = celda(3, [Linea("compactar.py", veredicto.MAL, "ejercicio 3.2 pendiente (llegan a su esbozo 5 tests)",
                               "test_compactar.py::test_corte", "3.2"),
                         Linea("bucle.py", veredicto.BIEN, "6 tests pasan")], 28, 33,
                     {"3.2": Resultado(aparte.FALLA, "", "3.2"), "3.3": Resultado(aparte.PASA)})
COLGADO_03 = celda(3, [Linea("compactar.py", veredicto.COLGADO, "test_compactar.py::test_x colgado: no terminó en 30 s",
                             "test_compactar.py::test_x"),
                       Linea("bucle.py", veredicto.SIN_COMPROBAR, "4 sin comprobar")], 20, 33, sin=4)
ANA = fila_de("ana", {0: BIEN_00, 3: PENDIENTE_03}, celda(None, [Linea("compactar.py", veredicto.MAL, "…")], 31, 36))
BETO = fila_de("beto", {0: BIEN_00, 3: COLGADO_03}, celda(None, [Linea("compactar.py", veredicto.COLGADO, "…")], 23, 36))
CARLA = fila_de("carla", {0: BIEN_00, 3: calificar._celda_gris(3, calificar.SIN_EMPEZAR, 33, 2)},
                celda(None, [Linea("calentamiento.py", veredicto.BIEN, "")], 3, 3))
DANI = fila_de("dani", {n: calificar._celda_gris(n, calificar.SIN_ESPACIO, 3, 1) for n in LECCIONES},
               calificar._celda_gris(None, calificar.SIN_ESPACIO), donde="")
FILAS = [ANA, BETO, CARLA, DANI]


def tabla(texto):
    return list(csv.DictReader(io.StringIO(texto)))


def test_el_csv_lleva_numeros_que_un_libro_de_notas_suma_y_un_comentario():
    texto = notas.cabecera_csv(LECCIONES) + "".join(notas.fila_csv(f, LECCIONES) for f in FILAS)
    filas = {f["alumno"]: f for f in tabla(texto)}
    ana = filas["ana"]
    assert (ana["espacio"], ana["03 estado"]) == ("ana/mi_agente/", "✘ compactar.py (ejercicio 3.2 pendiente)")
    assert [ana[c] for c in ("03 tests", "03 tests en total", "03 ejercicios", "03 ejercicios en total")] == \
        ["28", "33", "1", "2"]
    assert [ana[c] for c in ("tests", "tests en total", "ejercicios", "ejercicios en total", "lecciones en verde")] == \
        [str(3 + 28), str(3 + 33), "2", "3", "1"]
    pista = calificar_pista("3.2")
    assert ana["comentario"] == ("Lección 03, compactar.py: ejercicio 3.2 pendiente (llegan a su esbozo 5 tests). "
                                 f"Pista (3.2): {pista}")
    assert filas["beto"]["03 estado"] == "⚠ compactar.py colgado · 4 sin comprobar"
    assert filas["carla"]["comentario"] == "Todo en verde hasta la lección 00."
    assert filas["dani"]["comentario"] == "No encuentro su espacio."


def calificar_pista(id):
    from curso.comprobaciones import ejercicios
    return ejercicios.buscar(id).pistas[0]


def test_el_csv_se_escribe_con_bom_para_excel_y_sin_el_si_se_pide(tmp_path):
    """Sin BOM, Excel lee el UTF-8 como Windows-1252 y enseña «âœ”» donde pone ✔."""
    clase = tmp_path / "clase"
    clase.mkdir()
    for con_bom, esperado in ((True, b"\xef\xbb\xbfalumno,"), (False, b"alumno,")):
        salida = tmp_path / f"notas_{con_bom}"
        assert calificar.calificar(clase, salida=salida, lecciones=[0], con_bom=con_bom) == 0
        contenido = (salida / "calificaciones.csv").read_bytes()
        assert contenido.startswith(esperado)
    assert "✔".encode("utf-8").decode("cp1252", errors="replace").startswith("â")  # lo que vería Excel


def test_la_pagina_tiene_leyenda_resumen_por_leccion_y_el_primer_fallo_con_su_pista():
    pagina = notas.pagina_html(FILAS, LECCIONES, 30)
    for estado, simbolo, texto in notas.LEYENDA:
        assert f'<span class="{estado}">{simbolo} {texto}' in pagina.replace("&#x27;", "'")
    # La fila de resumen: en la 03, ✘ ana, ⚠ beto, — carla y dani.
    assert "<td>✔ 0 · ⚠ 1 · — 2 · ✘ 1</td>" in pagina
    assert "<td>✔ 3 · ⚠ 0 · — 1 · ✘ 0</td>" in pagina
    detalle_de_ana = pagina[pagina.index("<strong>ana</strong>"):pagina.index("<strong>beto</strong>")]
    assert "lección 03: compactar.py: ejercicio 3.2 pendiente" in detalle_de_ana
    assert f"Pista del ejercicio 3.2:</strong> {notas.html.escape(calificar_pista('3.2'))}" in detalle_de_ana
    detalle_de_beto = pagina[pagina.index("<strong>beto</strong>"):pagina.index("<strong>carla</strong>")]
    assert "test_compactar.py::test_x colgado" in detalle_de_beto


def test_la_pagina_escapa_lo_que_viene_de_los_alumnos():
    mala = fila_de("<img src=x>", {0: celda(0, [Linea("<b>x.py</b>", veredicto.MAL, "falla <script>")], 0, 3),
                                   3: calificar._celda_gris(3, calificar.SIN_EMPEZAR)},
                   celda(None, [], 0, 0))
    pagina = notas.pagina_html([mala], LECCIONES, 5)
    assert "<img" not in pagina and "<script" not in pagina and "<b>x" not in pagina
    assert "&lt;img src=x&gt;" in pagina
    for de_fuera in ("http://", "https://", "<link", "src=\"", "url(", "@import"):
        assert de_fuera not in pagina  # una página sola, sin nada de fuera


def test_cada_alumno_tiene_su_devolucion_con_lo_primero_que_mirar():
    texto = notas.devolucion(ANA, LECCIONES)
    assert texto.startswith("Construye tu agente · lo que dicen los tests de tu espacio (ana)\nTu espacio: ana/mi_agente/")
    assert "Lo primero que mirar: lección 03, compactar.py: ejercicio 3.2 pendiente" in texto
    assert f"Pista del ejercicio 3.2: {calificar_pista('3.2')}" in texto
    assert "Lección 03 (compactar): ✘ compactar.py (ejercicio 3.2 pendiente) (28/33 tests, 1/2 ejercicios)" in texto
    assert "python -m curso comprobar 03" in texto


def test_la_pagina_cabe_en_1400_pixeles(tmp_path):
    """En Chromium de verdad, a 1400 píxeles, con 30 alumnos y celdas largas: nada se sale por la
    derecha. La variante ingenua (sin `table-layout: fixed` ni `overflow-wrap`, como la página de
    antes) se sale, y también se prueba."""
    from curso.postgres.fixtures import sin_postgres as sin_algo  # salta fuera de CI, falla en CI
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sin_algo("sin playwright no se puede dibujar la página")
    if not Path("/usr/bin/chromium").exists():
        sin_algo("sin /usr/bin/chromium (apt-get install chromium) no se puede dibujar la página")
    larga = celda(3, [Linea("un_modulo_con_un_nombre_larguisimo_de_verdad.py", veredicto.MAL, "x" * 400)], 0, 33)
    filas = [fila_de(f"alumna_con_nombre_largo_{i}", {0: BIEN_00, 3: larga if i % 2 else PENDIENTE_03},
                     larga, donde=f"alumna_{i}/construye-tu-agente-main/mi_agente/") for i in range(30)]
    pagina = notas.pagina_html(filas, LECCIONES, 30)
    ingenua = pagina.replace("table-layout: fixed;", "").replace("overflow-wrap: anywhere;", "")
    anchos = {}
    with sync_playwright() as p:
        navegador = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            hoja = navegador.new_page(viewport={"width": 1400, "height": 900})
            for nombre, html_ in (("curso", pagina), ("ingenua", ingenua)):
                hoja.set_content(html_)
                anchos[nombre] = hoja.evaluate("document.documentElement.scrollWidth")
        finally:
            navegador.close()
    assert anchos["curso"] <= 1400, anchos
    assert anchos["ingenua"] > 1400, anchos  # sin lo que la hace caber, no cabe: el test lo ve


def test_un_modulo_que_cuelga_los_tests_de_otros_se_nombra_una_vez_en_la_celda():
    """Los tests de agente.py y de compactar.py se cuelgan en el bucle del alumno: la celda dice
    dónde se colgaron, bucle.py, una vez (la pila dice dónde estaba; ver aparte.donde_estaba)."""
    lineas = [Linea(f"{m}.py", veredicto.COLGADO, "…", f"test_{m}.py::test_x", donde="bucle") for m in ("agente", "compactar")]
    assert celda(3, lineas, 10, 33).texto == "⚠ bucle.py colgado"
