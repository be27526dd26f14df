"""Para quien da el curso (`python -m curso calificar CARPETA`): el trabajo de una clase, lección a lección, en una tabla.

El orden de una calificación, de arriba abajo: encontrar los espacios, repartir, correr, escribir;
sus piezas separables están al lado, en `clase/`.

Para quien da el curso. Cada subcarpeta de CARPETA es un alumno (su nombre es su identificador);
su espacio es la carpeta `mi_agente/` que tenga dentro, a cualquier profundidad (un «Download ZIP»
de GitHub la deja en `ivan/construye-tu-agente-main/mi_agente/`), o la que tenga más módulos del
curso; si no hay ninguna, sus celdas dicen «no encuentro su espacio».

Cada celda de una lección N mira lo que esa lección añade o cambia (`LECCIONES[N]["ficheros"]`),
no el espacio entero:

- Su *nivel* es la lección más alta de la que el alumno tiene algún módulo nuevo. Una lección sin
  ninguno de sus módulos nuevos está «sin empezar» (gris), no en rojo.
- Lo que califica la lección N es el contrato de sus ejercicios, como en `comprobar N`
  (`curso/comprobaciones/contrato.py`): la comprobación de cada uno (`comprobar("N.M")`, la misma
  del cuaderno) y los tests de contrato de sus ejercicios (la marca `contrato("N.M")`), tal como
  están en el punto de control de su nivel: con sus módulos de ahora, que otras lecciones han
  cambiado después, son los que valen. Los demás tests de los puntos de control son de regresión
  del código que da el curso y no califican a nadie. Un ejercicio está hecho si pasa su contrato
  entero.
- Primero corre todo, con su espacio entero: es la columna «todo junto». Un test de la lección N
  que pasa ahí, pasa. Lo que no, lo reparte la regla de la culpa (`curso/comprobaciones/culpa.py`,
  la misma de `comprobar N`): cada módulo que falla se repite con la versión de referencia de los
  demás; si sigue fallando es culpable (con el ejercicio de lo que falla), y si no es una
  consecuencia de otro, que se nombra detrás («durable.py, por resumenes.py»). Una consecuencia de
  un culpable de otra lección, o de un fichero que da el curso y falta o no se importa, cuenta en
  la lección N lo que dio con los vecinos de referencia: así un fallo de la 03 en compactar.py, que
  usa correr.py, no pinta de rojo la 01, y un herramientas.py borrado no cuenta contra el 1.2 y el
  1.3. «Lo primero que mirar» es el primer culpable.
- Los ejercicios de la 02, que son funciones del cuaderno, se toman de las celdas de su cuaderno
  (`curso/clase/cuadernos_de_la_clase.py`).

Cada test tiene su presupuesto (`--limite`: segundos de CPU o parado, ver
`curso/comprobaciones/colgados.py`): el que se cuelga queda «colgado» (ámbar) y los demás siguen;
lo que no llega a correr se cuenta como «N sin comprobar». Al acabar cada alumno no queda en
marcha nada de lo que arrancó su código (`curso/clase/guardian.py`).

Un colgado no es un veredicto final: al acabar todos, cada alumno con algo colgado se vuelve a
calificar a solas (`otra_vez_a_solas`: solo se repite lo colgado), y lo que sale es lo que vale.

Lo que se guarda: una caché por corrida, con la huella de lo que entra en ella (los ficheros del
alumno que se copian, los tests, el punto de control y el propio curso), en
`SALIDA/.cache-de-calificar/`: volver a calificar solo corre lo que ha cambiado (y lo que se colgó,
que nunca se guarda). Las filas se
escriben en el CSV a medida que acaba cada alumno, así un Ctrl-C guarda lo hecho. La tabla, en
`notas.py`.
"""
import os
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from curso import rutas
from curso.clase import cuadernos_de_la_clase as cuadernos
from curso.clase import libros_de_notas, notas
from curso.comprobaciones import aparte, culpa, tests_del_curso, veredicto
from curso.clase.cache_de_corridas import Cache, huella_del_curso
from curso.comprobaciones.espacio import INTERRUMPIDO, agrupar_por_modulo, modulos_de
from curso.clase.espacios_de_la_clase import Alumno, alumnos_de
from curso.rutas import LECCIONES

NOMBRE_DE_LA_TABLA = "calificaciones"
CARPETA_DE_LA_CACHE = ".cache-de-calificar"
DEVOLUCIONES = "devoluciones"
TODO_JUNTO = None  # la «lección» de la columna que mira el espacio entero

