"""Para `comprobar("N.M")`, `comprobar N` y `calificar`: el diferencial de cada ejercicio, tu código frente a la referencia sobre entradas generadas.

Los casos escritos de `lNN.py` pillan los errores que imaginamos. El diferencial pilla los demás:
tu código y la referencia (el módulo del punto de control de la lección, o la celda resuelta de
los ejercicios del cuaderno) corren sobre las mismas entradas, generadas con hypothesis del
dominio del ejercicio, y tienen que coincidir en cada hecho del contrato: lo que devuelven, las
filas de la base, el tipo de la excepción, los datos que un mensaje tiene que nombrar. Nunca la
redacción de un mensaje: eso no lo fija el texto del ejercicio.

Cómo se declara (en `lNN.py`, detrás de los casos escritos del ejercicio; ver también el
docstring de `ejercicios.py`):

- Sin estado: una función `hechos(objetivo, entrada) -> {nombre del hecho: valor}` y la
  estrategia de sus entradas:

      @caso.diferencial(entradas=st.text(alphabet="ab \\n"), contar=lambda s: f"salida = {s!r}")
      def _(ultima_linea, salida):
          return {"lo que devuelve": ultima_linea(salida)}

- Con estado: una subclase de `Maquina` con su `preparar(objetivo)` (el mundo de una
  implementación: su base de datos, su M...) y sus `@regla(...)`, cada una un paso que se hace
  en los dos mundos y devuelve sus hechos. hypothesis elige secuencias de pasos.

`objetivo` es lo mismo que reciben los casos escritos: la función del ejercicio o su módulo.
Un hecho que es una excepción se escribe con `intento(f, ...)`, que da lo que devuelve o un
`Lanzo` (se compara por el nombre del tipo; si la referencia lanza una excepción de Python, vale
también una subclase suya). Si la función de hechos entera lanza, el hecho es ese `Lanzo`.

Lo que promete: derandomizado (la misma semilla siempre, sin base de datos de ejemplos, sin
escribir `.hypothesis/` en ningún sitio), con un presupuesto fijo de ejemplos y un tope de
corridas para encoger un fallo, así que el mismo código da el mismo veredicto en el cuaderno, en
`comprobar N` y en `calificar`. Un desacuerdo es un `Fallo` con la entrada más pequeña que lo
enseña (la encoge hypothesis): en `esperado`, lo que hizo la referencia; en `obtenido`, lo que
hizo tu código; en la nota, la entrada, el hecho y su pista. Un esbozo alcanzado deja el caso
pendiente, como en los casos escritos, y un bucle que no acaba lo corta `casos.con_limite`.
"""
import contextlib
import copy
import inspect
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path
from types import SimpleNamespace

from curso import rutas
from curso.comprobaciones import casos

# Lo que dice la línea del diferencial en el informe: `variantes.py` y los tests lo buscan por aquí.
LO_MISMO = "hace lo mismo que la solución de referencia"
EJEMPLOS = 100  # entradas de un diferencial sin estado, si no dice otra cosa
SECUENCIAS = 25  # secuencias de una máquina, si no dice otra cosa
PASOS = 8  # pasos de cada secuencia, como mucho
# Corridas, tras el primer desacuerdo, para encogerlo; después se da por buena la más pequeña
# encontrada. Un tope por cuenta, no por reloj: así el mensaje es el mismo en cualquier máquina.
PARA_ENCOGER = 1000


class Lanzo:
    """Un hecho: la llamada lanzó una excepción. Se compara por el nombre de su tipo."""

    def __init__(self, error):
        self.error, self.tipo = error, type(error).__name__

    def __repr__(self):
        mensaje = str(self.error).split("\n")[0]
        return f"lanzó {self.tipo}" + (f": {mensaje[:120]}" if mensaje else "")

    def __eq__(self, otro):
        return isinstance(otro, Lanzo) and otro.tipo == self.tipo

    def __hash__(self):
        return hash(self.tipo)

    def __deepcopy__(self, memo):
        return self


def intento(funcion, *args, **opciones):
    """Lo que devuelve `funcion(*args, **opciones)`, o un `Lanzo` con lo que lanzó. El esbozo de un
    ejercicio y el corte por tiempo siguen su camino: no son hechos, sino que no se pudo mirar."""
    try:
        return funcion(*args, **opciones)
    except Exception as error:  # noqa: BLE001 - lo que lance el código del alumno es un hecho
        if _no_es_un_hecho(error):
            raise
        return Lanzo(error)


