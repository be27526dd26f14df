"""Para `comprobar("N.M")` de los cuadernos: qué comprueba cada ejercicio, sus pistas, y cómo se evalúa el código del alumno.

El registro de los ejercicios y su evaluación, que comparten el mismo `Resultado`: registrar un
ejercicio, evaluarlo y decir qué falta de otros. Los casos de cada lección están en `lNN.py`.

Cada lección registra sus ejercicios en `curso/comprobaciones/lNN.py`. Un ejercicio comprueba
una función: o la de un módulo del espacio del alumno (`modulo="bucle"`), o una que el cuaderno
le pasa (`comprobar("2.1", tamano)`). Un caso es una función que recibe lo comprobado y, si algo
no cuadra, lanza `Fallo(lo que se esperaba, lo que llegó)`.

`evaluar` es la parte pura: devuelve un `Resultado`. `curso.alumno.cuaderno.comprobar` lo imprime.

Un caso que llega al esbozo de un ejercicio (su NotImplementedError) queda «pendiente», y la línea
dice de qué ejercicio es ese esbozo: puede ser el de otro (el 1.3 llama a `permitido`, que sigue
siendo el esbozo del 1.2), y entonces lo pendiente es ese otro. Y si el otro está escrito pero
mal (el 3.3 llama al `corte` del 3.2), un caso del ejercicio puede fallar por culpa de aquel: el
ejercicio dice qué otros usa (`usa`), y cuando falla, el informe nombra los que tampoco pasan.

Lo que una comprobación crea en la carpeta temporal del sistema se borra al terminar: `evaluar`
apunta `tempfile` a una carpeta suya mientras corre los casos, y `carpeta_temporal()` da a un caso
una carpeta dentro de ella.

Detrás de sus casos escritos, cada ejercicio tiene su **diferencial** (`diferencial.py`): el mismo
`objetivo` y la referencia corren sobre entradas generadas del dominio del ejercicio y tienen que
coincidir en cada hecho del contrato. Es un caso más, el último, y sale como una línea más del
informe (✘ con la entrada más pequeña en que no coinciden, lo de la referencia, lo tuyo y la pista),
la misma en el cuaderno, en `comprobar N` y en `calificar`. Se declara en `lNN.py`, al final de los
casos del ejercicio, con el `caso` que devuelve `ejercicio(...)`:

    # Sin estado: una función de hechos y la estrategia (hypothesis) de sus entradas.
    @caso.diferencial(entradas=st.builds(...), ejemplos=150, contar=lambda e: f"cabe({e})",
                      pistas={"lo que devuelve": "la frase de la pista para ese hecho"},
                      bordes=[...])  # entradas que se prueban siempre, antes que las generadas
    def _(cabe, entrada):
        return {"lo que devuelve": cabe(*entrada)}

    # Con estado: una Maquina con su mundo por implementación y sus reglas (pasos).
    class Buzon(Maquina):
        secuencias, pasos = 40, 6
        def preparar(self, buzon): ...          # el mundo: una base copiada de una plantilla...
        @al_empezar(entregas=...)               # el primer paso de cada secuencia
        def empezar(self, mundo, entregas): ...
        @regla(entrega=st.sampled_from([...]))  # los demás; cada uno devuelve sus hechos
        def admitir(self, mundo, entrega): ...
    caso.diferencial()(Buzon)

Un hecho es un dato que el texto del ejercicio fija (lo devuelto, filas de la base, el tipo de una
excepción con `intento(...)`, si un mensaje nombra un dato); nunca la redacción de un mensaje. Los
generadores van a los bordes a propósito (0, 1, n − 1, n, n + 1; por debajo, en y por encima de
cada disparo) y la segunda solución de `variantes.py` tiene que pasar.
"""
import importlib
import pkgutil
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas
# Las piezas de los casos, debajo de este motor y del diferencial (casos.py); las que solo usan los
# casos de lNN.py se dan también desde aquí.
from curso.comprobaciones.casos import ALARMA, Fallo, carpeta_temporal, con_limite, esbozo_alcanzado, igual  # noqa: F401
from curso.comprobaciones.celda_sola import describir, sola
from curso.comprobaciones.esbozos import ejercicio_del_aviso

LECCION = re.compile(r"l\d\d[a-z]?")  # los módulos que registran los ejercicios de una lección

# Un caso tarda menos de un segundo de CPU (el del diferencial, unos pocos); si su proceso quema
# más que esto, el código del alumno no termina. Se cuenta la CPU, no el reloj: en una máquina muy
# cargada (un hub con una clase entera) el reloj corre varias veces más deprisa que la CPU del caso.
LIMITE_SEGUNDOS = 10


