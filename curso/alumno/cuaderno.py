"""Para cada cuaderno del alumno: la magia `%%modulo`, `comprobar`, `pista`, `solucion`, `preparar` y `comparar`.

Es lo que carga cada núcleo con `%load_ext`: la magia y las funciones del cuaderno, que comparten
el estado del núcleo (qué módulos sirve, qué referencias avisó, qué pistas dio).

Lo que usa cada cuaderno: la magia `%%modulo`, `comprobar`, `pista`, `solucion` y `preparar`
(y `comparar` y `comprobar_espacio`, que miran tu espacio entero contra un punto de control).

La primera celda de cada lección es

    %load_ext curso.alumno.cuaderno
    from curso.alumno.cuaderno import comprobar, pista, solucion, preparar, comparar
    preparar(N)

`%%modulo bucle` escribe la celda en `bucle.py` del espacio de trabajo (copia antes la versión que
hubiera, si era distinta), lo importa y deja sus nombres en el cuaderno. Así el alumno termina cada
lección con ficheros de verdad, como el punto de control, y `python -m curso comparar N` los compara.

`%%modulo agente --cambia` es para una lección que cambia un módulo que ya existe: la celda lleva
solo lo que cambia (una función entera, un import, una constante) y el fichero se compone con la
versión anterior, la de tu espacio (ver `curso/alumno/componer.py`). Sirve también dentro de una misma
lección, para escribir un módulo largo en dos celdas (la 04 con `resumenes`, la 06 con `agentes`):
la segunda se compone sobre lo que escribió la primera, y los ejercicios se comprueban después de
la última. Dice qué ha cambiado; con `--diff`,
además, enseña el diff, plegado. Si ese módulo tiene un ejercicio pendiente (la lección usa su
versión de referencia), el cambio va sobre la referencia, y tu versión queda en .copias/. Si la
celda sustituye una función que escribiste tú para un ejercicio (la 03 cambia el `bucle` del 1.3),
lo dice, con dónde queda tu fichero de antes (.copias/).

Si un ejercicio queda pendiente o en rojo, `comprobar` lo dice y la lección sigue con la versión
de referencia de ese módulo (la del punto de control de la lección), sin tocar el fichero del
alumno: un buscador de módulos (`REFERENCIAS`, de `curso/referencias.py`) sirve esa versión a cualquier `import` del módulo.

La regla de los módulos: cada vez que cambia lo que manda (una celda `%%modulo` escribe un fichero,
o un módulo pasa a su referencia o vuelve a tu fichero), se olvidan todos los módulos del harness
ya cargados, vengan de tu espacio o de una referencia, y se vuelven a importar, así que cualquier
import siguiente, del cuaderno o de otro módulo, da el fichero que manda ahora, y los nombres que
el cuaderno tomó de los viejos (`from reintentos import ModeloConReintentos`) pasan a ser los nuevos.

Los nombres del curso (`AYUDANTES`: `comprobar`, `pista`, `solucion`, `preparar`, `comparar`,
`comprobar_espacio`) son del curso en todo el cuaderno: si un módulo del espacio define uno (la 06
tiene `reanudar.comprobar` y `todo_junto.preparar`), la celda no lo deja en el cuaderno con ese
nombre y lo dice una vez; el módulo lo sigue teniendo (`todo_junto.preparar(...)`).

Una celda que necesita otra de más arriba que no se ejecutó (un `import hijos` sin la celda
`%%modulo hijos`, un `bd` que define otra celda) dice cuál, en una frase, en vez de una traza
(`_falta_una_celda`).

Si los casos de un ejercicio llegan al esbozo de otro (el bucle del 1.3 llama a `permitido`, que
sigue siendo el esbozo del 1.2), lo pendiente es ese otro: `comprobar` lo dice, usa la versión de
referencia de su módulo, como haría `comprobar` con él, y comprueba de nuevo.
"""
import ast
import html
import importlib
import importlib.abc
import importlib.util
import os
import re
import sys
import time
import types
from pathlib import Path

from curso import rutas
from curso.referencias import REFERENCIAS
from curso.alumno import componer, puntos
from curso.comprobaciones import esbozos
from curso.comprobaciones import ejercicios

# Los nombres que el curso deja en el cuaderno: ningún módulo del espacio los tapa (ver _publicar).
AYUDANTES = ("comprobar", "pista", "solucion", "preparar", "comparar", "comprobar_espacio")
CARPETA_DE_COPIAS = ".copias"  # dentro del espacio; comparar y restaurar no la miran
OPCIONES = ("--cambia", "--diff")  # las de %%modulo, detrás del nombre
_leccion = None  # la que empezó preparar(N): --cambia parte de su punto de control anterior
# Si vuelves a una lección con el espacio por delante: {módulo: la lección posterior que lo cambió}.
# Esos módulos no se escriben, y los que ya estaban al empezar la lección se sirven como entonces.
_delante = {}
_de_repaso = set()  # los módulos servidos por eso: que un ejercicio pase no los devuelve a tu fichero


_pistas_vistas = {}
_choques_avisados = set()  # (módulo, nombre) de los AYUDANTES que un módulo define: se dice una vez


def _instalar_buscador():
    if REFERENCIAS not in sys.meta_path:
        sys.meta_path.insert(0, REFERENCIAS)
    espacio = str(rutas.espacio())
    if espacio not in sys.path:
        sys.path.insert(0, espacio)


def _es_del_harness(modulo):
    """¿Sale `modulo` de tu espacio o de una versión de referencia (no de curso/ ni de Python)?"""
    fichero = getattr(modulo, "__file__", None)
    if not fichero:
        return False
    ruta = Path(fichero).resolve()
    return ruta.is_relative_to(rutas.espacio()) or str(ruta) in REFERENCIAS.servidas


