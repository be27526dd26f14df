"""Para la lección 07: el explorador de carreras con transacciones abiertas, cada actor en su hilo y su conexión.

El recorrido con transacciones abiertas y sus dos motores, SQLite y PostgreSQL: lo que cambia de
un motor a otro vive en su clase.

Equipo del curso; lo estrena la lección 07 (las carreras de las lecciones 04 y 05, en PostgreSQL).
El explorador de `explorador.py` ejecuta cada paso entero antes del siguiente: ninguna transacción
queda abierta entre dos pasos, y por eso no ve lo que pasa cuando dos transacciones se cruzan. En
PostgreSQL eso es justo lo que importa: en READ COMMITTED, lo que una transacción leyó puede cambiar
antes de que escriba. Aquí:

- cada actor corre en su propio hilo, con su propia conexión, y solo avanza cuando el explorador
  le da el turno (un intercalado sigue siendo un orden fijo de pasos: nada lo decide un reloj);
- un paso *partido* (lo marca el escenario poniendo detrás un paso `CONFIRMA`) se para justo antes
  de su primer COMMIT: entre medias pueden actuar los demás, con su transacción abierta;
- si una sentencia tiene que esperar el cerrojo de otra transacción, el actor queda *esperando*:
  en PostgreSQL lo dice pg_stat_activity (wait_event_type = 'Lock', y pg_blocking_pids dice
  quién), nunca un tiempo de espera; en SQLite, `BEGIN IMMEDIATE` con busy_timeout = 0 contesta
  «database is locked» al momento y se reintenta cuando el que escribe acaba. Sus turnos se
  guardan y los hace, en orden, en cuanto deja de esperar;
- el motor (`EnSqlite()` o `EnPostgres(conexion)`) da a cada intercalado un estado inicial nuevo:
  en SQLite, una copia del fichero; en PostgreSQL, un esquema propio vaciado (TRUNCATE) y
  preparado otra vez. Todo lo que distingue a un motor del otro (cómo espera un actor un
  cerrojo, a quién espera, quién cierra las conexiones) es un método de su clase; el recorrido
  de los intercalados es el de `explorador.py` (`recorrer_intercalados`), con otra `ronda`.

Lo que devuelve es la misma `Exploracion` que el explorador de SQLite, con el motor en que corrió
(«SQLite» o «PostgreSQL»): sirven los mismos textos (`textos.py`) y el mismo widget (`widget_de_las_carreras.py`).
Un paso que espera deja dos eventos: «espera …» cuando se bloquea y «… (tras esperar)» cuando
sigue; por eso un intercalado puede tener más eventos que pasos. Cada evento se lleva lo que su
actor leyó y escribió desde el anterior (`bitacora.py`): la sentencia que se queda esperando un
cerrojo, como «espera» en el evento en que se bloquea, y hecha, con lo que devolvió, en el de
«(tras esperar)», aunque el cerrojo se soltara durante el turno de otro.
"""
import functools
import os
import re
import secrets
import sqlite3
import threading
import time
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curso.explorables.carreras.bitacora import Bitacora, ConexionQueAnota
from curso.explorables.carreras.explorador import EnFichero, Escenario, Evento, Mundo, recorrer_intercalados


def CONFIRMA(mundo):  # noqa: N802 — un marcador, no una función que se llame
    """Marcador: el paso anterior del mismo actor se para antes de su COMMIT, y este lo confirma."""
    raise AssertionError("CONFIRMA es un marcador: no se ejecuta")


# Un tope, no una medida: cada paso tarda milisegundos. Si se pasa, es un fallo del escenario.
ESPERA_MAXIMA_S = 30.0
# Cada cuánto se mira pg_stat_activity mientras un actor corre (solo si aún no ha terminado su turno).
SONDEO_S = 0.001

