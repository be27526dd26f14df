"""Para `aparte`: el complemento de pytest que apunta, evento a evento, lo que pasa en el proceso de los tests.

Lo carga `curso/comprobaciones/aparte.py` (`-p curso.comprobaciones.registro_de_tests`) en el pytest que corre los tests de un
punto de control contra el código de un alumno. Cada evento es una línea JSON en el fichero
`informe.jsonl` de la carpeta temporal (la variable CURSO_COMPROBAR_COPIA), que se abre y se
cierra en cada escritura: lo escrito sobrevive a un SIGKILL, y quien vigila el proceso lo lee
mientras corre para saber qué test lleva cuánto tiempo.

Los eventos: `importa`/`importado` (un fichero de tests, y si no se pudo importar, por qué),
`recogidos` (los tests que van a correr), `empieza` (un test) y `resultado` (una fase de un
test que falla o se salta, o la llamada y la recogida de uno que pasa). Si un test falla porque
llegó al esbozo de un ejercicio (su NotImplementedError), el resultado dice de qué ejercicio.

Antes de importar ningún test, `recetario/` pasa a ser la copia de la carpeta temporal.
"""
import faulthandler
import json
import os
import re
import signal
from pathlib import Path

import pytest

from curso import rutas
from curso.comprobaciones.aparte import (INFORME, NO_SE_CUMPLE, PILA, VARIABLE_A_LA_VISTA, VARIABLE_COPIA,
                                         en_castellano, motivo_corto)

_pila = None  # el fichero de PILA, abierto mientras viva el proceso
# El aviso de un esbozo, también dentro del texto de otro proceso (un test que corre correr.py).
AVISO_EN_EL_TEXTO = re.compile(r"NotImplementedError: Ejercicio (\d+(?:\.\d+)+) pendiente")


def _apuntar(evento):
    copia = os.environ.get(VARIABLE_COPIA)
    if copia:
        with open(Path(copia) / INFORME, "a", encoding="utf-8") as f:
            f.write(json.dumps(evento, ensure_ascii=False) + "\n")


def _fichero(nodeid):
    """test_bucle.py de «checkpoints/01_el_bucle/tests/test_bucle.py::test_x»."""
    return Path(nodeid.split("::")[0]).name


def _motivo(informe_de_pytest):
    """Por qué falló un test, en una línea y en castellano (`aparte.en_castellano`): quien la lee es
    quien escribió el código, no quien escribió el test."""
    crash = getattr(informe_de_pytest.longrepr, "reprcrash", None)
    if crash is None:  # un error al recoger o al importar: sus líneas «E   …»
        return motivo_corto(a_la_vista(str(informe_de_pytest.longrepr)))
    # «Failed: » es lo que pytest.fail pone delante (la comprobación de un ejercicio lo dice así)
    return motivo_corto(en_castellano(a_la_vista(crash.message.removeprefix("Failed: "))) or NO_SE_CUMPLE)


def a_la_vista(texto):
    """El texto con la carpeta de los módulos de la copia escrita como la del espacio del alumno
    (VARIABLE_A_LA_VISTA: así un `cannot import name` apunta a SU agentes.py), y el resto de la
    carpeta temporal como «…»."""
    vista, espacio = os.environ.get(VARIABLE_A_LA_VISTA), os.environ.get(rutas.VARIABLE_ESPACIO)
    if vista and espacio:
        texto = texto.replace(espacio.rstrip("/") + "/", vista)
    return texto.replace(os.environ.get(VARIABLE_COPIA, "\0"), "…")


def ejercicio_pendiente(excepcion, texto=""):
    """El número del ejercicio cuyo esbozo alcanzó el test ("3.2"), o None: el NotImplementedError
    de la excepción o de las que la causaron, o el aviso en el texto del fallo (el de otro proceso)."""
    from curso.comprobaciones.ejercicios import esbozo_alcanzado
    from curso.comprobaciones.esbozos import ejercicio_del_aviso
    esbozo = esbozo_alcanzado(excepcion) if excepcion is not None else None
    numero = ejercicio_del_aviso(esbozo) if esbozo is not None else None
    if numero is None:
        encontrado = AVISO_EN_EL_TEXTO.search(texto)
        numero = encontrado.group(1) if encontrado else None
    return numero


