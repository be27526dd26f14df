"""La ejecución de la lección 06 sin caídas, en este proceso, y `reanudar` ante lo que no puede hacer.

Un padre y dos hijos sobre el incidente, por HTTP de verdad contra un servidor de ensayo en
127.0.0.1. Lo que se comprueba aquí lo calcula el propio test a partir de la base (la
integración por evidencia, las huellas...), no cifras copiadas de una ejecución.
"""
import errno
import fcntl
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

import pytest

import agentes
import buzon
import registro
import subagentes
from curso.material.incidente import concluir, encargos_del_incidente
import todo_junto
from api import ModeloAPI
from ayudas_06 import INCIDENTE, carpeta_en_memoria, foto, huella_de, informe, pasos_de, servidor_que_cuenta
import reanudar as reanudar_
from reanudar import NoSePuede, cerrojo, comprobar, reanudar


@pytest.fixture(scope="module")
def ejecucion():
    """(ruta de la base, foto, resultado de reanudar, contador) de una ejecución entera sin caídas."""
    with carpeta_en_memoria() as carpeta, servidor_que_cuenta() as (url, contador):
        ruta = todo_junto.preparar(carpeta / "e", INCIDENTE)
        hecho = reanudar(ruta, lambda nombre: ModeloAPI(nombre, url=url))
        yield ruta, foto(ruta), hecho, contador


def test_el_hijo_logs_lleva_el_encargo_de_la_leccion_05():
    """todo_junto.py no importa el curso: el encargo del hijo «logs» lo escribe él, y tiene que ser
    el de la lección 05 (el mismo guion del servidor lo contesta)."""
    import encargos
    assert todo_junto.encargos()["logs"] == encargos_del_incidente(encargos)["logs"]


def test_la_ejecucion_termina_con_el_informe_del_padre(ejecucion):
    _, f, hecho, _ = ejecucion
    assert hecho["estado"] == "completada" and hecho["vida"] == 1
    assert hecho["informe"] == informe(f)
    assert ("incidente", "completada", 2) in f["estados"]


def test_el_informe_dice_lo_que_la_evidencia_respalda_y_nada_de_lo_descartado(ejecucion):
    ruta, f, hecho, _ = ejecucion
    bd = sqlite3.connect(ruta)
    try:  # la integración de la lección 05, recalculada aquí sobre las entregas admitidas
        entregas = [json.loads(c) for (c,) in bd.execute("SELECT carga FROM mensajes ORDER BY seq")]
    finally:
        bd.close()
    copia = ruta.parent / "copia"
    verificados, descartados = [], []
    for carga in entregas:
        buenos, malos = subagentes.verificar(carga, copia)
        verificados += buenos
        descartados += malos
    assert verificados and descartados
    assert concluir(verificados) in hecho["informe"]
    for fila in verificados:
        assert fila["hallazgo"] in hecho["informe"]
    for fila in descartados:
        assert fila["hallazgo"] not in hecho["informe"]


def contradicciones(informe):
    """Las dudas de un hijo que el informe da por pendientes aunque da por comprobado lo que las
    contesta: el puerto en que escucha la base (de config/) y al que conecta la API (de logs/)."""
    comprobado = informe.split("Comprobado en los ficheros:")[1].split("\n\n")[0]
    pendiente = informe.split("Queda por comprobar:")[1].split("\n\n")[0]
    return [duda for duda, carpeta in (("en qué puerto escucha", "config/"),
                                       ("a qué puerto intenta conectar la API", "logs/"))
            if re.search(rf"puerto \d+.*\[{carpeta}", comprobado) and duda in pendiente]


def test_el_informe_no_da_por_pendiente_lo_que_da_por_comprobado(ejecucion):
    _, _, hecho, _ = ejecucion
    assert contradicciones(hecho["informe"]) == []


def test_un_informe_que_copia_las_dudas_de_cada_hijo_se_contradice(ejecucion):
    """La variante ingenua del padre: copiar tal cual las dudas de sus hijos en lo pendiente (cada
    uno solo veía sus recursos). El test de arriba la detectaría."""
    _, _, hecho, _ = ejecucion
    cabeza, resueltas = hecho["informe"].split("\n\nLo que un hijo no podía ver lo ha comprobado el otro:\n")
    copiadas = [re.match(r"- «(.*)»: contestado en ", linea).group(1) for linea in resueltas.split("\n")]
    ingenuo = cabeza + "".join(f"\n- {duda}" for duda in copiadas)
    assert len(contradicciones(ingenuo)) == 2


