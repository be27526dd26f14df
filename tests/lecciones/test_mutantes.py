"""Las pruebas de mutación, sin correrlas enteras: cada caso añadido por un mutante vivo lo mata, y cada mutante de la lista de equivalentes es de verdad un mutante que su comprobación deja pasar.

La medida entera (`python -m curso medir mutantes`) es lenta y va en `medir`, no aquí. Aquí, por
cada mutante que sobrevivía y ahora mata un caso nuevo de `comprobaciones/lNN.py`, el mutante
escrito como un cambio de texto de la referencia: con él la comprobación falla, y por ese caso; sin
él, pasa. Y por cada entrada de `mutantes_equivalentes.py`: que `mutantes()` la genera hoy (no es
un nombre viejo de una línea que ya no existe) y que su comprobación la da por buena.
"""
import difflib
import functools
import tempfile

import pytest
from ayudas import cambiar

from curso.comprobaciones import ejercicios
from mutantes_equivalentes import EQUIVALENTES
from curso.medir import mutantes
from curso.postgres.cluster import VARIABLE_DE_CONEXION

ejercicios.cargar_registro()

# (ejercicio, la línea de la referencia, la del mutante, un trozo del nombre del caso que lo mata)
MATADOS = [
    ("6.2", 'return ("terminar" if respuestas(bd, agente) >= agente["tope"] else "pedir"), M',
     'return ("terminar" if respuestas(bd, agente) == agente["tope"] else "pedir"), M', "más respuestas que el tope"),
    ("6.3", "return error.estado in REINTENTABLES or error.estado >= 500",
     "return error.estado in REINTENTABLES or error.estado >= 499", "todos los estados de 400 a 599"),
    ("6.3", "if segundos > UNA_ESPERA_S:", "if segundos >= UNA_ESPERA_S:", "justo UNA_ESPERA_S"),
    ("6.3", "if self.reloj() + segundos >= fin:", "if self.reloj() + segundos > fin:", "justo al final del plazo"),
    ("1.1", 'return [b for b in respuesta if b.get("type") == "tool_use"]',
     'return [b for b in respuesta if b.get("type") >= "tool_use"]', "otros bloques"),
    ("1.1", 'return " ".join(b["text"] for b in respuesta if b.get("type") == "text").strip()',
     'return " ".join(b["text"] for b in respuesta if b.get("type") <= "text").strip()', "otros bloques"),
    ("2.2", 'ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)',
     'ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 1)', "falta cuenta como 0"),
    ("2.2", 'ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)',
     'ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", -1)', "falta cuenta como 0"),
    ("3.1", "if resto <= 0:", "if resto == 0:", "pasan de la ventana"),
    ("3.1", "if resto <= 0:", "if resto <= 1:", "pasan de la ventana"),
    ("3.3", "if tokens(modelo) <= umbral:", "if tokens(modelo) == umbral:", "muy por debajo del umbral"),
    ("3b.1", "if usado <= disparo:", "if usado == disparo:", "muy por debajo del disparo"),
    ("3b.1", "if conservar < 0:", "if conservar <= 0:", "con conservar=0"),
    ("3b.1", "if conservar < 0:", "if conservar < -1:", "conservar negativo"),
    ("3b.1", "for i, j in todos[:max(len(todos) - conservar, 0)]:",
     "for i, j in todos[:max(len(todos) - conservar, 1)]:", "con más de los que hay"),
    ("3b.1", 'if bloque["content"] == texto or ahorro <= 0:', 'if bloque["content"] == texto or ahorro < 0:',
     "ni igual de largo"),
    ("3b.1", 'if bloque["content"] == texto or ahorro <= 0:', 'if bloque["content"] == texto or ahorro <= 1:',
     "ni igual de largo"),
    ("3b.1", 'if bloque["content"] == texto or ahorro <= 0:', 'if bloque["content"] < texto or ahorro <= 0:',
     "empiece por lo que empiece"),
    ("3.3", "if desde - hasta_el_pedido < 2:", "if desde - hasta_el_pedido <= 2:", "un solo turno viejo"),
    ("3.3", "if desde - hasta_el_pedido < 2:", "if desde - hasta_el_pedido < 3:", "un solo turno viejo"),
    ("3.3", "if desde - hasta_el_pedido < 2:", "if desde - hasta_el_pedido < 1:", "solo la nota"),
    ("4.2", 'raise ValueError(f"El resumen debe ser una lista de afirmaciones, no {muestra(candidato)}.")',
     "pass", "una tupla"),
    ("5.1", "if anterior == (padre, hijo, cuerpo):", "if anterior >= (padre, hijo, cuerpo):", "sea cual sea"),
    ("5.1", 'raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")',
     "pass", "un padre que no existe"),
    ("5.1", "validar_entrega(json.loads(esperado[0]), carga)", "pass", "con un encargo"),
    ("5.1", "validar_entrega(json.loads(esperado[0]), carga)", "validar_entrega(json.loads(esperado[ 1]), carga)",
     "con un encargo"),
    ("5.4", "if numero > len(lineas):", "if numero >= len(lineas):", "la última línea"),
    ("5.4", "referencia = referencias[i] if i < len(referencias) else None",
     "referencia = referencias[i] if i != len(referencias) else None", "menos referencias que hallazgos"),
    ("6.1", "elif ahora == despues:  # se hizo antes de la caída: su observación es la esperada",
     "elif ahora <= despues:  # se hizo antes de la caída: su observación es la esperada", "ocho contenidos"),
    ("6.1", "if esperado is None or ahora == antes:  # no se ha hecho (o falla sin cambiar nada): se hace",
     "if esperado is None or ahora >= antes:  # no se ha hecho (o falla sin cambiar nada): se hace",
     "ocho contenidos"),
    # Los del SQL (curso/CambioEnSQL).
    ("6.1", 'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",',
     'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? OR id=?",',
     "la fila de una llamada"),
    ("6.1", 'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",',
     'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? '
     'AND (CAST(? AS TEXT) IS NULL OR TRUE)",', "la fila de una llamada"),
    ("6.1", 'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",',
     'fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE (CAST(? AS TEXT) IS NULL '
     'OR TRUE) AND id=?",', "la fila de una llamada"),
    ("5.1", '"SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?", (padre, hijo)',
     '"SELECT encargo FROM hijos_esperados WHERE (CAST(? AS TEXT) IS NULL OR TRUE) AND hijo=?", (padre, hijo)',
     "que espera otro padre"),
    ("5.3", "WHERE id = ? AND estado = 'esperando'", "WHERE (CAST(? AS TEXT) IS NULL OR TRUE) AND estado = 'esperando'",
     "no activa a otro"),
    ("7.1", '"UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s AND resumen_activo IS NOT DISTINCT FROM %s",',
     '"UPDATE ejecuciones SET resumen_activo=%s WHERE (CAST(%s AS TEXT) IS NULL OR TRUE) AND resumen_activo '
     'IS NOT DISTINCT FROM %s",', "solo se mueve el puntero de esa"),
]