def _olvidar():
    """Aplica la regla de los módulos (ver arriba): olvida todos los del harness, vuelve a importar
    los que había y cambia en el cuaderno los nombres que venían de los viejos por los nuevos.

    Se vuelven a importar todos, no solo el que cambió: un módulo que importó al viejo
    (`agentes` hace `from reintentos import ...`) se quedaría con él, y con sus clases; y dos
    versiones de una misma clase a la vez hacen que un `except ErrorDelModelo` no reconozca el
    error que lanza la otra. Un módulo que ahora no se puede importar se queda fuera: su error
    saldrá donde se use."""
    viejos = {n: m for n, m in list(sys.modules.items()) if m is not None and _es_del_harness(m)}
    for nombre in viejos:
        del sys.modules[nombre]
    importlib.invalidate_caches()
    nuevos = {}
    for nombre in viejos:
        try:
            nuevos[nombre] = importlib.import_module(nombre)
        except Exception:  # noqa: BLE001 - el código del alumno puede lanzar cualquier cosa
            sys.modules.pop(nombre, None)
    _renovar_nombres(viejos, nuevos)


def _nombres_del_cuaderno():
    """El diccionario de nombres del cuaderno (el `user_ns` de IPython), o None fuera de él."""
    from IPython import get_ipython
    ip = get_ipython()
    return None if ip is None else ip.user_ns


def _renovar_nombres(viejos, nuevos):
    """En el cuaderno, cada módulo viejo, y cada función o clase definida en él, por la del nuevo."""
    nombres = _nombres_del_cuaderno()
    if nombres is None:
        return
    cambio = {}  # id del objeto viejo -> el nuevo
    for nombre, viejo in viejos.items():
        nuevo = nuevos.get(nombre)
        if nuevo is None:
            continue
        cambio[id(viejo)] = nuevo
        for clave, valor in vars(viejo).items():
            definido_aqui = getattr(valor, "__module__", None) == nombre and callable(valor)
            if definido_aqui and hasattr(nuevo, clave):
                cambio[id(valor)] = getattr(nuevo, clave)
    for clave, valor in list(nombres.items()):
        if not clave.startswith("_") and id(valor) in cambio:
            nombres[clave] = cambio[id(valor)]


def _publicar(modulo):
    """Deja en el cuaderno los nombres públicos de `modulo`, salvo los del curso (`AYUDANTES`):
    `reanudar.comprobar` encima de `comprobar` rompería `comprobar("6.2")` al volver a él. El
    choque se dice una vez por módulo y nombre, con cómo usar la del módulo."""
    nombres = [n for n, v in vars(modulo).items() if not n.startswith("_")
               and not isinstance(v, types.ModuleType)
               and getattr(v, "__module__", modulo.__name__) == modulo.__name__]
    for nombre in nombres:
        if nombre in AYUDANTES and (modulo.__name__, nombre) not in _choques_avisados:
            _choques_avisados.add((modulo.__name__, nombre))
            print(f"ⓘ {modulo.__name__}.{nombre} no se deja en el cuaderno como «{nombre}»: ese nombre es "
                  f"el del curso ({nombre}(...) sigue siendo el de siempre). Si la quieres aquí: "
                  f"from {modulo.__name__} import {nombre} as {nombre}_{modulo.__name__}")
    del_cuaderno = _nombres_del_cuaderno()
    if del_cuaderno is not None:
        del_cuaderno.update({n: getattr(modulo, n) for n in nombres if n not in AYUDANTES})
    return nombres


def sin_marcas(fuente):
    """`fuente` sin las líneas de marca de las regiones de solución (el fichero queda limpio)."""
    marcas = {esbozos.INICIO, esbozos.FIN}
    return "\n".join(l for l in fuente.split("\n") if l.strip() not in marcas)


def escribir_modulo(nombre, fuente):
    """Escribe `nombre`.py en el espacio; si ya había otro texto, lo copia antes a .copias/."""
    espacio = rutas.espacio()
    espacio.mkdir(parents=True, exist_ok=True)
    ruta = espacio / f"{nombre}.py"
    texto = sin_marcas(fuente).rstrip("\n") + "\n"
    copia = None
    if ruta.exists() and ruta.read_text(encoding="utf-8") != texto:
        copias = espacio / CARPETA_DE_COPIAS
        copias.mkdir(exist_ok=True)
        copia = copias / f"{nombre}.py.{time.strftime('%Y%m%d-%H%M%S')}"
        n = 1
        while copia.exists():
            copia, n = copias / f"{nombre}.py.{time.strftime('%Y%m%d-%H%M%S')}-{n}", n + 1
        copia.write_bytes(ruta.read_bytes())
    ruta.write_text(texto, encoding="utf-8")
    _olvidar_el_bytecode(ruta)
    return ruta, copia


def _olvidar_el_bytecode(ruta):
    """Borra el .pyc de `ruta`, si lo hay. Python da un .pyc por bueno si su fichero tiene la misma
    hora, al segundo, y el mismo tamaño que cuando se compiló; una celda puede reescribir un módulo
    en el mismo segundo y con el mismo tamaño (un `<` cambiado por `>`, o Run All), y el import
    siguiente daría la versión de antes."""
    try:
        os.remove(importlib.util.cache_from_source(str(ruta)))
    except FileNotFoundError:
        pass


def _anterior(nombre):
    """(texto, de dónde sale) de la versión sobre la que compone --cambia, o None si no hay."""
    referencia = REFERENCIAS.rutas.get(nombre)
    if referencia is not None:
        return (Path(referencia).read_text(encoding="utf-8"),
                f"la versión de referencia ({Path(referencia).parent.name}: tu {nombre}.py tiene un "
                "ejercicio pendiente)")
    ruta = rutas.espacio() / f"{nombre}.py"
    if ruta.exists():
        return ruta.read_text(encoding="utf-8"), "tu versión anterior"
    carpeta = rutas.puntos_de_control().get(rutas.anterior(_leccion)) if _leccion else None
    if carpeta is not None and (carpeta / f"{nombre}.py").exists():
        return (carpeta / f"{nombre}.py").read_text(encoding="utf-8"), f"la del punto de control {rutas.anterior(_leccion):02d}"
    return None


