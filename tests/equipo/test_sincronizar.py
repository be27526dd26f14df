"""`python -m curso sincronizar` (curso/autor/sincronizar.py): un fichero editado en un punto de control
llega a sus copias siguientes.

Cada test trabaja en su copia de un repositorio git de usar y tirar con tres puntos de control
inventados en su primer commit, y edita una copia como haría quien escribe el curso. El 03 tiene su propia versión de
`modulo.py`; el test de ese módulo es el mismo en los tres. Cada invariante se prueba también con
una variante ingenua que lo rompe, para ver que el test sabe fallar.
"""
import shutil
import subprocess

import pytest

from curso import rutas
from curso.autor import sincronizar
from curso.autor.ejecutar import con_la_version_vieja

PUNTOS = {
    "01_uno": {"modulo.py": "VERSION = 1\n", "tests/test_modulo.py": "def test_version():\n    pass\n"},
    "02_dos": {"modulo.py": "VERSION = 1\n", "tests/test_modulo.py": "def test_version():\n    pass\n"},
    "03_tres": {"modulo.py": "VERSION = 3  # la suya\n",
                "tests/test_modulo.py": "def test_version():\n    pass\n"},
}
EDITADO = "def test_version():\n    assert True  # editado\n"


def git(carpeta, *argumentos):
    subprocess.run(["git", "-c", "user.name=curso", "-c", "user.email=curso@ejemplo.invalid",
                    *argumentos], cwd=carpeta, check=True, capture_output=True)


def escribir(raiz, puntos):
    for punto, ficheros in puntos.items():
        for relativa, texto in ficheros.items():
            ruta = raiz / "checkpoints" / punto / relativa
            ruta.parent.mkdir(parents=True, exist_ok=True)
            ruta.write_text(texto, encoding="utf-8")


def foto(raiz):
    """{ruta: texto} de todo lo que hay bajo checkpoints/."""
    return {p.relative_to(raiz).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((raiz / "checkpoints").rglob("*")) if p.is_file()}


def editar(raiz, punto, relativa, texto=EDITADO):
    (raiz / "checkpoints" / punto / relativa).write_text(texto, encoding="utf-8")


@pytest.fixture(scope="module")
def repositorio(tmp_path_factory):
    """Un repositorio con los tres puntos de control en su primer commit (se arma una vez)."""
    carpeta = tmp_path_factory.mktemp("repositorio")
    escribir(carpeta, PUNTOS)
    git(carpeta, "init", "-q")
    git(carpeta, "add", "checkpoints")
    git(carpeta, "commit", "-q", "-m", "puntos de control")
    return carpeta


@pytest.fixture
def curso(repositorio, tmp_path, monkeypatch):
    """Una copia del repositorio para cada test; las rutas del curso, a ella."""
    raiz = tmp_path / "curso"
    shutil.copytree(repositorio, raiz, symlinks=True)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # ningún repositorio de encima
    monkeypatch.setattr(rutas, "RAIZ", raiz)
    monkeypatch.setattr(rutas, "PUNTOS", raiz / "checkpoints")
    return raiz


# --- Las variantes ingenuas: la cadena de copias (la de ejecutar --sincronizar), mal recorrida ---

def solo_al_siguiente(puntos, numero, relativa, viejo, nuevo):
    siguientes, propia = con_la_version_vieja(puntos, numero, relativa, viejo, nuevo)
    return siguientes[:1], propia


def a_todos_los_siguientes(puntos, numero, relativa, viejo, nuevo):
    return sorted(n for n in puntos if n > numero), None


def a_todos_los_demas(puntos, numero, relativa, viejo, nuevo):
    """Deja todas las copias iguales, también las de antes."""
    return sorted(n for n in puntos if n != numero), None


def con_ingenua(monkeypatch, ingenua):
    if ingenua is not None:
        monkeypatch.setattr(sincronizar, "con_la_version_vieja", ingenua)


# --- Los invariantes ---------------------------------------------------------------------------

