"""Tu espacio, comprobado por lo que hace: `python -m curso comprobar N` y `calificar CARPETA`.

`comparar N` enseña en qué se diferencia tu código del de referencia; `comprobar N` dice si
*hace* lo mismo: corre los tests del punto de control N (`checkpoints/NN_*/tests/`) contra los
módulos de tu espacio, no contra los del punto de control, y escribe una línea por módulo:
✔, o ✘ con el primer test que falla y lo que esperaba. `calificar CARPETA`, para quien da el
curso, hace lo mismo con cada subcarpeta de CARPETA (el espacio de un alumno) y escribe una
tabla: una fila por alumno, una columna por lección, en CSV y en una página HTML.

Cómo se apuntan los tests a otro espacio, sin cambiarlos: el conftest.py de cada punto de control
pone delante en sys.path la carpeta que contiene a tests/. Así que en una carpeta temporal se
arma la misma forma, `checkpoints/NN_nombre/` con los ficheros de tu espacio y una copia de
tests/, y los tests importan tus módulos. Al lado van copias de los otros puntos de control (sin
sus tests), porque algún test compara con la versión de referencia de una lección anterior
(`PUNTO.parent / "01_el_bucle"`), y una copia de recetario/: el complemento de pytest de este
módulo cambia `curso.rutas.RECETARIO` por ella antes de que se importe ningún test.

Qué test es de qué módulo: `test_X.py` es de `X.py`; `test_X_algo.py`, de `X.py` si existe
(`test_correr_cli.py` → `correr.py`, `test_agente_ventana.py` → `agente.py`); los de la tabla
OTROS_NOMBRES, del módulo que dice; y uno que no es de ningún módulo (`test_recorridos.py`: las
ejecuciones guionizadas enteras, que usan varios a la vez) lleva su propia línea. Un módulo del
punto de control que no está en tu espacio es una línea ✘ «falta X.py», y uno sin tests propios,
una línea «·» (lo usan los tests de los demás).

El código del alumno corre en otro proceso (un pytest), en su propio grupo de procesos, con
tiempo máximo: si no termina, se mata el grupo entero y el módulo cuyo test corría sale ✘ «no
terminó en N s». Corre con la carpeta de trabajo, HOME y TMPDIR dentro de la carpeta temporal,
que se borra al terminar. No es una jaula: un módulo que escriba a propósito en una ruta absoluta
puede hacerlo; lo que evita es que un test o un fallo corriente toque tus ficheros o los del
curso. El complemento apunta lo que pasa, evento a evento, en un fichero que sobrevive a la
muerte del proceso: por eso se sabe qué test corría cuando se colgó.

Las partes puras (`modulo_de_test`, `lineas_de`, `celda`, `tabla_csv`, `pagina_html`) no
arrancan procesos ni tocan el disco, para probarlas por separado.
"""
import csv
import html
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas

# Cuánto puede tardar, como mucho, la comprobación de un punto de control: el más grande tarda
# menos de un minuto en la máquina de referencia del curso (dos núcleos).
LIMITE = 300
PAUSA = 0.05  # cada cuánto se mira si el proceso de los tests ha terminado
CARACTERES_DEL_MOTIVO = 240  # lo que se enseña de lo que esperaba un test que falla

# Tests cuyo nombre no es el de su módulo: `buscar` es una herramienta de herramientas.py.
OTROS_NOMBRES = {"buscar": "herramientas"}
# Lo que no se copia del espacio del alumno: un conftest.py suyo cambiaría cómo corren los tests.
NO_SE_COPIAN = {"conftest.py"}

# Variables del complemento de pytest (las lee el proceso de los tests).
VARIABLE_COPIA = "CURSO_COMPROBAR_COPIA"  # la carpeta temporal donde está todo
INFORME = "informe.jsonl"  # dentro de ella: un evento por línea

# Cómo queda cada línea.
BIEN, MAL, FALTA, COLGADO, SIN_TESTS, SIN_COMPROBAR = (
    "bien", "mal", "falta", "colgado", "sin tests", "sin comprobar")
