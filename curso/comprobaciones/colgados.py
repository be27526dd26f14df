"""Para `aparte`: cuándo un test está colgado, por lo que gasta su árbol de procesos y no por el reloj.

Un límite de reloj solo no distingue un test colgado de uno que espera a la CPU: en un hub de
clase, tres `comprobar 7` a la vez en dos núcleos dejaban colgado a los 30 s el simulacro de caídas
de un espacio correcto. Por eso un test (desde su última señal de vida: cada evento de pytest)
está **colgado** por una de tres razones, y la carga de la máquina no adelanta ninguna:

1. **CPU**: su árbol de procesos (pytest y todo lo que arrancó, también lo que ya acabó y lo que
   se fue a otra sesión, que el guardián adopta) ha gastado `limite` s de CPU. Un bucle sin fin
   sale así, tan deprisa como le dejen correr; un test lento por la carga no gasta más CPU, solo
   tarda más en gastarla.
2. **Parado**: lleva `limite` s seguidos sin pedir nada: sin CPU (ni gastada ni esperada en la
   cola del planificador, `schedstat`), sin esperar al disco (ningún hilo en estado D) y sin que
   nazca o acabe ningún proceso. Un `sleep` eterno, un interbloqueo o una espera a algo que no
   llega salen así. Un test que espera a la CPU porque la máquina está ocupada sí la pide (está en
   la cola), uno que espera sus fsync está en D, y uno que lanza procesos cortos (el simulacro de
   caídas: un proceso por paso, que muere con SIGKILL) los ve nacer y morir: la carga no lo para.
   Solo cuenta lo que se ha visto de cerca: un intervalo entre dos lecturas de más de
   `VISTO_DE_CERCA` s (quien vigila también espera a la CPU: entre dos lecturas lejanas nacen y
   mueren procesos sin que se vean) no suma tiempo parado, ni lo borra.
3. **Reloj**: no termina en `RELOJ_POR_LIMITE` × `limite` s. Es la red de lo que se escapa de las
   dos (una espera que despierta a menudo y gasta poco): tan holgado que la carga sola no llega.

Las cifras de los límites las da `python -m curso medir hub` (tres `comprobar 7` a la vez, y
`calificar` con dos `comprobar 6`, también bajo `stress-ng`); la tabla, en curso/README.md: lo que
más gastó un test correcto fue 5,7 s de CPU, 69 s de reloj y 3,1 s seguidos parado. Sin
/proc (fuera de Linux) no se sabe lo que gasta el árbol: entonces solo vale el reloj, con `limite`
s, como antes (un alumno en su portátil no comparte la máquina con la clase).

La lectura de /proc (`leer`) y la regla (`Vigilancia`, pura: se le dan las lecturas) van por
separado, así la regla se prueba con lecturas inventadas.
"""
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# Cuántos núcleos tiene que pedir el árbol en un intervalo para no contar como parado: un cuarto.
# Un hilo que espera con `time.sleep(0.01)` en bucle pide menos de un 5 % (se despierta, mira y
# vuelve a dormir); un test que espera a la CPU tiene al menos un hilo en la cola todo el rato (1).
UMBRAL_PIDE = 0.25
RELOJ_POR_LIMITE = 10  # el límite de reloj, en veces `limite` (con 30 s: 300 s)
MUESTREO = 1.0  # segundos entre dos lecturas de /proc (cada una, unos milisegundos de CPU)
VISTO_DE_CERCA = 3 * MUESTREO  # un intervalo más largo entre dos lecturas no dice si estaba parado
VIGENCIA_DE_LA_TABLA = MUESTREO / 2  # los hilos de un mismo proceso comparten la lectura de /proc
TICS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

CPU, PARADO, RELOJ = "cpu", "parado", "reloj"  # por qué está colgado


@dataclass
class Lectura:
    """Lo que ha gastado hasta ahora el árbol de procesos de los tests."""
    cpu: float  # s de CPU (usuario + sistema) de todo el árbol, también de lo que ya acabó
    pide: dict = field(default_factory=dict)  # {hilo: s en CPU + s en la cola}, de los hilos vivos
    en_disco: bool = False  # algún hilo esperaba al disco (estado D) al leer, o a la CPU sin schedstat
    procesos: frozenset = frozenset()  # {(pid, arranque)} de los procesos del árbol


# ---------------------------------------------------------------- leer /proc


