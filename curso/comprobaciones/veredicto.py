"""Para `comprobar N` y `calificar`: de los resultados de unos tests, una línea por módulo y las cuentas.

Qué test es de qué módulo: `test_X.py` es de `X.py`; `test_X_algo.py`, de `X.py` si existe
(`test_correr_cli.py` → `correr.py`, `test_agente_ventana.py` → `agente.py`); los de la tabla
OTROS_NOMBRES, del módulo que dice; y uno que no es de ningún módulo (`test_recorridos.py`: las
ejecuciones guionizadas enteras, que usan varios a la vez) lleva su propia línea. Un módulo que
no está en el espacio es una línea ✘ «falta», y uno sin tests propios, una línea «·» (lo usan los
tests de los demás).

Cada línea dice lo primero que hay que mirar: el primer test que falla y lo que esperaba (o «ejercicio
3.2 pendiente» si lo que falla es que llega a su esbozo), el test que se colgó, o cuántos quedaron
sin comprobar. Todo aquí es puro: no arranca procesos ni toca el disco.
"""
from dataclasses import dataclass, field

from curso.comprobaciones.aparte import COLGADO as T_COLGADO
from curso.comprobaciones.aparte import FALLA, MUERTO, PASA, SALTADO
from curso.comprobaciones.tests_del_curso import ejercicio_de_test, fichero_de

# Cómo queda cada línea.
# CONSECUENCIA: sus tests fallan (o no llegaron a correr) solo por otro módulo, su culpable
# (ver `curso/comprobaciones/culpa.py`): la línea lo nombra detrás, «durable.py, por resumenes.py».
BIEN, MAL, FALTA, COLGADO, SIN_TESTS, SIN_COMPROBAR, CONSECUENCIA = (
    "bien", "mal", "falta", "colgado", "sin tests", "sin comprobar", "consecuencia")
SIMBOLO = {BIEN: "✔", MAL: "✘", FALTA: "✘", COLGADO: "⚠", SIN_TESTS: "·", SIN_COMPROBAR: "·",
           CONSECUENCIA: "✘"}
NO_IMPIDEN_EL_VERDE = {BIEN, SIN_TESTS}

# Tests cuyo nombre no es el de su módulo: `buscar` es una herramienta de herramientas.py.
OTROS_NOMBRES = {"buscar": "herramientas"}
VARIOS = "prueba varios módulos a la vez"


@dataclass
class Linea:
    """Una línea del informe: un módulo (o un fichero de tests de conjunto) y cómo ha quedado."""
    nombre: str
    estado: str
    detalle: str = ""
    primero: str = ""  # el primer test que falla o se cuelga, si alguno («test_x.py::test_y»)
    pendiente: str = ""  # el ejercicio cuyo esbozo alcanzó ese test, si es eso
    donde: str = ""  # el módulo (sin .py) en el que falló o se colgó ese test, si se sabe
    por: str = ""  # su culpable (sin .py), si es una CONSECUENCIA
    culpable: bool = False  # si es la línea de un culpable

    @property
    def modulo(self):
        """El módulo de la línea, sin .py («test_recorridos» para la de un fichero de conjunto)."""
        return self.nombre.split(" (")[0].removesuffix(".py")

    def texto(self):
        por = f", por {self.por}.py" if self.por else ""
        return f"{SIMBOLO[self.estado]} {self.nombre}{por}" + (f": {self.detalle}" if self.detalle else "")


@dataclass
class Comprobacion:
    """Lo que dice una comprobación de un espacio contra un punto de control."""
    numero: int
    nombre: str  # "el_bucle"
    lineas: list = field(default_factory=list)
    limite: float = 0
    tests_pasan: int = 0
    tests_total: int = 0
    ejercicios: dict = field(default_factory=dict)  # {"3.2": aparte.Resultado}
    notas: list = field(default_factory=list)
    sin_comprobar: int = 0  # tests que no llegaron a correr (o se saltaron)
    culpables: list = field(default_factory=list)  # [culpa.Culpa], el primero es lo primero que mirar

    @property
    def en_verde(self):
        return bool(self.lineas) and all(l.estado in NO_IMPIDEN_EL_VERDE for l in self.lineas)

    @property
    def ejercicios_hechos(self):
        return sum(1 for r in self.ejercicios.values() if r.estado == PASA)


def modulo_de_test(fichero, modulos):
    """El módulo (sin .py) del que es el fichero de tests `fichero`, o None si no es de ninguno.

    test_bucle.py → bucle; test_correr_cli.py → correr (el prefijo más largo que es un módulo);
    test_buscar.py → herramientas (OTROS_NOMBRES); test_recorridos.py → None."""
    base = fichero.split("/")[-1].removesuffix(".py").removeprefix("test_")
    partes = base.split("_")
    for cuantas in range(len(partes), 0, -1):
        candidato = "_".join(partes[:cuantas])
        if candidato in modulos:
            return candidato
    otro = OTROS_NOMBRES.get(base)
    return otro if otro in modulos else None