def _no_es_un_hecho(error):
    return casos.esbozo_alcanzado(error) is not None or (
        isinstance(error, TimeoutError) and casos.ALARMA.disparada)


def iguales(referencia, alumno):
    """¿Coinciden dos hechos? Como ==, salvo que un bool solo es igual a un bool (True no es 1) y que
    una excepción de Python de la referencia admite una subclase suya (un ValueError propio vale)."""
    if isinstance(referencia, Lanzo) or isinstance(alumno, Lanzo):
        if not (isinstance(referencia, Lanzo) and isinstance(alumno, Lanzo)):
            return False
        tipo = type(referencia.error)
        return referencia.tipo == alumno.tipo or (tipo.__module__ == "builtins" and isinstance(alumno.error, tipo))
    if isinstance(referencia, bool) or isinstance(alumno, bool):
        return type(referencia) is type(alumno) and referencia == alumno
    if isinstance(referencia, dict) and isinstance(alumno, dict):
        return referencia.keys() == alumno.keys() and all(iguales(v, alumno[k]) for k, v in referencia.items())
    if isinstance(referencia, (list, tuple)) and isinstance(alumno, (list, tuple)):
        return (type(referencia) is type(alumno) and len(referencia) == len(alumno)
                and all(iguales(a, b) for a, b in zip(referencia, alumno, strict=True)))
    try:
        return bool(referencia == alumno)
    except Exception:  # noqa: BLE001 - un valor raro del alumno que no se deja comparar
        return False


LO_QUE_PASA = "lo que pasa"  # el hecho cuando la función de hechos entera devuelve o lanza otra cosa


class _Falta:
    def __repr__(self):
        return "(no está)"


def primera_diferencia(referencia, alumno):
    """(hecho, lo de la referencia, lo del alumno) del primer hecho en que no coinciden, o None."""
    if isinstance(referencia, dict) and isinstance(alumno, dict):
        for clave in list(referencia) + [k for k in alumno if k not in referencia]:
            a, b = referencia.get(clave, _Falta()), alumno.get(clave, _Falta())
            if not iguales(a, b):
                return clave, a, b
        return None
    return None if iguales(referencia, alumno) else (LO_QUE_PASA, referencia, alumno)


class Desacuerdo(Exception):
    """La referencia y el alumno no coinciden en `hecho` con la entrada que dice `entrada`."""

    def __init__(self, entrada, hecho, referencia, alumno, pista):
        super().__init__(f"{entrada}: {hecho}")
        self.entrada, self.hecho, self.referencia, self.alumno, self.pista = entrada, hecho, referencia, alumno, pista


class _Parar(BaseException):
    """No hay nada más que mirar (un esbozo alcanzado, el tiempo, el tope de encoger). Es una
    BaseException para que hypothesis no la tome por un fallo que encoger y pare en seguida."""


def _copia(valor):
    try:
        return copy.deepcopy(valor)
    except Exception:  # noqa: BLE001 - un valor del alumno que no se deja copiar se guarda tal cual
        return valor


class Carrera:
    """Lo que se sabe mientras corre hypothesis: el último desacuerdo (el más pequeño, porque al
    encoger solo se prueban entradas más pequeñas) y lo que obliga a parar."""

    def __init__(self, pistas, para_encoger=PARA_ENCOGER):
        self.pistas, self.para_encoger = pistas or {}, para_encoger
        self.ultimo = None  # el último Desacuerdo
        self.corte = None  # un esbozo alcanzado o el corte por tiempo: se vuelve a lanzar al final
        self.tras_el_fallo = 0

    def seguir(self):
        """Antes de cada entrada: tras el tope de encoger, se para con el desacuerdo que haya."""
        if self.ultimo is not None:
            self.tras_el_fallo += 1
            if self.tras_el_fallo > self.para_encoger:
                raise _Parar

    def hechos(self, funcion):
        """Los hechos de `funcion()` (o su `Lanzo`), copiados: el código del otro no los cambia."""
        try:
            return _copia(funcion())
        except Exception as error:  # noqa: BLE001 - es un hecho, salvo el esbozo y el tiempo
            if _no_es_un_hecho(error):
                self.corte = error
                raise _Parar from error
            return Lanzo(error)

    def comparar(self, entrada, referencia, alumno):
        diferencia = primera_diferencia(referencia, alumno)
        if diferencia is not None:
            hecho, a, b = diferencia
            self.ultimo = Desacuerdo(entrada() if callable(entrada) else entrada, hecho, a, b,
                                     self.pistas.get(hecho, ""))
            raise self.ultimo


