"""Ayudas de los tests del curso que no son fixtures."""
import json
import re
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from curso import rutas
from curso.comprobaciones import ejercicios
from curso.material import lanzadera


@contextmanager
def modulos_del_punto(numero):
    """{nombre: módulo} de los módulos del punto de control `numero`, cargados de su carpeta con
    `rutas.cargar_modulo` y con sus nombres de siempre (`bucle` recibe el mismo `entorno` que está
    en el dict). Dentro del bloque la carpeta va delante en sys.path; al salir, sys.path y
    sys.modules quedan como estaban: los módulos de los puntos de control se llaman igual
    (`bucle`, `entorno`...) y no deben mezclarse."""
    with rutas.carpeta_aparte(rutas.puntos_de_control()[numero]) as carpeta:
        modulos = {}
        for fichero in sorted(carpeta.glob("*.py")):
            if fichero.stem not in sys.modules:  # quizá ya lo importó otro de la carpeta
                sys.modules[fichero.stem] = rutas.cargar_modulo(fichero, fichero.stem, aislado=False)
            modulos[fichero.stem] = sys.modules[fichero.stem]
        yield modulos


# Lo único que cambia de una ejecución guionizada a otra: el tiempo que escribe unittest.
TIEMPO_DE_UNITTEST = re.compile(r"(Ran \d+ tests? in )\d+\.\d+s")


def sin_tiempos(valor):
    """`valor` (algo que json puede escribir) sin el tiempo que escribe unittest."""
    return json.loads(TIEMPO_DE_UNITTEST.sub(r"\1…s", json.dumps(valor, ensure_ascii=False)))


# Palabras de los mensajes de Python y de SQLite («Exceeds the limit (4300 digits) for integer
# string conversion», «maximum recursion depth exceeded», «file is not a database»...) que un
# mensaje en castellano no usa.
PALABRAS_INGLESAS = re.compile(
    r"\b(the|is|not|of|to|for|and|exceeds?|limit|integer|digits|maximum|recursion|depth|"
    r"too|large|convert|cannot|expected|unable|file|database|supported|instances?|must)\b",
    re.IGNORECASE)
CITAS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def en_castellano(mensaje):
    """Que un mensaje de error sea de los del curso: empieza como una frase en castellano y, fuera
    de los valores que cita entre comillas, no tiene palabras corrientes en inglés."""
    return (re.match(r"(El|La|Los|Las|Un|Una|No) ", mensaje) is not None
            and not PALABRAS_INGLESAS.search(CITAS.sub("", mensaje)))


