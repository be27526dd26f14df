"""Lo que cuentan las celdas de la lección 08 sin lanzar DBOS (curso/material/dbos_08.py): las líneas de
código de la durabilidad y la url de la base del sistema en PostgreSQL."""
from curso import rutas
from curso.material import dbos_08

MODULO = '''"""Un docstring
de dos líneas."""
import os  # un comentario al final cuenta: la línea es código

# un comentario suelto


def f(x):
    """Otro docstring."""
    return os.sep + x


class C:
    """Y otro."""
    y = 1
'''


def test_las_lineas_de_codigo_no_cuentan_docstrings_comentarios_ni_vacias(tmp_path):
    fichero = tmp_path / "m.py"
    fichero.write_text(MODULO, encoding="utf-8")
    assert dbos_08.lineas(fichero) == 5  # import, def, return, class, y = 1
    assert sum(1 for linea in MODULO.splitlines() if linea.strip()) == 10  # la cuenta ingenua


def test_las_lineas_de_cada_leccion_se_leen_en_su_punto_de_control():
    cuentas = dbos_08.lineas_de_codigo(rutas.puntos_de_control())
    assert set(cuentas) == {"04", "06", "08"}
    assert set(cuentas["08"]) == set(rutas.LECCIONES[8]["ficheros"])
    assert all(n > 0 for ficheros in cuentas.values() for n in ficheros.values())


def test_la_url_de_dbos_es_la_del_servidor_con_otra_base():
    conexion = "postgresql://postgres:clave@127.0.0.1:5433/postgres"
    assert dbos_08.url_de_dbos(conexion, "dbos_x") == "postgresql://postgres:clave@127.0.0.1:5433/dbos_x"
    assert dbos_08.url_de_dbos("user=yo password=c host=127.0.0.1 port=6000 dbname=postgres", "d") == \
        "postgresql://yo:c@127.0.0.1:6000/d"
