"""Para `comprobar N` y `calificar`: de los resultados de unos tests, una línea por módulo y las cuentas.

Qué test es de qué módulo: uno que califica (`modulo_de`), el del módulo de su ejercicio (la
comprobación del 4.3 y los tests con la marca `contrato("4.3")` son de `resumenes.py`). Si no se
dice, por su fichero: `test_X.py` es de `X.py`; `test_X_algo.py`, de `X.py` si existe
(`test_correr_cli.py` → `correr.py`, `test_agente_ventana.py` → `agente.py`); los de la tabla
OTROS_NOMBRES, del módulo que dice; y uno que no es de ningún módulo (`test_recorridos.py`: las
ejecuciones guionizadas enteras, que usan varios a la vez) lleva su propia línea. Un módulo que
no está en el espacio es una línea ✘ «falta» (si es código que da el curso, con la orden que lo
restaura sin tocar lo demás), y uno sin tests propios, una línea «·»: el código que da el curso
no lo califica ningún test (sus tests son de regresión), lo usan los ejercicios.

Cada línea dice lo primero que hay que mirar: el primer test que falla, de qué ejercicio es y lo
que esperaba (o «ejercicio 3.2 pendiente» si lo que falla es que llega a su esbozo), el test que se
colgó, o cuántos quedaron sin comprobar. Todo aquí es puro: no arranca procesos ni toca el disco.
"""
from dataclasses import dataclass, field

from curso.comprobaciones.aparte import COLGADO as T_COLGADO
from curso.comprobaciones.aparte import FALLA, MUERTO, NO_SE_CUMPLE, PASA, SALTADO, frase_del_test
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
SIN_TESTS_PROPIOS = "sin tests propios aquí; lo usan los tests de los demás"
DADO = "código que da el curso: no te califica ningún test (los suyos son de regresión); lo usan tus ejercicios"
RESTAURAR = "python -m curso restaurar {punto} --fichero {fichero}"  # pone solo ese fichero, sin tocar los demás


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
    ejercicio: str = ""  # el ejercicio de ese test («4.3»), si califica

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


def nombre_del_test(test, resultado=None):
    """Cómo se le nombra un test a quien escribió el código: lo que comprueba y su fichero («el test
    «un permiso denegado vuelve como error [caso]» (test_permisos.py)», con el caso que decidió si
    es uno de varios); la de un ejercicio, «la comprobación del ejercicio 4.3» (la de
    `comprobar("4.3")` en el cuaderno)."""
    id = ejercicio_de_test(test)
    if id:
        return f'la comprobación del ejercicio {id} (comprobar("{id}"))'
    caso = getattr(resultado, "caso", "") or test.split("::", 1)[-1]
    return f"el test «{frase_del_test(caso)}» ({fichero_de(test)})"



def ejercicios_ordenados(ids):
    from curso.comprobaciones import ejercicios
    return ejercicios.ordenados(set(ids))


def es_codigo_dado(modulo):
    """¿Es `modulo` código que da el curso, que no escribe ningún ejercicio (herramientas, api…)?"""
    from curso.comprobaciones import ejercicios
    return not any(e.modulo == modulo for e in ejercicios.cargar_registro().values())


def _cuantos(n, uno, varios):
    return f"{n} {uno if n == 1 else varios}"


def linea(nombre, tests, resultados, ejercicio_de=None):
    """La línea de `nombre` a partir de los resultados de sus `tests` (si no está, «sin comprobar»);
    ejercicio_de: {test: ejercicio} de los que califican, para decir de cuál es el que falla."""
    from curso.comprobaciones.aparte import Resultado, SIN_COMPROBAR as T_SIN
    ejercicio_de = ejercicio_de or {}
    if not tests:
        dado = es_codigo_dado(nombre.removesuffix(".py"))
        return Linea(nombre, SIN_TESTS, DADO if dado else SIN_TESTS_PROPIOS)
    de = {t: resultados.get(t) or Resultado(T_SIN, "no llegó a correr") for t in tests}
    if ejercicio_de:  # lo primero, lo del ejercicio más temprano (su comprobación, antes que sus tests)
        from curso.comprobaciones import ejercicios
        tests = sorted(tests, key=lambda t: (ejercicios.clave(ejercicio_de.get(t, "99")),
                                             not ejercicio_de_test(t), tests.index(t)))
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
        elif len(fallan) > 1 and primero.motivo != NO_SE_CUMPLE and all(de[t].motivo == primero.motivo for t in fallan):
            detalle, otros = f"{primero.motivo} (fallan los {len(fallan)} tests)", 0  # al importar, p. ej.
        else:
            en = f" (en {primero.donde}.py)" if primero.donde and f"{primero.donde}.py" != nombre else ""
            de = (f" (ejercicio {ejercicio_de[fallan[0]]})" if fallan[0] in ejercicio_de
                  and not ejercicio_de_test(fallan[0]) else "")
            detalle = f"falla {nombre_del_test(fallan[0], primero)}{de}{en}: {primero.motivo}"
            otros = len(fallan) - 1
        if otros:
            detalle += f" (y {_cuantos(otros, 'test más falla', 'tests más fallan')})"
        return Linea(nombre, MAL, detalle + mas, fallan[0], primero.pendiente, primero.donde,
                     ejercicio=primero.pendiente or ejercicio_de.get(fallan[0], ""))
    if colgados:
        primero = de[colgados[0]]
        detalle = f"{nombre_del_test(colgados[0], primero)} colgado: {primero.motivo}"
        if len(colgados) > 1:
            detalle += f" (y {_cuantos(len(colgados) - 1, 'otro', 'otros')})"
        return Linea(nombre, COLGADO, detalle + mas, colgados[0], donde=primero.donde,
                     ejercicio=ejercicio_de.get(colgados[0], ""))
    if sin:
        motivo = de[sin[0]].motivo
        return Linea(nombre, SIN_COMPROBAR, f"{len(sin)} sin comprobar" + (f": {motivo}" if motivo else "")
                     + (f" ({_cuantos(len(pasan), 'pasa', 'pasan')})" if pasan else ""), sin[0])
    comprobaciones = ejercicios_ordenados(ejercicio_de_test(t) for t in pasan if ejercicio_de_test(t))
    de_contrato = len(pasan) - len(comprobaciones)
    partes = ([_cuantos(de_contrato, "test pasa", "tests pasan")] if de_contrato or not comprobaciones else [])
    if comprobaciones:
        from curso.comprobaciones.ejercicios import enumerar
        partes.append(f"la comprobación del {comprobaciones[0]} pasa" if len(comprobaciones) == 1 else
                      f"las comprobaciones de los ejercicios {enumerar(comprobaciones)} pasan")
    return Linea(nombre, BIEN, " y ".join(partes))


