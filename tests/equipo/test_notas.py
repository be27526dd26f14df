"""Tests de lo que escribe `calificar` (curso/clase/notas.py): el CSV, la página y las devoluciones, con
filas hechas a mano (sin correr ningún test), y la página de verdad en Chromium a 1400 píxeles."""
import csv
import io
from pathlib import Path

import pytest

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
    sync_playwright = _navegador()
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


# ---------------------------------------------------------------- lo que no se pudo mirar (issue 44·8)

LECCIONES_CON_02 = {**LECCIONES, 2: calificar.Leccion(2, "la_ventana", [], set(), ["2.1", "2.2"], del_cuaderno=True)}
SIN_CUADERNO_02 = calificar._celda_gris(2, calificar.SIN_CUADERNO.format(cuaderno="02_la_ventana.ipynb"), 0, 2)
ELENA = fila_de("elena", {0: BIEN_00, 2: SIN_CUADERNO_02,
                          3: celda(3, [Linea("compactar.py", veredicto.BIEN, "")], 33, 33,
                                   {"3.2": Resultado(aparte.PASA), "3.3": Resultado(aparte.PASA)})},
                celda(None, [Linea("compactar.py", veredicto.BIEN, "")], 36, 36))


def test_una_leccion_que_no_se_pudo_mirar_lleva_sus_cuentas_vacias_y_el_comentario_lo_dice():
    """Sin su cuaderno, la 02 no se pudo calificar: «0 de 2 ejercicios» diría que no hizo ninguno.
    Sus cuentas (y los totales que las suman) van vacías, y el comentario nombra el cuaderno que falta.
    La variante ingenua, la celda gris contada como «sin empezar», da 0 y calla."""
    elena = tabla(notas.cabecera_csv(LECCIONES_CON_02) + notas.fila_csv(ELENA, LECCIONES_CON_02))[0]
    assert [elena[c] for c in ("02 tests", "02 ejercicios", "ejercicio 2.1", "ejercicios", "tests")] == [""] * 5
    assert elena["ejercicios en total"] == str(1 + 2 + 2)
    assert elena["comentario"].startswith("Todo en verde hasta la lección 03")
    assert "02, no encuentro su cuaderno (02_la_ventana.ipynb" in elena["comentario"]
    ingenua = calificar.Celda(2, calificar.GRIS, SIN_CUADERNO_02.texto, None, 0, 2)  # contada=True
    elena_ingenua = fila_de("elena", {**ELENA.celdas, 2: ingenua}, ELENA.todo_junto)
    mal = tabla(notas.cabecera_csv(LECCIONES_CON_02) + notas.fila_csv(elena_ingenua, LECCIONES_CON_02))[0]
    assert mal["02 ejercicios"] == "0" and "cuaderno" not in mal["comentario"]


def test_sin_empezar_si_cuenta_cero_y_cada_ejercicio_tiene_su_columna():
    carla = tabla(notas.cabecera_csv(LECCIONES) + notas.fila_csv(CARLA, LECCIONES))[0]
    assert [carla[c] for c in ("03 ejercicios", "ejercicio 3.2", "ejercicio 3.3", "ejercicio 0.1")] == ["0", "0", "0", "1"]
    ana = tabla(notas.cabecera_csv(LECCIONES) + notas.fila_csv(ANA, LECCIONES))[0]
    assert [ana[f"ejercicio {id}"] for id in ("0.1", "3.2", "3.3")] == ["1", "0", "1"]


# ---------------------------------------------------------------- Moodle y Canvas (issue 44·9)
#
# Cada lector hace con el CSV lo que hace el importador de su LMS, según su código:
# Moodle, grade/import/csv/classes/load_data.php (y csv_import_reader, que quita el BOM);
# Canvas, app/models/gradebook_importer.rb. Un fichero que su importador rechazaría, lo rechazan.

class Rechazado(Exception):
    """Lo que el importador del LMS diría al rechazar el fichero."""


