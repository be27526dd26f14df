"""Tests de curso.alumno.puntos: comparar, restaurar y preparar, con puntos de control inventados.

No dependen de los puntos de control de verdad: cada test apunta `rutas.PUNTOS` a una carpeta
temporal con `00_vacio/`, `01_bucle/` y `02_compactar/`, y el espacio del alumno
(`CURSO_ESPACIO`) a otra. Cada invariante lleva al lado una variante ingenua que lo rompe,
para ver que el test sabe fallar.
"""
import re
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from curso import rutas
from curso.alumno import puntos

# El código del alumno en cada punto de control inventado (lo que hay que copiar y comparar).
CODIGO = {
    "00_vacio": {},
    "01_bucle": {
        "bucle.py": "def bucle():\n    return 'uno'\n",
        "entorno.py": "HERRAMIENTAS = []\n",
        "datos/guion.txt": "primera línea\nsegunda línea\n",
    },
    "02_compactar": {
        "bucle.py": "def bucle():\n    return 'dos'\n",
        "entorno.py": "HERRAMIENTAS = []\n",
        "datos/guion.txt": "primera línea\nsegunda línea\n",
        "compactar.py": "UMBRAL = 4096\n",
    },
}
# Lo que también vive en un punto de control y no es código del alumno: no se copia ni se compara.
AJENO = {
    "tests/conftest.py": "import sys\n",
    "tests/test_bucle.py": "def test_nada():\n    pass\n",
    "__pycache__/bucle.cpython-311.pyc": "no es código\n",
}


def escribir(carpeta, ficheros):
    for relativa, texto in ficheros.items():
        (carpeta / relativa).parent.mkdir(parents=True, exist_ok=True)
        (carpeta / relativa).write_text(texto, encoding="utf-8")


def foto(carpeta):
    """{ruta relativa: bytes} de todo lo que hay bajo `carpeta` (carpetas vacías incluidas)."""
    carpeta = Path(carpeta)
    return {p.relative_to(carpeta).as_posix(): (p.read_bytes() if p.is_file() else None)
            for p in sorted(carpeta.rglob("*"))}


def leer_textos(carpeta):
    return {p.relative_to(carpeta).as_posix(): p.read_text(encoding="utf-8")
            for p in Path(carpeta).rglob("*") if p.is_file()}


@pytest.fixture
def curso_falso(tmp_path, monkeypatch):
    """Puntos de control inventados y un espacio del alumno temporal (que aún no existe)."""
    raiz = tmp_path / "checkpoints"
    for nombre, codigo in CODIGO.items():
        (raiz / nombre).mkdir(parents=True)
        escribir(raiz / nombre, {**codigo, **AJENO})
    monkeypatch.setattr(rutas, "PUNTOS", raiz)
    espacio = tmp_path / "mi_agente"
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    return espacio


def copias_de(espacio):
    return sorted(espacio.parent.glob(espacio.name + puntos.SUFIJO_COPIA + "*"))


# ---------------------------------------------------------------- restaurar


def test_restaurar_en_espacio_vacio_copia_exactamente_el_codigo_del_alumno(curso_falso, capsys):
    assert puntos.restaurar(1) == 0
    assert leer_textos(curso_falso) == CODIGO["01_bucle"]
    assert copias_de(curso_falso) == []  # no había nada que poner a salvo
    assert "01_bucle" in capsys.readouterr().out


def restaurar_ingenuo(n):
    """Copia el punto de control encima de lo que haya: lo que `restaurar` no debe hacer."""
    _, carpeta = puntos.punto_de_control(n)
    shutil.copytree(carpeta, rutas.espacio(), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*rutas.IGNORADOS))
    return 0


TRABAJO = {"bucle.py": "def bucle():\n    return 'lo mío'\n", "notas.txt": "ideas\n"}


def trabajo_sobrevive(restaurar, espacio):
    """Si, tras restaurar encima de un trabajo, sus bytes siguen enteros en alguna copia."""
    escribir(espacio, TRABAJO)
    antes = foto(espacio)
    restaurar(1)
    return any(foto(copia) == antes for copia in copias_de(espacio))


def test_restaurar_nunca_destruye_trabajo(curso_falso, capsys):
    assert trabajo_sobrevive(puntos.restaurar, curso_falso)
    [copia] = copias_de(curso_falso)
    salida = capsys.readouterr().out
    assert copia.name in salida  # y dice dónde quedó
    assert str(curso_falso.parent) not in salida
    assert leer_textos(curso_falso) == CODIGO["01_bucle"]


