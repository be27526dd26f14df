"""Para `comprobar("2.2", cabe)` en el cuaderno y para `calificar`: un ejercicio del cuaderno se comprueba con su celda sola, en los dos sitios.

Los ejercicios 2.1, 2.2 y 3.1 son funciones de una celda del cuaderno, no de un módulo.
`calificar` no tiene el núcleo del alumno: toma el texto de la celda de su cuaderno y lo ejecuta
solo (`curso/clase/cuadernos_de_la_clase.py`, y el fichero de los ejercicios de
`tests_del_curso.py`). Si `cabe` llama a `tamano`, que es de otra celda, allí `tamano` no existe.
Para que el cuaderno diga lo mismo que `calificar` (hallazgo 4 de la issue 40), `comprobar`
vuelve a ejecutar sola la celda de la que sale la función, en un espacio de nombres nuevo, y
comprueba la función que sale de ahí: un solo camino, `de_la_celda`, para los dos. El texto del
2.2 lo pide así: «escríbelo dentro de `cabe`, sin llamar a `tamano`: cada ejercicio se comprueba
por separado».

Dónde está el texto de una celda: IPython guarda el de cada celda que ejecuta en `linecache`, con
un nombre de fichero inventado (`/tmp/ipykernel_…/….py`) y sin fecha, para que no caduque
(`IPython.core.compilerop.CachingCompiler.cache`). Una función de un módulo de verdad tiene su
fichero con fecha: esa se comprueba tal cual.
"""
import contextlib
import functools
import io
import linecache

ORIGEN = "la celda del ejercicio {id}"  # el nombre de fichero con que se ejecuta la celda sola


def describir(exc):
    """Una excepción en una línea: tipo, mensaje y, si es de sintaxis, la línea (la usan también
    `ejercicios.py` y el cuaderno, que la importa de allí)."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError en la línea {exc.lineno}: {exc.msg}"
    return f"{type(exc).__name__}: {exc}"


def texto_de_su_celda(funcion):
    """El texto de la celda del cuaderno que definió `funcion`, o None si no viene de una."""
    codigo = getattr(funcion, "__code__", None)
    entrada = linecache.cache.get(codigo.co_filename) if codigo is not None else None
    if not entrada or len(entrada) < 4 or entrada[1] is not None:  # con fecha: un fichero de verdad
        return None
    return "".join(entrada[2])


def de_la_celda(texto, id, nombre):
    """(función, "") de ejecutar sola la celda `texto` del ejercicio `id`, o (None, el problema)."""
    nombres = {"__name__": "cuaderno"}
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # lo que imprima, ya lo vio al ejecutarla
            exec(compile(texto, ORIGEN.format(id=id), "exec"), nombres)
    except Exception as error:  # noqa: BLE001 - lo dice como lo diría el cuaderno
        return None, f"La celda del ejercicio {id}, ejecutada sola, falla: {describir(error)}"
    if not callable(nombres.get(nombre)):
        return None, f"La celda del ejercicio {id} no define {nombre}()."
    return nombres[nombre], ""


def sola(funcion, e):
    """(la función de `e` como la comprueba `calificar`, problema): la de volver a ejecutar sola la
    celda que la definió; la misma función si no viene de una celda. Un nombre que la celda no
    tiene y el cuaderno sí (otra función de otra celda) se dice al usarlo."""
    texto = texto_de_su_celda(funcion)
    if texto is None:
        return funcion, ""
    aislada, problema = de_la_celda(texto, e.id, e.nombre)
    if aislada is None:
        return None, problema
    de_otras_celdas = set(getattr(funcion, "__globals__", {})) - set(aislada.__globals__)
    return _explicando(aislada, de_otras_celdas, e.id), ""


def _explicando(funcion, de_otras_celdas, id):
    """`funcion`, que al llegar a un nombre de otra celda lo dice en castellano."""
    @functools.wraps(funcion)
    def envuelta(*argumentos, **nombrados):
        try:
            return funcion(*argumentos, **nombrados)
        except NameError as error:
            if error.name not in de_otras_celdas:
                raise
            raise NameError(f"`{error.name}` es de otra celda del cuaderno, y el ejercicio {id} se "
                            f"comprueba con su celda sola, como lo califica `calificar`: escribe lo "
                            f"que necesites dentro de esta celda", name=error.name) from None
    return envuelta
