"""La casa de `curso/`: sus flechas de import van en un sentido, y la ventana del curso se escribe una vez.

Para quien mantiene el curso (issue 41, punto 5). El grafo sale del código, sin importarlo (ast):
cada `import curso.x` y cada `from curso.x import y`, también los que van dentro de una función,
porque un import perezoso sigue siendo una dependencia. Y dice dos cosas:

- **Ningún círculo**: ningún grupo de módulos que se importan unos a otros, ni de lejos. Un círculo
  obliga a leer varios ficheros a la vez para entender uno, y solo funciona mientras alguno de sus
  imports siga siendo perezoso.
- **Ninguna flecha sube**: los paquetes están en `CAPAS`, de abajo arriba, y un módulo importa de su
  capa o de las de abajo, nunca de una de arriba. Un módulo nuevo en un paquete nuevo tiene que
  tener capa: si no, lo dice `test_cada_modulo_tiene_su_capa`.

Cada comprobación tiene su variante ingenua: un paquete inventado con un círculo, con una flecha
que sube y con la ventana escrita dos veces, que la comprobación delata.
"""
import ast
from pathlib import Path

from curso import rutas

PAQUETE = "curso"

# Las capas de `curso/`, de abajo arriba; cada una, los paquetes o módulos que la forman (un módulo
# es de la capa de su prefijo más largo; `curso` es solo su __init__.py). Se importa de la propia
# capa o de las de abajo.
CAPAS = (
    # dónde está cada cosa (rutas), qué módulos sirve el cuaderno desde su referencia (referencias)
    # y un PostgreSQL de usar y tirar (postgres): no saben nada del resto.
    ("los cimientos", ("curso", "curso.rutas", "curso.referencias", "curso.postgres")),
    # el servidor de ensayo y sus guiones: el modelo de mentira del que tiran todos los demás.
    ("el servidor de ensayo", ("curso.ensayo",)),
    # lo que ejecutan las celdas de las lecciones para enseñar algo: su material, los explorables
    # y el modelo de verdad; se usan entre sí (las carreras de la 07 corren en PostgreSQL...).
    ("lo que corren las celdas", ("curso.material", "curso.explorables", "curso.modelo")),
    # lo que juzga el código del alumno: las comprobaciones de `comprobar("N.M")` y `comprobar N`
    # (sus casos preparan su estado con el material de su lección).
    ("lo que juzga", ("curso.comprobaciones",)),
    # lo que usa el alumno: la extensión de los cuadernos, comparar/restaurar/preparar, doctor.
    ("el alumno", ("curso.alumno",)),
    # quien da y quien escribe el curso: calificar, generar/ejecutar/probar, medir y las órdenes.
    ("quien da y escribe el curso", ("curso.clase", "curso.autor", "curso.medir", "curso.__main__")),
)

VENTANA = 8192  # la ventana del curso: en curso/ se escribe una sola vez, en ensayo/tokens.py
DONDE_SE_ESCRIBE_LA_VENTANA = "curso/ensayo/tokens.py"


# --- El grafo -------------------------------------------------------------------------------------

def modulos_de(raiz, paquete=PAQUETE):
    """{nombre del módulo: fichero} de los .py de `raiz/paquete` (un __init__.py es su paquete)."""
    modulos = {}
    for fichero in sorted((Path(raiz) / paquete).rglob("*.py")):
        partes = fichero.relative_to(raiz).with_suffix("").parts
        if partes[-1] == "__init__":
            partes = partes[:-1]
        modulos[".".join(partes)] = fichero
    return modulos


def _el_modulo(nombre, modulos):
    """El módulo de `modulos` que es `nombre` o lo contiene (curso.rutas.RAIZ -> curso.rutas)."""
    while nombre and nombre not in modulos:
        nombre = nombre.rpartition(".")[0]
    return nombre or None


