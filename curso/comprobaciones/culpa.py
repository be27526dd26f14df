"""Para `comprobar N` y `calificar`: la regla de la culpa, de quién es cada fallo (la misma para las dos órdenes).

Un módulo es **culpable** si se colgó, si no se puede importar (entonces con el fichero, la línea
y el texto de esa línea), si falta y otro lo importa, o si sus propios tests fallan con todo lo
demás en la versión de referencia. Los tests son los que califican (los de cada ejercicio y los de
contrato, `curso/comprobaciones/contrato.py`), y cada uno sabe su ejercicio: el culpable nombra el
ejercicio de lo que falla (el primero cuya comprobación falla; si ninguna, el del primer test de
contrato que falla), no el primero que escribe su módulo. Un fichero que da el curso (sin
ejercicio) que falta o no se importa se nombra como tal, con la orden que lo restaura, y lo que
falla solo por él no cuenta en contra de nadie (`resultados_para`). Un módulo cuyos tests fallan solo con los demás módulos del alumno es una
**consecuencia**, y se nombra detrás de su culpable: «durable.py, por resumenes.py». Lo primero
que mirar es siempre un culpable: uno colgado, si hay; si no, uno que no se importa; si no, el
del ejercicio más temprano.

Cómo se encuentra sin correr de más (`repartir`), a partir de la corrida con el espacio entero:

1. Sin correr nada: los módulos con un error de sintaxis (se compilan, no se ejecutan), los que
   se colgaron (el módulo donde estaba el proceso, por faulthandler), los que otro no pudo
   importar (`cannot import name 'x' from 'agentes'`: le falta algo a agentes.py) y los del curso
   que faltan (`No module named 'herramientas'`).
2. Si hay alguno, una corrida de lo que falló o no llegó a correr con esos módulos en su versión
   de referencia: lo que entonces pasa es consecuencia suya.
3. Lo que sigue fallando, módulo a módulo: sus tests con ese módulo del alumno y todos los demás
   de referencia (las mismas corridas «con vecinos de referencia» que ya hacía `calificar` por
   lección, ahora por módulo). Si falla, es culpable; si pasa, es consecuencia. En un módulo con
   varios ejercicios (resumenes.py: el 4.2 y el 4.3), ejercicio a ejercicio: los tests de uno con
   las funciones de los demás ejercicios del módulo en su versión de referencia (`injertar`), así
   un fallo del 4.3 no cuenta contra el 4.2.
4. El culpable de una consecuencia: el de la traza (el módulo del alumno donde falló), uno de los
   culpables que ese módulo importa o, si no hay, el primero de los módulos del alumno que importa
   con el que, junto a él y lo demás de referencia, vuelve a fallar.

Quien llama pone la función que corre (`correr(ficheros, tests, ejercicios) -> aparte.Corrida`):
`comprobar` corre aparte; `calificar`, pasando por su caché.
"""
import ast
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas
from curso.comprobaciones import aparte
from curso.comprobaciones.contrato import UN_ARBOL_CADA_VEZ
from curso.comprobaciones.tests_del_curso import EJERCICIOS, ejercicio_de_test, fichero_de

# Por qué es culpable un módulo, en el orden en que se mira.
COLGADO, NO_SE_IMPORTA, FALTA, SUS_TESTS, CON_OTROS, JUNTOS = (
    "colgado", "no se importa", "falta", "sus tests", "con otros", "juntos")
ORDEN = {COLGADO: 0, NO_SE_IMPORTA: 1, FALTA: 1, SUS_TESTS: 2, CON_OTROS: 2, JUNTOS: 2}
CANDIDATOS_COMO_MUCHO = 6  # corridas de más, como mucho, para dar con el culpable de una consecuencia
NO_IMPORTA_NOMBRE = re.compile(r"cannot import name '(\w+)' from '(\w+)'")
SIN_MODULO = re.compile(r"No module named '(\w+)'")
SIN_ATRIBUTO = re.compile(r"module '(\w+)' has no attribute '(\w+)'")
DE_SINTAXIS = re.compile(r"\b(SyntaxError|IndentationError|TabError)\b")
EN_EL_MODULO = re.compile(r" · en (?:\S*/)?(\w+)\.py, línea \d+: `")  # lo que añade registro_de_tests