def leer_como_moodle(datos, columna_de_usuario, elementos, retro=None):
    """{usuario: {elemento: nota o None}, con la retroalimentación en "_retro"}: el instructor mapea
    `columna_de_usuario` a username y cada columna de `elementos` a un elemento de calificación."""
    texto = datos.decode("utf-8")
    texto = texto.removeprefix("\ufeff")  # core_text::trim_utf8_bom
    filas = list(csv.reader(io.StringIO(texto)))
    cabecera = [h.strip() for h in filas[0]]  # trim_headers
    leidos = {}
    for fila in filas[1:]:
        valores = dict(zip(cabecera, fila, strict=True))
        usuario = valores[columna_de_usuario]
        if not usuario:
            continue  # una fila sin usuario se salta
        notas_ = {}
        for elemento in elementos:
            valor = valores[elemento].strip()
            if valor in ("", "-"):
                notas_[elemento] = None  # sin nota
                continue
            try:  # unformat_float: acepta el punto decimal (y la coma de la configuración local)
                notas_[elemento] = float(valor.replace(",", "."))
            except ValueError:
                raise Rechazado(f"badgrade: «{valor}» en {elemento}") from None
        if retro:
            notas_["_retro"] = valores[retro]
        leidos[usuario] = notas_
    return leidos


def leer_como_canvas(datos):
    """{SIS Login ID: {tarea: nota o None}} y {tarea: puntos}, como GradebookImporter."""
    texto = datos.decode("utf-8")  # Ruby lee UTF-8; un BOM quedaría dentro de «Student», que lo incluye
    muestra = texto.splitlines()[:3]
    coma = sum(len(next(csv.reader([l]))) for l in muestra)
    punto_y_coma = sum(len(next(csv.reader([l], delimiter=";"))) for l in muestra)
    filas = list(csv.reader(io.StringIO(texto), delimiter=";" if punto_y_coma > coma else ","))
    cabecera = filas[0]
    if not (len(cabecera) > 3 and "Student" in cabecera[0] and "ID" in cabecera[1]):
        raise Rechazado("Invalid header row")
    columnas_del_alumno = 3
    login = None
    if "SIS Login ID" in cabecera[2]:
        login, columnas_del_alumno = 2, 4
    elif "SIS User ID" in cabecera[2] and "SIS Login ID" in cabecera[3]:
        login, columnas_del_alumno = 3, 5
    if "Section" not in cabecera[columnas_del_alumno - 1]:
        raise Rechazado("Invalid header row")
    tareas = cabecera[columnas_del_alumno:]
    puntos, leidos = {}, {}
    for fila in filas[1:]:
        if "Points Possible" in fila[0]:
            puntos = dict(zip(tareas, fila[columnas_del_alumno:], strict=True))
            continue
        clave = fila[login] if login is not None and fila[login] else fila[0]
        notas_ = {}
        for tarea, valor in zip(tareas, fila[columnas_del_alumno:], strict=True):
            valor = valor.strip()
            notas_[tarea] = None if valor in ("", "-") else float(valor.replace(",", "."))
        leidos[clave] = notas_
    return leidos, puntos


def con_02(fila, celda_02):
    return fila_de(fila.alumno.nombre, {**fila.celdas, 2: celda_02}, fila.todo_junto, fila.alumno.donde)


FILAS_LMS = [con_02(ANA, calificar._celda_gris(2, calificar.SIN_EMPEZAR, 0, 2)),
             con_02(CARLA, calificar._celda_gris(2, calificar.SIN_EMPEZAR, 0, 2)),
             con_02(DANI, calificar._celda_gris(2, calificar.SIN_ESPACIO, 0, 2)), ELENA]