def test_un_restaurar_ingenuo_destruiria_trabajo(curso_falso):
    assert not trabajo_sobrevive(restaurar_ingenuo, curso_falso)


def test_restaurar_dos_veces_guarda_dos_copias_distintas(curso_falso):
    escribir(curso_falso, {"notas.txt": "primera versión\n"})
    puntos.restaurar(1)
    escribir(curso_falso, {"notas.txt": "segunda versión\n"})
    puntos.restaurar(2)
    copias = copias_de(curso_falso)
    assert len(copias) == 2
    notas = sorted((c / "notas.txt").read_text(encoding="utf-8") for c in copias)
    assert notas == ["primera versión\n", "segunda versión\n"]


def test_nombre_de_copia_no_reutiliza_uno_que_existe(tmp_path):
    espacio = tmp_path / "mi_agente"
    ahora = datetime(2026, 12, 2, 11, 30, 5)
    primera = puntos.nombre_de_copia(espacio, ahora)
    assert primera.parent == tmp_path
    assert primera.name.startswith("mi_agente.copia-")
    assert ahora.strftime("%Y%m%d-%H%M%S") in primera.name
    primera.mkdir()
    segunda = puntos.nombre_de_copia(espacio, ahora)
    assert not segunda.exists()
    segunda.write_text("un fichero también ocupa el nombre")
    tercera = puntos.nombre_de_copia(espacio, ahora)
    assert len({primera, segunda, tercera}) == 3 and not tercera.exists()


def test_restaurar_si_no_puede_poner_a_salvo_no_copia_nada(curso_falso, monkeypatch, capsys):
    escribir(curso_falso, {"bucle.py": "lo mío\n"})
    antes = foto(curso_falso.parent)

    def mover_falla(self, destino):
        raise PermissionError(13, "Permiso denegado")
    monkeypatch.setattr(Path, "rename", mover_falla)

    assert puntos.restaurar(1) == 1
    assert foto(curso_falso.parent) == antes
    assert "No he copiado nada" in capsys.readouterr().err


def test_restaurar_en_espacio_vacio_existente_no_hace_copia(curso_falso):
    curso_falso.mkdir()
    assert puntos.restaurar(1) == 0
    assert copias_de(curso_falso) == []
    assert leer_textos(curso_falso) == CODIGO["01_bucle"]


# ---------------------------------------------------------------- números que no valen


@pytest.mark.parametrize("n", [99, "abc", -1, "-1", "1.5", "", None, True])
def test_un_numero_invalido_no_toca_nada(curso_falso, capsys, n):
    escribir(curso_falso, {"bucle.py": "lo mío\n"})
    antes = foto(curso_falso.parent)

    assert puntos.restaurar(n) == puntos.ARGUMENTO_INVALIDO
    assert puntos.comparar(n) == puntos.ARGUMENTO_INVALIDO

    assert foto(curso_falso.parent) == antes
    err = capsys.readouterr().err
    for nombre in CODIGO:  # lista los que hay, con número y nombre
        assert f"{nombre[:2]}  {nombre[3:]}" in err


def test_sin_puntos_de_control_lo_dice(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(rutas, "PUNTOS", tmp_path / "no_hay")
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(tmp_path / "mi_agente"))
    assert puntos.comparar(1) == puntos.ARGUMENTO_INVALIDO
    assert puntos.restaurar(1) == puntos.ARGUMENTO_INVALIDO
    assert "No hay puntos de control" in capsys.readouterr().err
    assert not (tmp_path / "mi_agente").exists()


def test_los_numeros_se_aceptan_con_o_sin_cero(curso_falso):
    assert puntos.punto_de_control("01") == puntos.punto_de_control(1) == puntos.punto_de_control("1")
    assert puntos.punto_de_control("0" * 5000 + "1") == puntos.punto_de_control(1)


@pytest.mark.parametrize("n", ["1" * 5000, 10 ** 5000, " " + "9" * 4301],
                         ids=["texto de 5000 cifras", "int de 5001 cifras", "texto de 4301 nueves"])
