"""Para el explorador de carreras: lo que cada actor lee y escribe en la base, sentencia a sentencia, y en qué transacción.

Equipo del curso, para los exploradores de carreras (lecciones 04, 05 y 07). Cada actor tiene su
`Bitacora`; su conexión va envuelta en una `ConexionQueAnota`, que pasa cada sentencia a la
conexión de verdad (SQLite o PostgreSQL) y apunta:

- qué clase de sentencia es (`clase_de`): empieza, lee, escribe, confirma, deshace u otra (PRAGMA,
  SET, mirar el esquema...);
- a qué transacción del actor pertenece: se numeran en el orden en que empiezan (BEGIN, o
  `transaction()` de psycopg); una sentencia fuera de ellas es una transacción suya, de una sola
  sentencia (autocommit);
- qué devolvió: las filas que el código llegó a leer del cursor, o cuántas filas escribió;
- si tuvo que esperar: en SQLite, un `BEGIN IMMEDIATE` que contesta «database is locked»; en
  PostgreSQL, la sentencia en curso cuando el explorador ve que espera un cerrojo (lo apunta él,
  con `esperando`);
- si la conexión se cierra con la transacción abierta (una caída): lo que hizo se pierde.

El explorador recoge lo apuntado tras cada paso (`sacar`) y lo guarda en el evento de ese paso:
una tupla de `Operacion`, datos puros que `textos.transacciones` convierte en texto.
"""
import re
import threading
from dataclasses import dataclass
from typing import Any

EMPIEZA, LEE, ESCRIBE, CONFIRMA, DESHACE, ESPERA, PIERDE, OTRA = (
    "empieza", "lee", "escribe", "confirma", "deshace", "espera", "pierde", "otra")

# La clase de una sentencia, por su primera palabra.
_POR_LA_PRIMERA_PALABRA = {
    "BEGIN": EMPIEZA, "START": EMPIEZA, "COMMIT": CONFIRMA, "END": CONFIRMA, "ROLLBACK": DESHACE,
    "INSERT": ESCRIBE, "UPDATE": ESCRIBE, "DELETE": ESCRIBE, "REPLACE": ESCRIBE, "TRUNCATE": ESCRIBE,
    "SELECT": LEE, "WITH": LEE, "VALUES": LEE,
}
# Lecturas que no son de los datos del escenario: el esquema y los cerrojos consultivos.
_DEL_ESQUEMA = re.compile(r"sqlite_master|to_regclass|pg_advisory|pg_catalog|information_schema", re.IGNORECASE)
_PARAMETRO = re.compile(r"\?|%s")

LARGO_DE_UN_VALOR = 24  # caracteres de un texto antes de recortarlo con «…»
FILAS_A_LA_VISTA = 2    # filas leídas que se muestran; del resto, cuántas son


def clase_de(sql):
    """EMPIEZA, CONFIRMA, DESHACE, ESCRIBE, LEE u OTRA, por la primera palabra de `sql`."""
    palabras = sql[:40].split(None, 2)
    clase = _POR_LA_PRIMERA_PALABRA.get(palabras[0].rstrip(";").upper(), OTRA) if palabras else OTRA
    if clase == DESHACE and len(palabras) > 1 and palabras[1].upper() == "TO":
        return OTRA  # ROLLBACK TO SAVEPOINT: la transacción sigue
    if clase == LEE and _DEL_ESQUEMA.search(sql):
        return OTRA
    return clase


def _valor(valor):
    """Un parámetro o un valor leído, como se escribiría en SQL, recortado si es largo."""
    if valor is None:
        return "NULL"
    if isinstance(valor, bool):
        return "TRUE" if valor else "FALSE"
    if isinstance(valor, (int, float)):
        return repr(valor)
    texto = str(valor)
    if len(texto) > LARGO_DE_UN_VALOR:
        texto = texto[:LARGO_DE_UN_VALOR - 1] + "…"
    return "'" + texto.replace("'", "''") + "'"