def importados(nombre, fichero, modulos, paquete=PAQUETE):
    """Los módulos de `modulos` que importa el de `nombre`, en cualquier sitio de su código."""
    es_paquete = fichero.name == "__init__.py"
    base = nombre if es_paquete else nombre.rpartition(".")[0]
    suyos = set()
    for nodo in ast.walk(ast.parse(fichero.read_text(encoding="utf-8"))):
        if isinstance(nodo, ast.Import):
            suyos.update(_el_modulo(a.name, modulos) for a in nodo.names if a.name.split(".")[0] == paquete)
        elif isinstance(nodo, ast.ImportFrom):
            if nodo.level:  # from . import x, from ..y import z
                partes = base.split(".")[:len(base.split(".")) - (nodo.level - 1)]
                origen = ".".join(partes + ([nodo.module] if nodo.module else []))
            else:
                origen = nodo.module or ""
            if origen.split(".")[0] != paquete:
                continue
            for alias in nodo.names:  # `from curso.comprobaciones import espacio` importa un módulo
                completo = f"{origen}.{alias.name}"
                suyos.add(completo if completo in modulos else _el_modulo(origen, modulos))
    suyos.discard(None)
    suyos.discard(nombre)
    return suyos


def grafo_de_imports(raiz, paquete=PAQUETE, fuera=()):
    """{módulo: {módulos que importa}} de los de `raiz/paquete`, sin los de `fuera` (ni de un lado ni del otro)."""
    modulos = {n: f for n, f in modulos_de(raiz, paquete).items() if n not in fuera}
    return {n: importados(n, f, modulos, paquete) - set(fuera) for n, f in modulos.items()}


def circulos(grafo):
    """Los grupos de dos o más módulos que se importan unos a otros (las componentes fuertemente
    conexas del grafo, de Tarjan, sin recursión), cada uno ordenado."""
    indice, bajo, pila, en_pila, grupos = {}, {}, [], set(), []
    for inicio in grafo:
        if inicio in indice:
            continue
        camino = [(inicio, iter(sorted(grafo[inicio])))]
        indice[inicio] = bajo[inicio] = len(indice)
        pila.append(inicio)
        en_pila.add(inicio)
        while camino:
            v, siguientes = camino[-1]
            w = next(siguientes, None)
            if w is not None:
                if w not in indice:
                    indice[w] = bajo[w] = len(indice)
                    pila.append(w)
                    en_pila.add(w)
                    camino.append((w, iter(sorted(grafo.get(w, ())))))
                elif w in en_pila:
                    bajo[v] = min(bajo[v], indice[w])
                continue
            camino.pop()
            if camino:
                bajo[camino[-1][0]] = min(bajo[camino[-1][0]], bajo[v])
            if bajo[v] == indice[v]:
                grupo = set()
                while True:
                    w = pila.pop()
                    en_pila.discard(w)
                    grupo.add(w)
                    if w == v:
                        break
                if len(grupo) > 1:
                    grupos.append(sorted(grupo))
    return sorted(grupos)


def capa_de(modulo, capas=CAPAS):
    """El número de la capa de `modulo` (0 la de abajo), por su prefijo más largo; None si no tiene."""
    mejor, largo = None, -1
    for numero, (_, prefijos) in enumerate(capas):
        for prefijo in prefijos:
            dentro = prefijo != PAQUETE and modulo.startswith(prefijo + ".")  # `curso`: solo su __init__.py
            if (modulo == prefijo or dentro) and len(prefijo) > largo:
                mejor, largo = numero, len(prefijo)
    return mejor


def flechas_que_suben(grafo, capas=CAPAS):
    """Las flechas (de, a) de un módulo a otro de una capa más alta, con las dos capas dichas."""
    suben = []
    for de, destinos in sorted(grafo.items()):
        for a in sorted(destinos):
            capa_de_, capa_a = capa_de(de, capas), capa_de(a, capas)
            if capa_de_ is not None and capa_a is not None and capa_a > capa_de_:
                suben.append(f"{de} ({capas[capa_de_][0]}) → {a} ({capas[capa_a][0]})")
    return suben


def grafo_del_curso():
    return grafo_de_imports(rutas.RAIZ)


def test_ningun_circulo_de_imports_en_curso():
    assert circulos(grafo_del_curso()) == []


def test_ninguna_flecha_de_import_sube_de_capa():
    assert flechas_que_suben(grafo_del_curso()) == []


def test_cada_modulo_tiene_su_capa():
    assert [m for m in grafo_del_curso() if capa_de(m) is None] == []