# Cómo queda una celda.
VERDE, ROJA, AMBAR, GRIS = "verde", "roja", "ambar", "gris"
SIN_EMPEZAR, SIN_ESPACIO = "sin empezar", "no encuentro su espacio"
SIN_CUADERNO = "no encuentro su cuaderno ({cuaderno}: cópialo con su mi_agente/)"
A_LA_VISTA = "mi_agente/"  # cómo se escribe el espacio en los mensajes (el mismo en todos: la caché se comparte)


@dataclass
class Celda:
    leccion: int  # TODO_JUNTO para la columna «todo junto»
    estado: str
    texto: str
    comprobacion: veredicto.Comprobacion = None
    tests_total: int = 0
    ejercicios_total: int = 0
    # False si no se pudo mirar (no encuentro su espacio o su cuaderno): sus cuentas no se saben,
    # y en el CSV van vacías, no 0. Un «sin empezar» sí se miró: 0 de verdad.
    contada: bool = True

    @property
    def tests_pasan(self):
        return self.comprobacion.tests_pasan if self.comprobacion else 0

    @property
    def ejercicios_hechos(self):
        return self.comprobacion.ejercicios_hechos if self.comprobacion else 0

    @property
    def tests_sin_comprobar(self):
        """Cuántos de sus tests no llegaron a correr: entonces cuántos pasan no se sabe (no es 0)."""
        return self.comprobacion.sin_comprobar if self.comprobacion else 0

    @property
    def ejercicios_sin_comprobar(self):
        c = self.comprobacion
        return sum(1 for r in c.ejercicios.values()
                   if r.estado in (aparte.SIN_COMPROBAR, aparte.SALTADO)) if c else 0


@dataclass
class Fila:
    alumno: Alumno
    celdas: dict = field(default_factory=dict)  # {lección: Celda}
    todo_junto: Celda = None
    segundos: float = 0.0
    corridas: int = 0
    de_la_cache: int = 0
    colgadas: int = 0  # corridas con algún test colgado: se vuelven a correr a solas al final


# ---------------------------------------------------------------- las lecciones y sus tests


@dataclass
class Leccion:
    numero: int
    nombre: str  # el del punto de control sin el número: "compactar"
    modulos: list  # los que añade o cambia, sin .py, en el orden de LECCIONES
    nuevos: set  # los que añade (no estaban en el punto de control anterior)
    ejercicios: list  # los ejercicios que se comprueban en un módulo, en orden
    del_cuaderno: bool = False  # sus ejercicios son funciones del cuaderno (la 02): se leen de él


def lecciones_que_se_califican():
    """{número: Leccion} de las lecciones que añaden o cambian algún módulo, y de las que no añaden
    ninguno pero tienen ejercicios en el cuaderno (la 02: se califican las celdas de su cuaderno,
    ver `curso/clase/cuadernos_de_la_clase.py`)."""
    from curso.comprobaciones import ejercicios
    puntos = rutas.puntos_de_control()
    registro = ejercicios.cargar_registro()
    lecciones, anteriores = {}, set()
    for numero in sorted(puntos):
        modulos = [f.removesuffix(".py") for f in LECCIONES.get(numero, {}).get("ficheros", [])]
        if modulos:
            lecciones[numero] = Leccion(
                numero, puntos[numero].name.split("_", 1)[1], modulos, set(modulos) - anteriores,
                ejercicios.ordenados(id for id, e in registro.items() if e.leccion == numero and e.modulo))
        elif numero in LECCIONES and any(e.leccion == numero for e in registro.values()):
            lecciones[numero] = Leccion(numero, puntos[numero].name.split("_", 1)[1], [], set(), ejercicios.ordenados(
                id for id, e in registro.items() if e.leccion == numero), del_cuaderno=True)
        anteriores = set(modulos_de(puntos[numero]))
    return lecciones


def nivel(presentes, lecciones):
    """La lección más alta de la que hay algún módulo nuevo en `presentes`, o None."""
    empezadas = [n for n, l in lecciones.items() if l.nuevos & presentes]
    return max(empezadas) if empezadas else None


# ---------------------------------------------------------------- un alumno


@dataclass
class Opciones:
    lecciones: dict  # {número: Leccion}, las que se califican
    limite: float = aparte.LIMITE_TEST
    limite_total: float = aparte.LIMITE_TOTAL
    cache: Cache = None
    parar: threading.Event = None
    todas: dict = None  # todas las lecciones que se califican (el nivel se mide con ellas); `lecciones` si no se da
    formato: str = None  # "moodle" o "canvas": escribe también ese CSV (`libros_de_notas.py`)
    identificadores: dict = None  # {carpeta del alumno: su identificador en el LMS}