def en_una_linea(sql, parametros=None):
    """`sql` con los espacios juntos y cada «?» o «%s» cambiado por su parámetro (en orden)."""
    texto = " ".join(str(sql).split())
    if not parametros or isinstance(parametros, dict):
        return texto
    valores = iter(parametros)
    return _PARAMETRO.sub(lambda encaje: _valor(next(valores, None)), texto)


def _fila(fila):
    valores = tuple(fila) if isinstance(fila, (tuple, list)) else (fila,)
    return "(" + ", ".join(_valor(v) for v in valores) + ("," if len(valores) == 1 else "") + ")"


def _filas(filas):
    if not filas:
        return "ninguna fila"
    vistas = ", ".join(_fila(f) for f in filas[:FILAS_A_LA_VISTA])
    if len(filas) == 1:
        return vistas
    resto = len(filas) - FILAS_A_LA_VISTA
    return f"{len(filas)} filas: {vistas}" + (f" y {resto} más" if resto > 0 else "")


def _escritas(n):
    return "ninguna fila" if n == 0 else "1 fila" if n == 1 else f"{n} filas"


@dataclass(frozen=True)
class Operacion:
    """Una sentencia de un actor, tal como se mandó y lo que devolvió: en qué transacción suya, de qué
    clase, el SQL y sus parámetros, las filas que el código leyó (None si no leyó ninguna), cuántas
    escribió, el id de lo insertado (SQLite) o el error. `sentencia` y `resultado` lo dicen en texto
    (se escriben al pedirlos: el explorador anota miles y solo se miran unas pocas)."""
    transaccion: int     # 1, 2...: las transacciones del actor, en el orden en que empiezan
    clase: str           # EMPIEZA, LEE, ESCRIBE, CONFIRMA, DESHACE, ESPERA, PIERDE u OTRA
    sql: str
    parametros: Any = None
    filas: tuple | None = None
    escritas: int | None = None
    id: int | None = None
    error: str | None = None
    suelta: bool = False  # una sola sentencia fuera de BEGIN…COMMIT: se confirma al momento

    @property
    def sentencia(self):
        """El SQL en una línea, con los parámetros en su sitio."""
        return en_una_linea(self.sql, self.parametros)

    @property
    def resultado(self):
        """«→ (1, 2)», «→ 1 fila, id 3», «→ devuelve (2,)», «→ error: …»; vacío si no hay nada que decir."""
        if self.error:
            texto = f"error: {self.error}"
        elif self.clase == ESCRIBE and self.filas is not None:  # … RETURNING: lo que devolvió
            texto = "devuelve " + _filas(self.filas)
        elif self.clase == ESCRIBE:
            texto = _escritas(self.escritas) if self.escritas is not None and self.escritas >= 0 else ""
            if self.id is not None and self.escritas == 1:
                texto += f", id {self.id}"
        elif self.clase == LEE and self.filas is not None:
            texto = _filas(self.filas)
        else:
            texto = ""
        return f"→ {texto}" if texto else ""


class _Apunte:
    """Una operación mientras se apunta: el cursor puede leer filas después de `execute`."""
    __slots__ = ("transaccion", "clase", "sql", "parametros", "filas", "escritas", "id", "error", "suelta")

    def __init__(self, transaccion, clase, sql, parametros=None, suelta=False):
        self.transaccion, self.clase, self.sql, self.suelta = transaccion, clase, sql, suelta
        self.parametros = tuple(parametros) if isinstance(parametros, list) else parametros
        self.filas = self.escritas = self.id = self.error = None

    def operacion(self):
        return Operacion(self.transaccion, self.clase, self.sql, self.parametros,
                         None if self.filas is None else tuple(self.filas), self.escritas, self.id, self.error,
                         self.suelta)


