"""Lo que encontraron los caminos (los al azar del issue 25 y los de quien recorrió el curso, issues 40 y 44), vuelto tests fijos en núcleos de verdad: para el tramo de los caminos de .ci/run, fuera de la orden de tests del README.

No se llama test_*.py a propósito: `probar` (la orden del README) corre cada tests/caminos/test_*.py
como un camino en su parte, y estos tardan un cuaderno entero cada uno. Se corren con
`python -m pytest -q tests/caminos/al_azar_fijos.py` (lo hace .ci/run, en el tramo de los caminos).

Cada test es un hallazgo, con su variante ingenua cuando se puede correr en el mismo núcleo.
"""
from curso import rutas
from curso.medir.caminos import otra_vez

from al_azar import CaminoAlAzar, Hallazgo
from alumno import Alumno, celdas

import pytest


def _salidas_limpias(salidas):
    """Ninguna traza por el código del curso; lo que lanza, con su frase."""
    malas = [s for s in salidas if s.traza_del_curso or not s.error_con_frase]
    assert not malas, "\n\n".join(f"{s.fuente[:80]!r}: {s.error}\n{s.traza or s.texto}"[-2000:] for s in malas)


def test_la_celda_de_reanudar_no_tapa_comprobar_ni_preparar(tmp_path):
    """Hallazgo 1: la celda %%modulo reanudar (y la de todo_junto) dejaban reanudar.comprobar y
    todo_junto.preparar encima de los del curso; comprobar("6.2") otra vez daba una traza."""
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "6")
    codigo = {c.id: c for c in celdas(6) if c.tipo == "code"}
    with alumno.abrir(6) as cuaderno:
        salidas = [cuaderno.ejecutar(codigo[id].resuelta) for id in ("t-preparar", "m-reanudar", "m-todo_junto")]
        assert cuaderno.ayudantes_del_curso() == []
        salidas += [cuaderno.ejecutar(codigo[id].alumno) for id in ("t-comprobar-62", "t-comprobar-63")]
        _salidas_limpias(salidas)
        texto = "".join(s.texto for s in salidas)
        assert "Ejercicio 6.2:" in texto and "reanudar.comprobar no se deja en el cuaderno" in texto, texto


def test_sin_la_celda_de_hijos_la_05_sigue_hasta_comprobar_5_4(tmp_path):
    """Hallazgo 7: sin ejecutar %%modulo hijos, comprobar("5.4") daba una traza por usar_referencia."""
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "4")
    codigo = [c for c in celdas(5) if c.tipo == "code"]
    hasta = next(i for i, c in enumerate(codigo) if c.id == "c18-comprobar")
    with alumno.abrir(5) as cuaderno:
        salidas = [cuaderno.ejecutar(c.resuelta) for c in codigo[:hasta + 1] if c.id != "c16-hijos"]
    _salidas_limpias(salidas)
    assert "hijos.py no está en tu espacio" in salidas[-1].texto, salidas[-1].texto


# La celda c21 de la lección 04 como estaba (hallazgo 5): su base en la carpeta de la celda de
# arriba, y la carpeta borrada al final; otra vez, «No se puede abrir ni crear '…/agente.db'».
def _c21_como_estaba():
    (c21,) = [c for c in celdas(4) if c.id == "c21"]
    texto = c21.resuelta
    nuevas = [linea for linea in texto.split("\n") if "tempfile.mkdtemp(dir=carpeta)" in linea
              or linea.startswith("carpeta.mkdir(")]
    assert len(nuevas) == 2, nuevas  # si cambia la celda, que cambie también esta variante
    texto = texto.replace(nuevas[0] + "\n", "").replace(nuevas[1], 'ruta = carpeta / "agente.db"')
    return texto


def test_cada_celda_de_la_04_se_puede_ejecutar_otra_vez():
    """Hallazgo 5: cada celda de la 04, dos veces seguidas, tras las de arriba una vez."""
    assert otra_vez(4) == []


def test_la_c21_de_antes_no_se_podia_ejecutar_otra_vez():
    """La variante ingenua: la c21 como estaba falla la segunda vez (y solo ella)."""
    malas = otra_vez(4, cambiadas={"c21": _c21_como_estaba()})
    assert [id for id, _ in malas] == ["c21"] and "No se puede abrir ni crear" in malas[0][1], malas


def test_el_camino_falla_si_un_modulo_tapa_comprobar(tmp_path, monkeypatch):
    """La máquina de los caminos pilla lo del hallazgo 1 (la variante ingenua, en el núcleo: una
    celda que pone otro `comprobar` en el cuaderno), y lo dice."""
    camino = CaminoAlAzar()
    try:
        camino.lecciones = (0,)
        camino.empezar(cual=0, hasta=0)
        camino.cuaderno.ejecutar("def comprobar(ruta):\n    return ruta\n")
        with pytest.raises(Hallazgo, match="comprobar ya no es el del curso"):
            camino.los_nombres_son_los_del_curso()
    finally:
        camino.teardown()