def _mostrar_diff(diff, nombre):
    """El diff, plegado en un <details> (y en texto, para quien no vea HTML)."""
    from IPython.display import display
    display({"text/plain": diff,
             "text/html": f"<details><summary>diff de {nombre}.py</summary><pre>{html.escape(diff)}</pre></details>"},
            raw=True)


def modulo(linea, celda):
    """%%modulo NOMBRE [--cambia [--diff]]: escribe la celda (o, con --cambia, la versión anterior
    con el cambio de la celda) en NOMBRE.py del espacio, lo importa y publica sus nombres."""
    nombre, *opciones = linea.split() or [""]
    if not nombre.isidentifier():
        print(f"✘ %%modulo necesita el nombre del módulo, p. ej. «%%modulo bucle» (llegó «{nombre}»).")
        return
    raras = [o for o in opciones if o not in OPCIONES]
    if raras or ("--diff" in opciones and "--cambia" not in opciones):
        print(f"✘ %%modulo {nombre}: las opciones son --cambia y, con ella, --diff (llegó «{' '.join(opciones)}»).")
        return
    _instalar_buscador()
    if nombre in _delante:
        _no_escribir_lo_que_va_por_delante(nombre)
        return
    hecho = None
    if "--cambia" in opciones:
        anterior = _anterior(nombre)
        if anterior is None:
            print(f"✘ No encuentro {nombre}.py en tu espacio, y --cambia necesita su versión anterior: "
                  "ejecuta la primera celda de la lección (la de preparar). No se ha escrito nada.")
            return
        try:
            hecho = componer.componer(anterior[0], sin_marcas(celda), nombre)
        except componer.ErrorAlComponer as e:
            print(f"✘ {e} No se ha escrito nada: {nombre}.py sigue como estaba.")
            return
        celda = hecho.texto
    ruta, copia = escribir_modulo(nombre, celda)
    desde_la_referencia = REFERENCIAS.rutas.pop(nombre, None) is not None  # se acabó la referencia
    _olvidar()
    try:
        nuevo = importlib.import_module(nombre)
    except Exception as exc:  # noqa: BLE001 - el código del alumno puede lanzar cualquier cosa
        print(f"✘ {ruta.name} está escrito, pero no se puede importar: {ejercicios.describir(exc)}")
        return
    nombres = _publicar(nuevo)
    if hecho is not None:
        print(f"✎ {ruta.name} escrito en tu espacio: {anterior[1]}, con el cambio de esta celda")
        print("\n".join("  " + linea for linea in hecho.resumen()))
        if copia is not None and desde_la_referencia:
            print(f"  (tu versión, con el ejercicio pendiente, está copiada en {CARPETA_DE_COPIAS}/)")
        elif copia is not None:
            for linea in _tuyas_sustituidas(nombre, anterior[0], hecho, copia):
                print(linea)
        if "--diff" in opciones:
            _mostrar_diff(componer.diferencias(anterior[0], hecho.texto, nombre), nombre)
        return
    print(f"✎ {ruta.name} escrito en tu espacio: define {', '.join(nombres) or 'nada'}")
    if copia is not None:
        print(f"  (la versión que había en tu espacio, distinta, está copiada en {CARPETA_DE_COPIAS}/)")


def _piezas_de_ejercicio(nombre):
    """{función o clase: ejercicio} de las de `nombre`.py que escribe el alumno en un ejercicio: las
    que tienen una región de solución en la celda del ejercicio del cuaderno resuelto."""
    suyas = {}
    for e in ejercicios.cargar_registro().values():
        if e.modulo != nombre:
            continue
        try:
            fuente = ejercicios.celda_resuelta(e.id).source
        except (LookupError, OSError):
            continue
        codigo = fuente.split("\n", 1)[1] if fuente.startswith("%%") else fuente
        for pieza in componer.piezas(codigo, f"La celda del ejercicio {e.id}")[0]:
            if pieza.tipo in componer.DEFINICIONES and any(l.strip() == esbozos.INICIO for l in pieza.texto):
                suyas[pieza.clave] = e.id
    return suyas


def _version_del_curso(nombre):
    """{pieza: texto} de `nombre`.py tal como lo deja el curso antes de esta lección (el punto de
    control anterior; sin lección en curso, {}: entonces todo cuenta como tuyo)."""
    carpeta = rutas.puntos_de_control().get(rutas.anterior(_leccion)) if _leccion else None
    if carpeta is None or not (carpeta / f"{nombre}.py").exists():
        return {}
    texto = (carpeta / f"{nombre}.py").read_text(encoding="utf-8")
    return {p.clave: p.texto for p in componer.piezas(texto, f"{nombre}.py del curso")[0]}