def _ajustes(ejemplos, pasos):
    from hypothesis import HealthCheck, Phase, Verbosity, settings
    return settings(max_examples=ejemplos, stateful_step_count=pasos, derandomize=True, database=None,
                    deadline=None, phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    verbosity=Verbosity.quiet, suppress_health_check=list(HealthCheck), print_blob=False,
                    report_multiple_bugs=False)


# ---------------------------------------------------------------- la declaración


class SinEstado:
    """Un diferencial sin estado: `hechos(objetivo, entrada)` sobre entradas de `entradas`, y antes
    sobre las de `bordes`, si las hay: los bordes que no se dejan a la suerte del generador (una
    cita de la línea y otra de fuera, p. ej.), de los que la referencia dice lo que toca."""

    def __init__(self, hechos, entradas, contar=None, ejemplos=EJEMPLOS, pistas=None, para_encoger=PARA_ENCOGER,
                 bordes=(), cargar_referencia=None):
        self.hechos, self.entradas, self.ejemplos = hechos, entradas, ejemplos
        self.contar = contar or contar_entrada
        self.pistas, self.para_encoger, self.bordes = pistas or {}, para_encoger, list(bordes)
        self.cargar_referencia = cargar_referencia  # `cargar_referencia(e)`, si no vale `referencia_de(e)`

    @property
    def descripcion(self):
        return f"con {self.ejemplos} entradas generadas, {LO_MISMO}"


def contar_entrada(entrada):
    """Una entrada en una línea: un dict como «clave=valor, ...», lo demás con su repr."""
    if isinstance(entrada, dict):
        return ", ".join(f"{k}={v!r}" for k, v in entrada.items())
    return repr(entrada)


def regla(contar=None, **estrategias):
    """Un paso de una `Maquina`: el método recibe el mundo de una implementación y los valores de
    `estrategias`, y devuelve sus hechos. `contar(**valores)` lo describe (si no, nombre(valores))."""
    def marcar(metodo):
        metodo.estrategias, metodo.contar, metodo.primero = estrategias, contar, False
        return metodo
    return marcar


def al_empezar(contar=None, **estrategias):
    """Como `regla`, pero es el primer paso de cada secuencia, una vez: el estado de partida (una M
    con 0 a 4 turnos, p. ej.), para que las secuencias lleguen a los tamaños que importan sin
    depender de que hypothesis elija muchos pasos seguidos."""
    def marcar(metodo):
        regla(contar, **estrategias)(metodo).primero = True
        return metodo
    return marcar


class Maquina:
    """Un diferencial con estado: cada secuencia de pasos parte de dos mundos nuevos, uno con la
    referencia y otro con tu código (`preparar`), hace cada paso en los dos y compara sus hechos.

    `bordes`: secuencias que se prueban antes que las de hypothesis, cada una una lista de pasos
    (nombre de la regla, {valores}), para los bordes que no se dejan a la suerte del generador.

    Un paso puede elegir sus valores según el estado (`conservar` = los resultados que hay + 1):
    lo calcula igual en los dos mundos, y si hace falta lo que haría la referencia (lo que
    liberaría una limpieza, para poner `al_menos` justo ahí), la tiene en `self.referencia`."""

    secuencias = SECUENCIAS
    pasos = PASOS
    pistas = {}
    para_encoger = PARA_ENCOGER
    bordes = ()

    def preparar(self, objetivo):
        """El mundo de una implementación. Por omisión, solo ella."""
        return SimpleNamespace(objetivo=objetivo)

    def cerrar(self, mundo):
        """Lo que haya que cerrar de un mundo al acabar la secuencia (conexiones...)."""

    def contar_paso(self, texto):
        """Dentro de un paso: cómo se dice este paso con los valores ya elegidos (conservar=3 en vez
        de «n + 1»). Vale lo que diga el mundo de la referencia, que corre primero."""
        self.cuenta = texto

    @classmethod
    def descripcion(cls):
        return f"con {cls.secuencias} secuencias de hasta {cls.pasos} pasos generadas, {LO_MISMO}"

    @classmethod
    def reglas(cls):
        return [(nombre, metodo) for nombre, metodo in inspect.getmembers(cls, inspect.isfunction)
                if hasattr(metodo, "estrategias")]


