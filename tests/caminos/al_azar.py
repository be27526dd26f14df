"""Los caminos al azar, para `python -m curso medir caminos` y los tests de tests/caminos/: un alumno de verdad que hace cosas al azar, con semilla, y lo que se mira tras cada paso.

Un camino es una máquina de estados de hypothesis (`CaminoAlAzar`, un RuleBasedStateMachine):
un núcleo de Jupyter de verdad (el de `alumno.py`) en un solo espacio, que empieza una lección
(desde su punto de control anterior, restaurado) y da pasos al azar como daría un alumno: la
celda siguiente (la solución, el esbozo que deja el ejercicio pendiente, un error escrito o la
segunda solución buena de `tests/variantes.py`), la misma celda otra vez, saltarse
una celda que no es de un ejercicio, volver a un ejercicio pendiente o en rojo y arreglarlo,
`python -m curso comprobar N` en la terminal, volver a la lección anterior, restaurar el punto de
control anterior y empezar de nuevo, pasar a la lección siguiente.

Tras cada paso (`_mirar`): ninguna traza pasa por el código del curso; una celda que lanza enseña
una frase del curso («✘ ...»), no una traza; los nombres del curso (`comprobar`, `pista`...) son los
del curso; `comprobar("N.M")` da ✔ a la solución y a la segunda solución y ✘ a los errores
escritos; y si la lección está entera y con todos sus ejercicios en ✔, `comprobar N` también.

hypothesis da la semilla, la repetición y el encogimiento: un camino que falla se imprime como la
lista más corta de pasos que sigue fallando (`state.siguiente(eleccion=2)`...), que se puede volver
a correr con la misma semilla o copiar a un test. Cada ejemplo es un espacio y un núcleo nuevos.
"""
import re
import shutil
import tempfile
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, settings, seed
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, get_state_machine_test, initialize, invariant,
                                 precondition, rule)

from alumno import HECHO, Alumno, celdas
from curso import rutas

try:  # las segundas soluciones y los errores escritos (tests/variantes.py); sin ellas, solo esbozo y solución
    import variantes
except ImportError:  # pragma: no cover - si tests/ no está en sys.path
    variantes = None

LECCIONES = (0, 1, 2, 3, rutas.TRES_B, 4, 5)  # las de un camino por defecto: la 06 y la 07 tardan minutos por celda
PASOS = 14  # pasos de cada camino (hypothesis puede dar menos)


@dataclass
class Cuenta:
    """Lo que han hecho los caminos de una corrida: para el informe de `medir caminos`."""
    caminos: int = 0
    pasos: int = 0
    celdas: int = 0  # las celdas ejecutadas (las de los pasos y las de empezar más adentro)
    por_paso: dict = field(default_factory=dict)
    respuestas: dict = field(default_factory=dict)  # en las celdas de ejercicio: bien, esbozo, mal, segunda


CUENTA = Cuenta()


def segunda(id):
    return (variantes.SEGUNDAS.get(id) if variantes else None)


def errores(id):
    return (variantes.ERRORES.get(id, []) if variantes else [])


class Hallazgo(AssertionError):
    """Lo que un camino encontró: una frase que dice qué y dónde."""