def test_el_csv_de_moodle_se_importa_con_una_nota_por_leccion_y_por_ejercicio():
    from curso.clase import libros_de_notas
    datos = libros_de_notas.moodle(FILAS_LMS, LECCIONES_CON_02, {"ana": "ana.garcia"}).encode("utf-8-sig")
    elementos = [t for t, _ in libros_de_notas.columnas(LECCIONES_CON_02)]
    leidos = leer_como_moodle(datos, "usuario", elementos, retro="Comentario")
    assert set(leidos) == {"ana.garcia", "carla", "dani", "elena"}
    assert leidos["ana.garcia"]["Lección 03 compactar"] == 1  # 3.3 hecho, 3.2 pendiente
    assert (leidos["ana.garcia"]["Ejercicio 3.2"], leidos["ana.garcia"]["Ejercicio 3.3"]) == (0, 1)
    assert leidos["elena"]["Lección 02 la ventana"] is None  # sin su cuaderno: sin nota, no un 0
    assert leidos["carla"]["Lección 03 compactar"] == 0  # sin empezar: un 0 de verdad
    assert leidos["ana.garcia"]["_retro"] == notas.comentario(FILAS_LMS[0])
    assert all(nota is None for e, nota in leidos["dani"].items() if e != "_retro")  # no encuentro su espacio
    # La variante ingenua, el CSV propio del curso, no se importa: sus estados no son números.
    propio = (notas.cabecera_csv(LECCIONES_CON_02) + "".join(notas.fila_csv(f, LECCIONES_CON_02) for f in FILAS_LMS))
    with pytest.raises(Rechazado, match="badgrade"):
        leer_como_moodle(propio.encode("utf-8-sig"), "alumno", ["03 estado"])


def test_el_csv_de_canvas_se_importa_por_su_sis_login_id_con_sus_puntos():
    from curso.clase import libros_de_notas
    for bom in ("utf-8", "utf-8-sig"):
        datos = libros_de_notas.canvas(FILAS_LMS, LECCIONES_CON_02, {"ana": "ana.garcia"}).encode(bom)
        leidos, puntos = leer_como_canvas(datos)
        assert set(leidos) == {"ana.garcia", "carla", "dani", "elena"}
        assert puntos["Lección 03 compactar"] == "2" and puntos["Ejercicio 3.2"] == "1"
        assert leidos["ana.garcia"]["Lección 03 compactar"] == 1
        assert leidos["elena"]["Lección 02 la ventana"] is None and leidos["carla"]["Ejercicio 3.3"] == 0
    with pytest.raises(Rechazado, match="Invalid header row"):  # la variante ingenua: el CSV propio
        leer_como_canvas((notas.cabecera_csv(LECCIONES) + notas.fila_csv(ANA, LECCIONES)).encode())
    cabecera = libros_de_notas.COLUMNAS_DEL_ALUMNO_EN_CANVAS
    with pytest.raises(Rechazado):  # sin «Section» al final de las columnas del alumno, tampoco
        leer_como_canvas((",".join(cabecera[:-1]) + ",Lección 00\r\nana,,,ana,1\r\n").encode())


def test_calificar_escribe_el_formato_pedido_y_dice_quien_no_tiene_identificador(tmp_path, capsys):
    clase = tmp_path / "clase"
    for nombre in ("ana", "beto"):
        (clase / nombre / "mi_agente").mkdir(parents=True)
    ids = tmp_path / "ids.csv"
    ids.write_text("carpeta,identificador\nana,ana@uni.es\n", encoding="utf-8")
    salida = tmp_path / "notas"
    assert calificar.calificar(clase, salida=salida, lecciones=[0], formato="canvas", identificadores=ids) == 0
    leidos, _ = leer_como_canvas((salida / "calificaciones-canvas.csv").read_bytes())
    assert set(leidos) == {"ana@uni.es", "beto"}
    aviso = capsys.readouterr().err
    assert "1 alumnos sin fila en los identificadores" in aviso and "beto" in aviso
    ids.write_text("ana\n", encoding="utf-8")  # una fila sin identificador: error claro, nada escrito
    otra = tmp_path / "otra"
    assert calificar.calificar(clase, salida=otra, lecciones=[0], formato="moodle", identificadores=ids) == 2
    assert not otra.exists()