def _stat(ruta):
    """(estado, padre, [utime, stime, cutime, cstime] en tics, arranque) de un fichero stat de
    /proc, o None."""
    try:
        texto = Path(ruta).read_text()
    except OSError:
        return None
    campos = texto[texto.rindex(")") + 2:].split()  # campos[0] es el tercero de la tabla de proc(5)
    return campos[0], int(campos[1]), [int(c) for c in campos[11:15]], int(campos[19])


_cerrojo = threading.Lock()
_tabla = (float("-inf"), {})  # (cuándo, {pid: _stat}): la última lectura de todo /proc


def _procesos():
    """{pid: _stat} de todos los procesos, leído como mucho una vez cada VIGENCIA_DE_LA_TABLA s
    aunque vigilen varios hilos (`comprobar N` corre cuatro partes a la vez)."""
    global _tabla
    with _cerrojo:
        if time.monotonic() - _tabla[0] < VIGENCIA_DE_LA_TABLA:
            return _tabla[1]
        tabla = {}
        for entrada in os.listdir("/proc"):
            if entrada.isdigit():
                datos = _stat(f"/proc/{entrada}/stat")
                if datos is not None:
                    tabla[int(entrada)] = datos
        _tabla = (time.monotonic(), tabla)
        return tabla


def _schedstat(ruta):
    """Segundos en CPU más segundos esperando en la cola del planificador, o None si no se sabe."""
    try:
        en_cpu, en_cola = Path(ruta).read_text().split()[:2]
    except (OSError, ValueError):
        return None
    return (int(en_cpu) + int(en_cola)) / 1e9


def leer(raiz):
    """La Lectura del árbol que cuelga de `raiz` (el guardián, sin contar lo que gasta él mismo, que
    es de quien vigila: solo lo de los hijos que recogió), o None sin /proc o si `raiz` ya no está.

    La CPU de cada proceso vivo es la suya más la de los hijos que ya recogió (cutime, cstime): así
    cuenta lo que gastó un proceso que ya acabó. Lo que pide, hilo a hilo (un hilo que espera a la
    CPU no la está gastando)."""
    propio = _stat(f"/proc/{raiz}/stat")
    if propio is None:
        return None
    tabla = _procesos()
    hijos = {}
    for pid, (_, padre, _, _) in tabla.items():
        hijos.setdefault(padre, []).append(pid)
    lectura = Lectura(sum(propio[2][2:]) / TICS)
    pendientes, procesos = list(hijos.get(raiz, [])), set()
    while pendientes:
        pid = pendientes.pop()
        pendientes += hijos.get(pid, [])
        datos = _stat(f"/proc/{pid}/stat")  # la CPU, de ahora: la tabla puede ser de hace medio segundo
        if datos is None:  # ya acabó: lo que gastó está en su padre (o lo estará en la próxima lectura)
            continue
        lectura.cpu += sum(datos[2]) / TICS
        procesos.add((pid, datos[3]))
        try:
            hilos = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for hilo in hilos:
            datos = _stat(f"/proc/{pid}/task/{hilo}/stat")
            if datos is not None and datos[0] == "D":
                lectura.en_disco = True
            pide = _schedstat(f"/proc/{pid}/task/{hilo}/schedstat")
            if pide is None and datos is not None:  # sin schedstat: lo gastado, y si está en la cola (R)
                pide = sum(datos[2][:2]) / TICS
                lectura.en_disco = lectura.en_disco or datos[0] == "R"
            if pide is not None:
                lectura.pide[int(hilo)] = pide
    lectura.procesos = frozenset(procesos)
    return lectura


def se_puede_leer():
    """¿Hay /proc con lo que `leer` necesita? (Linux; no macOS ni Windows.)"""
    return _stat(f"/proc/{os.getpid()}/stat") is not None


# ---------------------------------------------------------------- la regla


def pedido_entre(antes, ahora):
    """Segundos de CPU pedidos (gastados o esperados en la cola) entre dos lecturas: lo de cada hilo
    que estaba en las dos, todo lo de los hilos nuevos, y como poco la CPU que gastó el árbol (un
    proceso que nació y acabó entre las dos no tiene hilos que leer, pero su CPU está en su padre)."""
    hilos = sum(max(0.0, v - antes.pide.get(h, 0.0)) for h, v in ahora.pide.items())
    return max(hilos, ahora.cpu - antes.cpu)