def test_cada_entrega_se_admite_una_vez_y_el_padre_se_activa_con_las_dos(ejecucion):
    _, f, _, _ = ejecucion
    assert [(e, d) for e, _, _, d, _ in f["buzon"]] == [("incidente/config/1", "admitida"),
                                                         ("incidente/logs/1", "admitida")]
    assert sorted(e for _, _, e in f["trayectoria"]) == ["incidente/config/1", "incidente/logs/1"]
    assert [s for _, s, _ in f["trayectoria"]] == [1, 2]
    assert ("incidente", "completada", 2) in f["estados"]  # activado una vez (1) y terminado (2)


def test_el_hijo_que_escribe_edita_el_fichero_una_sola_vez(ejecucion):
    _, f, _, _ = ejecucion
    antes = (INCIDENTE / "README.md").read_text(encoding="utf-8")
    despues = f["copia"]["README.md"].decode("utf-8")
    (editar,) = [fila for fila in f["llamadas"] if fila[2] == "editar"]
    entrada = json.loads(editar[3])
    assert despues == antes.replace(entrada["antiguo"], entrada["nuevo"], 1)
    assert despues.count(entrada["nuevo"]) == 1
    assert json.loads(editar[7])["content"] == editar[6]  # el resultado es el que se esperaba
    otros = {k: v for k, v in f["copia"].items() if k != "README.md"}
    assert otros == {p.relative_to(INCIDENTE).as_posix(): p.read_bytes()
                     for p in sorted(INCIDENTE.rglob("*")) if p.is_file() and p.name != "README.md"}


def test_solo_las_llamadas_con_efectos_se_apuntan_como_intencion(ejecucion):
    _, f, _, _ = ejecucion
    pedidas = [b for historial in f["historiales"].values() for rol, contenido in historial
               if rol == "asistente" for b in contenido if b["type"] == "tool_use"]
    assert {b["name"] for b in pedidas} == {"leer", "buscar", "ejecutar", "editar"}
    assert [fila[2] for fila in f["llamadas"]] == ["editar"]  # ejecutar se niega: no llega a ejecutarse


def test_el_hijo_de_la_configuracion_compacta_de_forma_durable(ejecucion):
    ruta, f, _, _ = ejecucion
    resumenes_de = [fila for fila in f["resumenes"] if fila[0] == "config"]
    assert resumenes_de, "con el umbral del simulacro, el hijo de la configuración compacta"
    bd = registro.abrir(ruta)
    try:
        (agente,) = [a for a in registro.agentes(bd) if a["id"] == "config"]
        M = agentes.M_de(bd, agente)
    finally:
        bd.close()
    assert len(M) < len(agente["inicio"]) + len(f["historiales"]["config"])  # la M reconstruida es más corta


def test_cada_paso_lleva_su_clase_y_su_agente(ejecucion):
    ruta, _, _, contador = ejecucion
    bd = sqlite3.connect(ruta)
    try:
        pasos = bd.execute("SELECT clase, agente, detalle FROM pasos ORDER BY n").fetchall()
    finally:
        bd.close()
    assert "otro" not in {c for c, _, _ in pasos}
    peticiones = [json.loads(d) for c, _, d in pasos if c == "peticion"]
    assert len(peticiones) == len(contador.peticiones)  # una petición apuntada por cada una hecha
    assert [p["usage"] for p in peticiones] == [u for _, u in contador.peticiones]


# --- Lo que reanudar no puede hacer: un mensaje claro, y nada cambia ------------------------------

ESPANOL = re.compile(r"^(No|La|Esta|El|Ya)\b.*[.:]")


def rechazo(ruta, carpeta):
    antes = huella_de(carpeta)
    with pytest.raises(NoSePuede) as error:
        reanudar(ruta, lambda nombre: pytest.fail("no debía pedir nada al modelo"))
    assert huella_de(carpeta) == antes, "un rechazo no cambia nada"
    assert ESPANOL.match(str(error.value)), str(error.value)
    return str(error.value)


def test_reanudar_una_ejecucion_terminada_no_cambia_nada(ejecucion):
    ruta, _, _, _ = ejecucion
    assert "ya terminó" in rechazo(ruta, ruta.parent)