def test_sin_la_celda_de_encargos_la_c17_dice_que_celda_falta(tmp_path):
    """Lo que encontró el camino de la semilla 5 (lecciones 05 y 06, antes de los arreglos): sin
    ejecutar %%modulo encargos, la c17 daba una traza por curso/material/incidente.py; ahora, la
    frase que nombra la celda que falta."""
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "4")
    codigo = [c for c in celdas(5) if c.tipo == "code"]
    hasta = next(i for i, c in enumerate(codigo) if c.id == "c17")
    with alumno.abrir(5) as cuaderno:
        salidas = [cuaderno.ejecutar(c.resuelta) for c in codigo[:hasta + 1] if c.id != "c15-encargos"]
    _salidas_limpias(salidas)
    assert "«%%modulo encargos» de la lección 05" in salidas[-1].traza, salidas[-1].traza


def test_el_camino_de_la_semilla_1_salta_la_celda_de_url_y_oye_cual_es():
    """El camino de la semilla 1 (`medir caminos --semilla 1 --n 2 --pasos 10`), encogido por
    hypothesis, tal como lo imprimió: se salta la celda que define URL (dentro de un if), y c35b
    daba un NameError con su traza; ahora, la frase que dice qué celda la define."""
    state = CaminoAlAzar()
    try:
        state.empezar(cual=85, hasta=10)
        state.siguiente_tambien(cuantas=1, eleccion=8)
        state.siguiente_tambien(cuantas=1, eleccion=11)
        state.saltar()
        state.saltar()
        state.saltar()
        state.otra_vez()
        state.siguiente_tambien(cuantas=4, eleccion=3)
        state.siguiente_tambien(cuantas=3, eleccion=2)
        state.los_nombres_son_los_del_curso()
        assert any("«URL» no está definido" in s.traza for s in state.cuaderno.historia), "no pasó por la celda"
    finally:
        state.teardown()


@pytest.mark.parametrize("saltada, modulo, celda", [("c11", "bucle", "c16"), ("c13", "agente", "c17")])
def test_sin_la_celda_que_reescribe_un_modulo_la_03_dice_cual_es(tmp_path, saltada, modulo, celda):
    """Lo que encontró el camino de la semilla 2: en la lección 03, sin ejecutar «%%modulo bucle»,
    la c16 llamaba a bucle() como lo deja esa celda, con la versión de la 02 en el espacio, y daba
    un TypeError con su traza (y sin «%%modulo agente», la c17, con `agente(..., compactar=...)`);
    ahora, la frase que nombra la celda que lo reescribe."""
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "2")
    codigo = [c for c in celdas(3) if c.tipo == "code"]
    hasta = next(i for i, c in enumerate(codigo) if c.id == celda)
    with alumno.abrir(3) as cuaderno:
        salidas = [cuaderno.ejecutar(c.resuelta) for c in codigo[:hasta + 1] if c.id != saltada]
    _salidas_limpias(salidas)
    # bucle.py sigue como en el punto de control 02; agente.py no: la 03 tiene dos celdas
    # «%%modulo agente --cambia» (la del prompt también), y solo se saltó una.
    assert f"{modulo}.py de tu espacio" in salidas[-1].traza, salidas[-1].traza
    assert f"«%%modulo {modulo}»" in salidas[-1].traza, salidas[-1].traza


def test_la_01_con_el_servidor_parado_dice_la_celda_que_lo_arranca_y_esa_lo_arregla(tmp_path):
    """Issue 44, puntos 1 y 2, en la lección 01: tras la celda que para el servidor, la de `arregla`
    otra vez decía «Arranca el de ensayo con python -m curso servidor» (otro servidor, en el 8765,
    con URL en el puerto viejo); ahora dice también que lo arregla la celda «import os», y lo
    arregla. Y la celda que cuenta lo de `atasco`, sin `atasco`, nombraba «%%modulo bucle» (donde
    `M` es de dentro de una función); ahora, la celda de `atasco`."""
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "1")
    codigo = [c for c in celdas(1) if c.tipo == "code"]
    por_id = {c.id: c for c in codigo}
    with alumno.abrir(1) as cuaderno:
        for texto in (codigo[0].resuelta, por_id["c26"].resuelta, "servidor.parar()"):
            assert cuaderno.ejecutar(texto).limpia
        parada = cuaderno.ejecutar(por_id["c28"].resuelta)
        assert "ErrorDelModelo" in parada.error, parada.error
        assert "vuelve a ejecutar la celda que lo arranca, la que empieza «import os»" in parada.texto, parada.texto
        assert "ErrorDelModelo" in cuaderno.ejecutar(por_id["c32"].resuelta).error  # `M` no llega a existir
        cuenta = cuaderno.ejecutar(por_id["c34"].resuelta)
        assert "«M» no está definido" in cuenta.traza, cuenta.traza
        assert "copia_atascada" in cuenta.traza and "%%modulo" not in cuenta.traza, cuenta.traza
        # Lo que dice la frase, lo arregla: la celda que arranca el servidor, y otra vez la de `arregla`.
        assert cuaderno.ejecutar(por_id["c26"].resuelta).limpia
        otra_vez_arregla = cuaderno.ejecutar(por_id["c28"].resuelta)
        assert otra_vez_arregla.limpia and "fin · " in otra_vez_arregla.texto, otra_vez_arregla.texto
        assert cuaderno.ejecutar("servidor.parar()").limpia