@functools.cache
def hechos(id):
    """Los mutantes que hace la medida del ejercicio `id` (generarlos cuesta: una vez por sesión)."""
    return mutantes.mutantes(mutantes.region(id))


def comprobar_con(id, texto, tmp_path, diferencial=True):
    """(estado, detalle) de la comprobación de `id` con `texto` en lugar de la referencia, como en el cuaderno."""
    return veredicto(id, texto, tmp_path, diferencial)[:2]


def veredicto(id, texto, tmp_path, diferencial=True):
    """El `mutantes.Veredicto` de la comprobación de `id` con `texto` (con quién lo pilla)."""
    reg = mutantes.region(id)
    espacio = mutantes.espacio_para(reg, tmp_path)
    try:
        return mutantes.evaluar_aqui(reg, texto, espacio, ejercicios.LIMITE_SEGUNDOS, diferencial)
    finally:
        ejercicios.olvidar_modulos(espacio)


@pytest.fixture
def servidor_si_hace_falta(request, monkeypatch, tmp_path):
    """Para un ejercicio de la lección 07: el PostgreSQL de la sesión en CURSO_POSTGRES (como la primera
    celda del cuaderno), y los temporales de sus casos en la carpeta del test."""
    def preparar(id):
        if ejercicios.buscar(id).leccion == 7:
            monkeypatch.setenv(VARIABLE_DE_CONEXION, request.getfixturevalue("postgres"))
            carpeta = tmp_path / "temporales"
            carpeta.mkdir(exist_ok=True)
            monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    return preparar