SIMBOLO = {BIEN: "✔", MAL: "✘", FALTA: "✘", COLGADO: "✘", SIN_TESTS: "·", SIN_COMPROBAR: "·"}
NO_IMPIDEN_EL_VERDE = {BIEN, SIN_TESTS}
# Códigos de salida de pytest que no son «pasan» (0) ni «alguno falla» (1).
CODIGOS_DE_PYTEST = {2: "pytest se interrumpió", 3: "error interno de pytest",
                     4: "pytest no entendió la orden", 5: "no se recogió ningún test"}


@dataclass
class Linea:
    """Una línea del informe: un módulo (o un fichero de tests de conjunto) y cómo ha quedado."""
    nombre: str
    estado: str
    detalle: str = ""

    def texto(self):
        return f"{SIMBOLO[self.estado]} {self.nombre}" + (f": {self.detalle}" if self.detalle else "")


@dataclass
class Comprobacion:
    """Lo que dice `comprobar` de un espacio contra un punto de control."""
    numero: int
    nombre: str  # "el_bucle"
    lineas: list = field(default_factory=list)
    limite: float = LIMITE

    @property
    def en_verde(self):
        return bool(self.lineas) and all(l.estado in NO_IMPIDEN_EL_VERDE for l in self.lineas)


# ---------------------------------------------------------------- partes puras


def modulo_de_test(fichero, modulos):
    """El módulo (sin .py) del que es el fichero de tests `fichero`, o None si no es de ninguno.

    test_bucle.py → bucle; test_correr_cli.py → correr (el prefijo más largo que es un módulo);
    test_buscar.py → herramientas (OTROS_NOMBRES); test_recorridos.py → None."""
    base = Path(fichero).stem.removeprefix("test_")
    partes = base.split("_")
    for cuantas in range(len(partes), 0, -1):
        candidato = "_".join(partes[:cuantas])
        if candidato in modulos:
            return candidato
    otro = OTROS_NOMBRES.get(base)
    return otro if otro in modulos else None


def motivo_corto(texto, ancho=CARACTERES_DEL_MOTIVO):
    """De lo que pytest dice de un fallo, lo esencial en una línea: las líneas «E   …» de un error
    al importar, o las dos primeras del mensaje de una aserción (su mensaje y la comparación)."""
    lineas = [l.rstrip() for l in str(texto).splitlines() if l.strip()]
    marcadas = [l[1:].strip() for l in lineas if l.startswith("E ")]
    elegidas = marcadas[-1:] if marcadas else lineas[:2]
    corto = " · ".join(elegidas)
    return corto if len(corto) <= ancho else corto[:ancho - 1] + "…"


def leer_eventos(texto):
    """Los eventos del informe, uno por línea JSON; la última puede estar a medias (el proceso
    murió escribiéndola) y se descarta."""
    eventos = []
    for linea in texto.splitlines():
        try:
            eventos.append(json.loads(linea))
        except ValueError:
            continue
    return eventos


def _fichero(nodeid):
    """test_bucle.py de «checkpoints/01_el_bucle/tests/test_bucle.py::test_x»."""
    return Path(nodeid.split("::")[0]).name


def _test(nodeid):
    """test_bucle.py::test_x de un nodeid entero."""
    return "::".join([_fichero(nodeid)] + nodeid.split("::")[1:])