class _Corredor:
    """Las corridas de un alumno, pasando por la caché; cuenta cuántas hizo y cuántas no."""

    def __init__(self, opciones, fila):
        self.opciones, self.fila = opciones, fila

    def correr(self, ficheros, punto, seleccion, ejercicios):
        o = self.opciones
        clave = o.cache.clave(punto, ficheros, seleccion, ejercicios, o.limite) if o.cache else None
        guardada = o.cache.leer(clave) if clave else None
        if guardada is not None:
            self.fila.de_la_cache += 1
            return guardada
        corrida = aparte.correr_aparte(ficheros, punto, seleccion, ejercicios, o.limite, o.limite_total,
                                       o.parar, agrupar_por_modulo(modulos_de(punto)), a_la_vista=A_LA_VISTA)
        self.fila.corridas += 1
        self.fila.colgadas += aparte.se_colgo(corrida)
        if not (o.parar and o.parar.is_set()) and clave:
            o.cache.guardar(clave, corrida)
        return corrida


def _celda_gris(leccion, texto, tests_total=0, ejercicios_total=0):
    """Una celda gris: «sin empezar» (sus cuentas son 0) o algo que no encuentro (no se saben)."""
    return Celda(leccion, GRIS, texto, None, tests_total, ejercicios_total, contada=texto == SIN_EMPEZAR)


def celda_de(leccion, comprobacion):
    """La celda de una comprobación: su color y lo que dice. Roja si algo falla o falta; ámbar si
    algo se colgó o quedó sin comprobar; verde si no. Primero los culpables; detrás, lo que falla
    solo por ellos («durable.py, por resumenes.py»). Si algo no llegó a correr, lo cuenta."""
    lineas = comprobacion.lineas
    malas = [l for l in lineas if l.estado in (veredicto.MAL, veredicto.FALTA)]
    faltan = [l for l in malas if l.estado == veredicto.FALTA]
    colgadas = [l for l in lineas if l.estado == veredicto.COLGADO]
    consecuencias = [l for l in lineas if l.estado == veredicto.CONSECUENCIA]
    de_colgados = {l.modulo for l in colgadas} | {x.modulo for x in comprobacion.culpables if x.por == culpa.COLGADO}
    por = {}
    for l in consecuencias:
        por.setdefault(l.por, []).append(l.modulo + ".py")
    detras = "; ".join(f"{', '.join(dict.fromkeys(ms))}, por {c}.py" for c, ms in por.items())
    if malas or any(l.por not in de_colgados for l in consecuencias):
        partes = ([f"faltan {len(faltan)} módulos"] if len(faltan) > 2 else
                  [f"{l.nombre} (falta)" for l in faltan])
        for l in malas:
            if l.estado == veredicto.MAL:
                partes.append(_quien(l) + (f" (ejercicio {l.pendiente} pendiente)" if l.pendiente else ""))
        partes += [f"{_quien(l)} colgado" for l in colgadas]
        estado, texto = ROJA, "✘ " + "; ".join(x for x in [", ".join(dict.fromkeys(partes)), detras] if x)
    elif colgadas or consecuencias:
        texto = ", ".join(dict.fromkeys(_quien(l) for l in colgadas)) + " colgado" if colgadas else ""
        estado, texto = AMBAR, "⚠ " + "; ".join(x for x in [texto, detras] if x)
    elif comprobacion.sin_comprobar or any(l.estado == veredicto.SIN_COMPROBAR for l in lineas):
        estado, texto = AMBAR, ""
    else:
        estado, texto = VERDE, "✔"
    if comprobacion.sin_comprobar:
        texto = f"{texto} · {comprobacion.sin_comprobar} sin comprobar" if texto else \
            f"· {comprobacion.sin_comprobar} sin comprobar"
    return Celda(leccion, estado, texto, comprobacion, comprobacion.tests_total,
                 len(comprobacion.ejercicios))


def _quien(linea):
    """El nombre que lleva una línea en la celda: su módulo; la de un test colgado o la de un
    fichero de tests de conjunto (test_recorridos.py), el módulo en el que se colgó o falló, si se
    sabe (un test de agente.py que se cuelga en el bucle del alumno: «bucle.py colgado»)."""
    nombre = linea.nombre.split(" (")[0]
    if linea.donde and (linea.estado == veredicto.COLGADO or nombre.startswith("test_")):
        return f"{linea.donde}.py"
    return nombre


def _celda_rota(leccion, error):
    """Lo que no se pudo ni intentar (el espacio no se puede leer...): una celda roja que lo dice."""
    return Celda(leccion, ROJA, f"✘ el espacio no se pudo comprobar: {type(error).__name__}: {error}")