def vivo(pid):
    """Si el proceso `pid` sigue en marcha (un zombi ya no cuenta: solo espera a que lo recojan)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as f:
            return "\nState:\tZ" not in f.read()
    except FileNotFoundError:
        return False


def evaluar_con_otra_version(id, modulo, funcion, carpeta, diferencial=True):
    """Comprueba el ejercicio `id` con los módulos del punto de control de su lección y, al final de
    `modulo`.py, `funcion` (que sustituye a la suya por definirse después), en `carpeta`/espacio.
    Devuelve (casos que fallan, casos pendientes, el informe). Con diferencial=False, solo sus casos
    escritos: para los tests que miran qué caso escrito pilla cada error (que el diferencial también
    lo pilla lo mira test_variantes.py)."""
    espacio = carpeta / "espacio"
    e = ejercicios.buscar(id)
    shutil.copytree(rutas.puntos_de_control()[e.leccion], espacio,
                    ignore=shutil.ignore_patterns("tests", "__pycache__"))
    fichero = espacio / f"{modulo}.py"
    fichero.write_text(fichero.read_text(encoding="utf-8") + "\n" + funcion, encoding="utf-8")
    try:
        resultado = ejercicios.evaluar(id, espacio=espacio, diferencial=diferencial)
    finally:
        ejercicios.olvidar_modulos(espacio)
    assert not resultado.problema, resultado.problema
    fallan = {l.caso for l in resultado.lineas if l.estado in ("fallo", "error")}
    pendientes = {l.caso for l in resultado.lineas if l.estado == "pendiente"}
    return fallan, pendientes, ejercicios.informe(resultado)


def casos_que_nombran(id, trozos):
    """Los nombres de los casos del ejercicio `id` que contienen cada trozo (uno por trozo, exactamente)."""
    nombres = [c.descripcion for c in ejercicios.buscar(id).casos]
    elegidos = set()
    for trozo in trozos:
        con_el_trozo = [n for n in nombres if trozo in n]
        assert len(con_el_trozo) == 1, f"«{trozo}» tiene que nombrar un solo caso de {id}: {con_el_trozo}"
        elegidos |= set(con_el_trozo)
    return elegidos


def cambiar(texto, *cambios):
    """`texto` con cada (viejo, nuevo) cambiado; cada viejo tiene que estar exactamente una vez."""
    for viejo, nuevo in cambios:
        assert texto.count(viejo) == 1, f"no encuentro una sola vez {viejo!r}"
        texto = texto.replace(viejo, nuevo)
    return texto


# --- Procesos hijos que mueren con SIGKILL (la fiabilidad de resumenes.py y de buzon.py) ---------
#
# Cada test escribe el programa de su hijo (un texto que se ejecuta con `python -S -c`) y le pone
# delante HIJO_QUE_HABLA: `decir`, que le cuenta al test lo que hace (una línea JSON), y
# `Pausador`, una conexión que se detiene antes de una sentencia dada para que el test lo mate
# justo ahí.

HIJO_QUE_HABLA = r'''
import json, time


def decir(*partes):
    print(json.dumps(partes, ensure_ascii=False), flush=True)


class Pausador:
    """La conexión de verdad, que se detiene antes de su sentencia número `en` (desde 0)."""

    def __init__(self, bd, en):
        self.bd, self.en, self.hechas = bd, en, 0

    def __getattr__(self, nombre):
        return getattr(self.bd, nombre)

    def execute(self, sql, *argumentos):
        if self.hechas == self.en:
            decir("pausa", self.en, sql.split()[0])
            time.sleep(600)
        self.hechas += 1
        return self.bd.execute(sql, *argumentos)

'''


# Lo que los programas de los hijos importan de la biblioteca estándar: su lanzadera ya lo tiene.
PRECARGADOS = ("json", "random", "sqlite3", "time")


def lanzar_hijo(programa, *argumentos, con_entrada=False):
    """Un intérprete que ejecuta `programa` con `argumentos` en sys.argv[1:]; con `con_entrada`, el
    test le escribe órdenes por su entrada (`decir_a`). El primer argumento es la carpeta de los
    módulos (o uno de ellos): el hijo nace con fork de la lanzadera de esa carpeta (ver
    curso/material/lanzadera.py), que ya arrancó Python; sin lanzadera, es un intérprete nuevo."""
    if lanzadera.disponible():
        carpeta = Path(argumentos[0])
        carpeta = carpeta if carpeta.is_dir() else carpeta.parent
        return lanzadera.lanzadera_de(carpeta, PRECARGADOS).lanzar(programa, argumentos, entrada=con_entrada)
    # -S (sin site): el hijo solo usa la biblioteca estándar y así arranca antes.
    return subprocess.Popen(
        [sys.executable, "-S", "-c", programa, *map(str, argumentos)],
        stdin=subprocess.PIPE if con_entrada else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
    )


def leer(hijo):
    """La siguiente línea que dice el hijo; si termina sin decir nada, el test falla con su stderr."""
    linea = hijo.stdout.readline()
    if not linea:
        hijo.wait(timeout=10)
        pytest.fail(f"El hijo terminó sin responder ({hijo.returncode}):\n{hijo.stderr.read()}")
    return json.loads(linea)


def decir_a(hijos, orden):
    for hijo in hijos:
        hijo.stdin.write(orden + "\n")
        hijo.stdin.flush()


def matar(hijo):
    hijo.kill()  # SIGKILL
    assert hijo.wait(timeout=10) == -signal.SIGKILL, hijo.stderr.read()


def matar_en_su_pausa(hijo):
    """Lo siguiente que dice un hijo de modo «pasos». Si es «terminado», el hijo acaba con 0; si no,
    está parado en su pausa (`Pausador`) y muere ahí con SIGKILL. Al volver ya no está vivo."""
    try:
        mensaje = leer(hijo)
        if mensaje[0] == "terminado":
            assert hijo.wait(timeout=10) == 0, hijo.stderr.read()
        else:
            matar(hijo)
        return mensaje
    finally:
        rematar([hijo])


def rematar(hijos):
    """Mata y recoge los hijos que sigan vivos: ninguno queda suelto tras un test, pase lo que pase."""
    for hijo in hijos:
        if hijo.poll() is None:
            hijo.kill()
            hijo.wait()


def sigint_de_terminal():
    """Para `preexec_fn`: el hijo empieza con SIGINT como en una terminal (Ctrl-C lo para).

    Una orden lanzada en segundo plano desde un guion de shell (`.ci/run &`, nohup) arranca con
    SIGINT ignorado, y sus hijos lo heredan: Python no instala entonces su KeyboardInterrupt y un
    test que manda Ctrl-C esperaría en vano. Ver test_servidor.py."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)