@dataclass
class Culpa:
    """Un módulo culpable (sin .py), por qué, y lo que hay que decir de él."""
    modulo: str
    por: str  # COLGADO, NO_SE_IMPORTA, FALTA, SUS_TESTS, CON_OTROS o JUNTOS
    detalle: str = ""  # «mi_agente/historial.py, línea 12: `def f(`», el test que se colgó…
    ejercicio: str = ""  # el ejercicio de lo que falla ("4.3"), si alguno
    arrastra: list = field(default_factory=list)  # los módulos cuyos tests fallan por él
    restaurar: str = ""  # si es código que da el curso, la orden que lo pone de vuelta

    @property
    def dado(self):
        """¿Es código que da el curso (ningún ejercicio lo escribe)?"""
        return bool(self.restaurar)

    def texto(self):
        """Lo que dice su línea: por qué es culpable y de qué ejercicio es (o que es código del
        curso, y cómo restaurarlo)."""
        quien = f" (lo escribe el ejercicio {self.ejercicio})" if self.ejercicio else ""
        if self.dado and self.por in (FALTA, NO_SE_IMPORTA, CON_OTROS):
            quien = f"; es código que da el curso: restáuralo con {self.restaurar}"
        que = {COLGADO: "se colgó", NO_SE_IMPORTA: "no se puede importar", FALTA: "falta en tu espacio",
               SUS_TESTS: "sus tests fallan con todo lo demás de referencia",
               CON_OTROS: "sus tests pasan, pero con él fallan los de "
                          + ", ".join(f"{m}.py" for m in self.arrastra)
                          + " (con el de referencia, pasan)",
               JUNTOS: "falla solo con tus demás módulos, y ninguno de ellos lo explica solo"}[self.por]
        return que + (f": {self.detalle}" if self.detalle else "") + quien


@dataclass
class Reparto:
    """Lo que sale de la regla: los culpables en orden (el primero es lo primero que mirar), de
    quién es consecuencia cada test que falla solo por otro, y los resultados de las corridas con
    vecinos de referencia (los de sus tests, para un culpable; los que pasan, para una consecuencia)."""
    culpables: list = field(default_factory=list)  # [Culpa]
    por: dict = field(default_factory=dict)  # {test: módulo culpable}
    aislados: dict = field(default_factory=dict)  # {test: aparte.Resultado}
    # Los que no llegaron a correr (se dejó de insistir tras los colgados) y corrieron después, con
    # los culpables de referencia, sin que ni su módulo ni su fichero de tests los usen: su resultado.
    reales: dict = field(default_factory=dict)  # {test: aparte.Resultado}
    corridas: int = 0

    def culpa_de(self, modulo):
        return next((c for c in self.culpables if c.modulo == modulo), None)

    @property
    def primero(self):
        return self.culpables[0] if self.culpables else None


# ---------------------------------------------------------------- el orden de los módulos


def ejercicio_de_cada_modulo():
    """{módulo: el primer ejercicio que lo escribe}."""
    from curso.comprobaciones import ejercicios
    registro = ejercicios.cargar_registro()
    de = {}
    for id in ejercicios.ordenados(registro):
        if registro[id].modulo:
            de.setdefault(registro[id].modulo, id)
    return de


def orden_de_los_modulos():
    """{módulo: su puesto}: el del ejercicio que lo escribe; los que no escribe ninguno, detrás de
    los de su lección, en el orden de LECCIONES."""
    from curso.comprobaciones import ejercicios
    de = ejercicio_de_cada_modulo()
    puesto = {}
    for n, leccion in sorted(rutas.LECCIONES.items()):
        for i, fichero in enumerate(leccion.get("ficheros", [])):
            m = fichero.removesuffix(".py")
            if m in de:
                puesto.setdefault(m, (*ejercicios.clave(de[m]), 0))
            else:
                puesto.setdefault(m, (n, 99, i))
    return puesto


def ordenar(culpables):
    puesto = orden_de_los_modulos()
    return sorted(culpables, key=lambda c: (ORDEN[c.por], puesto.get(c.modulo, (99, 99, 0)), c.modulo))