# --- La ventana, una vez ----------------------------------------------------------------------------

def donde_esta_la_ventana(raiz, ventana=VENTANA):
    """Los «fichero:línea» de `raiz/curso` donde el código escribe el número `ventana` (no en textos).
    Los casos de los ejercicios (comprobaciones/lNN.py) no cuentan: son los números que dice el
    texto de su ejercicio («con la ventana del curso, 8192 − 1024 − 3072 = 4096»)."""
    sitios = []
    for nombre, fichero in modulos_de(raiz).items():
        if nombre.startswith("curso.comprobaciones.l") and nombre.rpartition(".")[2][1:3].isdigit():
            continue
        for nodo in ast.walk(ast.parse(fichero.read_text(encoding="utf-8"))):
            if isinstance(nodo, ast.Constant) and type(nodo.value) is int and nodo.value == ventana:
                sitios.append(f"{fichero.relative_to(raiz).as_posix()}:{nodo.lineno}")
    return sitios


def test_la_ventana_del_curso_se_escribe_una_sola_vez():
    sitios = donde_esta_la_ventana(rutas.RAIZ)
    assert [s.rpartition(":")[0] for s in sitios] == [DONDE_SE_ESCRIBE_LA_VENTANA], sitios


# --- Las variantes ingenuas: un paquete inventado ----------------------------------------------------

def _paquete(raiz, ficheros):
    for relativa, texto in ficheros.items():
        fichero = raiz / "curso" / relativa
        fichero.parent.mkdir(parents=True, exist_ok=True)
        fichero.write_text(texto, encoding="utf-8")
    for carpeta in [raiz / "curso", *(p for p in (raiz / "curso").rglob("*") if p.is_dir())]:
        (carpeta / "__init__.py").touch()
    return raiz


def test_un_circulo_se_ve_aunque_uno_de_sus_imports_sea_perezoso(tmp_path):
    raiz = _paquete(tmp_path, {
        "comprobaciones/culpa.py": "from curso.comprobaciones import aparte\n",
        "comprobaciones/aparte.py": "from .contrato import x\n",
        "comprobaciones/contrato.py": "def f():\n    from curso.comprobaciones.culpa import y\n",
        "comprobaciones/solo.py": "from curso import rutas\n",
        "rutas.py": "",
    })
    grafo = grafo_de_imports(raiz)
    assert circulos(grafo) == [["curso.comprobaciones.aparte", "curso.comprobaciones.contrato",
                                "curso.comprobaciones.culpa"]]
    assert grafo["curso.comprobaciones.solo"] == {"curso.rutas"}


def test_una_flecha_que_sube_se_ve_con_sus_dos_capas(tmp_path):
    raiz = _paquete(tmp_path, {
        "material/simulacro.py": "def f():\n    from curso.alumno import cuaderno\n",
        "alumno/cuaderno.py": "from curso.material.simulacro import f\nimport curso.rutas\n",
        "rutas.py": "",
    })
    suben = flechas_que_suben(grafo_de_imports(raiz))
    assert suben == ["curso.material.simulacro (lo que corren las celdas) → curso.alumno.cuaderno (el alumno)"]
    assert circulos(grafo_de_imports(raiz)) == [["curso.alumno.cuaderno", "curso.material.simulacro"]]


def test_un_paquete_sin_capa_se_ve(tmp_path):
    raiz = _paquete(tmp_path, {"nuevo/cosa.py": "", "rutas.py": ""})
    assert [m for m in grafo_de_imports(raiz) if capa_de(m) is None] == ["curso.nuevo", "curso.nuevo.cosa"]


def test_la_ventana_escrita_dos_veces_se_ve_y_en_un_texto_no(tmp_path):
    raiz = _paquete(tmp_path, {
        "ensayo/tokens.py": "VENTANA = 8192\n",
        "explorables/ventana/presupuesto.py": '"""La ventana de 8192."""\nVENTANA = 8192\nX = 8192.0\n',
        "comprobaciones/l03.py": "CASO = (8192, 1024, 3072)\n",
    })
    assert donde_esta_la_ventana(raiz) == ["curso/ensayo/tokens.py:1", "curso/explorables/ventana/presupuesto.py:2"]