def lineas_de(modulos, presentes, ficheros_de_test, eventos, codigo, limite, leccion_de=None,
              salida=""):
    """Las líneas del informe, a partir de los eventos del complemento.

    modulos: los del punto de control (sin .py), en orden; presentes: los que tiene el espacio;
    ficheros_de_test: los test_*.py del punto de control; codigo: el de salida de pytest, o None
    si no terminó en `limite` segundos; leccion_de: {módulo: lección que lo escribe}; salida: lo
    que escribió pytest, para decir algo si no llegó ni a empezar."""
    leccion_de = leccion_de or {}
    tests = {}       # fichero -> [nodeid] (los que se recogieron)
    roto = {}        # fichero -> motivo por el que no se pudo importar
    resultado = {}   # nodeid -> (estado, motivo), el primer fallo manda
    importando, corriendo = None, None
    for e in eventos:
        tipo = e.get("tipo")
        if tipo == "importa":
            importando = e["fichero"]
        elif tipo == "importado":
            importando = None
            if e.get("motivo") is not None:
                roto[e["fichero"]] = e["motivo"]
        elif tipo == "recogidos":
            for nodeid in e["tests"]:
                tests.setdefault(_fichero(nodeid), []).append(nodeid)
        elif tipo == "empieza":
            corriendo = e["test"]
        elif tipo == "resultado":
            anterior = resultado.get(e["test"])
            if anterior is None or (anterior[0] != "failed" and e["resultado"] != "passed"):
                resultado[e["test"]] = (e["resultado"], e.get("motivo", ""))
            if e.get("fase") == "teardown":
                corriendo = None
    # Dónde estaba el proceso al acabar: si acabó a medias (colgado, o muerto sin que pytest
    # terminara su test), el módulo de ese fichero es el culpable.
    parado = importando if importando is not None else (_fichero(corriendo) if corriendo else None)
    donde = (f"mientras se importaba {importando}" if importando is not None
             else f"en {_test(corriendo)}" if corriendo else "")
    colgado = codigo is None

    grupos = {m: [] for m in modulos}
    sueltos = []
    for f in ficheros_de_test:
        m = modulo_de_test(f, modulos)
        (grupos[m].append(f) if m else sueltos.append(f))

    def linea(nombre, ficheros, falta):
        if falta:
            leccion = leccion_de.get(falta)
            quien = f" (lo escribe la lección {leccion:02d})" if leccion is not None else ""
            return Linea(nombre, FALTA, f"falta en tu espacio{quien}")
        if not ficheros:
            return Linea(nombre, SIN_TESTS, "sin tests propios aquí; lo usan los tests de los demás")
        for f in ficheros:
            if f in roto:
                return Linea(nombre, MAL, f"{f} no se pudo importar: {roto[f]}")
        if parado in ficheros:
            if colgado:
                return Linea(nombre, COLGADO, f"no terminó en {limite:g} s ({donde})")
            return Linea(nombre, MAL, f"el proceso de los tests terminó de golpe {donde} "
                                      f"(código {codigo})")
        suyos = [t for f in ficheros for t in tests.get(f, [])]
        fallan = [t for t in suyos if resultado.get(t, ("",))[0] == "failed"]
        if fallan:
            otros = len(fallan) - 1
            mas = f" (y {otros} {'test más falla' if otros == 1 else 'tests más fallan'})" if otros else ""
            return Linea(nombre, MAL, f"falla {_test(fallan[0])}: {resultado[fallan[0]][1]}{mas}")
        hechos = [t for t in suyos if t in resultado]
        if not suyos or len(hechos) < len(suyos):
            return Linea(nombre, SIN_COMPROBAR, "sin comprobar: los tests no llegaron a correr")
        pasan = sum(1 for t in hechos if resultado[t][0] == "passed")
        return Linea(nombre, BIEN, f"{pasan} {'test pasa' if pasan == 1 else 'tests pasan'}")

    lineas = [linea(f"{m}.py", grupos[m], m if m not in presentes else None) for m in modulos]
    lineas += [linea(f"{f} (prueba varios módulos a la vez)", [f], None) for f in sueltos]
    if parado is None and (colgado or codigo not in (0, 1) or not eventos):
        if colgado:
            que = f"no terminaron en {limite:g} s"
        else:
            que = (f"no pudieron correr ({CODIGOS_DE_PYTEST.get(codigo, f'código {codigo}')})"
                   + (f": {motivo_corto(salida)}" if salida.strip() else ""))
        lineas.append(Linea("los tests", MAL, que))
    return lineas