def _tuyas_sustituidas(nombre, anterior, hecho, copia):
    """Las líneas que avisan de que la celda --cambia ha sustituido una función que escribiste tú
    para un ejercicio (distinta de la del curso): cuál, de qué ejercicio, y dónde queda tu fichero
    de antes. Las celdas --cambia sustituyen piezas enteras; sin este aviso, «tu versión anterior,
    con el cambio de esta celda» haría creer que tu código sigue ahí."""
    cambiadas = {n.removesuffix("()") for n in hecho.cambia}
    de_ejercicio = {p: id for p, id in _piezas_de_ejercicio(nombre).items() if p in cambiadas}
    if not de_ejercicio:
        return []
    del_curso = _version_del_curso(nombre)
    tuyas = {p.clave: p.texto for p in componer.piezas(anterior, f"Tu {nombre}.py anterior")[0]}
    sustituidas = [(p, id) for p, id in de_ejercicio.items() if tuyas.get(p) != del_curso.get(p)]
    if not sustituidas:
        return []
    que = ejercicios.enumerar_textos([f"{p}() (la de tu ejercicio {id})" for p, id in sustituidas])
    return [f"  ⚠ Esta celda sustituye entera tu {que} por la de la celda: tu código de esa función ya "
            f"no está en {nombre}.py. Tu {nombre}.py de antes queda en {CARPETA_DE_COPIAS}/{copia.name}, "
            "dentro de tu espacio. Si quieres seguir con tu versión, pon en esta celda tu función con el "
            "cambio y vuelve a ejecutarla."]


def usar_referencia(modulo, leccion):
    """Desde ahora, `import modulo` da la versión del punto de control `leccion`, no la del alumno."""
    carpeta = rutas.puntos_de_control().get(leccion)
    ruta = carpeta / f"{modulo}.py" if carpeta else None
    if ruta is None or not ruta.exists():
        return None
    _instalar_buscador()
    REFERENCIAS.rutas[modulo] = str(ruta)
    _olvidar()
    cargado = _importar_la_referencia(modulo, carpeta, leccion)
    if cargado is not None:
        _publicar(cargado)
    return ruta


def _importar_la_referencia(modulo, carpeta, leccion):
    """Importa la referencia de `modulo` (ya puesta en REFERENCIAS). Si importa un módulo que tu
    espacio no tiene y el punto de control sí (uno nuevo en la lección, cuya celda %%modulo no se
    ejecutó: `subagentes` importa `hijos`), sirve también ese desde el punto de control, y lo dice.
    Si aun así no se puede importar, lo dice en una frase y devuelve None (nunca una traza)."""
    while True:
        try:
            return importlib.import_module(modulo)
        except ModuleNotFoundError as exc:
            falta = exc.name
            if (falta and falta not in REFERENCIAS.rutas and (carpeta / f"{falta}.py").exists()
                    and not (rutas.espacio() / f"{falta}.py").exists()):
                REFERENCIAS.rutas[falta] = str(carpeta / f"{falta}.py")
                print(f"  {falta}.py no está en tu espacio (lo escribe la celda «%%modulo {falta}»"
                      f"{_de_la_leccion(falta)}): uso también el del punto de control {leccion:02d}.")
                continue
            error = exc
        except Exception as exc:  # noqa: BLE001 - la referencia importa módulos del alumno
            error = exc
        print(f"✘ No puedo cargar {modulo}.py del punto de control {leccion:02d}: "
              f"{ejercicios.describir(error)}. Ejecuta las celdas de la lección en orden desde arriba.")
        return None


def _de_la_leccion(modulo):
    """« de la lección NN», la primera que escribe `modulo`.py (o nada si ninguna lo escribe)."""
    for numero, leccion in sorted(rutas.LECCIONES.items()):
        if f"{modulo}.py" in leccion["ficheros"]:
            return f" de la lección {numero:02d}"
    return ""


def _no_escribir_lo_que_va_por_delante(nombre):
    """Una celda %%modulo de una lección a la que has vuelto, para un módulo que una lección
    posterior ya cambió: escribirla desharía ese cambio. No se escribe; la lección sigue con la
    versión del punto de control de esta lección."""
    k = _delante[nombre]
    print(f"✘ No escribo {nombre}.py: tu espacio va por delante de esta lección (la lección {k:02d} "
          f"lo cambió), y esta celda es de la {_leccion:02d}: escribirla desharía lo de la {k:02d}. "
          "Tu fichero no se toca.")
    if usar_referencia(nombre, _leccion) is not None:
        _de_repaso.add(nombre)
        print(f"  La lección sigue con {nombre}.py del punto de control {_leccion:02d}. Para rehacer "
              f"la lección con tu código desde aquí: python -m curso restaurar {rutas.anterior(_leccion)} "
              "(antes guarda tu espacio entero en una copia).")


def _repasar(leccion):
    """Si vuelves a `leccion` con el espacio por delante, los módulos que cambiaron después y que
    la lección ya tenía al empezar se sirven desde el punto de control anterior, como cuando se
    escribió; lo dice una vez. Tus ficheros no se tocan."""
    global _delante
    for modulo in _de_repaso:
        REFERENCIAS.rutas.pop(modulo, None)
    _de_repaso.clear()
    delante = puntos.por_delante(leccion)
    _delante = {Path(f).stem: k for f, k in delante.items() if f.endswith(".py")}
    anterior = rutas.puntos_de_control().get(rutas.anterior(leccion))
    servidos = sorted(m for m in _delante if anterior is not None and (anterior / f"{m}.py").exists())
    for modulo in servidos:
        REFERENCIAS.rutas[modulo] = str(anterior / f"{modulo}.py")
        _de_repaso.add(modulo)
    if not _delante:
        return
    hechas = sorted(set(_delante.values()))
    print(f"Tu espacio va por delante de esta lección: ya tiene lo de "
          f"{'la lección' if len(hechas) == 1 else 'las lecciones'} "
          f"{ejercicios.enumerar_textos([f'{k:02d}' for k in hechas])}.", end=" ")
    if servidos:
        print(f"Para que la lección {leccion:02d} funcione como se escribió, usa "
              f"{ejercicios.enumerar_textos([f'{m}.py' for m in servidos])} del punto de control "
              f"{rutas.anterior(leccion):02d}; los tuyos no se tocan.", end=" ")
    print(f"Si quieres rehacerla con tu código desde aquí: python -m curso restaurar {rutas.anterior(leccion)} "
          "(antes guarda tu espacio entero en una copia).")


