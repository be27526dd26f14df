"""El motor (motor.py): la configuración de DBOS del curso, sin red y con lo guardado en JSON."""
import motor
from dbos import DBOSPortableJSONSerializer


def test_la_configuracion_no_pide_nada_de_fuera():
    config = motor.configuracion(motor.url_sqlite("/tmp/e/dbos.sqlite"))
    assert config["enable_otlp"] is False
    assert not any(clave.startswith("conductor") or clave.startswith("otlp") for clave in config)
    assert config["system_database_url"] == "sqlite:////tmp/e/dbos.sqlite"


def test_lo_que_guarda_dbos_va_en_json_y_la_version_solo_si_se_da():
    config = motor.configuracion("sqlite:///x.sqlite")
    assert isinstance(config["serializer"], DBOSPortableJSONSerializer)
    assert "application_version" not in config  # sin ella, DBOS la calcula del código de los workflows
    assert motor.configuracion("sqlite:///x.sqlite", version="1")["application_version"] == "1"


def test_cada_proceso_dice_su_ejecutor():
    assert motor.configuracion("sqlite:///x.sqlite")["executor_id"] == motor.EJECUTOR == "local"
    assert motor.configuracion("sqlite:///x.sqlite", "trabajador-2")["executor_id"] == "trabajador-2"