def _nombre(test, resultado):
    """«test_x.py::test_y» o, si decidió uno de sus casos, «test_x.py::test_y[caso]»."""
    return f"{fichero_de(test)}::{resultado.caso}" if resultado.caso else test


def _cuantos(n, uno, varios):
    return f"{n} {uno if n == 1 else varios}"


def linea(nombre, tests, resultados):
    """La línea de `nombre` a partir de los resultados de sus `tests` (si no está, «sin comprobar»)."""
    from curso.comprobaciones.aparte import Resultado, SIN_COMPROBAR as T_SIN
    if not tests:
        return Linea(nombre, SIN_TESTS, "sin tests propios aquí; lo usan los tests de los demás")
    de = {t: resultados.get(t) or Resultado(T_SIN, "no llegó a correr") for t in tests}
    fallan = [t for t in tests if de[t].estado in (FALLA, MUERTO)]
    colgados = [t for t in tests if de[t].estado == T_COLGADO]
    sin = [t for t in tests if de[t].estado in (T_SIN, SALTADO)]
    pasan = [t for t in tests if de[t].estado == PASA]
    extra = []
    if fallan and colgados:
        extra.append(_cuantos(len(colgados), "colgado", "colgados"))
    if sin and (fallan or colgados):
        extra.append(f"{len(sin)} sin comprobar")
    mas = f" ({'; '.join(extra)})" if extra else ""
    if fallan:
        primero = de[fallan[0]]
        if primero.pendiente:
            alcanzan = sum(1 for t in fallan if de[t].pendiente == primero.pendiente)
            detalle = (f"ejercicio {primero.pendiente} pendiente (llegan a su esbozo "
                       f"{_cuantos(alcanzan, 'test', 'tests')})")
            otros = len(fallan) - alcanzan
        elif len(fallan) > 1 and all(de[t].motivo == primero.motivo for t in fallan):
            detalle, otros = f"{primero.motivo} (fallan los {len(fallan)} tests)", 0  # al importar, p. ej.
        else:
            en = f" (en {primero.donde}.py)" if primero.donde and f"{primero.donde}.py" != nombre else ""
            detalle = f"falla {_nombre(fallan[0], primero)}{en}: {primero.motivo}"
            otros = len(fallan) - 1
        if otros:
            detalle += f" (y {_cuantos(otros, 'test más falla', 'tests más fallan')})"
        return Linea(nombre, MAL, detalle + mas, fallan[0], primero.pendiente, primero.donde)
    if colgados:
        primero = de[colgados[0]]
        detalle = f"{_nombre(colgados[0], primero)} colgado: {primero.motivo}"
        if len(colgados) > 1:
            detalle += f" (y {_cuantos(len(colgados) - 1, 'otro', 'otros')})"
        return Linea(nombre, COLGADO, detalle + mas, colgados[0], donde=primero.donde)
    if sin:
        motivo = de[sin[0]].motivo
        return Linea(nombre, SIN_COMPROBAR, f"{len(sin)} sin comprobar" + (f": {motivo}" if motivo else "")
                     + (f" ({_cuantos(len(pasan), 'pasa', 'pasan')})" if pasan else ""), sin[0])
    return Linea(nombre, BIEN, _cuantos(len(pasan), "test pasa", "tests pasan"))


def consecuencia(linea_, por):
    """La línea de un módulo cuyos tests que no pasan son todos consecuencia de otro (`por`:
    {test: culpable}); la misma línea si no."""
    if linea_.estado not in (MAL, COLGADO, SIN_COMPROBAR) or not por:
        return linea_
    return Linea(linea_.nombre, CONSECUENCIA, linea_.detalle, linea_.primero, linea_.pendiente,
                 linea_.donde, por)


def de_culpable(linea_, culpa):
    """La línea de un módulo culpable: la suya si ya lo dice (sus tests fallan), o una que dice por
    qué es culpable (no se importa, se colgó, falla con otros) aunque no tenga tests propios."""
    from curso.comprobaciones import culpa as regla
    if (culpa.por, linea_.estado) in ((regla.SUS_TESTS, MAL), (regla.COLGADO, COLGADO)):
        quien = f" (lo escribe el ejercicio {culpa.ejercicio})" if culpa.ejercicio and not linea_.pendiente else ""
        return Linea(linea_.nombre, linea_.estado, linea_.detalle + quien, linea_.primero, linea_.pendiente,
                     linea_.donde, culpable=True)
    estado = COLGADO if culpa.por == regla.COLGADO else MAL
    detalle = culpa.texto() + (f" ({linea_.detalle})" if linea_.estado == SIN_COMPROBAR else "")
    return Linea(linea_.nombre, estado, detalle, linea_.primero, linea_.pendiente, culpa.modulo,
                 culpable=True)