def informe(comprobacion, de_donde):
    """El texto que escribe `comprobar`: una línea por módulo y el veredicto."""
    c = comprobacion
    cabecera = f"Punto de control {c.numero:02d} ({c.nombre}): sus tests contra {de_donde}"
    cuerpo = [l.texto() for l in c.lineas]
    rojas = sum(1 for l in c.lineas if l.estado not in NO_IMPIDEN_EL_VERDE)
    if c.en_verde:
        final = f"✔ Tu código pasa los tests del punto de control {c.numero:02d}."
    else:
        final = (f"✘ {rojas} de {len(c.lineas)} líneas en rojo. Para ver en qué difiere tu código "
                 f"del de referencia: python -m curso comparar {c.numero:02d}")
    return "\n".join([cabecera, *cuerpo, final])


FALTAN_DE_UNO_EN_UNO = 2  # con más módulos que faltan, la celda dice cuántos (la lección sin empezar)


def celda(comprobacion):
    """Lo que dice una celda de la tabla: ✔, o ✘ y los módulos que no pasan (con el porqué si
    no es un test que falla)."""
    if comprobacion.en_verde:
        return "✔"
    faltan = [l for l in comprobacion.lineas if l.estado == FALTA]
    if len(faltan) > FALTAN_DE_UNO_EN_UNO:
        nombres = [f"faltan {len(faltan)} módulos"]
    else:
        nombres = [f"{l.nombre} (falta)" for l in faltan]
    for l in comprobacion.lineas:
        if l.estado in NO_IMPIDEN_EL_VERDE or l.estado in (SIN_COMPROBAR, FALTA):
            continue
        if not (l.nombre.endswith(".py") or " (" in l.nombre):  # «los tests», «el espacio»
            nombres.append(f"{l.nombre} {l.detalle}")
            continue
        colgado = f" (no terminó en {comprobacion.limite:g} s)" if l.estado == COLGADO else ""
        nombres.append(l.nombre.split(" (")[0] + colgado)
    return "✘ " + ", ".join(nombres)


def tabla_csv(filas, lecciones):
    """El CSV: una fila por alumno y una columna por lección, más cuántas lecciones tiene en verde.

    filas: [(alumno, {número: Comprobacion})]; lecciones: {número: nombre}."""
    salida = io.StringIO()
    escritor = csv.writer(salida, lineterminator="\n")
    escritor.writerow(["alumno", *(f"{n:02d}_{nombre}" for n, nombre in lecciones.items()),
                       "lecciones en verde"])
    for alumno, celdas in filas:
        escritor.writerow([alumno, *(celda(celdas[n]) for n in lecciones),
                           sum(1 for n in lecciones if celdas[n].en_verde)])
    return salida.getvalue()


