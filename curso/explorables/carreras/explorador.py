"""Para las lecciones 04 y 05: cada intercalado de unos pocos actores, paso a paso, con SQLite de verdad.

Equipo del curso; lo estrena la lección 04 (dos resumidores y un mensaje que llega) y lo
reutiliza la 05 (el buzón). Un escenario describe:

- unos actores, cada uno con su lista ordenada de pasos (`Paso`): pequeñas funciones
  `hacer(mundo)` que usan el código real del alumno o del punto de control;
- cómo preparar el estado inicial en un fichero SQLite nuevo;
- las invariantes que deben cumplirse en TODOS los intercalados;
- variantes: la correcta y otras ingenuas que sustituyen una función del módulo.

`explorar()` recorre cada intercalado que respeta el orden propio de cada actor, cada uno sobre
un fichero nuevo (una copia del estado inicial, que se prepara una sola vez), anota quién hizo
qué (y qué excepciones saltaron, y qué leyó y escribió cada actor en cada paso: `bitacora.py`),
comprueba las invariantes y agrupa los resultados. No hay
hilos ni esperas: el orden lo decide el explorador, paso a paso, y por eso el resultado es
siempre el mismo.

Los textos (totales, carriles, panel) están en `textos.py` y el widget en `widget_de_las_carreras.py`; aquí
solo hay los datos y cómo se recorren.
"""
import functools
import math
import os
import shutil
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from curso.explorables.carreras import textos
from curso.explorables.carreras.bitacora import Bitacora, ConexionesQueAnotan
from curso.material.una_vez import una_vez
from curso.rutas import cargar_modulo


# --- Qué es un escenario ---------------------------------------------------------------------

@dataclass(frozen=True)
class Paso:
    """Un paso de un actor: `hacer(mundo)` lo ejecuta y devuelve un texto corto con lo ocurrido."""
    actor: str
    nombre: str
    hacer: Callable[["Mundo"], str] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Invariante:
    """Lo que debe cumplirse en cada intercalado.

    `comprobar(mundo, eventos)` devuelve True si se cumple; `fallo` dice en pocas palabras qué
    les pasa a los intercalados que la rompen («pierden cobertura»).
    """
    nombre: str
    fallo: str
    comprobar: Callable[["Mundo", Sequence["Evento"]], bool] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Variante:
    """Una forma de ejecutar el escenario. `sustituye` cambia funciones del módulo por otras.

    Cada sustituta recibe el módulo como primer argumento y después los mismos argumentos que
    la función original: `instalar_ingenuo(modulo, bd, ejecucion, base, corte, candidato)`.
    """
    nombre: str
    descripcion: str
    sustituye: Mapping[str, Callable] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Escenario:
    """Todo lo que el explorador necesita saber de una carrera concreta."""
    nombre: str
    descripcion: str
    modulo: Path                                   # el código que se pone a prueba, por defecto
    actores: Mapping[str, Sequence[Paso]]          # {actor: sus pasos, en su orden}
    preparar: Callable[["Mundo"], None]            # el estado inicial en mundo.ruta (una vez)
    conectar: Callable[["Mundo"], None]            # abre las conexiones de un intercalado
    invariantes: Sequence[Invariante]
    variantes: Mapping[str, Variante]
    observar: Callable[["Mundo"], Any] = lambda mundo: None   # foto del estado tras cada paso
    resultado: Callable[["Mundo"], str] = lambda mundo: ""    # cómo acabó, para agrupar


@dataclass
class Mundo:
    """Lo que comparten los pasos de un intercalado: el fichero, las conexiones y lo local."""
    ruta: Path
    modulo: Any
    variante: Variante
    conexiones: dict = field(default_factory=dict)   # las abre el escenario; las cierra el explorador
    local: dict = field(default_factory=dict)        # {actor: {lo que leyó, lo que preparó...}}
    datos: dict = field(default_factory=dict)        # lo que `preparar` recuerda (solo lectura)

    def de(self, actor):
        """El estado local de `actor` (un dict que se crea la primera vez)."""
        return self.local.setdefault(actor, {})

    def funcion(self, nombre):
        """La función `nombre` del módulo, o la que la variante pone en su lugar."""
        sustituta = self.variante.sustituye.get(nombre)
        if sustituta is None:
            return getattr(self.modulo, nombre)
        return functools.partial(sustituta, self.modulo)


# --- Qué se anota de cada intercalado -----------------------------------------------------------

