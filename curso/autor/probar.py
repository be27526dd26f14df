"""Para quien escribe o valida el curso: la orden de los tests del README, `python -m curso probar`.

Corre, cada parte en su propio proceso de pytest y con un espacio de trabajo temporal:

1. los tests del curso (`tests/`), repartidos en `PARTES_DEL_CURSO` procesos de coste parecido;
2. los tests de cada punto de control (`checkpoints/NN_*/tests/`), uno a uno, porque sus módulos
   se llaman igual (`bucle`, `entorno`...); una copia idéntica de un test que prueba módulos
   idénticos corre una sola vez, en el punto de control más alto (`curso/autor/repetidos.py`);
3. los cuadernos resueltos con `--nbval` (se comparan las salidas), cada uno con su espacio;
4. los cuadernos del alumno con `--nbval-lax`, uno tras otro en un solo espacio y sin resolver
   nada (solo que corran sin errores: el camino de quien ejecuta todo sin hacer los ejercicios);
5. los caminos del alumno (`tests/caminos/`): un solo espacio de la lección 00 a la 08, fallando
   y arreglando cada ejercicio, dejando alguno para luego, volviendo atrás y restaurando; cada
   camino en su parte, porque cada uno abre una lección tras otra y tarda como varias partes.

Corren tantas partes a la vez como núcleos más tres; al final, la salida de cada una, una línea por parte y el
total, con el tiempo y la CPU (usuario + sistema de todo el árbol de procesos de la parte, de
`os.wait4`). Devuelve 0 solo si todo pasa.

Los dos niveles (la regla, en curso/autor/niveles.py): sin opciones (la orden de los tests del
README) corre el nivel rápido, `nivel_rapido()`: de cada parte de tests, lo que no es profundo;
los cuadernos, enteros; de los caminos, el de humo. `--todo` corre los dos niveles, todas las
partes enteras (`partes()`), y `--profundo` solo el resto, `nivel_profundo()`: lo que `--todo`
corre y la orden del README no (`.ci/run` lo llama justo después de ella). Para editar, `--rapido`
corre lo que no es profundo ni lleva la marca `lento`, más un humo de cada cosa lenta
(`partes_rapidas`), y `--leccion N`, lo que toca la lección N, entero (`partes_de_la_leccion`).
`python -m curso medir probar` (curso/medir/perfil_de_probar.py) dice dónde se va esa CPU.

Los tests dejan la carpeta temporal del sistema como la encontraron. Para comprobarlo, cada parte
corre con su propia carpeta temporal (la variable TMPDIR, que respetan Python, SQLite, Jupyter y
Chromium) y, al terminar, esa carpeta tiene que estar vacía: si queda algo, la parte falla y dice
qué quedó. Así ninguna fuga nueva pasa sin que se vea.
"""
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from curso import rutas
from curso.autor import niveles, repetidos
from curso.material import una_vez

# Tres partes más que núcleos: buena parte del tiempo de cada parte es espera (subprocesos que
# arrancan, tiempos límite que vencen, el navegador que pinta, el servidor PostgreSQL, los núcleos
# de los cuadernos), y otras partes la aprovechan. Las cifras de cada reparto probado están en la
# nota de cierre de la sesión que lo eligió, no aquí: cambian con la máquina.
PARTES_DE_MAS = 3


# Las partes que no son cuadernos no necesitan el plugin de nbval, que tarda unos segundos en
# cargarse (importa todo Jupyter) en cada proceso de pytest.
SIN_NBVAL = ["-p", "no:nbval"]


# Los tests del curso son la parte más larga: en un solo proceso marcarían el tiempo de todo
# `probar`. Se reparten en PARTES_DEL_CURSO procesos por fichero, equilibrando lo que tarda cada uno
# según TIEMPOS: los segundos de los tests de cada fichero en cada nivel (el rápido y el profundo,
# que se reparten cada uno por lo suyo) en la última `python -m curso medir probar` (los dos
# niveles, con las partes a la vez, como corren aquí), que los apunta con los tests lentos. Un
# fichero que aún no está apuntado cuenta como la mediana de los apuntados. Es una estimación: un
# reparto desigual solo tarda más, nunca se salta nada. Para medir solo unos ficheros, en un proceso:
#
#     python -m pytest -q -p no:nbval -p curso.autor.probar tests/equipo/test_x.py
#
# (este módulo es también un complemento de pytest: ver `apuntar_tiempos`, al final). Cuatro partes
# y no dos: con dos, la más larga marcaba el final de todo `probar` mucho después que las demás.
PARTES_DEL_CURSO = 4
TIEMPOS = rutas.RAIZ / "tests" / "datos" / "tiempos_de_los_tests.json"


