"""Para los ejercicios de la lección 04: la transacción, el candidato, el compare-and-swap y la M que se reconstruye."""
import re
import sqlite3

from curso import rutas
from curso.rutas import cargar_modulo
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual


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
    """Que `funcion(*args)` lance una excepción llamada `nombre` (de cualquier módulo)."""
    try:
        funcion(*args)
    except Exception as e:  # noqa: BLE001
        if type(e).__name__ == nombre or (nombre == "ValueError" and isinstance(e, ValueError)):
            return
        raise Fallo(nombre, f"{type(e).__name__}: {e}") from e
    raise Fallo(nombre, "ninguna excepción")


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