@dataclass(frozen=True)
class Evento:
    """Un paso ya ejecutado: su posición (desde 1), quién, qué, qué pasó, la foto de después y lo
    que el actor leyó y escribió en la base durante el paso (`bitacora.Operacion`, en orden)."""
    posicion: int
    actor: str
    paso: str
    resultado: str
    error: str | None = None        # «Tipo: mensaje» si saltó una excepción no prevista
    observacion: Any = None
    operaciones: tuple = ()


@dataclass(frozen=True)
class Registro:
    """Un intercalado recorrido: el orden, lo que pasó en cada paso y qué invariantes rompió."""
    numero: int
    actores: tuple[str, ...]
    eventos: tuple[Evento, ...]
    resultado: str
    fallos: tuple[str, ...]

    @property
    def orden(self):
        return tuple((e.actor, e.paso) for e in self.eventos)

    @property
    def correcto(self):
        return not self.fallos


@dataclass(frozen=True)
class Exploracion:
    """Todos los intercalados de un escenario con una variante: datos puros y un resumen en texto."""
    escenario: str
    variante: str
    invariantes: tuple[tuple[str, str], ...]      # (nombre, fallo), en el orden del escenario
    registros: tuple[Registro, ...]
    motor: str = "SQLite"                         # dónde corrió: «SQLite» o «PostgreSQL»

    @property
    def total(self):
        return len(self.registros)

    @property
    def correctos(self):
        return sum(r.correcto for r in self.registros)

    def por_fallo(self):
        """{invariante: cuántos intercalados la rompen}, también las que nadie rompe."""
        cuenta = Counter(f for r in self.registros for f in r.fallos)
        return {nombre: cuenta[nombre] for nombre, _ in self.invariantes}

    def por_resultado(self):
        """{cómo acabó: cuántos intercalados}, ordenado de más a menos (y por texto si empatan)."""
        cuenta = Counter(r.resultado for r in self.registros)
        return dict(sorted(cuenta.items(), key=lambda par: (-par[1], par[0])))

    def que_rompen(self, invariante):
        """Los registros que rompen `invariante`, en orden."""
        return [r for r in self.registros if invariante in r.fallos]

    def resumen(self):
        """Un texto en castellano: cuántos intercalados, cuántos correctos, qué falla y un ejemplo
        (lo escribe `curso.explorables.carreras.textos.resumen`)."""
        return textos.resumen(self)


# --- Intercalados -------------------------------------------------------------------------------

def numero_de_intercalados(actores):
    """Cuántos intercalados hay: (n1 + n2 + ...)! / (n1! · n2! · ...)."""
    largos = [len(pasos) for pasos in actores.values()]
    cuenta = math.factorial(sum(largos))
    for largo in largos:
        cuenta //= math.factorial(largo)
    return cuenta


def intercalados(actores):
    """Cada orden de todos los pasos que respeta el orden propio de cada actor.

    `actores` es {actor: [Paso, ...]}. Produce tuplas de pasos, siempre en el mismo orden
    (lexicográfico según el orden de los actores).
    """
    listas = []
    for actor, pasos in actores.items():
        for paso in pasos:
            if paso.actor != actor:
                raise ValueError(f"El paso «{paso.nombre}» es de {paso.actor!r}, pero está en la lista de {actor!r}.")
        listas.append(list(pasos))
    total = sum(len(pasos) for pasos in listas)
    siguientes = [0] * len(listas)
    hecho = []

    def seguir():
        if len(hecho) == total:
            yield tuple(hecho)
            return
        for i, pasos in enumerate(listas):
            if siguientes[i] < len(pasos):
                hecho.append(pasos[siguientes[i]])
                siguientes[i] += 1
                yield from seguir()
                siguientes[i] -= 1
                hecho.pop()

    yield from seguir()


# --- Explorar -----------------------------------------------------------------------------------

# Los ficheros de cada intercalado van a memoria (tmpfs) si la máquina la ofrece: aquí importa el
# orden de los pasos, no el disco, y fsync en memoria no cuesta nada. La durabilidad frente a
# caídas la prueban otros tests, con procesos de verdad y SIGKILL.
MEMORIA = Path("/dev/shm")

ERROR_INESPERADO = ("ningún paso falla sin control", "acaban con un error inesperado")


def elegir_variante(escenario, variante):
    """La `Variante` de `escenario` que nombra `variante` (o la misma, si ya es una); un nombre
    que el escenario no tiene es un ValueError que dice cuáles tiene."""
    if not isinstance(variante, str):
        return variante
    if variante not in escenario.variantes:
        opciones = ", ".join(repr(nombre) for nombre in escenario.variantes)
        raise ValueError(f"El escenario «{escenario.nombre}» no tiene la variante {variante!r}; tiene {opciones}.")
    return escenario.variantes[variante]