class Bitacora:
    """Lo apuntado por un actor y aún no recogido, y cuántas transacciones lleva empezadas.

    La escribe el hilo del actor (con el explorador en paralelo) y la recoge el del explorador:
    un cerrojo protege la lista."""

    def __init__(self):
        self._apuntes = []
        self._cerrojo = threading.Lock()
        self.transacciones = 0
        self.en_curso = None  # (sql, parámetros, transacción, suelta) de la sentencia que se ejecuta

    def nueva_transaccion(self):
        self.transacciones += 1
        return self.transacciones

    def apuntar(self, apunte):
        with self._cerrojo:
            # Reintentar un BEGIN que espera no es otra espera: una sola línea.
            anterior = self._apuntes[-1] if self._apuntes else None
            if not (apunte.clase == ESPERA and anterior is not None and anterior.clase == ESPERA
                    and anterior.sql == apunte.sql):
                self._apuntes.append(apunte)
        return apunte

    def esperando(self):
        """El explorador ha visto que la sentencia en curso espera un cerrojo (PostgreSQL)."""
        en_curso = self.en_curso
        if en_curso is not None:
            sql, parametros, transaccion, suelta = en_curso
            self.apuntar(_Apunte(transaccion, ESPERA, sql, parametros, suelta))

    def sacar(self):
        """Las operaciones apuntadas desde la última vez, ya fijas, y la lista vacía."""
        with self._cerrojo:
            apuntes, self._apuntes = self._apuntes, []
        return tuple(a.operacion() for a in apuntes)


class _CursorQueAnota:
    """El cursor de una sentencia: apunta las filas que el código lee de él."""

    def __init__(self, real, apunte):
        self._real = real
        self._apunte = apunte

    def __getattr__(self, nombre):
        return getattr(self._real, nombre)

    def _leidas(self, filas):
        if self._apunte.filas is None:
            self._apunte.filas = []
        self._apunte.filas.extend(filas)

    def fetchone(self):
        fila = self._real.fetchone()
        self._leidas([] if fila is None else [fila])
        return fila

    def fetchall(self):
        filas = self._real.fetchall()
        self._leidas(filas)
        return filas

    def fetchmany(self, *argumentos, **opciones):
        filas = self._real.fetchmany(*argumentos, **opciones)
        self._leidas(filas)
        return filas

    def __iter__(self):
        self._leidas([])
        for fila in self._real:
            self._apunte.filas.append(fila)
            yield fila

    def __next__(self):
        fila = next(self._real)
        self._leidas([fila])
        return fila


