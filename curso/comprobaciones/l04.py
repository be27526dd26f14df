"""Para los ejercicios de la lección 04: la transacción, el candidato, el compare-and-swap y la M que se reconstruye."""
import json
import re
import sqlite3
from types import SimpleNamespace

from hypothesis import strategies as st

from curso import rutas
from curso.comprobaciones.diferencial import (Maquina, al_empezar, base_compartida, cerrar_y_borrar,
                                              copia_de_plantilla, intento, regla, sin_esperar_al_disco,
                                              soltar_compartida)
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual
from curso.rutas import cargar_modulo


def referencia(nombre):
    """El `nombre`.py del punto de control 04 (historial o resumenes), para preparar las bases de los casos."""
    return cargar_modulo(rutas.puntos_de_control()[4] / f"{nombre}.py", f"_{nombre}_de_referencia")


def fichero():
    return carpeta_temporal("ejercicio-4-") / "resumenes.db"


def con_historial(n=4):
    """Una base (hecha con la referencia) con la ejecución «e» y n mensajes, y otra «otra» con 6.

    Devuelve el resumenes.py de referencia, para instalar sobre ella, y la base."""
    historial = referencia("historial")
    bd = historial.abrir(fichero())
    for ejecucion, cuantos in (("e", n), ("otra", 6)):
        historial.crear_ejecucion(bd, ejecucion)
        for i in range(1, cuantos + 1):
            historial.anotar(bd, ejecucion, f"mensaje {i} de {ejecucion}")
    return referencia("resumenes"), bd


def lanza(nombre, funcion, *args):
    """Que `funcion(*args)` lance una excepción llamada `nombre` (de cualquier módulo). El fallo dice
    con qué se llamó (sin la conexión): en el 4.2, qué candidato se probó."""
    llamada = f"con {funcion.__name__}(bd, {', '.join(repr(a) for a in args[1:])})"
    try:
        funcion(*args)
    except Exception as e:  # noqa: BLE001
        if type(e).__name__ == nombre or (nombre == "ValueError" and isinstance(e, ValueError)):
            return
        raise Fallo(nombre, f"{type(e).__name__}: {e}", llamada) from e
    raise Fallo(nombre, "ninguna excepción", llamada)


# --- 4.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "4.1", leccion=4, titulo="transaccion: BEGIN IMMEDIATE, COMMIT o ROLLBACK",
    nombre=None, modulo="historial",
    pistas=[
        "Es un generador decorado con @contextmanager: lo que va antes del yield abre la "
        "transacción, y lo de después la cierra.",
        "bd.execute(\"BEGIN IMMEDIATE\") antes del yield; bd.execute(\"COMMIT\") después, si el "
        "bloque terminó bien.",
        "Envuelve yield y COMMIT en try/except BaseException (no Exception: también "
        "KeyboardInterrupt): si bd.in_transaction, ROLLBACK; y vuelve a lanzar con raise.",
    ],
)


def conexion():
    bd = sqlite3.connect(fichero(), isolation_level=None)
    bd.execute("CREATE TABLE t(x)")
    return bd


def estado_de(bd):
    """Lo que un caso de 4.1 mira de la conexión, con sus nombres."""
    return {"transacción abierta": bd.in_transaction,
            "filas en t": bd.execute("SELECT COUNT(*) FROM t").fetchone()[0]}


@caso("si el bloque termina bien, lo escrito queda (COMMIT)")
def _(historial):
    bd = conexion()
    with historial.transaccion(bd):
        bd.execute("INSERT INTO t VALUES (1)")
    igual(estado_de(bd), {"transacción abierta": False, "filas en t": 1})


@caso("si el bloque lanza, se deshace todo y la excepción sigue su camino")
def _(historial):
    bd = conexion()
    try:
        with historial.transaccion(bd):
            bd.execute("INSERT INTO t VALUES (1)")
            raise ValueError("a mitad")
    except ValueError:
        pass
    else:
        raise Fallo("que ValueError saliera del bloque", "nada")
    igual(estado_de(bd), {"transacción abierta": False, "filas en t": 0})