def _evaluar_con_tus_modulos(id, objetivo=None, salvo=()):
    """`ejercicios.evaluar(id, objetivo)` con tu código de ahora: los módulos que el repaso sirve
    desde un punto de control anterior (ver `_repasar`) se importan de tu espacio mientras dura.

    Un ejercicio se comprueba con tu fichero, y tu fichero es el de ahora: tu permisos.py de la
    lección 05 importa `CATALOGO` de entorno.py, que el entorno.py del punto de control 02 no tiene;
    comprobar el 1.2 con ese entorno.py lo daba por pendiente (no se puede importar) estando hecho.
    Los de `salvo` (módulos con un ejercicio pendiente, servidos por eso) siguen con su referencia.
    Al acabar, todo queda como estaba: el cuaderno sigue con lo que el repaso sirve."""
    apartar = {m for m in _de_repaso if m in REFERENCIAS.rutas and m not in salvo}
    if not apartar:
        return ejercicios.evaluar(id, objetivo)
    quitadas = {m: REFERENCIAS.rutas.pop(m) for m in apartar}
    cargados = {n: m for n, m in list(sys.modules.items()) if m is not None and _es_del_harness(m)}
    for nombre in cargados:
        del sys.modules[nombre]
    importlib.invalidate_caches()
    try:
        return ejercicios.evaluar(id, objetivo)
    finally:
        for nombre, m in list(sys.modules.items()):
            if m is not None and _es_del_harness(m):
                del sys.modules[nombre]
        sys.modules.update(cargados)
        REFERENCIAS.rutas.update(quitadas)


def _buscar(id):
    """El ejercicio `id`, o None después de decir cuáles hay."""
    try:
        return ejercicios.buscar(id)
    except KeyError as exc:
        print(f"✘ {exc.args[0]}")
        return None


def _referencias_para(e, resultado):
    """Los ejercicios de otros módulos cuyo esbozo alcanzaron los casos de `e` y que ahora se
    sirven con su versión de referencia (como si se hubieran comprobado pendientes)."""
    cambiados = []
    for otro in resultado.esperando_a:
        b = ejercicios.REGISTRO.get(otro)
        if b is None or not b.modulo or b.modulo == e.modulo or b.modulo in REFERENCIAS.rutas:
            continue  # el esbozo está en el mismo módulo (o ya se usa la referencia): hay que terminarlo
        if usar_referencia(b.modulo, b.leccion) is not None:
            cambiados.append(b)
    return cambiados


def comprobar(id, objetivo=None):
    """Comprueba el ejercicio `id` ("1.2") e imprime una línea por caso, ✔ o ✘."""
    e = _buscar(id)
    if e is None:
        return
    resultado = _evaluar_con_tus_modulos(id, objetivo)
    while resultado.solo_espera:
        cambiados = _referencias_para(e, resultado)
        if not cambiados:
            break
        uno = len(cambiados) == 1
        modulos = ejercicios.enumerar_textos(
            [f"{b.modulo}.py (punto de control {b.leccion:02d})" for b in cambiados])
        print(f"{ejercicios.siguen_pendientes(b.id for b in cambiados)} y los casos del {id} llegan "
              f"a {'su esbozo' if uno else 'sus esbozos'}: compruebo el {id} con la versión de "
              f"referencia de {modulos}, que es la que usará el resto de la lección. "
              f"{'Tu fichero sigue intacto' if uno else 'Tus ficheros siguen intactos'} en tu espacio.\n")
        resultado = _evaluar_con_tus_modulos(id, objetivo)
    print(ejercicios.informe(resultado))
    if resultado.aprobado:
        if e.modulo and e.modulo in REFERENCIAS.rutas and e.modulo not in _de_repaso:
            REFERENCIAS.rutas.pop(e.modulo)
            _olvidar()
            _publicar(importlib.import_module(e.modulo))
        return
    if e.modulo:
        ruta = usar_referencia(e.modulo, e.leccion)
        if ruta is not None:
            print(f"Mientras tanto, la lección sigue con la versión de referencia de {e.modulo}.py "
                  f"(punto de control {e.leccion:02d}); tu fichero sigue intacto en tu espacio.")


def pista(id):
    """La siguiente pista del ejercicio `id`: una más cada vez que la pides."""
    e = _buscar(id)
    if e is None:
        return
    vistas = _pistas_vistas.get(id, 0)
    if vistas >= len(e.pistas):
        print(f"Ya has visto las {len(e.pistas)} pistas del ejercicio {id}. "
              f"Si quieres ver la solución: solucion(\"{id}\").")
        return
    _pistas_vistas[id] = vistas + 1
    print(f"Pista {vistas + 1} de {len(e.pistas)} · ejercicio {id}\n{e.pistas[vistas]}")
    if vistas + 1 < len(e.pistas):
        print(f"(Otra pista: vuelve a ejecutar pista(\"{id}\").)")


def solucion(id):
    """La solución de referencia del ejercicio `id`: el código de su función en el punto de control."""
    e = _buscar(id)
    if e is None:
        return
    print(ejercicios.fuente_de_referencia(e))