def explorar(escenario, variante="correcta", modulo=None, *, al_avanzar=None):
    """Recorre cada intercalado de `escenario` con `variante`, cada uno en un fichero nuevo.

    `modulo` es el código a probar; por defecto se carga `escenario.modulo` por su ruta.
    `al_avanzar(hechos, total)`: ver `recorrer_intercalados`.
    """
    return recorrer_intercalados(escenario, variante, motor=EnFichero(), modulo=modulo, al_avanzar=al_avanzar)


def _modulos_del_recorrido(escenario, variante, *, motor, modulo=None, hasta_el_primer_fallo=False,
                           al_avanzar=None):
    """La carpeta del código que se prueba (para la huella de `una_vez`)."""
    ruta = getattr(modulo, "__file__", None) or motor.modulo_de(escenario)
    return [Path(ruta).parent]


def _por_valor_del_recorrido(escenario, variante, *, motor, modulo=None, hasta_el_primer_fallo=False,
                             al_avanzar=None):
    """Lo que decide el recorrido: el escenario, la variante (una que no es del escenario, por su
    identidad: no se comparte), el motor, el módulo y si para en el primer fallo."""
    nombre = variante if isinstance(variante, str) else (variante.nombre, id(variante))
    ruta = getattr(modulo, "__file__", None) or motor.modulo_de(escenario)
    return (escenario.nombre, nombre, type(motor).__name__, Path(ruta).name, hasta_el_primer_fallo)


@una_vez(_modulos_del_recorrido, _por_valor_del_recorrido, aviso="al_avanzar")
def recorrer_intercalados(escenario, variante, *, motor, modulo=None, hasta_el_primer_fallo=False,
                          al_avanzar=None):
    """El recorrido que comparten los dos exploradores: cada intercalado de `escenario` con
    `variante`, en un estado inicial nuevo que da `motor`, con sus invariantes comprobadas (y la
    de que ningún paso falle sin control). Devuelve una `Exploracion`.

    Lo que cambia de un explorador a otro lo pone el motor: dónde vive la base y cómo se repite el
    estado inicial (`base`, `nueva_ronda`, `fin_de_ronda`), qué `Mundo` comparten los pasos
    (`mundo`) y cómo se hacen los pasos de un intercalado (`ronda`). `EnFichero` (aquí) los hace
    uno tras otro; los de `paralelo.py`, cada actor en su hilo.

    `hasta_el_primer_fallo`: para en el primer intercalado que rompe alguna invariante; la
    exploración queda entonces incompleta (sus totales no son los del escenario).

    `al_avanzar(hechos, total)`, si se da, se llama tras cada intercalado: una celda que explora
    muchos (en PostgreSQL, segundos) enseña así su progreso, con salidas que no dependen de la
    máquina (un punto cada tantos intercalados, no cada tantos segundos).

    En los núcleos que arrancan los tests, lo calculado se guarda por una huella de lo que lee
    (`una_vez`, curso/material/una_vez.py): el siguiente pase de la misma celda lo toma de ahí."""
    variante = elegir_variante(escenario, variante)
    if modulo is None:
        ruta = motor.modulo_de(escenario)
        modulo = cargar_modulo(ruta, f"_carreras_{Path(ruta).stem}")

    invariantes = list(escenario.invariantes) + [
        Invariante(*ERROR_INESPERADO, lambda mundo, eventos: all(e.error is None for e in eventos))
    ]
    actores = tuple(escenario.actores)
    registros = []
    plantilla = motor.mundo(escenario, modulo, variante, plantilla=True)

    def preparar(mundo):
        try:
            escenario.preparar(mundo)
        finally:
            cerrar_conexiones(mundo)

    total = numero_de_intercalados(escenario.actores)
    # El estado inicial se prepara una vez; cada intercalado empieza en uno nuevo igual.
    with motor.base(plantilla, preparar):
        for numero, orden in enumerate(intercalados(escenario.actores), 1):
            mundo = motor.mundo(escenario, modulo, variante, datos=dict(plantilla.datos))
            motor.nueva_ronda(mundo, preparar)
            try:
                with motor.ronda(escenario, mundo) as recorrer:
                    eventos = recorrer(orden)
                    fallos = tuple(inv.nombre for inv in invariantes if not inv.comprobar(mundo, eventos))
                    resultado = escenario.resultado(mundo)
            finally:
                motor.fin_de_ronda(mundo)
            registros.append(Registro(numero, actores, tuple(eventos), resultado, fallos))
            if al_avanzar is not None:
                al_avanzar(numero, total)
            if fallos and hasta_el_primer_fallo:
                break
    return Exploracion(
        escenario=escenario.nombre,
        variante=variante.nombre,
        invariantes=tuple((inv.nombre, inv.fallo) for inv in invariantes),
        registros=tuple(registros),
        motor=motor.titulo,
    )


