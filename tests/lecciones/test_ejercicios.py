"""Cada ejercicio se comprueba por las dos caras: falla con su esbozo y pasa con su solución.

Como hace rustlings con cada ejercicio: si una comprobación pasara también con el esbozo, no
comprobaría nada. La solución y el esbozo salen de la misma celda del cuaderno resuelto.

Por las dos caras, además, la comprobación deja la carpeta temporal como estaba. Y cuando los
casos de un ejercicio llegan al esbozo de otro, lo que se dice pendiente es ese otro.
"""
import shutil
import sys
import tempfile

import pytest

from curso import rutas
from curso.alumno import componer, cuaderno
from curso.autor import generar
from curso.comprobaciones import esbozos
from curso.comprobaciones import ejercicios
from curso.postgres.cluster import VARIABLE_DE_CONEXION

REGISTRO = ejercicios.cargar_registro()


@pytest.fixture
def servidor_de_la_leccion(request, monkeypatch):
    """Las comprobaciones de la lección 07 usan el PostgreSQL de la sesión por CURSO_POSTGRES, como
    en el cuaderno (sin él, cada caso arrancaría el suyo)."""
    if REGISTRO[request.node.callspec.params["id"]].leccion == 7:
        monkeypatch.setenv(VARIABLE_DE_CONEXION, request.getfixturevalue("postgres"))


@pytest.fixture
def temporal_vigilado(servidor_de_la_leccion, tmp_path, monkeypatch):
    """La carpeta temporal del sistema, para `tempfile`, es una nueva y vacía: al terminar, lo que
    haya dentro lo dejó la comprobación. (El servidor de la sesión se arranca antes, fuera de ella.)"""
    carpeta = tmp_path / "temporal"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    return carpeta


def fuente_de_la_celda(celda):
    """El texto de la celda sin la línea %%modulo."""
    lineas = celda.source.split("\n")
    return "\n".join(lineas[1:]) if lineas[0].startswith("%%modulo") else celda.source


def cambia(id):
    """¿La celda del ejercicio `id` es un %%modulo ... --cambia (solo las piezas nuevas)?"""
    primera = ejercicios.celda_resuelta(id).source.split("\n", 1)[0]
    return primera.startswith("%%modulo") and "--cambia" in primera.split()