def test_reanudar_un_fichero_que_no_existe_no_lo_crea(tmp_path):
    assert "No existe el fichero" in rechazo(tmp_path / "no_esta.db", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_reanudar_un_fichero_que_no_es_una_base(tmp_path):
    (tmp_path / "notas.db").write_text("esto es texto\n" * 50, encoding="utf-8")
    assert "no es una base de SQLite" in rechazo(tmp_path / "notas.db", tmp_path)


def test_reanudar_la_base_de_otra_leccion(tmp_path):
    bd = buzon.abrir_buzon(tmp_path / "buzon.db")  # una base de la lección 05
    buzon.crear_padre(bd, "incidente", ["logs"])
    bd.close()
    assert "no de una ejecución de la lección 06" in rechazo(tmp_path / "buzon.db", tmp_path)


def test_reanudar_la_base_de_otra_version_del_curso(tmp_path):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    bd = sqlite3.connect(ruta, isolation_level=None)
    bd.execute("UPDATE curso SET valor='construye-tu-agente/99' WHERE clave='version'")
    bd.close()
    assert "otra versión del curso" in rechazo(ruta, ruta.parent)


def test_mientras_otro_proceso_reanuda_la_misma_ejecucion_este_se_para(tmp_path):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    with cerrojo(ruta):  # «otro proceso»: el cerrojo es de flock, por descriptor abierto
        assert "ya la está reanudando" in rechazo(ruta, ruta.parent)


def test_la_misma_base_nombrada_por_un_enlace_tiene_el_mismo_cerrojo(tmp_path):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    enlace = tmp_path / "enlace.db"
    enlace.symlink_to(ruta)
    with cerrojo(ruta):
        assert "ya la está reanudando" in rechazo(enlace, ruta.parent)


def test_un_cerrojo_con_la_ruta_tal_como_llega_deja_pasar_a_otro_por_un_enlace(tmp_path):
    """La variante ingenua: el fichero del cerrojo, nombrado con la ruta tal como llega. Por el
    enlace, otro proceso toma otro cerrojo de la misma base: el test de arriba la detectaría."""
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    enlace = tmp_path / "enlace.db"
    enlace.symlink_to(ruta)
    with open(f"{ruta}.cerrojo", "a+") as uno, open(f"{enlace}.cerrojo", "a+") as otro:
        fcntl.flock(uno, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(otro, fcntl.LOCK_EX | fcntl.LOCK_NB)  # no se bloquea: son dos ficheros


def test_sin_sitio_para_las_vistas_se_dice_no_queda_ninguna_a_medias_y_se_reanuda_despues(
        tmp_path, monkeypatch, ejecucion):
    """El disco se llena mientras se copian los ficheros del hijo logs: el segundo fichero se queda
    a medias (lo que hace shutil.copyfile con un disco lleno). reanudar se para con un mensaje en
    castellano, sin vistas a medias ni nada escrito en la base, y se reanuda cuando hay sitio."""
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    antes = foto(ruta)
    copiar, copiados = shutil.copyfile, []

    def disco_lleno(origen, destino, **opciones):
        if copiados:
            with open(destino, "wb") as f:
                f.write(b"a medi")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(destino))
        copiados.append(destino)
        return copiar(origen, destino, **opciones)
    monkeypatch.setattr(shutil, "copyfile", disco_lleno)
    with pytest.raises(NoSePuede) as error:
        reanudar(ruta, lambda nombre: pytest.fail("no debía pedir nada al modelo"))
    assert "no queda sitio en el disco" in str(error.value) and "vuelve a reanudar" in str(error.value)
    assert copiados and not (ruta.parent / "vistas" / "logs").exists()
    assert not (ruta.parent / "vistas" / "logs.nueva").exists()
    assert foto(ruta) == antes and pasos_de(ruta)[-1][1] == 0  # ni una vida apuntada
    monkeypatch.undo()
    with servidor_que_cuenta() as (url, _):
        hecho = reanudar(ruta, lambda nombre: ModeloAPI(nombre, url=url))
    assert hecho["vida"] == 1 and foto(ruta) == ejecucion[1]


@pytest.mark.parametrize("variante", ["correcta", "todo_no_se_puede"])
def test_con_el_disco_lleno_reanudar_sale_a_medias_y_no_con_no_se_puede(tmp_path, monkeypatch, capsys, variante):
    """El contrato de los códigos de salida de todo_junto.py: un disco lleno se arregla liberando
    sitio, y entonces la misma orden sigue donde se quedó: 3, «a medias», como un modelo que no
    contesta. La variante ingenua trata todo NoSePuede igual y sale con 1, como si la base no fuera
    de esta lección: quien lo automatice no volvería a reanudar."""
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    antes = foto(ruta)

    def sin_sitio(origen, destino, **opciones):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(destino))
    monkeypatch.setattr(shutil, "copyfile", sin_sitio)
    if variante == "todo_no_se_puede":
        monkeypatch.setattr(reanudar_, "SinSitio", NoSePuede)
    codigo = todo_junto.main(["reanudar", str(ruta), "--url", "http://127.0.0.1:9"])  # no llega a pedir
    errores = capsys.readouterr().err
    assert "no queda sitio en el disco" in errores and "vuelve a reanudar" in errores, errores
    assert (codigo == todo_junto.CODIGO_A_MEDIAS) is (variante == "correcta"), codigo
    assert foto(ruta) == antes  # y nada escrito en la base


