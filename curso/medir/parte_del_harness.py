"""Para `medir harness`: con un modelo de verdad en esta máquina, cuánto del tiempo de cada turno es del harness y no del modelo.

Necesita un servidor de verdad en ANTHROPIC_BASE_URL (`python -m curso modelo` lo arranca); sin
él, lo dice y sale con 2. Corre la tarea de la lección 01 con el harness del punto de control 01
(agente, ModeloAPI, Traza), turno a turno: los segundos de cada petición al modelo y los del
harness entre una petición y la siguiente (sus herramientas incluidas). El objetivo: el harness,
muy por debajo del 1 %. (Los tokens por segundo del modelo los mide `python -m curso medir modelo`.)
"""
import contextlib
import io
import sys

from curso import rutas
from curso.material import modelo_real

OBJETIVO = 0.01  # la parte del harness en cada turno, como mucho


def main():
    url = modelo_real.servidor_real()
    if url is None:
        print("No hay un modelo de verdad en ANTHROPIC_BASE_URL (o es el servidor de ensayo). Arranca "
              "uno con «python -m curso modelo» y exporta la línea que imprime.")
        return 2
    props, maquina = modelo_real.propiedades(url), modelo_real.maquina()
    print(f"{props.get('modelo', '?')} (ventana {props.get('ventana', '?')}) en {url}; "
          f"{maquina['cpu']}, {maquina['nucleos']} núcleos.")
    sys.path.insert(0, str(rutas.PUNTOS / "01_el_bucle"))
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # la traza de cada turno no hace falta aquí
            traza = modelo_real.correr_leccion_01(url)
    finally:
        sys.path.remove(str(rutas.PUNTOS / "01_el_bucle"))
    harness, modelo, parte = modelo_real.parte_del_harness(traza["turnos"])
    print(f"\nLa tarea de la lección 01: {len(traza['turnos'])} petición(es), motivo «{traza['motivo']}».")
    for fila in traza["turnos"]:
        print(f"  {fila['que']}: modelo {fila['segundos']:.2f} s · harness {fila['segundos_del_harness'] * 1000:.1f} ms"
              f" · {fila['tokens_de_entrada']} tokens de entrada, {fila['tokens_de_salida']} de salida")
    print(f"El harness: {harness * 1000:.1f} ms de {modelo:.1f} s de modelo, el {parte:.3%} "
          f"(objetivo: menos del {OBJETIVO:.0%}).")
    return {"harness_s": harness, "modelo_s": modelo, "parte_del_harness": parte,
            "cumple_objetivo": parte < OBJETIVO}
