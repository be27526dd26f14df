"""Para quien escribe el curso (`python -m curso medir metamorfosis [N.M ...]`): la prueba de que las comprobaciones no piden más que el texto.

Cada solución de referencia se reescribe de maneras que no cambian lo que hace (`autor/reescrituras.py`:
mensajes con otras palabras, SQL con parámetros por nombre, otros nombres, bucles ↔ comprensiones,
return temprano ↔ else, la comprobación propia en vez de `exigir_texto`), y cada reescritura pasa,
por este orden, por:

1. **el cuaderno**: `comprobar("N.M")`, es decir `ejercicios.evaluar`, sobre una copia del punto de
   control de su lección con el módulo reescrito dentro (en un proceso hijo, como `medir mutantes`);
2. **comprobar**: lo que califica `python -m curso comprobar N` (`espacio.lo_que_califica`: los
   tests de contrato y la comprobación de cada ejercicio; los de regresión no califican) en el punto
   de control de su lección y en el de cada lección posterior (07 incluida), cada uno con el módulo
   reescrito dentro, con el mismo corredor (`espacio.correr_en_partes`);
3. **calificar**: una clase con un alumno cuyo `mi_agente/` es el punto de control más alto que aún
   tiene la función reescrita, con ella dentro (`calificar.calificar_alumno`, lo que hace
   `python -m curso calificar` con cada alumno); los del cuaderno de la 02, en su cuaderno.

Un ejercicio y una clase de reescritura salen «verde en todas partes» o con el primer test que
objeta (etapa, test y su mensaje corto); «no aplica» si la clase no tiene nada que cambiar en él.
La tabla se escribe en `metamorfosis.md` (y cada veredicto en `metamorfosis.json`).

Lo que se ahorra, sin cambiar ningún veredicto:

- una reescritura que objeta en una etapa no pasa a la siguiente (se informa la primera objeción);
- en `comprobar`, las reescrituras de una misma clase que pasaron el cuaderno van juntas: un
  espacio por punto de control con todas dentro. De cada punto solo corre lo que depende (importa
  o nombra, `repetidos.dependencias`) de un módulo reescrito: lo demás da lo mismo que con el punto
  de control, que está en verde. Y lo repetido corre una vez, en el punto más alto: un fichero de
  tests idéntico que prueba módulos idénticos (`repetidos.tests_que_corren`, lo de `probar`), y la
  comprobación de un ejercicio cuyo módulo y lo que este importa son idénticos. Un test que objeta se vuelve a correr con el punto de control tal cual (si también
  falla ahí, no es una objeción: es un test roto o inestable, y se dice aparte) y, si depende de
  más de una reescritura, con cada una sola, para saber de cuál es;
- en `calificar`, igual: un alumno por punto de control con todas las reescrituras que aún siguen
  en verde; si algo sale en rojo o ámbar, se repite con un alumno por reescritura.

Uso: python -m curso medir metamorfosis [N.M ...] [--clases C,C] [--solo-cuaderno] [--limite S] [--salida F]
"""
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

from curso.autor import reescrituras
from curso.medir import de_los_tests


def _variantes():
    """tests/variantes.py (las variantes son datos de los tests, fuera del paquete)."""
    de_los_tests()
    import variantes
    return variantes


VERDE, OBJETA, NO_APLICA, SIN_PROBAR = "verde", "objeta", "no aplica", "sin probar"
CUADERNO, COMPROBAR, CALIFICAR = "cuaderno", "comprobar", "calificar"

LIMITE_CUADERNO_S = 120  # segundos para la comprobación de un ejercicio en el cuaderno (tarda 1-5)
# Segundos por test en `comprobar` y `calificar`. Con holgura, como test_contrato.py: una máquina
# cargada no debe convertir en «colgado» (y en una objeción falsa) un test lento de verdad.
LIMITE_TEST_S = 90
# Segundos por corrida entera (la de `calificar` es un proceso con todos los tests del punto 07): con
# la máquina cargada pasa de los 600 de costumbre, y lo que no llega a correr saldría «sin comprobar».
LIMITE_TOTAL_S = 3600
ANCHO_DEL_MOTIVO = 160


