"""Un README por lector (issue 41, punto 4): el del alumno es corto y dice las dos órdenes, `.ci/run` llama a la de los tests tal cual, y las cifras que cambian con la máquina van en mediciones/.

Para quien mantiene el curso. `README.md` es del alumno; `GUIA_DEL_INSTRUCTOR.md`, de quien da el
curso; `curso/README.md` y `checkpoints/README.md`, de quien lo mantiene. Cada comprobación tiene
su variante ingenua: un texto inventado que la rompe.
"""
import re

from curso import rutas

LINEAS_DEL_README = 150  # lo que lee el alumno antes de empezar
DOCUMENTOS = ("README.md", "GUIA_DEL_INSTRUCTOR.md", "curso/README.md")
# Lo que delata una cifra de una máquina en la prosa: una calibración o una carga media.
DE_UNA_MAQUINA = re.compile(r"calibraci[oó]n \d|carga media (de )?\d")
BLOQUE = re.compile(r"```bash\n(.*?)```", re.S)
ENLACE = re.compile(r"\]\(((?:\.\./)?mediciones/[\w.-]+)\)")


def leer(relativa):
    return (rutas.RAIZ / relativa).read_text(encoding="utf-8")


def las_dos_ordenes(readme):
    """Las órdenes de los bloques de la sección «Las dos órdenes», una por bloque."""
    seccion = readme.split("## Las dos órdenes", 1)[1].split("\n## ", 1)[0]
    return [bloque.strip() for bloque in BLOQUE.findall(seccion)]


def llama_tal_cual(guion, orden):
    """¿Tiene el guion de shell una línea que es exactamente `orden`?"""
    return orden in (linea.strip() for linea in guion.splitlines())


def test_el_readme_del_alumno_cabe_en_150_lineas():
    assert len(leer("README.md").splitlines()) <= LINEAS_DEL_README


def test_el_readme_dice_las_dos_ordenes_y_ci_llama_a_la_de_los_tests_tal_cual():
    instalar, probar = las_dos_ordenes(leer("README.md"))
    assert "pip install -r requirements.txt" in instalar and "jupyter lab notebooks/" in instalar
    assert probar == "python -m curso probar"
    assert llama_tal_cual(leer(".ci/run"), probar)
    # La variante ingenua: un .ci/run que llama a otra cosa (aquí, solo el nivel profundo).
    assert not llama_tal_cual("python -m curso probar --profundo\n", probar)


def test_ningun_readme_lleva_cifras_de_una_maquina_en_la_prosa():
    assert {d: DE_UNA_MAQUINA.findall(leer(d)) for d in DOCUMENTOS} == {d: [] for d in DOCUMENTOS}
    assert DE_UNA_MAQUINA.search("en 2 núcleos (calibración 0,74 s, carga media de 15)")  # la ingenua


def test_cada_medida_enlazada_existe():
    for documento in DOCUMENTOS:
        carpeta = (rutas.RAIZ / documento).parent
        enlazadas = ENLACE.findall(leer(documento))
        assert [e for e in enlazadas if not (carpeta / e).is_file()] == [], documento
    assert ENLACE.findall("[mediciones/probar.md](mediciones/probar.md)") == ["mediciones/probar.md"]