@dataclass
class Caso:
    descripcion: str
    prueba: object  # función(objetivo) -> None; lanza Fallo si no cuadra
    diferencial: object = None  # la declaración, si es el caso del diferencial (el último del ejercicio)


@dataclass
class Ejercicio:
    id: str
    leccion: int
    titulo: str
    nombre: str  # la función que se comprueba; None: los casos reciben el módulo entero
    casos: list
    pistas: list
    modulo: str = None  # el módulo del espacio del alumno, o None si la función es del cuaderno
    usa: tuple = ()  # los ejercicios cuyo código recorren sus casos (el 3.3 llama al corte del 3.2)
    # {un trozo del error: qué quiere decir}: lo que dice un error corriente que no dice qué cambiar
    # (el IntegrityError de apuntar la intención del 6.1 otra vez). El informe lo explica una vez.
    explicaciones: dict = field(default_factory=dict)


@dataclass
class Linea:
    """El resultado de un caso: "ok", "fallo", "error" o "pendiente".

    Si está pendiente, `esbozo` es el ejercicio cuyo esbozo alcanzó el caso ("" si no se sabe) y
    `donde`, la función y el fichero de ese esbozo ("permitido() de permisos.py")."""
    caso: str
    estado: str
    esperado: object = None
    obtenido: object = None
    detalle: str = ""
    esbozo: str = ""
    donde: str = ""


@dataclass
class Resultado:
    ejercicio: str
    lineas: list = field(default_factory=list)
    problema: str = ""  # si no se pudo ni empezar: el fichero no existe, no importa...
    culpables: list = field(default_factory=list)  # de los que usa, los que no pasan su comprobación

    @property
    def aprobado(self):
        return not self.problema and bool(self.lineas) and all(l.estado == "ok" for l in self.lineas)

    @property
    def pendiente(self):
        """Algún caso llegó a un esbozo, de este ejercicio o de otro."""
        return any(l.estado == "pendiente" for l in self.lineas)

    @property
    def pendiente_propio(self):
        """Algún caso llegó al esbozo de este mismo ejercicio."""
        return any(l.estado == "pendiente" and l.esbozo == self.ejercicio for l in self.lineas)

    @property
    def esperando_a(self):
        """Los otros ejercicios cuyo esbozo alcanzaron los casos, en orden ("1.1", "1.2")."""
        return ordenados({l.esbozo for l in self.lineas
                          if l.estado == "pendiente" and l.esbozo != self.ejercicio})

    @property
    def solo_espera(self):
        """Ningún caso falla ni es de este esbozo: lo que queda depende de otros ejercicios."""
        return (not self.problema and bool(self.esperando_a)
                and all(l.estado == "ok" or (l.estado == "pendiente" and l.esbozo != self.ejercicio)
                        for l in self.lineas))


def clave(id):
    """Para ordenar números de ejercicio: "1.10" va después de "1.9", y "3b.1" entre el 3.x y el 4.1."""
    leccion, *resto = str(id).split(".")
    try:
        primera = rutas.leccion_pedida(leccion)
    except ValueError:
        primera = int(leccion) if leccion.isdigit() else 0
    return (primera, *(int(p) if p.isdigit() else 0 for p in resto))


def ordenados(ids):
    return sorted((i for i in ids if i), key=clave)


def enumerar_textos(textos):
    """ "a", "a y b", "a, b y c": una lista como se dice en castellano."""
    textos = list(textos)
    return textos[0] if len(textos) == 1 else ", ".join(textos[:-1]) + " y " + textos[-1]


def enumerar(ids):
    """ "3.2", "3.2 y 3.3", "3.1, 3.2 y 3.3": los números de ejercicio, en orden."""
    return enumerar_textos(ordenados(ids))


def siguen_pendientes(ids):
    """ "El ejercicio 3.2 sigue pendiente" o "Los ejercicios 3.2 y 3.3 siguen pendientes"."""
    ids = ordenados(ids)
    if len(ids) == 1:
        return f"El ejercicio {ids[0]} sigue pendiente"
    return f"Los ejercicios {enumerar(ids)} siguen pendientes"


REGISTRO = {}