@caso("también se deshace ante KeyboardInterrupt (BaseException)")
def _(historial):
    bd = conexion()
    try:
        with historial.transaccion(bd):
            bd.execute("INSERT INTO t VALUES (1)")
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    igual(estado_de(bd), {"transacción abierta": False, "filas en t": 0})


@caso("pide el turno de escritura al empezar (BEGIN IMMEDIATE): otro escritor tiene que esperar")
def _(historial):
    bd = conexion()
    otra = sqlite3.connect(bd.execute("PRAGMA database_list").fetchone()[2], isolation_level=None, timeout=0)
    with historial.transaccion(bd):
        try:
            otra.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return
        otra.execute("ROLLBACK")
    raise Fallo("que otra conexión no pudiera empezar a escribir", "pudo: ¿falta IMMEDIATE?")


@caso("si el COMMIT falla, se deshace todo y la conexión sigue sirviendo")
def _(historial):
    # Una clave foránea diferida se mira al confirmar: el COMMIT falla y la transacción sigue
    # abierta. Si el COMMIT está fuera del try, nadie la deshace y la conexión queda a medias.
    bd = sqlite3.connect(fichero(), isolation_level=None)
    bd.execute("PRAGMA foreign_keys=ON")
    bd.execute("CREATE TABLE padre(id INTEGER PRIMARY KEY)")
    bd.execute("CREATE TABLE t(x REFERENCES padre(id) DEFERRABLE INITIALLY DEFERRED)")
    try:
        with historial.transaccion(bd):
            bd.execute("INSERT INTO t VALUES (99)")  # el padre 99 no existe
    except sqlite3.IntegrityError:
        pass
    else:
        raise Fallo("que el IntegrityError del COMMIT saliera del bloque", "nada")
    igual(estado_de(bd), {"transacción abierta": False, "filas en t": 0},
          "el COMMIT falló: tiene que deshacerse también entonces (¿está el COMMIT dentro del try?)")
    with historial.transaccion(bd):
        bd.execute("INSERT INTO padre VALUES (99)")
        bd.execute("INSERT INTO t VALUES (99)")
    igual(estado_de(bd), {"transacción abierta": False, "filas en t": 1},
          "tras un COMMIT fallido, la transacción siguiente tiene que poder escribir")


# El diferencial: secuencias de bloques en una misma conexión, que escriben de 0 a 3 filas y acaban
# bien, lanzando (una excepción, KeyboardInterrupt) o con un COMMIT que falla (una clave foránea
# diferida); en algunos, otra conexión intenta empezar a escribir mientras el bloque está abierto.
def _conexion_del_diferencial(ruta):
    bd = sqlite3.connect(ruta, isolation_level=None)
    bd.execute("PRAGMA foreign_keys=ON")
    bd.execute("CREATE TABLE padre(id INTEGER PRIMARY KEY)")
    bd.execute("CREATE TABLE t(x REFERENCES padre(id) DEFERRABLE INITIALLY DEFERRED)")
    bd.execute("INSERT INTO padre VALUES (1)")
    bd.close()


COMO_ACABA = ["bien", "con ValueError", "con KeyboardInterrupt", "con un COMMIT que falla"]


