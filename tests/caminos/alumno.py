"""Un alumno de verdad para los tests de los caminos: abre los cuadernos en núcleos de Jupyter de
verdad, con `notebooks/` como directorio de trabajo (como JupyterLab), y lleva un solo espacio de
trabajo de una lección a otra.

`Alumno(carpeta)` tiene su espacio (`carpeta/espacio`, la variable CURSO_ESPACIO) y su carpeta
temporal (`carpeta/tmp`, TMPDIR), que heredan sus núcleos. `alumno.abrir(3)` abre la lección 03 en un
núcleo nuevo; `cuaderno.ejecutar(fuente)` corre una celda y devuelve lo que escribió y si lanzó.
Cada celda del cuaderno del alumno se conoce por su id, con su texto resuelto al lado
(`solutions/`): así un camino puede correr el esbozo, comprobar, y luego correr la solución en la
misma celda, como haría quien la completa.
"""
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import KernelManager

from curso import rutas
from curso.material import una_vez

SEGUNDOS_POR_CELDA = 300  # una celda que tarda más está colgada
# Una celda que no es del alumno: escribe los nombres del curso que el cuaderno ya no tiene como suyos.
COMPROBAR_AYUDANTES = ("print(*[__n for __n in ('comprobar', 'pista', 'solucion', 'preparar', 'comparar') "
                       "if getattr(globals().get(__n), '__module__', None) != 'curso.alumno.cuaderno'])")
TRAZA = "Traceback (most recent call last)"


@dataclass
class Celda:
    id: str
    tipo: str
    alumno: str  # el texto del cuaderno del alumno (con esbozos)
    resuelta: str  # el de solutions/
    metadatos: dict = field(default_factory=dict)

    @property
    def ejercicios(self):
        """Los ejercicios de la celda ("1.1", o los de {"funcion": "5.1", ...})."""
        marca = self.metadatos.get("curso", {})
        if "ejercicio" in marca:
            return [marca["ejercicio"]]
        return sorted(set(marca.get("ejercicios", {}).values()))

    @property
    def comprueba(self):
        """El ejercicio que comprueba una celda `comprobar("N.M"...)`, o None."""
        m = re.fullmatch(r'comprobar\("([\d.]+)"(?:, \w+)?\)', self.alumno.strip())
        return m.group(1) if m else None

    @property
    def modulo(self):
        """El módulo que escribe una celda %%modulo, o None."""
        m = re.match(r"%%modulo (\w+)", self.alumno)
        return m.group(1) if m else None


def celdas(numero):
    """Las celdas de la lección `numero`: las del cuaderno del alumno, con su texto resuelto."""
    alumno = _leer(rutas.CUADERNOS, numero)
    resuelto = {c["id"]: c for c in _leer(rutas.SOLUCIONES, numero)["cells"]}
    return [Celda(c["id"], c["cell_type"], "".join(c["source"]), "".join(resuelto[c["id"]]["source"]),
                  c.get("metadata", {}))
            for c in alumno["cells"]]


def _leer(carpeta, numero):
    (ruta,) = sorted(Path(carpeta).glob(f"{numero:02d}_*.ipynb"))
    return json.loads(ruta.read_text(encoding="utf-8"))


ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Salida:
    """Lo que escribió una celda (texto plano de todas sus salidas) y, si lanzó, su excepción y
    lo que el cuaderno enseñó en su lugar (`traza`: la traza, o la frase del curso)."""
    fuente: str
    texto: str
    error: str = ""
    traza: str = ""

    @property
    def limpia(self):
        """Ni lanzó ni escribió una traza (de un hilo, por ejemplo)."""
        return not self.error and TRAZA not in self.texto

    @property
    def traza_del_curso(self):
        """¿Pasa la traza (la del error, o una escrita) por el código del curso (`curso/`)?"""
        carpeta = str(Path(rutas.RAIZ) / "curso") + "/"
        return carpeta in self.traza or (TRAZA in self.texto and carpeta in self.texto)

    @property
    def error_con_frase(self):
        """Si lanzó, ¿enseñó el cuaderno una frase del curso (✘ ...) en vez de una traza?"""
        return not self.error or (self.traza.startswith("✘ ") and TRAZA not in self.traza)