def ejercicio(id, leccion, titulo, nombre, pistas, modulo=None, usa=(), explicaciones=None):
    """Registra un ejercicio; devuelve un decorador para añadirle casos en orden.

    El decorador trae `caso.diferencial(...)`, que declara el diferencial del ejercicio (ver
    `curso/comprobaciones/diferencial.py`): va detrás de sus casos escritos, y es el último."""
    e = Ejercicio(id, leccion, titulo, nombre, [], list(pistas), modulo, tuple(usa), dict(explicaciones or {}))
    REGISTRO[id] = e

    def caso(descripcion):
        def registrar(prueba):
            e.casos.append(Caso(descripcion, prueba))
            return prueba
        return registrar

    def diferencial(entradas=None, **opciones):
        """Sobre una función de hechos (con `entradas`, su estrategia) o una clase `Maquina`."""
        from curso.comprobaciones import diferencial as motor

        def registrar(declarado):
            declaracion = declarado if isinstance(declarado, type) else motor.SinEstado(declarado, entradas, **opciones)
            e.casos.append(Caso(motor.descripcion(declaracion), lambda objetivo: motor.correr(e, declaracion, objetivo),
                                declaracion))
            return declarado
        return registrar
    caso.diferencial = diferencial
    return caso


def cargar_registro():
    """Importa cada `curso/comprobaciones/lNN.py`, que registran sus ejercicios al importarse."""
    import curso.comprobaciones as paquete
    for info in pkgutil.iter_modules(paquete.__path__):
        if LECCION.fullmatch(info.name):  # l00 … l07; los demás módulos no registran nada
            importlib.import_module(f"{paquete.__name__}.{info.name}")
    return REGISTRO


def buscar(id):
    """El ejercicio `id`, o un KeyError con la lista de los que hay.

    Un número sin comillas (`comprobar(3.1)`) vale si se escribe igual que un ejercicio: 3.1 es
    «3.1». No todos se pueden escribir así (1.10 sería 1.1): si no es ninguno, se pide con comillas."""
    registro = cargar_registro()
    if isinstance(id, (int, float)) and not isinstance(id, bool):
        if str(id) in registro:
            return registro[str(id)]
        raise KeyError(f"No hay ningún ejercicio {id!r}: escribe su número entre comillas, como texto, "
                       f"p. ej. comprobar(\"3.1\"). Los que hay: {', '.join(ordenados(registro))}.")
    if id not in registro:
        lista = ", ".join(ordenados(registro))
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


def objetivo_del_espacio(e, espacio):
    """La función `e.nombre` del módulo del alumno, leída ahora del disco; o (None, problema)."""
    ruta = espacio / f"{e.modulo}.py"
    if not ruta.exists():
        return None, (f"No encuentro {e.modulo}.py en tu espacio de trabajo: ejecuta la celda "
                      f"del ejercicio {e.id} (la que empieza por %%modulo {e.modulo}).")
    try:
        # Sin aislar: sus `from entorno import ...` reciben lo que el núcleo sirve ahora (también
        # la versión de referencia de un ejercicio pendiente).
        modulo = rutas.cargar_modulo(ruta, e.modulo, aislado=False)
    except Exception as exc:  # noqa: BLE001 - el código del alumno puede lanzar cualquier cosa
        return None, f"{e.modulo}.py no se puede importar: {describir(exc)}"
    if e.nombre is None:
        return modulo, ""
    if not hasattr(modulo, e.nombre):
        return None, f"{e.modulo}.py no define {e.nombre}: ¿le has cambiado el nombre?"
    return getattr(modulo, e.nombre), ""


# ---------------------------------------------------------------- los esbozos alcanzados


def de_donde(exc):
    """(función, fichero) de donde se lanzó `exc`: el último marco de su traza."""
    tb = exc.__traceback__
    if tb is None:
        return "", ""
    while tb.tb_next is not None:
        tb = tb.tb_next
    codigo = tb.tb_frame.f_code
    return codigo.co_name, Path(codigo.co_filename).name


def linea_pendiente(e, caso, esbozo):
    """La línea de un caso que llegó al NotImplementedError `esbozo` cuando se comprobaba `e`."""
    funcion, fichero = de_donde(esbozo)
    numero = ejercicio_del_aviso(esbozo)
    if numero is None and (e.modulo is None or fichero == f"{e.modulo}.py"):
        numero = e.id  # un NotImplementedError sin aviso en su propio código: su esbozo
    # Una función de una celda del cuaderno viene de un fichero como «3141592653.py», que no es un
    # módulo y cambia de una vez a otra: de esas solo se dice el nombre.
    es_modulo = fichero.endswith(".py") and Path(fichero).stem.isidentifier()
    donde = f"{funcion}() de {fichero}" if es_modulo else f"{funcion}()"
    return Linea(caso, "pendiente", detalle=str(esbozo), esbozo=numero or "", donde=donde)