COMMIT = re.compile(r"\s*(COMMIT|END)\b", re.IGNORECASE)
BEGIN_DE_ESCRITURA = re.compile(r"\s*BEGIN\s+(IMMEDIATE|EXCLUSIVE)\b", re.IGNORECASE)
FIN_DE_TRANSACCION = re.compile(r"\s*(COMMIT|END|ROLLBACK)\b", re.IGNORECASE)


@dataclass(frozen=True)
class EscenarioEnParalelo(Escenario):
    """Un escenario para este explorador: el de siempre, con el módulo de cada motor.

    `modulo` es el de PostgreSQL; `modulo_sqlite`, el de SQLite con las mismas funciones. `abrir` es
    el nombre de la función del módulo que abre la conexión de cada actor (p. ej. "abrir_buzon"), o
    una función que la encuentra a partir del módulo (el resumenes.py de SQLite no abre: lo hace su
    vecino historial.py).
    `conectar` no se usa: las conexiones las abre el explorador, una por actor, en su hilo.
    """
    modulo_sqlite: Path = None
    abrir: Any = "abrir"


# --- Los motores ---------------------------------------------------------------------------------
# Lo que comparten está en `EnHilos`; lo que distingue a SQLite de PostgreSQL (cómo se guarda el
# estado inicial, cómo se sabe que un actor espera y a quién, quién cierra las conexiones), en cada
# motor. `_Actor` y `_Ronda`, más abajo, solo preguntan al motor.

class EnHilos:
    """Lo común a los motores de este explorador: el `Mundo` de cada intercalado y cómo se recorre
    (`_Ronda`: cada actor en su hilo). `recorrer_intercalados` (explorador.py) pone el resto."""

    def mundo(self, escenario, modulo, variante, *, plantilla=False, datos=None):
        mundo = _MundoEnParalelo(ruta=None, modulo=modulo, variante=variante, datos=datos or {})
        mundo.abrir = escenario.abrir
        return mundo

    @contextmanager
    def ronda(self, escenario, mundo):
        """Arranca los hilos de los actores, da la función que recorre un orden y, al salir, los para."""
        ronda = _Ronda(escenario, self, mundo)
        try:
            yield ronda.recorrer
        finally:
            ronda.cerrar()

    def adaptar(self, sql):
        """La sentencia tal como la quiere el controlador del motor."""
        return sql


class EnSqlite(EnHilos, EnFichero):
    """SQLite: un fichero por intercalado, copia de uno preparado una sola vez (como `EnFichero`).

    Un actor que escribe empieza con `BEGIN IMMEDIATE`, y con busy_timeout = 0 el que llega
    después oye «database is locked» al momento: espera a que el otro acabe y lo intenta otra vez."""
    prefijo = "carreras-paralelo-"

    def modulo_de(self, escenario):
        return escenario.modulo_sqlite

    def observador(self, mundo):
        return sqlite3.connect(mundo.ruta, isolation_level=None)

    def preparar_conexion(self, real):
        real.execute("PRAGMA busy_timeout = 0")  # «locked» al momento: lo decide el explorador
        return real

    def conexion_del_actor(self, actor, abrir, ruta):
        return self.preparar_conexion(abrir(ruta))

    def sentencia(self, actor, ejecutar, sql):
        """Ejecuta una sentencia del hilo de `actor`: un BEGIN de escritura que encuentra la base
        cogida deja al actor esperando y se repite cuando el explorador le deja seguir."""
        while True:
            try:
                resultado = ejecutar()
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or not BEGIN_DE_ESCRITURA.match(sql):
                    raise
                with actor.cond:
                    actor.estado = ESPERANDO
                    actor.cond.notify_all()
                    actor.esperar_turno_sin_soltar()
                continue
            with actor.cond:
                actor.progreso += 1
            return resultado

    def bloqueadores(self, actor):
        return None  # en SQLite la espera la dice la excepción, no una consulta

    def a_quien(self, actor, actores):
        otros = [a.nombre for a in actores if a is not actor and a.escribiendo]
        return f"espera a {' y '.join(otros) or 'otra conexión'}, que tiene el turno de escritura"

    def puede_seguir(self, actor, ronda):
        return not any(a.escribiendo for a in ronda.actores.values() if a is not actor)

    def cerrar_en_el_hilo(self, actor):
        """sqlite3: cada conexión se cierra en el hilo que la abrió."""
        for real in [actor.guardada, *(real for _, real in actor.propias)]:
            if real is not None:
                real.close()

    def devolver_conexiones(self, actor):
        pass  # las cerró su hilo