def consecuencia(linea_, por):
    """La línea de un módulo cuyos tests que no pasan son todos consecuencia de otro (`por`:
    {test: culpable}); la misma línea si no."""
    if linea_.estado not in (MAL, COLGADO, SIN_COMPROBAR) or not por:
        return linea_
    return Linea(linea_.nombre, CONSECUENCIA, linea_.detalle, linea_.primero, linea_.pendiente,
                 linea_.donde, por, ejercicio=linea_.ejercicio)


def de_culpable(linea_, culpa):
    """La línea de un módulo culpable: la suya si ya lo dice (sus tests fallan), o una que dice por
    qué es culpable (no se importa, se colgó, falla con otros) aunque no tenga tests propios."""
    from curso.comprobaciones import culpa as regla
    if (culpa.por, linea_.estado) in ((regla.SUS_TESTS, MAL), (regla.COLGADO, COLGADO)):
        quien = f" (lo escribe el ejercicio {culpa.ejercicio})" if culpa.ejercicio and not linea_.pendiente else ""
        return Linea(linea_.nombre, linea_.estado, linea_.detalle + quien, linea_.primero, linea_.pendiente,
                     linea_.donde, culpable=True, ejercicio=linea_.pendiente or culpa.ejercicio)
    estado = COLGADO if culpa.por == regla.COLGADO else MAL
    detalle = culpa.texto() + (f" ({linea_.detalle})" if linea_.estado == SIN_COMPROBAR else "")
    return Linea(linea_.nombre, estado, detalle, linea_.primero, linea_.pendiente, culpa.modulo,
                 culpable=True, ejercicio=culpa.ejercicio)


def falta(modulo, leccion=None, punto=None):
    """La línea de un módulo que no está en el espacio: qué lección lo escribe y, si es código que
    da el curso, la orden que lo pone de vuelta (solo ese fichero: lo demás del alumno no se toca)."""
    quien = f" (lo escribe la lección {leccion:02d})" if leccion is not None else ""
    if es_codigo_dado(modulo) and punto is not None:
        orden = RESTAURAR.format(punto=f"{punto:02d}", fichero=f"{modulo}.py")
        en = f" en la lección {leccion:02d}" if leccion is not None else ""
        return Linea(f"{modulo}.py", FALTA, f"falta en tu espacio: es código que da el curso{en}; "
                                            f"restáuralo con {orden}")
    return Linea(f"{modulo}.py", FALTA, f"falta en tu espacio{quien}")