@dataclass
class Veredicto:
    """Lo que pasó con una reescritura: verde, o dónde objetó primero y por qué."""
    id: str
    clase: str
    estado: str = SIN_PROBAR
    etapa: str = ""      # «cuaderno», «comprobar 04», «calificar»
    test: str = ""       # el caso del cuaderno, el test del punto de control o la celda de calificar
    motivo: str = ""
    cubre: list = field(default_factory=list)  # dónde se probó: «cuaderno», «04», «05»…, «calificar»
    cambios: int = 0
    notas: list = field(default_factory=list)
    otras: list = field(default_factory=list)  # las demás objeciones de su etapa: «etapa: test — motivo»

    def objetar(self, etapa, test, motivo):
        if self.estado != OBJETA:
            self.estado, self.etapa, self.test = OBJETA, etapa, test
            self.motivo = _corto(motivo)
        else:
            self.otras.append(f"{etapa}: {test} — {_corto(motivo)}")


def _corto(texto, ancho=ANCHO_DEL_MOTIVO):
    texto = " ".join(str(texto).split())
    return texto if len(texto) <= ancho else texto[:ancho - 1] + "…"


def _nn(n):
    return f"{n:02d}"


# ---------------------------------------------------------------- 1. el cuaderno


def espacio_del_cuaderno(reg, carpeta):
    """La copia del punto de control de la lección de `reg` donde se comprueban la referencia y sus
    reescrituras (cada una escribe el módulo antes de comprobarse), una por ejercicio."""
    from curso.medir import mutantes
    suya = Path(carpeta) / f"cuaderno-{reg.id}"
    return suya / "espacio" if suya.exists() else mutantes.espacio_para(reg, suya)


def por_el_cuaderno(reg, reescritura, veredicto, carpeta):
    """La comprobación del cuaderno con la reescritura en lugar de la referencia (en un hijo)."""
    from curso.medir import mutantes
    estado, detalle, *_ = mutantes.evaluar_en_un_hijo(reg, reescritura.texto, espacio_del_cuaderno(reg, carpeta),
                                                     LIMITE_CUADERNO_S)
    veredicto.cubre.append(CUADERNO)
    if estado != "vivo":
        veredicto.objetar(CUADERNO, f'comprobar("{reg.id}")', detalle or estado)


def la_referencia_pasa(reg, carpeta):
    """¿Pasa la referencia su comprobación aquí? Si no, nada de lo demás dice nada."""
    from curso.medir import mutantes
    estado, detalle, *_ = mutantes.evaluar_en_un_hijo(reg, reg.texto, espacio_del_cuaderno(reg, carpeta),
                                                     LIMITE_CUADERNO_S)
    return estado == "vivo", detalle


# ---------------------------------------------------------------- 2. comprobar


def variante_de(reescritura):
    """La reescritura como la celda `%%modulo … --cambia` de un alumno (la `Variante` de variantes.py)."""
    variantes = _variantes()
    return variantes.Variante(reescritura.id, f"metamorfosis: {reescritura.clase}", reescritura.modulo,
                              reescritura.piezas)


def lecciones_desde(leccion):
    from curso import rutas
    return [n for n in sorted(rutas.puntos_de_control()) if n >= leccion]


def espacios_con(reescrituras_, carpeta, con_tests=True):
    """{n: (carpeta, [reescrituras puestas])}: cada punto de control desde la primera lección de
    `reescrituras_`, con las que siguen igual en él puestas como las pondría el alumno."""
    from curso import rutas
    variantes = _variantes()
    puntos = rutas.puntos_de_control()
    espacios = {}
    for n in lecciones_desde(min(_leccion(r) for r in reescrituras_)):
        espacio = Path(carpeta) / puntos[n].name
        shutil.copytree(puntos[n], espacio, ignore=shutil.ignore_patterns(
            "__pycache__", *(() if con_tests else ("tests",))))
        puestas = []
        for r in reescrituras_:
            if variantes.poner(espacio, n, [variante_de(r)]):
                puestas.append(r)
        if puestas:
            espacios[n] = (espacio, puestas)
        else:
            shutil.rmtree(espacio)
    return espacios


def _leccion(reescritura):
    from curso.comprobaciones import ejercicios
    return ejercicios.buscar(reescritura.id).leccion


def _depende(test, espacio, modulos):
    """¿Depende el fichero de tests `test` de alguno de `modulos` de `espacio`?"""
    return bool(_de_que_depende(test, espacio) & set(modulos))


