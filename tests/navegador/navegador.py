"""Piezas del test del navegador: JupyterLab sin pantalla, el Chromium de Debian y Playwright.

Lo usan los tests de esta carpeta (`test_navegador.py`, lección 02: el explorable de la ventana;
`test_navegador_carreras.py`, `test_navegador_linea_de_tiempo.py`); un widget nuevo añade su test
en pocas líneas, con las fixtures `pagina` y `servidor` de conftest.py (las clases CSS de este
ejemplo son inventadas):

    def test_el_explorable_de_las_carreras_responde(pagina, servidor):
        abrir_y_ejecutar(pagina, servidor, RAIZ / "solutions" / "04_resumenes_en_sqlite.ipynb")
        antes = texto_de(pagina, "pre.veredicto-carreras")
        poner_deslizador(pagina, "carreras-paso", 3)
        despues = esperar_texto_distinto(pagina, "pre.veredicto-carreras", antes)
        assert ...
        captura(pagina, "test_el_explorable_de_las_carreras_responde", mostrar="pre.veredicto-carreras")

Qué hace cada pieza:

- `exigir_navegador()`: si falta Chromium o Playwright, salta el test con la razón (en la máquina de
  quien aprende) o lo hace fallar (en CI, con la variable `CI` puesta: allí el test debe correr).
- `servidor_jupyter(carpeta)`: arranca JupyterLab en 127.0.0.1, en un puerto libre y sin token,
  sirviendo `carpeta`, sin nada que salga a la red; lo para (y a sus núcleos) al salir.
- `abrir_navegador()` lanza `/usr/bin/chromium` sin pantalla; `nueva_pagina(navegador)`, una pestaña.
- `abrir_y_ejecutar(pagina, url, cuaderno)`: COPIA el cuaderno, sin sus salidas guardadas, a la
  carpeta del servidor (el navegador no toca nunca los ficheros del repositorio), lo abre, espera al
  núcleo y ejecuta todas sus celdas; si alguna falla, falla con el error de la celda.
- `unico`, `texto_de`, `poner_deslizador`, `esperar_texto_distinto`: encontrar un widget, leer lo
  que muestra, mover un `IntSlider` a un valor exacto y esperar a que el núcleo conteste.
- `exigir_maquetacion(pagina, selector)`: a `ANCHO` píxeles (la pestaña se abre con ese ancho), dentro
  de `selector` ningún texto se parte a mitad de palabra (`palabras_partidas`) y ningún rótulo sale
  cortado con «…» (`rotulos_cortados`).
- `captura(pagina, nombre)`: guarda `artefactos/navegador/<nombre>.png`.
"""
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

try:
    from playwright.sync_api import TimeoutError as EsperaAgotada
except ImportError:  # sin Playwright, exigir_navegador() salta el test (o lo hace fallar) antes
    class EsperaAgotada(Exception):
        """No se usa: sin Playwright no se llega a esperar nada."""

RAIZ = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARTEFACTOS = RAIZ / "artefactos" / "navegador"

# Opciones de Chromium: sin espacio aislado (corre como root en CI), sin GPU, y sin las conexiones
# que hace por su cuenta (actualizaciones, sincronización, QUIC): la red de la máquina está cerrada
# y solo hablamos con 127.0.0.1.
OPCIONES_CHROMIUM = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]

# Esperas generosas: la máquina de CI tiene dos núcleos y puede estar ocupada. No son aserciones
# de tiempo: solo el límite a partir del cual el test se da por colgado y lo dice.
ESPERA_SERVIDOR = 90  # segundos hasta que JupyterLab contesta /api/status
ESPERA_NUCLEO = 90  # segundos hasta que el cuaderno está abierto y su núcleo, desocupado
ESPERA_EJECUCION = 120  # segundos para «Run All Cells»
ESPERA_WIDGET = 30  # segundos para que un widget aparezca o cambie tras mover un deslizador
SONDEO = 0.1  # segundos entre dos preguntas al servidor mientras arranca
ANCHO, ALTO = 1400, 1024  # la ventana del navegador: la maquetación se comprueba a este ancho

# Complementos de JupyterLab que irían a la red: las noticias y la comprobación de versiones
# (announcements) y el gestor de extensiones (consulta PyPI).
COMPLEMENTOS_DESACTIVADOS = ["@jupyterlab/apputils-extension:announcements",
                             "@jupyterlab/extensionmanager-extension"]

