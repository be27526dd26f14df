"""Un almacén de resúmenes y buzón, en SQLite o en PostgreSQL, con las mismas funciones.

Los tests del contrato reciben la fixture `almacen` (parametrizada: "sqlite" y "postgres") y
llaman a las funciones del módulo sin la conexión: `almacen.instalar(EJECUCION, base, 4, candidato)`
es `resumenes.instalar(bd, …)` o `resumenes_pg.instalar(bd, …)`. Así el mismo test corre sobre
los dos, y una diferencia de comportamiento es un test que falla.

Para mirar la base sin pasar por el código que se prueba, `almacen.filas(sql, *parametros)` (el
SQL con «?», que en PostgreSQL se pasa a «%s») y `almacen.volcado()` (todas las filas de todas
las tablas, para comprobar que un rechazo no cambió nada).
"""
import functools
import sqlite3

import psycopg
import pytest

import buzon
import buzon_pg
import historial
import historial_pg
import resumenes
import resumenes_pg
from curso.postgres.fixtures import esquema_postgres, postgres  # noqa: F401  (las fixtures de PostgreSQL)

# Las funciones de los módulos que reciben la conexión como primer argumento.
CON_CONEXION = {
    "transaccion", "crear_ejecucion", "anotar", "activo", "instalar", "validar_candidato", "mover_puntero",
    "contexto", "crear_esquema", "crear_padre", "recibir", "admitir", "activar_si_estan_todos", "pendientes",
    "estado", "mensajes", "terminar",
}
# Cada tabla con su orden, para que el volcado no dependa del orden en que se guardaron las filas.
TABLAS = {"ejecuciones": "id", "historial": "ejecucion, seq", "resumenes": "id", "hijos_esperados": "padre, hijo",
          "buzon": "entrega", "mensajes": "padre, seq"}


class Almacen:
    """`motor` es "sqlite" o "postgres"; `destino`, la ruta del fichero o la cadena de conexión."""

    def __init__(self, motor, destino):
        self.motor = motor
        self.destino = destino
        self.resumenes = resumenes_pg if motor == "postgres" else resumenes
        # abrir, crear_ejecucion, anotar y transaccion son de historial.py (o de historial_pg.py).
        self.historial = historial_pg if motor == "postgres" else historial
        self.buzon = buzon_pg if motor == "postgres" else buzon
        self.ErrorDeIntegridad = psycopg.IntegrityError if motor == "postgres" else sqlite3.IntegrityError
        self.conexion = None
        self._abiertas = []

    def __repr__(self):
        return f"<almacén {self.motor}>"

    def __getattr__(self, nombre):
        if nombre.startswith("_"):
            raise AttributeError(nombre)
        for modulo in (self.buzon, self.historial, self.resumenes):
            if hasattr(modulo, nombre):
                valor = getattr(modulo, nombre)
                return functools.partial(valor, self.conexion) if nombre in CON_CONEXION else valor
        raise AttributeError(f"Ni {self.buzon.__name__} ni {self.historial.__name__} ni {self.resumenes.__name__} "
                             f"tienen {nombre!r}")

    # --- Conexiones

    def abrir(self, solo_resumenes=False):
        """Abre la conexión principal (con el buzón, o solo con las tablas de la lección 04)."""
        self.conexion = self.nueva(solo_resumenes)
        return self

    def nueva(self, solo_resumenes=False):
        """Otra conexión a la misma base, como la de otro proceso (se cierra al acabar el test)."""
        abrir = self.historial.abrir if solo_resumenes else self.buzon.abrir_buzon
        conexion = abrir(self.destino)
        self._abiertas.append(conexion)
        return conexion

    def reabrir(self):
        """Cierra la conexión principal y abre otra: lo que sobrevive, estaba confirmado."""
        self.conexion.close()
        return self.abrir()

    def cerrar(self):
        for conexion in self._abiertas:
            conexion.close()

    def en_transaccion(self, conexion=None):
        conexion = conexion or self.conexion
        if self.motor == "postgres":
            return conexion.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
        return conexion.in_transaction

    # --- Mirar sin pasar por el módulo

    def filas(self, sql, *parametros, conexion=None):
        if self.motor == "postgres":
            sql = sql.replace("?", "%s")
        cursor = (conexion or self.conexion).execute(sql, parametros)
        return [] if cursor.description is None else [tuple(fila) for fila in cursor.fetchall()]

    def volcado(self):
        existen = {nombre for (nombre,) in self.filas(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            if self.motor == "postgres" else "SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {tabla: self.filas(f"SELECT * FROM {tabla} ORDER BY {orden}")
                for tabla, orden in TABLAS.items() if tabla in existen}


@pytest.fixture(params=["sqlite", "postgres"])
def almacen(request, tmp_path):
    """Un almacén vacío y sin abrir: un fichero SQLite nuevo, o un esquema vacío de PostgreSQL."""
    destino = request.getfixturevalue("esquema_postgres") if request.param == "postgres" else tmp_path / "almacen.db"
    almacen = Almacen(request.param, destino)
    yield almacen
    almacen.cerrar()