def _de_que_depende(fichero, espacio):
    """Los módulos de `espacio` de los que depende `fichero` (un test o un módulo: importa o nombra)."""
    from curso.autor import repetidos
    return {p.stem for p in repetidos.dependencias(Path(fichero), Path(espacio))}


def _modulos_del_test(test, espacio):
    """Los módulos de `espacio` de los que depende el resultado de `test`: los de su fichero; y los de
    la comprobación de un ejercicio, su módulo y lo que este importa."""
    from curso.comprobaciones import tests_del_curso
    id = tests_del_curso.ejercicio_de_test(test)
    if id is None:
        return _de_que_depende(Path(espacio) / "tests" / tests_del_curso.fichero_de(test), espacio)
    modulo = Path(espacio) / f"{tests_del_curso.modulo_del_ejercicio(id)}.py"
    return {modulo.stem} | _de_que_depende(modulo, espacio)


def _huella_del_ejercicio(test, espacio):
    """Lo que decide el resultado de la comprobación de un ejercicio en `espacio`: su número y los
    bytes de su módulo y de lo que este importa. Dos puntos con la misma huella dan lo mismo."""
    import hashlib
    h = hashlib.sha256(test.encode())
    for nombre in sorted(_modulos_del_test(test, espacio)):
        h.update(nombre.encode() + b"\0" + (Path(espacio) / f"{nombre}.py").read_bytes())
    return h.hexdigest()


def lo_que_se_corre(espacios):
    """{n: [tests]} y {(n, test): [lecciones que representa]}: de lo que califica `comprobar N` en
    cada espacio (`espacio.lo_que_califica`: los tests de contrato y la comprobación de cada
    ejercicio), lo que depende de un módulo reescrito, y cada prueba repetida una sola vez, en el
    punto más alto (los ficheros de tests, con `repetidos.tests_que_corren`; la comprobación de un
    ejercicio, por `_huella_del_ejercicio`)."""
    from curso.autor import repetidos
    from curso.comprobaciones import espacio as comprobar
    from curso.comprobaciones import tests_del_curso
    corren, saltados = repetidos.tests_que_corren({n: e for n, (e, _) in espacios.items()})
    representa = {}
    for m, pares in saltados.items():
        for fichero, elegido in pares:
            representa.setdefault((elegido, fichero.name), []).append(m)
    de_cada_punto, huellas = {}, {}
    for n in sorted(espacios, reverse=True):
        espacio, puestas = espacios[n]
        modulos = {r.modulo for r in puestas}
        ficheros = {t.name for t in corren.get(n, [])}
        tests = []
        for t in comprobar.lo_que_califica(espacio):
            if not _modulos_del_test(t, espacio) & modulos:
                continue  # no depende de nada reescrito: da lo mismo que con el punto de control
            if tests_del_curso.ejercicio_de_test(t) is None:
                if tests_del_curso.fichero_de(t) in ficheros:
                    tests.append(t)
            else:
                huella = _huella_del_ejercicio(t, espacio)
                if huella in huellas:
                    representa.setdefault((huellas[huella], t), []).append(n)
                else:
                    huellas[huella] = n
                    tests.append(t)
        de_cada_punto[n] = tests
    por_test = {}
    for n, tests in de_cada_punto.items():
        for t in tests:
            clave = t if tests_del_curso.ejercicio_de_test(t) else tests_del_curso.fichero_de(t)
            por_test[n, t] = sorted([n, *representa.get((n, clave), [])])
    return dict(sorted(de_cada_punto.items())), por_test


def _correr(espacio, punto, tests, limite):
    """Los tests `tests` del punto de control `punto` contra los módulos de `espacio`, con el
    corredor de `comprobar N` (en partes, cada una en su proceso vigilado)."""
    from curso.comprobaciones import aparte
    from curso.comprobaciones import espacio as comprobar
    if not tests:
        return aparte.Corrida()
    ficheros = {p.name: p for p in Path(espacio).glob("*.py")}
    return comprobar.correr_en_partes(ficheros, punto, tests, comprobar.partes_para(tests), limite_test=limite,
                                      limite_total=LIMITE_TOTAL_S)


def _objeta(resultado):
    from curso.comprobaciones import aparte
    return resultado.estado not in (aparte.PASA, aparte.SALTADO)


def _motivo(resultado):
    caso = f"[{resultado.caso}] " if resultado.caso else ""
    return f"{resultado.estado}: {caso}{resultado.motivo}"