def lineas_de(modulos, presentes, tests, resultados, todos=None, leccion_de=None, por=None, culpables=()):
    """Las líneas de un informe.

    modulos: los módulos (sin .py) que llevan línea, en orden; presentes: los que tiene el espacio;
    tests: los que cuentan («test_x.py::test_y»); resultados: {test: aparte.Resultado}; todos:
    todos los módulos del punto de control (para saber de quién es cada fichero; `modulos` si no
    se da); leccion_de: {módulo: lección que lo escribe}, para decirlo si falta; por: {test: su
    culpable}, los que fallan solo por otro módulo; culpables: [culpa.Culpa] de la regla de la culpa."""
    todos = list(todos or modulos)
    leccion_de = leccion_de or {}
    por = por or {}
    culpa_de = {c.modulo: c for c in culpables}
    grupos, sueltos = {m: [] for m in modulos}, {}
    for t in tests:
        if ejercicio_de_test(t) is not None:
            continue
        m = modulo_de_test(fichero_de(t), todos)
        if m is None:
            sueltos.setdefault(fichero_de(t), []).append(t)
        elif m in grupos:
            grupos[m].append(t)
    lineas = []
    for m in modulos:
        if m not in presentes:
            leccion = leccion_de.get(m)
            quien = f" (lo escribe la lección {leccion:02d})" if leccion is not None else ""
            lineas.append(Linea(f"{m}.py", FALTA, f"falta en tu espacio{quien}"))
        elif m in culpa_de:
            lineas.append(de_culpable(linea(f"{m}.py", grupos[m], resultados), culpa_de[m]))
        else:
            lineas.append(_con_su_culpable(linea(f"{m}.py", grupos[m], resultados), grupos[m], resultados, por))
    for fichero, suyos in sueltos.items():
        lineas.append(_con_su_culpable(linea(f"{fichero} ({VARIOS})", suyos, resultados), suyos, resultados, por))
    return lineas


def _con_su_culpable(linea_, tests, resultados, por):
    """La línea, como consecuencia si todos sus tests que no pasan lo son del mismo culpable."""
    from curso.comprobaciones.aparte import PASA
    malos = [t for t in tests if getattr(resultados.get(t), "estado", None) not in (PASA, SALTADO)]
    culpables = {por.get(t) for t in malos}
    if malos and len(culpables) == 1 and None not in culpables:
        return consecuencia(linea_, culpables.pop())
    return linea_


def cuentas(tests, resultados):
    """(cuántos pasan, cuántos son) de `tests`, sin contar los de los ejercicios."""
    propios = [t for t in tests if ejercicio_de_test(t) is None]
    return sum(1 for t in propios if getattr(resultados.get(t), "estado", None) == PASA), len(propios)


def sin_comprobar(tests, resultados):
    """Cuántos de `tests` (sin los ejercicios) no llegaron a correr o se saltaron."""
    from curso.comprobaciones.aparte import SIN_COMPROBAR as T_SIN
    return sum(1 for t in tests if ejercicio_de_test(t) is None
               and getattr(resultados.get(t), "estado", T_SIN) in (T_SIN, SALTADO))


def informe(comprobacion, de_donde):
    """El texto que escribe `comprobar`: una línea por módulo, las notas y el veredicto."""
    c = comprobacion
    cabecera = f"Punto de control {c.numero:02d} ({c.nombre}): sus tests contra {de_donde}"
    cuerpo = [l.texto() for l in c.lineas] + [f"· {nota}" for nota in c.notas]
    rojas = sum(1 for l in c.lineas if l.estado not in NO_IMPIDEN_EL_VERDE)
    if c.culpables:
        primero = c.culpables[0]
        cuerpo.append(f"Lo primero que mirar: {primero.modulo}.py ({primero.texto()})")
    if c.en_verde:
        final = (f"✔ Tu código pasa los {c.tests_total} tests del punto de control {c.numero:02d}.")
    else:
        final = (f"✘ {c.tests_pasan} de {c.tests_total} tests pasan; {rojas} de {len(c.lineas)} "
                 f"líneas sin el ✔. Para ver en qué difiere tu código del de referencia: "
                 f"python -m curso comparar {c.numero:02d}")
    return "\n".join([cabecera, *cuerpo, final])