class EnPostgres(EnHilos):
    """PostgreSQL: un esquema propio en el servidor de `conexion`, vaciado antes de cada intercalado.

    Las conexiones de los actores se guardan de un intercalado al siguiente (abrir una cuesta más que
    todo lo demás); la que un paso cierra (una caída) se abre otra vez en el siguiente."""
    titulo = "PostgreSQL"

    def __init__(self, conexion):
        self.conexion = conexion
        self._guardadas = {}

    def modulo_de(self, escenario):
        return escenario.modulo

    @contextmanager
    def base(self, plantilla, preparar):
        import psycopg
        from psycopg.conninfo import make_conninfo

        from curso.postgres.cluster import esquema_de_prueba

        with ExitStack() as pila:
            esquema = pila.enter_context(esquema_de_prueba(self.conexion, prefijo="carreras"))
            self._aplicacion = f"carreras_{secrets.token_hex(4)}"
            self.ruta = make_conninfo(esquema, application_name=self._aplicacion)
            self._vigia = pila.enter_context(psycopg.connect(self.ruta, autocommit=True))
            # Vaciar y rellenar no tiene que esperar al disco: si el servidor cayera, se repetiría.
            self._vigia.execute("SET synchronous_commit = off")
            pila.callback(self._cerrar_guardadas)
            plantilla.ruta = self.ruta
            preparar(plantilla)
            self._restaurar = self._foto_inicial()
            yield

    def _foto_inicial(self):
        """El SQL que devuelve el esquema al estado que dejó `preparar`: cada tabla copiada aparte y
        cada secuencia con su valor. Con un superusuario basta un DELETE y un INSERT por tabla,
        sin mirar las claves foráneas (session_replication_role); sin él, TRUNCATE y preparar otra vez."""
        bd = self._vigia
        tablas = [t for (t,) in bd.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename")]
        if not self._superusuario():
            lista = ", ".join(f'"{t}"' for t in tablas)
            return None if not tablas else f"TRUNCATE {lista} RESTART IDENTITY CASCADE"
        partes = ["BEGIN", "SET LOCAL session_replication_role = replica"]
        for t in tablas:
            bd.execute(f'CREATE TABLE "_inicial_{t}" AS TABLE "{t}"')
            partes += [f'DELETE FROM "{t}"', f'INSERT INTO "{t}" OVERRIDING SYSTEM VALUE SELECT * FROM "_inicial_{t}"']
        for secuencia, ultimo in bd.execute(
                "SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = current_schema()").fetchall():
            partes.append(f"SELECT setval('\"{secuencia}\"', {ultimo or 1}, {'true' if ultimo else 'false'})")
        partes.append("COMMIT")
        self._con_copia = True
        return ";\n".join(partes)

    def _superusuario(self):
        (superusuario,) = self._vigia.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
        return superusuario

    def nueva_ronda(self, mundo, preparar):
        mundo.ruta = self.ruta
        if self._restaurar:
            self._vigia.execute(self._restaurar)
        if not getattr(self, "_con_copia", False):
            preparar(mundo)

    def fin_de_ronda(self, mundo):
        pass

    def observador(self, mundo):
        return _ComoSqlite(self._vigia)

    def preparar_conexion(self, real):
        # Lo que se explora es el orden de las transacciones, no una caída del servidor: el COMMIT
        # no espera al disco (READ COMMITTED y los cerrojos no cambian por esto).
        real.execute("SET synchronous_commit = off")
        return real

    def conexion_del_actor(self, actor, abrir, ruta):
        real = self._guardadas.pop(actor, None)
        if real is None or real.closed:
            real = self.preparar_conexion(abrir(ruta))
        return real

    def devolver(self, actor, real):
        if real.closed:
            return
        if real.info.transaction_status != 0:  # no debería: cada transacción acaba en su paso
            real.rollback()
        self._guardadas[actor] = real

    def _cerrar_guardadas(self):
        for real in self._guardadas.values():
            real.close()
        self._guardadas.clear()

    def adaptar(self, sql):
        # Las variantes ingenuas se escriben una vez, con los «?» de sqlite3; psycopg quiere «%s».
        return sql.replace("?", "%s") if "?" in sql and "%s" not in sql else sql

    def sentencia(self, actor, ejecutar, sql):
        """Ejecuta una sentencia del hilo de `actor`. Si espera un cerrojo, lo ve el explorador
        (`bloqueadores`) mientras tanto; al volver, el actor espera su permiso para seguir."""
        actor.en_sentencia = True
        error = resultado = None
        try:
            resultado = ejecutar()
        except BaseException as excepcion:  # noqa: BLE001 — se relanza abajo
            error = excepcion
        with actor.cond:
            actor.en_sentencia = False
            actor.progreso += 1
            if actor.estado == ESPERANDO:  # el explorador vio que esperábamos: ahora, su permiso
                actor.estado = DESPIERTO
                actor.cond.notify_all()
                actor.esperar_turno_sin_soltar()
        if error is not None:
            raise error
        return resultado

    def bloqueadores(self, actor):
        """Los pid que hacen esperar a `actor`, o None si no espera ningún cerrojo."""
        fila = self._vigia.execute(
            "SELECT wait_event_type = 'Lock', pg_blocking_pids(pid) FROM pg_stat_activity WHERE pid = %s",
            (actor.pid,)).fetchone()
        if fila is None or not fila[0] or not fila[1]:
            return None
        return tuple(fila[1])

    def a_quien(self, actor, actores):
        """«espera a A, que …»: a quién espera `actor`, según pg_blocking_pids."""
        por_pid = {a.pid: a.nombre for a in actores if a.pid is not None}
        nombres = sorted({por_pid.get(pid, "otra conexión") for pid in getattr(actor, "esperando_a", ())})
        return f"espera a {' y '.join(nombres)}, que aún no ha{'n' if len(nombres) > 1 else ''} confirmado"

    def puede_seguir(self, actor, ronda):
        """Si `actor` ya no espera ningún cerrojo y su sentencia ha vuelto."""
        limite = time.monotonic() + ESPERA_MAXIMA_S
        while True:
            with ronda.cond:
                if actor.estado == DESPIERTO:
                    return True
            quienes = self.bloqueadores(actor)
            if quienes:
                actor.esperando_a = quienes
                return False
            # Ya no espera ningún cerrojo, pero su sentencia aún no ha vuelto: cuestión de instantes.
            with ronda.cond:
                ronda.cond.wait_for(lambda: actor.estado == DESPIERTO, timeout=SONDEO_S)
            if time.monotonic() > limite:
                raise RuntimeError(f"{actor.nombre} dejó de esperar y su sentencia no vuelve.")

    def cerrar_en_el_hilo(self, actor):
        pass  # sus conexiones se guardan para el intercalado siguiente (`devolver_conexiones`)

    def devolver_conexiones(self, actor):
        """Guarda las conexiones de `actor` (la suya y las que abrió un paso) para el siguiente."""
        for clave, real in actor.propias:
            self.devolver(clave, real)
        if actor.guardada is not None:
            self.devolver(actor.nombre, actor.guardada)


class _ComoSqlite:
    """El observador en PostgreSQL con la forma que esperan los escenarios: «?» en vez de «%s».

    Sus BEGIN y COMMIT no hacen falta: mientras se observa, ningún actor puede confirmar (los
    demás están parados, esperando un cerrojo o esperando su turno), así que las consultas de una
    foto ven el mismo momento aunque vayan sueltas."""

    def __init__(self, bd):
        self._bd = bd

    def execute(self, sql, parametros=()):
        if sql.strip().upper() in ("BEGIN", "COMMIT"):
            return None
        return self._bd.execute(sql.replace("?", "%s"), parametros or None)

    def close(self):
        pass  # es la conexión del motor: la cierra él


# --- Cada actor, en su hilo ----------------------------------------------------------------------

# Cómo está cada actor: esperando su turno, con él, esperando un cerrojo, con el cerrojo ya
# concedido (a la espera de que el explorador le deje seguir), sin más pasos, o parado para siempre.
INICIANDO, LISTO, CORRIENDO, ESPERANDO, DESPIERTO, ACABADO, CANCELADO = (
    "iniciando", "listo", "corriendo", "esperando", "despierto", "acabado", "cancelado")


class _Cancelado(BaseException):
    """El explorador ya no dará más turnos a este hilo (solo si algo salió mal)."""


class _Conexion:
    """La conexión de un actor: todo va a la de verdad, pero el actor se para antes del COMMIT de un
    paso partido y anota cuándo espera un cerrojo."""

    def __init__(self, real, actor):
        self._real = real
        self._actor = actor
        actor.pid = getattr(getattr(real, "info", None), "backend_pid", None)

    def __getattr__(self, nombre):
        return getattr(self._real, nombre)

    def execute(self, sql, *argumentos, **opciones):
        sql = self._actor.motor.adaptar(sql)
        if COMMIT.match(sql):
            self._actor.antes_de_confirmar()
        resultado = self._actor.sentencia(lambda: self._real.execute(sql, *argumentos, **opciones), sql)
        if BEGIN_DE_ESCRITURA.match(sql):
            self._actor.escribiendo = True
        elif FIN_DE_TRANSACCION.match(sql):
            self._actor.escribiendo = False
        return resultado

    @contextmanager
    def transaction(self, *argumentos, **opciones):
        """La de psycopg, con la parada antes de confirmar (si el bloque acaba sin excepción)."""
        with self._real.transaction(*argumentos, **opciones) as transaccion:
            yield transaccion
            self._actor.antes_de_confirmar()

    def close(self):
        self._actor.escribiendo = False  # SQLite: cerrar suelta el turno de escritura
        self._real.close()


class _Actor:
    """Un actor en su hilo: espera su turno, hace su paso (o lo sigue) y dice cómo le fue."""

    def __init__(self, nombre, pasos, ronda):
        self.nombre = nombre
        self.pasos = pasos
        self.motor = ronda.motor
        self.cond = ronda.cond
        self.mundo = ronda.mundo
        self.estado = INICIANDO
        self.informe = None          # (resultado, error) del último turno
        self.partir = self.parado = False
        self.caido = False
        self.escribiendo = False     # SQLite: tiene el turno de escritura (BEGIN IMMEDIATE)
        self.en_sentencia = False
        self.pid = self.guardada = None  # PostgreSQL: el pid de su conexión; la que se guarda
        self.propias = []            # (clave, conexión) de las que abre un paso (al reiniciar)
        self.diferidos = deque()     # los turnos que le tocaron mientras esperaba
        self.en_curso = None         # el nombre del paso que está haciendo
        self.progreso = 0            # sentencias hechas: si no cambia, no ha avanzado
        self.fallo = None
        self.bitacora = Bitacora()   # lo que lee y escribe, hasta que el explorador lo recoge
        self.hilo = threading.Thread(target=self._correr, name=f"carreras-{nombre}", daemon=True)

    # En el hilo del actor --------------------------------------------------------------------

    def _correr(self):
        _local.actor = self
        try:
            abrir = self.mundo.funcion_sin_envolver(self.mundo.abrir)
            real = self.guardada = self.motor.conexion_del_actor(self.nombre, abrir, self.mundo.ruta)
            self.mundo.conexiones[self.nombre] = _Conexion(ConexionQueAnota(real, self.bitacora), self)
            self._listo(None)
            for i, paso in enumerate(self.pasos):
                if paso.hacer is CONFIRMA:
                    continue
                self._esperar_turno()
                self.partir = i + 1 < len(self.pasos) and self.pasos[i + 1].hacer is CONFIRMA
                self.parado = False
                try:
                    informe = (str(paso.hacer(self.mundo)), None)
                except Exception as excepcion:  # noqa: BLE001 — se anota, como en explorar()
                    informe = (None, f"{type(excepcion).__name__}: {excepcion}")
                    self.caido = True
                self.partir = False
                self._listo(informe, ultimo=self.caido or i == max(
                    j for j, p in enumerate(self.pasos) if p.hacer is not CONFIRMA))
                if self.caido:
                    return
        except _Cancelado:
            pass
        except BaseException as excepcion:  # noqa: BLE001 — lo dice el explorador
            self.fallo = excepcion
            with self.cond:
                self.estado = ACABADO
                self.cond.notify_all()
        finally:
            self.motor.cerrar_en_el_hilo(self)

    def _listo(self, informe, ultimo=False):
        with self.cond:
            self.informe = informe
            self.estado = ACABADO if ultimo else LISTO
            self.cond.notify_all()

    def _esperar_turno(self):
        with self.cond:
            self.esperar_turno_sin_soltar()

    def antes_de_confirmar(self):
        """Llamada justo antes del COMMIT: en un paso partido, la primera vez, se para aquí."""
        if self.partir and not self.parado:
            self.parado = True
            self._listo(("hecho, sin confirmar", None))
            self._esperar_turno()

    def sentencia(self, ejecutar, sql):
        """Una sentencia de este actor: cómo se espera un cerrojo lo sabe su motor."""
        return self.motor.sentencia(self, ejecutar, sql)

    def esperar_turno_sin_soltar(self):
        """Espera el turno con `self.cond` ya cogido (wait lo suelta mientras espera)."""
        while self.estado != CORRIENDO:
            if self.estado == CANCELADO:
                raise _Cancelado()
            self.cond.wait()


_local = threading.local()


@contextmanager
def sin_parar():
    """Dentro de un paso partido, lo que no debe pararse antes de su COMMIT (p. ej. `recibir`
    antes de `admitir`): la parada queda para la transacción siguiente."""
    actor = getattr(_local, "actor", None)
    partir = actor is not None and actor.partir
    if actor is not None:
        actor.partir = False
    try:
        yield
    finally:
        if actor is not None:
            actor.partir = partir


class _MundoEnParalelo(Mundo):
    """El mundo de un intercalado: en el hilo de un actor, abrir una conexión da una que se para."""

    def funcion_sin_envolver(self, nombre):
        if callable(nombre):  # el escenario dice cómo encontrarla a partir del módulo
            return nombre(self.modulo)
        return Mundo.funcion(self, nombre)

    def funcion(self, nombre):
        original = Mundo.funcion(self, nombre)
        actor = getattr(_local, "actor", None)
        if nombre != self.abrir or actor is None:
            return original

        @functools.wraps(original)
        def abrir_y_envolver(ruta):
            clave = f"{actor.nombre}, reinicio {len(actor.propias) + 1}"
            real = actor.motor.conexion_del_actor(clave, original, ruta)
            actor.propias.append((clave, real))
            return _Conexion(ConexionQueAnota(real, actor.bitacora), actor)
        return abrir_y_envolver


# --- Explorar ------------------------------------------------------------------------------------

def explorar_en_paralelo(escenario, variante="correcta", *, motor, modulo=None, hasta_el_primer_fallo=False,
                         al_avanzar=None):
    """Recorre cada intercalado de `escenario` con `variante` en `motor` (EnSqlite() o
    EnPostgres(conexion)), cada actor con su hilo y su conexión. Devuelve una `Exploracion`.

    `modulo`: el código a probar (por defecto, el del escenario para ese motor).
    `hasta_el_primer_fallo`: para en el primer intercalado que rompe alguna invariante (para los
    tests que solo quieren saber si un escenario pilla a una variante); la exploración queda
    entonces incompleta: sus totales no son los del escenario. `al_avanzar(hechos, total)`: tras
    cada intercalado (ver `explorador.recorrer_intercalados`)."""
    return recorrer_intercalados(escenario, variante, motor=motor, modulo=modulo,
                                 hasta_el_primer_fallo=hasta_el_primer_fallo, al_avanzar=al_avanzar)


class _Ronda:
    """Un intercalado: los hilos de los actores, el orden de sus turnos y lo que se anota."""

    def __init__(self, escenario, motor, mundo):
        self.escenario = escenario
        self.motor = motor
        self.mundo = mundo
        self.cond = threading.Condition()
        self.eventos = []
        mundo.conexiones["observador"] = motor.observador(mundo)
        self.actores = {nombre: _Actor(nombre, list(pasos), self) for nombre, pasos in escenario.actores.items()}
        for actor in self.actores.values():
            actor.hilo.start()
        for actor in self.actores.values():
            self._esperar(actor, lambda a: a.estado != INICIANDO)
            if actor.fallo is not None:
                raise actor.fallo

    def recorrer(self, orden):
        for paso in orden:
            actor = self.actores[paso.actor]
            if actor.estado in (ESPERANDO, DESPIERTO) or actor.diferidos:
                actor.diferidos.append(paso)
                continue
            self._turno(actor, paso)
            self._despertar()
        limite = time.monotonic() + ESPERA_MAXIMA_S
        while any(a.estado in (ESPERANDO, DESPIERTO) or a.diferidos for a in self.actores.values()):
            # Todos los que quedan esperan: un abrazo mortal, que PostgreSQL deshace abortando a uno.
            if time.monotonic() > limite:
                raise RuntimeError("Los actores se esperan unos a otros y nadie lo deshace.")
            time.sleep(SONDEO_S * 10)
            self._despertar()
        return self.eventos

    def cerrar(self):
        with self.cond:
            for actor in self.actores.values():
                if actor.estado != ACABADO:
                    actor.estado = CANCELADO
            self.cond.notify_all()
        for actor in self.actores.values():
            actor.hilo.join(ESPERA_MAXIMA_S)
        observador = self.mundo.conexiones.pop("observador", None)
        if observador is not None:
            observador.close()
        for actor in self.actores.values():
            self.mundo.conexiones.pop(actor.nombre, None)
            self.motor.devolver_conexiones(actor)

    # Turnos -----------------------------------------------------------------------------------

    def _turno(self, actor, paso):
        if actor.caido or actor.estado == ACABADO and paso.hacer is not CONFIRMA:
            return self._anotar(actor, paso.nombre, "no llega a ocurrir")
        if paso.hacer is CONFIRMA:
            if actor.caido:
                return self._anotar(actor, paso.nombre, "no llega a ocurrir")
            if not actor.parado or actor.estado == ACABADO or actor.informe != ("hecho, sin confirmar", None):
                return self._anotar(actor, paso.nombre, "nada que confirmar")
        actor.en_curso = paso.nombre
        self._dar_paso(actor)
        self._anotar_turno(actor, paso.nombre)

    def _dar_paso(self, actor):
        with self.cond:
            actor.estado = CORRIENDO
            self.cond.notify_all()
        self._asentar(actor)

    def _asentar(self, actor):
        """Espera a que `actor` acabe su turno, se pare o se quede esperando un cerrojo."""
        limite = time.monotonic() + ESPERA_MAXIMA_S
        while True:
            with self.cond:
                self.cond.wait_for(lambda: actor.estado != CORRIENDO, timeout=SONDEO_S)
                if actor.estado != CORRIENDO:
                    return
                en_sentencia = actor.en_sentencia
            if en_sentencia:  # solo en PostgreSQL: en SQLite la espera la dice la excepción
                quienes = self.motor.bloqueadores(actor)
                if quienes:
                    with self.cond:
                        if actor.estado == CORRIENDO and actor.en_sentencia:
                            actor.estado = ESPERANDO
                            actor.esperando_a = quienes
                            return
            if actor.fallo is not None:
                raise actor.fallo
            if time.monotonic() > limite:
                raise RuntimeError(f"{actor.nombre} ni acaba su paso ni espera un cerrojo.")

    def _anotar_turno(self, actor, nombre):
        if actor.fallo is not None:
            raise actor.fallo
        if actor.estado == ESPERANDO:
            actor.bitacora.esperando()  # la sentencia que espera (en SQLite la apuntó su conexión)
            return self._anotar(actor, nombre, self.motor.a_quien(actor, self.actores.values()))
        resultado, error = actor.informe
        self._anotar(actor, nombre, f"error: {error}" if error else resultado, error)

    def _anotar(self, actor, paso, resultado, error=None):
        self.eventos.append(Evento(len(self.eventos) + 1, actor.nombre, paso, resultado, error,
                                   self.escenario.observar(self.mundo), actor.bitacora.sacar()))

    def _despertar(self):
        """Tras cada turno: quien esperaba un cerrojo que ya se soltó sigue, y hace lo que se le guardó."""
        cambio = True
        while cambio:
            cambio = False
            for actor in self.actores.values():
                if actor.estado in (ESPERANDO, DESPIERTO) and self.motor.puede_seguir(actor, self):
                    antes = actor.progreso
                    self._dar_paso(actor)
                    if actor.estado == ESPERANDO and actor.progreso == antes:
                        continue  # SQLite: alguien volvió a coger el turno de escritura
                    self._anotar_turno(actor, f"{actor.en_curso} (tras esperar)")
                    cambio = True
                while actor.diferidos and actor.estado not in (ESPERANDO, DESPIERTO):
                    self._turno(actor, actor.diferidos.popleft())
                    cambio = True

    def _esperar(self, actor, condicion):
        with self.cond:
            if not self.cond.wait_for(lambda: condicion(actor), timeout=ESPERA_MAXIMA_S):
                raise RuntimeError(f"{actor.nombre} no arranca.")


# --- Lo que usan el cuaderno de la lección 07 y los tests --------------------------------------

def explorar_en_postgres(escenario, variante="correcta", modulo=None, *, conexion=None,
                         hasta_el_primer_fallo=False, al_avanzar=None):
    """`explorar_en_paralelo` en el PostgreSQL de `conexion` (por defecto, el de CURSO_POSTGRES),
    en un esquema propio que se borra al acabar. Con la misma firma que `explorar` (escenario,
    variante, modulo), para el widget: `functools.partial(explorar_en_postgres, conexion=...)`."""
    if conexion is None:
        from curso.postgres.cluster import VARIABLE_DE_CONEXION
        conexion = os.environ.get(VARIABLE_DE_CONEXION)
        if not conexion:
            raise ValueError("Falta el servidor: pasa conexion=... (la cadena que da `python -m curso "
                             f"postgres`) o pon la cadena en la variable {VARIABLE_DE_CONEXION}.")
    return explorar_en_paralelo(escenario, variante, motor=EnPostgres(conexion), modulo=modulo,
                                hasta_el_primer_fallo=hasta_el_primer_fallo, al_avanzar=al_avanzar)


def explorar_en_sqlite(escenario, variante="correcta", modulo=None, *, hasta_el_primer_fallo=False,
                       al_avanzar=None):
    """`explorar_en_paralelo` en SQLite: los mismos hilos, las mismas paradas antes del COMMIT."""
    return explorar_en_paralelo(escenario, variante, motor=EnSqlite(), modulo=modulo,
                                hasta_el_primer_fallo=hasta_el_primer_fallo, al_avanzar=al_avanzar)