def test_un_numero_enorme_es_un_numero_invalido_mas(curso_falso, capsys, n):
    """Python no convierte a int un texto de más de 4300 cifras (ni a texto un int así): lanzaría
    un ValueError en inglés. Es un punto de control que no existe, y el mensaje no lo repite entero."""
    escribir(curso_falso, {"bucle.py": "lo mío\n"})
    antes = foto(curso_falso.parent)
    assert puntos.comparar(n) == puntos.ARGUMENTO_INVALIDO
    assert puntos.restaurar(n) == puntos.ARGUMENTO_INVALIDO
    with pytest.raises(puntos.PuntoDeControlDesconocido, match="no es un número de lección"):
        puntos.preparar(n)
    assert foto(curso_falso.parent) == antes
    err = capsys.readouterr().err
    assert err.startswith("No hay ningún punto de control «")
    assert len(err) < 2000, "el mensaje repite el número entero"


# ---------------------------------------------------------------- comparar


def test_comparar_espacio_restaurado_coincide(curso_falso, capsys):
    puntos.restaurar(2)
    capsys.readouterr()
    assert puntos.comparar(2) == 0
    salida = capsys.readouterr().out
    assert "coincide con el punto de control 02" in salida
    assert "---" not in salida  # ningún diff


def test_comparar_informa_de_cada_diferencia(curso_falso, capsys):
    puntos.restaurar(1)
    guion = curso_falso / "datos" / "guion.txt"
    # Una línea quitada y tres puestas en su lugar.
    guion.write_text("primera línea\notra\ny otra\ny otra más\n", encoding="utf-8")
    (curso_falso / "entorno.py").unlink()
    escribir(curso_falso, {"extra.py": "x = 1\n"})
    capsys.readouterr()

    assert puntos.comparar(1) == 1

    salida = capsys.readouterr().out
    lineas = {linea.split()[0]: " ".join(linea.split()[1:])
              for linea in salida.splitlines() if linea.startswith("  ") and "(" != linea.split()[0][0]}
    assert lineas == {
        "bucle.py": "igual",
        "datos/guion.txt": "cambiado (+3 \u22121)",
        "entorno.py": "falta",
        "extra.py": "sobra",
    }
    assert ("  (falta: está en el punto de control y no en tu espacio; "
            "sobra: está en tu espacio y no en el punto de control)") in salida.splitlines()
    assert "--- punto de control 01/datos/guion.txt" in salida
    assert "+++ tu espacio/datos/guion.txt" in salida
    assert "-segunda línea\n" in salida and "+y otra más\n" in salida
    assert "3 ficheros difieren" in salida
    assert str(curso_falso) not in salida  # ni la ruta de tu espacio, que cambia de una máquina a otra


def test_comparar_no_ensena_la_solucion_de_un_ejercicio_pendiente_sin_pedirla(curso_falso, capsys):
    """Al final de una lección, un ejercicio saltado deja su esbozo: comparar lo nombra y dice
    cómo ver la solución, pero no la imprime (su diff sería la solución entera)."""
    puntos.restaurar(1)
    esbozo = ("def bucle():\n    # Tu código aquí (ejercicio 1.3).\n"
              "    raise NotImplementedError(\"Ejercicio 1.3 pendiente: completa bucle() en su celda, "
              "ejecútala y comprueba con comprobar(\\\"1.3\\\").\")\n")
    (curso_falso / "bucle.py").write_text(esbozo, encoding="utf-8")
    capsys.readouterr()

    assert puntos.comparar(1) == 1
    salida = capsys.readouterr().out
    assert "return 'uno'" not in salida  # la línea de la solución no aparece
    assert "bucle.py: El ejercicio 1.3 sigue pendiente" in salida
    assert 'solucion("1.3")' in salida and "comparar 01 --con-soluciones" in salida

    # Pedida, sí: el diff de siempre, con la solución.
    assert puntos.comparar(1, con_soluciones=True) == 1
    assert "-    return 'uno'" in capsys.readouterr().out


def test_los_esbozos_de_un_fichero_salen_en_orden_y_sin_repetir():
    texto = "".join(f'    raise NotImplementedError("Ejercicio {n} pendiente: ...")\n'
                    for n in ("3.3", "3.10", "3.2", "3.3"))
    assert puntos.esbozos_en(texto) == ["3.2", "3.3", "3.10"]
    assert puntos.esbozos_en("raise NotImplementedError('otra cosa')\n") == []


def palabras_documentadas(texto):
    """Las palabras de «una línea por fichero (igual, cambiado, falta, sobra)» en un texto."""
    encontrado = re.search(r"una línea por fichero \(([^)]*)\)", texto)
    assert encontrado, "el texto ya no dice qué escribe comparar en cada línea"
    return re.split(r",\s*|\s+o\s+|\s+y\s+", encontrado.group(1))