ESTILO = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: .3em .6em; text-align: left; vertical-align: top; }
td.bien { background: #d8f0d8; }
td.mal { background: #f6d0d0; }
pre { background: #f4f4f4; padding: .5em; white-space: pre-wrap; }
"""


def pagina_html(filas, lecciones, limite):
    """Una página HTML sin nada de fuera (ni hojas de estilo ni scripts ni imágenes): la tabla, qué
    quiere decir una celda y, debajo, las líneas de cada alumno y lección."""
    e = html.escape
    cabecera = "".join(f"<th>{n:02d} {e(nombre)}</th>" for n, nombre in lecciones.items())
    cuerpo = []
    for alumno, celdas in filas:
        tds = "".join(
            f'<td class="{"bien" if celdas[n].en_verde else "mal"}" '
            f'title="{e(chr(10).join(l.texto() for l in celdas[n].lineas))}">{e(celda(celdas[n]))}</td>'
            for n in lecciones)
        cuerpo.append(f"<tr><th>{e(alumno)}</th>{tds}</tr>")
    detalle = []
    for alumno, celdas in filas:
        partes = "".join(f"<h3>{n:02d} {e(lecciones[n])}</h3><pre>"
                         f"{e(chr(10).join(l.texto() for l in celdas[n].lineas))}</pre>" for n in lecciones)
        detalle.append(f"<details><summary>{e(alumno)}</summary>{partes}</details>")
    return f"""<!DOCTYPE html>
<html lang="es">
<head><meta charset="utf-8"><title>Calificaciones del curso</title><style>{ESTILO}</style></head>
<body>
<h1>Calificaciones del curso</h1>
<p>Una fila por alumno y una columna por lección. Cada celda es <code>python -m curso comprobar N</code>
con el espacio del alumno <em>tal como está ahora</em>: los tests del punto de control N corridos
contra sus módulos. <strong>Verde (✔)</strong> quiere decir que el espacio tiene todos los módulos
del punto de control N y que todos los tests de ese punto de control pasan. <strong>Roja (✘)</strong>
dice qué módulos no: un test que falla, un módulo que falta, o unos tests que no terminaron en
{limite:g} s (el límite por alumno y lección) o que no pudieron ni empezar. Pasa el ratón por una
celda para ver sus líneas, o abre el detalle de cada alumno más abajo.</p>
<table>
<tr><th>alumno</th>{cabecera}</tr>
{chr(10).join(cuerpo)}
</table>
<h2>Detalle</h2>
{chr(10).join(detalle)}
</body>
</html>
"""


# ---------------------------------------------------------------- el complemento de pytest
# Corre dentro del proceso de los tests (`-p curso.calificar`): apunta cada evento en una línea,
# abriendo y cerrando el fichero cada vez, para que lo escrito sobreviva a un SIGKILL.


def _apuntar(evento):
    copia = os.environ.get(VARIABLE_COPIA)
    if copia:
        with open(Path(copia) / INFORME, "a", encoding="utf-8") as f:
            f.write(json.dumps(evento, ensure_ascii=False) + "\n")


def _motivo(informe_de_pytest):
    crash = getattr(informe_de_pytest.longrepr, "reprcrash", None)
    texto = crash.message if crash is not None else str(informe_de_pytest.longrepr)
    return motivo_corto(texto.replace(os.environ.get(VARIABLE_COPIA, "\0"), "…"))


def pytest_configure(config):
    """Antes de importar ningún test: recetario/ es la copia de la carpeta temporal."""
    copia = os.environ.get(VARIABLE_COPIA)
    if copia:
        rutas.RECETARIO = Path(copia) / "recetario"


def pytest_collectstart(collector):
    if collector.nodeid.endswith(".py"):
        _apuntar({"tipo": "importa", "fichero": _fichero(collector.nodeid)})


def pytest_collectreport(report):
    if report.nodeid.endswith(".py"):
        _apuntar({"tipo": "importado", "fichero": _fichero(report.nodeid),
                  "motivo": _motivo(report) if report.failed else None})


def pytest_collection_finish(session):
    _apuntar({"tipo": "recogidos", "tests": [item.nodeid for item in session.items]})


def pytest_runtest_logstart(nodeid, location):
    _apuntar({"tipo": "empieza", "test": nodeid})


def pytest_runtest_logreport(report):
    if report.failed or report.skipped or report.when in ("call", "teardown"):
        _apuntar({"tipo": "resultado", "test": report.nodeid, "fase": report.when,
                  "resultado": report.outcome, "motivo": _motivo(report) if report.failed else ""})


# ---------------------------------------------------------------- correr los tests aparte


def _modulos(carpeta):
    return sorted(p.stem for p in Path(carpeta).glob("*.py"))


def _lecciones_de_los_modulos(carpeta_punto):
    """{módulo: primera lección cuyo punto de control lo tiene}."""
    leccion_de = {}
    for hermano in sorted(Path(carpeta_punto).parent.glob("[0-9][0-9]_*")):
        for m in _modulos(hermano):
            leccion_de.setdefault(m, int(hermano.name[:2]))
    return leccion_de


def _copiar_espacio(espacio, destino):
    """Los ficheros de código del espacio (sin tests/, cachés, copias ni conftest.py) a `destino`."""
    destino.mkdir(parents=True)
    for relativa in rutas.ficheros(espacio):
        origen = Path(espacio) / relativa
        if Path(relativa).name in NO_SE_COPIAN or not origen.is_file():
            continue
        (destino / relativa).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origen, destino / relativa)


def _armar(espacio, carpeta_punto, raiz):
    """La forma que esperan los tests, en `raiz`: checkpoints/NN/ con tu espacio y sus tests, los
    otros puntos de control sin tests, recetario/, y las carpetas de HOME y TMPDIR."""
    carpeta_punto = Path(carpeta_punto)
    puntos = raiz / "checkpoints"
    for hermano in sorted(carpeta_punto.parent.glob("[0-9][0-9]_*")):
        if hermano.is_dir() and hermano.name != carpeta_punto.name:
            shutil.copytree(hermano, puntos / hermano.name,
                            ignore=shutil.ignore_patterns("tests", "__pycache__", ".*"))
    copia = puntos / carpeta_punto.name
    _copiar_espacio(espacio, copia)
    shutil.copytree(carpeta_punto / "tests", copia / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", ".*"))
    shutil.copytree(rutas.RECETARIO, raiz / "recetario", ignore=shutil.ignore_patterns("__pycache__"))
    for carpeta in ("casa", "temporal"):
        (raiz / carpeta).mkdir()
    (raiz / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return copia


def _entorno(raiz, copia):
    """Las variables del proceso de los tests: sin nada que cambie cómo corre pytest o a qué
    servidor habla el modelo, y con HOME, TMPDIR y el espacio dentro de la carpeta temporal."""
    fuera = {"ANTHROPIC_BASE_URL", "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSTARTUP", "PYTHONHOME"}
    entorno = {k: v for k, v in os.environ.items() if k not in fuera}
    entorno.update({"HOME": str(raiz / "casa"), "TMPDIR": str(raiz / "temporal"),
                    rutas.VARIABLE_ESPACIO: str(copia), VARIABLE_COPIA: str(raiz),
                    "PYTHONPATH": str(rutas.RAIZ), "PYTHONDONTWRITEBYTECODE": "1"})
    return entorno


def _terminado(proceso):
    """Si el proceso ha terminado, sin recogerlo: mientras no se recoge, su número sigue siendo
    suyo y el de su grupo, así que matar el grupo no puede alcanzar a otro."""
    return os.waitid(os.P_PID, proceso.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def correr_tests(copia, raiz, limite, parar=None):
    """Corre pytest con los tests de `copia` en su propio grupo de procesos; al acabar, al pasar
    `limite` segundos o si alguien activa `parar` (un threading.Event: el Ctrl-C de `calificar`),
    mata el grupo entero (lo que dejara en marcha el código del alumno, también). Devuelve el código de salida de pytest (None si no terminó a tiempo) y lo que escribió."""
    # Sin los complementos que estos tests no usan: nbval (carga todo Jupyter) y el de hypothesis
    # (carga hypothesis entero, medio segundo de CPU, aunque ningún test lo use; los que lo usan lo
    # importan ellos y corren igual, y un fallo se cuenta igual).
    orden = [sys.executable, "-P", "-m", "pytest", "-q", "-p", "curso.calificar", "-p", "no:nbval",
             "-p", "no:hypothesispytest", "-p", "no:cacheprovider", "--continue-on-collection-errors", "-c", str(raiz / "pytest.ini"), "--rootdir", str(raiz),
             str(copia / "tests")]
    with open(raiz / "salida.txt", "wb") as salida:
        proceso = subprocess.Popen(orden, cwd=copia, env=_entorno(raiz, copia), stdin=subprocess.DEVNULL,
                                   stdout=salida, stderr=subprocess.STDOUT, start_new_session=True)
        fin = time.monotonic() + limite
        try:
            while not _terminado(proceso) and time.monotonic() < fin and not (parar and parar.is_set()):
                time.sleep(PAUSA)
            colgado = not _terminado(proceso)
        finally:
            try:
                os.killpg(proceso.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proceso.wait()
    texto = (raiz / "salida.txt").read_text(encoding="utf-8", errors="replace")
    return (None if colgado else proceso.returncode), texto


def _borrar(carpeta):
    """Borra `carpeta` aunque el código del alumno haya dejado dentro algo sin permiso de escritura."""
    def dar_permiso(funcion, ruta, _error):
        os.chmod(os.path.dirname(ruta), stat.S_IRWXU)
        if os.path.isdir(ruta) and not os.path.islink(ruta):
            os.chmod(ruta, stat.S_IRWXU)
        funcion(ruta)
    shutil.rmtree(carpeta, onerror=dar_permiso)


def comprobar_en(espacio, carpeta_punto, limite=LIMITE, parar=None):
    """Corre los tests de `carpeta_punto` contra los módulos de `espacio`, aparte; la Comprobacion."""
    carpeta_punto = Path(carpeta_punto)
    numero, nombre = int(carpeta_punto.name[:2]), carpeta_punto.name[3:]
    modulos = _modulos(carpeta_punto)
    ficheros_de_test = sorted(p.name for p in (carpeta_punto / "tests").glob("test_*.py"))
    raiz = Path(tempfile.mkdtemp(prefix="curso-comprobar-"))
    try:
        copia = _armar(espacio, carpeta_punto, raiz)
        presentes = set(_modulos(copia))
        codigo, salida = correr_tests(copia, raiz, limite, parar)
        eventos = leer_eventos((raiz / INFORME).read_text(encoding="utf-8", errors="replace")
                               if (raiz / INFORME).exists() else "")
    finally:
        _borrar(raiz)
    lineas = lineas_de(modulos, presentes, ficheros_de_test, eventos, codigo, limite,
                       _lecciones_de_los_modulos(carpeta_punto), salida)
    return Comprobacion(numero, nombre, lineas, limite)


# ---------------------------------------------------------------- las dos órdenes


def comprobar(n, espacio=None, limite=None):
    """`python -m curso comprobar N`: los tests del punto de control N contra tu espacio (o contra
    `espacio`), con `limite` segundos como mucho (LIMITE si no se dice). Escribe una línea por
    módulo y devuelve 0 si todo pasa, 1 si no, 2 si N no existe."""
    from curso import puntos
    limite = limite or LIMITE
    try:
        _, carpeta = puntos.punto_de_control(n, orden="comprobar")
    except puntos.PuntoDeControlDesconocido as error:
        print(error, file=sys.stderr)
        return puntos.ARGUMENTO_INVALIDO
    de_donde = f"{Path(espacio)}/" if espacio else puntos.describir_espacio()
    espacio = Path(espacio).resolve() if espacio else rutas.espacio()
    if not espacio.is_dir():
        print(f"✘ No hay ningún espacio en {espacio}: escribe primero algún módulo "
              f"(o di cuál con --espacio CARPETA).")
        return 1
    print(f"Corriendo los tests del punto de control {carpeta.name[:2]} contra tu código "
          f"(como mucho {limite:g} s)…", flush=True)
    try:
        comprobacion = comprobar_en(espacio, carpeta, limite)
    except KeyboardInterrupt:  # los tests ya están parados y su carpeta temporal, borrada
        print("Interrumpido: se han parado los tests.", file=sys.stderr)
        return INTERRUMPIDO
    print(informe(comprobacion, de_donde))
    return 0 if comprobacion.en_verde else 1


NOMBRE_DE_LA_TABLA = "calificaciones"
INTERRUMPIDO = 130  # el código de salida de la costumbre tras un Ctrl-C (128 + SIGINT)


def espacios_de(carpeta, salida=None):
    """[(alumno, su espacio)]: cada subcarpeta de `carpeta` (menos las ocultas y la de salida);
    si una no tiene módulos pero tiene mi_agente/ dentro, su espacio es ese."""
    alumnos = []
    for sub in sorted(Path(carpeta).iterdir()):
        if not sub.is_dir() or sub.name.startswith(".") or (salida and sub.resolve() == Path(salida).resolve()):
            continue
        dentro = sub / rutas.ESPACIO_POR_DEFECTO.name
        alumnos.append((sub.name, dentro if not any(sub.glob("*.py")) and dentro.is_dir() else sub))
    return alumnos


def _comprobar_celda(espacio, punto, limite, parar):
    """comprobar_en, pero un espacio que ni se puede copiar es una celda roja, no una clase parada."""
    try:
        return comprobar_en(espacio, punto, limite, parar)
    except Exception as error:  # noqa: BLE001 - lo raro del espacio de un alumno no para a los demás
        return Comprobacion(int(punto.name[:2]), punto.name[3:], [Linea(
            "el espacio", MAL, f"no se pudo comprobar: {type(error).__name__}: {error}")], limite)


def calificar(carpeta, salida=None, limite=None, lecciones=None, a_la_vez=1):
    """`python -m curso calificar CARPETA`: `comprobar` de cada lección con cada alumno, `a_la_vez`
    comprobaciones a la vez, y la tabla en CARPETA (o en `salida`): calificaciones.csv y
    calificaciones.html. Devuelve 0, o 2 si CARPETA no es una carpeta o una lección no existe."""
    carpeta, limite = Path(carpeta), limite or LIMITE
    if not carpeta.is_dir():
        print(f"✘ {carpeta} no es una carpeta: calificar necesita una con un espacio por alumno.",
              file=sys.stderr)
        return 2
    puntos = {n: c for n, c in rutas.puntos_de_control().items() if (c / "tests").is_dir()}
    if lecciones is not None:
        desconocidas = sorted(set(lecciones) - set(puntos))
        if desconocidas:
            print(f"✘ No hay punto de control con tests para la lección "
                  f"{', '.join(str(n) for n in desconocidas)}.", file=sys.stderr)
            return 2
        puntos = {n: puntos[n] for n in sorted(set(lecciones))}
    salida = Path(salida) if salida else carpeta
    alumnos = espacios_de(carpeta, salida)
    trabajos = [(alumno, espacio, n) for alumno, espacio in alumnos for n in puntos]
    print(f"{len(alumnos)} alumnos × {len(puntos)} lecciones, {a_la_vez} a la vez "
          f"(como mucho {limite:g} s cada una):", flush=True)
    celdas = {alumno: {} for alumno, _ in alumnos}
    hechas = 0

    def una(trabajo):
        alumno, espacio, n = trabajo
        t = time.monotonic()
        return trabajo, _comprobar_celda(espacio, puntos[n], limite, parar), time.monotonic() - t

    # Un Ctrl-C llega solo a este hilo: `parar` corta los tests que estén corriendo (sus procesos
    # están en otro grupo y no lo reciben) y no empieza ninguno más.
    parar = threading.Event()
    grupo = ThreadPoolExecutor(max_workers=a_la_vez)
    try:
        for hecha in as_completed([grupo.submit(una, t) for t in trabajos]):
            (alumno, _, n), comprobacion, segundos = hecha.result()
            celdas[alumno][n] = comprobacion
            hechas += 1
            print(f"[{hechas}/{len(trabajos)}] {alumno} · lección {n:02d}: {celda(comprobacion)} "
                  f"({segundos:.0f} s)", flush=True)
    except KeyboardInterrupt:
        print("Interrumpido: se han parado los tests que corrían y no se escribe ninguna tabla.",
              file=sys.stderr)
        return INTERRUMPIDO
    finally:
        parar.set()
        grupo.shutdown(wait=True, cancel_futures=True)
    filas = [(alumno, celdas[alumno]) for alumno, _ in alumnos]
    nombres = {n: c.name[3:] for n, c in puntos.items()}
    salida.mkdir(parents=True, exist_ok=True)
    (salida / f"{NOMBRE_DE_LA_TABLA}.csv").write_text(tabla_csv(filas, nombres), encoding="utf-8")
    (salida / f"{NOMBRE_DE_LA_TABLA}.html").write_text(pagina_html(filas, nombres, limite), encoding="utf-8")
    print(f"Escrito: {salida / NOMBRE_DE_LA_TABLA}.csv y {NOMBRE_DE_LA_TABLA}.html")
    return 0