def preparar(leccion):
    """Empieza la lección `leccion` desde el punto de control anterior.

    Copia al espacio lo que falte del punto de control anterior (sin sobrescribir nada) y, si
    algún ejercicio de una lección anterior sigue pendiente o en rojo, la lección usa la versión
    de ese módulo del punto de control anterior, y lo dice. Tu fichero no se toca.

    Si vuelves a una lección que ya pasaste (tu espacio tiene lo de lecciones posteriores), la
    lección usa, de los módulos que cambiaron después, la versión del punto de control anterior,
    como cuando se escribió, y sus celdas %%modulo no escriben encima de esos módulos (ver
    `_repasar`). Lo dice una vez, con la orden para rehacerla desde ahí. Tus ejercicios, en cambio,
    se comprueban con tus módulos de ahora (ver `_evaluar_con_tus_modulos`): lo que ya hiciste no
    sale pendiente por volver.
    """
    global _leccion
    if isinstance(leccion, str):  # «3b»: la lección intercalada, por su nombre
        leccion = rutas.leccion_pedida(leccion)
    _leccion = leccion
    _instalar_buscador()
    puntos.preparar(leccion)
    _repasar(leccion)
    _olvidar()
    pendientes = _pendientes_antes_de(leccion)
    modulos = sorted({e.modulo for e in pendientes},
                     key=lambda m: min(ejercicios.clave(e.id) for e in pendientes if e.modulo == m))
    for modulo in modulos:
        if modulo in REFERENCIAS.rutas:
            ids = [e.id for e in pendientes if e.modulo == modulo]
            print(f"{ejercicios.siguen_pendientes(ids)}: esta lección usa {modulo}.py del punto "
                  f"de control {rutas.anterior(leccion):02d}. Tu fichero sigue intacto en tu espacio.")


def _pendientes_antes_de(leccion):
    """Los ejercicios de lecciones anteriores que no pasan, con la versión de referencia de su
    módulo ya puesta.

    Uno cuyos casos solo llegan a esbozos de otros ejercicios (el bucle completo de la lección 03
    llama a `llamadas_de`, que sigue siendo el esbozo del 1.1) se vuelve a comprobar con las
    referencias de esos otros: si entonces pasa, no está pendiente, y su fichero se sigue usando."""
    por_mirar = sorted((e for e in ejercicios.cargar_registro().values()
                        if e.modulo and e.leccion < leccion), key=lambda e: ejercicios.clave(e.id))
    pendientes = []
    while por_mirar:
        resultados = {e.id: _evaluar_con_tus_modulos(e.id, salvo={p.modulo for p in pendientes})
                      for e in por_mirar}
        esperan = [e for e in por_mirar if resultados[e.id].solo_espera]
        malos = [e for e in por_mirar if not resultados[e.id].aprobado and e not in esperan]
        if not malos:  # solo esperan a esbozos que no se pueden cambiar por su referencia
            malos, esperan = esperan, []
        for modulo in dict.fromkeys(e.modulo for e in malos):
            usar_referencia(modulo, rutas.anterior(leccion))
        pendientes += malos
        por_mirar = esperan
    return pendientes


def load_ipython_extension(ip):
    """Registra %%modulo, el aviso de una celda que falta y el del servidor de ensayo parado (lo
    llama `%load_ext curso.alumno.cuaderno`)."""
    ip.register_magic_function(modulo, magic_kind="cell", magic_name="modulo")
    ip.set_custom_exc((ModuleNotFoundError, NameError, TypeError), _falta_una_celda)
    if _tras_la_celda not in ip.events.callbacks["post_run_cell"]:
        ip.events.register("post_run_cell", _tras_la_celda)
    _instalar_buscador()


def _tras_la_celda(resultado):
    """Tras una celda que lanzó: si fue porque el servidor de ensayo del cuaderno está parado, lo
    dice debajo de la traza (ver `_servidor_parado`)."""
    error = getattr(resultado, "error_in_exec", None)
    if error is None:
        return
    from IPython import get_ipython
    frase = _servidor_parado(get_ipython(), error)
    if frase is not None:
        print(f"✘ {frase}")


# Una dirección de esta máquina en un mensaje de error: la de un servidor de ensayo del cuaderno.
_DIRECCION_LOCAL = re.compile(r"https?://(?:127\.0\.0\.1|localhost):(\d+)")


def _conexion_rechazada(error):
    """¿Es `error`, o algo que lo causó, una conexión rechazada (nadie escucha en ese puerto)?
    El ErrorDelModelo de api.py lo dice con su `causa`; otro cliente, con su ConnectionRefusedError."""
    vistos = set()
    while error is not None and id(error) not in vistos:
        if isinstance(error, ConnectionRefusedError) or getattr(error, "causa", None) == "rechazada":
            return True
        vistos.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _servidor_parado(ip, error):
    """Si `error` es una conexión rechazada por un servidor de ensayo que arrancó este cuaderno y ya
    está parado (la celda del final de la sección lo para; volver a una celda de antes lo encuentra
    así), la frase que dice lo que lo arregla: volver a ejecutar la celda que lo arranca. El mensaje
    del harness propone «python -m curso servidor», que arranca otro en otro puerto, mientras las
    celdas siguen llamando al de la variable del cuaderno. None si no es eso."""
    nombres = getattr(ip, "user_ns", None)
    if not nombres or not _conexion_rechazada(error):
        return None
    puertos = {int(p) for p in _DIRECCION_LOCAL.findall(str(error))}
    from curso.ensayo.servidor import PUERTO_POR_DEFECTO, ServidorEnsayo
    suyos = [(n, v) for n, v in nombres.items()
             if not n.startswith("_") and isinstance(v, ServidorEnsayo) and v.puerto in puertos]
    if not suyos:
        return None
    nombre, servidor = suyos[0]
    celda = _celda_que_define(nombre, _celda_en_curso(ip))
    arreglo = (f"vuelve a ejecutar la celda que lo arranca, {celda}, y después esta" if celda else
               f"vuelve a ejecutar la celda que arranca «{nombre}» (más arriba en esta lección), y después esta")
    return (f"{servidor.url} era el servidor de ensayo de este cuaderno («{nombre}»), y ya no está en "
            f"marcha: alguna celda lo paró ({nombre}.parar()), o el hilo que lo atendía acabó. Lo que lo "
            f"arregla: {arreglo}. «python -m curso servidor» no sirve aquí: arrancaría otro, en el puerto "
            f"{PUERTO_POR_DEFECTO}, y las celdas de este cuaderno siguen llamando a {servidor.url}.")