def descripcion(declaracion):
    """El nombre de la línea del diferencial en el informe."""
    return declaracion.descripcion() if isinstance(declaracion, type) else declaracion.descripcion


# ---------------------------------------------------------------- correr


def referencia_de(e):
    """La solución de referencia de `e`, como la reciben sus casos: la función o el módulo del punto
    de control de su lección, cargado de nuevo (lo que un caso le cambie no llega a otro), o la
    función que define la celda resuelta de un ejercicio del cuaderno."""
    if e.modulo is None:
        espacio = {"__name__": "referencia"}
        exec(compile(_fuente_resuelta(e), f"<la solución del {e.id}>", "exec"), espacio)  # noqa: S102
        return espacio[e.nombre]
    modulo = rutas.cargar_modulo(rutas.puntos_de_control()[e.leccion] / f"{e.modulo}.py",
                                 f"_{e.modulo}_del_diferencial")
    return modulo if e.nombre is None else getattr(modulo, e.nombre)


def _fuente_resuelta(e):
    """La celda resuelta de un ejercicio del cuaderno, sin las marcas (leída como JSON: sin nbformat)."""
    from curso.comprobaciones import esbozos
    for ruta in sorted(Path(rutas.SOLUCIONES).glob(f"{e.leccion:02d}_*.ipynb")):
        for celda in json.loads(ruta.read_text(encoding="utf-8"))["cells"]:
            if esbozos.ejercicio_de(celda) == e.id:
                fuente = "".join(celda["source"]) if isinstance(celda["source"], list) else celda["source"]
                return "\n".join(l for l in fuente.split("\n") if l.strip() not in (esbozos.INICIO, esbozos.FIN))
    raise LookupError(f"El cuaderno resuelto de la lección {e.leccion:02d} no tiene la celda del ejercicio {e.id}.")


def correr(e, declaracion, alumno):
    """El caso del diferencial de `e` con `alumno` (lo que reciben sus casos): nada si coinciden;
    si no, `Fallo` con el desacuerdo más pequeño. Un esbozo o el tiempo salen tal cual."""
    # Una lección cuyo módulo no se puede cargar dos veces en un proceso (la 08: cargarlo registra
    # sus pasos en DBOS, que rechaza dos funciones con el mismo nombre) dice cómo cargar su referencia.
    referencia = (getattr(declaracion, "cargar_referencia", None) or referencia_de)(e)
    con_estado = isinstance(declaracion, type)
    carrera = Carrera(declaracion.pistas, declaracion.para_encoger)
    from hypothesis import configuration
    # Sin base de datos de ejemplos, lo único que escribe hypothesis es su caché de caracteres
    # (la primera vez que un proceso genera texto): a una carpeta temporal propia que se borra al
    # acabar, nunca a un .hypothesis/ en el espacio del alumno ni en la carpeta temporal.
    anterior = getattr(configuration, "__hypothesis_home_directory", None)
    casa = Path(tempfile.mkdtemp(prefix="curso-hypothesis-"))
    configuration.set_hypothesis_home_dir(casa)
    # Sin fsync mientras corre (los de las ediciones de herramientas.py, p. ej.): el diferencial no
    # prueba qué sobrevive a un corte de luz, y en un disco ocupado cada fsync cuesta milisegundos.
    fsync, fdatasync = os.fsync, os.fdatasync
    os.fsync = os.fdatasync = _sin_esperar
    try:
        (_con_estado if con_estado else _sin_estado)(declaracion, referencia, alumno, carrera)
    except (Desacuerdo, _Parar):
        pass
    except BaseException:
        # Lo que hypothesis haga con un desacuerdo (envolverlo, avisar de que no se repite...) da
        # igual: el último que se vio es el más pequeño. Sin ninguno, el error es de verdad.
        if carrera.corte is None and carrera.ultimo is None:
            raise
    finally:
        os.fsync, os.fdatasync = fsync, fdatasync
        configuration.set_hypothesis_home_dir(anterior)
        shutil.rmtree(casa, ignore_errors=True)
        for clave in [c for c in _COMPARTIDAS if c[0] == tempfile.gettempdir()]:
            _COMPARTIDAS.pop(clave).close()
        for clave in [c for c in _UNA_VEZ if c[0] == tempfile.gettempdir()]:
            valor = _UNA_VEZ.pop(clave)
            if len(clave) == 3 and clave[1] == "cerrar al acabar":
                valor.close()
    if carrera.corte is not None:
        raise carrera.corte
    if carrera.ultimo is not None:
        d = carrera.ultimo
        nota = (f"{'la secuencia más corta' if con_estado else 'la entrada más pequeña'} en que no coinciden: "
                f"{d.entrada}\nen «{d.hecho}» esperaba lo que hace la referencia, y llegó lo que hace tu código"
                + (f"\npista: {d.pista}" if d.pista else ""))
        raise casos.Fallo(d.referencia, d.alumno, nota)