def calificar_alumno(alumno, opciones):
    """La Fila de un alumno: una celda por lección y la de todo junto (ver el docstring); las de
    las lecciones del cuaderno (la 02), por las celdas de su cuaderno."""
    del_cuaderno = {n: l for n, l in opciones.lecciones.items() if l.del_cuaderno}
    fila = _calificar_espacio(alumno, opciones)
    for n, l in del_cuaderno.items():
        inicio = time.monotonic()
        try:
            fila.celdas[n] = _celda_del_cuaderno(alumno, l, opciones, fila)
        except Exception as error:  # noqa: BLE001 - un cuaderno raro no para a los demás
            fila.celdas[n] = _celda_rota(n, error)
        fila.segundos += time.monotonic() - inicio
    fila.celdas = dict(sorted(fila.celdas.items()))
    return fila


def _celda_del_cuaderno(alumno, leccion, opciones, fila):
    """La celda de una lección cuyos ejercicios son funciones del cuaderno: sus celdas de
    ejercicio, del cuaderno que hay en la carpeta del alumno, comprobadas en el proceso vigilado."""
    n = leccion.numero
    carpeta = alumno.carpeta or (alumno.espacio.parent if alumno.espacio else None)
    cuaderno = cuadernos.buscar_cuaderno(carpeta, n) if carpeta else None
    if cuaderno is None and alumno.espacio is None:  # no hay nada suyo: ni espacio ni cuaderno
        return _celda_gris(n, SIN_ESPACIO, 0, len(leccion.ejercicios))
    if cuaderno is None:
        return _celda_gris(n, SIN_CUADERNO.format(cuaderno=cuadernos.nombre_del_cuaderno(n)), 0,
                           len(leccion.ejercicios))
    celdas = {id: texto for id, texto in cuadernos.celdas_de_ejercicios(cuaderno).items() if id in leccion.ejercicios}
    if not celdas or cuadernos.sin_tocar(celdas, n):
        return _celda_gris(n, SIN_EMPEZAR, 0, len(leccion.ejercicios))
    punto = rutas.puntos_de_control()[n]
    with tempfile.TemporaryDirectory(prefix="curso-celdas-") as temporal:
        ficheros = {p.name: p for p in punto.glob("*.py")}
        for id, texto in celdas.items():
            ruta = Path(temporal) / f"{id}.py"
            ruta.write_text(texto, encoding="utf-8")
            ficheros[f"{tests_del_curso.CUADERNO}/{id}.py"] = ruta
        corrida = _Corredor(opciones, fila).correr(ficheros, punto, [], leccion.ejercicios)
    from curso.comprobaciones import ejercicios
    resultados, lineas = {}, []
    for id in leccion.ejercicios:
        test = tests_del_curso.test_de_ejercicio(id)
        r = corrida.resultados.get(test) or aparte.Resultado(aparte.SIN_COMPROBAR, "no llegó a correr")
        resultados[id] = r
        nombre = f"{ejercicios.buscar(id).nombre}() (ejercicio {id}, en {cuaderno.name})"
        if r.estado == aparte.PASA:
            lineas.append(veredicto.Linea(nombre, veredicto.BIEN, "su celda pasa la comprobación"))
        elif r.estado == aparte.COLGADO:
            lineas.append(veredicto.Linea(nombre, veredicto.COLGADO, r.motivo, test))
        elif r.estado in (aparte.SIN_COMPROBAR, aparte.SALTADO):
            lineas.append(veredicto.Linea(nombre, veredicto.SIN_COMPROBAR, r.motivo, test))
        else:
            detalle = f"ejercicio {r.pendiente} pendiente" if r.pendiente else r.motivo
            lineas.append(veredicto.Linea(nombre, veredicto.MAL, detalle, test, r.pendiente))
    return celda_de(n, veredicto.Comprobacion(n, leccion.nombre, lineas, opciones.limite, ejercicios=resultados))


def que_califica(punto, lecciones):
    """{test: ejercicio} de los tests de contrato de `punto` cuyos ejercicios son de `lecciones`."""
    from curso.comprobaciones.contrato import contratos_del_punto
    return {t: id for t, id in contratos_del_punto(punto).items()
            if tests_del_curso.leccion_del_ejercicio(id) in lecciones}