class Transacciones(Maquina):
    secuencias = 30
    pasos = 5
    pistas = {"lo que sale del bloque": "la excepción del bloque (también KeyboardInterrupt) o la del COMMIT sale tal "
                                        "cual, después del ROLLBACK",
              "¿transacción abierta después?": "tras el bloque, COMMIT o ROLLBACK: nunca queda abierta",
              "filas en t": "COMMIT si el bloque acaba bien; si no, ROLLBACK de todo",
              "¿otro escritor pudo empezar dentro del bloque?": "BEGIN IMMEDIATE: el turno de escritura se pide al "
                                                                 "empezar"}

    def preparar(self, historial):
        ruta = copia_de_plantilla("transaccion.db", _conexion_del_diferencial)
        bd = sin_esperar_al_disco(sqlite3.connect(ruta, isolation_level=None))
        bd.execute("PRAGMA foreign_keys=ON")
        otra = sqlite3.connect(ruta, isolation_level=None, timeout=0)
        return SimpleNamespace(historial=historial, bd=bd, otra=otra, carpeta=ruta.parent)

    def cerrar(self, mundo):
        cerrar_y_borrar(mundo.bd, mundo.otra, carpeta=mundo.carpeta)

    @al_empezar(filas=st.integers(0, 3), acaba=st.sampled_from(COMO_ACABA), mirar=st.booleans())
    def empezar(self, mundo, filas, acaba, mirar):
        return self.bloque(mundo, filas, acaba, mirar)

    @regla(filas=st.integers(0, 3), acaba=st.sampled_from(COMO_ACABA), mirar=st.booleans(),
           contar=lambda filas, acaba, mirar: f"un bloque que escribe {filas} filas y acaba {acaba}"
           + (", y otra conexión intenta escribir mientras" if mirar else ""))
    def bloque(self, mundo, filas, acaba, mirar):
        pudo = "no lo intentó"
        try:
            with mundo.historial.transaccion(mundo.bd):
                for _ in range(filas):
                    mundo.bd.execute("INSERT INTO t VALUES (1)")
                if mirar:
                    try:
                        mundo.otra.execute("BEGIN IMMEDIATE")
                        mundo.otra.execute("ROLLBACK")
                        pudo = "sí"
                    except sqlite3.OperationalError:
                        pudo = "no"
                if acaba == "con ValueError":
                    raise ValueError("a mitad")
                if acaba == "con KeyboardInterrupt":
                    raise KeyboardInterrupt
                if acaba == "con un COMMIT que falla":
                    mundo.bd.execute("INSERT INTO t VALUES (99)")  # el padre 99 no existe: falla al confirmar
            sale = "nada"
        except BaseException as error:  # noqa: BLE001 - lo que salga del bloque es el hecho que se mira
            if isinstance(error, NotImplementedError) or isinstance(error, TimeoutError):
                raise
            sale = type(error).__name__
        return {"lo que sale del bloque": sale, "¿transacción abierta después?": mundo.bd.in_transaction,
                "filas en t": mundo.bd.execute("SELECT COUNT(*) FROM t").fetchone()[0],
                "¿otro escritor pudo empezar dentro del bloque?": pudo}


caso.diferencial()(Transacciones)


# --- 4.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "4.2", leccion=4, titulo="validar_candidato: afirmaciones con su fuente",
    nombre=None, modulo="resumenes",
    pistas=[
        "Primero la forma: una lista no vacía; cada afirmación, un dict con exactamente las "
        "claves {\"texto\", \"fuente\"} (CLAVES_DE_AFIRMACION).",
        "El texto, no vacío (usa exigir_texto); la fuente, un int de verdad y no un bool "
        "(exigir_entero_positivo ya lo hace).",
        "Después, cada fuente distinta: tiene que ser <= corte y estar en el historial de ESA "
        "ejecución (en_historial, de historial.py). Si no, ValueError que lo diga. No escribas nada.",
    ],
)

BUENO = [{"texto": "El usuario pidió solo lectura.", "fuente": 1}, {"texto": "Leyó a.py.", "fuente": 3}]


@caso("un candidato bueno pasa, y la base no cambia")
def _(resumenes):
    _, bd = con_historial()
    antes = "\n".join(bd.iterdump())
    resumenes.validar_candidato(bd, "e", 3, BUENO)
    igual("\n".join(bd.iterdump()) == antes, True, "validar no debe escribir nada")


@caso("la forma: lista no vacía de {texto, fuente}, sin claves de más")
def _(resumenes):
    _, bd = con_historial()
    for malo in ({"texto": "x", "fuente": 1}, [], [{"texto": "x"}], [{"texto": "x", "fuente": 1, "nota": 2}],
                 ["x"]):
        lanza("ValueError", resumenes.validar_candidato, bd, "e", 3, malo)


@caso("texto vacío o fuente que no es un entero de verdad (True no es 1)")
def _(resumenes):
    _, bd = con_historial()
    for malo in ([{"texto": "  ", "fuente": 1}], [{"texto": "x", "fuente": True}],
                 [{"texto": "x", "fuente": "1"}]):
        lanza("ValueError", resumenes.validar_candidato, bd, "e", 3, malo)


