"""Dos actores con dos conexiones, intercalados sentencia a sentencia, sin relojes que decidan.

El actor A corre con una conexión que se para tras su sentencia número k (`PausaTras`); en esa
pausa actúa B, entero, con su propia conexión. Recorrer k = 1, 2, … hasta que A ya no llega a
pararse prueba B en cada hueco entre dos sentencias de A (y antes del COMMIT).

En PostgreSQL, B corre en un hilo: si A tiene una fila que B necesita, B se queda esperando su
cerrojo, A sigue y, al confirmar, B continúa. Se sabe que B espera porque lo dice
pg_stat_activity (wait_event_type = 'Lock'), no porque pase un tiempo. En SQLite, B lo intenta
con una espera de 0 segundos: si A tiene el turno de escritura, le dice «database is locked» al
momento, y B lo hace entero cuando A ha terminado.
"""
import sqlite3
import threading
import time

# Un tope, no una medida: lo que se espera aquí tarda milisegundos.
ESPERA_MAXIMA_S = 20.0


class PausaTras:
    """Una conexión que, justo después de su sentencia número `tras` (o de la primera que cumpla
    `cuando(sql)`), llama a `entre()`. Todo lo demás va a la conexión de verdad."""

    def __init__(self, conexion, entre, tras=None, cuando=None):
        self._conexion = conexion
        self._entre = entre
        self._tras = tras
        self._cuando = cuando
        self.hechas = 0
        self.pausado = False

    def __getattr__(self, nombre):
        return getattr(self._conexion, nombre)

    def execute(self, sql, *argumentos):
        cursor = self._conexion.execute(sql, *argumentos)
        self.hechas += 1
        toca = self.hechas == self._tras if self._cuando is None else self._cuando(sql)
        if toca and not self.pausado:
            self.pausado = True
            self._entre()
        return cursor


class Actor:
    """B: `hacer(conexion)` con su propia conexión. `lanzar()` vuelve cuando B ha acabado o espera
    un cerrojo; `acabar()` espera a que acabe y devuelve lo que devolvió (o la excepción que lanzó)."""

    def __init__(self, motor, conexion, hacer, observador=None):
        self.motor = motor
        self.conexion = conexion
        self.hacer = hacer
        self.observador = observador
        self.resultado = self.error = None
        self.esperaba = False  # ¿tuvo que esperar a A?
        self.hilo = None

    def _correr(self):
        try:
            self.resultado = self.hacer(self.conexion)
        except BaseException as error:  # noqa: BLE001 — se guarda para el test
            self.error = error

    def lanzar(self):
        if self.motor == "sqlite":
            self.conexion.execute("PRAGMA busy_timeout = 0")
            self._correr()
            if isinstance(self.error, sqlite3.OperationalError) and "locked" in str(self.error):
                self.esperaba, self.error = True, None  # lo hará cuando A acabe
            return
        pid = self.conexion.info.backend_pid
        self.hilo = threading.Thread(target=self._correr, daemon=True)
        self.hilo.start()
        limite = time.monotonic() + ESPERA_MAXIMA_S
        while self.hilo.is_alive():
            if esperando_cerrojo(self.observador, pid):
                self.esperaba = True
                return
            if time.monotonic() > limite:
                raise AssertionError("B ni acaba ni espera un cerrojo")
            time.sleep(0.002)

    def acabar(self):
        if self.motor == "sqlite":
            if self.esperaba:
                self.conexion.execute("PRAGMA busy_timeout = 10000")
                self._correr()
        elif self.hilo is not None:
            self.hilo.join(ESPERA_MAXIMA_S)
            assert not self.hilo.is_alive(), "B sigue esperando después de que A acabara"
        return self.resultado, self.error


def esperando_cerrojo(observador, pid):
    """¿Espera el backend `pid` un cerrojo (de fila, de tabla, de transacción)?"""
    fila = observador.execute(
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    return fila is not None and fila[0] == "Lock"


def intercalar(motor, conexion_a, hacer_a, conexion_b, hacer_b, tras, observador=None):
    """A con una pausa tras su sentencia `tras`; en la pausa, B. Devuelve (a, b, pausado, b_esperaba),
    donde a y b son (resultado, excepción)."""
    b = Actor(motor, conexion_b, hacer_b, observador)
    a_pausado = PausaTras(conexion_a, b.lanzar, tras=tras)
    resultado_a = error_a = None
    try:
        resultado_a = hacer_a(a_pausado)
    except BaseException as error:  # noqa: BLE001
        error_a = error
    if not a_pausado.pausado:  # A acabó antes de la sentencia `tras`: B, detrás
        b.lanzar()
    return (resultado_a, error_a), b.acabar(), a_pausado.pausado, b.esperaba
