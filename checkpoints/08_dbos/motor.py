"""El motor: DBOS Transact configurado para el curso, sin red, con su base en SQLite o en PostgreSQL.

Lección 08. DBOS guarda el estado de cada workflow y la salida de cada paso en su *base del sistema*
(`system_database_url`): un fichero SQLite si no se dice otra cosa, o un PostgreSQL para varios
procesos (el de la lección 07). Todo lo demás corre dentro de este proceso: no hay servidor aparte.

Lo que se apaga, y por qué basta con no pedirlo (leído en el código de dbos 3.4.0):

- la telemetría OTLP: `enable_otlp` vale False si no se da (`_dbos_config.py`), y sus paquetes
  (`dbos[otel]`) ni siquiera están instalados;
- Conductor, la consola en la nube: solo se conecta con una `conductor_key` (`_dbos.py`, `_launch`).
  Sin ella, DBOS solo escribe en su registro una línea con la dirección de la consola, sin conectar;
- el servidor de administración (el puerto 3001 de versiones anteriores): dbos 3.4.0 ya no lo trae.

Lo que DBOS guarda (la entrada de cada workflow, la salida de cada paso, los mensajes) va en JSON
(`DBOSPortableJSONSerializer`) y no con pickle, el formato por defecto: así la base del sistema se
lee con `sqlite3` o `psql` sin Python, y ningún paso puede devolver algo que no sea JSON.

`ejecutor` es el `executor_id`: cada workflow queda marcado con el del proceso que lo empezó, y al
arrancar DBOS recupera solo los pendientes de su propio ejecutor (y de su versión de la aplicación).
"""
from pathlib import Path

from dbos import DBOS, DBOSPortableJSONSerializer

# La carpeta de la ejecución de este proceso: los workflows solo reciben rutas relativas a ella
# ("copia", "vistas/logs"), y la pone quien lanza DBOS, como la url del modelo. Así una ejecución
# preparada se puede copiar a otra carpeta, y su entrada guardada no dice dónde estaba.
CARPETA = Path(".")
NOMBRE = "construye-tu-agente"  # el nombre de la aplicación en la base del sistema
EJECUTOR = "local"  # el de DBOS si no se dice otro


def url_sqlite(ruta):
    """La `system_database_url` de un fichero SQLite."""
    return f"sqlite:///{ruta}"


def configuracion(base, ejecutor=EJECUTOR, version=None):
    """La configuración de DBOS para el curso: `base` es la url de la base del sistema.

    `version` es la `application_version`; sin ella, DBOS la calcula con un hash del código de
    los workflows registrados (ver el cuaderno: cambiar un workflow cambia la versión)."""
    config = {"name": NOMBRE, "system_database_url": base, "executor_id": ejecutor,
              "enable_otlp": False, "log_level": "WARNING", "serializer": DBOSPortableJSONSerializer()}
    if version is not None:
        config["application_version"] = version
    return config


def arrancar(base, ejecutor=EJECUTOR, version=None):
    """Crea DBOS con la configuración del curso y lo lanza. Al lanzarse, DBOS pone en cola
    de recuperación los workflows pendientes de este ejecutor y esta versión."""
    DBOS(config=configuracion(base, ejecutor, version))
    DBOS.launch()


def parar():
    """Para DBOS y suelta su base (sus hilos y sus conexiones)."""
    DBOS.destroy(destroy_registry=False)