@caso("una fuente posterior al corte, o que solo existe en otra ejecución, no vale")
def _(resumenes):
    _, bd = con_historial(n=4)
    lanza("ValueError", resumenes.validar_candidato, bd, "e", 3, [{"texto": "x", "fuente": 4}])
    lanza("ValueError", resumenes.validar_candidato, bd, "e", 4, [{"texto": "x", "fuente": 6}])
    # 6 no pasa de este corte, pero «e» solo tiene 4 mensajes: el 6 es de «otra».
    lanza("ValueError", resumenes.validar_candidato, bd, "e", 6, [{"texto": "x", "fuente": 6}])


# Lo pilla un mutante de las pruebas de mutación (`medir mutantes 4.2`): sin mirar que sea una
# lista, una tupla de afirmaciones buenas (o cualquier iterable) pasaría por resumen.
@caso("un resumen es una lista: una tupla con las mismas afirmaciones buenas no vale")
def _(resumenes):
    _, bd = con_historial()
    lanza("ValueError", resumenes.validar_candidato, bd, "e", 3, tuple(BUENO))


# El diferencial: «e» tiene 6 mensajes y «otra», 8. Candidatos de todas las formas (lista, tupla,
# dict, texto; vacía o con 1 a 3 afirmaciones; afirmaciones con claves de menos o de más, texto vacío
# o que no es texto, fuentes que no son enteros de verdad) y fuentes alrededor del corte y del final
# del historial de cada ejecución: 0, 1, corte − 1, corte, corte + 1, 6, 7, 8.
def _historial_del_diferencial(ruta):
    historial = referencia("historial")
    bd = historial.abrir(ruta)
    for ejecucion, cuantos in (("e", 6), ("otra", 8)):
        historial.crear_ejecucion(bd, ejecucion)
        for i in range(1, cuantos + 1):
            historial.anotar(bd, ejecucion, f"mensaje {i} de {ejecucion}")
    bd.close()


FUENTES = st.sampled_from(["corte", "corte − 1", "corte + 1", 1, 6, 7, 8, 0, -1, True, "1", 1.0, None])
AFIRMACION = st.one_of(
    st.builds(lambda texto, fuente: {"texto": texto, "fuente": fuente},
              st.sampled_from(["Leyó a.py.", "", "  ", None, 3]), FUENTES),
    st.builds(lambda fuente, clave: {"texto": "Leyó a.py.", "fuente": fuente, clave: 1},
              FUENTES, st.sampled_from(["nota", "seq"])),
    st.sampled_from([{"texto": "Leyó a.py."}, {"fuente": 1}, "Leyó a.py.", ["Leyó a.py.", 1]]))
CANDIDATOS = st.one_of(
    st.lists(st.builds(lambda fuente: {"texto": "Leyó a.py.", "fuente": fuente}, FUENTES), min_size=1, max_size=3),
    st.lists(AFIRMACION, max_size=3),
    st.builds(tuple, st.lists(AFIRMACION, min_size=1, max_size=2)),
    st.sampled_from([{"texto": "x", "fuente": 1}, "Leyó a.py.", None]))


def _candidato(candidato, corte):
    """El candidato con las fuentes «corte ± 1» ya en número."""
    def fuente(f):
        return {"corte": corte, "corte − 1": corte - 1, "corte + 1": corte + 1}.get(f, f) if isinstance(f, str) else f

    def afirmacion(a):
        return dict(a, fuente=fuente(a["fuente"])) if isinstance(a, dict) and "fuente" in a else a
    return type(candidato)(afirmacion(a) for a in candidato) if isinstance(candidato, (list, tuple)) else candidato


def _validar(resumenes, entrada):
    ejecucion, corte, candidato = entrada
    bd = base_compartida("historial.db", _historial_del_diferencial)
    antes = bd.total_changes
    lanza = intento(resumenes.validar_candidato, bd, ejecucion, corte, candidato)
    escritas = bd.total_changes - antes
    if escritas or bd.in_transaction:
        soltar_compartida("historial.db")  # el ejemplo siguiente, con una copia limpia
    return {"lo que lanza": lanza, "filas que escribió": escritas}