# ---------------------------------------------------------------- la carpeta temporal


@contextmanager
def sin_dejar_temporales():
    """Mientras dura el bloque, `tempfile` crea todo en una carpeta propia; al salir se borra.

    Así una comprobación deja la carpeta temporal del sistema como la encontró, aunque sus casos
    (o el código del alumno) creen carpetas y bases de datos allí."""
    carpeta = tempfile.mkdtemp(prefix="curso-comprobar-")
    anterior = tempfile.tempdir
    tempfile.tempdir = carpeta
    try:
        yield Path(carpeta)
    finally:
        tempfile.tempdir = anterior
        shutil.rmtree(carpeta, ignore_errors=True)


def evaluar(id, objetivo=None, espacio=None, diferencial=True):
    """Corre los casos del ejercicio `id` contra `objetivo` (o el módulo del espacio), sin dejar
    nada en la carpeta temporal del sistema. Una función de una celda del cuaderno se comprueba como
    la califica `calificar`: con su celda sola (`curso/comprobaciones/celda_sola.py`). Con
    diferencial=False, solo los casos escritos (para quien mide qué pilla cada cosa, como `medir
    mutantes`; el alumno ve siempre los dos)."""
    e = buscar(id)
    if objetivo is not None and e.modulo is None:
        objetivo, problema = sola(objetivo, e)
        if problema:
            return Resultado(id, problema=problema)
    with sin_dejar_temporales():
        resultado = _evaluar(e, objetivo, espacio, diferencial)
        if objetivo is None and any(l.estado in ("fallo", "error") for l in resultado.lineas):
            # Los que usa y fallan; un esbozo sin hacer no: de esos ya habla `a_que_espera`.
            otros = {otro: _evaluar(buscar(otro), None, espacio, diferencial) for otro in e.usa}
            resultado.culpables = [otro for otro, r in otros.items() if not r.aprobado and not r.pendiente_propio]
        return resultado


def _evaluar(e, objetivo, espacio, diferencial=True):
    id = e.id
    resultado = Resultado(id)
    if objetivo is None:
        if e.modulo is None:
            resultado.problema = (f"Pásale a comprobar tu función: comprobar(\"{id}\", {e.nombre}).")
            return resultado
        objetivo, resultado.problema = objetivo_del_espacio(e, espacio or rutas.espacio())
        if resultado.problema:
            return resultado
    for caso in (e.casos if diferencial else [c for c in e.casos if c.diferencial is None]):
        try:
            with con_limite(LIMITE_SEGUNDOS):
                caso.prueba(objetivo)
        except Exception as exc:  # noqa: BLE001 - un error del alumno es un caso en rojo
            esbozo = esbozo_alcanzado(exc)
            if esbozo is not None:
                resultado.lineas.append(linea_pendiente(e, caso.descripcion, esbozo))
            elif isinstance(exc, Fallo):
                resultado.lineas.append(Linea(caso.descripcion, "fallo", exc.esperado, exc.obtenido, exc.nota))
            else:
                resultado.lineas.append(Linea(caso.descripcion, "error", detalle=describir(exc)))
        else:
            resultado.lineas.append(Linea(caso.descripcion, "ok"))
    return resultado


def corto(valor, ancho=160):
    """repr de `valor` en una línea, cortado si es largo."""
    texto = repr(valor)
    return texto if len(texto) <= ancho else texto[: ancho - 1] + "…"