# Ajustes de usuario de JupyterLab para el servidor de pruebas: sin noticias ni avisos de versión,
# y todas las celdas del cuaderno en la página (con la ventana virtual, una celda fuera de la vista
# podría no estar en el DOM cuando el test la busca).
AJUSTES = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


# --- ¿Se puede correr? ---------------------------------------------------------------------

def exigir_navegador():
    """Salta el test si falta Chromium o Playwright; en CI (variable `CI`), lo hace fallar."""
    motivo = None
    if not CHROMIUM.exists():
        motivo = (f"{CHROMIUM} no está: instala chromium para este test "
                  "(apt-get install chromium; el test del navegador usa el Chromium de Debian)")
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            motivo = ("no se puede importar playwright: instala los requisitos "
                      "(python -m pip install -r requirements.txt)")
    if motivo is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"En CI el test del navegador tiene que correr, pero {motivo}", pytrace=False)
    pytest.skip(motivo)


# --- El servidor ---------------------------------------------------------------------------

def puerto_libre():
    """Un puerto de 127.0.0.1 libre ahora (el sistema elige uno al enlazar el puerto 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _escribir_json(ruta, datos):
    ruta.parent.mkdir(parents=True, exist_ok=True)
    ruta.write_text(json.dumps(datos), encoding="utf-8")


def _preparar_configuracion(carpeta):
    """Una configuración de Jupyter nueva (la del usuario no cuenta) con lo de AJUSTES."""
    _escribir_json(carpeta / "labconfig" / "page_config.json",
                   {"disabledExtensions": {nombre: True for nombre in COMPLEMENTOS_DESACTIVADOS}})
    for nombre, ajustes in AJUSTES.items():
        _escribir_json(carpeta / "lab" / "user-settings" / nombre, ajustes)


def _final_del_registro(registro, lineas=40):
    try:
        return "\n".join(registro.read_text(encoding="utf-8", errors="replace").splitlines()[-lineas:])
    except OSError:
        return "(sin registro)"


def _esperar_estado(url, proceso, registro, espera):
    """Espera a que el servidor conteste /api/status; si muere o tarda demasiado, lo dice."""
    limite = time.monotonic() + espera
    while True:
        if proceso.poll() is not None:
            raise RuntimeError(f"JupyterLab terminó al arrancar (código {proceso.returncode}). "
                               f"Final de su registro ({registro}):\n{_final_del_registro(registro)}")
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=5) as respuesta:
                if respuesta.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > limite:
            raise RuntimeError(f"JupyterLab no contestó en {url}/api/status en {espera} s. "
                               f"Final de su registro ({registro}):\n{_final_del_registro(registro)}")
        time.sleep(SONDEO)


def _parar(proceso):
    """Para el servidor (que cierra sus núcleos) y, si algo queda, su grupo de procesos entero."""
    if proceso.poll() is None:
        proceso.terminate()
        try:
            proceso.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pass
    # El servidor se arrancó en una sesión propia: su grupo son él y sus núcleos, nada más.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proceso.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proceso.wait(timeout=5)


@contextlib.contextmanager
def servidor_jupyter(carpeta, *, espera=ESPERA_SERVIDOR):
    """Arranca JupyterLab sirviendo `carpeta` y devuelve (url, proceso); lo para al salir.

    Escucha solo en 127.0.0.1, en un puerto libre, sin token ni contraseña. Su configuración, sus
    ajustes de usuario, su carpeta de ejecución y el espacio de trabajo de sus núcleos
    (CURSO_ESPACIO) son temporales: el servidor no ve ni toca los del usuario. Las extensiones
    instaladas en el entorno de Python (la de los widgets entre ellas) siguen a la vista.
    """
    carpeta = Path(carpeta).resolve()
    with tempfile.TemporaryDirectory(prefix="curso-navegador-") as tmp:
        tmp = Path(tmp)
        configuracion = tmp / "config"
        _preparar_configuracion(configuracion)
        entorno = dict(os.environ,
                       JUPYTER_CONFIG_DIR=str(configuracion),
                       JUPYTERLAB_SETTINGS_DIR=str(configuracion / "lab" / "user-settings"),
                       JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
                       JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
                       IPYTHONDIR=str(tmp / "ipython"),
                       CURSO_ESPACIO=str(tmp / "espacio"))
        puerto = puerto_libre()
        url = f"http://127.0.0.1:{puerto}"
        orden = [sys.executable, "-m", "jupyter", "lab",
                 "--no-browser",
                 "--ServerApp.ip=127.0.0.1",
                 f"--ServerApp.port={puerto}",
                 "--ServerApp.port_retries=0",
                 # Sin token ni contraseña (los antiguos ServerApp.token y ServerApp.password):
                 "--IdentityProvider.token=",
                 "--PasswordIdentityProvider.hashed_password=",
                 "--allow-root",  # en CI el test corre como root
                 f"--ServerApp.root_dir={carpeta}",
                 "--ServerApp.open_browser=False",
                 "--ServerApp.terminals_enabled=False",
                 "--LabApp.news_url=None",
                 "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                 "--LabApp.extension_manager=readonly",  # sin consultas a PyPI
                 # Deja `window.jupyterapp` a la vista, como hace Galata (los tests de JupyterLab):
                 # así el test ejecuta órdenes de JupyterLab sin depender de menús ni atajos.
                 "--LabApp.expose_app_in_browser=True"]
        registro = tmp / "jupyterlab.log"
        with open(registro, "wb") as salida:
            proceso = subprocess.Popen(orden, cwd=carpeta, env=entorno, stdin=subprocess.DEVNULL,
                                       stdout=salida, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        try:
            _esperar_estado(url, proceso, registro, espera)
            yield url, proceso
        finally:
            _parar(proceso)


# --- El navegador --------------------------------------------------------------------------

@contextlib.contextmanager
def abrir_navegador():
    """Lanza el Chromium de Debian sin pantalla con Playwright; devuelve el navegador."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        navegador = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                      args=OPCIONES_CHROMIUM)
        try:
            yield navegador
        finally:
            navegador.close()