class ConexionQueAnota:
    """La conexión de un actor: todo va a la de verdad, y cada sentencia queda en su bitácora."""

    def __init__(self, real, bitacora):
        self._real = real
        self._bitacora = bitacora
        self._abierta = None   # el número de la transacción abierta en esta conexión
        self._anidadas = 0     # transaction() dentro de transaction(): un SAVEPOINT, no otra

    def __getattr__(self, nombre):
        return getattr(self._real, nombre)

    def _empezar(self):
        self._abierta = self._bitacora.nueva_transaccion()
        return self._abierta

    def execute(self, sql, *argumentos, **opciones):
        parametros = argumentos[0] if argumentos else opciones.get("params")
        clase = clase_de(sql)
        transaccion, suelta = self._abierta, False
        if clase == EMPIEZA:
            transaccion = (self._bitacora.transacciones + 1) if self._abierta is None else self._abierta
        elif transaccion is None:
            transaccion, suelta = self._bitacora.transacciones + 1, clase in (LEE, ESCRIBE)
        apunte = _Apunte(transaccion, clase, sql, parametros, suelta)
        self._bitacora.en_curso = (sql, parametros, transaccion, suelta)
        try:
            cursor = self._real.execute(sql, *argumentos, **opciones)
        except Exception as error:
            if clase == EMPIEZA and "locked" in str(error):  # SQLite: el turno de escritura es de otro
                self._bitacora.apuntar(_Apunte(transaccion, ESPERA, sql, parametros, suelta))
            else:
                if suelta:
                    self._bitacora.nueva_transaccion()
                apunte.error = f"{type(error).__name__}: {error}"
                self._bitacora.apuntar(apunte)
            raise
        finally:
            self._bitacora.en_curso = None
        if clase == EMPIEZA and self._abierta is None:
            self._empezar()
        elif suelta:
            self._bitacora.nueva_transaccion()
        elif clase in (CONFIRMA, DESHACE):
            self._abierta = None
        if clase == OTRA:
            return cursor
        self._bitacora.apuntar(apunte)
        if clase == ESCRIBE:
            apunte.escritas = getattr(cursor, "rowcount", None)
            if sql.lstrip()[:6].upper() == "INSERT":
                apunte.id = getattr(cursor, "lastrowid", None)  # SQLite; psycopg no lo tiene (usa RETURNING)
        return _CursorQueAnota(cursor, apunte) if clase in (LEE, ESCRIBE) else cursor

    def __enter__(self):
        """`with bd:` de sqlite3 (confirma o deshace al salir) o de psycopg (además, cierra)."""
        self._real.__enter__()
        return self

    def __exit__(self, tipo, valor, traza):
        try:
            return self._real.__exit__(tipo, valor, traza)
        finally:
            cerrada = getattr(self._real, "closed", False)
            if self._abierta is not None and (cerrada or not getattr(self._real, "in_transaction", True)):
                clase, sql = (DESHACE, "ROLLBACK") if tipo is not None else (CONFIRMA, "COMMIT")
                self._bitacora.apuntar(_Apunte(self._abierta, clase, f"{sql} (al salir de with)"))
                self._abierta = None

    def transaction(self, *argumentos, **opciones):
        """La de psycopg: BEGIN al entrar y COMMIT (o ROLLBACK, si hay excepción) al salir."""
        return _TransaccionQueAnota(self, self._real.transaction(*argumentos, **opciones))

    def close(self):
        if self._abierta is not None:  # cerrar a medias: lo que hizo esta transacción no queda
            self._bitacora.apuntar(_Apunte(self._abierta, PIERDE, "(la conexión se cierra sin COMMIT ni ROLLBACK)"))
            self._abierta = None
        return self._real.close()


class _TransaccionQueAnota:
    def __init__(self, conexion, real):
        self._conexion = conexion
        self._real = real

    def __enter__(self):
        resultado = self._real.__enter__()
        conexion = self._conexion
        conexion._anidadas += 1
        if conexion._anidadas == 1 and conexion._abierta is None:
            conexion._bitacora.apuntar(_Apunte(conexion._empezar(), EMPIEZA, "BEGIN"))
        return resultado

    def __exit__(self, tipo, valor, traza):
        conexion = self._conexion
        transaccion = conexion._abierta
        try:
            return self._real.__exit__(tipo, valor, traza)
        finally:
            conexion._anidadas -= 1
            if conexion._anidadas == 0 and transaccion is not None and not conexion._real.closed:
                clase, sql = (DESHACE, "ROLLBACK") if tipo is not None else (CONFIRMA, "COMMIT")
                conexion._bitacora.apuntar(_Apunte(transaccion, clase, sql))
                conexion._abierta = None


class ConexionesQueAnotan(dict):
    """`mundo.conexiones` en el explorador paso a paso: la conexión que se guarda con el nombre de
    un actor queda envuelta en una `ConexionQueAnota` con la bitácora de ese actor (también la que
    un paso abre de nuevo, como al reiniciar). Las demás (el observador, la de preparar), tal cual."""

    def __init__(self, bitacoras):
        super().__init__()
        self.bitacoras = bitacoras

    def __setitem__(self, nombre, conexion):
        if nombre in self.bitacoras and not isinstance(conexion, ConexionQueAnota):
            conexion = ConexionQueAnota(conexion, self.bitacoras[nombre])
        super().__setitem__(nombre, conexion)