def por_comprobar(reescrituras_, veredictos, carpeta, limite=LIMITE_TEST_S, decir=print):
    """La etapa 2 para unas reescrituras (de una misma clase) juntas; apunta en `veredictos`
    ({(id, clase): Veredicto}) lo que cubre cada una y su primera objeción."""
    from curso import rutas
    if not reescrituras_:
        return
    puntos = rutas.puntos_de_control()
    espacios = espacios_con(reescrituras_, Path(carpeta) / "juntas")
    for n, (_, puestas) in espacios.items():
        for r in puestas:
            veredictos[r.id, r.clase].cubre.append(_nn(n))
    de_cada_punto, lecciones_de = lo_que_se_corre(espacios)
    objeciones = []  # (n, test, Resultado, espacio, puestas)
    for n, tests in de_cada_punto.items():
        espacio, puestas = espacios[n]
        inicio = time.monotonic()
        corrida = _correr(espacio, puntos[n], tests, limite)
        rojos = sorted(t for t, r in corrida.resultados.items() if _objeta(r))
        decir(f"  comprobar {_nn(n)}: {len(tests)} tests con {len(puestas)} reescrituras, "
              f"{time.monotonic() - inicio:.0f} s" + (f"; objetan {len(rojos)}" if rojos else ""), flush=True)
        if not rojos:
            continue
        # ¿Fallan también con el punto de control tal cual? Entonces no es una objeción.
        tal_cual = _correr(puntos[n], puntos[n], rojos, limite)
        for t in rojos:
            if t in tal_cual.resultados and _objeta(tal_cual.resultados[t]):
                for r in puestas:
                    veredictos[r.id, r.clase].notas.append(
                        f"{t} (punto {_nn(n)}) falla también sin reescribir nada: {_corto(_motivo(tal_cual.resultados[t]))}")
                continue
            objeciones.append((n, t, corrida.resultados[t], espacio, puestas))
    for n, t, resultado, espacio, puestas in objeciones:
        candidatas = [r for r in puestas if r.modulo in _modulos_del_test(t, espacio)] or puestas
        culpables = _de_quien(t, n, candidatas, carpeta, limite)
        lecciones = lecciones_de[n, t]
        donde = f"{COMPROBAR} {_nn(lecciones[0])}" + (f" (y {', '.join(_nn(m) for m in lecciones[1:])})"
                                                      if len(lecciones) > 1 else "")
        for r in culpables:
            _objetar_antes(veredictos[r.id, r.clase], lecciones[0], donde, t, _motivo(resultado))
        if not culpables:
            for r in candidatas:
                veredictos[r.id, r.clase].notas.append(
                    f"{t} (punto {_nn(n)}) falló con todas las reescrituras de su clase juntas y no se repite "
                    f"con ninguna sola (¿inestable?): {_corto(_motivo(resultado))}")


def _objetar_antes(veredicto, leccion, etapa, test, motivo):
    """Apunta la objeción: la primera es la de la lección más temprana; las demás van a `otras`."""
    if veredicto.estado == OBJETA and veredicto.etapa.startswith(COMPROBAR) and _nn(leccion) < veredicto.etapa.split()[1]:
        veredicto.otras.append(f"{veredicto.etapa}: {veredicto.test} — {veredicto.motivo}")
        veredicto.estado = SIN_PROBAR
    veredicto.objetar(etapa, test, motivo)


def _de_quien(test, n, candidatas, carpeta, limite):
    """De las reescrituras `candidatas`, las que hacen fallar `test` del punto `n` solas (también
    si es una sola: así una objeción se ve dos veces, y un test inestable no pasa por objeción)."""
    from curso import rutas
    variantes = _variantes()
    culpables = []
    for i, r in enumerate(candidatas):
        espacio = Path(carpeta) / f"sola-{n:02d}-{i}-{r.id}-{r.clase}"
        shutil.copytree(rutas.puntos_de_control()[n], espacio, ignore=shutil.ignore_patterns("__pycache__"))
        variantes.poner(espacio, n, [variante_de(r)])
        corrida = _correr(espacio, rutas.puntos_de_control()[n], [test], limite)
        if test in corrida.resultados and _objeta(corrida.resultados[test]):
            culpables.append(r)
        shutil.rmtree(espacio, ignore_errors=True)
    return culpables


# ---------------------------------------------------------------- 3. calificar