def lineas_de(modulos, presentes, tests, resultados, todos=None, leccion_de=None, por=None, culpables=(),
              modulo_de=None, ejercicio_de=None, punto=None):
    """Las líneas de un informe.

    modulos: los módulos (sin .py) que llevan línea, en orden; presentes: los que tiene el espacio;
    tests: los que cuentan («test_x.py::test_y»); resultados: {test: aparte.Resultado}; todos:
    todos los módulos del punto de control (para saber de quién es cada fichero; `modulos` si no
    se da); leccion_de: {módulo: lección que lo escribe}, para decirlo si falta; por: {test: su
    culpable}, los que fallan solo por otro módulo; culpables: [culpa.Culpa] de la regla de la
    culpa; modulo_de(test): el módulo de un test (si no, el de su fichero; los de los ejercicios,
    entonces, no llevan línea); ejercicio_de: {test: ejercicio} de los que califican; punto: el
    número del punto de control, para la orden que restaura un fichero que falta."""
    todos = list(todos or modulos)
    leccion_de = leccion_de or {}
    por = por or {}
    culpa_de = {c.modulo: c for c in culpables}
    grupos, sueltos = {m: [] for m in modulos}, {}
    for t in tests:
        if modulo_de is None and ejercicio_de_test(t) is not None:
            continue
        m = modulo_de(t) if modulo_de is not None else modulo_de_test(fichero_de(t), todos)
        if m is None:
            sueltos.setdefault(fichero_de(t), []).append(t)
        elif m in grupos:
            grupos[m].append(t)
    lineas = []
    for m in modulos:
        if m not in presentes:
            lineas.append(falta(m, leccion_de.get(m), punto))
        elif m in culpa_de:
            lineas.append(de_culpable(linea(f"{m}.py", grupos[m], resultados, ejercicio_de), culpa_de[m]))
        else:
            lineas.append(_con_su_culpable(linea(f"{m}.py", grupos[m], resultados, ejercicio_de), grupos[m],
                                           resultados, por))
    for fichero, suyos in sueltos.items():
        lineas.append(_con_su_culpable(linea(f"{fichero} ({VARIOS})", suyos, resultados, ejercicio_de), suyos,
                                       resultados, por))
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


def ejercicios_de(tests, resultados, ejercicio_de=None):
    """{ejercicio: aparte.Resultado} de cada ejercicio de `tests` que tiene su comprobación: el de
    ella si no pasa; si pasa, el del primero de sus tests de contrato (ejercicio_de: {test:
    ejercicio}) que no pasa, con su nombre delante; si todo pasa, el de ella. Sin resultado, «sin
    comprobar». Un ejercicio está hecho si pasa su contrato entero: su comprobación y sus tests."""
    from curso.comprobaciones.aparte import Resultado, SIN_COMPROBAR as T_SIN
    ejercicio_de = ejercicio_de or {}
    de = {}
    for t in tests:
        id = ejercicio_de_test(t)
        if id is None:
            continue
        de[id] = resultados.get(t) or Resultado(T_SIN, "no llegó a correr")
        if de[id].estado != PASA:
            continue
        for otro in tests:
            r = resultados.get(otro)
            if ejercicio_de.get(otro) == id and not ejercicio_de_test(otro) and r is not None \
                    and r.estado not in (PASA, SALTADO):
                de[id] = Resultado(r.estado, f"{nombre_del_test(otro, r)}: {r.motivo}", r.pendiente, r.caso, r.donde)
                break
    return de


def sin_comprobar(tests, resultados):
    """Cuántos de `tests` (sin los ejercicios) no llegaron a correr o se saltaron."""
    from curso.comprobaciones.aparte import SIN_COMPROBAR as T_SIN
    return sum(1 for t in tests if ejercicio_de_test(t) is None
               and getattr(resultados.get(t), "estado", T_SIN) in (T_SIN, SALTADO))


def lineas_para_leer(comprobacion):
    """El texto de cada línea, con el código que da el curso que está bien en una sola al final."""
    dados = [l.nombre for l in comprobacion.lineas if l.estado == SIN_TESTS and l.detalle == DADO]
    lineas = [l.texto() for l in comprobacion.lineas if not (l.estado == SIN_TESTS and l.detalle == DADO)]
    return lineas + ([f"{SIMBOLO[SIN_TESTS]} {', '.join(dados)}: {DADO}"] if dados else [])


def informe(comprobacion, de_donde):
    """El texto que escribe `comprobar`: una línea por módulo (el código que da el curso que está
    bien, en una sola), las notas y el veredicto."""
    c = comprobacion
    cabecera = (f"Punto de control {c.numero:02d} ({c.nombre}): la comprobación de cada ejercicio y los "
                f"tests de contrato, contra {de_donde}")
    cuerpo = lineas_para_leer(c) + [f"· {nota}" for nota in c.notas]
    rojas = sum(1 for l in c.lineas if l.estado not in NO_IMPIDEN_EL_VERDE)
    if c.culpables:
        primero = c.culpables[0]
        cuerpo.append(f"Lo primero que mirar: {primero.modulo}.py ({primero.texto()})")
    ejercicios = _cuantos(len(c.ejercicios), "ejercicio", "ejercicios")
    if c.en_verde:
        final = (f"✔ Tu código cumple el contrato de sus {ejercicios}: pasa su comprobación y los "
                 f"{c.tests_total} tests de contrato del punto de control {c.numero:02d}.")
    else:
        final = (f"✘ {c.ejercicios_hechos} de {ejercicios} cumplen su contrato; {c.tests_pasan} de "
                 f"{c.tests_total} tests de contrato pasan; {rojas} de {len(c.lineas)} líneas sin el ✔. "
                 f"Para ver en qué difiere tu código del de referencia: python -m curso comparar {c.numero:02d}")
    return "\n".join([cabecera, *cuerpo, final])