def modulo_donde_fallo(excinfo):
    """El módulo del espacio (sin .py) del marco más reciente de la traza que es suyo, o None: así
    un fallo en un test que prueba varios módulos dice cuál de ellos lanzó."""
    copia = os.environ.get(rutas.VARIABLE_ESPACIO)
    if not copia:
        return None
    for entrada in reversed(excinfo.traceback):
        ruta = Path(str(entrada.path))
        if ruta.parent == Path(copia) and ruta.suffix == ".py":
            return ruta.stem
    return None


def pytest_configure(config):
    """Antes de importar ningún test: recetario/ es la copia de la carpeta temporal, y con SIGUSR1
    el proceso escribe en PILA dónde está cada hilo (faulthandler lo hace desde C, aunque el hilo
    esté en un bucle sin fin): así, quien lo vigila sabe en qué módulo se colgó antes de pararlo."""
    global _pila
    copia = os.environ.get(VARIABLE_COPIA)
    if copia:
        rutas.RECETARIO = Path(copia) / "recetario"
        _pila = open(Path(copia) / PILA, "w", encoding="utf-8")
        faulthandler.register(signal.SIGUSR1, file=_pila, all_threads=True)
        _apuntar({"tipo": "proceso", "pid": os.getpid()})


def pytest_collectstart(collector):
    if collector.nodeid.endswith(".py"):
        _apuntar({"tipo": "importa", "fichero": _fichero(collector.nodeid)})


def donde_no_se_importa(texto):
    """«mi_agente/calentamiento.py, línea 1: `import paquete`»: el último marco de un módulo de la
    copia (no de sus tests) en la traza de un error al importar, o ""."""
    copia = os.environ.get(rutas.VARIABLE_ESPACIO, "\0").rstrip("/")
    # La ruta sale relativa a la carpeta de trabajo (la copia) o a la raíz, o absoluta.
    marcos = re.findall(rf"(?m)^(?:{re.escape(copia)}/|\S*checkpoints/[^/\s]+/)?(\w+\.py):(\d+): in <module>\n\s+(.+)$",
                        str(texto))
    if not marcos:
        return ""
    fichero, linea, fuente = marcos[-1]
    vista = os.environ.get(VARIABLE_A_LA_VISTA) or f"{copia}/"
    return f"{vista}{fichero}, línea {linea}: `{fuente.strip()}`"


def pytest_collectreport(report):
    if report.nodeid.endswith(".py"):
        motivo = None
        if report.failed:
            motivo, donde = _motivo(report), donde_no_se_importa(report.longrepr)
            motivo = f"{motivo} · en {donde}" if donde else motivo
        _apuntar({"tipo": "importado", "fichero": _fichero(report.nodeid), "motivo": motivo})


def pytest_collection_finish(session):
    _apuntar({"tipo": "recogidos", "tests": [item.nodeid for item in session.items]})


def pytest_runtest_logstart(nodeid, location):
    _apuntar({"tipo": "empieza", "test": nodeid})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Al informe de una fase que falla le pega el ejercicio cuyo esbozo alcanzó, si alguno."""
    hecho = yield
    informe = hecho.get_result()
    if informe.failed and call.excinfo is not None:
        informe.curso_pendiente = ejercicio_pendiente(call.excinfo.value, str(informe.longrepr))
        informe.curso_donde = modulo_donde_fallo(call.excinfo)


def pytest_runtest_logreport(report):
    if report.failed or report.skipped or report.when in ("call", "teardown"):
        evento = {"tipo": "resultado", "test": report.nodeid, "fase": report.when,
                  "resultado": report.outcome, "motivo": _motivo(report) if report.failed else ""}
        if report.skipped:
            evento["motivo"] = motivo_corto(report.longrepr[2] if isinstance(report.longrepr, tuple)
                                            else report.longrepr)
        for campo in ("pendiente", "donde"):
            valor = getattr(report, f"curso_{campo}", None)
            if valor:
                evento[campo] = valor
        _apuntar(evento)