# Un proceso que comprueba la base de `ruta` como lo haría con el disco lleno: SQLite no puede
# crear el -shm de una base con el -wal pendiente (el límite de tamaño de fichero, RLIMIT_FSIZE,
# le hace fallar igual que un disco sin sitio, SQLITE_IOERR_SHMSIZE), y `sitio_libre` dice 0.
COMPROBAR_SIN_SITIO = r"""
import resource, signal, sys
sys.path.insert(0, sys.argv[1])
import reanudar
reanudar.sitio_libre = lambda carpeta: 0
if sys.argv[3] == "sin_mirar_el_disco":
    reanudar.disco_lleno = lambda ruta, error: False
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    reanudar.comprobar(sys.argv[2])
except reanudar.NoSePuede as e:
    print(e)
"""

# Un proceso que escribe en la base y muere sin cerrarla: deja la transacción en el -wal.
ESCRIBIR_Y_MORIR = r"""
import os, signal, sqlite3, sys
bd = sqlite3.connect(sys.argv[1], isolation_level=None)
bd.execute("PRAGMA wal_autocheckpoint=0")
bd.execute("INSERT INTO curso(clave, valor) VALUES ('nota', 'escrita antes de morir')")
os.kill(os.getpid(), signal.SIGKILL)
"""


def con_el_wal_pendiente(ruta):
    subprocess.run([sys.executable, "-S", "-c", ESCRIBIR_Y_MORIR, str(ruta)])
    assert os.path.getsize(f"{ruta}-wal") > 0


@pytest.mark.parametrize("variante, lo_dice", [("correcta", True), ("sin_mirar_el_disco", False)])
def test_un_disco_lleno_no_se_confunde_con_una_base_rota(tmp_path, variante, lo_dice):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    con_el_wal_pendiente(ruta)
    os.remove(f"{ruta}-shm")
    punto = os.path.dirname(os.path.abspath(todo_junto.__file__))
    mensaje = subprocess.run([sys.executable, "-S", "-c", COMPROBAR_SIN_SITIO, punto, str(ruta), variante],
                             capture_output=True, text=True).stdout
    assert ("el disco donde está se ha llenado" in mensaje) is lo_dice, mensaje
    assert ("no es una base de SQLite" in mensaje) is not lo_dice, mensaje
    assert comprobar(ruta) == todo_junto.PADRE  # con sitio, se lee


def test_comprobar_no_cambia_lo_que_guarda_la_base_aunque_cambie_sus_bytes(tmp_path):
    """Con una transacción confirmada en el -wal de un proceso que murió, cerrar la conexión de
    comprobar la pasa al fichero principal: otros bytes, el mismo contenido, y nada perdido."""
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    con_el_wal_pendiente(ruta)
    bytes_antes = ruta.read_bytes()
    assert comprobar(ruta) == todo_junto.PADRE
    assert ruta.read_bytes() != bytes_antes and not os.path.exists(f"{ruta}-wal")
    bd = sqlite3.connect(ruta)
    try:
        assert bd.execute("SELECT valor FROM curso WHERE clave='nota'").fetchone() == ("escrita antes de morir",)
    finally:
        bd.close()


def test_preparar_donde_ya_hay_una_ejecucion_no_la_pisa(tmp_path):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    antes = huella_de(ruta.parent)
    with pytest.raises(ValueError, match="Ya hay una ejecución"):
        todo_junto.preparar(tmp_path / "e", INCIDENTE)
    assert huella_de(ruta.parent) == antes


def test_si_un_hijo_termina_sin_entregar_el_padre_no_se_activa_y_la_ejecucion_acaba_fallida(tmp_path):
    ruta = todo_junto.preparar(tmp_path / "e", INCIDENTE)
    bd = sqlite3.connect(ruta, isolation_level=None)
    bd.execute("UPDATE agentes SET tope=1 WHERE id='logs'")  # con un turno, no llega a entregar
    bd.close()
    with servidor_que_cuenta() as (url, _):
        hecho = reanudar(ruta, lambda nombre: ModeloAPI(nombre, url=url))
    f = foto(ruta)
    assert hecho["estado"] == "fallida" and hecho["informe"] is None
    assert ("logs", "fallida", 1) in f["estados"] and ("config", "completada", 1) in f["estados"]
    assert [e for e, *_ in f["buzon"]] == ["incidente/config/1"] and "incidente" not in f["historiales"]
