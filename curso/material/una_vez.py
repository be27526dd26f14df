"""Para las celdas pesadas de los cuadernos cuando las ejecutan los tests: lo que calculan se guarda por una huella de lo que leen, y el siguiente pase que lee lo mismo lo toma de ahí.

Tres celdas de las lecciones calculan mucho: el explorador de carreras de la 04 y la 05 (cada
intercalado de cada variante en SQLite), el de la 07 (y en PostgreSQL) y el simulacro de caídas de
la 06 (procesos que mueren con SIGKILL). `probar` las ejecuta en varios pases (el cuaderno
resuelto con `--nbval`, el del alumno con `--nbval-lax`, los caminos del alumno), y cada pase
recalculaba lo mismo: el mismo código sobre los mismos módulos. Con `una_vez`, la función que hace
ese cálculo (`recorrer_intercalados`, las caídas de `curso/medir/todo.py`) lo guarda en una carpeta
(CURSO_CACHE_DE_CELDAS) bajo una huella de todo lo que lee: los argumentos que deciden el
resultado, el contenido de los módulos que prueba (cada .py de su carpeta: el alumno puede
haberlos cambiado), el de todo el paquete `curso` (el escenario, el simulacro, los guiones, el
servidor de ensayo, los datos) y la versión de Python. Si otro pase lee lo mismo, lo toma de la
carpeta; si cambia cualquier cosa, la huella cambia y se calcula otra vez. Dos pases que llegan a la
vez a lo mismo no lo calculan dos veces: el segundo espera al primero (un cerrojo por huella).

Solo hay caché dentro de los núcleos que arrancan los tests (el conftest.py de la raíz pone la
variable a los de nbval y tests/caminos a los suyos, a partir de la que `probar` da a cada parte,
CURSO_CACHE_PARA_NUCLEOS). Sin la variable —un alumno en su JupyterLab, un test que llama a la
función directamente, `medir`— se calcula siempre: un test que cambia una pieza con monkeypatch
nunca recibe un resultado calculado sin su cambio. Lo que la función escribía por el camino (los
puntos de avance de `aviso` y de `al_avanzar`) se repite al tomarlo de la caché, para que la salida
de la celda sea la misma.
"""
import fcntl
import functools
import hashlib
import os
import pickle
import sys
import threading
from pathlib import Path

from curso import rutas

VARIABLE = "CURSO_CACHE_DE_CELDAS"  # la carpeta de la caché, en los núcleos de los tests
PARA_NUCLEOS = "CURSO_CACHE_PARA_NUCLEOS"  # la que `probar` da a cada parte, para sus núcleos
IGNORADOS = {"__pycache__", ".copias"}


def huella_de_ficheros(rutas_, patron="*"):
    """Una huella del contenido de `rutas_` (ficheros, o carpetas con lo que hay dentro que case
    con `patron`, sin cachés de Python), con sus nombres relativos."""
    h = hashlib.sha256()
    for ruta in map(Path, rutas_):
        ficheros = [ruta] if ruta.is_file() else sorted(
            p for p in ruta.rglob(patron) if p.is_file() and not IGNORADOS & set(p.relative_to(ruta).parts))
        for fichero in ficheros:
            h.update(str(fichero.relative_to(ruta) if fichero != ruta else ruta.name).encode() + b"\0")
            h.update(fichero.read_bytes() + b"\0")
    return h.hexdigest()


def huella_del_curso():
    """La del paquete `curso` entero (código y datos): lo que lee cualquiera de estas celdas."""
    return huella_de_ficheros([rutas.RAIZ / "curso"])


def una_vez(modulos, por_valor, aviso=None):
    """Decorador: la función guarda su resultado con CURSO_CACHE_DE_CELDAS (ver arriba).

    `modulos(*a, **k)`: las carpetas (o ficheros) de módulos que lee (cuenta cada .py).
    `por_valor(*a, **k)`: lo que de los argumentos decide el resultado (sin las rutas temporales,
    los servidores, los contadores...), algo que se pueda escribir con `repr`.
    `aviso`: el nombre del argumento con la función de avance, si la tiene: al tomarlo de la caché
    se la llama otra vez con los mismos argumentos, en el mismo orden."""
    def decorar(funcion):
        @functools.wraps(funcion)
        def envuelta(*args, **kwargs):
            carpeta = os.environ.get(VARIABLE)
            if not carpeta:
                return funcion(*args, **kwargs)
            clave = hashlib.sha256(repr((funcion.__module__, funcion.__qualname__, sys.version,
                                         por_valor(*args, **kwargs), huella_del_curso(),
                                         huella_de_ficheros(modulos(*args, **kwargs), "*.py"))).encode()).hexdigest()
            guardado = Path(carpeta) / f"{clave}.pickle"
            with open(Path(carpeta) / f"{clave}.cerrojo", "w") as cerrojo:
                fcntl.flock(cerrojo, fcntl.LOCK_EX)  # quien llega segundo espera al primero
                original = kwargs.get(aviso) if aviso else None
                if guardado.exists():
                    resultado, avisos = pickle.loads(guardado.read_bytes())
                    for argumentos in avisos if original else ():
                        original(*argumentos)
                    return resultado
                avisos, apuntar = [], threading.Lock()  # los avisos llegan de varios hilos
                if original:
                    def apuntando(*argumentos):
                        with apuntar:
                            avisos.append(argumentos)
                        original(*argumentos)
                    kwargs = {**kwargs, aviso: apuntando}
                resultado = funcion(*args, **kwargs)
                guardado.write_bytes(pickle.dumps((resultado, avisos)))
                return resultado
        return envuelta
    return decorar