def punto_mas_alto(reescritura):
    """El punto de control más alto que aún tiene la función reescrita tal como la deja su lección."""
    variantes = _variantes()
    if reescritura.modulo is None:
        return None
    return max(n for n in lecciones_desde(_leccion(reescritura)) if variantes.sigue_igual(variante_de(reescritura), n))


def cuaderno_con(reescrituras_, leccion, destino):
    """El cuaderno de la lección `leccion` tal como lo tendría el alumno, con cada celda de ejercicio
    resuelta: la de una reescritura de `reescrituras_`, o la de referencia."""
    import nbformat

    from curso import rutas
    from curso.clase import cuadernos_de_la_clase as cuadernos
    from curso.comprobaciones import ejercicios
    cuaderno = nbformat.read(Path(rutas.CUADERNOS) / cuadernos.nombre_del_cuaderno(leccion), as_version=4)
    suyas = {r.id: r.texto for r in reescrituras_}
    for celda in cuaderno.cells:
        id = ((celda.get("metadata") or {}).get("curso") or {}).get("ejercicio")
        if id and celda.cell_type == "code":
            celda.source = suyas.get(id) or ejercicios.celda_resuelta(id).source
    destino.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(cuaderno, destino)


def alumno_con(reescrituras_, carpeta, nombre):
    """La carpeta de un alumno: su mi_agente/ (el punto de control más alto de las reescrituras de
    un módulo, con ellas puestas) y, si hay reescrituras de funciones del cuaderno, su cuaderno."""
    from curso import rutas
    from curso.clase import cuadernos_de_la_clase as cuadernos
    variantes = _variantes()
    suya = Path(carpeta) / nombre
    de_modulo = [r for r in reescrituras_ if r.modulo]
    if de_modulo:
        b = min(punto_mas_alto(r) for r in de_modulo)
        espacio = suya / rutas.NOMBRE_DEL_ESPACIO
        shutil.copytree(rutas.puntos_de_control()[b], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
        for r in de_modulo:
            variantes.poner(espacio, b, [variante_de(r)])
    del_cuaderno = [r for r in reescrituras_ if not r.modulo]
    for leccion in sorted({_leccion(r) for r in del_cuaderno}):
        cuaderno_con(del_cuaderno, leccion, suya / "notebooks" / cuadernos.nombre_del_cuaderno(leccion))
    return suya


def se_califica(reescritura):
    """¿Mira `calificar` este ejercicio? Los de un módulo sí; de los del cuaderno, solo los de una
    lección sin módulos propios (la 02): el 3.1 no lo califica nadie."""
    from curso.clase import calificar
    lecciones = calificar.lecciones_que_se_califican()
    l = lecciones.get(_leccion(reescritura))
    return l is not None and reescritura.id in l.ejercicios


def calificar_alumnos(carpeta, limite):
    """{nombre: Fila} de cada alumno de `carpeta`, como los califica `python -m curso calificar`."""
    from curso.clase import calificar
    from curso.clase.espacios_de_la_clase import alumnos_de
    todas = calificar.lecciones_que_se_califican()
    opciones = calificar.Opciones(todas, limite=limite, limite_total=LIMITE_TOTAL_S, cache=None,
                                  parar=threading.Event(), todas=todas)
    return {a.nombre: calificar.calificar_alumno(a, opciones) for a in alumnos_de(carpeta)}


def _celdas_que_objetan(fila):
    """[(celda, texto)] de las celdas en rojo o ámbar de una fila de calificar."""
    from curso.clase import calificar
    celdas = [*fila.celdas.values(), *([fila.todo_junto] if fila.todo_junto else [])]
    return [(c, c.texto) for c in celdas if c.estado in (calificar.ROJA, calificar.AMBAR)]


def _donde_objeta(celda):
    """(la etapa con su celda, el primer test que objeta, el motivo) de una celda de calificar."""
    from curso.clase import calificar
    nombre = "todo junto" if celda.leccion is calificar.TODO_JUNTO else f"lección {_nn(celda.leccion)}"
    c = celda.comprobacion
    mala = next((l for l in (c.lineas if c else []) if l.estado not in ("bien", "sin tests")), None)
    if mala is None:
        return f"{CALIFICAR} ({nombre})", celda.texto, celda.texto
    return f"{CALIFICAR} ({nombre})", mala.primero or mala.nombre, f"{celda.texto} — {mala.detalle}"


def por_calificar(reescrituras_, veredictos, carpeta, limite=LIMITE_TEST_S, decir=print):
    """La etapa 3 para unas reescrituras (de una misma clase): un alumno por punto de control más
    alto, con todas las suyas; si su fila no sale en verde, un alumno por reescritura."""
    califican = [r for r in reescrituras_ if se_califica(r)]
    for r in reescrituras_:
        if r not in califican:
            veredictos[r.id, r.clase].notas.append("calificar no mira este ejercicio (una función del cuaderno "
                                                   "de una lección con módulos)")
    grupos = {}
    for r in califican:
        grupos.setdefault(punto_mas_alto(r) if r.modulo else "cuaderno", []).append(r)
    clase = Path(carpeta) / "clase"
    for clave, grupo in grupos.items():
        alumno_con(grupo, clase, f"alumno-{clave}")
    inicio = time.monotonic()
    filas = calificar_alumnos(clase, limite) if grupos else {}
    decir(f"  calificar: {len(filas)} alumnos con {len(califican)} reescrituras, {time.monotonic() - inicio:.0f} s",
          flush=True)
    solos = []
    for clave, grupo in grupos.items():
        malas = _celdas_que_objetan(filas[f"alumno-{clave}"])
        if not malas:
            for r in grupo:
                veredictos[r.id, r.clase].cubre.append(CALIFICAR)
        elif len(grupo) == 1:
            _objetar_en_calificar(veredictos[grupo[0].id, grupo[0].clase], malas)
        else:
            solos += grupo
    if solos:
        otra = Path(carpeta) / "clase-de-uno-en-uno"
        for i, r in enumerate(solos):
            alumno_con([r], otra, f"alumno-{i}-{r.id}")
        filas = calificar_alumnos(otra, limite)
        for i, r in enumerate(solos):
            malas = _celdas_que_objetan(filas[f"alumno-{i}-{r.id}"])
            if malas:
                _objetar_en_calificar(veredictos[r.id, r.clase], malas)
            else:
                veredictos[r.id, r.clase].cubre.append(CALIFICAR)


def _objetar_en_calificar(veredicto, malas):
    veredicto.cubre.append(CALIFICAR)
    for celda, _ in malas:
        veredicto.objetar(*_donde_objeta(celda))


# ---------------------------------------------------------------- la medida entera


def medir(ids, clases=None, etapas=(CUADERNO, COMPROBAR, CALIFICAR), limite=LIMITE_TEST_S, decir=print):
    """({(id, clase): Veredicto}, {etapa: (segundos, segundos de CPU)}) de cada ejercicio de `ids` y
    cada clase de `clases` (todas si None), pasando por las `etapas` en orden."""
    from curso.medir import mutantes
    clases = list(clases or reescrituras.CLASES)
    veredictos, hechas, segundos = {}, [], {}
    sys.dont_write_bytecode = True  # un .pyc de otra reescritura del mismo tamaño y segundo se tomaría por esta
    with ExitStack() as pila:
        carpeta = pila.enter_context(tempfile.TemporaryDirectory(prefix="curso-metamorfosis-"))
        regiones = {id: mutantes.region(id) for id in ids}
        inicio, cpu_antes = time.monotonic(), cpu()
        postgres = pila.enter_context(ExitStack())
        if CUADERNO in etapas and any(str(reg.leccion) == "7" for reg in regiones.values()):
            _con_postgres(postgres)
        for id, reg in regiones.items():
            pasa, detalle = la_referencia_pasa(reg, carpeta) if CUADERNO in etapas else (True, "")
            for clase in clases:
                v = veredictos[id, clase] = Veredicto(id, clase)
                r = reescrituras.reescribir(reg, clase)
                if r is None:
                    v.estado = NO_APLICA
                    continue
                v.cambios = r.cambios
                if not pasa:
                    v.objetar(CUADERNO, "la referencia", f"la referencia no pasa su comprobación: {detalle}")
                    continue
                if CUADERNO in etapas:
                    por_el_cuaderno(reg, r, v, carpeta)
                hechas.append(r)
            decir(f"{id}: " + ", ".join(f"{c} {_simbolo(veredictos[id, c])}" for c in clases), flush=True)
        postgres.close()  # comprobar y calificar arrancan el suyo en cada proceso de tests, como de costumbre
        segundos[CUADERNO] = (time.monotonic() - inicio, cpu() - cpu_antes)
        for etapa, hacer in ((COMPROBAR, por_comprobar), (CALIFICAR, por_calificar)):
            if etapa not in etapas:
                continue
            inicio, cpu_antes = time.monotonic(), cpu()
            for clase in clases:
                siguen = [r for r in hechas if r.clase == clase and veredictos[r.id, clase].estado != OBJETA
                          and (r.modulo or etapa == CALIFICAR)]
                if siguen:
                    decir(f"{etapa} · {clase}: {len(siguen)} reescrituras", flush=True)
                    hacer(siguen, veredictos, Path(carpeta) / f"{etapa}-{clase}", limite, decir)
            segundos[etapa] = (time.monotonic() - inicio, cpu() - cpu_antes)
        for v in veredictos.values():
            if v.estado == SIN_PROBAR and v.cubre:
                v.estado = VERDE
    return veredictos, segundos


def cpu():
    """Los segundos de CPU de este proceso y de sus hijos ya terminados (los procesos de tests)."""
    return sum(getattr(resource.getrusage(quien), campo) for quien in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for campo in ("ru_utime", "ru_stime"))


def _con_postgres(pila):
    """Un PostgreSQL de usar y tirar (o el de CURSO_POSTGRES) para la comprobación del cuaderno de
    los ejercicios de la 07. Solo ahí: en `comprobar` y `calificar`, cada proceso de tests arranca el
    suyo, como en `comprobar 7`; uno compartido entre procesos a la vez mezclaría sus avisos
    (LISTEN/NOTIFY es de toda la base, no de un esquema)."""
    from curso.postgres.cluster import VARIABLE_DE_CONEXION, servidor_de_pruebas
    if VARIABLE_DE_CONEXION not in os.environ:
        os.environ[VARIABLE_DE_CONEXION] = pila.enter_context(servidor_de_pruebas())
        pila.callback(os.environ.pop, VARIABLE_DE_CONEXION, None)


def _simbolo(v):
    return {VERDE: "✔", OBJETA: "✘", NO_APLICA: "–", SIN_PROBAR: "✔"}.get(v.estado, "?")


# ---------------------------------------------------------------- la tabla


def tabla(veredictos, clases=None):
    """La tabla en Markdown: un ejercicio por fila, una clase de reescritura por columna."""
    from curso.comprobaciones import ejercicios
    clases = list(clases or dict.fromkeys(c for _, c in veredictos))
    ids = ejercicios.ordenados({id for id, _ in veredictos})
    filas = ["| ejercicio | " + " | ".join(clases) + " |", "|---" * (len(clases) + 1) + "|"]
    for id in ids:
        celdas = []
        for c in clases:
            v = veredictos.get((id, c))
            if v is None:
                celdas.append("")
            elif v.estado == NO_APLICA:
                celdas.append("no aplica")
            elif v.estado == OBJETA:
                celdas.append(f"✘ {v.etapa}: `{v.test}`")
            else:
                celdas.append("✔ " + _cubre(v))
        filas.append(f"| {id} | " + " | ".join(celdas) + " |")
    return "\n".join(filas)


def _cubre(v):
    """«cuaderno · 04–07 · calificar»: dónde se probó una reescritura en verde."""
    puntos = [c for c in v.cubre if c not in (CUADERNO, CALIFICAR)]
    partes = [CUADERNO] if CUADERNO in v.cubre else []
    if puntos:
        partes.append(puntos[0] if len(puntos) == 1 else f"{puntos[0]}–{puntos[-1]}")
    if CALIFICAR in v.cubre:
        partes.append(CALIFICAR)
    return " · ".join(partes)


def objeciones(veredictos):
    """Cada objeción, una línea: ejercicio, clase, etapa, test y su motivo."""
    lineas = []
    for (id, c), v in veredictos.items():
        if v.estado == OBJETA:
            lineas.append(f"- **{id} · {c}** — {v.etapa}: `{v.test}` — {v.motivo}")
            lineas += [f"  - y además {o}" for o in v.otras]
        lineas += [f"- {id} · {c}: nota: {n}" for n in v.notas]
    return "\n".join(lineas)


def informe(veredictos, segundos, clases=None):
    clases = list(clases or dict.fromkeys(c for _, c in veredictos))
    cuenta = {e: sum(1 for v in veredictos.values() if v.estado == e) for e in (VERDE, OBJETA, NO_APLICA)}
    texto = ["# Metamorfosis: las soluciones de referencia, reescritas sin cambiar lo que hacen", "",
             "Cada celda: ✔ (verde en todas partes, y dónde se probó: el cuaderno, los puntos de control de "
             "`comprobar N` y `calificar`), ✘ (la primera etapa y el primer test que objeta) o «no aplica».",
             "Las clases: " + "; ".join(f"**{c}**: {reescrituras.CLASES[c][1]}" for c in clases) + ".", "",
             tabla(veredictos, clases), "",
             f"{cuenta[VERDE]} en verde, {cuenta[OBJETA]} objetan, {cuenta[NO_APLICA]} no aplican. Tiempo (de "
             "reloj, y de CPU: este proceso y los que esperó, los tests y lo que arrancan): "
             + ", ".join(f"{e} {s:.0f} s ({c:.0f} s de CPU)" for e, (s, c) in segundos.items())
             + f"; en total {sum(s for s, _ in segundos.values()):.0f} s ({sum(c for _, c in segundos.values()):.0f} s de CPU), "
             f"con una carga media de {os.getloadavg()[1]:.1f} en los últimos 5 minutos en {os.cpu_count()} núcleos.",
             ""]
    detalle = objeciones(veredictos)
    if detalle:
        texto += ["## Las objeciones (y las notas)", "", detalle, ""]
    return "\n".join(texto)


def analizador():
    from curso.__main__ import Analizador
    a = Analizador(prog="python -m curso medir metamorfosis",
                   description="Reescribe cada solución de referencia sin cambiar lo que hace y la pasa por "
                               "el cuaderno, comprobar N (su lección y las siguientes) y calificar.")
    a.add_argument("ejercicios", nargs="*", metavar="N.M", help="los ejercicios (todos, si no se dice ninguno)")
    a.add_argument("--clases", default="", metavar="C,C",
                   help=f"solo estas clases de reescritura ({', '.join(reescrituras.CLASES)})")
    a.add_argument("--solo-cuaderno", action="store_true", help="solo la comprobación del cuaderno (rápido)")
    a.add_argument("--limite", type=float, default=LIMITE_TEST_S, metavar="S",
                   help=f"segundos como mucho por test en comprobar y calificar ({LIMITE_TEST_S} si no se dice)")
    a.add_argument("--salida", default="metamorfosis.md", metavar="FICHERO",
                   help="dónde escribir la tabla (y al lado, el .json con cada veredicto)")
    return a


def main(argumentos=()):
    """`python -m curso medir metamorfosis [N.M ...]`: la tabla. Sale con 1 si algo objeta, 2 si un
    ejercicio o una clase no existe."""
    from curso.medir.mutantes import todos_los_ejercicios
    opciones = analizador().parse_args(list(argumentos))
    todos = todos_los_ejercicios()
    ids = opciones.ejercicios or todos
    clases = [c for c in opciones.clases.split(",") if c] or list(reescrituras.CLASES)
    desconocidos = [i for i in ids if i not in todos]
    if desconocidos:
        print(f"No hay ningún ejercicio {', '.join(desconocidos)}. Los que hay: {', '.join(todos)}.")
        return 2
    otras = [c for c in clases if c not in reescrituras.CLASES]
    if otras:
        print(f"No hay ninguna clase de reescritura {', '.join(otras)}: elige entre {', '.join(reescrituras.CLASES)}.")
        return 2
    etapas = (CUADERNO,) if opciones.solo_cuaderno else (CUADERNO, COMPROBAR, CALIFICAR)
    veredictos, segundos = medir(ids, clases, etapas, opciones.limite)
    texto = informe(veredictos, segundos, clases)
    print()
    print(texto)
    salida = Path(opciones.salida)
    salida.write_text(texto, encoding="utf-8")
    salida.with_suffix(".json").write_text(json.dumps(
        {"segundos": segundos, "veredictos": [asdict(v) for v in veredictos.values()]},
        ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"Escrito en {salida} (y cada veredicto en {salida.with_suffix('.json')}).", file=sys.stderr)
    objetan = sum(1 for v in veredictos.values() if v.estado == OBJETA)
    return {"veredictos": veredictos, "segundos": segundos, "objetan": objetan, "cumple_objetivo": objetan == 0}