class Cuaderno:
    """Un cuaderno abierto: su núcleo y sus celdas. Lo que se ejecuta queda en `historia`."""

    def __init__(self, alumno, numero):
        self.alumno, self.numero = alumno, numero
        self.celdas = celdas(numero)
        self.historia = []
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(rutas.CUADERNOS), env=alumno.entorno_del_nucleo())
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def ejecutar(self, fuente):
        partes, error, trazas = [], [], []

        def gancho(msg):
            tipo, contenido = msg["msg_type"], msg["content"]
            if tipo == "stream":
                partes.append(contenido["text"])
            elif tipo in ("execute_result", "display_data"):
                partes.append(contenido["data"].get("text/plain", ""))
            elif tipo == "error":
                error.append(f"{contenido['ename']}: {contenido['evalue']}")
                trazas.append(ANSI.sub("", "\n".join(contenido.get("traceback", []))))

        self.kc.execute_interactive(fuente, timeout=SEGUNDOS_POR_CELDA, output_hook=gancho,
                                    allow_stdin=False)
        salida = Salida(fuente, "".join(partes), "; ".join(error), "\n".join(trazas))
        self.historia.append(salida)
        return salida

    def ayudantes_del_curso(self):
        """Los nombres del curso del cuaderno (`comprobar`, `pista`...) que ya no son los del curso."""
        salida = self.ejecutar(COMPROBAR_AYUDANTES)
        self.historia.pop()  # no es del alumno
        return salida.texto.split()

    def cerrar(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.cerrar()


class Alumno:
    """Un alumno con su espacio de trabajo, que abre cuadernos uno tras otro."""

    def __init__(self, carpeta):
        self.carpeta = Path(carpeta)
        self.espacio = self.carpeta / "espacio"
        self.tmp = self.carpeta / "tmp"
        self.tmp.mkdir(parents=True, exist_ok=True)
        os.chmod(self.tmp, 0o711)  # el PostgreSQL de la lección 07 corre como `postgres` si somos root

    def entorno(self):
        return dict(os.environ, **{rutas.VARIABLE_ESPACIO: str(self.espacio), "TMPDIR": str(self.tmp)})

    def entorno_del_nucleo(self):
        """El de sus núcleos: con la caché de las celdas pesadas si `probar` la da (ver
        curso/material/una_vez.py); las órdenes `python -m curso` no la llevan."""
        cache = os.environ.get(una_vez.PARA_NUCLEOS)
        return {**self.entorno(), **({una_vez.VARIABLE: cache} if cache else {})}

    def abrir(self, numero):
        return Cuaderno(self, numero)

    def orden(self, *argumentos, codigo=0):
        """`python -m curso ...` en su terminal, desde la raíz del curso; devuelve lo que escribe.
        Con `codigo=None` no mira el código de salida y devuelve (código, lo que escribe)."""
        hecho = subprocess.run([sys.executable, "-m", "curso", *argumentos], cwd=rutas.RAIZ,
                               env=self.entorno(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=SEGUNDOS_POR_CELDA)
        if codigo is None:
            return hecho.returncode, hecho.stdout
        assert hecho.returncode == codigo, hecho.stdout
        return hecho.stdout


# --- Recorrer una lección como un alumno ------------------------------------------------------------

HECHO = re.compile(r"Ejercicio ([\d.]+): (\d+)/\2 ✔ Hecho\.")


@dataclass
class Recorrido:
    """Lo que pasó al recorrer una lección: cada celda ejecutada y lo que no fue como debía."""
    numero: int
    salidas: list = field(default_factory=list)  # (id de la celda, Salida)
    problemas: list = field(default_factory=list)
    segundos: float = 0.0

    @property
    def texto(self):
        return "\n".join(s.texto for _, s in self.salidas)

    def veces(self, trozo):
        return self.texto.count(trozo)


def recorrer(alumno, numero, dejar=(), arreglar=True):
    """Recorre la lección `numero` de arriba abajo en un núcleo nuevo, como un alumno.

    Con `arreglar`, cada ejercicio se hace como lo hace quien falla y arregla: corre la celda tal
    como viene (el esbozo), `comprobar` dice que está pendiente, corre su solución en la misma
    celda (y las `--cambia` del mismo módulo que la siguen), y `comprobar` pasa. Los ejercicios de
    `dejar` se quedan en el esbozo (pendientes), y la lección sigue. Sin `arreglar`, todo se queda
    en el esbozo. Cualquier celda que lance, o que escriba una traza, es un problema."""
    import time
    recorrido = Recorrido(numero)
    inicio = time.monotonic()
    with alumno.abrir(numero) as cuaderno:
        celdas = [c for c in cuaderno.celdas if c.tipo == "code"]
        vistos, arreglados = set(), set()

        def correr(celda, texto, nota=""):
            salida = cuaderno.ejecutar(texto)
            recorrido.salidas.append((celda.id, salida))
            if not salida.limpia:
                recorrido.problemas.append(f"{numero:02d} · celda {celda.id}{nota}: "
                                           f"{salida.error or 'escribe una traza'}\n{salida.texto[-1500:]}")
            return salida

        for i, celda in enumerate(celdas):
            id_ = celda.comprueba
            if id_ is None:
                correr(celda, celda.alumno)
                continue
            if id_ in vistos:  # otro ejercicio de una celda ya comprobada
                salida = correr(celda, celda.alumno)
                if id_ in arreglados and HECHO.search(salida.texto) is None:
                    recorrido.problemas.append(f"{numero:02d} · comprobar(\"{id_}\") con la solución no "
                                               f"pasa:\n{salida.texto[-1500:]}")
                continue
            # La primera comprobación tras una celda de ejercicios: todos sus ejercicios, pendientes.
            suyas = [c for c in celdas[:i] if id_ in c.ejercicios]
            grupo = suyas[-1].ejercicios if suyas else [id_]
            for otro in grupo:
                salida = correr(celda, f'comprobar("{otro}"' + celda.alumno.strip()[len(f'comprobar("{id_}"'):],
                                f" (comprobar {otro} con el esbozo)")
                if f"Ejercicio {otro}: pendiente." not in salida.texto:
                    recorrido.problemas.append(f"{numero:02d} · comprobar(\"{otro}\") con el esbozo no dice "
                                               f"que está pendiente:\n{salida.texto[-800:]}")
            vistos.update(grupo)
            if not arreglar or any(otro in dejar for otro in grupo):
                continue
            # La solución, en las mismas celdas: las del ejercicio y las --cambia de su módulo.
            primera = celdas.index(suyas[0]) if suyas else i
            modulos = {c.modulo for c in suyas}
            for otra in celdas[primera:i]:
                if otra in suyas or (otra.modulo in modulos and "--cambia" in otra.alumno.split("\n")[0]):
                    correr(otra, otra.resuelta, " (con la solución)")
            salida = correr(celda, celda.alumno, " (comprobar con la solución)")
            if HECHO.search(salida.texto) is None:
                recorrido.problemas.append(f"{numero:02d} · comprobar(\"{id_}\") con la solución no pasa:\n"
                                           f"{salida.texto[-1500:]}")
            arreglados.update(grupo)
    recorrido.segundos = time.monotonic() - inicio
    return recorrido
