"""Tests de la regla de «colgado» (`curso/comprobaciones/colgados.py`): por la CPU que quema el árbol
de procesos de un test, por el tiempo que lleva parado sin pedir nada, o por un reloj holgado.

La regla es pura (se le dan lecturas): se prueba con lecturas inventadas con la forma de las que da
/proc, cada una frente a su variante ingenua, la que la hace falta: solo el reloj (la carga marca
colgado un test correcto), solo la CPU (un interbloqueo no acaba nunca). La lectura de /proc, con
procesos de verdad: la CPU de un hijo que ya acabó cuenta. Un bucle sin fin y un `sleep` eterno de
verdad, en `test_comprobar_espacio.py` y aquí abajo.
"""
import re
import subprocess
import sys
import time

import pytest

from curso.comprobaciones import colgados
from curso.comprobaciones.colgados import CPU, PARADO, RELOJ, Lectura, Total, Vigilancia

LIMITE = 30  # el de `comprobar N` y `calificar`
HILO = 1234  # el hilo de las lecturas inventadas


class SoloCPU(Vigilancia):
    """Variante ingenua: solo la CPU (sin parado ni reloj)."""

    def colgado(self, ahora):
        return CPU if self.cpu() >= self.limite else ""


def solo_reloj(ahora):
    """Variante ingenua: solo el reloj, como antes (sin /proc)."""
    return Vigilancia(LIMITE, ahora, con_proc=False)


def recorrer(vigilancia, cpu_por_s, pide_por_s, hasta, en_disco=False, procesos=lambda t: frozenset(),
             cada=colgados.MUESTREO):
    """Lecturas cada `cada` s de un árbol que gasta `cpu_por_s` s de CPU y pide `pide_por_s` por
    segundo de reloj, con los procesos `procesos(t)`, hasta `hasta` s; devuelve (cuándo, por qué)
    se colgó, o None."""
    t = 0.0
    while t <= hasta:
        vigilancia.muestra(t, Lectura(cpu_por_s * t, {HILO: pide_por_s * t}, en_disco, procesos(t)))
        por = vigilancia.colgado(t)
        if por:
            return t, por
        t += cada
    return None


def test_un_test_que_espera_a_la_cpu_no_esta_colgado_aunque_tarde_mucho():
    """El simulacro de la 07 con la máquina cargada (carga 16–19, dos núcleos): 46 s de reloj y 5,4 s
    de CPU, con su hilo en la cola casi siempre. Con cinco veces más carga gasta la misma CPU en
    cinco veces más reloj: con la regla no se cuelga; con solo el reloj (la variante ingenua, la de
    antes), a los 30 s."""
    reloj = 5 * 46
    assert recorrer(Vigilancia(LIMITE, 0), 5.4 / reloj, 1.0, reloj) is None
    assert recorrer(solo_reloj(0), 5.4 / reloj, 1.0, reloj) == (LIMITE, RELOJ)


def test_un_bucle_sin_fin_se_para_por_la_cpu_aunque_la_maquina_este_cargada():
    """Un bucle gasta un núcleo por segundo a solas y un cuarto con la máquina cargada: se para al
    gastar LIMITE s de CPU, mucho antes que el reloj holgado."""
    assert recorrer(Vigilancia(LIMITE, 0), 1.0, 1.0, 1000) == (LIMITE, CPU)
    cuando, por = recorrer(Vigilancia(LIMITE, 0), 0.25, 1.0, 1000)
    assert por == CPU and cuando == pytest.approx(LIMITE / 0.25)


def test_un_interbloqueo_se_para_por_parado_y_solo_con_la_cpu_no_acabaria():
    """Un árbol que no pide nada (espera a algo que no llega) se para a los LIMITE s parado; el que
    se despierta a ratos (un 5 % de un núcleo) también. Solo con la CPU, nunca."""
    assert recorrer(Vigilancia(LIMITE, 0), 0.0, 0.0, 1000) == (LIMITE, PARADO)
    assert recorrer(Vigilancia(LIMITE, 0), 0.01, 0.05, 1000)[1] == PARADO
    assert recorrer(SoloCPU(LIMITE, 0), 0.0, 0.0, 10_000) is None


