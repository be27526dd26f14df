"""Para `comprobar N` y `calificar`: los tests de un punto de control contra el código de un alumno, en otro proceso y vigilados.

Tres piezas que comparten la carpeta temporal y el proceso vigilado: la copia, el presupuesto por
test y la lectura de lo que pasó.

Lo usan `comprobar` (tu espacio) y `calificar` (el de cada alumno). Tres piezas:

- **La copia** (`armar`): en una carpeta temporal, la forma que esperan los tests sin cambiarlos.
  El conftest.py de cada punto de control pone delante en sys.path la carpeta que contiene a
  tests/, así que basta con `checkpoints/NN_nombre/` con los módulos que se quieren probar (los
  del alumno, o unos suyos y otros de referencia) y una copia de tests/. Al lado van los otros
  puntos de control sin sus tests (algún test compara con `PUNTO.parent / "01_el_bucle"`) y una
  copia de recetario/, que el complemento `curso.comprobaciones.registro_de_tests` pone en `rutas.RECETARIO`.
  La carpeta de trabajo, HOME y TMPDIR del proceso están dentro, y todo se borra al terminar.

- **Un presupuesto por test** (`correr`): pytest corre bajo `curso.clase.guardian`, que al acabar no
  deja vivo nada de lo que arrancó, y el complemento apunta cada evento en un fichero que se lee
  mientras corre. Si un test (o la importación de un fichero de tests) gasta `limite_test` s de CPU
  en su árbol de procesos, lleva `limite_test` s parado sin pedir CPU ni disco, o pasa de un reloj
  diez veces más holgado (la regla, en `curso/comprobaciones/colgados.py`: la carga de la máquina no
  adelanta ninguna de las tres), se para todo, ese test queda COLGADO y pytest vuelve a arrancar con los que faltan;
  si el proceso muere a mitad de un test (un `os._exit` del alumno), ese queda MUERTO y se sigue
  igual. Tras dos colgados o muertos de un mismo módulo, sus tests que faltan quedan SIN_COMPROBAR
  (colgarían igual), como todo lo que falte al pasar `limite_total` o con un Ctrl-C.

- **Los ejercicios**: con `ejercicios=["3.2", ...]` la copia lleva además un fichero de tests,
  EJERCICIOS, con un test por ejercicio que hace lo que `comprobar("3.2")` en el cuaderno: sus casos
  contra el módulo de la copia y, si solo esperan al esbozo de otro ejercicio, otra vez con la
  versión de referencia del módulo de ese otro. Corren con el mismo presupuesto.

Un test es una función de test (`test_bucle.py::test_x`): sus casos parametrizados cuentan juntos.
Qué tests tiene cada punto de control, y el fichero de los ejercicios, en `curso/comprobaciones/tests_del_curso.py`.

No es una jaula: un módulo que escriba a propósito en una ruta absoluta puede hacerlo; lo que
evita es que un test o un fallo corriente toque los ficheros del alumno o del curso.
"""
import ast
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import curso
from curso import rutas
from curso.comprobaciones import colgados
from curso.comprobaciones.tests_del_curso import EJERCICIOS, fichero_de, funcion_de, test_de_ejercicio, texto_de_los_ejercicios

# Lo que comparten este módulo y el complemento de pytest (`curso.comprobaciones.registro_de_tests`), que corre
# en el proceso de los tests: la variable con la carpeta temporal y los ficheros que escribe en ella.
VARIABLE_COPIA = "CURSO_COMPROBAR_COPIA"
VARIABLE_A_LA_VISTA = "CURSO_COMPROBAR_A_LA_VISTA"  # cómo se le enseña al alumno la carpeta de su espacio
VARIABLE_GASTO = "CURSO_APUNTAR_GASTO"  # si está, un fichero donde apuntar lo que gastó cada test (medir hub)
INFORME = "informe.jsonl"  # un evento por línea
PILA = "pila.txt"  # dónde estaba cada hilo cuando llegó SIGUSR1
CARACTERES_DEL_MOTIVO = 240  # lo que se enseña de lo que esperaba un test que falla

