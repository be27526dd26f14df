"""Las comprobaciones de la lección 06, por las dos caras: la solución (el punto de control 06)
pasa, el esbozo queda pendiente, y cada error con nombre lo pilla el caso escrito para él.

El esbozo sale de la solución igual que en el cuaderno: el cuerpo de la función, tras su
docstring, entre las marcas de solución, y `generar`.
"""
import ast
import importlib
import shutil

import pytest

from ayudas import cambiar, casos_que_nombran
from curso import rutas
from curso.alumno import cuaderno
from curso.autor import generar
from curso.comprobaciones import esbozos
from curso.comprobaciones import ejercicios

MODULO = "curso.comprobaciones.l06"
FUNCIONES = {"6.1": ("efectos", ["atender"]), "6.2": ("agentes", ["donde_esta"]),
             "6.3": ("reintentos", ["se_reintenta", "espera", "__call__"])}


@pytest.fixture(scope="module", autouse=True)
def registrados():
    """Los ejercicios 6.x en el registro (como los carga `comprobar`)."""
    importlib.import_module(MODULO)


def fuente(modulo):
    return (rutas.PUNTOS / "06_todo_junto" / f"{modulo}.py").read_text(encoding="utf-8")


def marcar(texto, funciones):
    """`texto` con el cuerpo de cada función de `funciones` (tras su docstring) entre las marcas."""
    lineas = texto.split("\n")
    regiones = []
    for nodo in ast.walk(ast.parse(texto)):
        if isinstance(nodo, ast.FunctionDef) and nodo.name in funciones:
            cuerpo = nodo.body[1:] if isinstance(nodo.body[0], ast.Expr) else nodo.body
            regiones.append((cuerpo[0].lineno - 1, nodo.end_lineno, " " * cuerpo[0].col_offset))
    for inicio, fin, sangria in sorted(regiones, reverse=True):
        lineas[fin:fin] = [sangria + esbozos.FIN]
        lineas[inicio:inicio] = [sangria + esbozos.INICIO]
    return "\n".join(lineas)


def evaluar(id, texto, tmp_path, diferencial=True):
    """La comprobación de `id` con `texto` como su módulo (con diferencial=False, solo sus casos escritos:
    los tests de qué caso pilla cada error; que el diferencial también, lo mira test_variantes.py)."""
    modulo, _ = FUNCIONES[id]
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.PUNTOS / "06_todo_junto", espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (espacio / f"{modulo}.py").write_text(texto, encoding="utf-8")
    try:
        return ejercicios.evaluar(id, espacio=espacio, diferencial=diferencial)
    finally:
        ejercicios.olvidar_modulos(espacio)


@pytest.mark.parametrize("id", sorted(FUNCIONES))
def test_la_solucion_pasa(id, tmp_path):
    resultado = evaluar(id, fuente(FUNCIONES[id][0]), tmp_path)
    assert resultado.aprobado, ejercicios.informe(resultado)


@pytest.mark.parametrize("id", sorted(FUNCIONES))
def test_el_esbozo_queda_pendiente(id, tmp_path):
    modulo, funciones = FUNCIONES[id]
    esbozo = cuaderno.sin_marcas(generar.esbozo(marcar(fuente(modulo), funciones), dict.fromkeys(funciones, id)))
    resultado = evaluar(id, esbozo, tmp_path)
    assert resultado.pendiente_propio and all(l.estado == "pendiente" for l in resultado.lineas), \
        ejercicios.informe(resultado)


INTENCION_DESPUES = '''
    fila = None
    if not se_ejecutaria(llamada, usuario):
        return atender_sin_efectos(llamada, entorno, usuario)
    observacion = atender_sin_efectos(llamada, entorno, usuario)
    bd.efecto()
    intencion_de_editar(bd, agente, llamada, entorno, borrador)
    apuntar_resultado(bd, agente, llamada, observacion)
    return observacion


def intencion_de_editar('''

APUNTA_Y_DEVUELVE = ("    apuntar_resultado(bd, agente, llamada, observacion)\n    return observacion\n\n\n"
                     "def intencion_de_editar(")
SIN_APUNTAR = "    return observacion\n\n\ndef intencion_de_editar("
ORDEN_APARTE = ('    if llamada["name"] == "ejecutar":\n        return ejecutar_como_mucho_una_vez(bd, agente, llamada, '
                'entorno, usuario, ya_intentada=fila is not None)')

# Lo que tiene que decir el caso que pilla algunos errores. Sin apuntar_resultado también falla
# «con el resultado ya apuntado...», pero por el fichero que se toca: el alumno no sabría que lo
# que falta es apuntar. Y una orden tratada como una edición lanza KeyError('ruta'): el caso la
# cuenta como un error, con lo que lanzó, en vez de tumbar la comprobación.
DICE = {"sin apuntar el resultado": "resultado apuntado", "ejecutar como una edición": "'ruta'"}