def _con_tu_1_2(alumno):
    """El espacio de quien acabó la 07 con su propio `permitido` (la segunda solución del 1.2)."""
    from variantes import SEGUNDAS, aplicar
    alumno.orden("restaurar", "7")
    permisos = alumno.espacio / "permisos.py"
    permisos.write_text(aplicar(SEGUNDAS["1.2"], permisos.read_text(encoding="utf-8")), encoding="utf-8")


@pytest.mark.parametrize("leccion", [2, rutas.TRES_B, 4])
def test_quien_acabo_la_07_y_vuelve_no_ve_pendiente_lo_que_hizo(tmp_path, leccion):
    """Issue 40, hallazgo 3: con la 07 hecha, volver a la 02, la 03b o la 04 decía «El ejercicio 1.2
    sigue pendiente», y comprobar("1.2"), que permisos.py no se puede importar (importa CATALOGO de
    la 05 y el entorno.py servido era el de antes). Ahora, lo hecho no sale pendiente."""
    alumno = Alumno(tmp_path)
    _con_tu_1_2(alumno)
    primera = next(c for c in celdas(leccion) if c.tipo == "code")
    with alumno.abrir(leccion) as cuaderno:
        salidas = [cuaderno.ejecutar(primera.resuelta), cuaderno.ejecutar('comprobar("1.2")')]
    _salidas_limpias(salidas)
    assert "Tu espacio va por delante de esta lección" in salidas[0].texto, salidas[0].texto
    assert "pendiente" not in salidas[0].texto, salidas[0].texto
    assert "Ejercicio 1.2:" in salidas[1].texto and "✔ Hecho" in salidas[1].texto, salidas[1].texto


def test_quien_acabo_la_07_rehace_la_03_entera_sin_un_pendiente(tmp_path):
    """Issue 40, hallazgo 3, la lección entera: con la 07 hecha, la 03 de arriba abajo con sus
    soluciones; ninguna celda dice pendiente, cada comprobar dice ✔, y el espacio no cambia."""
    alumno = Alumno(tmp_path)
    _con_tu_1_2(alumno)
    antes = {p.name: p.read_bytes() for p in alumno.espacio.glob("*.py")}
    with alumno.abrir(3) as cuaderno:
        salidas = [cuaderno.ejecutar(c.resuelta) for c in celdas(3) if c.tipo == "code"]
    _salidas_limpias(salidas)
    texto = "".join(s.texto for s in salidas)
    assert "pendiente" not in texto, texto[-3000:]
    comprobaciones = [s for s in salidas if s.fuente.startswith("comprobar(")]
    assert comprobaciones and all("✔ Hecho" in s.texto for s in comprobaciones), texto[-3000:]
    assert {p.name: p.read_bytes() for p in alumno.espacio.glob("*.py")} == antes


def test_tu_bucle_del_1_3_sustituido_por_la_03_lo_dice_y_queda_en_copias(tmp_path):
    """Issue 40, hallazgo 8: con tu propio `bucle` del 1.3 (un `while turnos < tope`), la celda
    «%%modulo bucle --cambia» de la 03 lo sustituye por el de la lección; decía solo «tu versión
    anterior, con el cambio de esta celda». Ahora dice que lo sustituye y dónde queda tu fichero."""
    from variantes import SEGUNDAS, aplicar
    alumno = Alumno(tmp_path)
    alumno.orden("restaurar", "2")
    bucle = alumno.espacio / "bucle.py"
    bucle.write_text(aplicar(SEGUNDAS["1.3"], bucle.read_text(encoding="utf-8")), encoding="utf-8")
    codigo = [c for c in celdas(3) if c.tipo == "code"]
    hasta = next(i for i, c in enumerate(codigo) if c.modulo == "bucle")
    with alumno.abrir(3) as cuaderno:
        salidas = [cuaderno.ejecutar(c.resuelta) for c in codigo[:hasta + 1]]
    _salidas_limpias(salidas)
    (copia,) = (alumno.espacio / ".copias").glob("bucle.py.*")
    assert "sustituye entera tu bucle() (la de tu ejercicio 1.3)" in salidas[-1].texto, salidas[-1].texto
    assert f".copias/{copia.name}" in salidas[-1].texto and "while turnos < tope" in copia.read_text(encoding="utf-8")