def test_comparar_escribe_las_palabras_que_dicen_el_readme_y_la_leccion_00():
    import nbformat
    escritas = [puntos.Fila("a.py", puntos.IGUAL).texto(),
                puntos.Fila("a.py", puntos.CAMBIADO, 1, 2).texto().split()[0],
                puntos.Fila("a.py", puntos.FALTA).texto(),
                puntos.Fila("a.py", puntos.SOBRA).texto()]
    [leccion_00] = rutas.SOLUCIONES.glob("00_*.ipynb")
    textos = {"README.md": (rutas.RAIZ / "README.md").read_text(encoding="utf-8"),
              leccion_00.name: "\n".join(c.source for c in nbformat.read(leccion_00, as_version=4).cells),
              "curso/alumno/puntos.py": puntos.__doc__}
    for nombre, texto in textos.items():
        assert palabras_documentadas(texto) == escritas, nombre


def test_comparar_no_mira_los_tests_del_punto_de_control(curso_falso, capsys):
    puntos.restaurar(1)
    escribir(curso_falso, {"tests/test_mio.py": "def test_x(): pass\n"})
    assert puntos.comparar(1) == 0


def test_comparar_sin_espacio_dice_como_crearlo(curso_falso, capsys):
    assert puntos.comparar(1) == 1
    assert "python -m curso restaurar 01" in capsys.readouterr().out
    assert not curso_falso.exists()


def test_describir_espacio_no_ensena_rutas_temporales(tmp_path, monkeypatch):
    assert puntos.describir_espacio(rutas.RAIZ / "mi_agente") == "mi_agente/"
    assert str(tmp_path) not in puntos.describir_espacio(tmp_path / "espacio")


def test_resumen_diferencias_clasifica_cada_fichero():
    punto = {"igual.py": "a\n", "cambia.py": "a\nb\n", "falta.py": "x\n", "bin.db": b"\x00\x01"}
    tuyo = {"igual.py": "a\n", "cambia.py": "a\nc\nd\n", "sobra.py": "y\n", "bin.db": b"\x00\x02"}
    filas = {fila.ruta: fila for fila in puntos.resumen_diferencias(punto, tuyo)}
    assert list(filas) == sorted(filas)
    assert filas["igual.py"].texto() == "igual"
    assert (filas["cambia.py"].anadidas, filas["cambia.py"].quitadas) == (2, 1)
    assert filas["falta.py"].estado == puntos.FALTA
    assert filas["sobra.py"].estado == puntos.SOBRA
    assert filas["bin.db"].texto() == "cambiado (binario)"


def test_el_resumen_cuenta_las_mismas_lineas_que_el_diff():
    """Quitar el salto de línea final cambia esa línea, en el resumen igual que en el diff."""
    punto, tuyo = {"a.py": "a\nb\nc\n"}, {"a.py": "a\nB\nc"}
    [fila] = puntos.resumen_diferencias(punto, tuyo)
    diff = puntos.diff_de("a.py", punto["a.py"], tuyo["a.py"], 1).splitlines()[2:]
    assert fila.anadidas == sum(1 for linea in diff if linea.startswith("+"))
    assert fila.quitadas == sum(1 for linea in diff if linea.startswith("-"))


def test_diff_de_marca_la_ultima_linea_sin_salto():
    texto = puntos.diff_de("a.py", "x = 1\n", "x = 2", 3)
    assert texto.startswith("--- punto de control 03/a.py\n+++ tu espacio/a.py\n")
    assert "+x = 2\n\\ No hay salto de línea al final\n" in texto


# ---------------------------------------------------------------- preparar


def preparar_ingenuo(n):
    """Copia todo el punto de control anterior, pisando lo que haya: lo que `preparar` no hace."""
    _, carpeta = puntos.punto_de_control(n - 1)
    shutil.copytree(carpeta, rutas.espacio(), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(*rutas.IGNORADOS))
    return []


@pytest.mark.parametrize("preparar, respeta", [(puntos.preparar, True), (preparar_ingenuo, False)],
                         ids=["preparar", "variante_ingenua"])
def test_preparar_nunca_sobrescribe_un_fichero_tuyo(curso_falso, capsys, preparar, respeta):
    mio = "def bucle():\n    return 'lo mío'\n"
    escribir(curso_falso, {"bucle.py": mio})
    preparar(2)
    assert ((curso_falso / "bucle.py").read_text(encoding="utf-8") == mio) is respeta