def cortos(esperado, obtenido, ancho=160):
    """(esperado, obtenido) como `corto`, pero si alguno es largo, los dos cortados por el mismo
    sitio alrededor de la primera diferencia: cortados por el principio, dos valores que empiezan
    igual parecerían el mismo."""
    a, b = repr(esperado), repr(obtenido)
    if len(a) <= ancho and len(b) <= ancho:
        return a, b
    primera = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    desde = max(0, primera - ancho // 4)

    def ventana(texto):
        trozo = texto[desde: desde + ancho - 2]
        return ("…" if desde else "") + trozo + ("…" if desde + len(trozo) < len(texto) else "")
    return ventana(a), ventana(b)


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
            lineas.append(f"  · {l.caso}: pendiente ({por_que_pendiente(e, l)})")
        elif l.estado == "error":
            lineas.append(f"  ✘ {l.caso}\n      lanzó {l.detalle}")
        else:
            # Un detalle de varias líneas (el del diferencial: la entrada, el hecho y la pista) va
            # debajo, sangrado; uno de una línea, entre paréntesis.
            primera, *mas = l.detalle.split("\n") if l.detalle else [""]
            lineas.append(f"  ✘ {l.caso}" + (f" ({primera})" if primera and not mas else ""))
            lineas += [f"      {d}" for d in ([primera, *mas] if mas else [])]
            esperaba, llego = cortos(l.esperado, l.obtenido)
            lineas.append(f"      esperaba: {esperaba}")
            lineas.append(f"      llegó:    {llego}")
    explicadas = set()
    for l in resultado.lineas:  # lo que quiere decir un error corriente, una vez, tras la primera línea que lo da
        que = explicacion(e, l)
        if que and que not in explicadas:
            explicadas.add(que)
            lineas.insert(_tras_la_linea_de(lineas, l), f"      Eso quiere decir: {que}")
    buenos = sum(l.estado == "ok" for l in resultado.lineas)
    total = len(resultado.lineas)
    if resultado.aprobado:
        lineas.append(f"Ejercicio {e.id}: {buenos}/{total} ✔ Hecho.")
    elif resultado.pendiente_propio:
        lineas.append(f"Ejercicio {e.id}: pendiente. Escribe tu código donde dice "
                      f"«Tu código aquí», ejecuta la celda y vuelve a comprobar.")
    elif resultado.solo_espera:
        quedan = ("ningún caso se puede comprobar todavía" if buenos == 0 else
                  f"{buenos}/{total} ✔, y los otros {total - buenos} no se pueden comprobar todavía")
        lineas.append(f"Ejercicio {e.id}: {quedan}. {a_que_espera(resultado)}")
    else:
        lineas.append(f"Ejercicio {e.id}: {buenos}/{total} ✔. Si te atascas: pista(\"{e.id}\").")
        if resultado.esperando_a:
            lineas.append(a_que_espera(resultado))
        if resultado.culpables:
            lineas.append(de_quien_es_la_culpa(e, resultado.culpables))
    return "\n".join(lineas)


def explicacion(e, linea):
    """Lo que quiere decir el error de `linea`, si es uno de los que explica el ejercicio `e`; si no, ""."""
    texto = linea.detalle if linea.estado == "error" else repr(linea.obtenido) if linea.estado == "fallo" else ""
    return next((que for trozo, que in e.explicaciones.items() if trozo in texto), "")


def _tras_la_linea_de(lineas, linea):
    """La posición del informe justo detrás de lo que dice `linea` (su ✘ y lo sangrado debajo)."""
    cabeza = f"  ✘ {linea.caso}"
    inicio = next(i for i, texto in enumerate(lineas) if texto == cabeza or texto.startswith((cabeza + " (", cabeza + "\n")))
    fin = inicio + 1
    while fin < len(lineas) and lineas[fin].startswith("      "):
        fin += 1
    return fin


def por_que_pendiente(e, linea):
    """El paréntesis de una línea pendiente: qué esbozo alcanzó el caso, y de qué ejercicio es."""
    if linea.esbozo == e.id:
        return f"{linea.donde} todavía es el esbozo"
    if linea.esbozo:
        return f"llega a {linea.donde}, que todavía es el esbozo del ejercicio {linea.esbozo}"
    return f"llega a {linea.donde}, que lanza NotImplementedError"


def de_quien_es_la_culpa(e, culpables):
    """La frase que dice que otros ejercicios que usa `e` tampoco pasan: quizá el fallo es suyo."""
    uno = len(culpables) == 1
    comprobar = " y ".join(f'comprobar("{c}")' for c in culpables)
    return (f"Ojo: {'el ejercicio' if uno else 'los ejercicios'} {enumerar(culpables)}, que los casos "
            f"del {e.id} usan, {'no pasa su' if uno else 'no pasan sus'} comprobación"
            f"{'' if uno else 'es'} ({comprobar}): arrégla{'lo' if uno else 'los'} primero; puede que "
            f"el fallo del {e.id} venga de ahí.")


def a_que_espera(resultado):
    """La frase que dice qué otros ejercicios hay que terminar antes, y dónde están sus esbozos."""
    donde = sorted({l.donde for l in resultado.lineas
                       if l.estado == "pendiente" and l.esbozo in resultado.esperando_a})
    ids = resultado.esperando_a
    lo = "lo" if len(ids) == 1 else "los"
    return (f"{siguen_pendientes(ids)} ({enumerar_textos(donde)}): termína{lo}, ejecuta su celda y "
            f"vuelve a comprobar el {resultado.ejercicio}.")


def celda_resuelta(id):
    """La celda del cuaderno resuelto que contiene el ejercicio `id` (un dict de nbformat)."""
    import nbformat
    from curso.comprobaciones.esbozos import ejercicio_de
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