def nueva_pagina(navegador):
    """Una pestaña nueva, con un contexto propio (sin cookies ni almacenamiento de otro test)."""
    contexto = navegador.new_context(viewport={"width": ANCHO, "height": ALTO})
    pagina = contexto.new_page()
    pagina.set_default_timeout(ESPERA_WIDGET * 1000)
    return pagina


def cuaderno_sin_salidas(cuaderno):
    """El contenido de `cuaderno` (un dict de nbformat) sin salidas ni estado de widgets guardados.

    Así lo que el test ve en la página lo ha producido esta ejecución: un widget guardado en el
    fichero (JupyterLab lo dibuja al abrirlo, aunque el núcleo no haya corrido) no cuenta.
    """
    datos = json.loads(Path(cuaderno).read_text(encoding="utf-8"))
    datos.get("metadata", {}).pop("widgets", None)
    for celda in datos.get("cells", []):
        if celda.get("cell_type") == "code":
            celda["outputs"] = []
            celda["execution_count"] = None
    return datos


# `page.evaluate` de Playwright espera sin límite: cada espera de estos guiones compite con un
# temporizador y, si éste gana, devuelve 'tiempo' en vez de colgar el test.
_JS_CON_LIMITE = """const conLimite = (promesa, limite) => Promise.race(
  [promesa, new Promise(r => setTimeout(() => r('tiempo'), limite))]);"""

# Dentro de la página: guarda la copia del cuaderno en el servidor (por su API de contenidos, como
# al arrastrar un fichero), la abre y espera a que su núcleo esté listo y desocupado.
_JS_SUBIR_Y_ABRIR = """async ([nombre, contenido, limite]) => {
  %s
  const abrir = async () => {
    const app = window.jupyterapp;
    await app.started;
    await app.restored;
    await app.serviceManager.contents.save(
      nombre, {type: 'notebook', format: 'json', content: contenido});
    const panel = await app.commands.execute('docmanager:open', {path: nombre, factory: 'Notebook'});
    await panel.context.ready;
    await panel.sessionContext.ready;
    app.shell.activateById(panel.id);
    const fin = Date.now() + limite;
    while (Date.now() < fin) {
      const nucleo = panel.sessionContext.session && panel.sessionContext.session.kernel;
      if (nucleo && nucleo.status === 'idle') return 'idle';
      await new Promise(r => setTimeout(r, 100));
    }
    return 'tiempo';
  };
  return await conLimite(abrir(), limite);
}""" % _JS_CON_LIMITE

# «Run All Cells» en el cuaderno activo: la orden devuelve una promesa que se cumple cuando todas
# las celdas han corrido (true) o cuando una ha fallado (false).
_JS_EJECUTAR_TODO = """async (limite) => {
  %s
  return await conLimite(window.jupyterapp.commands.execute('notebook:run-all-cells'), limite);
}""" % _JS_CON_LIMITE

SELECTOR_ERRORES = ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"