@caso.diferencial(entradas=st.builds(lambda ejecucion, corte, candidato: (ejecucion, corte, _candidato(candidato, corte)),
                                     st.sampled_from(["e", "otra"]), st.sampled_from([3, 6, 1, 5, 7, 8]), CANDIDATOS),
                  ejemplos=150, contar=lambda e: f"validar_candidato(bd, {e[0]!r}, {e[1]}, {e[2]!r}), con «e» de 6 "
                                                 "mensajes y «otra» de 8",
                  pistas={"lo que lanza": "ValueError si no es una lista no vacía de dicts con exactamente texto (no "
                                          "vacío) y fuente (un int, no un bool), o si una fuente pasa del corte o no "
                                          "está en el historial de esa ejecución; si no, nada",
                          "filas que escribió": "validar no escribe nada"})
def _(resumenes, entrada):
    return _validar(resumenes, entrada)


# --- 4.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "4.3", leccion=4, titulo="mover_puntero: compare-and-swap",
    nombre=None, modulo="resumenes",
    pistas=[
        "Un solo UPDATE de ejecuciones que cambia resumen_activo a `nuevo`... pero solo en la fila "
        "de `ejecucion` cuyo resumen_activo sigue siendo `base`.",
        "Compara con `resumen_activo IS ?`, no con `=`: la primera vez la base es None (NULL), y "
        "NULL = NULL no es verdad en SQL.",
        "Si el UPDATE no tocó ninguna fila (rowcount == 0), otro movió el puntero antes: lanza "
        "BaseObsoleta con un mensaje que diga de qué base partía y cuál es la activa.",
    ],
)


def con_dos_resumenes():
    """Una base con dos resúmenes de «e» instalados con la referencia: el activo es el segundo."""
    ref, bd = con_historial()
    uno = ref.instalar(bd, "e", None, 2, [{"texto": "uno", "fuente": 2}])
    dos = ref.instalar(bd, "e", uno, 3, [{"texto": "dos", "fuente": 3}])
    return ref, bd, uno, dos


def activo(bd):
    """El resumen activo de «e», leído con SQL directo y con su nombre."""
    return {"resumen activo": bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id='e'").fetchone()[0]}


@caso("si el puntero sigue en la base, pasa al nuevo")
def _(resumenes):
    _, bd, uno, dos = con_dos_resumenes()
    resumenes.mover_puntero(bd, "e", dos, uno)
    igual(activo(bd), {"resumen activo": uno})


@caso("si otro lo movió antes, BaseObsoleta, con un mensaje que dice cuál es el activo, y el puntero no cambia")
def _(resumenes):
    _, bd, uno, dos = con_dos_resumenes()
    try:
        resumenes.mover_puntero(bd, "e", uno, uno)
    except Exception as e:  # noqa: BLE001 - lo que sea, se compara con lo esperado
        error = e
    else:
        raise Fallo("BaseObsoleta", "ninguna excepción")
    if type(error).__name__ != "BaseObsoleta":
        raise Fallo("BaseObsoleta", f"{type(error).__name__}: {error}") from error
    if not re.search(rf"\b{dos}\b", str(error)):
        raise Fallo(f"un mensaje que nombre el activo de ahora, el resumen {dos}", f"«{error}»",
                    "quien lo lea tiene que saber desde qué resumen volver a empezar")
    igual(activo(bd), {"resumen activo": dos})


@caso("la primera vez, con base None, compara con IS (NULL) y mueve")
def _(resumenes):
    ref, bd = con_historial()
    bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES ('e', 2, '[]', NULL)")
    (nuevo,) = bd.execute("SELECT MAX(id) FROM resumenes").fetchone()
    resumenes.mover_puntero(bd, "e", None, nuevo)
    igual(activo(bd), {"resumen activo": nuevo})


# El diferencial: secuencias de compare-and-swap sobre dos ejecuciones, «e» (con el resumen 1 activo
# y los resúmenes 2 y 3 sin activar) y «f» (sin activo, con el resumen 4 sin activar), cada uno
# desde la base activa, una vieja o None; así los punteros se mueven y las bases se quedan viejas.
def _punteros_del_diferencial(ruta):
    historial, resumenes = referencia("historial"), referencia("resumenes")
    bd = historial.abrir(ruta)
    for ejecucion in ("e", "f"):
        historial.crear_ejecucion(bd, ejecucion)
        for i in range(1, 7):
            historial.anotar(bd, ejecucion, f"mensaje {i}")
    resumenes.instalar(bd, "e", None, 2, [{"texto": "uno", "fuente": 2}])
    for ejecucion, cobertura in (("e", 3), ("e", 4), ("f", 2)):
        bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo) VALUES (?, ?, '[]')", (ejecucion, cobertura))
    bd.close()