def evaluar_con(id, fuente, tmp_path):
    """Escribe `fuente` donde toca (módulo del espacio o cuaderno) y evalúa el ejercicio. Si la
    celda es --cambia, compone sus piezas sobre el módulo del punto de control, como la magia."""
    e = REGISTRO[id]
    if e.modulo is None:
        espacio_de_nombres = {}
        exec(fuente, espacio_de_nombres)
        return ejercicios.evaluar(id, espacio_de_nombres[e.nombre])
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[e.leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    modulo = espacio / f"{e.modulo}.py"
    texto = cuaderno.sin_marcas(fuente)
    if cambia(id):
        texto = componer.componer(modulo.read_text(encoding="utf-8"), texto, e.modulo).texto
    modulo.write_text(texto.rstrip("\n") + "\n", encoding="utf-8")
    try:
        return ejercicios.evaluar(id, espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)


def esbozo_de(id):
    """El texto de la celda del ejercicio `id` con sus regiones de solución cambiadas por esbozos."""
    celda = ejercicios.celda_resuelta(id)
    return generar.esbozo(fuente_de_la_celda(celda), esbozos.ejercicio_de(celda))


@pytest.mark.parametrize("id", sorted(REGISTRO), ids=lambda i: f"ejercicio {i}")
def test_la_comprobacion_pasa_con_la_solucion(id, tmp_path, temporal_vigilado):
    celda = ejercicios.celda_resuelta(id)
    resultado = evaluar_con(id, fuente_de_la_celda(celda), tmp_path)
    assert resultado.aprobado, ejercicios.informe(resultado)
    assert list(temporal_vigilado.iterdir()) == [], "la comprobación dejó esto en la carpeta temporal"


@pytest.mark.parametrize("id", sorted(REGISTRO), ids=lambda i: f"ejercicio {i}")
def test_la_comprobacion_falla_con_el_esbozo(id, tmp_path, temporal_vigilado):
    resultado = evaluar_con(id, esbozo_de(id), tmp_path)
    assert not resultado.aprobado and resultado.pendiente, ejercicios.informe(resultado)
    # Un caso que llega a un esbozo es una línea pendiente, nunca un ✘ (aunque esperase otra
    # excepción y le llegara el NotImplementedError del esbozo).
    assert [l for l in resultado.lineas if l.estado != "pendiente"] == [], ejercicios.informe(resultado)
    assert "✘" not in ejercicios.informe(resultado)
    assert list(temporal_vigilado.iterdir()) == [], "la comprobación dejó esto en la carpeta temporal"


def test_un_ejercicio_que_no_existe_dice_cuales_hay():
    with pytest.raises(KeyError, match="Los que hay: 0.1"):
        ejercicios.buscar("9.99")


def test_un_error_del_alumno_es_una_linea_en_rojo_no_una_excepcion():
    def rota(salida):
        return salida.nope
    resultado = ejercicios.evaluar("0.1", rota)
    assert not resultado.aprobado
    assert "AttributeError" in ejercicios.informe(resultado)


def test_un_bucle_sin_fin_se_corta(monkeypatch):
    monkeypatch.setattr(ejercicios, "LIMITE_SEGUNDOS", 0.2)

    def sin_fin(salida):
        while True:
            pass
    resultado = ejercicios.evaluar("0.1", sin_fin)
    assert "TimeoutError" in ejercicios.informe(resultado)


# ---------------------------------------------------------------- lo pendiente, con su nombre


def test_siguen_pendientes_en_orden_y_en_castellano():
    assert ejercicios.siguen_pendientes(["3.2"]) == "El ejercicio 3.2 sigue pendiente"
    assert ejercicios.siguen_pendientes(["3.3", "3.2"]) == "Los ejercicios 3.2 y 3.3 siguen pendientes"
    assert ejercicios.siguen_pendientes(["3.3", "3.1", "3.2"]) == \
        "Los ejercicios 3.1, 3.2 y 3.3 siguen pendientes"
    assert ejercicios.enumerar(["1.10", "1.9"]) == "1.9 y 1.10"  # por número, no por texto


def espacio_con(tmp_path, leccion, esbozos):
    """Un espacio como el punto de control `leccion`, con los módulos de los ejercicios `esbozos`
    todavía en su esbozo (como los deja quien no los ha hecho)."""
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for id in esbozos:
        (espacio / f"{REGISTRO[id].modulo}.py").write_text(
            cuaderno.sin_marcas(esbozo_de(id)).rstrip("\n") + "\n", encoding="utf-8")
    return espacio


@pytest.fixture
def cuaderno_aislado(monkeypatch):
    """Lo que `comprobar` y `preparar` cambian en el proceso (el buscador de referencias, sys.path
    y los módulos importados), como estaba al terminar."""
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(cuaderno.REFERENCIAS, "rutas", {})
    antes = set(sys.modules)
    yield
    for nombre in set(sys.modules) - antes:
        del sys.modules[nombre]


def test_un_caso_que_llega_al_esbozo_de_otro_ejercicio_dice_cual(tmp_path):
    """El 1.3 bien hecho, con el 1.2 todavía en su esbozo: lo pendiente es el 1.2 (permisos.py)."""
    espacio = espacio_con(tmp_path, 1, ["1.2"])
    try:
        resultado = ejercicios.evaluar("1.3", espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)
    texto = ejercicios.informe(resultado)
    assert "Escribe tu código donde dice" not in texto  # eso sería culpar al 1.3, que está hecho
    assert "permitido() de permisos.py, que todavía es el esbozo del ejercicio 1.2" in texto
    assert "El ejercicio 1.2 sigue pendiente" in texto
    assert not resultado.aprobado and not resultado.pendiente_propio, texto
    assert resultado.esperando_a == ["1.2"], texto


def test_comprobar_sigue_con_la_referencia_del_otro_ejercicio_y_lo_dice(tmp_path, monkeypatch, capsys,
                                                                       cuaderno_aislado):
    espacio = espacio_con(tmp_path, 1, ["1.2"])
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    cuaderno.comprobar("1.3")
    salida = capsys.readouterr().out
    assert "El ejercicio 1.2 sigue pendiente y los casos del 1.3 llegan a su esbozo" in salida
    assert "versión de referencia de permisos.py (punto de control 01)" in salida
    assert salida.rstrip().endswith("✔ Hecho."), salida
    assert "permisos" in cuaderno.REFERENCIAS.rutas and "bucle" not in cuaderno.REFERENCIAS.rutas


@pytest.mark.parametrize("leccion", [4, 5])
def test_preparar_tras_la_leccion_03_no_da_por_pendiente_el_bucle(tmp_path, monkeypatch, capsys,
                                                                   cuaderno_aislado, leccion):
    """La lección 03 reescribe bucle.py entero. Si 1.1, 1.2, 3.2 y 3.3 siguen en su esbozo, los
    casos del 1.3 llegan al de llamadas_de (1.1): el bucle no está pendiente, y se sigue usando."""
    espacio = espacio_con(tmp_path, 3, ["0.1", "1.1", "1.2", "3.3"])  # 3.3 y 3.2: la misma celda
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    cuaderno.preparar(leccion)
    salida = capsys.readouterr().out
    # bucle.py sale solo como fichero puesto al día (el espacio se saltó la 03b, que lo cambia),
    # nunca como ejercicio pendiente.
    assert "1.3" not in salida, salida
    assert all(l.startswith("Puestos al día") for l in salida.splitlines() if "bucle.py" in l), salida
    assert "bucle" not in cuaderno.REFERENCIAS.rutas
    avisos = [l for l in salida.splitlines() if "pendiente" in l]
    assert [l.split(":")[0] for l in avisos] == [
        "El ejercicio 0.1 sigue pendiente", "El ejercicio 1.1 sigue pendiente",
        "El ejercicio 1.2 sigue pendiente", "Los ejercicios 3.2 y 3.3 siguen pendientes"], salida
    assert f"compactar.py del punto de control {rutas.anterior(leccion):02d}" in avisos[-1]


def test_el_esbozo_de_una_funcion_del_cuaderno_no_ensena_el_fichero_de_la_celda():
    """Jupyter compila cada celda en un fichero temporal con un número por nombre: no es un
    módulo del alumno, cambia de una vez a otra y no debe salir en el mensaje."""
    espacio_de_nombres = {}
    exec(compile(esbozo_de("2.1"), "/tmp/ipykernel_123/2718281828.py", "exec"), espacio_de_nombres)
    texto = ejercicios.informe(ejercicios.evaluar("2.1", espacio_de_nombres["tamano"]))
    assert "2718281828" not in texto
    assert "pendiente (tamano() todavía es el esbozo)" in texto


# --- Un número sin comillas, un corte equivocado, valores largos y la culpa de otro ejercicio -------

def test_un_numero_sin_comillas_vale_si_es_un_ejercicio_y_si_no_pide_comillas(capsys):
    """Antes, comprobar(3.1) decía «No hay ningún ejercicio «3.1». Los que hay: … 3.1 …»."""
    from curso.comprobaciones import variantes
    assert ejercicios.buscar(3.1) is ejercicios.buscar("3.1")
    with pytest.raises(KeyError, match=r"entre comillas.*comprobar\(\"3.1\"\)"):
        ejercicios.buscar(3)
    umbral = variantes.funcion(variantes.SEGUNDAS["3.1"], "umbral")
    cuaderno.comprobar(3.1, umbral)
    casos = len(ejercicios.buscar("3.1").casos)
    assert f"Ejercicio 3.1: {casos}/{casos} ✔ Hecho." in capsys.readouterr().out


def espacio_03_con(tmp_path, *cambios):
    """Un espacio con el punto de control 03 y las variantes `cambios` (de variantes.py) puestas."""
    from curso.comprobaciones import variantes
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[3], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    for v in cambios:
        fichero = espacio / f"{v.modulo}.py"
        fichero.write_text(variantes.aplicar(v, fichero.read_text(encoding="utf-8")), encoding="utf-8")
    return espacio


CORTES_EQUIVOCADOS = {
    "en unas observaciones": "len(M) - 2 * k",
    "fuera de M": "len(M)",
    "negativo": "-1",
    "que no es un número": "None",
}


@pytest.mark.parametrize("como", sorted(CORTES_EQUIVOCADOS))
def test_un_corte_equivocado_lo_cuenta_el_caso_sin_romperse(como, tmp_path):
    """Antes, un corte en unas observaciones daba «lanzó KeyError: 'id'», del código del caso."""
    from curso.comprobaciones import l03, variantes
    malo = variantes.Variante("3.2", como, "compactar",
                              f"def corte(M, k):\n    return {CORTES_EQUIVOCADOS[como]}\n")
    espacio = espacio_03_con(tmp_path, malo)
    try:
        resultado = ejercicios.evaluar("3.2", espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)
    informe = ejercicios.informe(resultado)
    assert not resultado.aprobado and {l.estado for l in resultado.lineas} == {"fallo"}, informe
    assert "lanzó" not in informe and "Error" not in informe, informe
    # La ingenua, (M[c][0], turno_de(M[c])): se rompe con el error del alumno, o con -1 (que
    # Python acepta) habla de la respuesta del turno 5 como si el corte fuera una posición buena.
    M = l03.con_turnos(5)
    c = eval(CORTES_EQUIVOCADOS[como], {"len": len, "M": M, "k": 2})
    try:
        ingenua = (M[c][0], l03.turno_de(M[c]))
    except (KeyError, IndexError, TypeError) as error:
        ingenua = error
    assert isinstance(ingenua, Exception) or (c == -1 and ingenua == ("asistente", 5)), ingenua
    assert l03.donde_cae(M, c) != ingenua


def test_dos_valores_largos_que_empiezan_igual_se_cortan_donde_difieren():
    esperado = [("usuario", "x" * 300), ("asistente", "a")]
    obtenido = [("usuario", "x" * 300), ("asistente", "b")]
    a, b = ejercicios.cortos(esperado, obtenido)
    assert a != b and "'a'" in a and "'b'" in b and a.startswith("…")
    assert len(a) <= 160 and len(b) <= 160
    assert ejercicios.corto(esperado) == ejercicios.corto(obtenido)  # la ingenua: parecen iguales
    assert ejercicios.cortos(1, 2) == ("1", "2")


def test_el_3_3_con_un_3_2_equivocado_dice_que_la_culpa_puede_ser_del_3_2(tmp_path):
    from curso.comprobaciones import variantes
    espacio = espacio_03_con(tmp_path, variantes.ERRORES["3.2"][0])
    try:
        resultado = ejercicios.evaluar("3.3", espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)
    informe = ejercicios.informe(resultado)
    assert not resultado.aprobado and resultado.culpables == ["3.2"], informe
    assert 'el ejercicio 3.2, que los casos del 3.3 usan, no pasa su comprobación (comprobar("3.2"))' in informe
    # Con el 3.2 bien y el 3.3 mal, la culpa es del 3.3 y no se nombra a nadie más.
    espacio_bien = espacio_03_con(tmp_path / "otro", variantes.ERRORES["3.3"][0])
    try:
        otro = ejercicios.evaluar("3.3", espacio=espacio_bien)
    finally:
        ejercicios.olvidar_modulos(espacio_bien)
    assert not otro.aprobado and otro.culpables == [] and "Ojo" not in ejercicios.informe(otro)