def _calificar_espacio(alumno, opciones):
    fila = Fila(alumno)
    inicio = time.monotonic()
    lecciones = opciones.lecciones
    puntos = rutas.puntos_de_control()
    # Los tests de una lección: los de contrato de sus ejercicios (los del punto de control más alto).
    de_cada_test = que_califica(puntos[max(puntos)], lecciones)
    totales = {n: sum(1 for id in de_cada_test.values() if tests_del_curso.leccion_del_ejercicio(id) == n)
               for n in lecciones}
    if alumno.espacio is None:
        fila.celdas = {n: _celda_gris(n, SIN_ESPACIO, totales[n], len(l.ejercicios)) for n, l in lecciones.items()}
        fila.todo_junto = _celda_gris(TODO_JUNTO, SIN_ESPACIO)
        return fila
    presentes = set(modulos_de(alumno.espacio))
    b = nivel(presentes, opciones.todas or lecciones)  # con --lecciones 1, un alumno de la 07 sigue en la 07
    empezadas = [n for n, l in lecciones.items() if b is not None and l.nuevos & presentes]
    for n, l in lecciones.items():
        if n not in empezadas:
            fila.celdas[n] = _celda_gris(n, SIN_EMPEZAR, totales[n], len(l.ejercicios))
    if not empezadas:
        fila.todo_junto = _celda_gris(TODO_JUNTO, SIN_EMPEZAR)
        fila.segundos = time.monotonic() - inicio
        return fila
    try:
        _calificar_empezadas(fila, alumno, opciones, b, empezadas, presentes)
    except Exception as error:  # noqa: BLE001 - lo raro del espacio de un alumno no para a los demás
        for n in empezadas:
            fila.celdas[n] = _celda_rota(n, error)
        fila.todo_junto = _celda_rota(TODO_JUNTO, error)
    fila.celdas = dict(sorted(fila.celdas.items()))
    fila.segundos = time.monotonic() - inicio
    return fila


def _calificar_empezadas(fila, alumno, opciones, b, empezadas, presentes):
    """Las celdas de las lecciones empezadas y la de todo junto (ver el docstring del módulo)."""
    lecciones = opciones.lecciones
    punto = rutas.puntos_de_control()[b]
    todos = modulos_de(punto)
    corredor = _Corredor(opciones, fila)
    ejercicio_de = que_califica(punto, lecciones)
    tests = list(ejercicio_de)
    ejercicios = [id for n in empezadas for id in lecciones[n].ejercicios]
    entero = corredor.correr(rutas.ficheros(alumno.espacio), punto, tests, ejercicios)
    ejercicio_de.update({tests_del_curso.test_de_ejercicio(id): id for id in ejercicios})
    todos_los_tests = list(ejercicio_de)

    def modulo_de(t):
        return tests_del_curso.modulo_del_ejercicio(ejercicio_de[t]) if t in ejercicio_de else \
            veredicto.modulo_de_test(tests_del_curso.fichero_de(t), todos)

    def leccion_de_test(t):
        return tests_del_curso.leccion_del_ejercicio(ejercicio_de[t])

    reparto = culpa.repartir(alumno.espacio, punto, todos_los_tests, entero.resultados,
                             lambda ficheros, seleccion, ids: corredor.correr(ficheros, punto, seleccion, ids),
                             modulo_de, A_LA_VISTA, ejercicio_de=ejercicio_de)
    leccion_de = {m: n for n in sorted(lecciones, reverse=True) for m in lecciones[n].nuevos}
    resultados, por = culpa.resultados_para(reparto, entero.resultados, modulo_de)
    c = veredicto.Comprobacion(b, f"todo junto (punto de control {b:02d})",
                               veredicto.lineas_de(todos, presentes, todos_los_tests, resultados, leccion_de=leccion_de,
                                                   por=por, culpables=reparto.culpables, modulo_de=modulo_de,
                                                   ejercicio_de=ejercicio_de, punto=b),
                               opciones.limite, *veredicto.cuentas(tests, resultados),
                               ejercicios=veredicto.ejercicios_de(todos_los_tests, resultados, ejercicio_de),
                               notas=entero.notas, sin_comprobar=veredicto.sin_comprobar(tests, resultados),
                               culpables=reparto.culpables)
    fila.todo_junto = celda_de(TODO_JUNTO, c)
    for n in empezadas:
        l = lecciones[n]
        suyos = [t for t in todos_los_tests if leccion_de_test(t) == n]
        todos_los_resultados, por = culpa.resultados_para(reparto, entero.resultados, modulo_de, set(l.modulos))
        resultados = {t: todos_los_resultados[t] for t in suyos if todos_los_resultados.get(t) is not None}
        culpables = [x for x in reparto.culpables if x.modulo in l.modulos]
        modulos = list(l.modulos) + sorted({m for t in suyos for m in [modulo_de(t)] if m and m not in l.modulos})
        comprobacion = veredicto.Comprobacion(
            n, l.nombre, veredicto.lineas_de(modulos, presentes, suyos, resultados, todos, leccion_de,
                                             por=por, culpables=culpables, modulo_de=modulo_de,
                                             ejercicio_de=ejercicio_de, punto=b),
            opciones.limite, *veredicto.cuentas(suyos, resultados),
            ejercicios=veredicto.ejercicios_de(suyos, resultados, ejercicio_de),
            sin_comprobar=veredicto.sin_comprobar(suyos, resultados), culpables=culpables)
        fila.celdas[n] = celda_de(n, comprobacion)