def un_proceso_por_paso(t):
    """Los procesos de un simulacro de caídas: uno por paso, que vive un par de segundos y muere."""
    return frozenset({(1, 0), (1000 + int(t) // 2, int(t) // 2)})


class SinMirarLosProcesos(Vigilancia):
    """Variante ingenua: no mira si nacen o mueren procesos (solo CPU, cola y disco)."""

    def muestra(self, ahora, lectura):
        if lectura is not None:
            lectura.procesos = frozenset()
        super().muestra(ahora, lectura)


def test_un_arbol_que_lanza_procesos_no_esta_parado():
    """El simulacro con la máquina a carga 50: cada proceso corto nace y muere entre dos lecturas y
    lo que esperó en la cola se pierde con él; el árbol pide poco, pero no está parado: nacen y
    mueren procesos. Sin mirarlos (la variante ingenua), parado a los LIMITE s."""
    assert recorrer(Vigilancia(LIMITE, 0), 0.02, 0.02, 250, procesos=un_proceso_por_paso) is None
    assert recorrer(SinMirarLosProcesos(LIMITE, 0), 0.02, 0.02, 250, procesos=un_proceso_por_paso) == (
        LIMITE, PARADO)


def test_lo_que_no_se_vio_de_cerca_no_cuenta_como_parado():
    """Quien vigila también espera a la CPU, y entre dos lecturas lejanas nacen y mueren procesos
    sin que se vean. Un intervalo de más de VISTO_DE_CERCA s no suma
    tiempo parado (el reloj sigue siendo la red); contándolo, un test así sale parado."""
    cada = colgados.VISTO_DE_CERCA + 1
    assert recorrer(Vigilancia(LIMITE, 0), 0.02, 0.02, 250, cada=cada) is None
    assert recorrer(Vigilancia(LIMITE, 0), 0.0, 0.0, 1000, cada=cada) == (
        pytest.approx(LIMITE * colgados.RELOJ_POR_LIMITE, abs=cada), RELOJ)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(colgados, "VISTO_DE_CERCA", float("inf"))  # la variante ingenua: todo intervalo cuenta
        assert recorrer(Vigilancia(LIMITE, 0), 0.02, 0.02, 250, cada=cada)[1] == PARADO


def test_esperar_al_disco_no_es_estar_parado_y_el_reloj_es_la_red():
    """Un hilo en espera de disco (estado D, los fsync del simulacro con otros tres alumnos) no está
    parado; si no acaba nunca, lo para el reloj, a RELOJ_POR_LIMITE × LIMITE s."""
    assert recorrer(Vigilancia(LIMITE, 0), 0.0, 0.0, 1000, en_disco=True) == (
        LIMITE * colgados.RELOJ_POR_LIMITE, RELOJ)


def test_cada_senal_de_vida_vuelve_a_empezar_la_cuenta():
    """Cada test (cada evento de pytest) tiene su presupuesto: 25 s de CPU en uno y 25 en el
    siguiente no cuelgan a ninguno de los dos."""
    v = Vigilancia(LIMITE, 0)
    for t in range(0, 26):
        v.muestra(t, Lectura(float(t), {HILO: float(t)}))
    assert v.colgado(25) == ""
    v.vida(25.5)
    for t in range(26, 52):
        v.muestra(t, Lectura(float(t), {HILO: float(t)}))
        assert v.colgado(t) == ""


def test_el_arranque_de_pytest_tiene_su_propio_presupuesto():
    """Antes del primer evento (cargar pytest y el curso, 2–3 s de CPU) vale `arranque` si es mayor
    que el límite: un `--limite 1` no cuelga el arranque."""
    v = Vigilancia(1, 0, arranque=20)
    assert recorrer(v, 1.0, 1.0, 15) is None
    v.vida(15)
    assert v.limite == 1


def test_sin_proc_solo_vale_el_reloj_con_el_limite():
    v = Vigilancia(LIMITE, 0, con_proc=False)
    v.muestra(10, None)
    assert v.colgado(LIMITE - 1) == "" and v.colgado(LIMITE) == RELOJ
    assert v.motivo(RELOJ) == f"no terminó en {LIMITE} s"


def test_el_presupuesto_de_una_corrida_entera_es_de_cpu_y_la_carga_no_lo_acaba():
    """La corrida de la 07 en calificar (un proceso, todos los tests seguidos) gasta unos 90 s de
    CPU; con la máquina cargada puede tardar 900 s de reloj. Con 600 s de CPU no se acaba; con 600
    de reloj (la variante ingenua, la de antes), sí, y lo que faltara quedaría sin comprobar."""
    total = Total(600, 0)
    total.gastado = 60.0  # una vuelta anterior
    assert total.agotado(900, 30.0) == ""
    assert Total(600, 0, con_proc=False).agotado(900, 30.0) == RELOJ
    assert total.agotado(900, 540.0) == CPU and total.motivo(CPU) == "se acabaron los 600 s de CPU de la corrida"
    assert total.agotado(600 * colgados.RELOJ_POR_LIMITE, 0.0) == RELOJ


# ---------------------------------------------------------------- /proc de verdad


def cpu_de_los_vivos(raiz):
    """Variante ingenua de `leer`: suma solo lo que gastan los procesos vivos (sin lo de los hijos
    que ya acabaron)."""
    from curso.clase.guardian import descendientes, procesos
    tabla = procesos()
    total = 0.0
    for pid in descendientes(raiz, tabla):
        datos = colgados._stat(f"/proc/{pid}/stat")
        if datos is not None:
            total += sum(datos[2][:2]) / colgados.TICS
    return total


QUEMA = "import time\nfin = time.process_time() + 0.4\nwhile time.process_time() < fin: pass\n"


@pytest.mark.skipif(not colgados.se_puede_leer(), reason="sin /proc")
def test_la_cpu_de_un_hijo_que_ya_acabo_cuenta():
    """Un árbol cuyo hijo quemó 0,4 s de CPU y ya acabó (el bucle del alumno en un proceso que se
    relanza una y otra vez): `leer` lo cuenta, por lo que su padre recogió; sumar solo los vivos, no."""
    from curso.clase.guardian import descendientes, procesos
    raiz = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0"; exec sleep 30', QUEMA])
    try:
        fin = time.monotonic() + 30
        while time.monotonic() < fin:  # hasta que el hijo acabe y quede solo el sleep
            lectura = colgados.leer(raiz.pid)
            if not descendientes(raiz.pid, procesos()) and lectura.cpu >= 0.35:
                break
            time.sleep(0.05)
        assert lectura.cpu >= 0.35
        assert cpu_de_los_vivos(raiz.pid) < 0.1
    finally:
        raiz.kill()
        raiz.wait()


@pytest.mark.skipif(not colgados.se_puede_leer(), reason="sin /proc")
def test_un_bucle_sin_fin_de_verdad_sale_colgado_por_la_cpu(tmp_path, temporal):
    """El bucle de un alumno (`while True: pass`) en comprobar N: colgado por la CPU, no por el reloj."""
    from curso import rutas
    from curso.comprobaciones import espacio as comprobar_aparte
    espacio = tmp_path / "mi_agente"
    espacio.mkdir()
    for modulo in rutas.puntos_de_control()[0].glob("*.py"):
        (espacio / modulo.name).write_text(modulo.read_text(encoding="utf-8"), encoding="utf-8")
    calentamiento = espacio / "calentamiento.py"
    calentamiento.write_text(calentamiento.read_text(encoding="utf-8").replace(
        "def ultima_linea(salida):", "def ultima_linea(salida):\n    while True:\n        pass"), encoding="utf-8")
    c = comprobar_aparte.comprobar_en(espacio, rutas.puntos_de_control()[0], limite=2)
    (linea,) = c.lineas
    assert re.search(r"colgado: no terminó en 2 s de CPU \(¿un bucle sin fin\?\)", linea.detalle), linea.detalle
