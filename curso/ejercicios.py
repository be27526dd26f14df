"""Los ejercicios: qué comprueba cada uno, sus pistas, y cómo se evalúa el código del alumno.

Cada lección registra sus ejercicios en `curso/comprobaciones/lNN.py`. Un ejercicio comprueba
una función: o la de un módulo del espacio del alumno (`modulo="bucle"`), o una que el cuaderno
le pasa (`comprobar("2.1", tamano)`). Un caso es una función que recibe lo comprobado y, si algo
no cuadra, lanza `Fallo(lo que se esperaba, lo que llegó)`.

`evaluar` es la parte pura: devuelve un `Resultado`. `curso.cuaderno.comprobar` lo imprime.
"""
import importlib
import importlib.util
import pkgutil
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas

# Una comprobación tarda menos de un segundo; si pasa de aquí, el código del alumno no termina.
LIMITE_SEGUNDOS = 10


class Fallo(Exception):
    """Un caso que no cuadra: lo que se esperaba y lo que llegó."""

    def __init__(self, esperado, obtenido, nota=""):
        super().__init__(nota or "no coincide")
        self.esperado, self.obtenido, self.nota = esperado, obtenido, nota


def igual(obtenido, esperado, nota=""):
    """Lanza `Fallo` si `obtenido != esperado`. Es el `assertEqual` de los casos."""
    if obtenido != esperado:
        raise Fallo(esperado, obtenido, nota)


@dataclass
class Caso:
    descripcion: str
    prueba: object  # función(objetivo) -> None; lanza Fallo si no cuadra


@dataclass
class Ejercicio:
    id: str
    leccion: int
    titulo: str
    nombre: str  # la función que se comprueba; None: los casos reciben el módulo entero
    casos: list
    pistas: list
    modulo: str = None  # el módulo del espacio del alumno, o None si la función es del cuaderno


@dataclass
class Linea:
    """El resultado de un caso: "ok", "fallo", "error" o "pendiente"."""
    caso: str
    estado: str
    esperado: object = None
    obtenido: object = None
    detalle: str = ""


@dataclass
class Resultado:
    ejercicio: str
    lineas: list = field(default_factory=list)
    problema: str = ""  # si no se pudo ni empezar: el fichero no existe, no importa...

    @property
    def aprobado(self):
        return not self.problema and bool(self.lineas) and all(l.estado == "ok" for l in self.lineas)

    @property
    def pendiente(self):
        return any(l.estado == "pendiente" for l in self.lineas)


REGISTRO = {}


def ejercicio(id, leccion, titulo, nombre, pistas, modulo=None):
    """Registra un ejercicio; devuelve un decorador para añadirle casos en orden."""
    e = Ejercicio(id, leccion, titulo, nombre, [], list(pistas), modulo)
    REGISTRO[id] = e

    def caso(descripcion):
        def registrar(prueba):
            e.casos.append(Caso(descripcion, prueba))
            return prueba
        return registrar
    return caso


def cargar_registro():
    """Importa cada `curso/comprobaciones/lNN.py`, que registran sus ejercicios al importarse."""
    import curso.comprobaciones as paquete
    for info in pkgutil.iter_modules(paquete.__path__):
        importlib.import_module(f"{paquete.__name__}.{info.name}")
    return REGISTRO


def buscar(id):
    """El ejercicio `id`, o un KeyError con la lista de los que hay."""
    registro = cargar_registro()
    if id not in registro:
        lista = ", ".join(sorted(registro, key=lambda x: [int(p) for p in x.split(".")]))
        raise KeyError(f"No hay ningún ejercicio «{id}». Los que hay: {lista}.")
    return registro[id]


def es_del_espacio(modulo, espacio):
    """¿Sale `modulo` de un fichero dentro de `espacio`?"""
    fichero = getattr(modulo, "__file__", None)
    return bool(fichero) and Path(fichero).resolve().is_relative_to(espacio)


def olvidar_modulos(carpeta):
    """Quita de sys.modules los módulos cargados desde `carpeta`, para que se relean del disco."""
    carpeta = Path(carpeta).resolve()
    for nombre, modulo in list(sys.modules.items()):
        if modulo is not None and es_del_espacio(modulo, carpeta):
            del sys.modules[nombre]


@contextmanager
def en_la_ruta(carpeta):
    """`carpeta` la primera de sys.path mientras dure el bloque (para los `from entorno import`)."""
    carpeta = str(carpeta)
    sys.path.insert(0, carpeta)
    try:
        yield
    finally:
        sys.path.remove(carpeta)


def cargar_fichero(ruta, nombre):
    """Ejecuta el fichero `ruta` como un módulo nuevo llamado `nombre`, sin registrarlo."""
    spec = importlib.util.spec_from_file_location(nombre, ruta)
    modulo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modulo)
    return modulo