class EnFichero:
    """El motor del explorador paso a paso: SQLite, un fichero por intercalado, copia de uno que
    se prepara una sola vez; los pasos, uno tras otro en este hilo, cada uno entero.

    El explorador en paralelo en SQLite (`paralelo.EnSqlite`) guarda la base igual y solo cambia
    cómo se hacen los pasos."""
    titulo = "SQLite"  # lo que se lee en pantalla
    prefijo = "carreras-"

    def modulo_de(self, escenario):
        """El fichero del código que se prueba si no se da otro."""
        return escenario.modulo

    @contextmanager
    def base(self, plantilla, preparar):
        """Una carpeta temporal (en memoria, si se puede) con el fichero inicial ya preparado."""
        en_memoria = MEMORIA if MEMORIA.is_dir() and os.access(MEMORIA, os.W_OK) else None
        with tempfile.TemporaryDirectory(prefix=self.prefijo, dir=en_memoria) as carpeta:
            self._carpeta = Path(carpeta)
            plantilla.ruta = self._carpeta / "inicial.db"
            preparar(plantilla)
            self._plantilla = plantilla.ruta
            self._numero = 0
            yield

    def nueva_ronda(self, mundo, preparar):
        """Una copia del fichero preparado (`preparar` no hace falta: la copia ya lo está)."""
        self._numero += 1
        mundo.ruta = self._carpeta / f"intercalado-{self._numero}.db"
        _copiar(self._plantilla, mundo.ruta)

    def fin_de_ronda(self, mundo):
        for fichero in self._carpeta.glob(f"{mundo.ruta.name}*"):
            fichero.unlink()

    def mundo(self, escenario, modulo, variante, *, plantilla=False, datos=None):
        """El `Mundo` de un intercalado: la conexión de cada actor anota lo que lee y escribe."""
        if plantilla:
            return Mundo(ruta=None, modulo=modulo, variante=variante)
        return Mundo(ruta=None, modulo=modulo, variante=variante, datos=datos or {},
                     conexiones=ConexionesQueAnotan({actor: Bitacora() for actor in escenario.actores}))

    @contextmanager
    def ronda(self, escenario, mundo):
        """Abre las conexiones del intercalado (`escenario.conectar`), da la función que hace sus
        pasos en un orden y, al salir, las cierra."""
        try:
            escenario.conectar(mundo)
            yield functools.partial(_recorrer, escenario, mundo)
        finally:
            cerrar_conexiones(mundo)


def _copiar(origen, destino):
    """Copia una base de datos SQLite cerrada (con su WAL, si quedara alguno)."""
    for fichero in origen.parent.glob(f"{origen.name}*"):
        shutil.copyfile(fichero, destino.with_name(destino.name + fichero.name[len(origen.name):]))


def cerrar_conexiones(mundo):
    """Cierra y olvida las conexiones de `mundo` (las que abrió `preparar` o un intercalado)."""
    for conexion in mundo.conexiones.values():
        conexion.close()
    mundo.conexiones.clear()


def _recorrer(escenario, mundo, orden):
    """Ejecuta los pasos en `orden`. Si un paso lanza una excepción no prevista, se anota y los
    pasos siguientes de ese actor ya no ocurren (los de los demás, sí). Cada evento se lleva lo que
    su actor leyó y escribió durante el paso (su bitácora, ver `bitacora.py`)."""
    bitacoras = mundo.conexiones.bitacoras
    eventos = []
    caidos = set()
    for posicion, paso in enumerate(orden, 1):
        error = None
        if paso.actor in caidos:
            resultado = "no llega a ocurrir"
        else:
            try:
                resultado = str(paso.hacer(mundo))
            except Exception as excepcion:
                error = f"{type(excepcion).__name__}: {excepcion}"
                resultado = f"error: {error}"
                caidos.add(paso.actor)
        eventos.append(Evento(posicion, paso.actor, paso.nombre, resultado, error, escenario.observar(mundo),
                              bitacoras[paso.actor].sacar()))
    return eventos