class CaminoAlAzar(RuleBasedStateMachine):
    lecciones = LECCIONES

    def __init__(self):
        super().__init__()
        self.carpeta = tempfile.mkdtemp(prefix="camino-")
        self.alumno = Alumno(self.carpeta)
        self.cuaderno = None
        self.leccion = None
        self.estado = {}  # ejercicio -> "bien", "mal" o "esbozo": lo último que escribió el alumno
        self.ultima = None  # (índice, [textos]) de la última celda ejecutada
        CUENTA.caminos += 1

    # --- lo que hay en la lección abierta -----------------------------------------------------

    def _abrir(self, leccion, hasta=0):
        if self.cuaderno is not None:
            self.cuaderno.cerrar()
        self.leccion, self.i, self.saltadas = leccion, 0, set()
        self.codigo = [c for c in celdas(leccion) if c.tipo == "code"]
        self.cuaderno = self.alumno.abrir(leccion)
        self._correr(0, [self.codigo[0].alumno])
        for _ in range(hasta % max(1, len(self.codigo) - 1)):
            self._siguiente(0)

    def _correr(self, indice, textos):
        self.ultima = (indice, textos)
        self.i = max(self.i, indice + 1)
        for texto in textos:
            CUENTA.celdas += 1
            self._mirar_salida(self.codigo[indice], self.cuaderno.ejecutar(texto))

    def _mirar_salida(self, celda, salida):
        donde = f"lección {self.leccion:02d}, celda {celda.id}"
        if salida.traza_del_curso:
            raise Hallazgo(f"{donde}: una traza pasa por el código del curso:\n{salida.traza or salida.texto}"[-3000:])
        if not salida.error_con_frase:
            raise Hallazgo(f"{donde}: lanza {salida.error} y enseña una traza, no una frase:\n{salida.traza}"[-3000:])
        comprueba = celda.comprueba if salida.fuente == celda.alumno else None
        if comprueba:
            self._mirar_veredicto(donde, comprueba, salida.texto)

    def _mirar_veredicto(self, donde, id, texto):
        aprobado = bool(re.search(rf"Ejercicio {re.escape(id)}: (\d+)/\1 ✔ Hecho\.", texto))
        estado = self.estado.get(id)
        otros_mal = any(e == "mal" for o, e in self.estado.items() if o != id)
        # Con una celda saltada (la de un módulo que el suyo importa), el ✘ es lo que toca: su
        # comprobación dice que no se puede importar, y qué celda falta.
        if estado == "bien" and not aprobado and not otros_mal and not self.saltadas:
            raise Hallazgo(f"{donde}: comprobar(\"{id}\") no da por buena una solución buena:\n{texto[-2000:]}")
        if estado == "mal" and aprobado:
            raise Hallazgo(f"{donde}: comprobar(\"{id}\") da por bueno un error escrito:\n{texto[-2000:]}")
        if estado == "mal" and not aprobado:
            self.estado[id] = "en rojo"

    def _siguiente(self, eleccion):
        celda = self.codigo[self.i]
        if not celda.ejercicios:
            self._correr(self.i, [celda.alumno])
            return
        opciones = ["bien", "esbozo", "mal", "segunda"]
        como = opciones[eleccion % len(opciones)]
        id = celda.ejercicios[eleccion // len(opciones) % len(celda.ejercicios)]
        textos = [celda.resuelta]
        variante = None
        if como == "mal" and errores(id):
            variante = errores(id)[eleccion // 2 % len(errores(id))]
        elif como == "segunda":
            variante = segunda(id)
        if como == "esbozo":
            textos = [celda.alumno]
        elif variante is None:
            como = "bien"
        elif variante.modulo is None:  # una función del cuaderno: la celda es la variante entera
            textos = [variantes.celda(variante)]
        else:  # la celda, y encima el cambio, como quien reescribe una función de su módulo
            textos.append(variantes.celda(variante))
        CUENTA.respuestas[como] = CUENTA.respuestas.get(como, 0) + 1
        for otro in celda.ejercicios:
            self.estado[otro] = "esbozo" if como == "esbozo" else "bien"
        self.estado[id] = {"segunda": "bien"}.get(como, como)
        self._correr(self.i, textos)

    # --- los pasos --------------------------------------------------------------------------------

    @initialize(cual=st.integers(0, 100), hasta=st.integers(0, 40))
    def empezar(self, cual, hasta):
        """Empieza una lección desde su punto de control anterior, con las `hasta` primeras celdas hechas."""
        leccion = self.lecciones[cual % len(self.lecciones)]
        if leccion > 0:
            self.alumno.orden("restaurar", str(rutas.anterior(leccion)))
        self._abrir(leccion, hasta)

    def _contar(self, paso):
        CUENTA.pasos += 1
        CUENTA.por_paso[paso] = CUENTA.por_paso.get(paso, 0) + 1

    @precondition(lambda s: s.i < len(s.codigo))
    @rule(eleccion=st.integers(0, 11), cuantas=st.integers(1, 4))
    def siguiente(self, eleccion, cuantas):
        """Las `cuantas` celdas siguientes (en una de ejercicio: solución, esbozo, error escrito o
        segunda, según `eleccion`)."""
        for _ in range(cuantas):
            if self.i < len(self.codigo):
                self._contar("siguiente")
                self._siguiente(eleccion)

    @precondition(lambda s: s.i < len(s.codigo))
    @rule(eleccion=st.integers(0, 11), cuantas=st.integers(1, 4))
    def siguiente_tambien(self, eleccion, cuantas):
        """Lo mismo: un alumno pasa a la siguiente más que hace ninguna otra cosa."""
        self.siguiente(eleccion, cuantas)

    OTRAS = ("la terminal", "volver", "la lección siguiente", "restaurar")

    @rule(que=st.sampled_from(OTRAS))
    def otra_cosa(self, que):
        """De vez en cuando (una regla para las cuatro, que son más raras y más caras): `comprobar N`
        en la terminal, volver a la lección anterior, pasar a la siguiente o restaurar. Si esa no se
        puede ahora, la celda siguiente."""
        posible = {"la terminal": True,
                   "volver": rutas.anterior(self.leccion) in self.lecciones,
                   "la lección siguiente": self.i >= len(self.codigo) and rutas.siguiente(self.leccion) in self.lecciones,
                   "restaurar": self.leccion > 0}
        if not posible[que]:
            if self.i < len(self.codigo):
                self.siguiente(0, 1)
            return
        {"la terminal": self.ver_en_la_terminal, "volver": self.volver,
         "la lección siguiente": self.leccion_siguiente, "restaurar": self.restaurar}[que]()

    @precondition(lambda s: s.ultima is not None)
    @rule()
    def otra_vez(self):
        """La última celda ejecutada, otra vez, tal como estaba."""
        self._contar("otra vez")
        self._correr(*self.ultima)

    @precondition(lambda s: s.i < len(s.codigo) and not s.codigo[s.i].ejercicios and not s.codigo[s.i].comprueba)
    @rule()
    def saltar(self):
        """Se salta la celda siguiente (una que no es de un ejercicio ni lo comprueba)."""
        self._contar("saltar")
        self.saltadas.add(self.i)
        self.i += 1

    def _por_arreglar(self):
        return [i for i, c in enumerate(self.codigo[:self.i])
                if any(self.estado.get(e) in ("esbozo", "mal", "en rojo") for e in c.ejercicios)]

    @precondition(lambda s: s._por_arreglar())
    @rule(cual=st.integers(0, 50), con_la_segunda=st.booleans())
    def arreglar(self, cual, con_la_segunda):
        """Vuelve a un ejercicio pendiente o en rojo: su solución (o la segunda) y sus comprobaciones."""
        self._contar("arreglar")
        pendientes = self._por_arreglar()
        indice = pendientes[cual % len(pendientes)]
        celda = self.codigo[indice]
        textos = [celda.resuelta]
        for id in celda.ejercicios:
            if con_la_segunda and segunda(id) is not None:
                textos = ([variantes.celda(segunda(id))] if segunda(id).modulo is None
                          else textos + [variantes.celda(segunda(id))])
            self.estado[id] = "bien"
        siguen = self.i
        self._correr(indice, textos)
        for j in range(indice + 1, siguen):  # sus --cambia y sus comprobaciones, como las corrió
            otra = self.codigo[j]
            cambia = otra.modulo == celda.modulo and "--cambia" in otra.alumno.split("\n")[0]
            if cambia or set(celda.ejercicios) & {otra.comprueba}:
                self._correr(j, [otra.resuelta if cambia else otra.alumno])
        self.i = siguen

    def ver_en_la_terminal(self):
        """`python -m curso comprobar N` en la terminal: si la lección está entera y todo en ✔, pasa."""
        self._contar("comprobar N")
        codigo, texto = self.alumno.orden("comprobar", str(self.leccion), codigo=None)
        if "Traceback" in texto:
            raise Hallazgo(f"comprobar {self.leccion}: escribe una traza:\n{texto[-3000:]}")
        entera = self.i >= len(self.codigo) and not self.saltadas
        todo_bien = all(e == "bien" for e in self.estado.values())
        if entera and todo_bien and codigo != 0:
            raise Hallazgo(f"lección {self.leccion:02d} entera y con sus ejercicios en ✔ en el cuaderno "
                           f"({', '.join(sorted(self.estado))}), pero comprobar {self.leccion} falla:\n{texto[-3000:]}")

    def volver(self):
        """Vuelve a la lección anterior, en un núcleo nuevo, y la empieza."""
        self._contar("volver")
        self._abrir(rutas.anterior(self.leccion))

    def leccion_siguiente(self):
        """Acabada la lección, abre la siguiente."""
        self._contar("lección siguiente")
        self._abrir(rutas.siguiente(self.leccion))

    def restaurar(self):
        """Se ha perdido: restaura el punto de control anterior y empieza la lección de nuevo."""
        self._contar("restaurar")
        self.alumno.orden("restaurar", str(rutas.anterior(self.leccion)))
        self.estado = {}
        self._abrir(self.leccion)

    @invariant()
    def los_nombres_son_los_del_curso(self):
        if self.cuaderno is not None:
            tapados = self.cuaderno.ayudantes_del_curso()
            if tapados:
                raise Hallazgo(f"lección {self.leccion:02d}: {', '.join(tapados)} ya no es el del curso")

    def teardown(self):
        if self.cuaderno is not None:
            self.cuaderno.cerrar()
        shutil.rmtree(self.carpeta, ignore_errors=True)


def correr(semilla, n, pasos=PASOS, lecciones=LECCIONES, encoger=True):
    """`n` caminos de hasta `pasos` pasos con la semilla `semilla`; lanza el hallazgo (con la lista
    de pasos más corta que lo reproduce, que hypothesis imprime) si alguno falla."""
    CaminoAlAzar.lecciones = tuple(lecciones)
    fases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if encoger else [])
    ajustes = settings(max_examples=n, stateful_step_count=pasos, deadline=None, database=None,
                       phases=fases, print_blob=False, suppress_health_check=list(HealthCheck))
    prueba = get_state_machine_test(CaminoAlAzar, settings=ajustes)
    seed(semilla)(prueba)()


__all__ = ["CUENTA", "CaminoAlAzar", "HECHO", "correr"]