def _falta_una_celda(ip, tipo, error, traza, tb_offset=None):
    """Lo que enseña el cuaderno cuando una celda lanza ModuleNotFoundError, NameError o TypeError.

    Si lo que falta es un módulo del curso que no está en tu espacio (`import hijos` sin haber
    ejecutado `%%modulo hijos`), un nombre que define otra celda de esta lección (`bd`), o la
    versión de un módulo que esta lección reescribe (un TypeError con `bucle.py` aún como en el
    punto de control anterior), una frase que dice qué celda ejecutar; cualquier otro caso, la
    traza de siempre."""
    frase = _que_celda_falta(ip, error, traza)
    if frase is None:
        salida = ip.InteractiveTB.structured_traceback(tipo, error, traza, tb_offset=tb_offset)
    else:
        salida = [f"✘ {frase}"]
    ip._showtraceback(tipo, error, salida)  # IPython no enseña lo que devuelve este gancho: lo enseña él
    return salida


def _que_celda_falta(ip, error, traza):
    """La frase de `_falta_una_celda`, o None si no es de las que sabe explicar."""
    if isinstance(error, TypeError):
        return _modulos_de_antes()
    if isinstance(error, ModuleNotFoundError):
        falta = error.name or ""
        if (not falta.isidentifier() or falta in REFERENCIAS.rutas
                or (rutas.espacio() / f"{falta}.py").exists() or not _de_la_leccion(falta)):
            return None
        return (f"{falta}.py no está en tu espacio: lo escribe la celda «%%modulo {falta}»"
                f"{_de_la_leccion(falta)}. Ejecútala y vuelve a ejecutar esta; si es de una lección "
                "anterior, python -m curso restaurar la pone en tu espacio (ver el README).")
    while traza is not None and traza.tb_next is not None:
        traza = traza.tb_next
    nombre = getattr(error, "name", None)
    if traza is None or traza.tb_frame.f_globals is not ip.user_ns or not nombre:
        return None  # un NameError de dentro de un módulo es un error suyo: su traza lo dice mejor
    celda = _celda_que_define(nombre, _celda_en_curso(ip))
    if celda is None:
        return None
    return (f"«{nombre}» no está definido: lo define una celda de más arriba en esta lección, "
            f"{celda}. Ejecuta las celdas de arriba (en JupyterLab: Run ▸ Run All Above "
            "Selected Cell) y vuelve a esta.")


def _modulos_de_antes():
    """Un TypeError mientras un módulo que esta lección reescribe sigue como lo dejó el punto de
    control anterior (te saltaste su celda «%%modulo»): casi siempre, una llamada con los argumentos
    de la versión nueva a la vieja, desde tu espacio o desde la celda misma. La frase dice qué celdas
    ejecutar; None si no hay módulo así (tu propio error se queda con su traza). No mira por dónde
    pasa la traza: una celda cualquiera lanza desde su propio fichero, así que esa condición no
    distinguiría nada, y con el módulo de antes en tu espacio lo primero es ejecutar su celda."""
    if _leccion is None or _leccion not in rutas.LECCIONES or rutas.anterior(_leccion) is None:
        return None
    espacio = rutas.espacio().resolve()
    puntos = rutas.puntos_de_control()
    antes, ahora = puntos.get(rutas.anterior(_leccion)), puntos.get(_leccion)
    if antes is None or ahora is None:
        return None
    viejos = [f.removesuffix(".py") for f in rutas.LECCIONES[_leccion]["ficheros"]
              if (espacio / f).exists() and (antes / f).exists() and (ahora / f).exists()
              and (espacio / f).read_bytes() == (antes / f).read_bytes() != (ahora / f).read_bytes()]
    if not viejos:
        a_medias = _sin_su_celda_cambia(espacio, antes)
        if not a_medias:
            return None
        celdas = ", ".join(f"«%%modulo {m}»" for m in a_medias)
        return (f"{', '.join(m + '.py' for m in a_medias)} de tu espacio no tiene aún todo lo que le pone "
                f"esta lección: le falta lo de una de sus celdas {celdas}, y esta celda lo llama como lo "
                "deja esa. Ejecuta las celdas de arriba (en JupyterLab: Run ▸ Run All Above Selected Cell) "
                "y vuelve a ejecutar esta.")
    celdas = ", ".join(f"«%%modulo {m}»" for m in viejos)
    return (f"{', '.join(m + '.py' for m in viejos)} de tu espacio sigue como en el punto de control "
            f"{rutas.anterior(_leccion):02d}, y esta lección lo cambia en su celda {celdas}: esta celda "
            "lo llama como lo deja esa celda. Ejecútala y vuelve a ejecutar esta.")


def _sin_su_celda_cambia(espacio, antes):
    """Los módulos de tu espacio que son el del punto de control anterior (`antes`) con solo algunas
    de las celdas «%%modulo X --cambia» de código dado de esta lección: con dos celdas --cambia del
    mismo módulo (la 03, en agente.py), haber ejecutado una sola deja el fichero ni como el punto de
    control anterior ni como el de la lección. Un fichero que no sale así es tuyo: no se dice nada."""
    from itertools import combinations
    celdas = {}
    for fuente in _celdas_de_codigo():
        primera, _, cuerpo = fuente.strip().partition("\n")
        partes = primera.split()
        if len(partes) >= 2 and partes[0] == "%%modulo" and "--cambia" in partes[2:] \
                and esbozos.INICIO not in cuerpo and "NotImplementedError" not in cuerpo:
            celdas.setdefault(partes[1], []).append(sin_marcas(cuerpo))
    faltan = []
    for modulo, suyas in celdas.items():
        fichero, de_antes = espacio / f"{modulo}.py", antes / f"{modulo}.py"
        if len(suyas) < 2 or not fichero.exists() or not de_antes.exists():
            continue
        try:
            tuyo, base = fichero.read_text(encoding="utf-8"), de_antes.read_text(encoding="utf-8")
            for cuantas in range(1, len(suyas)):
                for algunas in combinations(suyas, cuantas):
                    texto = base
                    for celda in algunas:
                        texto = componer.componer(texto, celda, modulo).texto
                    if texto.rstrip("\n") == tuyo.rstrip("\n") and modulo not in faltan:
                        faltan.append(modulo)
        except (componer.ErrorAlComponer, OSError, SyntaxError, ValueError):
            continue
    return faltan