# ---------------------------------------------------------------- la clase entera


def _como_un_ctrl_c(numero, marco):
    raise KeyboardInterrupt


def _minutos(segundos):
    return f"{segundos / 60:.0f} min" if segundos >= 90 else f"{segundos:.0f} s"


def _estimacion(filas, quedan, a_la_vez):
    """«; quedan unos 4 min (…)»: por lo que tardaron los alumnos que corrieron tests (los que
    salieron enteros de la caché no cuentan: no dicen lo que tarda uno nuevo), o "" si no hay."""
    corrieron = [f for f in filas if f.corridas]
    if not quedan or not corrieron:
        return ""
    por_alumno = sum(f.segundos for f in corrieron) / len(corrieron)
    return (f"; quedan unos {_minutos(por_alumno * quedan / a_la_vez)} como mucho, a {por_alumno:.0f} s "
            f"por alumno que corre tests ({len(corrieron)} hasta ahora; los que salen de la caché no cuentan)")


def calificar(carpeta, salida=None, limite=None, lecciones=None, a_la_vez=None, con_bom=True,
              devoluciones=False, con_cache=True, limite_total=None, formato=None, identificadores=None):
    """`python -m curso calificar CARPETA`: califica a cada alumno, `a_la_vez` a la vez, y escribe
    la tabla en CARPETA (o en `salida`): calificaciones.csv (con BOM si `con_bom`, para Excel),
    calificaciones.html, con `formato` ("moodle" o "canvas") calificaciones-FORMATO.csv para el
    importador de ese LMS (con los identificadores del CSV `identificadores`, si se da) y, con
    `devoluciones`, un fichero por alumno en devoluciones/. Devuelve 0; 2 si CARPETA no es una
    carpeta, una lección no se puede calificar o `identificadores` no se puede leer; 130 tras un Ctrl-C."""
    carpeta = Path(carpeta)
    if not carpeta.is_dir():
        print(f"✘ {carpeta} no es una carpeta: calificar necesita una con una subcarpeta por alumno.",
              file=sys.stderr)
        return 2
    try:
        identificadores = libros_de_notas.leer_identificadores(identificadores) if identificadores else {}
    except (OSError, UnicodeDecodeError, ValueError) as error:
        print(f"✘ No puedo leer los identificadores: {error}", file=sys.stderr)
        return 2
    todas = lecciones_que_se_califican()
    if lecciones is not None:
        sin_modulos = sorted(n for n in set(lecciones) if n in rutas.puntos_de_control() and n not in todas)
        desconocidas = sorted(n for n in set(lecciones) if n not in rutas.puntos_de_control())
        if desconocidas:
            print(f"✘ No hay punto de control para la lección {', '.join(str(n) for n in desconocidas)}.",
                  file=sys.stderr)
            return 2
        if sin_modulos:
            print(f"✘ La lección {', '.join(f'{n:02d}' for n in sin_modulos)} no añade módulos al espacio "
                  "ni tiene ejercicios: no hay nada suyo que calificar. Las que sí: "
                  f"{' '.join(str(n) for n in todas)}.", file=sys.stderr)
            return 2
        elegidas = {n: todas[n] for n in sorted(set(lecciones))}
    else:
        elegidas = todas
    salida = Path(salida) if salida else carpeta
    salida.mkdir(parents=True, exist_ok=True)
    a_la_vez = a_la_vez or os.cpu_count() or 1
    opciones = Opciones(elegidas, limite or aparte.LIMITE_TEST, limite_total or aparte.LIMITE_TOTAL,
                        Cache(salida / CARPETA_DE_LA_CACHE if con_cache else None, huella_del_curso()),
                        threading.Event(), todas, formato, identificadores)
    alumnos = alumnos_de(carpeta, salida)
    sin_identificador = [a.nombre for a in alumnos if identificadores and a.nombre not in identificadores]
    if sin_identificador:
        print(f"⚠ {len(sin_identificador)} alumnos sin fila en los identificadores: van con el nombre de su "
              f"carpeta ({', '.join(sin_identificador[:5])}{'…' if len(sin_identificador) > 5 else ''}).",
              file=sys.stderr)
    csv_ = salida / f"{NOMBRE_DE_LA_TABLA}.csv"
    codificacion = "utf-8-sig" if con_bom else "utf-8"
    csv_.write_text(notas.cabecera_csv(elegidas), encoding=codificacion)
    print(f"{len(alumnos)} alumnos × {len(elegidas)} lecciones y todo junto, {a_la_vez} a la vez "
          f"(cada test, como mucho {opciones.limite:g} s de CPU o parado):", flush=True)
    filas, inicio = [], time.monotonic()
    # Qué test es de qué lección, leído (con ast) una vez aquí y no a la vez en cada hilo: en Python
    # 3.11, dos ast.parse a la vez en hilos distintos pueden lanzar «SystemError: AST constructor
    # recursion depth mismatch» (CPython gh-106905; lo vio un test de una clase de dos alumnos).
    tests_del_curso.leccion_de_cada_test()
    from curso.comprobaciones.contrato import contratos_del_punto
    for punto in rutas.puntos_de_control().values():  # lo mismo con las marcas de contrato
        contratos_del_punto(punto)
    grupo = ThreadPoolExecutor(max_workers=a_la_vez)
    # Un SIGTERM (el de `kill`, o el de un sistema que para la sesión) hace lo mismo que un Ctrl-C:
    # sin esto, Python acabaría sin parar los tests ni borrar sus carpetas temporales.
    anterior = (signal.signal(signal.SIGTERM, _como_un_ctrl_c)
                if threading.current_thread() is threading.main_thread() else None)
    try:
        futuros = [grupo.submit(calificar_alumno, a, opciones) for a in alumnos]
        for hecho in as_completed(futuros):
            fila = hecho.result()
            filas.append(fila)
            with open(csv_, "a", encoding="utf-8", newline="") as f:  # la fila entera de una vez
                f.write(notas.fila_csv(fila, elegidas))
            quedan = len(alumnos) - len(filas)
            estimacion = _estimacion(filas, quedan, a_la_vez)
            cache = f", {fila.de_la_cache} de la caché" if fila.de_la_cache else ""
            print(f"[{len(filas)}/{len(alumnos)}] {notas.progreso(fila)} "
                  f"({fila.segundos:.0f} s, {fila.corridas} corridas{cache}{estimacion})", flush=True)
        grupo.shutdown(wait=True)
        otra_vez_a_solas(filas, opciones)
    except KeyboardInterrupt:
        opciones.parar.set()
        grupo.shutdown(wait=True, cancel_futures=True)
        _escribir(salida, filas, elegidas, opciones, con_bom, devoluciones, faltan=len(alumnos) - len(filas))
        print(f"Interrumpido: se han parado los tests que corrían. {len(filas)} de {len(alumnos)} "
              f"alumnos quedan en {csv_.name} y {NOMBRE_DE_LA_TABLA}.html; los demás, la próxima vez "
              "(lo hecho está en la caché).", file=sys.stderr)
        return INTERRUMPIDO
    finally:
        opciones.parar.set()
        grupo.shutdown(wait=True, cancel_futures=True)
        if anterior is not None:
            signal.signal(signal.SIGTERM, anterior)
    _escribir(salida, filas, elegidas, opciones, con_bom, devoluciones)
    corridas = sum(f.corridas for f in filas)
    guardadas = sum(f.de_la_cache for f in filas)
    print(f"Escrito: {salida / NOMBRE_DE_LA_TABLA}.csv y {NOMBRE_DE_LA_TABLA}.html"
          + (f" y {NOMBRE_DE_LA_TABLA}-{formato}.csv" if formato in libros_de_notas.ESCRITORES else "")
          + (f" y {DEVOLUCIONES}/" if devoluciones else "")
          + f" en {_minutos(time.monotonic() - inicio)} ({corridas} corridas de tests, {guardadas} de la caché).")
    return 0