# Los tests del navegador (JupyterLab + Chromium) van en su carpeta, y en su propia parte; los de
# los caminos del alumno, también, y cada test (un camino) en la suya.
NAVEGADOR = rutas.RAIZ / "tests" / "navegador"
CAMINOS = rutas.RAIZ / "tests" / "caminos"


def tests_del_curso():
    """Los ficheros de tests de tests/ y sus carpetas (equipo/, lecciones/, navegador/, caminos/)."""
    return sorted((rutas.RAIZ / "tests").rglob("test_*.py"))


def caminos(humo=None):
    """[(nombre de la parte, id del test)] de cada camino del alumno: un test de tests/caminos/,
    que se llama como la primera línea de su docstring. Con `humo=True`, solo los que llevan la
    marca `humo` (el nivel rápido); con `humo=False`, los demás (los profundos)."""
    import ast
    partes = []
    for fichero in sorted(CAMINOS.glob("test_*.py")):
        relativo = fichero.relative_to(rutas.RAIZ).as_posix()
        for nodo in ast.parse(fichero.read_text(encoding="utf-8")).body:
            if isinstance(nodo, ast.FunctionDef) and nodo.name.startswith("test_"):
                marcado = any(ast.unparse(d) == "pytest.mark.humo" for d in nodo.decorator_list)
                if humo is not None and marcado != humo:
                    continue
                titulo = (ast.get_docstring(nodo) or nodo.name).splitlines()[0].rstrip(".")
                partes.append((f"camino: {titulo}", f"{relativo}::{nodo.name}"))
    return partes


NIVELES = ("rapido", "profundo")  # TIEMPOS apunta lo de cada fichero en cada nivel


def tiempos_apuntados(ruta=None, nivel=None):
    """{fichero relativo a la raíz: segundos} de `ruta` (TIEMPOS si no se da; {} si no existe): los
    de sus tests del `nivel` ("rapido" o "profundo"), o, sin nivel, la suma de los dos."""
    ruta = ruta or TIEMPOS
    datos = json.loads(ruta.read_text(encoding="utf-8")) if ruta.exists() else {}
    if not set(datos) & set(NIVELES):  # lo de antes de los dos niveles: un solo diccionario
        return datos
    if nivel is not None:
        return dict(datos.get(nivel, {}))
    suma = {}
    for de_un_nivel in datos.values():
        for fichero, segundos in de_un_nivel.items():
            suma[fichero] = round(suma.get(fichero, 0.0) + segundos, 1)
    return suma