# ---------------------------------------------------------------- sin correr nada


def error_de_sintaxis(fichero, a_la_vista):
    """«mi_agente/historial.py, línea 12: `def f(` (SyntaxError: expected ':')», o "" si compila.
    Se compila, no se ejecuta: nada del alumno corre aquí."""
    try:
        compile(Path(fichero).read_bytes(), str(fichero), "exec", dont_inherit=True)
    except SyntaxError as error:
        texto = (error.text or "").strip()
        return (f"{a_la_vista}{Path(fichero).name}, línea {error.lineno}"
                + (f": `{texto}`" if texto else "") + f" ({type(error).__name__}: {error.msg})")
    except ValueError as error:  # bytes nulos
        return f"{a_la_vista}{Path(fichero).name}: {error}"
    return ""


def importados(fichero, modulos):
    """Los módulos de `modulos` que importa `fichero` (import x / from x import y), en orden."""
    try:
        with UN_ARBOL_CADA_VEZ:
            arbol = ast.parse(Path(fichero).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    vistos = []
    for nodo in ast.walk(arbol):
        nombres = ([a.name.split(".")[0] for a in nodo.names] if isinstance(nodo, ast.Import) else
                   [nodo.module.split(".")[0]] if isinstance(nodo, ast.ImportFrom) and nodo.module and not nodo.level
                   else [])
        vistos += [n for n in nombres if n in modulos and n not in vistos]
    return vistos


def importados_a_fondo(modulo, espacio, modulos):
    """Los módulos de `modulos` que `modulo` importa, directa o indirectamente, del espacio."""
    vistos, pendientes = [], [modulo]
    while pendientes:
        actual = pendientes.pop(0)
        for m in importados(Path(espacio) / f"{actual}.py", modulos):
            if m != modulo and m not in vistos:
                vistos.append(m)
                pendientes.append(m)
    return vistos


def que_falta(motivo, suyos, del_curso):
    """El módulo del curso que falta en el espacio y que algo quiso importar («No module named
    'herramientas'»), o None."""
    encontrado = SIN_MODULO.search(motivo or "")
    if encontrado and encontrado.group(1) in del_curso and encontrado.group(1) not in suyos:
        return encontrado.group(1)
    return None


def ejercicio_de_la_linea(fichero, linea, modulo):
    """El ejercicio de la función en la que está la línea `linea` de `fichero` (la de un error de
    sintaxis: el fichero no se puede analizar, así que se busca el último `def` sin sangría antes
    de ella), si es la de un ejercicio de `modulo`; o ""."""
    from curso.comprobaciones import ejercicios
    from curso.comprobaciones.contrato import funciones_del_ejercicio
    try:
        lineas = Path(fichero).read_text(encoding="utf-8", errors="replace").splitlines()[:max(0, linea)]
    except OSError:
        return ""
    for texto in reversed(lineas):
        definicion = re.match(r"(?:async\s+)?def\s+(\w+)", texto)
        if definicion:
            for e in ejercicios.cargar_registro().values():
                if e.modulo == modulo and definicion.group(1) in funciones_del_ejercicio(e.id):
                    return e.id
            return ""
    return ""


def culpable_de_la_importacion(motivo, suyos):
    """El módulo del alumno al que apunta un error al importar («cannot import name 'x' from
    'agentes'»: a agentes.py le falta x), o None."""
    for patron, grupo in ((NO_IMPORTA_NOMBRE, 2), (SIN_ATRIBUTO, 1)):
        encontrado = patron.search(motivo or "")
        if encontrado and encontrado.group(grupo) in suyos:
            return encontrado.group(grupo)
    return None


# ---------------------------------------------------------------- la regla


def ficheros_con(punto, espacio, suyos, del_curso, injertos=None):
    """Los ficheros de una copia: los módulos del punto de control `punto`, con los `suyos` del
    alumno encima, y todo lo del alumno que no es un módulo del curso (lo que él añadió);
    injertos: {módulo: fichero} que van en lugar del suyo (ver `injertar`)."""
    ficheros = {p.name: p for p in Path(punto).glob("*.py")}
    for relativa, origen in rutas.ficheros(espacio).items():
        modulo = relativa.removesuffix(".py")
        if "/" in relativa or not relativa.endswith(".py") or modulo in suyos or modulo not in del_curso:
            ficheros[relativa] = origen
    for modulo, fichero in (injertos or {}).items():
        ficheros[f"{modulo}.py"] = fichero
    return ficheros


def injertar(suyo, de_referencia, funciones):
    """El texto del módulo `suyo` con las funciones `funciones` (del nivel del módulo) como en
    `de_referencia`: las de los otros ejercicios del módulo, para juzgar uno solo. Una que el alumno
    no tenga va al final. None si alguno de los dos no se puede analizar o la referencia no la tiene."""
    try:
        with UN_ARBOL_CADA_VEZ:
            arbol, referencia = ast.parse(suyo), ast.parse(de_referencia)
    except (SyntaxError, ValueError):
        return None

    def definiciones(a):
        return {n.name: n for n in a.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def trozo(texto, nodo):
        lineas = texto.split("\n")
        desde = min([d.lineno for d in nodo.decorator_list] + [nodo.lineno]) - 1
        return desde, nodo.end_lineno, "\n".join(lineas[desde:nodo.end_lineno])

    suyas, buenas = definiciones(arbol), definiciones(referencia)
    if any(f not in buenas for f in funciones):
        return None
    lineas, al_final = suyo.split("\n"), []
    cambios = []
    for f in funciones:
        nueva = trozo(de_referencia, buenas[f])[2]
        if f in suyas:
            desde, hasta, _ = trozo(suyo, suyas[f])
            cambios.append((desde, hasta, nueva))
        else:
            al_final.append(nueva)
    for desde, hasta, nueva in sorted(cambios, reverse=True):
        lineas[desde:hasta] = nueva.split("\n")
    return "\n".join(lineas + [f"\n\n{t}" for t in al_final])


def _malo(resultado):
    """No pasó: falló, se colgó o no llegó a correr."""
    return resultado is None or resultado.estado not in (aparte.PASA, aparte.SALTADO)


def _falla(resultado):
    """Falló de verdad (un test que no llegó a correr no dice nada de nadie)."""
    return resultado is not None and resultado.estado in (aparte.FALLA, aparte.MUERTO, aparte.COLGADO)


def _pasa(resultado):
    return resultado is not None and resultado.estado == aparte.PASA


def repartir(espacio, punto, tests, junto, correr, modulo_de, a_la_vista="mi_agente/", a_la_vez=1,
             ejercicio_de=None):
    """El Reparto de los fallos de `junto` ({test: Resultado} de `tests` con el espacio entero).

    modulo_de(test): el módulo del que es un test (el de su ejercicio, para los que califican), o
    None si prueba varios; correr(ficheros, tests, ejercicios): una aparte.Corrida; a_la_vista: cómo
    se le enseña al alumno la carpeta de su espacio; a_la_vez: corridas del paso 3 a la vez;
    ejercicio_de: {test: ejercicio} de los que califican (los de los ejercicios, si no se dice)."""
    espacio, punto = Path(espacio), Path(punto)
    de_referencia = {p.stem for p in punto.glob("*.py")}
    suyos = {p.stem for p in espacio.glob("*.py")} & de_referencia
    del_curso = {p.stem for carpeta in rutas.puntos_de_control().values() for p in Path(carpeta).glob("*.py")}
    ejercicio_de = {**{t: ejercicio_de_test(t) for t in tests if ejercicio_de_test(t)}, **(ejercicio_de or {})}
    reparto = Reparto()
    malos = [t for t in tests if _malo(junto.get(t))]
    if not malos:
        return reparto
    escribe = ejercicio_de_cada_modulo()
    numero = rutas.numero_de_leccion(punto.name)
    culpas = {}

    def culpar(modulo, por, detalle=""):
        if (modulo in suyos or por == FALTA) and modulo not in culpas:
            dado = modulo not in escribe
            restaurar = (f"python -m curso restaurar {numero:02d} --fichero {modulo}.py"
                         if dado and numero is not None else "")
            culpas[modulo] = Culpa(modulo, por, detalle, escribe.get(modulo, ""), restaurar=restaurar)
        return culpas.get(modulo)

    # 1. Sin correr nada.
    for m in sorted(suyos):
        sintaxis = error_de_sintaxis(espacio / f"{m}.py", a_la_vista)
        if sintaxis:
            culpar(m, NO_SE_IMPORTA, sintaxis)
    sin_donde = []  # colgados sin un módulo suyo en la pila (esperaban a otro proceso, p. ej.)
    for t in malos:
        r = junto.get(t)
        if r is not None and r.estado == aparte.COLGADO:
            if r.donde in suyos:
                culpar(r.donde, COLGADO, f"{t} {r.motivo}")
            else:
                sin_donde.append(t)
        elif r is not None and que_falta(r.motivo, suyos, de_referencia):
            # un módulo del curso que no está (lo importa otro): el que falta, no el que lo importa
            culpar(que_falta(r.motivo, suyos, de_referencia), FALTA)
        elif r is not None and "no se pudo importar" in r.motivo:
            otro = culpable_de_la_importacion(r.motivo, suyos)
            en = EN_EL_MODULO.search(r.motivo)
            que = r.motivo.split(" no se pudo importar: ", 1)[-1]
            if otro:
                culpar(otro, NO_SE_IMPORTA, que)
            elif en and en.group(1) in suyos and not DE_SINTAXIS.search(r.motivo):
                # el error está en un módulo suyo al importarse (los de sintaxis ya se vieron arriba,
                # en su fichero: la traza acaba en quien lo importa)
                culpar(en.group(1), NO_SE_IMPORTA, que)

    if not any(c.por == COLGADO for c in culpas.values()):
        for t in sin_donde:  # si no se sabe de otro colgado, el suyo
            culpar(modulo_de(t), COLGADO, f"{t} {junto[t].motivo}")

    def usa(t):
        """Los módulos del alumno que usa el test `t`: los que importan su fichero y su módulo."""
        propio = modulo_de(t)
        fichero = punto / "tests" / fichero_de(t)
        directos = ([propio] if propio else []) + importados(fichero, suyos)
        return set(directos) | {m for d in directos for m in importados_a_fondo(d, espacio, suyos)}

    def ejecutar(suyos_aqui, seleccion, injertos=None):
        ids = [ejercicio_de_test(t) for t in seleccion if ejercicio_de_test(t)]
        normales = [t for t in seleccion if fichero_de(t) != EJERCICIOS]
        reparto.corridas += 1
        return correr(ficheros_con(punto, espacio, suyos_aqui, del_curso, injertos), normales, ids).resultados

    def aislar(m, seleccion, carpeta):
        """Los tests `seleccion` del módulo `m` con lo demás de referencia; si el módulo tiene varios
        ejercicios y cada test sabe el suyo, ejercicio a ejercicio, con los demás injertados."""
        from curso.comprobaciones.contrato import funciones_del_ejercicio
        del_modulo = sorted({id for t, id in ejercicio_de.items() if modulo_de(t) == m})
        de_cada = {}
        for t in seleccion:
            de_cada.setdefault(ejercicio_de.get(t), []).append(t)
        if len(del_modulo) < 2 or None in de_cada:
            return ejecutar({m}, seleccion)
        resultados = {}
        for id, suyos_tests in de_cada.items():
            otras = [f for otro in del_modulo if otro != id for f in funciones_del_ejercicio(otro)]
            if not all(funciones_del_ejercicio(otro) for otro in del_modulo if otro != id):
                resultados.update(ejecutar({m}, suyos_tests))  # no se sabe qué funciones son de cada uno
                continue
            texto = injertar((espacio / f"{m}.py").read_text(encoding="utf-8", errors="replace"),
                             (punto / f"{m}.py").read_text(encoding="utf-8"), otras)
            if texto is None:
                resultados.update(ejecutar({m}, suyos_tests))
                continue
            ruta = Path(carpeta) / id / f"{m}.py"
            ruta.parent.mkdir(parents=True)
            ruta.write_text(texto, encoding="utf-8")
            resultados.update(ejecutar({m}, suyos_tests, {m: ruta}))
        return resultados

    def culpable_para(t, entre):
        """El culpable de la consecuencia `t` entre los módulos `entre`: el de la traza, el de su
        error al importar o el primero de ellos que su módulo importa."""
        r = junto.get(t)
        for candidato in ((r.donde if r else None), culpable_de_la_importacion(r.motivo if r else "", suyos)):
            if candidato in entre and candidato != modulo_de(t):
                return candidato
        propio = modulo_de(t)
        importa = importados_a_fondo(propio, espacio, suyos) if propio else []
        for culpa in ordenar([culpas[c] for c in entre if c in culpas]):
            if culpa.modulo in importa:
                return culpa.modulo
        return None

    # 2. Con los culpables ya vistos de referencia, lo demás que falló.
    if culpas:
        otra_vez = [t for t in malos if modulo_de(t) not in culpas]
        if otra_vez:
            resultados = ejecutar(suyos - set(culpas), otra_vez)
            for t in otra_vez:
                r = resultados.get(t)
                if junto.get(t) is None or junto[t].estado == aparte.SIN_COMPROBAR:
                    if r is not None and r.estado != aparte.SIN_COMPROBAR and not set(culpas) & usa(t):
                        reparto.reales[t] = r  # no usa a ningún culpable: es lo que habría dado
                        continue
                if _pasa(r):
                    reparto.por[t] = culpable_para(t, set(culpas)) or ordenar(list(culpas.values()))[0].modulo
                    reparto.aislados[t] = r
    # 3. Lo que sigue sin explicar, módulo a módulo, con los demás de referencia.
    quedan = {}
    for t in malos:
        m = modulo_de(t)
        if t not in reparto.por and m in suyos and m not in culpas and _falla(junto.get(t)):
            quedan.setdefault(m, []).append(t)
    with tempfile.TemporaryDirectory(prefix="curso-injertos-") as carpeta, \
            ThreadPoolExecutor(max_workers=max(1, a_la_vez)) as grupo:
        aislados = dict(zip(quedan, grupo.map(lambda m: aislar(m, quedan[m], Path(carpeta) / m), quedan),
                            strict=True))
    consecuencias = {}
    for m, suyos_tests in quedan.items():
        resultados = aislados[m]
        if any(_falla(resultados.get(t)) for t in suyos_tests):
            culpa = culpar(m, SUS_TESTS)
            primero = _primero_que_falla(suyos_tests, resultados, ejercicio_de)
            culpa.detalle = f"falla {_nombre_del_test(primero)}: {resultados[primero].motivo}"
            reparto.aislados.update({t: resultados[t] for t in suyos_tests if t in resultados})
        elif all(_pasa(resultados.get(t)) for t in suyos_tests):
            consecuencias[m] = suyos_tests
            reparto.aislados.update({t: resultados[t] for t in suyos_tests if t in resultados})
    # 4. El culpable de cada consecuencia.
    for m, suyos_tests in consecuencias.items():
        culpable = next((c for t in suyos_tests for c in [culpable_para(t, set(culpas))] if c), None)
        faltan = [c for c in importados_a_fondo(m, espacio, de_referencia) if c not in suyos]
        if culpable is None and faltan:
            culpable = culpar(faltan[0], FALTA).modulo
        if culpable is None:
            candidatos = [c for c in importados_a_fondo(m, espacio, suyos) if c not in culpas]
            puesto = orden_de_los_modulos()
            candidatos = sorted(candidatos, key=lambda c: puesto.get(c, (99, 99, 0)))[:CANDIDATOS_COMO_MUCHO]
            for c in candidatos:
                resultados = ejecutar({m, c}, suyos_tests)
                if any(_falla(resultados.get(t)) for t in suyos_tests):
                    culpable = culpar(c, CON_OTROS).modulo
                    break
        if culpable is None:
            culpar(m, JUNTOS)
            for t in suyos_tests:
                reparto.aislados.pop(t, None)
            continue
        for t in suyos_tests:
            reparto.por[t] = culpable
    for t in malos:  # los de un fichero de conjunto (test_recorridos.py): por el culpable de su traza
        r = junto.get(t)
        if modulo_de(t) is None and t not in reparto.por and _falla(r) and r.donde in culpas:
            reparto.por[t] = r.donde
    for t, c in reparto.por.items():
        m = modulo_de(t)
        if m and m not in culpas[c].arrastra:
            culpas[c].arrastra.append(m)
    for culpa in culpas.values():
        culpa.ejercicio = _ejercicio_de_la_culpa(culpa, tests, junto, reparto.aislados, ejercicio_de, modulo_de,
                                                 espacio, a_la_vista) or culpa.ejercicio
    reparto.culpables = ordenar(list(culpas.values()))
    return reparto


def _primero_que_falla(tests, resultados, ejercicio_de):
    """El primer test de `tests` que falla, del ejercicio más temprano (la comprobación del
    ejercicio antes que sus tests de contrato)."""
    from curso.comprobaciones import ejercicios
    fallan = [t for t in tests if _falla(resultados.get(t))]
    return min(fallan, key=lambda t: (ejercicios.clave(ejercicio_de.get(t, "99")),
                                      not ejercicio_de_test(t), fallan.index(t)))


def _nombre_del_test(test):
    id = ejercicio_de_test(test)
    return f'la comprobación del ejercicio {id} (comprobar("{id}"))' if id else test


def _ejercicio_de_la_culpa(culpa, tests, junto, aislados, ejercicio_de, modulo_de, espacio, a_la_vista):
    """El ejercicio de lo que falla en el módulo culpable: el primero (en el orden del curso) cuya
    comprobación falla; si ninguna, el del primer test de contrato del módulo que falla; uno que no
    se importa por un error de sintaxis, el de la función en la que está; uno colgado, el de su
    test. "" si no se sabe (y entonces vale el primero que escribe el módulo)."""
    from curso.comprobaciones import ejercicios
    if culpa.dado:
        return ""
    if culpa.por == NO_SE_IMPORTA:
        linea = re.search(r", línea (\d+)", culpa.detalle)
        return ejercicio_de_la_linea(Path(espacio) / f"{culpa.modulo}.py", int(linea.group(1)), culpa.modulo) \
            if linea else ""
    if culpa.por == COLGADO:
        colgado = next((t for t in tests if t in ejercicio_de and modulo_de(t) == culpa.modulo
                        and getattr(junto.get(t), "estado", None) == aparte.COLGADO), None)
        return ejercicio_de.get(colgado, "")
    suyos = [t for t in tests if modulo_de(t) == culpa.modulo and t in ejercicio_de]
    fallan = [t for t in suyos if _falla(aislados.get(t, junto.get(t)))]
    comprobaciones = ejercicios.ordenados({ejercicio_de[t] for t in fallan if ejercicio_de_test(t)})
    if comprobaciones:
        return comprobaciones[0]
    return ejercicios.ordenados({ejercicio_de[t] for t in fallan})[0] if fallan else ""


def resultados_para(reparto, junto, modulo_de, propios=None):
    """({test: Resultado}, {test: culpable}) con que se escriben las líneas.

    Los tests de un culpable por sus tests, con lo que dieron con los demás de referencia (su
    culpa, sin la de nadie más). Una consecuencia queda como salió con el espacio entero y
    nombrando a su culpable; pero si su culpable es código que da el curso (un fichero que falta o
    no se importa), o si se dan `propios` (los módulos de una lección, en `calificar`) y su
    culpable no es uno de ellos, cuenta lo que dio con los demás de referencia: la culpa no es de
    ningún ejercicio, o es de otra lección, y no se pinta de rojo por ella."""
    resultados, por = {**junto, **reparto.reales}, {}
    por_sus_tests = {c.modulo for c in reparto.culpables if c.por == SUS_TESTS}
    for t, r in reparto.aislados.items():
        if modulo_de(t) in por_sus_tests and t in resultados:
            resultados[t] = r
    dados = {c.modulo for c in reparto.culpables if c.dado}
    for t, c in reparto.por.items():
        if (c in dados or (propios is not None and c not in propios)) and t in reparto.aislados:
            resultados[t] = reparto.aislados[t]
        else:
            por[t] = c
    return resultados, por