# (ejercicio, error, [(lo que se cambia, por qué)], el caso que lo tiene que pillar)
ERRORES = [
    ("6.2", "M del historial entero", [("    M = M_de(bd, agente)\n    if M[-1][0]",
                                         "    M = agente['inicio'] + historial_crudo(bd, agente['id'])\n    if M[-1][0]")],
     "con un resumen activo, M es el inicio, la nota y la cola, no el historial entero"),
    ("6.2", "vuelve a pedir con llamadas pendientes", [('    if M[-1][0] == "asistente":\n        return ("atender"',
                                                        '    if False:\n        return ("atender"')],
     "tras una respuesta con llamadas sin observar: toca atenderlas, no volver a pedir"),
    ("6.2", "sin tope", [('return ("terminar" if respuestas(bd, agente) >= agente["tope"] else "pedir"), M',
                          'return "pedir", M')],
     "con el tope agotado y sin respuesta final: toca terminar, no pedir más"),
    ("6.2", "tope contado en M", [('return ("terminar" if respuestas(bd, agente) >= agente["tope"] else "pedir"), M',
                                   'return ("terminar" if sum(r == "asistente" for r, _ in M) >= agente["tope"] '
                                   'else "pedir"), M')],
     "con un resumen activo, el tope cuenta las respuestas de todo el historial, no solo las de M"),
    ("6.1", "sin intención", [("    if not se_ejecutaria(llamada, usuario):\n        return atender_sin_efectos",
                               "    if True:\n        return atender_sin_efectos")],
     "caída tras editar y antes de apuntar el resultado: al reanudar no edita otra vez"),
    ("6.1", "intención después de editar", [(None, INTENCION_DESPUES)],
     "la intención está en la base antes de que se llame a bd.efecto() (justo tras editar)"),
    ("6.1", "intención = hecha", [("    if esperado is None or ahora == antes:", "    if esperado is None:"),
                                  ("    elif ahora == despues:", "    elif True:")],
     "caída tras apuntar la intención y antes de editar: al reanudar edita, una vez"),
    ("6.1", "pisa cambios ajenos", [("    if esperado is None or ahora == antes:",
                                     "    if esperado is None or ahora != despues:")],
     "si otro cambió el fichero entre la caída y la reanudación, no se toca y se dice"),
    ("6.1", "sin apuntar el resultado", [(APUNTA_Y_DEVUELVE, SIN_APUNTAR)],
     "tras una edición, su resultado (la observación entera) queda apuntado en la tabla llamadas"),
    ("6.1", "ejecutar como una edición", [(ORDEN_APARTE, "    if False:\n        return None")],
     "una orden (ejecutar) se ejecuta una vez, con su intención y su resultado apuntados"),
    ("6.1", "ejecutar sin intención", [(ORDEN_APARTE, '    if llamada["name"] == "ejecutar":\n'
                                                      '        return atender_sin_efectos(llamada, entorno, usuario)')],
     "una orden (ejecutar) se ejecuta una vez, con su intención y su resultado apuntados"),
    ("6.1", "repite la orden tras una caída", [("ya_intentada=fila is not None)", "ya_intentada=False)")],
     "caída tras ejecutar una orden y antes de apuntar su resultado: al reanudar no la repite"),
]


@pytest.mark.parametrize("id, error, cambios, caso", ERRORES, ids=[f"{e[0]} {e[1]}" for e in ERRORES])
def test_cada_error_con_nombre_lo_pilla_su_caso(id, error, cambios, caso, tmp_path):
    texto = fuente(FUNCIONES[id][0])
    for antes, despues in cambios:
        if antes is None:  # la función entera, cambiada: desde tras su docstring hasta la siguiente
            inicio = texto.index('\n', texto.index('"""', texto.index('"""', texto.index("def atender(")) + 3))
            texto = texto[:inicio] + despues + texto[texto.index("(", texto.index("def intencion_de_editar(")) + 1:]
        else:
            assert texto.count(antes) == 1, antes
            texto = texto.replace(antes, despues)
    resultado = evaluar(id, texto, tmp_path, diferencial=False)
    (linea,) = [l for l in resultado.lineas if l.caso == caso]
    assert linea.estado in ("fallo", "error"), ejercicios.informe(resultado)
    assert DICE.get(error, "") in linea.detalle, ejercicios.informe(resultado)


# --- 6.3: cada error, con los casos que lo pillan (y solo esos) -----------------------------------

ESPERA_63 = "azar.uniform(0, min(tope, base * 2 ** n))"
RENDIRSE = [('raise SeRinde(error, f"{self.intentos}', 'raise error or (f"{self.intentos}'),
            ('raise SeRinde(error, f"el servidor', 'raise error or (f"el servidor'),
            ('raise SeRinde(error, f"esperar {', 'raise error or (f"esperar {')]