def test_preparar_copia_solo_lo_que_falta(curso_falso, capsys):
    escribir(curso_falso, {"bucle.py": "lo mío\n", "notas.txt": "ideas\n"})

    copiados = puntos.preparar(2)

    faltaban = sorted(set(CODIGO["01_bucle"]) - {"bucle.py"})
    assert copiados == faltaban
    textos = leer_textos(curso_falso)
    assert textos == {**CODIGO["01_bucle"], "bucle.py": "lo mío\n", "notas.txt": "ideas\n"}
    salida = capsys.readouterr().out
    assert all(ruta in salida for ruta in faltaban)

    assert puntos.preparar(2) == []
    assert "no hacía falta" in capsys.readouterr().out
    assert leer_textos(curso_falso) == textos


def test_preparar_leccion_0_crea_el_espacio_vacio(curso_falso):
    assert puntos.preparar(0) == []
    assert curso_falso.is_dir() and list(curso_falso.iterdir()) == []


def test_preparar_sin_punto_anterior_falla_con_mensaje_claro(curso_falso):
    """El curso falso no tiene el punto de control 03b, del que empieza la lección 04."""
    with pytest.raises(puntos.PuntoDeControlDesconocido, match="desde el punto de control 03b, que no está"):
        puntos.preparar(4)


def test_preparar_una_leccion_que_no_es_del_curso_lo_dice_sin_tocar_el_espacio(curso_falso):
    with pytest.raises(rutas.LeccionDesconocida, match="La lección 09 no es del curso; las lecciones son 00"):
        puntos.preparar(9)
    assert not curso_falso.exists() or list(curso_falso.iterdir()) == []


def test_preparar_pone_al_dia_una_version_de_un_punto_anterior_y_respeta_la_tuya(tmp_path, monkeypatch):
    """Quien se salta una lección tiene la versión vieja de un fichero: se pone al día (con copia).
    Un fichero que no es de ningún punto de control es trabajo del alumno: no se toca."""
    from curso import rutas
    from curso.alumno import puntos
    raiz = tmp_path / "checkpoints"
    for numero, version in [(0, "v0"), (1, "v1"), (2, "v2")]:
        carpeta = raiz / f"{numero:02d}_x"
        carpeta.mkdir(parents=True)
        (carpeta / "bucle.py").write_text(version)
        (carpeta / "otro.py").write_text(version)
    espacio = tmp_path / "espacio"
    espacio.mkdir()
    (espacio / "bucle.py").write_text("v0")        # de un punto de control anterior
    (espacio / "otro.py").write_text("lo mío")     # del alumno
    monkeypatch.setattr(rutas, "PUNTOS", raiz)
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    assert puntos.preparar(3) == ["bucle.py"]
    assert (espacio / "bucle.py").read_text() == "v2"
    assert (espacio / ".copias" / "bucle.py.antes-de-la-leccion-03").read_text() == "v0"
    assert (espacio / "otro.py").read_text() == "lo mío"


# ---------------------------------------------------------------- volver a una lección pasada


def _espacio_como(punto, tmp_path, monkeypatch):
    espacio = tmp_path / "mi_agente"
    shutil.copytree(rutas.puntos_de_control()[punto], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    monkeypatch.setenv(rutas.VARIABLE_ESPACIO, str(espacio))
    return espacio


def test_por_delante_nombra_lo_que_cambiaron_las_lecciones_ya_hechas(tmp_path, monkeypatch):
    from curso.rutas import LECCIONES
    _espacio_como(3, tmp_path, monkeypatch)
    assert puntos.por_delante(2) == {f: 3 for f in LECCIONES[3]["ficheros"]}
    assert puntos.por_delante(3) == {}


def test_tu_propia_version_de_un_modulo_no_va_por_delante(tmp_path, monkeypatch):
    """Un bucle.py tuyo, distinto del del punto de control, no es de una lección posterior: la
    variante ingenua («por delante» = distinto del punto de control) te quitaría tu propio código
    al volver a la lección."""
    espacio = _espacio_como(1, tmp_path, monkeypatch)
    (espacio / "bucle.py").write_text((espacio / "bucle.py").read_text(encoding="utf-8") + "\n# mío\n",
                                      encoding="utf-8")
    assert puntos.por_delante(1) == {} and puntos.por_delante(2) == {}