def pesos(ficheros, apuntados):
    """{fichero: segundos estimados}: los apuntados, y la mediana de ellos para los demás."""
    conocidos = sorted(apuntados.values())
    mediana = conocidos[len(conocidos) // 2] if conocidos else 1.0
    return {f: apuntados.get(f, mediana) for f in ficheros}


def repartir_tests_del_curso(partes=PARTES_DEL_CURSO, apuntados=None, nivel=None, ficheros=None):
    """Los ficheros de tests/ (sin los del navegador ni los caminos) en `partes` listas de peso
    parecido: cada fichero, del que más tarda al que menos, a la lista que menos lleva. El peso de
    un fichero es lo que tardan sus tests del `nivel` (en cada nivel pesa otra cosa: la clase
    calificada entera está en el profundo y su humo en el rápido), o los de los dos."""
    if ficheros is None:
        ficheros = [str(p.relative_to(rutas.RAIZ)) for p in tests_del_curso()
                    if NAVEGADOR not in p.parents and CAMINOS not in p.parents]
    peso = pesos(ficheros, tiempos_apuntados(nivel=nivel) if apuntados is None else apuntados)
    listas = [[] for _ in range(partes)]
    cargas = [0] * partes
    for f in sorted(ficheros, key=lambda f: (-peso[f], f)):
        i = cargas.index(min(cargas))
        listas[i].append(f)
        cargas[i] += peso[f]
    return [sorted(lista) for lista in listas if lista]


def partes(nivel=None):
    """[(nombre, argumentos de pytest)], de la que más tarda a la que menos (se reparten mejor).
    Los tests del curso, repartidos por lo que tardan en el `nivel` (o en los dos)."""
    navegador = sorted(str(p.relative_to(rutas.RAIZ)) for p in NAVEGADOR.glob("test_*.py"))
    repartidos = repartir_tests_del_curso(nivel=nivel)
    del_curso = [(f"tests del curso ({i} de {len(repartidos)})", [*lista, *SIN_NBVAL])
                 for i, lista in enumerate(repartidos, start=1)]
    cuadernos = [("tests del navegador (JupyterLab + Chromium)", [*navegador, "-rs", *SIN_NBVAL]),
                 ("cuadernos resueltos (--nbval)",
                  ["--nbval", "--nbval-sanitize-with", "nbval_sanitizar.cfg", "solutions"]),
                 ("cuadernos del alumno, en un solo espacio (--nbval-lax)", ["--nbval-lax", "notebooks"])]
    recorridos = [(nombre, [test, *SIN_NBVAL]) for nombre, test in caminos()]
    corren, _ = repetidos.tests_que_corren(rutas.puntos_de_control())
    puntos = [(f"punto de control {numero:02d}", [*(str(t.relative_to(rutas.RAIZ)) for t in tests), *SIN_NBVAL])
              for numero, tests in sorted(corren.items(), reverse=True)]
    # El punto de control más alto corre todo lo que no se repite de los anteriores, así que es de
    # las partes más largas, como los caminos; los demás puntos de control son las más cortas, y de
    # ellos tarda más el que corre más ficheros. Si una parte larga esperara al final, empezaría
    # cuando las otras ya acaban y marcaría el tiempo de todo `probar`.
    return (del_curso + puntos[:1] + recorridos + cuadernos
            + sorted(puntos[1:], key=lambda parte: -len(parte[1])))


# --- Los dos niveles: probar, --todo y --profundo (ver curso/autor/niveles.py) --------------------

CUADERNOS = "cuadernos"  # las partes de los cuadernos (los dos pases) son enteras del nivel rápido
DE_TESTS = ("tests del curso", "punto de control", "tests del navegador")  # las que se filtran con -m


def nivel_rapido(lista=None):
    """Las partes de `python -m curso probar` (la orden del README): las de `lista` (todas,
    `partes()`, si no se da) con lo que no es profundo: los cuadernos enteros, los caminos de humo
    y, de las demás, `-m "not profundo"`."""
    lista = partes("rapido") if lista is None else lista
    de_humo = {nombre for nombre, _ in caminos(humo=True)}
    return [(nombre, [*argumentos, "-m", niveles.RAPIDO]) if nombre.startswith(DE_TESTS) else (nombre, argumentos)
            for nombre, argumentos in lista
            if nombre.startswith(DE_TESTS) or nombre.startswith(CUADERNOS) or nombre in de_humo]


def nivel_profundo(lista=None):
    """El resto de `probar --todo`, lo que `probar` no corre (`.ci/run` lo llama después de la orden
    del README): los caminos profundos enteros y, de las partes de tests, `-m profundo`. Ni los
    cuadernos ni los caminos de humo: ya corrieron."""
    lista = partes("profundo") if lista is None else lista
    profundos = {nombre for nombre, _ in caminos(humo=False)}
    return [(nombre, [*argumentos, "-m", niveles.PROFUNDO]) if nombre.startswith(DE_TESTS) else (nombre, argumentos)
            for nombre, argumentos in lista if nombre.startswith(DE_TESTS) or nombre in profundos]


# --- Las dos velocidades: --rapido y --leccion N -------------------------------------------------

# Lo lento lleva la marca `lento` (registrada en pyproject.toml): por regla, en el conftest.py de la
# raíz, cada celda de un cuaderno (nbval), cada test del navegador y cada camino del alumno; a mano,
# `@pytest.mark.lento`, lo demás que tarda como ellos (los simulacros de caídas en muchos puntos...).
# De cada clase de cosa lenta, una lleva además la marca `humo` y corre también en --rapido, para
# que ninguna clase se quede sin comprobar: el cuaderno resuelto CUADERNO_DE_HUMO, un paso de camino
# y un test del navegador; de los simulacros, las caídas en un solo punto, que no llevan la marca.
RAPIDO = f"{niveles.RAPIDO} and (not lento or humo)"
CUADERNO_DE_HUMO = "00_antes_de_empezar"

# Y lento por lo que tarda: LENTOS apunta cada test que en la última `python -m curso medir probar`
# (la suite entera, con las partes a la vez) tardó más de LENTO_S entre preparación, test y recogida,
# o gastó más de LENTO_CPU_S de CPU (la suya y la de los procesos que arrancó), y el conftest.py de
# la raíz le pone la marca `lento`. Lo escribe la medida, no una mano: un test nuevo y lento corre en
# --rapido hasta la próxima medida. De un fichero en el que todo es lento queda fuera de la lista el
# que menos tardó: es su humo, y ningún fichero se queda sin correr nada en --rapido (calificar una
# clase, arrancar un PostgreSQL, pasar mutantes...).
LENTOS = rutas.RAIZ / "tests" / "datos" / "tests_lentos.json"
# El reloj, medido con las partes a la vez, es unas dos veces y media lo que tarda el test a solas:
# bajar de 2 s marcaría medio curso por la carga. La CPU apenas cambia con ella: con medio segundo
# quedan fuera de --rapido los que más gastan sin esperar nada (las pruebas con hypothesis, un
# calificar pequeño); los que quedan dentro gastan de media unos 30 ms.
LENTO_S = 2.0
LENTO_CPU_S = 0.5


VARIABLE_LENTOS = "CURSO_LENTOS"  # otra lista en vez de LENTOS: para los tests de la regla


def lentos_apuntados(ruta=None):
    """Lo apuntado como lento en `ruta` (si no se da, la de CURSO_LENTOS o LENTOS): (ids de tests,
    fixtures compartidas); nada si no existe."""
    ruta = Path(ruta or os.environ.get(VARIABLE_LENTOS) or LENTOS)
    if not ruta.exists():
        return set(), set()
    datos = json.loads(ruta.read_text(encoding="utf-8"))
    return set(datos["tests"]), set(datos["fixtures"])


def es_lento(nodeid, compartidas, lentos):
    """¿Es lento el test `nodeid`, que pide las fixtures `compartidas`, según `lentos_apuntados`?"""
    tests, fixtures = lentos
    return nodeid in tests or any(f in fixtures for f in compartidas)


def apuntar_lentos(pruebas, ruta=None):
    """Escribe en `ruta` (LENTOS) lo lento de una pasada entera. `pruebas`: {id: {"segundos",
    "cpu", "preparacion", "nuevas", "compartidas"}}, lo que apunta `medir probar` de cada test.

    - Una fixture compartida es lenta si se preparó (`nuevas`) en una preparación de más de
      LENTO_S; lo es entonces cada test que la pide, aunque la pagara otro: sin el primero, la
      pagaría el siguiente.
    - Un test es lento si tardó más de LENTO_S o gastó más de LENTO_CPU_S de CPU.
    - De un fichero en el que todo es lento, el test que menos tardó no se apunta ni se le cuentan
      sus fixtures: es su humo.
    Devuelve cuántos tests quedan marcados."""
    fixtures = {f for p in pruebas.values() if p.get("preparacion", 0) > LENTO_S for f in p.get("nuevas", ())}
    def lento(p):
        return p["segundos"] > LENTO_S or p.get("cpu", 0) > LENTO_CPU_S or any(f in fixtures for f in p.get("compartidas", ()))
    por_fichero = {}
    for nodeid, p in pruebas.items():
        por_fichero.setdefault(nodeid.split("::")[0], []).append((p["segundos"], nodeid))
    tests, humos = {}, set()
    for lista in por_fichero.values():
        lista.sort()
        if all(lento(pruebas[n]) for _, n in lista):
            humos.add(lista[0][1])
        tests.update({n: round(s, 1) for s, n in lista if lento(pruebas[n]) and n not in humos})
    # Una fixture que pide un humo no se apunta entera: el humo la necesita; sus demás tests, sí.
    tests.update({n: round(pruebas[n]["segundos"], 1) for n in pruebas if n not in humos
                  and any(f in fixtures for f in pruebas[n].get("compartidas", ()))})
    libres = {f for h in humos for f in pruebas[h].get("compartidas", ())}
    ruta = ruta or LENTOS
    ruta.write_text(json.dumps({"tests": dict(sorted(tests.items())), "fixtures": sorted(fixtures - libres)},
                               indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(tests)


def a_rapido(lista):
    """De las partes de `lista`, las de tests del curso y de puntos de control, sin lo marcado
    `lento` salvo lo marcado `humo` (las demás, cuadernos y caminos, son enteras lentas)."""
    return [(nombre, [*argumentos, "-m", RAPIDO]) for nombre, argumentos in lista
            if nombre.startswith(("tests del curso", "punto de control"))]


def partes_rapidas():
    """Las partes de `--rapido`: `a_rapido(partes())`, una parte con los tests del navegador y de
    los caminos (de los que solo corre su humo) y el cuaderno resuelto de humo; el pase del alumno
    (--nbval-lax) no tiene humo propio: el de los cuadernos es el resuelto."""
    lentos = sorted(str(p.relative_to(rutas.RAIZ)) for d in (NAVEGADOR, CAMINOS) for p in d.glob("test_*.py"))
    cuaderno = _cuaderno(rutas.SOLUCIONES, rutas.numero_de_leccion(CUADERNO_DE_HUMO)).relative_to(rutas.RAIZ).as_posix()
    return [*a_rapido(partes()),
            ("humo del navegador y de los caminos", [*lentos, "-rs", "-m", RAPIDO, *SIN_NBVAL]),
            (f"humo de los cuadernos: {CUADERNO_DE_HUMO} (--nbval)",
             ["--nbval", "--nbval-sanitize-with", "nbval_sanitizar.cfg", cuaderno])]


def _cuaderno(carpeta, numero):
    (ruta,) = sorted(Path(carpeta).glob(f"{numero:02d}_*.ipynb"))
    return ruta


def huellas_de_la_leccion(numero):
    """Los textos que dicen que un fichero de tests toca la lección `numero`: el id entre comillas
    de cada uno de sus ejercicios ("4.1"), su módulo de comprobaciones (l04), el nombre de su punto
    de control y de su cuaderno, `puntos_de_control()[N]`, y cada explorable y material que importa
    su cuaderno resuelto (curso.explorables.carreras...)."""
    leccion = rutas.LECCIONES[numero]
    cuaderno = _cuaderno(rutas.SOLUCIONES, numero)
    texto = cuaderno.read_text(encoding="utf-8")
    ejercicios = set()
    for celda in json.loads(texto)["cells"]:
        marca = celda.get("metadata", {}).get("curso", {})
        ejercicios.update([marca["ejercicio"]] if "ejercicio" in marca else marca.get("ejercicios", {}).values())
    return sorted({*(f'"{e}"' for e in ejercicios), f"comprobaciones.l{numero:02d}", f"import l{numero:02d}",
                   leccion.get("punto", leccion["cuaderno"]), leccion["cuaderno"],
                   f"puntos_de_control()[{numero}]",
                   *re.findall(r"curso\.(?:explorables|material)\.[a-z_]+", texto)})


def tests_de_la_leccion(numero):
    """Los ficheros de tests/ (sin los caminos, que recorren todas las lecciones) que tocan la
    lección `numero`: los que contienen alguna de sus huellas."""
    huellas = huellas_de_la_leccion(numero)
    return [str(p.relative_to(rutas.RAIZ)) for p in tests_del_curso()
            if CAMINOS not in p.parents and any(h in p.read_text(encoding="utf-8") for h in huellas)]


def partes_de_la_leccion(numero):
    """Las partes de `--leccion N`: todos los tests del punto de control N, su cuaderno resuelto con
    --nbval, el del alumno con --nbval-lax y los tests del curso que la tocan (`tests_de_la_leccion`:
    sus comprobaciones, su explorable, su material)."""
    if numero not in rutas.LECCIONES:
        raise ValueError(f"No hay lección {numero}: las lecciones van de {min(rutas.LECCIONES)} "
                         f"a {max(rutas.LECCIONES)}.")
    punto = rutas.puntos_de_control()[numero]
    resuelto, del_alumno = (_cuaderno(c, numero).relative_to(rutas.RAIZ).as_posix()
                            for c in (rutas.SOLUCIONES, rutas.CUADERNOS))
    return [(f"tests del curso que tocan la lección {numero:02d}", [*tests_de_la_leccion(numero), "-rs", *SIN_NBVAL]),
            (f"punto de control {numero:02d} (todos sus tests)",
             [(punto / "tests").relative_to(rutas.RAIZ).as_posix(), *SIN_NBVAL]),
            (f"cuaderno resuelto {numero:02d} (--nbval)",
             ["--nbval", "--nbval-sanitize-with", "nbval_sanitizar.cfg", resuelto]),
            (f"cuaderno del alumno {numero:02d} (--nbval-lax)", ["--nbval-lax", del_alumno])]


def aviso_de_repetidos():
    """La línea que dice cuántos ficheros de tests de los puntos de control no se repiten."""
    corren, saltados = repetidos.tests_que_corren(rutas.puntos_de_control())
    n_corren = sum(map(len, corren.values()))
    n_saltados = sum(map(len, saltados.values()))
    return (f"Tests de los puntos de control: {n_corren} ficheros corren; {n_saltados} son copias "
            "idénticas, con los mismos módulos, de una prueba que ya corre en un punto de control "
            "posterior, y no se repiten.")


def cuenta(salida, clave):
    """El número de `clave` ("passed", "failed"...) de la última línea de pytest, o 0."""
    m = re.search(rf"(\d+) {clave}", salida.strip().split("\n")[-1] if salida.strip() else "")
    return int(m.group(1)) if m else 0


FUGA = 3  # el código de una parte cuyos tests pasan pero dejan algo en la carpeta temporal
NADA_QUE_CORRER = 5  # el de pytest cuando no queda ningún test que correr (ExitCode.NO_TESTS_COLLECTED)
MOSTRAR_COMO_MUCHO = 20  # de lo que queda en la carpeta temporal, lo que se enseña


def lo_que_queda(carpeta):
    """Lo que hay dentro de `carpeta`, con rutas relativas: lo de primer nivel y, de cada carpeta,
    hasta tres de sus entradas (para saber de quién es)."""
    carpeta = Path(carpeta)
    lineas = []
    for entrada in sorted(carpeta.iterdir()):
        lineas.append(entrada.name + ("/" if entrada.is_dir() and not entrada.is_symlink() else ""))
        if entrada.is_dir() and not entrada.is_symlink():
            dentro = sorted(p.relative_to(carpeta).as_posix() for p in entrada.iterdir())
            lineas += [f"  {p}" for p in dentro[:3]] + ([f"  … y {len(dentro) - 3} más"] if len(dentro) > 3 else [])
    return lineas


def informe_de_fuga(nombre, quedan):
    """El texto que dice qué dejó una parte en su carpeta temporal."""
    mostradas = quedan[:MOSTRAR_COMO_MUCHO]
    resto = len(quedan) - len(mostradas)
    return (f"✘ {nombre} dejó esto en la carpeta temporal (TMPDIR), que debía quedar vacía:\n"
            + "\n".join(f"    {linea}" for linea in mostradas)
            + (f"\n    … y {resto} líneas más" if resto else "") + "\n")


def cpu_de(uso):
    """Los segundos de CPU (usuario + sistema) de un `resource.struct_rusage`."""
    return uso.ru_utime + uso.ru_stime


def correr(nombre, argumentos, extra, entorno_extra=None):
    """Corre una parte en su propio pytest, con su propio espacio y su propia carpeta temporal.

    Devuelve (salida, código, segundos, lo que quedó en la carpeta temporal, segundos de CPU). Si
    los tests pasan pero dejan algo allí, el código es FUGA. La CPU es la de todo el árbol de
    procesos de la parte: `os.wait4` da la del pytest y la de cada hijo que recogió (núcleos,
    intérpretes, servidores, navegadores), que a su vez suma la de los suyos. Lo que se separa de
    su padre y nadie de la parte recoge (el servidor de PostgreSQL que `pg_ctl` deja en segundo
    plano) no cuenta: queda fuera de la cifra, que es por eso un mínimo."""
    with tempfile.TemporaryDirectory(prefix="curso-probar-", ignore_cleanup_errors=True) as tmp:
        temporal = os.path.join(tmp, "temporal")
        os.mkdir(temporal)
        # 0711: como root, el PostgreSQL de usar y tirar corre como `postgres`, que tiene que poder
        # atravesar estas carpetas para llegar a la del cluster (suya). Así el cluster también vive
        # aquí dentro, y si una parte lo deja, se ve (sin listar lo de dentro a otros usuarios).
        for carpeta in (tmp, temporal):
            os.chmod(carpeta, 0o711)
        entorno = {**os.environ, "CURSO_ESPACIO": os.path.join(tmp, "espacio"), "TMPDIR": temporal,
                   **(entorno_extra or {})}
        orden = [sys.executable, "-m", "pytest", "-q", *argumentos, *extra]
        print(f"▶ empieza {nombre}", flush=True)
        t = time.monotonic()
        proceso = subprocess.Popen(orden, cwd=rutas.RAIZ, env=entorno, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        with proceso.stdout:
            texto = proceso.stdout.read()
        # wait4 y no wait: lo recoge y da, además, lo que gastó él con sus hijos recogidos.
        _, estado, uso = os.wait4(proceso.pid, 0)
        proceso.returncode = os.waitstatus_to_exitcode(estado)
        segundos = time.monotonic() - t
        quedan = lo_que_queda(temporal)  # apuntado; al salir del with se borra con el resto
    salida = f"=== {nombre}: {' '.join(orden[1:])}\n{texto}"
    if proceso.returncode == NADA_QUE_CORRER and "-m" in argumentos:
        proceso.returncode = 0  # el filtro de su nivel no deja nada de esta parte: no es un fallo
    codigo = proceso.returncode or (FUGA if quedan else 0)
    cpu = cpu_de(uso)
    print(f"{'✔' if codigo == 0 else '✘'} termina {nombre} ({segundos:.0f} s, {cpu:.0f} s de CPU)", flush=True)
    return salida, codigo, segundos, quedan, cpu


def a_la_vez():
    """Cuántas partes corren a la vez: tantas como núcleos más PARTES_DE_MAS."""
    return (os.cpu_count() or 1) + PARTES_DE_MAS


def en_paralelo(funcion, lista):
    """[funcion(parte) de cada parte de `lista`], en su orden, `a_la_vez()` partes a la vez."""
    with ThreadPoolExecutor(max_workers=a_la_vez()) as grupo:
        return list(grupo.map(funcion, lista))


def main(argv=None, lista=None):
    """Corre las partes de `lista` (todas, `partes()`, si no se da: `probar --todo`), tantas a la
    vez como núcleos más tres (ver PARTES_DE_MAS)."""
    extra = list(argv or [])
    inicio = time.monotonic()
    lista = partes() if lista is None else lista
    print(aviso_de_repetidos())
    print(f"{len(lista)} partes, {a_la_vez()} a la vez:", flush=True)
    # Una caché de las celdas pesadas para los núcleos de todas las partes (curso/material/una_vez.py):
    # el pase del alumno, los caminos... toman lo que ya calculó otro pase con lo mismo. Si ya la
    # da quien llama (.ci/run, para que el resto de --todo aproveche lo del nivel rápido), esa.
    dada = os.environ.get(una_vez.PARA_NUCLEOS)
    with contextlib.nullcontext(dada) if dada else tempfile.TemporaryDirectory(prefix="curso-celdas-") as celdas:
        hechas = en_paralelo(lambda parte: correr(*parte, extra, {una_vez.PARA_NUCLEOS: celdas}), lista)
    filas, pasan_total, fallan_total, con_fugas = [], 0, 0, []
    for (nombre, _), (salida, codigo, segundos, quedan, cpu) in zip(lista, hechas, strict=True):
        print("\n" + salida + (informe_de_fuga(nombre, quedan) if quedan else ""), end="")
        pasan = cuenta(salida, "passed")
        fallan = cuenta(salida, "failed") + cuenta(salida, "error")
        pasan_total, fallan_total = pasan_total + pasan, fallan_total + fallan
        entradas = sum(1 for q in quedan if not q.startswith(" "))
        fuga = f"; deja {entradas} {'cosa' if entradas == 1 else 'cosas'} en la carpeta temporal" if quedan else ""
        filas.append(f"{'✔' if codigo == 0 else '✘'} {nombre}: {pasan} pasan, {fallan} fallan{fuga} "
                     f"({segundos:.0f} s, {cpu:.0f} s de CPU)")
        if quedan:
            con_fugas.append(nombre)
    print("\n=== Resumen")
    print("\n".join(filas))
    cpu_total = sum(hecha[4] for hecha in hechas)
    print(f"Tiempo total: {time.monotonic() - inicio:.0f} s; CPU total: {cpu_total:.0f} s "
          "(usuario + sistema de todas las partes y sus procesos)")
    if con_fugas:
        print(f"La carpeta temporal no queda como estaba: mira lo que dejó {', '.join(con_fugas)} (arriba).")
    else:
        print("La carpeta temporal queda como estaba: ninguna parte dejó nada en ella.")
    print(f"{pasan_total} passed, {fallan_total} failed")
    return 0 if all(hecha[1] == 0 for hecha in hechas) else 1


# --- Lo que tarda cada fichero de tests: `-p curso.autor.probar` apunta TIEMPOS -------------------------

_segundos = {}  # {fichero: segundos} de la sesión de pytest que carga este módulo como complemento


def pytest_runtest_logreport(report):
    """Suma a su fichero lo que tarda cada fase de cada test (preparación, test y recogida)."""
    fichero = report.nodeid.split("::")[0]
    _segundos[fichero] = _segundos.get(fichero, 0.0) + report.duration


def pytest_sessionfinish(session):
    """Al acabar la sesión, apunta lo medido en TIEMPOS, en el nivel de su `-m` (el rápido si no
    se dice)."""
    if _segundos:
        profundo = getattr(getattr(session, "config", None), "option", None)
        profundo = getattr(profundo, "markexpr", "") == niveles.PROFUNDO
        apuntar_tiempos(_segundos, nivel="profundo" if profundo else "rapido")


def apuntar_tiempos(segundos, ruta=None, nivel="rapido"):
    """Guarda en `ruta`, en el `nivel`, los segundos de los ficheros de tests del curso que han
    corrido; los demás apuntados se quedan como estaban, salvo los de ficheros que ya no existen."""
    ruta = ruta or TIEMPOS
    antes = json.loads(ruta.read_text(encoding="utf-8")) if ruta.exists() else {}
    # Lo de antes de los dos niveles (un solo diccionario) cuenta como del nivel rápido.
    datos = {n: dict(antes.get(n, {})) for n in NIVELES} if set(antes) & set(NIVELES) else {"rapido": antes, "profundo": {}}
    datos[nivel].update({f: round(s, 1) for f, s in segundos.items()
                         if f.startswith("tests/") and not f.startswith("tests/navegador/")})
    datos = {n: {f: s for f, s in sorted(d.items()) if (rutas.RAIZ / f).exists()} for n, d in datos.items()}
    ruta.write_text(json.dumps(datos, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# --- python -m curso probar -------------------------------------------------------------------

def argumentos_probar(analizador):
    analizador.description = ("Ejecuta los tests del curso y de los puntos de control; los "
                              "argumentos de más se pasan tal cual a pytest.")
    grupo = analizador.add_mutually_exclusive_group()
    grupo.add_argument("--todo", action="store_true",
                       help="los dos niveles: el rápido (lo de sin opciones) y el profundo")
    grupo.add_argument("--profundo", action="store_true",
                       help="solo el resto de --todo: lo que probar sin opciones no corre (.ci/run lo llama después)")
    grupo.add_argument("--rapido", action="store_true",
                       help="solo lo que no está marcado lento, más un humo de cada cosa lenta (mientras editas)")
    grupo.add_argument("--leccion", type=rutas.leccion_escrita, metavar="N",
                       help="todo lo que toca la lección N: su punto de control, sus cuadernos y sus tests")
    analizador.pasar_el_resto("pytest", "ARGUMENTOS", "los argumentos para pytest, tal cual (p. ej. -x)")
    analizador.usage = "%(prog)s [--ayuda] [--todo | --profundo | --rapido | --leccion N] [ARGUMENTOS ...]"


def orden_probar(args):
    if args.todo:
        return main(args.pytest, partes())
    if args.profundo:
        return main(args.pytest, nivel_profundo())
    if args.rapido:
        return main(args.pytest, partes_rapidas())
    if args.leccion is not None:
        try:
            lista = partes_de_la_leccion(args.leccion)
        except ValueError as e:
            print(e)
            return 2
        return main(args.pytest, lista)
    return main(args.pytest, nivel_rapido())