def _sin_esperar(_descriptor):
    """os.fsync mientras corre el diferencial: no espera al disco."""


def _sin_estado(declaracion, referencia, alumno, carrera):
    from hypothesis import example, given

    def una_entrada(entrada):
        carrera.seguir()
        a = carrera.hechos(lambda: declaracion.hechos(referencia, _copia(entrada)))
        b = carrera.hechos(lambda: declaracion.hechos(alumno, _copia(entrada)))
        carrera.comparar(lambda: declaracion.contar(entrada), a, b)
    prueba = given(declaracion.entradas)(una_entrada)
    for borde in reversed(declaracion.bordes):
        prueba = example(borde)(prueba)
    _ajustes(declaracion.ejemplos, 1)(prueba)()


def _con_estado(declaracion, referencia, alumno, carrera):
    from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

    def __init__(self):
        RuleBasedStateMachine.__init__(self)
        self.declaracion, self.hechos_pasos, self.mundos = declaracion(), [], None
        self.declaracion.referencia = referencia  # para elegir valores al borde, con lo que haría ella

    def teardown(self):
        for mundo in self.mundos or ():
            self.declaracion.cerrar(mundo)

    def paso(nombre, metodo):
        def hacer(self, **valores):
            carrera.seguir()
            if self.mundos is None:
                self.mundos = (self.declaracion.preparar(referencia), self.declaracion.preparar(alumno))
            self.declaracion.cuenta = None
            a = carrera.hechos(lambda: metodo(self.declaracion, self.mundos[0], **_copia(valores)))
            cuenta = self.declaracion.cuenta or (
                metodo.contar(**valores) if metodo.contar else f"{nombre}({contar_entrada(valores)})")
            self.hechos_pasos.append(cuenta)
            b = carrera.hechos(lambda: metodo(self.declaracion, self.mundos[1], **_copia(valores)))
            pasos = self.hechos_pasos
            carrera.comparar(lambda: "".join(f"\n  {n}) {p}" for n, p in enumerate(pasos, 1)), a, b)
        return (initialize if metodo.primero else rule)(**metodo.estrategias)(hacer)

    cuerpo = {"__init__": __init__, "teardown": teardown}
    cuerpo.update({nombre: paso(nombre, metodo) for nombre, metodo in declaracion.reglas()})
    maquina = type(f"Diferencial_{declaracion.__name__}", (RuleBasedStateMachine,), cuerpo)
    for borde in declaracion.bordes:  # fuera de hypothesis, en orden: si uno no coincide, ese es el que se dice
        _una_secuencia(declaracion, referencia, alumno, carrera, borde)
    run_state_machine_as_test(maquina, settings=_ajustes(declaracion.secuencias, declaracion.pasos))