class Vigilancia:
    """La regla de «colgado» de un test (ver el docstring del módulo), con las lecturas que se le den.

        v = Vigilancia(limite, con_proc=True)
        v.vida(ahora)              # cada señal de vida del test (un evento de pytest)
        v.muestra(ahora, lectura)  # cada MUESTREO s, lo que dice `leer`
        v.colgado(ahora)           # "" si no, o CPU, PARADO o RELOJ
    """

    def __init__(self, limite, ahora, con_proc=True, arranque=0):
        self.con_proc, self.ultima, self.cuando = con_proc, None, None
        # Hasta la primera señal de vida, el arranque de pytest (cargarlo y cargar el curso) tiene
        # como poco `arranque` s, de CPU y de reloj.
        self._poner(max(limite, arranque), ahora)
        self.limite_del_test = limite

    def _poner(self, limite, ahora):
        self.limite = limite
        self.reloj = limite * RELOJ_POR_LIMITE if self.con_proc else limite
        self.desde, self.base = ahora, None
        self.parado = self.parado_max = 0.0  # s seguidos parado (vistos de cerca), ahora y como mucho
        self.hueco = 0.0  # el intervalo más largo entre dos lecturas (si pasa de VISTO_DE_CERCA, quien vigila no llega)

    def vida(self, ahora):
        """El test ha dado señales de vida: todo cuenta desde aquí, con el límite de un test."""
        self._poner(self.limite_del_test, ahora)

    def muestra(self, ahora, lectura):
        if lectura is None:
            return
        if self.base is None:
            self.base = lectura.cpu
        intervalo = ahora - self.cuando if self.ultima is not None else 0.0
        self.hueco = max(self.hueco, intervalo)
        if 0 < intervalo <= VISTO_DE_CERCA:  # uno más largo no se vio de cerca: ni suma ni borra
            pide = pedido_entre(self.ultima, lectura) / intervalo
            if lectura.en_disco or pide >= UMBRAL_PIDE or lectura.procesos != self.ultima.procesos:
                self.parado = 0.0
            else:
                self.parado += min(intervalo, ahora - self.desde)
            self.parado_max = max(self.parado_max, self.parado)
        self.ultima, self.cuando = lectura, ahora

    def cpu(self):
        """Segundos de CPU del árbol desde la última señal de vida (desde la primera lectura tras ella)."""
        return 0.0 if self.base is None or self.ultima is None else self.ultima.cpu - self.base

    def medida(self, ahora):
        """(s de reloj, s de CPU, s seguidos parado como mucho, s del hueco más largo entre dos
        lecturas) desde la última señal de vida: lo que `medir hub` apunta de cada test."""
        return ahora - self.desde, self.cpu(), self.parado_max, self.hueco

    def colgado(self, ahora):
        if self.con_proc and self.cpu() >= self.limite:
            return CPU
        if self.con_proc and self.parado >= self.limite:
            return PARADO
        if ahora - self.desde >= self.reloj:
            return RELOJ
        return ""

    def motivo(self, por):
        """Lo que se le dice al alumno de un test colgado `por` CPU, PARADO o RELOJ."""
        return {CPU: f"no terminó en {self.limite:g} s de CPU (¿un bucle sin fin?)",
                PARADO: f"no terminó en {self.limite:g} s parado, sin pedir CPU ni disco "
                        "(¿espera algo que no llega?)",
                RELOJ: f"no terminó en {self.reloj:g} s"}[por]


class Total:
    """El presupuesto de una corrida entera (todas sus vueltas de pytest), con la misma idea: `limite`
    s de CPU de sus árboles de procesos, o RELOJ_POR_LIMITE × `limite` de reloj; sin /proc, `limite`
    s de reloj. Con la máquina cargada, la corrida de la 07 en `calificar` (un solo proceso, 434
    tests) pasaba de los 600 s de reloj sin que nada se colgara."""

    def __init__(self, limite, ahora, con_proc=True):
        self.limite, self.con_proc = limite, con_proc
        self.reloj = limite * RELOJ_POR_LIMITE if con_proc else limite
        self.fin = ahora + self.reloj
        self.gastado = 0.0  # s de CPU de las vueltas ya acabadas

    def agotado(self, ahora, cpu_de_la_vuelta):
        """"" si queda, o CPU o RELOJ si se acabó."""
        if self.con_proc and self.gastado + cpu_de_la_vuelta >= self.limite:
            return CPU
        return RELOJ if ahora >= self.fin else ""

    def motivo(self, por):
        return (f"se acabaron los {self.limite:g} s de CPU de la corrida" if por == CPU else
                f"se acabaron los {self.reloj:g} s de la corrida")