RESUMENES_DE = {"e": [1, 2, 3], "f": [4]}


class Punteros(Maquina):
    secuencias = 30
    pasos = 6
    pistas = {"lo que lanza": "un solo UPDATE … WHERE id=? AND resumen_activo IS ?; si no cambió ninguna fila, "
                              "BaseObsoleta",
              "¿el mensaje de BaseObsoleta nombra el activo de ahora?": "el mensaje dice cuál es el resumen activo "
                                                                        "ahora, con su número",
              "los punteros": "solo se mueve el puntero de esa ejecución, y solo si seguía en la base"}

    def preparar(self, resumenes):
        ruta = copia_de_plantilla("punteros.db", _punteros_del_diferencial)
        bd = sin_esperar_al_disco(sqlite3.connect(ruta, isolation_level=None))
        bd.execute("PRAGMA foreign_keys=ON")
        return SimpleNamespace(resumenes=resumenes, bd=bd, carpeta=ruta.parent)

    def cerrar(self, mundo):
        cerrar_y_borrar(mundo.bd, carpeta=mundo.carpeta)

    @al_empezar(ejecucion=st.sampled_from(["e", "f"]), base=st.sampled_from(["la activa", "None", "otra"]),
                nuevo=st.integers(0, 2))
    def empezar(self, mundo, ejecucion, base, nuevo):
        return self.mover(mundo, ejecucion, base, nuevo)

    @regla(ejecucion=st.sampled_from(["e", "f"]), base=st.sampled_from(["la activa", "None", "otra"]),
           nuevo=st.integers(0, 2))
    def mover(self, mundo, ejecucion, base, nuevo):
        bd = mundo.bd
        punteros = dict(bd.execute("SELECT id, resumen_activo FROM ejecuciones ORDER BY id").fetchall())
        suyos = RESUMENES_DE[ejecucion]
        el_nuevo = suyos[nuevo % len(suyos)]
        la_base = {"la activa": punteros[ejecucion], "None": None}.get(
            base, next((r for r in suyos if r != punteros[ejecucion]), punteros[ejecucion] or suyos[0]))
        if el_nuevo == la_base:  # instalar parte siempre de otra base que el resumen nuevo
            el_nuevo = next((r for r in suyos if r != la_base), None)
            if el_nuevo is None:
                self.contar_paso(f"nada que mover en {ejecucion!r}")
                return {}
        self.contar_paso(f"mover_puntero(bd, {ejecucion!r}, {la_base}, {el_nuevo}) con los punteros en {punteros}")
        lanza = intento(mundo.resumenes.mover_puntero, bd, ejecucion, la_base, el_nuevo)
        ahora = dict(bd.execute("SELECT id, resumen_activo FROM ejecuciones ORDER BY id").fetchall())
        nombra = None
        if getattr(lanza, "tipo", None) == "BaseObsoleta" and ahora[ejecucion] is not None:
            nombra = bool(re.search(rf"\b{ahora[ejecucion]}\b", str(lanza.error)))
        return {"lo que lanza": lanza, "¿el mensaje de BaseObsoleta nombra el activo de ahora?": nombra,
                "los punteros": ahora}


caso.diferencial()(Punteros)