def abrir_y_ejecutar(pagina, url, cuaderno, *, espera=ESPERA_EJECUCION):
    """Copia `cuaderno` al servidor de `url`, lo abre en `pagina` y ejecuta todas sus celdas.

    La copia va sin salidas (ver `cuaderno_sin_salidas`) a la raíz del servidor, con el mismo
    nombre: el fichero del repositorio no se toca. Falla con un mensaje claro si el núcleo no
    arranca, si alguna celda da error (con el texto del error) o si queda alguna sin terminar.
    """
    cuaderno = Path(cuaderno)
    # `?reset`: un espacio de JupyterLab vacío, sin las pestañas que dejó abiertas otro test
    # (sus widgets seguirían en la página, ocultos, y podrían llevar las mismas clases).
    pagina.goto(f"{url}/lab?reset", wait_until="domcontentloaded", timeout=ESPERA_NUCLEO * 1000)
    pagina.wait_for_function("() => window.jupyterapp !== undefined", timeout=ESPERA_NUCLEO * 1000)
    estado = pagina.evaluate(_JS_SUBIR_Y_ABRIR,
                             [cuaderno.name, cuaderno_sin_salidas(cuaderno), ESPERA_NUCLEO * 1000])
    if estado != "idle":
        raise AssertionError(f"{cuaderno.name} no quedó abierto con su núcleo listo en "
                             f"{ESPERA_NUCLEO} s.")

    todas_bien = pagina.evaluate(_JS_EJECUTAR_TODO, espera * 1000)
    if todas_bien == "tiempo":
        raise AssertionError(f"«Run All Cells» no terminó en {espera} s con {cuaderno.name}.")
    if not todas_bien:
        texto = "\n---\n".join(pagina.locator(SELECTOR_ERRORES).all_inner_texts())
        raise AssertionError(f"Alguna celda de {cuaderno.name} falló al ejecutar todo:\n"
                             f"{texto or '(no se ve el error en la página)'}")
    pendientes = pagina.locator(".jp-CodeCell .jp-InputPrompt", has_text="[*]").count()
    if pendientes:
        raise AssertionError(f"{pendientes} celdas de {cuaderno.name} siguen sin terminar.")


# --- Los widgets ---------------------------------------------------------------------------

def unico(pagina, selector, *, espera=ESPERA_WIDGET):
    """El localizador del único elemento que casa con `selector`, cuando ya está en la página.

    Si no aparece ninguno en `espera` segundos, o hay varios, falla diciéndolo: un widget mostrado
    dos veces es un error del cuaderno, no algo entre lo que el test deba elegir.
    """
    elementos = pagina.locator(selector)
    try:
        elementos.first.wait_for(state="visible", timeout=espera * 1000)
    except EsperaAgotada as error:
        raise AssertionError(f"No aparece {selector} en la página en {espera} s: "
                             "¿se dibujó el widget?") from error
    cuantos = elementos.count()
    if cuantos != 1:
        raise AssertionError(f"Hay {cuantos} elementos {selector} en la página; el test espera uno.")
    return elementos


def texto_de(pagina, selector):
    """El texto visible del único elemento de la página que casa con `selector`."""
    return unico(pagina, selector).inner_text()


def esperar_texto_distinto(pagina, selector, anterior, *, espera=ESPERA_WIDGET):
    """Espera a que el texto de `selector` deje de ser `anterior` y devuelve el nuevo."""
    try:
        pagina.wait_for_function(
            """([selector, anterior]) => {
                 const e = document.querySelectorAll(selector);
                 return e.length === 1 && e[0].innerText !== anterior;
               }""",
            arg=[selector, anterior], timeout=espera * 1000)
    except EsperaAgotada as error:
        raise AssertionError(f"El texto de {selector} no cambió en {espera} s; sigue siendo:\n"
                             f"{anterior}") from error
    return texto_de(pagina, selector)


