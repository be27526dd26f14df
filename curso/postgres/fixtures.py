"""Para los tests del curso y los del punto de control 07: las fixtures de pytest con PostgreSQL.

Un conftest las pone a disposición de sus tests importándolas:

    from curso.postgres.fixtures import postgres, esquema_postgres  # noqa: F401

- `postgres` (una por sesión): la cadena de conexión de un servidor. El de CURSO_POSTGRES si
  está; si no, un cluster de usar y tirar (`curso.postgres.cluster.ClusterTemporal`) que se para y se
  borra al acabar la sesión.
- `esquema_postgres` (una por test): la cadena de conexión de un esquema nuevo y vacío de ese
  servidor, que se borra al acabar el test.

Sin PostgreSQL, los tests que las piden se saltan diciendo cómo conseguirlo; en CI (la variable
`CI`), fallan: allí tienen que correr.
"""
import os
from contextlib import ExitStack

import pytest

from curso.postgres.cluster import VARIABLE_DE_CONEXION, FaltaPostgres, esquema_de_prueba, servidor_de_pruebas


def sin_postgres(motivo):
    """Salta el test por `motivo`; en CI lo hace fallar (allí PostgreSQL tiene que estar)."""
    if os.environ.get("CI"):
        pytest.fail(f"En CI los tests de PostgreSQL tienen que correr, pero: {motivo}", pytrace=False)
    pytest.skip(motivo)


@pytest.fixture(scope="session")
def postgres():
    """La cadena de conexión de un servidor PostgreSQL para toda la sesión de tests."""
    with ExitStack() as pila:
        try:
            conexion = pila.enter_context(servidor_de_pruebas())
        except FaltaPostgres as error:
            sin_postgres(str(error))
        _exigir_que_responda(conexion)
        yield conexion


def _exigir_que_responda(conexion):
    import psycopg

    try:
        psycopg.connect(conexion, connect_timeout=10).close()
    except psycopg.OperationalError as error:
        origen = f"el de {VARIABLE_DE_CONEXION}" if os.environ.get(VARIABLE_DE_CONEXION) else "el recién arrancado"
        pytest.fail(f"El servidor PostgreSQL ({origen}) no acepta conexiones: {error}", pytrace=False)


@pytest.fixture
def esquema_postgres(postgres):
    """La cadena de conexión de un esquema vacío, solo para este test."""
    with esquema_de_prueba(postgres) as conexion:
        yield conexion