# Segundos de CPU (y segundos parado) por test, ver curso/comprobaciones/colgados.py: mucha holgura
# sobre el que más gasta de los puntos de control (el simulacro de caídas de la 07, 5,7 s de CPU en
# 69 s de reloj con tres comprobar 7 a la vez; lo mide `python -m curso medir hub`).
LIMITE_TEST = 30
LIMITE_TOTAL = 600  # segundos de CPU por corrida entera (todos los tests, con sus vueltas; colgados.Total)
PAUSA = 0.05  # cada cuánto se lee lo que ha apuntado el complemento
CULPAS_POR_GRUPO = 2  # colgados o muertos de un módulo antes de dar sus demás tests por perdidos
COLGADOS_POR_CORRIDA = 3  # colgados en total antes de dar los demás tests por perdidos
ESPERA_A_LA_PILA = 1.0  # lo que se espera a que el proceso escriba dónde estaba
TRAS_LOS_COLGADOS = "tras"  # así empieza el motivo de los que no se corren porque otros se colgaron
ARRANQUE = 20  # segundos para que pytest arranque y diga algo (cargar pytest y el curso lleva 1-3 s)

# Lo que no se copia del espacio del alumno: un conftest.py suyo cambiaría cómo corren los tests.
NO_SE_COPIAN = {"conftest.py"}

# Cómo queda cada test.
PASA, FALLA, COLGADO, MUERTO, SALTADO, SIN_COMPROBAR = (
    "pasa", "falla", "colgado", "muerto", "saltado", "sin comprobar")
# Códigos de salida de pytest que no son «pasan» (0) ni «alguno falla» (1).
CODIGOS_DE_PYTEST = {2: "pytest se interrumpió", 3: "error interno de pytest",
                     4: "pytest no entendió la orden", 5: "no se recogió ningún test"}


@dataclass
class Resultado:
    """Cómo quedó un test (una función de test, con todos sus casos)."""
    estado: str
    motivo: str = ""
    pendiente: str = ""  # el ejercicio cuyo esbozo alcanzó, si falló por eso ("3.2")
    caso: str = ""  # el caso (test_x[param]) que decidió, si no es el único
    donde: str = ""  # el módulo de la copia en el que falló o estaba colgado ("bucle"), si se sabe


@dataclass
class Corrida:
    """Lo que sale de correr una selección de tests: un Resultado por test y lo demás que pasó."""
    resultados: dict = field(default_factory=dict)  # {"test_bucle.py::test_x": Resultado}
    notas: list = field(default_factory=list)
    vueltas: int = 0
    segundos: float = 0.0
    salida: str = ""


_DIRECCION = re.compile(r"<([\w.]+) object at 0x[0-9a-fA-F]+>")