# --- 4.4 -------------------------------------------------------------------------------------
caso = ejercicio(
    "4.4", leccion=4, titulo="armar: la M que sale del almacén",
    nombre=None, modulo="durable",
    pistas=[
        "Empieza por una copia del inicio: M = list(inicio).",
        "Si hay resumen activo (contexto[\"resumen\"] no es None), añade un mensaje del usuario "
        "con NOTA + lo_que_dice(contexto[\"resumen\"], contexto[\"cobertura\"]).",
        "Después, cada (seq, texto) de contexto[\"cola\"], convertido con recuperar(texto) en un "
        "mensaje (rol, contenido). Devuelve M.",
    ],
)

INICIO = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla a.py.")]


@caso("sin resumen: el inicio y la cola entera, tal cual")
def _(durable):
    cola = [(1, durable.guardar(("asistente", [{"type": "text", "text": "hola"}]))),
            (2, durable.guardar(("usuario", "sigue")))]
    M = durable.armar({"activo": None, "resumen": None, "cobertura": 0, "cola": cola}, list(INICIO))
    igual(M, INICIO + [("asistente", [{"type": "text", "text": "hola"}]), ("usuario", "sigue")])


@caso("con resumen: el inicio, la nota y la cola posterior")
def _(durable):
    resumen = [{"texto": "He leído a.py.", "fuente": 4}]
    cola = [(5, durable.guardar(("asistente", [{"type": "text", "text": "y ahora"}])))]
    M = durable.armar({"activo": 1, "resumen": resumen, "cobertura": 4, "cola": cola}, list(INICIO))
    igual(M, INICIO + [("usuario", durable.NOTA + durable.lo_que_dice(resumen, 4)),
                       ("asistente", [{"type": "text", "text": "y ahora"}])])


@caso("no modifica el inicio que le pasan")
def _(durable):
    inicio = list(INICIO)
    cola = [(5, durable.guardar(("usuario", "sigue")))]
    durable.armar({"activo": 1, "resumen": [{"texto": "He leído a.py.", "fuente": 4}], "cobertura": 4,
                   "cola": cola}, inicio)
    igual(inicio, INICIO, "armar añadió la nota o la cola a la lista `inicio` que recibió: empieza por una copia")


# El diferencial: contextos sin resumen o con él (afirmaciones que citan su cobertura y otras
# heredadas), con colas de 0 a 4 mensajes de todas las formas, e inicios de 1 a 3 mensajes.
MENSAJES = st.sampled_from([("asistente", [{"type": "text", "text": "hola"}]), ("usuario", "sigue"),
                            ("asistente", [{"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "a.py"}}]),
                            ("usuario", [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1",
                                          "is_error": True}]),
                            ("usuario", "ñandú «citado»")])
RESUMENES = st.one_of(st.none(), st.lists(st.builds(lambda texto, de_la_cobertura: (texto, de_la_cobertura),
                                                    st.sampled_from(["He leído a.py.", "Falta b.py.", ""]),
                                                    st.booleans()), min_size=1, max_size=3))


def _contexto(resumen, cobertura, cola, inicio):
    afirmaciones = None if resumen is None else [{"texto": texto, "fuente": cobertura if suya else 1}
                                                  for texto, suya in resumen]
    return ({"activo": None if resumen is None else 7, "resumen": afirmaciones, "cobertura": 0 if resumen is None
             else cobertura, "cola": [(cobertura + i, json.dumps(list(m), ensure_ascii=False))
                                      for i, m in enumerate(cola, 1)]}, inicio)


@caso.diferencial(entradas=st.builds(_contexto, RESUMENES, st.integers(2, 5), st.lists(MENSAJES, max_size=4),
                                     st.lists(MENSAJES, min_size=1, max_size=3).map(
                                         lambda m: [("sistema", "Eres un agente de prueba.")] + m)),
                  ejemplos=120, contar=lambda e: f"armar({e[0]!r}, {e[1]!r})",
                  pistas={"la M": "list(inicio); si hay resumen, (\"usuario\", NOTA + lo_que_dice(resumen, "
                                  "cobertura)); después recuperar(texto) de cada mensaje de la cola",
                          "el inicio que recibió": "empieza por una copia del inicio: no lo cambies"})
def _(durable, entrada):
    contexto, inicio = entrada
    antes = list(inicio)
    return {"la M": durable.armar(contexto, inicio), "el inicio que recibió": "sin cambios" if inicio == antes
            else "cambiado"}