def poner_deslizador(pagina, clase_css, valor):
    """Pone en `valor` el IntSlider de ipywidgets 8 que lleva la clase `clase_css`.

    Escribe el número en la lectura editable del deslizador (`.widget-readout`) y pulsa Intro,
    como haría quien aprende; luego espera a que el tirador del deslizador (no la lectura, que
    muestra lo escrito aunque el widget no lo acepte) esté en ese valor. Si el valor está fuera
    del rango, el widget lo corrige y aquí se ve.
    """
    deslizador = unico(pagina, f".widget-slider.{clase_css}")
    lectura = deslizador.locator(".widget-readout")
    tirador = deslizador.locator(".noUi-handle")
    lectura.scroll_into_view_if_needed()
    lectura.fill(str(valor))
    lectura.press("Enter")
    try:
        pagina.wait_for_function(
            "([tirador, valor]) => Number(tirador.getAttribute('aria-valuenow')) === valor",
            arg=[tirador.element_handle(), valor], timeout=ESPERA_WIDGET * 1000)
    except EsperaAgotada as error:
        raise AssertionError(f"El deslizador .{clase_css} no quedó en {valor}: su tirador está en "
                             f"{tirador.get_attribute('aria-valuenow')} y su lectura muestra "
                             f"{lectura.inner_text()!r}") from error


# Dentro de la página: cada palabra (letras y cifras seguidas, dentro de un mismo nodo de texto)
# cuya primera y última letra caen en líneas distintas; partir una línea en un signo (tras una coma
# de un JSON, por ejemplo) es legítimo. Se mira con Range.getClientRects, letra a
# letra, lo que de verdad pintó el navegador; lo que no se ve (sin rectángulos) no cuenta.
_JS_PALABRAS_PARTIDAS = """(selector) => {
  const partidas = [];
  const rango = document.createRange();
  const caja = (nodo, i) => { rango.setStart(nodo, i); rango.setEnd(nodo, i + 1);
                              return rango.getClientRects()[0]; };
  for (const raiz of document.querySelectorAll(selector)) {
    const andador = document.createTreeWalker(raiz, NodeFilter.SHOW_TEXT);
    let nodo;
    while ((nodo = andador.nextNode())) {
      const palabras = /[\\p{L}\\p{N}_]+/gu;  // letras y cifras: partir en un signo no es partir una palabra
      let encaje;
      while ((encaje = palabras.exec(nodo.textContent))) {
        if (encaje[0].length < 2) continue;
        const primera = caja(nodo, encaje.index);
        const ultima = caja(nodo, encaje.index + encaje[0].length - 1);
        if (primera && ultima && ultima.top - primera.top > primera.height / 2) {
          partidas.push(encaje[0]);
        }
      }
    }
  }
  return partidas;
}"""

# Dentro de la página: los rótulos (botones, descripciones de los deslizadores) cuyo texto no cabe
# en su caja: el navegador lo recorta, con «…» en ipywidgets (text-overflow: ellipsis).
_JS_ROTULOS_CORTADOS = """(selector) => {
  const cortados = [];
  for (const raiz of document.querySelectorAll(selector)) {
    for (const e of raiz.querySelectorAll('button, .widget-label, label')) {
      if (e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1) {
        cortados.push(`${e.innerText.trim()} (${e.scrollWidth} px en ${e.clientWidth})`);
      }
    }
  }
  return cortados;
}"""


def palabras_partidas(pagina, selector):
    """Las palabras que el navegador parte entre dos líneas dentro de `selector` («recibida / s»)."""
    return pagina.evaluate(_JS_PALABRAS_PARTIDAS, selector)


def rotulos_cortados(pagina, selector):
    """Los rótulos de `selector` que no caben en su caja y salen cortados («lo descarta el har…»)."""
    return pagina.evaluate(_JS_ROTULOS_CORTADOS, selector)


def exigir_maquetacion(pagina, selector):
    """Falla si, dentro de `selector`, alguna palabra se parte entre dos líneas o algún rótulo sale
    cortado, a la anchura de la pestaña (`ANCHO`)."""
    partidas = palabras_partidas(pagina, selector)
    assert not partidas, (f"A {ANCHO} px, en {selector} se parten a mitad de palabra: "
                          + ", ".join(repr(p) for p in partidas))
    cortados = rotulos_cortados(pagina, selector)
    assert not cortados, f"A {ANCHO} px, en {selector} salen cortados los rótulos: " + "; ".join(cortados)


def captura(pagina, nombre, *, mostrar=None):
    """Guarda una captura de la página en artefactos/navegador/<nombre>.png y devuelve la ruta.

    `mostrar`: un selector que se lleva a la vista antes (JupyterLab no se desplaza como una
    página: la captura es lo que cabe en la ventana del navegador).
    """
    if mostrar:
        unico(pagina, mostrar).scroll_into_view_if_needed()
    ARTEFACTOS.mkdir(parents=True, exist_ok=True)
    ruta = ARTEFACTOS / f"{nombre}.png"
    pagina.screenshot(path=str(ruta))
    return ruta