def otra_vez_a_solas(filas, opciones):
    """Un colgado no es un veredicto final: con varios alumnos a la vez (y otros procesos en la
    máquina) pudo ser la carga. Al acabar todos, cada alumno con algo colgado se vuelve a calificar
    solo, uno tras otro; lo que no se colgó sale de la caché (también con --sin-cache: la de
    memoria), así que solo se repite lo colgado. Su fila sustituye a la primera en `filas`."""
    colgadas = sorted((f for f in filas if f.colgadas), key=lambda f: f.alumno.nombre)
    if not colgadas:
        return
    print(f"Otra vez, a solas, lo que se colgó de {len(colgadas)} alumnos (con la máquina ocupada, "
          "un colgado puede ser la carga):", flush=True)
    for i, anterior in enumerate(colgadas, 1):
        if opciones.parar is not None and opciones.parar.is_set():
            return
        fila = calificar_alumno(anterior.alumno, opciones)
        filas[filas.index(anterior)] = fila
        print(f"[{i}/{len(colgadas)} a solas] {notas.progreso(fila)} ({fila.segundos:.0f} s, "
              f"{fila.corridas} corridas, {fila.de_la_cache} de la caché)", flush=True)


def _escribir(salida, filas, lecciones, opciones, con_bom, devoluciones, faltan=0):
    """El CSV ordenado por alumno (sustituye al que se iba escribiendo), la página y las devoluciones."""
    filas = sorted(filas, key=lambda f: f.alumno.nombre)
    codificacion = "utf-8-sig" if con_bom else "utf-8"
    csv_ = salida / f"{NOMBRE_DE_LA_TABLA}.csv"
    temporal = csv_.with_suffix(".csv.nuevo")
    temporal.write_text(notas.cabecera_csv(lecciones) + "".join(notas.fila_csv(f, lecciones) for f in filas),
                        encoding=codificacion)
    os.replace(temporal, csv_)
    (salida / f"{NOMBRE_DE_LA_TABLA}.html").write_text(
        notas.pagina_html(filas, lecciones, opciones.limite, faltan), encoding="utf-8")
    if opciones.formato in libros_de_notas.ESCRITORES:
        escribir = libros_de_notas.ESCRITORES[opciones.formato]
        (salida / f"{NOMBRE_DE_LA_TABLA}-{opciones.formato}.csv").write_text(
            escribir(filas, lecciones, opciones.identificadores), encoding=codificacion)
    if devoluciones:
        carpeta = salida / DEVOLUCIONES
        carpeta.mkdir(exist_ok=True)
        for fila in filas:
            (carpeta / f"{fila.alumno.nombre}.txt").write_text(notas.devolucion(fila, lecciones), encoding="utf-8")