# (error, [(lo que se cambia, por qué)], trozos de los nombres de los casos que lo tienen que pillar)
ERRORES_63 = [
    ("sin 408 ni 409", [("REINTENTABLES = {408, 409, 429}", "REINTENTABLES = {429}")], ["se reintentan 408", "todos los estados de 400 a 599"]),
    ("ningún 429 con código", [("        if error.codigo in api.LIMITES_DE_GASTO:", "        if error.codigo:")],
     ["se reintentan 408"]),
    ("reintenta cualquier respuesta", [("return error.estado in REINTENTABLES or error.estado >= 500", "return True")],
     ["ningún otro 4xx", "un 400 sale", "todos los estados de 400 a 599"]),
    ("reintenta lo que no es de la red", [("    return isinstance(error, DE_LA_RED)", "    return True")],
     ["ningún otro 4xx"]),
    ("reintenta el límite de gasto", [("        if error.codigo in api.LIMITES_DE_GASTO:\n            return False\n", "")],
     ["límite de gasto"]),
    ("reintenta lo que no tuvo respuesta, sea lo que sea",
     [("            return error.causa not in SIN_ARREGLO", "            return True")], ["URL que no es http"]),
    ("sin tope", [(ESPERA_63, "azar.uniform(0, base * 2 ** n)")], ["se dobla", "va sobre la espera ya topada"]),
    ("el tope después del azar", [(ESPERA_63, "min(tope, azar.uniform(0, base * 2 ** n))")],
     ["va sobre la espera ya topada"]),
    ("sin azar", [(ESPERA_63, "min(tope, base * 2 ** n)")], ["va sobre la espera ya topada", "lleva azar"]),
    ("no mira lo que pide el servidor", [("    if pedida is not None and pedida > 0:\n        return pedida\n", "")],
     ["pide esperar más de 0 s", "con lo que pide el servidor", "más de UNA_ESPERA_S", "justo UNA_ESPERA_S"]),
    ("obedece lo que pide aunque no sea más de 0", [("if pedida is not None and pedida > 0:", "if pedida is not None:")],
     ["pide esperar más de 0 s"]),
    ("__call__ no le pasa a espera lo que pide el servidor",
     [("espera(n, self.azar, self.base, self.tope, pedida(error))", "espera(n, self.azar, self.base, self.tope)")],
     ["con lo que pide el servidor", "más de UNA_ESPERA_S", "justo UNA_ESPERA_S"]),
    ("sin al_reintentar", [("                if self.al_reintentar is not None:\n"
                            "                    self.al_reintentar(n, error, segundos)\n", "")],
     ["se apunta antes de dormir"]),
    ("reintenta sin mirar se_reintenta", [("                if not se_reintenta(error):\n                    raise\n", "")],
     ["un 400 sale"]),
    ("un intento de más", [("for n in range(self.intentos):", "for n in range(self.intentos + 1):"),
                           ("n == self.intentos - 1", "n == self.intentos")], ["tras `intentos` intentos"]),
    ("se rinde con el error tal cual, sin SeRinde", RENDIRSE,
     ["tras `intentos` intentos", "más de UNA_ESPERA_S", "después del plazo", "justo al final del plazo"]),
    ("sin tope de una espera", [("if segundos > UNA_ESPERA_S:", "if False:")], ["más de UNA_ESPERA_S"]),
    ("sin plazo", [("if self.reloj() + segundos >= fin:", "if False:")], ["después del plazo", "justo al final del plazo"]),
    ("el plazo se mira después de dormir", [
        ("                if self.reloj() + segundos >= fin:\n", "                if False:\n"),
        ("                self.dormir(segundos)\n", "                self.dormir(segundos)\n"
                                                  "                if self.reloj() >= fin:\n"
                                                  "                    raise SeRinde(error, 'plazo')\n")],
     ["después del plazo", "justo al final del plazo"]),
    ("cada intento con la espera de siempre",
     [("return self.intento(M, herramientas, fin - self.reloj())", "return self.modelo(M, herramientas)")],
     ["lo que queda del plazo"]),
    ("cada intento con el plazo entero",
     [("return self.intento(M, herramientas, fin - self.reloj())", "return self.intento(M, herramientas, self.plazo)")],
     ["lo que queda del plazo"]),
]


@pytest.mark.parametrize("error, cambios, trozos", ERRORES_63, ids=[e[0] for e in ERRORES_63])
def test_cada_error_de_6_3_lo_pillan_los_casos_escritos_para_el(error, cambios, trozos, tmp_path):
    resultado = evaluar("6.3", cambiar(fuente("reintentos"), *cambios), tmp_path, diferencial=False)
    fallan = {l.caso for l in resultado.lineas if l.estado in ("fallo", "error")}
    assert not [l for l in resultado.lineas if l.estado == "pendiente"], ejercicios.informe(resultado)
    assert fallan == casos_que_nombran("6.3", trozos), f"{error}:\n{ejercicios.informe(resultado)}"


def test_6_3_nombra_los_errores_que_no_se_reintentan(tmp_path):
    """Antes, un caso enseñaba una lista de siete booleanos sin nombre para seis errores."""
    resultado = evaluar("6.3", cambiar(fuente("reintentos"), ERRORES_63[0][1][0]), tmp_path, diferencial=False)
    informe = ejercicios.informe(resultado)
    assert "llegó:    ['408', '409']" in informe and "True" not in informe, informe