def _una_secuencia(declaracion, referencia, alumno, carrera, pasos):
    """Un borde de una Maquina: sus pasos, en los dos mundos, comparando tras cada uno."""
    estado = declaracion()
    estado.referencia = referencia
    mundos = (estado.preparar(referencia), estado.preparar(alumno))
    hechos = []
    try:
        for nombre, valores in pasos:
            metodo = getattr(declaracion, nombre)
            estado.cuenta = None
            a = carrera.hechos(lambda: metodo(estado, mundos[0], **_copia(valores)))  # noqa: B023 - se llama aquí
            hechos.append(estado.cuenta or (metodo.contar(**valores) if metodo.contar
                                            else f"{nombre}({contar_entrada(valores)})"))
            b = carrera.hechos(lambda: metodo(estado, mundos[1], **_copia(valores)))  # noqa: B023 - se llama aquí
            carrera.comparar(lambda: "".join(f"\n  {n}) {p}" for n, p in enumerate(hechos, 1)), a, b)
    finally:
        for mundo in mundos:
            estado.cerrar(mundo)


# ---------------------------------------------------------------- ayudas para los mundos


def carpeta_fija(nombre):
    """Una carpeta vacía de nombre fijo en la de la comprobación: la misma ruta para la referencia y
    para el alumno (una observación que nombre la ruta sale igual), vaciada cada vez."""
    carpeta = Path(tempfile.gettempdir()) / nombre
    shutil.rmtree(carpeta, ignore_errors=True)
    carpeta.mkdir(parents=True)
    return carpeta


def copia_de_plantilla(nombre, construir):
    """La ruta de una copia nueva de la base `nombre`, que `construir(ruta)` hace una sola vez por
    comprobación (y deja cerrada). Cada ejemplo parte de su copia: copiar un fichero cuesta mucho
    menos que crear el esquema con sus fsync."""
    carpeta = Path(tempfile.gettempdir()) / "plantillas-del-diferencial"
    plantilla = carpeta / nombre
    if not plantilla.exists():
        carpeta.mkdir(exist_ok=True)
        construir(plantilla)
    destino = casos.carpeta_temporal("mundo-") / nombre
    shutil.copyfile(plantilla, destino)
    return destino


_COMPARTIDAS = {}  # {(carpeta de la comprobación, nombre): conexión}: las cierra `correr` al acabar
_UNA_VEZ = {}  # {(carpeta de la comprobación, clave): valor}: lo olvida `correr` al acabar


def una_vez(clave, hacer):
    """`hacer()`, una sola vez por corrida del diferencial (un módulo de referencia aparte, p. ej.)."""
    clave = (tempfile.gettempdir(), clave)
    if clave not in _UNA_VEZ:
        _UNA_VEZ[clave] = hacer()
    return _UNA_VEZ[clave]


def en_la_corrida(clave, gestor):
    """Lo que da el gestor de contexto que hace `gestor()` (un servidor, un esquema), abierto una sola
    vez por corrida del diferencial y cerrado al acabarla."""
    def abrir():
        pila = contextlib.ExitStack()
        _UNA_VEZ[(tempfile.gettempdir(), "cerrar al acabar", clave)] = pila
        return pila.enter_context(gestor())
    return una_vez(("en la corrida", clave), abrir)


def base_compartida(nombre, construir):
    """Una conexión (autocommit) a una copia de la plantilla `nombre`, la misma en toda la corrida
    del diferencial: para funciones que solo leen. Quien la usa mira `total_changes` y, si el
    código del alumno escribió, la suelta con `soltar_compartida` para que el siguiente ejemplo
    parta de una copia limpia."""
    clave = (tempfile.gettempdir(), nombre)
    if clave not in _COMPARTIDAS:
        _COMPARTIDAS[clave] = sqlite3.connect(copia_de_plantilla(nombre, construir), isolation_level=None)
    return _COMPARTIDAS[clave]


def soltar_compartida(nombre):
    conexion = _COMPARTIDAS.pop((tempfile.gettempdir(), nombre), None)
    if conexion is not None:
        conexion.close()


def sin_esperar_al_disco(bd):
    """La conexión `bd` sin fsync en cada COMMIT (synchronous=OFF): el diferencial no prueba qué
    sobrevive a un corte de luz, y así cada ejemplo cuesta milisegundos. Devuelve `bd`."""
    bd.execute("PRAGMA synchronous=OFF")
    return bd


def cerrar_y_borrar(*conexiones, carpeta=None):
    """Cierra las conexiones de un mundo (las que haya) y borra su carpeta."""
    for conexion in conexiones:
        try:
            conexion.close()
        except Exception:  # noqa: BLE001 - una conexión que el alumno dejó a medias: se cierra igual
            pass
    if carpeta is not None:
        shutil.rmtree(carpeta, ignore_errors=True)
