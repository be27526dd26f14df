"""Para los casos de los ejercicios (los escritos y el diferencial): lo que dice que algo no cuadra, el corte de lo que no acaba y la carpeta de un caso.

Son las piezas sobre las que se escriben los casos de `lNN.py` y el diferencial (`diferencial.py`),
y las que usa `ejercicios.py` al evaluarlos: están aquí, debajo de los dos, para que el diferencial
no tenga que importar el motor que lo registra (la casa de `tests/equipo/test_casa.py`).
`ejercicios.py` las vuelve a dar con su nombre (`from curso.comprobaciones.ejercicios import Fallo`).
"""
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

# Y para lo que se queda esperando sin gastar CPU (un cerrojo que nunca se suelta), el reloj, con
# holgura: esto por el límite de CPU.
VECES_EL_RELOJ = 6
# Si la excepción del corte cae dentro de un callback del recolector de basura (hypothesis tiene
# uno), Python la ignora: el aviso se repite cada tanto hasta que una llega.
REPETIR_EL_CORTE_S = 1


class Fallo(Exception):
    """Un caso que no cuadra: lo que se esperaba y lo que llegó."""

    def __init__(self, esperado, obtenido, nota=""):
        super().__init__(nota or "no coincide")
        self.esperado, self.obtenido, self.nota = esperado, obtenido, nota


def igual(obtenido, esperado, nota=""):
    """Lanza `Fallo` si `obtenido != esperado`. Es el `assertEqual` de los casos."""
    if obtenido != esperado:
        raise Fallo(esperado, obtenido, nota)


# Si el TimeoutError que llega lo lanzó `con_limite` (y no el código del alumno): el diferencial
# no lo toma por un hecho que comparar, sino por el corte que es.
ALARMA = SimpleNamespace(disparada=False)


@contextmanager
def con_limite(segundos):
    """Corta con TimeoutError un bloque que gasta más de `segundos` de CPU, o que pasa de
    `VECES_EL_RELOJ` veces eso de reloj (solo en el hilo principal)."""
    ALARMA.disparada = False
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def cortar(senal, _marco):
        ALARMA.disparada = True
        if senal == signal.SIGPROF:
            raise TimeoutError(f"la comprobación pasó de {segundos:g} s de CPU: ¿un bucle que no termina?")
        raise TimeoutError(f"la comprobación pasó de {segundos * VECES_EL_RELOJ:g} s esperando: ¿algo que "
                           "espera a algo que no llega?")
    temporizadores = {signal.SIGPROF: (signal.ITIMER_PROF, segundos),
                      signal.SIGALRM: (signal.ITIMER_REAL, segundos * VECES_EL_RELOJ)}
    anteriores = {senal: signal.signal(senal, cortar) for senal in temporizadores}
    for cual, cuando in temporizadores.values():
        signal.setitimer(cual, cuando, REPETIR_EL_CORTE_S)
    try:
        yield
    finally:
        for senal, (cual, _) in temporizadores.items():
            signal.setitimer(cual, 0)
            signal.signal(senal, anteriores[senal])


def esbozo_alcanzado(exc):
    """El NotImplementedError de `exc` o de las excepciones que la causaron, o None.

    Un caso que espera otra excepción (`except Exception: raise Fallo(...)`) y recibe la del
    esbozo la envuelve: sigue siendo un caso pendiente, no un fallo."""
    vistas = set()
    while exc is not None and id(exc) not in vistas:
        if isinstance(exc, NotImplementedError):
            return exc
        vistas.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def carpeta_temporal(prefijo="ejercicio-"):
    """Una carpeta nueva para un caso; se borra al terminar la comprobación.

    Fuera de una comprobación (un test que llama a un caso a mano) es una carpeta temporal normal:
    borrarla es cosa de quien llama."""
    return Path(tempfile.mkdtemp(prefix=prefijo))
