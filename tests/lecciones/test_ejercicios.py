"""Cada ejercicio se comprueba por las dos caras: falla con su esbozo y pasa con su solución.

Como hace rustlings con cada ejercicio: si una comprobación pasara también con el esbozo, no
comprobaría nada. La solución y el esbozo salen de la misma celda del cuaderno resuelto.

Por las dos caras, además, la comprobación deja la carpeta temporal como estaba. Y cuando los
casos de un ejercicio llegan al esbozo de otro, lo que se dice pendiente es ese otro.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from curso import rutas
from curso.alumno import componer, cuaderno
from curso.autor import generar
from curso.comprobaciones import casos, esbozos
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
    import variantes
    assert ejercicios.buscar(3.1) is ejercicios.buscar("3.1")
    with pytest.raises(KeyError, match=r"entre comillas.*comprobar\(\"3.1\"\)"):
        ejercicios.buscar(3)
    umbral = variantes.funcion(variantes.SEGUNDAS["3.1"], "umbral")
    cuaderno.comprobar(3.1, umbral)
    casos = len(ejercicios.buscar("3.1").casos)
    assert f"Ejercicio 3.1: {casos}/{casos} ✔ Hecho." in capsys.readouterr().out


def espacio_03_con(tmp_path, *cambios):
    """Un espacio con el punto de control 03 y las variantes `cambios` (de variantes.py) puestas."""
    import variantes
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
    import variantes
    from curso.comprobaciones import l03
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
    import variantes
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


# --- El diferencial (issue 40, §2) ------------------------------------------------------------------
#
# Que pasa con la solución, queda pendiente con el esbozo y no deja nada en la carpeta temporal ya lo
# dicen los dos tests de arriba (el diferencial es el último caso de cada ejercicio). Que pilla cada
# error escrito, test_variantes.py. Aquí, lo demás.

def test_cada_ejercicio_acaba_con_un_diferencial_y_solo_uno():
    from curso.comprobaciones import diferencial
    for id, e in REGISTRO.items():
        suyos = [c for c in e.casos if c.diferencial is not None]
        assert len(suyos) == 1 and e.casos[-1] is suyos[0], f"{id}: el diferencial tiene que ser su último caso"
        assert diferencial.LO_MISMO in suyos[0].descripcion, id


def con_cambio(tmp_path, id, *cambios):
    """El Resultado de `id` con su referencia cambiada como dicen `cambios` (un error escrito a mano)."""
    from ayudas import cambiar
    celda = fuente_de_la_celda(ejercicios.celda_resuelta(id))
    return evaluar_con(id, cambiar(celda, *cambios), tmp_path)


CORTE_NEGATIVO = ("todos[:max(len(todos) - conservar, 0)]", "todos[:len(todos) - conservar]")


def test_el_corte_negativo_del_3b_1_lo_pilla_el_diferencial_y_ningun_caso_escrito(tmp_path, temporal):
    """El hallazgo 5: con `conservar` mayor que los resultados que hay, el corte se vuelve negativo y
    limpia lo que tenía que conservar. El cuaderno daba 16/16 ✔; el diferencial lo pilla siempre (es
    derandomizado) y dice la secuencia más corta: dos resultados y conservar=3."""
    resultado = con_cambio(tmp_path, "3b.1", CORTE_NEGATIVO)
    informe = ejercicios.informe(resultado)
    *escritos, dif = resultado.lineas
    assert all(l.estado == "ok" for l in escritos) and dif.estado == "fallo", informe
    assert "conservar=3" in dif.detalle and "con 2 resultados en M" in dif.detalle, informe
    assert (dif.esperado, dif.obtenido) == (["entero", "entero"], ["su marcador", "entero"]), informe


def test_el_test_del_punto_de_control_que_lo_pillaba_al_azar_ahora_lo_pilla_siempre(tmp_path):
    """test_las_cinco_promesas_con_m_al_azar (03b) lo pillaba 2 veces de cada 8: ahora es derandomizado
    y trae el borde de ejemplo. Dos corridas, dos fallos; y con la referencia, verde."""
    import subprocess
    copia = tmp_path / "punto"
    shutil.copytree(rutas.puntos_de_control()[rutas.TRES_B], copia, ignore=shutil.ignore_patterns("__pycache__"))

    def corre():
        orden = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(copia / "tests" / "test_limpiar.py"),
                 "-k", "cinco_promesas"]
        return subprocess.run(orden, cwd=copia, capture_output=True, text=True).returncode
    assert corre() == 0
    limpiar = copia / "limpiar.py"
    limpiar.write_text(limpiar.read_text(encoding="utf-8").replace(*CORTE_NEGATIVO), encoding="utf-8")
    assert [corre(), corre()] == [1, 1]


def test_el_mismo_codigo_da_el_mismo_informe_dos_veces_y_en_otro_proceso(tmp_path):
    """Derandomizado, sin base de datos de ejemplos y con un tope por cuenta para encoger: el mismo
    código, el mismo informe, aquí dos veces y en otro proceso con otra semilla de hash (el cuaderno,
    `comprobar N` y `calificar` son procesos distintos)."""
    import subprocess
    from ayudas import cambiar
    texto = cambiar(fuente_de_la_celda(ejercicios.celda_resuelta("3b.1")), CORTE_NEGATIVO)
    informes = [ejercicios.informe(evaluar_con("3b.1", texto, tmp_path / str(n))) for n in range(2)]
    programa = tmp_path / "otro.py"
    programa.write_text(
        "import shutil, sys\nfrom pathlib import Path\nsys.path.insert(0, sys.argv[1])\n"
        "import test_ejercicios as t\nfrom curso.comprobaciones import ejercicios\n"
        f"print(ejercicios.informe(t.evaluar_con('3b.1', {texto!r}, Path(sys.argv[2]))))\n", encoding="utf-8")
    otro = subprocess.run([sys.executable, str(programa), str(Path(__file__).parent), str(tmp_path / "otro")],
                          capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert informes[0] == informes[1] == otro.stdout.rstrip("\n"), otro.stderr


def test_un_desacuerdo_dice_la_entrada_lo_de_la_referencia_lo_tuyo_y_la_pista():
    """2.2 con < en vez de <=: la línea del diferencial da la entrada más pequeña (la suma justo igual
    a la ventana), lo que da la referencia (True), lo que da tu código (False) y la pista del hecho."""
    import variantes
    menor = next(v for v in variantes.ERRORES["2.2"] if v.nombre == "< en vez de <=")
    resultado = ejercicios.evaluar("2.2", variantes.funcion(menor, "cabe"))
    dif = resultado.lineas[-1]
    assert (dif.estado, dif.esperado, dif.obtenido) == ("fallo", True, False)
    assert "la entrada más pequeña en que no coinciden: cabe(" in dif.detalle
    assert "pista: " in dif.detalle and "<= ventana" in dif.detalle
    texto = ejercicios.informe(resultado)
    assert "      la entrada más pequeña" in texto and "      pista: " in texto  # debajo de su ✘, sangradas


def test_un_bucle_que_solo_cuelga_con_algunas_entradas_lo_corta_el_limite_en_el_diferencial(monkeypatch):
    """Un 0.1 que solo se cuelga si la salida tiene una «Z» (ningún caso escrito la tiene): el
    diferencial la genera, el corte por CPU lo para, y la línea dice TimeoutError, no un desacuerdo."""
    monkeypatch.setattr(ejercicios, "LIMITE_SEGUNDOS", 0.5)
    monkeypatch.setattr(casos, "VECES_EL_RELOJ", SIN_RELOJ)  # en una máquina cargada, el reloj llegaría antes

    def a_veces(salida):
        while "Z" in salida:
            pass
        lineas = [l.strip() for l in salida.splitlines() if l.strip()]
        return lineas[-1] if lineas else ""
    resultado = ejercicios.evaluar("0.1", a_veces)
    *escritos, dif = resultado.lineas
    assert all(l.estado == "ok" for l in escritos), ejercicios.informe(resultado)
    assert dif.estado == "error" and "TimeoutError" in dif.detalle and "CPU" in dif.detalle


# Para los tests del límite de CPU: un reloj tan holgado que ni una máquina muy cargada lo alcanza
# (con un hub a carga 9 en 2 núcleos, un bucle que quema 0,3 s de CPU tardaba más de 1,8 s de reloj).
SIN_RELOJ = 1000


def test_lo_que_espera_sin_gastar_cpu_lo_corta_el_reloj():
    """Un caso que espera algo que no llega (un cerrojo que nadie suelta) no quema CPU: lo corta el
    reloj, a VECES_EL_RELOJ veces el límite, y el mensaje dice que esperaba. La ingenua, solo el
    límite de CPU, lo dejaría esperando para siempre (aquí, los 5 s del sleep)."""
    import time
    inicio = time.monotonic()
    with pytest.raises(TimeoutError, match="esperando"), ejercicios.con_limite(0.05):
        time.sleep(5)
    assert time.monotonic() - inicio < 5


def test_el_limite_cuenta_la_cpu_no_el_reloj(monkeypatch):
    """Un caso que espera sin gastar CPU (una máquina cargada se ve así) no se corta por el límite de
    CPU; uno que la quema, sí. La ingenua, el reloj (ITIMER_REAL a LIMITE_SEGUNDOS), cortaría los dos."""
    import time
    monkeypatch.setattr(ejercicios, "LIMITE_SEGUNDOS", 0.3)
    monkeypatch.setattr(casos, "VECES_EL_RELOJ", SIN_RELOJ)

    def espera(salida):
        time.sleep(0.6)
        return ""
    with ejercicios.con_limite(0.3):
        espera("")  # no lanza: 0,6 s de reloj, casi nada de CPU
    with pytest.raises(TimeoutError, match="CPU"), ejercicios.con_limite(0.3):
        while True:
            pass


def test_el_diferencial_no_escribe_hypothesis_en_el_espacio_ni_en_la_carpeta_de_trabajo(tmp_path, monkeypatch, temporal):
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[0], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    monkeypatch.chdir(espacio)
    try:
        assert ejercicios.evaluar("0.1", espacio=espacio).aprobado
    finally:
        ejercicios.olvidar_modulos(espacio)
    assert not list(espacio.rglob(".hypothesis")) and not (tmp_path / ".hypothesis").exists()


# --- Los títulos que engañaban (issue 44, punto 3) ---------------------------------------------------

def test_el_2_2_con_menor_estricto_solo_falla_justo_en_el_limite_y_sin_dobles_parentesis():
    """Con < en vez de <=, el caso de la clave que falta (título: «la clave que falta cuenta como 0»)
    no falla: compara con el mismo usage con la clave a 0. Los mutantes .get(..., 1) y .get(..., -1)
    siguen cayendo en él (test_mutantes.py). Y ninguna línea sale con «((»."""
    import variantes
    menor = next(v for v in variantes.ERRORES["2.2"] if v.nombre == "< en vez de <=")
    resultado = ejercicios.evaluar("2.2", variantes.funcion(menor, "cabe"))
    rojos = [l.caso for l in resultado.lineas if l.estado != "ok"]
    assert [c for c in rojos if "falta cuenta como 0" in c] == [] and "justo en el límite, cabe" in rojos
    assert "((" not in ejercicios.informe(resultado)


def test_el_caso_del_3_3_que_prueba_justo_el_umbral_lo_dice_y_pilla_el_menor_estricto(tmp_path):
    """Antes se llamaba «por debajo del umbral» y probaba tokens = UMBRAL. Ahora dice «justo en el
    umbral», y compactar con < (compacta al llegar justo al umbral) cae en él."""
    from curso.comprobaciones import l03  # noqa: F401 - registra los casos
    titulos = [c.descripcion for c in REGISTRO["3.3"].casos]
    assert "por debajo del umbral, M vuelve tal cual y no se pide nada" not in titulos
    resultado = con_cambio(tmp_path, "3.3", ("    if tokens(modelo) <= umbral:", "    if tokens(modelo) < umbral:"))
    rojos = [l.caso for l in resultado.lineas if l.estado != "ok"]
    assert any(c.startswith("justo en el umbral") for c in rojos), ejercicios.informe(resultado)


def con_error_escrito(tmp_path, id, nombre):
    """El Resultado de `id` con su error escrito `nombre` (de variantes.py) puesto como lo pondría el alumno."""
    import variantes
    from test_variantes import evaluar as con_variante
    (variante,) = [v for v in variantes.ERRORES[id] if v.nombre == nombre]
    return con_variante(variante, tmp_path)


def test_las_lineas_del_4_2_dicen_que_candidato_se_probo(tmp_path):
    resultado = con_error_escrito(tmp_path, "4.2", "claves de más")
    (linea,) = [l for l in resultado.lineas if l.caso.startswith("la forma")]
    assert "validar_candidato(bd, 'e', 3, [{'texto': 'x', 'fuente': 1, 'nota': 2}])" in linea.detalle
    assert "con validar_candidato(bd, 'e', 3, [{'texto': 'x', 'fuente': 1, 'nota': 2}])" in ejercicios.informe(resultado)


def test_el_error_corriente_del_6_1_se_explica_una_vez(tmp_path):
    """Apuntar la intención sin mirar si ya estaba: siete líneas con «lanzó IntegrityError: UNIQUE
    constraint failed: llamadas.agente, llamadas.id». Ahora, tras la primera, una vez, qué quiere decir
    y qué cambiar. La ingenua (explicarlo en cada línea) repetiría la frase siete veces."""
    resultado = con_error_escrito(tmp_path, "6.1", "apuntar la intención otra vez al reanudar")
    texto = ejercicios.informe(resultado)
    assert texto.count("UNIQUE constraint failed") >= 6 and texto.count("Eso quiere decir:") == 1, texto
    primera = texto.index("UNIQUE constraint failed")
    assert primera < texto.index("Eso quiere decir:") < texto.index("UNIQUE constraint failed", primera + 1)
    assert "lee la fila" in texto


def _posteriores():
    """(ejercicio, punto de control posterior a su lección que tiene su módulo), de cada ejercicio de un módulo."""
    puntos = list(rutas.puntos_de_control().items())
    orden = [leccion for leccion, _ in puntos]
    return [(id, carpeta.name) for id in sorted(REGISTRO) if REGISTRO[id].modulo
            for leccion, carpeta in puntos[orden.index(REGISTRO[id].leccion) + 1:]
            if (carpeta / f"{REGISTRO[id].modulo}.py").exists()]


@pytest.mark.parametrize("ejercicio,punto", _posteriores(), ids=lambda x: str(x))
def test_el_modulo_de_un_punto_de_control_posterior_sigue_cumpliendo_el_ejercicio(ejercicio, punto, request,
                                                                                  monkeypatch):
    """Un alumno que vuelve a una lección con el espacio de una posterior (hallazgo 3 de la issue 40)
    se comprueba con sus módulos de ahora: lo que esos módulos ganaron después (buscar en la 05, otros
    mensajes de error de entorno.py...) no puede hacer que un ejercicio hecho salga pendiente. El
    diferencial del 1.3 comparaba el texto de los errores y la lista de herramientas, que escriben
    entorno.py y permisos.py: con el bucle.py de la 05 en adelante, el 1.3 salía 6/7."""
    if REGISTRO[ejercicio].leccion == 7:
        monkeypatch.setenv(VARIABLE_DE_CONEXION, request.getfixturevalue("postgres"))
    espacio = rutas.RAIZ / "checkpoints" / punto
    try:
        resultado = ejercicios.evaluar(ejercicio, espacio=espacio)
    finally:
        ejercicios.olvidar_modulos(espacio)
    assert resultado.aprobado, ejercicios.informe(resultado)
