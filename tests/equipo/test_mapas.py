"""Los mapas para quien mantiene el curso (curso/README.md y checkpoints/README.md) dicen la verdad.

Para quien mantiene el curso: si un fichero cambia de nombre o de sitio, o una lección declara otros
ficheros, estos tests lo dicen antes de que un mapa mienta. Cada uno prueba también que su
comprobación ve el error que busca, con un mapa o un árbol inventados.
"""
import ast
import re

from curso import rutas
from curso.rutas import LECCIONES

MAPA_DEL_CURSO = rutas.RAIZ / "curso" / "README.md"
MAPA_DE_LOS_PUNTOS = rutas.RAIZ / "checkpoints" / "README.md"
# Lo que un mapa escribe entre comillas invertidas y es un fichero o una carpeta.
NOMBRE_DE_FICHERO = re.compile(r"`([\w./*-]+(?:\.(?:py|ipynb|json|md)|/))`")
# El espacio del alumno no está en el repositorio.
ESPACIO = "mi_agente/"


def nombres_citados(texto):
    """Los ficheros y carpetas que cita un mapa, en el orden en que los cita."""
    return [n for n in NOMBRE_DE_FICHERO.findall(texto) if not n.startswith(ESPACIO)]


def existe(nombre, raiz):
    """¿Hay en el curso un fichero o carpeta con ese nombre? Desde la raíz o desde curso/; y, si
    no lleva barra, también en cualquier sitio de curso/, checkpoints/ o tests/. NN es un número."""
    patron = nombre.rstrip("/").replace("NN", "[0-9][0-9]")
    if _alguno(raiz.glob(patron)) or _alguno((raiz / "curso").glob(patron)):
        return True
    return "/" not in patron and any(_alguno((raiz / base).rglob(patron))
                                     for base in ("curso", "checkpoints", "tests"))


def _alguno(encontrados):
    return next(iter(encontrados), None) is not None


def nombres_que_no_existen(texto, raiz):
    return [n for n in nombres_citados(texto) if not existe(n, raiz)]


def entradas_sin_mapa(texto, paquete):
    """Las entradas de lo alto de `paquete` que el mapa no nombra."""
    citados = {n.rstrip("/") for n in nombres_citados(texto)}
    return sorted(e.name for e in paquete.iterdir()
                  if e.name not in {"__pycache__", "__init__.py", "README.md"}
                  and e.name.removesuffix(".py") not in citados and e.name not in citados)


def tabla_de_los_puntos(texto):
    """{lección: {ficheros .py de su fila}} de la tabla de checkpoints/README.md."""
    tabla = {}
    for fila in re.findall(r"^\| `(\d\d[a-z]?_[\w]+)/` \| (.*) \|$", texto, re.M):
        tabla[rutas.numero_de_leccion(fila[0])] = set(re.findall(r"`(\w+\.py)`", fila[1]))
    return tabla


def cabecera(fichero):
    """La primera línea del docstring de un fichero, o None si no tiene docstring."""
    docstring = ast.get_docstring(ast.parse(fichero.read_text(encoding="utf-8")), clean=False)
    return None if docstring is None else docstring.split("\n")[0].strip()


def cabeceras_que_no_dicen_para_quien(raiz):
    """Los ficheros de curso/ sin docstring, o cuya primera línea no dice para quién es."""
    return sorted(str(f.relative_to(raiz)) for f in (raiz / "curso").rglob("*.py")
                  if "__pycache__" not in f.parts
                  and not re.search(r"\bpara\b", cabecera(f) or "", re.I))


def nombres_repetidos(paquete):
    """Los nombres de fichero que aparecen en dos sitios de `paquete` (sin contar __init__.py)."""
    vistos = {}
    for f in paquete.rglob("*.py"):
        if f.name != "__init__.py" and "__pycache__" not in f.parts:
            vistos.setdefault(f.name, []).append(f)
    return sorted(n for n, sitios in vistos.items() if len(sitios) > 1)


# ------------------------------------------------------------------------------------ los mapas


def test_cada_nombre_del_mapa_del_curso_existe():
    assert nombres_que_no_existen(MAPA_DEL_CURSO.read_text(encoding="utf-8"), rutas.RAIZ) == []


def test_cada_nombre_del_mapa_de_los_puntos_de_control_existe():
    assert nombres_que_no_existen(MAPA_DE_LOS_PUNTOS.read_text(encoding="utf-8"), rutas.RAIZ) == []


def test_un_nombre_que_ya_no_existe_se_ve(tmp_path):
    (tmp_path / "curso" / "alumno").mkdir(parents=True)
    (tmp_path / "curso" / "alumno" / "cuaderno.py").write_text("")
    (tmp_path / "checkpoints").mkdir()
    texto = "`alumno/cuaderno.py` y `cuaderno.py`, y `ventana.py`, que se movió"
    assert nombres_que_no_existen(texto, tmp_path) == ["ventana.py"]


def test_el_mapa_del_curso_nombra_cada_entrada_de_curso():
    assert entradas_sin_mapa(MAPA_DEL_CURSO.read_text(encoding="utf-8"), rutas.RAIZ / "curso") == []


def test_una_entrada_nueva_sin_mapa_se_ve(tmp_path):
    for nombre in ("alumno", "nuevo"):
        (tmp_path / nombre).mkdir()
    (tmp_path / "rutas.py").write_text("")
    assert entradas_sin_mapa("`alumno/` y `rutas.py`", tmp_path) == ["nuevo"]


def test_la_tabla_de_los_puntos_de_control_dice_lo_que_declara_cada_leccion():
    tabla = tabla_de_los_puntos(MAPA_DE_LOS_PUNTOS.read_text(encoding="utf-8"))
    assert tabla == {n: set(l["ficheros"]) for n, l in LECCIONES.items()}


def test_una_fila_que_no_dice_lo_que_declara_la_leccion_se_ve():
    texto = MAPA_DE_LOS_PUNTOS.read_text(encoding="utf-8").replace("`compactar.py`, ", "", 1)
    tabla = tabla_de_los_puntos(texto)
    assert tabla[3] == set(LECCIONES[3]["ficheros"]) - {"compactar.py"}


# ----------------------------------------------------------------------------- los ficheros


def test_cada_fichero_de_curso_empieza_diciendo_para_quien_es():
    assert cabeceras_que_no_dicen_para_quien(rutas.RAIZ) == []


def test_un_fichero_sin_para_quien_se_ve(tmp_path):
    (tmp_path / "curso").mkdir()
    (tmp_path / "curso" / "bien.py").write_text('"""Para el alumno: algo."""\n')
    (tmp_path / "curso" / "sin_quien.py").write_text('"""Algo que hace algo."""\n')
    (tmp_path / "curso" / "sin_docstring.py").write_text("x = 1\n")
    assert cabeceras_que_no_dicen_para_quien(tmp_path) == ["curso/sin_docstring.py", "curso/sin_quien.py"]


def test_ningun_fichero_de_curso_se_llama_como_otro():
    assert nombres_repetidos(rutas.RAIZ / "curso") == []


def test_dos_ficheros_con_el_mismo_nombre_se_ven(tmp_path):
    for sitio in ("ensayo", "material"):
        (tmp_path / sitio).mkdir()
        (tmp_path / sitio / "incidente.py").write_text("")
        (tmp_path / sitio / "__init__.py").write_text("")
    assert nombres_repetidos(tmp_path) == ["incidente.py"]