# ---------------------------------------------------------------- la página sin ratón (issue 44·10)

PALABRAS_PARTIDAS = """() => {
  // Las palabras de cada cabecera que el navegador ha partido en dos líneas: una palabra en un
  // solo renglón da un solo rectángulo.
  const partidas = [];
  for (const th of document.querySelectorAll("table.notas thead th")) {
    const texto = th.firstChild;
    if (!texto || texto.nodeType !== Node.TEXT_NODE) continue;
    const re = /\\S+/g;
    let m;
    while ((m = re.exec(texto.data)) !== null) {
      const r = document.createRange();
      r.setStart(texto, m.index);
      r.setEnd(texto, m.index + m[0].length);
      const filas = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (filas.size > 1) partidas.push(m[0]);
    }
  }
  return partidas;
}"""


def _navegador():
    from curso.postgres.fixtures import sin_postgres as sin_algo  # salta fuera de CI, falla en CI
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sin_algo("sin playwright no se puede dibujar la página")
    if not Path("/usr/bin/chromium").exists():
        sin_algo("sin /usr/bin/chromium (apt-get install chromium) no se puede dibujar la página")
    return sync_playwright


def test_las_cabeceras_no_parten_palabras_y_cada_celda_se_abre_con_el_teclado():
    """Con todas las lecciones del curso a 1400 píxeles, ninguna cabecera parte una palabra
    («antes_de_e|mpezar»); y una celda se alcanza con el tabulador y, con Intro, abre el detalle de
    su alumno en esa lección (sin ratón, que es lo que hace falta en una pantalla táctil o con
    teclado). La variante ingenua (la cabecera con «_» y `overflow-wrap: anywhere`, la celda con
    su detalle solo en `title`) parte palabras y no deja llegar al detalle."""
    sync_playwright = _navegador()
    lecciones = calificar.lecciones_que_se_califican()
    celdas = {n: calificar._celda_gris(n, calificar.SIN_EMPEZAR) for n in lecciones}
    celdas[3] = PENDIENTE_03
    filas = [fila_de(f"alumna_{i}", celdas, ANA.todo_junto) for i in range(3)]
    pagina = notas.pagina_html(filas, lecciones, 30)
    ingenua = pagina.replace("overflow-wrap: normal; word-break: normal;", "")
    for n, l in lecciones.items():
        ingenua = ingenua.replace(f"<th>{n:02d} {l.nombre.replace('_', ' ')}</th>", f"<th>{n:02d} {l.nombre}</th>")
    ingenua = ingenua.replace('<a href="#', '<span data-href="#').replace("</a>", "</span>")
    with sync_playwright() as p:
        navegador = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            hoja = navegador.new_page(viewport={"width": 1400, "height": 900})
            hoja.set_content(pagina)
            assert hoja.evaluate(PALABRAS_PARTIDAS) == []
            destino = notas.ancla(1, 3)  # la celda de la 03 de la segunda alumna
            for _ in range(200):
                hoja.keyboard.press("Tab")
                if hoja.evaluate("document.activeElement.getAttribute('href')") == f"#{destino}":
                    break
            else:
                raise AssertionError("el tabulador no llega a la celda")
            hoja.keyboard.press("Enter")
            hoja.wait_for_function("document.getElementById('a1').open")
            assert hoja.evaluate(f"""(() => {{ const r = document.getElementById('{destino}').getBoundingClientRect();
                                               return r.top >= 0 && r.bottom <= innerHeight; }})()""")
            assert not hoja.evaluate("document.getElementById('a0').open")  # las demás, plegadas
            hoja.set_content(ingenua)
            assert hoja.evaluate(PALABRAS_PARTIDAS) != []
            assert hoja.evaluate("document.querySelectorAll('table.notas td a').length") == 0
        finally:
            navegador.close()