def _celdas_de_codigo():
    """Los textos de las celdas de código del cuaderno de la lección en curso (el de notebooks/,
    el que tiene abierto el alumno), en orden; [] si no se sabe cuál es o no se puede leer."""
    import json
    if _leccion is None or _leccion not in rutas.LECCIONES:
        return []
    ruta = Path(rutas.CUADERNOS) / f"{rutas.LECCIONES[_leccion]['cuaderno']}.ipynb"
    try:
        celdas = json.loads(ruta.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return []
    return ["".join(c.get("source", "")) for c in celdas if c.get("cell_type") == "code"]


# Lo que tiene su propio espacio de nombres: lo que se asigna dentro no queda en el cuaderno.
_AMBITOS_PROPIOS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
                    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _ligados(fuente):
    """{nombre: la línea que lo liga} de los nombres que la celda `fuente` deja en el cuaderno.

    Una celda normal deja lo que liga fuera de una función o una clase (también dentro de un `if`,
    un `for` o un `with`), no lo de dentro: la `M` local de una función no es la `M` del cuaderno.
    Una celda `%%modulo` deja lo que publica su módulo (ver `_publicar`): sus funciones, clases y
    constantes de primer nivel, no sus imports ni lo que empieza por «_». Otra magia, o un texto que
    no es Python, no liga nada que se sepa."""
    modulo = fuente.startswith("%%modulo")
    codigo = fuente.split("\n", 1)[1] if modulo and "\n" in fuente else ("" if modulo else fuente)
    if codigo.startswith("%"):
        return {}
    try:
        arbol = ast.parse(codigo)
    except SyntaxError:
        return {}
    lineas = codigo.split("\n")
    ligados = {}

    def ligar(nombre, nodo):
        if modulo and (nombre.startswith("_") or nombre in AYUDANTES):
            return
        ligados.setdefault(nombre, lineas[nodo.lineno - 1].strip())

    def recorrer(nodo):
        for hijo in ast.iter_child_nodes(nodo):
            if isinstance(hijo, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ligar(hijo.name, hijo)  # su nombre sí; lo de dentro, no
            elif isinstance(hijo, (ast.Import, ast.ImportFrom)):
                if not modulo:  # un módulo no publica lo que importa
                    for alias in hijo.names:
                        ligar((alias.asname or alias.name).split(".")[0], hijo)
            elif isinstance(hijo, ast.Name) and isinstance(hijo.ctx, ast.Store):
                ligar(hijo.id, hijo)
            elif not isinstance(hijo, _AMBITOS_PROPIOS):
                recorrer(hijo)
    recorrer(arbol)
    return ligados


def _celda_que_define(nombre, actual=None):
    """La celda de la lección en curso que deja `nombre` en el cuaderno, dicha para el alumno
    («la que empieza «…»»), o None si ninguna lo deja.

    Si se sabe qué celda se está ejecutando (`actual`, su texto) y está en el cuaderno, es la más
    cercana por encima de ella (la 01 define `M` en dos celdas: la de `atasco` es la que cuenta para
    las de después); si no se sabe, la primera. Si su primera línea es la de otra celda, se dice
    también la línea que define el nombre."""
    celdas = _celdas_de_codigo()
    hasta, cercana = len(celdas), False
    if actual is not None:
        iguales = [i for i, fuente in enumerate(celdas) if fuente.strip() == actual.strip()]
        if iguales:
            hasta, cercana = iguales[-1], True
    candidatas = [(i, _ligados(celdas[i])[nombre]) for i in range(hasta) if nombre in _ligados(celdas[i])]
    if not candidatas:
        return None
    i, linea = candidatas[-1] if cercana else candidatas[0]
    primera = celdas[i].strip().split("\n")[0]
    repetida = sum(fuente.strip().split("\n")[0] == primera for fuente in celdas) > 1
    if repetida and linea != primera:
        corta = linea if len(linea) <= 70 else linea[:69] + "…"
        return f"la que empieza «{primera}» y tiene la línea «{corta}»"
    return f"la que empieza «{primera}»"


def _celda_en_curso(ip):
    """El texto de la celda que se está ejecutando (lo último que guardó el historial), o None."""
    historial = getattr(getattr(ip, "history_manager", None), "input_hist_raw", None)
    return historial[-1] if historial else None


def comparar(n, con_soluciones=False):
    """Compara tu espacio con el punto de control `n` (como `python -m curso comparar n`); los
    ejercicios pendientes se nombran, y su solución solo se enseña con `con_soluciones=True`."""
    puntos.comparar(n, con_soluciones=con_soluciones)


def comprobar_espacio(n, limite=None):
    """Corre los tests del punto de control `n` contra tu espacio, en otro proceso, y dice una línea
    por módulo (como `python -m curso comprobar n`). `comprobar("1.3")` mira un ejercicio; esta,
    todos tus módulos a la vez por lo que hacen."""
    from curso.comprobaciones import espacio as comprobar_aparte
    comprobar_aparte.comprobar(n, limite=limite)