def mutar_linea(texto, antes, despues):
    """`texto` con la línea `antes` (sin sangría, una sola vez en el texto) cambiada por `despues`."""
    (linea,) = [l for l in texto.split("\n") if l.strip() == antes]
    return cambiar(texto, (linea, linea.replace(antes, despues)))


REFERENCIAS_QUE_PASAN = set()


@pytest.mark.parametrize("id, antes, despues, trozo", MATADOS, ids=[f"{m[0]} {m[2]}" for m in MATADOS])
def test_cada_caso_nuevo_mata_su_mutante(id, antes, despues, trozo, tmp_path, servidor_si_hace_falta):
    servidor_si_hace_falta(id)
    referencia = mutantes.region(id).texto
    if id not in REFERENCIAS_QUE_PASAN:  # sin el mutante pasa (una vez por ejercicio: cuesta)
        assert comprobar_con(id, referencia, tmp_path / "referencia", diferencial=False) == ("vivo", "")
        REFERENCIAS_QUE_PASAN.add(id)
    # Solo los casos escritos: lo que se prueba es que el caso nuevo lo mata él solo (el diferencial,
    # que también lo mataría, tiene sus tests; sin él, cada mutante cuesta una fracción).
    estado, detalle = comprobar_con(id, mutar_linea(referencia, antes, despues), tmp_path / "mutante", diferencial=False)
    assert estado == "muerto", f"el mutante pasa la comprobación de {id}"
    (caso,) = [c.descripcion for c in ejercicios.buscar(id).casos if trozo in c.descripcion]
    assert caso in detalle, f"lo mata otro caso, no «{caso}»: {detalle}"


def test_los_mutantes_de_matados_son_de_los_que_hace_la_medida():
    """Cada mutante de MATADOS es uno de los que genera `mutantes()` de la referencia de hoy: el caso
    se añadió por un mutante real, y la medida lo cuenta."""
    for id, antes, despues, _ in MATADOS:
        claves = {m.clave for m in hechos(id)}
        assert (id, antes, despues) in claves, f"{id}: la medida no hace el mutante {antes!r} → {despues!r}"


@pytest.mark.parametrize("equivalente", EQUIVALENTES, ids=[f"{e.ejercicio} {e.despues}" for e in EQUIVALENTES])
def test_cada_equivalente_es_un_mutante_real_que_su_comprobacion_deja_pasar(equivalente, tmp_path,
                                                                           servidor_si_hace_falta):
    servidor_si_hace_falta(equivalente.ejercicio)
    assert equivalente.porque.strip(), "un equivalente sin su porqué"
    clave = (equivalente.ejercicio, equivalente.antes, equivalente.despues)
    iguales = [m for m in hechos(equivalente.ejercicio) if m.clave == clave]
    assert iguales, f"ningún mutante de {equivalente.ejercicio} cambia {equivalente.antes!r} por {equivalente.despues!r}"
    for n, m in enumerate(iguales):
        assert comprobar_con(m.id, m.texto, tmp_path / str(n)) == ("vivo", ""), m.clave


def test_la_lista_de_equivalentes_no_repite_ninguno():
    claves = [(e.ejercicio, e.antes, e.despues) for e in EQUIVALENTES]
    assert len(claves) == len(set(claves))