@pytest.mark.parametrize("ingenua, cumple", [(None, True), (solo_al_siguiente, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_una_edicion_llega_a_cada_copia_siguiente_que_tenia_la_version_vieja(curso, monkeypatch, capsys,
                                                                             ingenua, cumple):
    con_ingenua(monkeypatch, ingenua)
    editar(curso, "01_uno", "tests/test_modulo.py")
    assert sincronizar.sincronizar() == sincronizar.NADA_QUE_LLEVAR
    copias = [foto(curso)[f"checkpoints/{p}/tests/test_modulo.py"] for p in PUNTOS]
    assert (copias == [EDITADO] * 3) is cumple
    salida = capsys.readouterr().out
    assert ("tests/test_modulo.py: del punto de control 01 llevado a 02, 03" in salida) is cumple


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (a_todos_los_siguientes, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_una_copia_posterior_con_su_propia_version_se_deja_y_se_nombra(curso, monkeypatch, capsys,
                                                                       ingenua, cumple):
    con_ingenua(monkeypatch, ingenua)
    editar(curso, "01_uno", "modulo.py", "VERSION = 2\n")
    sincronizar.sincronizar()
    despues = foto(curso)
    assert despues["checkpoints/02_dos/modulo.py"] == "VERSION = 2\n"
    assert (despues["checkpoints/03_tres/modulo.py"] == PUNTOS["03_tres"]["modulo.py"]) is cumple
    salida = capsys.readouterr().out
    assert ("el punto de control 03 tiene su propia versión de modulo.py: no se toca" in salida) is cumple


def comprobar_que_lleva(comprobar=False):
    """Un --comprobar que, de paso, lleva los cambios."""
    sincronizar.sincronizar()
    return sincronizar.FALTA_LLEVAR


@pytest.mark.parametrize("orden, cumple", [(sincronizar.sincronizar, True), (comprobar_que_lleva, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_comprobar_no_escribe_nada_y_sale_con_1(curso, capsys, orden, cumple):
    editar(curso, "01_uno", "tests/test_modulo.py")
    antes = foto(curso)
    assert orden(comprobar=True) == sincronizar.FALTA_LLEVAR
    assert (foto(curso) == antes) is cumple
    salida = capsys.readouterr().out
    assert ("tests/test_modulo.py: del punto de control 01 sin llevar a 02, 03" in salida) is cumple


def sin_nada_que_llevar(capsys):
    codigo = sincronizar.sincronizar(comprobar=True)
    return codigo == sincronizar.NADA_QUE_LLEVAR and capsys.readouterr().out.startswith("Nada que llevar")


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (a_todos_los_siguientes, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_sin_nada_que_llevar_sale_con_0_y_lo_dice(curso, monkeypatch, capsys, ingenua, cumple):
    """Nada editado; editado donde lo que sigue tiene su propia versión; o ya llevado (los ficheros
    siguen sin commit: repetir la orden no encuentra nada más)."""
    con_ingenua(monkeypatch, ingenua)
    assert sin_nada_que_llevar(capsys)
    editar(curso, "02_dos", "modulo.py", "VERSION = 2\n")
    assert sin_nada_que_llevar(capsys) is cumple
    editar(curso, "01_uno", "tests/test_modulo.py")
    sincronizar.sincronizar()
    capsys.readouterr()
    assert sin_nada_que_llevar(capsys)


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (a_todos_los_demas, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_una_edicion_nunca_toca_un_punto_de_control_anterior(curso, monkeypatch, capsys, ingenua, cumple):
    con_ingenua(monkeypatch, ingenua)
    editar(curso, "02_dos", "tests/test_modulo.py")
    sincronizar.sincronizar()
    despues = foto(curso)
    assert despues["checkpoints/03_tres/tests/test_modulo.py"] == EDITADO
    assert (despues["checkpoints/01_uno/tests/test_modulo.py"] == PUNTOS["01_uno"]["tests/test_modulo.py"]) is cumple


EDITADOS = sincronizar.editados


def editados_sin_git(desde="HEAD"):
    """Si git falla, hace como si nada estuviera editado."""
    try:
        return EDITADOS(desde)
    except sincronizar.NoSeSincroniza:
        return []


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (editados_sin_git, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_fuera_de_un_repositorio_git_no_escribe_nada_y_lo_dice(curso, monkeypatch, capsys, ingenua, cumple):
    if ingenua is not None:
        monkeypatch.setattr(sincronizar, "editados", ingenua)
    shutil.rmtree(curso / ".git")
    editar(curso, "01_uno", "tests/test_modulo.py")
    antes = foto(curso)
    assert (sincronizar.sincronizar() == sincronizar.ERROR) is cumple
    assert foto(curso) == antes
    assert ("no está en un repositorio git" in capsys.readouterr().err) is cumple


def sin_mirar_si_chocan(cambios, puntos):
    for cambio in cambios:
        cambio.destinos, cambio.propia = con_la_version_vieja(
            puntos, cambio.numero, cambio.relativa, cambio.viejo, cambio.nuevo)


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (sin_mirar_si_chocan, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_dos_ediciones_distintas_de_la_misma_copia_no_escriben_nada_y_lo_dicen(curso, monkeypatch, capsys,
                                                                               ingenua, cumple):
    if ingenua is not None:
        monkeypatch.setattr(sincronizar, "_comprobar_cadenas", ingenua)
    editar(curso, "01_uno", "tests/test_modulo.py")
    editar(curso, "02_dos", "tests/test_modulo.py", "def test_version():\n    assert 1  # otra\n")
    antes = foto(curso)
    codigo = sincronizar.sincronizar()
    assert (codigo == sincronizar.ERROR and foto(curso) == antes) is cumple
    error = capsys.readouterr().err
    assert ("editado de dos maneras distintas en los puntos de control 01 y 02" in error) is cumple


SINCRONIZAR = sincronizar.sincronizar


def sin_desde(comprobar=False, desde="HEAD"):
    """Compara siempre con HEAD: en CI, con todo en commits, nunca vería nada."""
    return SINCRONIZAR(comprobar=comprobar)


@pytest.mark.parametrize("orden, cumple", [(SINCRONIZAR, True), (sin_desde, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_con_desde_una_edicion_ya_en_un_commit_y_sin_llevar_se_ve(curso, capsys, orden, cumple):
    editar(curso, "01_uno", "tests/test_modulo.py")
    git(curso, "commit", "-q", "-a", "-m", "edita solo el 01")
    antes = foto(curso)
    assert (orden(comprobar=True, desde="HEAD~1") == sincronizar.FALTA_LLEVAR) is cumple
    assert foto(curso) == antes
    salida = capsys.readouterr().out
    assert ("tests/test_modulo.py: del punto de control 01 sin llevar a 02, 03" in salida) is cumple


def editados_sin_mirar_la_revision(desde="HEAD"):
    """Le pasa la revisión a git tal cual: si no existe, el error es el de git, en inglés."""
    campos = sincronizar._git("diff", "--name-status", "-z", "--relative", desde, "--",
                              "checkpoints").decode().split("\0")[:-1]
    return list(zip(campos[::2], campos[1::2], strict=True))


@pytest.mark.parametrize("ingenua, cumple", [(None, True), (editados_sin_mirar_la_revision, False)],
                         ids=["sincronizar", "variante_ingenua"])
def test_una_revision_que_no_existe_no_escribe_nada_y_lo_dice(curso, monkeypatch, capsys, ingenua, cumple):
    if ingenua is not None:
        monkeypatch.setattr(sincronizar, "editados", ingenua)
    editar(curso, "01_uno", "tests/test_modulo.py")
    antes = foto(curso)
    assert sincronizar.sincronizar(desde="no-existe") == sincronizar.ERROR
    assert foto(curso) == antes
    assert ("no tiene ninguna revisión «no-existe»" in capsys.readouterr().err) is cumple