@contextmanager
def con_limite(segundos):
    """Corta con TimeoutError un bloque que tarda más de `segundos` (sólo en el hilo principal)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def cortar(*_):
        raise TimeoutError(f"la comprobación pasó de {segundos} s: ¿un bucle que no termina?")
    anterior = signal.signal(signal.SIGALRM, cortar)
    signal.setitimer(signal.ITIMER_REAL, segundos)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, anterior)


def objetivo_del_espacio(e, espacio):
    """La función `e.nombre` del módulo del alumno, leída ahora del disco; o (None, problema)."""
    ruta = espacio / f"{e.modulo}.py"
    if not ruta.exists():
        return None, (f"No encuentro {e.modulo}.py en tu espacio de trabajo: ejecuta la celda "
                      f"del ejercicio {e.id} (la que empieza por %%modulo {e.modulo}).")
    try:
        with en_la_ruta(espacio):
            modulo = cargar_fichero(ruta, e.modulo)
    except Exception as exc:  # noqa: BLE001 - el código del alumno puede lanzar cualquier cosa
        return None, f"{e.modulo}.py no se puede importar: {describir(exc)}"
    if e.nombre is None:
        return modulo, ""
    if not hasattr(modulo, e.nombre):
        return None, f"{e.modulo}.py no define {e.nombre}: ¿le has cambiado el nombre?"
    return getattr(modulo, e.nombre), ""


def describir(exc):
    """Una excepción en una línea: tipo, mensaje y, si es de sintaxis, la línea."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError en la línea {exc.lineno}: {exc.msg}"
    return f"{type(exc).__name__}: {exc}"


def evaluar(id, objetivo=None, espacio=None):
    """Corre los casos del ejercicio `id` contra `objetivo` (o el módulo del espacio)."""
    e = buscar(id)
    resultado = Resultado(id)
    if objetivo is None:
        if e.modulo is None:
            resultado.problema = (f"Pásale a comprobar tu función: comprobar(\"{id}\", {e.nombre}).")
            return resultado
        objetivo, resultado.problema = objetivo_del_espacio(e, espacio or rutas.espacio())
        if resultado.problema:
            return resultado
    for caso in e.casos:
        try:
            with con_limite(LIMITE_SEGUNDOS):
                caso.prueba(objetivo)
        except NotImplementedError as exc:
            resultado.lineas.append(Linea(caso.descripcion, "pendiente", detalle=str(exc)))
        except Fallo as f:
            resultado.lineas.append(Linea(caso.descripcion, "fallo", f.esperado, f.obtenido, f.nota))
        except Exception as exc:  # noqa: BLE001 - un error del alumno es un caso en rojo
            resultado.lineas.append(Linea(caso.descripcion, "error", detalle=describir(exc)))
        else:
            resultado.lineas.append(Linea(caso.descripcion, "ok"))
    return resultado


def corto(valor, ancho=160):
    """repr de `valor` en una línea, cortado si es largo."""
    texto = repr(valor)
    return texto if len(texto) <= ancho else texto[: ancho - 1] + "…"


def informe(resultado):
    """El texto que ve el alumno: una línea por caso, ✔ o ✘, y un veredicto."""
    e = buscar(resultado.ejercicio)
    lineas = [f"Ejercicio {e.id} · {e.titulo}"]
    if resultado.problema:
        return "\n".join(lineas + [f"  ✘ {resultado.problema}"])
    for l in resultado.lineas:
        if l.estado == "ok":
            lineas.append(f"  ✔ {l.caso}")
        elif l.estado == "pendiente":
            lineas.append(f"  · {l.caso}: pendiente (la función todavía es el esbozo)")
        elif l.estado == "error":
            lineas.append(f"  ✘ {l.caso}\n      lanzó {l.detalle}")
        else:
            lineas.append(f"  ✘ {l.caso}" + (f" ({l.detalle})" if l.detalle else ""))
            lineas.append(f"      esperaba: {corto(l.esperado)}")
            lineas.append(f"      llegó:    {corto(l.obtenido)}")
    buenos = sum(l.estado == "ok" for l in resultado.lineas)
    total = len(resultado.lineas)
    if resultado.aprobado:
        lineas.append(f"Ejercicio {e.id}: {buenos}/{total} ✔ Hecho.")
    elif resultado.pendiente:
        lineas.append(f"Ejercicio {e.id}: pendiente. Escribe tu código donde dice "
                      f"«Tu código aquí», ejecuta la celda y vuelve a comprobar.")
    else:
        lineas.append(f"Ejercicio {e.id}: {buenos}/{total} ✔. Si te atascas: pista(\"{e.id}\").")
    return "\n".join(lineas)


def celda_resuelta(id):
    """La celda del cuaderno resuelto que contiene el ejercicio `id` (un dict de nbformat)."""
    import nbformat
    from curso.generar import ejercicio_de
    e = buscar(id)
    for ruta in sorted(rutas.SOLUCIONES.glob(f"{e.leccion:02d}_*.ipynb")):
        for celda in nbformat.read(ruta, as_version=4).cells:
            marca = ejercicio_de(celda)
            if marca == id or (isinstance(marca, dict) and id in marca.values()):
                return celda
    raise LookupError(f"El cuaderno resuelto de la lección {e.leccion:02d} no tiene la celda "
                      f"del ejercicio {id}.")


def fuente_de_referencia(e):
    """La solución de referencia de `e`: su celda del cuaderno resuelto, entera."""
    return f"# Solución de referencia del ejercicio {e.id} ({e.titulo})\n" + celda_resuelta(e.id).source