def _lados(expresion):
    """(izquierda, operador, derecha) del texto de una comparación de pytest («3 == 4»), o None."""
    try:
        arbol = ast.parse(expresion.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(arbol, ast.Compare) or len(arbol.ops) != 1:
        return None
    return (ast.get_source_segment(expresion.strip(), arbol.left), type(arbol.ops[0]).__name__,
            ast.get_source_segment(expresion.strip(), arbol.comparators[0]))


def en_castellano(texto):
    """Lo que pytest dice de un fallo, dicho para quien escribió el código: sin «+ where», sin
    direcciones de objetos ni «Use -v». Un mensaje propio del test («assert x, "..."») queda él solo;
    «assert A == B», «esperaba B, llegó A» (como pytest, la derecha es lo esperado); «DID NOT
    RAISE», qué excepción esperaba. De una aserción sin más que decir («assert not …»), "": quien lo
    usa nombra entonces lo que el test comprueba."""
    texto = _DIRECCION.sub(lambda m: f"<un {m.group(1).rsplit('.', 1)[-1]}>", str(texto))
    lineas = [l for l in texto.splitlines() if l.strip()
              and not l.lstrip().startswith(("+", "Use -v", "Omitting"))]
    if not lineas:
        return ""
    primera = lineas[0].removeprefix("AssertionError: ").removeprefix("Failed: ").strip()
    if primera.startswith("DID NOT RAISE"):
        excepcion = primera.removeprefix("DID NOT RAISE").strip().removeprefix("<class ").rstrip(">").strip("'")
        return f"esperaba que lanzara {excepcion.rsplit('.', 1)[-1]}, y no lanzó nada"
    if primera.startswith("Regex pattern did not match"):
        esperado = next((l.split(":", 1)[1].strip() for l in lineas if "Expected regex:" in l), "?")
        llego = next((l.split(":", 1)[1].strip() for l in lineas if "Actual message:" in l), "?")
        return f"el mensaje del error no dice lo esperado: esperaba algo como {esperado}, llegó {llego}"
    if not primera.startswith("assert "):  # el mensaje del test, y lo que lo explica (no su «assert …»)
        resto = [l.strip() for l in lineas[1:] if not l.strip().startswith("assert ")]
        return " · ".join([primera, *resto[:2]])
    lados = _lados(primera.removeprefix("assert "))
    if lados is None:
        return ""
    izquierda, operador, derecha = lados
    if operador == "Eq":
        return f"esperaba {derecha}, llegó {izquierda}"
    if operador == "In":
        return f"esperaba encontrar {izquierda} en {derecha}"
    if operador == "NotIn":
        return f"no esperaba encontrar {izquierda} en {derecha}"
    if operador == "NotEq":
        return f"esperaba algo distinto de {derecha}, y llegó eso"
    return ""


# Lo que se dice de una aserción de la que pytest no da más que «assert not …» y sus «+ where»: la
# línea que lo lleva ya nombra el test por lo que comprueba.
NO_SE_CUMPLE = "no se cumple con tu código"


def frase_del_test(test):
    """«un permiso denegado vuelve como error [x]» de «test_permisos.py::test_un_permiso_denegado_vuelve_como_error[x]»:
    lo que comprueba el test, dicho con su nombre."""
    funcion, _, caso = test.split("::")[-1].partition("[")
    return funcion.removeprefix("test_").replace("_", " ") + (f" [{caso}" if caso else "")


def motivo_corto(texto, ancho=CARACTERES_DEL_MOTIVO):
    """De lo que pytest dice de un fallo, lo esencial en una línea: las líneas «E   …» de un error
    al importar, o las dos primeras del mensaje de una aserción (su mensaje y la comparación)."""
    lineas = [l.rstrip() for l in str(texto).splitlines() if l.strip()]
    marcadas = [l[1:].strip() for l in lineas if l.startswith("E ")]
    elegidas = marcadas[-1:] if marcadas else lineas[:2]
    corto = " · ".join(elegidas)
    return corto if len(corto) <= ancho else corto[:ancho - 1] + "…"


# ---------------------------------------------------------------- la copia


def armar(raiz, carpeta_punto, ficheros, ejercicios=()):
    """La forma que esperan los tests, dentro de `raiz`: checkpoints/NN/ con `ficheros` ({nombre
    relativo: fichero de origen}) y los tests del punto, los otros puntos de control sin tests,
    recetario/, y las carpetas de HOME y TMPDIR. Devuelve la carpeta del punto de control."""
    carpeta_punto, raiz = Path(carpeta_punto), Path(raiz)
    puntos = raiz / "checkpoints"
    for hermano in sorted(carpeta_punto.parent.glob("[0-9][0-9]*_*")):
        if hermano.is_dir() and hermano.name != carpeta_punto.name:
            shutil.copytree(hermano, puntos / hermano.name,
                            ignore=shutil.ignore_patterns("tests", "__pycache__", ".*"))
    copia = puntos / carpeta_punto.name
    copia.mkdir(parents=True)
    for relativa, origen in sorted(ficheros.items()):
        if Path(relativa).name in NO_SE_COPIAN:
            continue
        (copia / relativa).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origen, copia / relativa)
    shutil.copytree(carpeta_punto / "tests", copia / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", ".*"))
    if ejercicios:
        (copia / "tests" / EJERCICIOS).write_text(texto_de_los_ejercicios(ejercicios), encoding="utf-8")
    shutil.copytree(rutas.RECETARIO, raiz / "recetario", ignore=shutil.ignore_patterns("__pycache__"))
    for carpeta in ("casa", "temporal"):
        (raiz / carpeta).mkdir()
    # 0711, como en `probar`: como root, el PostgreSQL de usar y tirar de un test corre como el
    # usuario postgres, que tiene que poder atravesar hasta su carpeta, dentro de temporal/.
    for carpeta in (raiz, raiz / "temporal"):
        os.chmod(carpeta, 0o711)
    (raiz / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return copia


# ---------------------------------------------------------------- correr, vigilando cada test


def _entorno(raiz, copia, a_la_vista=None):
    """Las variables del proceso de los tests: sin nada que cambie cómo corre pytest o a qué
    servidor habla el modelo, con HOME, TMPDIR y el espacio dentro de la carpeta temporal, y el
    mismo paquete `curso` y la misma carpeta del curso que este proceso."""
    fuera = {"ANTHROPIC_BASE_URL", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSTARTUP", "PYTHONHOME"}
    entorno = {k: v for k, v in os.environ.items() if k not in fuera}
    entorno.update({"HOME": str(raiz / "casa"), "TMPDIR": str(raiz / "temporal"),
                    rutas.VARIABLE_ESPACIO: str(copia), VARIABLE_COPIA: str(raiz),
                    rutas.VARIABLE_RAIZ: str(rutas.RAIZ),
                    "PYTHONPATH": str(Path(curso.__file__).resolve().parent.parent),
                    "PYTHONDONTWRITEBYTECODE": "1"})
    if a_la_vista:  # las rutas de la copia, en los mensajes, como las de su espacio
        entorno[VARIABLE_A_LA_VISTA] = a_la_vista
    return entorno


def orden_de_pytest(raiz, copia, tests):
    """La orden, bajo el guardián. Sin los complementos que estos tests no usan: nbval (carga todo
    Jupyter) y el de hypothesis (medio segundo de CPU aunque ningún test lo use; los que lo usan
    lo importan ellos). -P: la carpeta de trabajo (la del alumno) no entra en sys.path."""
    return [sys.executable, "-P", "-m", "curso.clase.guardian", "--",
            sys.executable, "-P", "-m", "pytest", "-q", "-p", "curso.comprobaciones.registro_de_tests",
            "-p", "no:nbval", "-p", "no:hypothesispytest", "-p", "no:cacheprovider",
            "--continue-on-collection-errors", "-c", str(raiz / "pytest.ini"), "--rootdir", str(raiz),
            *(f"{copia / 'tests' / fichero_de(t)}::{t.split('::', 1)[1]}" for t in tests)]


class _Lector:
    """Lee el informe del complemento a medida que crece, y sabe qué se está haciendo y desde cuándo."""

    def __init__(self, ruta, avisar=None):
        self.ruta, self.leido, self.resto = ruta, 0, ""
        self.avisar = avisar  # avisar(test, falla): al acabar cada función de test, con todos sus casos
        self.casos, self.hechos, self.fallidos = {}, set(), set()
        self.eventos = []
        self.importando = self.corriendo = self.pid = None
        self.desde = time.monotonic()  # desde cuándo se está en lo que se está
        self.donde = None  # (módulo, línea) donde estaba al pararlo por el límite, si se supo
        self.vigilancia, self.colgado = None, ""  # la regla de colgados.py, y por qué se paró (CPU, PARADO…)
        self.total = ""  # por qué se acabó el presupuesto de la corrida, si se acabó (CPU o RELOJ)

    def leer(self):
        try:
            with open(self.ruta, "rb") as f:
                f.seek(self.leido)
                nuevo = f.read()
        except FileNotFoundError:
            return
        self.leido += len(nuevo)
        lineas = (self.resto + nuevo.decode("utf-8", errors="replace")).split("\n")
        self.resto = lineas.pop()  # a medias: se completa en la lectura siguiente
        for linea in lineas:
            try:
                evento = json.loads(linea)
            except ValueError:
                continue
            self.eventos.append(evento)
            self.desde = time.monotonic()
            tipo = evento.get("tipo")
            if tipo == "proceso":
                self.pid = evento["pid"]
            elif tipo == "importa":
                self.importando = evento["fichero"]
            elif tipo in ("importado", "recogidos"):  # con nodeids en la orden, pytest solo
                self.importando = None                   # informa de un fichero que no importa
            elif tipo == "empieza":
                self.importando, self.corriendo = None, evento["test"]
            elif tipo == "resultado" and evento.get("fase") == "teardown":
                self.corriendo = None
            if tipo == "recogidos":
                for nodeid in evento["tests"]:
                    self.casos.setdefault(funcion_de(nodeid), []).append(nodeid)
            elif tipo == "resultado":
                self._apuntar_resultado(evento)

    def _apuntar_resultado(self, evento):
        if evento.get("resultado") == "failed":
            self.fallidos.add(funcion_de(evento["test"]))
        if evento.get("fase") != "teardown" or self.avisar is None:
            return
        self.hechos.add(evento["test"])
        funcion = funcion_de(evento["test"])
        if all(c in self.hechos for c in self.casos.get(funcion, [evento["test"]])):
            self.avisar(funcion, funcion in self.fallidos)


def donde_estaba(pila, copia):
    """(módulo, línea) del marco más reciente de un módulo de `copia` (no de sus tests) en lo que
    escribe faulthandler, o None. Así se sabe qué módulo del alumno no acababa."""
    copia = str(copia).rstrip("/") + "/"
    for linea in pila.splitlines():
        linea = linea.strip()
        if not linea.startswith('File "'):
            continue
        fichero, _, resto = linea[6:].partition('", line ')
        if fichero.startswith(copia) and "/" not in fichero[len(copia):] and fichero.endswith(".py"):
            return Path(fichero).stem, resto.split()[0]
    return None


def _donde_estaba(raiz, copia, pid, guardian, vuelta):
    """Pide al proceso de los tests (SIGUSR1) que escriba dónde está, y lo lee."""
    if pid is None:
        return None
    ruta = raiz / PILA
    try:  # solo si sigue siendo el pytest de esta vuelta (hijo del guardián): un número libre se reusa
        padre = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        if padre != guardian:
            return None
        os.kill(pid, signal.SIGUSR1)
    except (FileNotFoundError, ValueError, IndexError):
        return None
    except (ProcessLookupError, PermissionError):
        return None
    fin = time.monotonic() + ESPERA_A_LA_PILA
    texto = ""
    while time.monotonic() < fin:
        time.sleep(0.02)
        texto = ruta.read_text(encoding="utf-8", errors="replace") if ruta.exists() else ""
        if "File " in texto:
            time.sleep(0.05)  # que acabe de escribir
            texto = ruta.read_text(encoding="utf-8", errors="replace")
            break
    if ruta.exists():
        ruta.rename(raiz / f"pila-{vuelta}.txt")
    return donde_estaba(texto, copia)


def _apuntar_gasto(en, medida):
    """Con VARIABLE_GASTO, apunta lo que gastó un tramo de un test (para `medir hub`)."""
    ruta = os.environ.get(VARIABLE_GASTO)
    if ruta and en:
        with open(ruta, "a", encoding="utf-8") as f:  # una línea de una vez: varios procesos apuntan a la vez
            f.write(json.dumps({"test": funcion_de(en), "reloj": round(medida[0], 2), "cpu": round(medida[1], 2),
                                "parado": round(medida[2], 2), "hueco": round(medida[3], 2)}) + "\n")


def _recoger(proceso, total, esperar):
    """Recoge al guardián si ha acabado (o, con `esperar`, cuando acabe), con `os.wait4`: da además
    lo que gastó con todo lo que él recogió (el árbol entero), que se suma a `total`. True si ya
    está recogido."""
    if proceso.returncode is not None:
        return True
    pid, estado, uso = os.wait4(proceso.pid, 0 if esperar else os.WNOHANG)
    if pid == 0:
        return False
    proceso.returncode = os.waitstatus_to_exitcode(estado)
    total.gastado += uso.ru_utime + uso.ru_stime
    return True


def _una_vuelta(raiz, copia, tests, limite_test, total, parar, vuelta, avisar=None, a_la_vista=None):
    """Corre pytest una vez con `tests`; devuelve (lector, código o None, por qué se paró o "").

    Cada PAUSA s lee lo que ha apuntado el complemento; cada colgados.MUESTREO s, lo que gasta el
    árbol de procesos del guardián; y la regla de `curso/comprobaciones/colgados.py` dice si el
    test que corre está colgado (por qué, en `lector.colgado`). `total`, el colgados.Total de la
    corrida: al acabar la vuelta se le suma la CPU de todo su árbol (la del guardián recogido)."""
    ruta = raiz / INFORME
    if ruta.exists():
        ruta.rename(raiz / f"informe-{vuelta}.jsonl")
    lector = _Lector(ruta, avisar)
    con_proc = colgados.se_puede_leer()
    with open(raiz / "salida.txt", "ab") as salida:
        proceso = subprocess.Popen(orden_de_pytest(raiz, copia, tests), cwd=copia,
                                   env=_entorno(raiz, copia, a_la_vista), stdin=subprocess.PIPE, stdout=salida,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        vigilancia = colgados.Vigilancia(limite_test, time.monotonic(), con_proc, ARRANQUE)
        lector.vigilancia, vida, proxima, motivo = vigilancia, lector.desde, 0.0, ""
        try:
            while not _recoger(proceso, total, esperar=False):
                time.sleep(PAUSA)
                en = lector.corriendo or lector.importando
                lector.leer()
                ahora = time.monotonic()
                if lector.desde != vida:
                    _apuntar_gasto(en, vigilancia.medida(ahora))
                    vida = lector.desde
                    vigilancia.vida(vida)
                if con_proc and ahora >= proxima:
                    vigilancia.muestra(ahora, colgados.leer(proceso.pid))
                    proxima = ahora + colgados.MUESTREO
                if parar is not None and parar.is_set():
                    motivo = "parar"
                elif por_total := total.agotado(ahora, vigilancia.ultima.cpu if vigilancia.ultima else 0.0):
                    motivo, lector.total = "total", por_total
                else:
                    lector.colgado = vigilancia.colgado(ahora)
                    motivo = "limite" if lector.colgado else ""
                if motivo:
                    break
            _apuntar_gasto(lector.corriendo or lector.importando, vigilancia.medida(time.monotonic()))
            if motivo == "limite":
                lector.donde = _donde_estaba(raiz, copia, lector.pid, proceso.pid, vuelta)
        finally:
            proceso.stdin.close()  # el guardián lo entiende como «para» y no deja nada vivo
            _recoger(proceso, total, esperar=True)
        lector.leer()
    return lector, (None if motivo else proceso.returncode), motivo


def correr(copia, raiz, seleccion, limite_test=LIMITE_TEST, limite_total=LIMITE_TOTAL, parar=None,
           grupo_de=fichero_de, avisar=None, a_la_vista=None):
    """Corre los tests `seleccion` («test_x.py::test_y», en orden) de `copia`; la Corrida.

    grupo_de(test): el módulo al que se achaca un test, para dejar de insistir con un módulo que
    se cuelga (por defecto, su fichero); avisar(test, falla): se llama al acabar cada test, mientras
    corren (para ir diciendo qué módulos han acabado); a_la_vista: la carpeta que se enseña en los
    mensajes en vez de la de la copia (la del espacio del alumno)."""
    corrida = Corrida()
    inicio = time.monotonic()
    total = colgados.Total(limite_total, inicio, colgados.se_puede_leer())
    pendientes = list(dict.fromkeys(seleccion))
    culpas = {}
    while pendientes:
        if parar is not None and parar.is_set():
            _sin_comprobar(corrida, pendientes, "interrumpido")
            break
        corrida.vueltas += 1
        lector, codigo, motivo = _una_vuelta(raiz, copia, pendientes, limite_test, total, parar,
                                             corrida.vueltas, avisar, a_la_vista)
        antes = len(corrida.resultados)
        culpables = _repartir(corrida, pendientes, lector, codigo, motivo, limite_test)
        for test in culpables:
            grupo = grupo_de(test)
            culpas[grupo] = culpas.get(grupo, 0) + 1
        pendientes = [t for t in pendientes if t not in corrida.resultados]
        if motivo == "parar":
            _sin_comprobar(corrida, pendientes, "interrumpido")
            break
        if motivo == "total":
            _sin_comprobar(corrida, pendientes, total.motivo(lector.total))
            break
        perdidos = [t for t in pendientes if culpas.get(grupo_de(t), 0) >= CULPAS_POR_GRUPO]
        _sin_comprobar(corrida, perdidos, f"{TRAS_LOS_COLGADOS} dos tests de su módulo colgados o muertos")
        cuantos = sum(1 for r in corrida.resultados.values() if r.estado == COLGADO)
        if cuantos >= COLGADOS_POR_CORRIDA:
            _sin_comprobar(corrida, pendientes, f"{TRAS_LOS_COLGADOS} {cuantos} tests colgados")
        pendientes = [t for t in pendientes if t not in corrida.resultados]
        if pendientes and len(corrida.resultados) == antes:  # la vuelta no avanzó: no va a avanzar
            salida = (raiz / "salida.txt").read_text(encoding="utf-8", errors="replace")
            que = CODIGOS_DE_PYTEST.get(codigo, f"código {codigo}") if codigo is not None else \
                f"pytest no empezó en {max(limite_test, ARRANQUE):g} s"
            _sin_comprobar(corrida, pendientes, f"los tests no pudieron correr ({que})"
                           + (f": {motivo_corto(salida)}" if salida.strip() else ""))
            break
    corrida.segundos = time.monotonic() - inicio
    salida = raiz / "salida.txt"
    corrida.salida = salida.read_text(encoding="utf-8", errors="replace") if salida.exists() else ""
    return corrida


def es_estable(resultado):
    """¿Saldría igual otra vez, con el mismo código y el mismo límite? No un test saltado (depende de
    lo que haya instalado) ni uno sin comprobar (se acabó el tiempo de la corrida, llegó un Ctrl-C,
    pytest no arrancó o se dejó de insistir tras los colgados). Tampoco uno colgado: un colgado no
    es un veredicto final (`calificar` lo vuelve a correr a solas al final, y no lo guarda)."""
    return resultado.estado not in (SALTADO, SIN_COMPROBAR, COLGADO)


def se_colgo(corrida):
    """¿Algún test de la corrida quedó colgado?"""
    return any(r.estado == COLGADO for r in corrida.resultados.values())


def _sin_comprobar(corrida, tests, motivo):
    for t in tests:
        corrida.resultados.setdefault(t, Resultado(SIN_COMPROBAR, motivo))


def _repartir(corrida, seleccion, lector, codigo, motivo, limite_test):
    """Pasa a `corrida` lo que dice el informe de una vuelta; devuelve los tests culpables de que
    la vuelta acabara antes de tiempo (el que corría, o los del fichero que se importaba)."""
    casos, hechos, rotos, saltados, fallos = {}, set(), {}, {}, {}
    for e in lector.eventos:
        tipo = e.get("tipo")
        if tipo == "importado" and e.get("motivo") is not None:
            rotos[e["fichero"]] = e["motivo"]
        elif tipo == "recogidos":
            for nodeid in e["tests"]:
                casos.setdefault(funcion_de(nodeid), []).append(nodeid)
        elif tipo == "resultado":
            if e["resultado"] == "failed":
                fallos.setdefault(e["test"], e)
            elif e["resultado"] == "skipped":
                saltados.setdefault(e["test"], e)
            if e.get("fase") == "teardown":
                hechos.add(e["test"])
    for test in seleccion:
        if fichero_de(test) in rotos:
            corrida.resultados[test] = Resultado(
                FALLA, f"{fichero_de(test)} no se pudo importar: {rotos[fichero_de(test)]}")
            continue
        suyos = casos.get(test, [])
        if not suyos or not all(c in hechos for c in suyos):
            continue
        fallado = next((c for c in suyos if c in fallos), None)
        saltado = next((c for c in suyos if c in saltados), None)
        if fallado is not None:
            e = fallos[fallado]
            corrida.resultados[test] = Resultado(FALLA, e.get("motivo", ""), e.get("pendiente", ""),
                                                 _caso(fallado, suyos), e.get("donde", ""))
        elif saltado is not None:
            corrida.resultados[test] = Resultado(SALTADO, saltados[saltado].get("motivo", ""),
                                                 caso=_caso(saltado, suyos))
        else:
            corrida.resultados[test] = Resultado(PASA)
    pendientes = [t for t in seleccion if t not in corrida.resultados]
    que = _que_colgado(lector, limite_test)
    if not pendientes:
        if motivo == "limite":
            corrida.notas.append(f"el proceso de los tests {que} tras el último test (¿un hilo que no "
                                 "acaba?): se paró")
        return []
    if motivo in ("total", "parar"):
        return []  # no es culpa del que corría: se acabó el tiempo de todos, o lo pararon
    if lector.importando is not None:
        culpables = [t for t in pendientes if fichero_de(t) == lector.importando]
        donde, caso = f"al importar {lector.importando}", ""
    elif lector.corriendo is not None and funcion_de(lector.corriendo) in pendientes:
        culpables = [funcion_de(lector.corriendo)]
        donde, caso = "", _caso(lector.corriendo, casos.get(culpables[0], []))
    else:
        return []  # nadie a quien achacarlo: quien llama ve que la vuelta no avanzó
    en = ""
    if lector.donde is not None:
        en = f"estaba en {lector.donde[0]}.py, línea {lector.donde[1]}"
        donde = f"{donde}; {en}" if donde else en
    for test in culpables:
        if motivo == "limite":
            corrida.resultados[test] = Resultado(
                COLGADO, que + (f" ({donde})" if donde else ""), caso=caso,
                donde=lector.donde[0] if lector.donde else "")
        else:
            corrida.resultados[test] = Resultado(
                MUERTO, f"el proceso de los tests terminó de golpe{' ' + donde if donde else ''} "
                        f"(código {codigo})", caso=caso)
    return culpables


def _que_colgado(lector, limite_test):
    """«no terminó en 30 s de CPU (¿un bucle sin fin?)»…: lo que dice la regla de por qué se paró."""
    vigilancia = getattr(lector, "vigilancia", None)
    if vigilancia is None or not getattr(lector, "colgado", ""):
        return f"no terminó en {limite_test:g} s"
    return vigilancia.motivo(lector.colgado)


def _caso(nodeid, casos):
    """«test_x[a]» si la función tiene varios casos; "" si tiene uno."""
    return nodeid.split("::")[-1] if len(casos) > 1 else ""


# ---------------------------------------------------------------- todo junto


def borrar(carpeta):
    """Borra `carpeta` aunque el código del alumno haya dejado dentro algo sin permiso de escritura."""
    def dar_permiso(funcion, ruta, _error):
        os.chmod(os.path.dirname(ruta), stat.S_IRWXU)
        if os.path.isdir(ruta) and not os.path.islink(ruta):
            os.chmod(ruta, stat.S_IRWXU)
        funcion(ruta)
    shutil.rmtree(carpeta, onerror=dar_permiso)


def correr_aparte(ficheros, carpeta_punto, seleccion, ejercicios=(), limite_test=LIMITE_TEST,
                  limite_total=LIMITE_TOTAL, parar=None, grupo_de=fichero_de, avisar=None, a_la_vista=None):
    """Arma la copia con `ficheros` en una carpeta temporal, corre `seleccion` (y un test por
    ejercicio de `ejercicios`, «test_ejercicios_del_curso.py::test_ejercicio_3_2») y la borra."""
    raiz = Path(tempfile.mkdtemp(prefix="curso-comprobar-"))
    try:
        copia = armar(raiz, carpeta_punto, ficheros, ejercicios)
        tests = list(seleccion) + [test_de_ejercicio(id) for id in ejercicios]
        corrida = correr(copia, raiz, tests, limite_test, limite_total, parar, grupo_de, avisar, a_la_vista)
    finally:
        borrar(raiz)
    return corrida