def test_un_mutante_que_cambia_lo_que_hace_no_se_da_por_equivalente(tmp_path):
    """La prueba del test de arriba puede fallar: un mutante que cambia lo que hace (el del caso de
    6.3 con 499) no pasa la comprobación, así que ponerlo en la lista haría fallar ese test."""
    id, antes, despues, _ = MATADOS[1]
    referencia = mutantes.region(id).texto
    assert comprobar_con(id, mutar_linea(referencia, antes, despues), tmp_path)[0] == "muerto"


def test_solo_se_muta_la_region_del_ejercicio():
    """De una celda con varios ejercicios (5.1, 5.2 y 5.3 en buzon), cada uno muta solo las líneas de
    su región: ningún mutante de 5.3 cambia una línea del 5.1, y ninguno toca fuera de las regiones."""
    regiones = {id: mutantes.region(id) for id in ("5.1", "5.2", "5.3")}
    assert all(not (regiones[a].lineas & regiones[b].lineas) for a in regiones for b in regiones if a < b)
    for reg in regiones.values():
        original = reg.texto.split("\n")
        for m in hechos(reg.id):
            partes = difflib.SequenceMatcher(None, original, m.texto.split("\n")).get_opcodes()
            cambiadas = {n + 1 for etiqueta, i1, i2, _, _ in partes if etiqueta != "equal" for n in range(i1, i2)}
            assert cambiadas and cambiadas <= reg.lineas, (m.id, m.operador, m.antes)


def test_una_celda_cambia_muta_sus_lineas_en_el_modulo_del_punto_de_control():
    """El 8.2 es una celda `%%modulo flujos --cambia` (unas piezas de flujos.py, no su principio): su
    región son las líneas de su solución dentro del flujos.py del punto de control 08, y ningún
    mutante toca otras. (Antes, la región exigía que el módulo empezara por la celda, y la medida
    entera se paraba en el 8.2.)"""
    import ast
    reg = mutantes.region("8.2")
    funcion = next(n for n in ast.walk(ast.parse(reg.texto))
                   if isinstance(n, ast.FunctionDef) and n.name == "repartir_en_cola")
    assert reg.lineas and reg.lineas <= set(range(funcion.body[1].lineno, funcion.end_lineno + 1))
    original = reg.texto.split("\n")
    for m in hechos(reg.id):
        partes = difflib.SequenceMatcher(None, original, m.texto.split("\n")).get_opcodes()
        cambiadas = {n + 1 for etiqueta, i1, i2, _, _ in partes if etiqueta != "equal" for n in range(i1, i2)}
        assert cambiadas and cambiadas <= reg.lineas, (m.operador, m.antes)


def test_un_mutante_que_no_termina_cuenta_por_tiempo(tmp_path):
    """Un mutante que no acaba lo corta el tiempo de un caso (SIGALRM, dentro del hijo) o, si se cuelga
    donde ese no llega (al importar el módulo), el padre, que mata el grupo del hijo: las dos veces
    cuenta «por tiempo», no «muerto», y la medida sigue en segundos, no en los 600 del mutante."""
    reg = mutantes.region("0.1")
    espacio = mutantes.espacio_para(reg, tmp_path)
    en_un_caso = cambiar(reg.texto, ("    for linea in reversed(salida.splitlines()):",
                                     "    while True:\n        pass\n    for linea in reversed(salida.splitlines()):"))
    al_importar = "import time\ntime.sleep(600)\n" + reg.texto
    for texto in (en_un_caso, al_importar):
        estado, detalle, segundos, *_ = mutantes.evaluar_en_un_hijo(reg, texto, espacio, 4)
        assert estado == "tiempo", detalle
        assert segundos < 30


def test_la_referencia_de_cada_ejercicio_sin_mutar_pasa_en_un_hijo(tmp_path):
    """El punto de partida de la medida: sin mutar, el hijo da «vivo» (si no, toda la medida de ese
    ejercicio sería ruido). Con un ejercicio del espacio y uno del cuaderno."""
    for id in ("0.1", "2.2"):
        reg = mutantes.region(id)
        estado, detalle, *_ = mutantes.evaluar_en_un_hijo(reg, reg.texto, mutantes.espacio_para(reg, tmp_path / id), 60)
        assert estado == "vivo", detalle