# --- python -m curso calificar ----------------------------------------------------------------

def argumentos_calificar(analizador):
    analizador.description = ("Para quien da el curso: cada subcarpeta de CARPETA es un alumno, y "
                              "su espacio, la carpeta mi_agente/ que tenga dentro a cualquier "
                              "profundidad. Cada lección se califica por lo que añade o cambia, y "
                              "«todo junto» por el espacio entero; escribe calificaciones.csv (para "
                              "el libro de notas) y calificaciones.html.")
    positivo = analizador.positivo
    analizador.add_argument("carpeta", metavar="CARPETA", help="la carpeta con una subcarpeta por alumno")
    analizador.add_argument("--salida", metavar="CARPETA",
                            help="dónde escribir la tabla y la caché (en CARPETA si no se dice)")
    analizador.add_argument("--limite", metavar="S", type=positivo(float),
                            help="segundos de CPU como mucho por test, y segundos parado sin pedir "
                                 "CPU ni disco (30 si no se dice): el que pasa de ahí "
                                 "queda «colgado» y los demás siguen")
    analizador.add_argument("--limite-total", metavar="S", type=positivo(float),
                            help="segundos de CPU como mucho por corrida de tests (600 si no se "
                                 "dice; de reloj, diez veces más)")
    analizador.add_argument("--lecciones", metavar="N", type=rutas.leccion_pedida, nargs="+",
                            help="solo estas lecciones (todas las que añaden módulos si no se dice)")
    analizador.add_argument("--a-la-vez", metavar="P", type=positivo(int),
                            help="cuántos alumnos a la vez (tantos como núcleos si no se dice)")
    analizador.add_argument("--devoluciones", action="store_true",
                            help="escribe además devoluciones/ALUMNO.txt, una por alumno, para dársela")
    analizador.add_argument("--sin-bom", action="store_true",
                            help="el CSV sin BOM al principio (con él, Excel lo abre bien en UTF-8)")
    analizador.add_argument("--sin-cache", action="store_true",
                            help="vuelve a correr todo, aunque no haya cambiado")
    analizador.add_argument("--formato", choices=sorted(libros_de_notas.ESCRITORES),
                            help="escribe además calificaciones-FORMATO.csv para importar en ese LMS "
                                 "(una nota por lección y por ejercicio; ver curso/clase/libros_de_notas.py)")
    analizador.add_argument("--identificadores", metavar="FICHERO",
                            help="un CSV «carpeta,identificador»: con qué login, correo o número conoce "
                                 "el LMS a cada alumno (el nombre de su carpeta si no se dice)")


def orden_calificar(args):
    return calificar(args.carpeta, salida=args.salida, limite=args.limite, lecciones=args.lecciones,
                     a_la_vez=args.a_la_vez, con_bom=not args.sin_bom, devoluciones=args.devoluciones,
                     con_cache=not args.sin_cache, limite_total=args.limite_total, formato=args.formato,
                     identificadores=args.identificadores)