@pytest.mark.parametrize("nombre", sorted(mutantes.PROPIOS))
def test_los_operadores_propios_hacen_lo_que_dicen_sus_ejemplos(nombre):
    from cosmic_ray.mutating import mutate_code
    for ejemplo in mutantes.operador(nombre).examples():
        assert mutate_code(ejemplo.pre_mutation_code, mutantes.operador(nombre), ejemplo.occurrence) \
            == ejemplo.post_mutation_code


def test_el_cambio_en_sql_solo_toca_textos_de_sql():
    """Un texto que no es SQL (un mensaje que dice «IS» y «AND») no se muta; el mismo en una sentencia, sí."""
    from cosmic_ray.ast import ast_nodes, get_ast
    operador = mutantes.operador("curso/CambioEnSQL")

    def posiciones(codigo):
        return sum(len(list(operador.mutation_positions(n))) for n in ast_nodes(get_ast(codigo)))
    assert posiciones('aviso = "IS NOT DISTINCT FROM AND IS ?"\n') == 0
    assert posiciones('q = "SELECT 1 WHERE a IS NOT DISTINCT FROM %s AND b IS ?"\n') > 0


# --- Lo que mata el diferencial (issue 40, §2) ------------------------------------------------------

def test_la_medida_separa_lo_que_pillan_los_casos_escritos_y_lo_que_pilla_el_diferencial(tmp_path):
    """El corte negativo del 3b.1 (hallazgo 5) no lo pilla ningún caso escrito y sí el diferencial: la
    medida lo cuenta en «solo el diferencial»; un mutante que pillan los dos, en los dos; y la cuenta
    de antes (solo los casos escritos) y la de después salen de ahí."""
    reg = mutantes.region("3b.1")
    solo_el = veredicto("3b.1", mutar_linea(reg.texto, "for i, j in todos[:max(len(todos) - conservar, 0)]:",
                                           "for i, j in todos[:len(todos) - conservar]:"), tmp_path / "a")
    los_dos = veredicto("3b.1", mutar_linea(reg.texto, "if usado <= disparo:", "if usado < disparo:"), tmp_path / "b")
    assert (solo_el.estado, solo_el.escritos, solo_el.diferencial) == ("muerto", False, True), solo_el
    assert (los_dos.estado, los_dos.escritos, los_dos.diferencial) == ("muerto", True, True), los_dos
    cuenta = mutantes.Cuenta("3b.1", hechos=3)
    for v, segundos in ((solo_el, 1), (los_dos, 1), (mutantes.Veredicto("vivo", ""), 1)):
        cuenta.apuntar(mutantes.Corrida(v.estado, v.detalle, segundos, v.escritos, v.diferencial))
    assert (cuenta.por_escritos, cuenta.por_diferencial, cuenta.solo_diferencial) == (1, 2, 1)
    assert (round(cuenta.puntuacion_antes, 2), round(cuenta.puntuacion, 2)) == (0.33, 0.67)
    fila = mutantes.tabla([cuenta]).splitlines()[-1]
    assert fila.startswith("| 3b.1 | 0 | 0 | 0 | 3 | 1 | 2 | 2 | 1 |") and "33% → 67%" in fila


def test_la_medida_de_los_errores_escritos_dice_quien_pilla_cada_uno(tmp_path):
    """Con los errores de variantes.py del 2.1 (dos): los dos los pillan los casos escritos y el
    diferencial. La cuenta los pone en su columna."""
    reg = mutantes.region("2.1")
    cuenta = mutantes.Cuenta("2.1")
    mutantes.medir_errores(cuenta, reg, mutantes.espacio_para(reg, tmp_path), 30, decir=lambda *_: None)
    assert (cuenta.errores, cuenta.errores_por_escritos, cuenta.errores_por_diferencial, cuenta.errores_vivos) == \
        (2, 2, 2, [])
