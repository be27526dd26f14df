"""Para la lección 06 y `medir todo`: el simulacro entero, con caídas en cada paso y caídas al azar.

Lo usan el test largo del curso (tests/lecciones/test_simulacro_06.py), el cuaderno 06 (la tabla del
simulacro) y `python -m curso medir todo`. Las cifras de tiempo son de esta máquina y de este
momento; las demás (caídas, resultados iguales, peticiones y tokens repetidos) salen igual en
cualquier máquina para las caídas en cada paso, y dependen del azar y de la carga para las otras.

1. `sin_caidas`: la ejecución de referencia, en un proceso, cronometrada: entera, y desde que
   apunta su vida (el trabajo durable, sin el arranque de Python).
2. `caidas_por_separado`: para cada paso de la ejecución (y cada edición aplicada), una copia
   nueva, un proceso que muere justo después de ese paso y reanudar hasta el final. (Y, aparte,
   `simulacro.caidas_al_editar`: una caída antes de cada llamada al sistema de `editar`.)
3. `caidas_al_azar`: procesos matados desde fuera en momentos al azar del trabajo durable de
   la ejecución, reanudados hasta acabar; tantas ejecuciones como hagan falta para llegar a
   `caidas` caídas. Cada momento se saca en dos tiradas: tras qué paso de la ejecución (todos
   igual de probables), y cuánto después, entre 0 y lo que separa dos pasos en la referencia.
   Antes se sacaba un retraso desde el arranque del proceso, y la mayoría de las caídas (84 de
   100) llegaban en el arranque de Python, antes de que hubiera hecho nada; un retraso desde su
   vida también dependía de la carga: con la máquina ocupada, la primera petición se llevaba la
   mitad de las caídas.

`aviso`, si se da, se llama (desde cualquier hilo) cada vez que acaba una ejecución con caídas o
una caída al azar: con él, una celda lenta del cuaderno enseña que avanza.
"""
import collections
import hashlib
import pickle
import random
import statistics
import sys
import time

from curso.material import simulacro
from curso.material.simulacro import A_LA_VEZ, repartir
from curso.material.una_vez import una_vez

SEMILLA = 20240606
CAIDAS_AL_AZAR = 100
# Para `una_vez` (curso/material/una_vez.py): el cuaderno 06 corre estas tres en una celda pesada, y
# en los tests la corren varios pases; lo que leen es la carpeta de módulos `punto` (y el curso).
def _el_punto(punto, *_, **__):
    return [punto]


def _huella(valor):
    return hashlib.sha256(pickle.dumps(valor)).hexdigest()


def _sin_caidas_por_valor(punto, plantilla, url, contador, carpeta):
    return ()


def _por_separado_por_valor(punto, plantilla, url, contador, carpeta, referencia, a_la_vez=A_LA_VEZ,
                            una_por_clase=False, aviso=None):
    return _huella(referencia), a_la_vez, una_por_clase


def _al_azar_por_valor(punto, plantilla, url, contador, carpeta, referencia, caidas=CAIDAS_AL_AZAR,
                       semilla=SEMILLA, a_la_vez=A_LA_VEZ, aviso=None):
    return _huella(referencia), caidas, semilla, a_la_vez


@una_vez(_el_punto, _sin_caidas_por_valor)
def sin_caidas(punto, plantilla, url, contador, carpeta):
    """{"foto", "pasos", "segundos", "trabajo_s", "peticiones", "entrada"} de la ejecución sin
    caídas; `trabajo_s`, desde que apunta su vida hasta que acaba."""
    base = simulacro.copiar_ejecucion(plantilla, carpeta / "sin_caidas")
    antes, inicio = len(contador.peticiones), time.monotonic()
    proceso = simulacro.lanzar(punto, base, url, **{simulacro.AVISAR_PASOS: "1"})
    assert simulacro.hasta_el_paso(proceso, 1), proceso.stderr.read()  # el 1, su vida
    vida = time.monotonic()
    _, errores = proceso.communicate(timeout=simulacro.ESPERA_DE_UN_PROCESO_S)
    final = time.monotonic()
    assert proceso.returncode == 0, errores
    return {"foto": simulacro.foto(base), "pasos": simulacro.pasos_de(base), "segundos": final - inicio,
            "trabajo_s": final - vida, "peticiones": len(contador.peticiones) - antes,
            "entrada": contador.entrada(antes)}


@una_vez(_el_punto, _por_separado_por_valor, aviso="aviso")
def caidas_por_separado(punto, plantilla, url, contador, carpeta, referencia, a_la_vez=A_LA_VEZ,
                        una_por_clase=False, aviso=None):
    """[{"paso", "clase", "agente", "igual", "peticiones_de_mas", "tokens_de_mas"}]: una fila por
    caída, una tras cada paso de la ejecución y otra tras cada edición aplicada (clase "efecto").
    Cada caída, en su propia copia de la ejecución preparada; `a_la_vez` caídas a la vez. Con
    `una_por_clase`, solo tras el primer paso de cada clase (la muestra corta del cuaderno)."""
    R = simulacro.pasos_de_la_ejecucion(referencia["pasos"])
    ediciones = sum(1 for fila in referencia["foto"]["llamadas"] if fila[2] == "editar")
    caidas = [(g, clase, agente, f"paso:{g + 2}") for g, (clase, agente) in enumerate(R)]
    caidas += [(None, "efecto", None, f"efecto:{k}") for k in range(1, ediciones + 1)]
    if una_por_clase:
        caidas = [c for i, c in enumerate(caidas) if c[1] not in {d[1] for d in caidas[:i]}]

    def caer(caida, url, contador):
        g, clase, agente, donde = caida
        base = simulacro.copiar_ejecucion(plantilla, carpeta / f"caida-{donde.replace(':', '-')}")
        antes = len(contador.peticiones)
        codigo, _, errores = simulacro.reanudar(punto, base, url, CURSO_MORIR_EN=donde)
        assert codigo == -9, errores
        if g is not None:
            assert tuple(simulacro.pasos_de(base)[-1][2:]) == (clase, agente)
        simulacro.hasta_el_final(punto, base, url)
        if aviso:
            aviso()
        return {"paso": g, "clase": clase, "agente": agente,
                "igual": simulacro.foto(base) == referencia["foto"],
                "peticiones_de_mas": len(contador.peticiones) - antes - referencia["peticiones"],
                "tokens_de_mas": contador.entrada(antes) - referencia["entrada"]}

    return repartir(caidas, url, contador, caer, a_la_vez)


@una_vez(_el_punto, _al_azar_por_valor, aviso="aviso")
def caidas_al_azar(punto, plantilla, url, contador, carpeta, referencia, caidas=CAIDAS_AL_AZAR,
                   semilla=SEMILLA, a_la_vez=A_LA_VEZ, aviso=None):
    """{"caidas", "ejecuciones", "iguales", "tras", "primera_peticion_s", "peticiones_de_mas",
    "tokens_de_mas"}. Cada proceso se mata en un momento al azar del trabajo durable de la
    ejecución (ver `_caidas_al_azar`). `tras` cuenta tras qué clase de paso cayó cada uno ("vida"
    si aún no había dado otro; "arranque" si ni eso, lo que ya no pasa).
    `primera_peticion_s`: de cada proceso lanzado tras una caída que llegó a pedir algo al modelo,
    los segundos desde que se lanzó hasta su primera petición. Las `caidas` (exactamente esas) se
    reparten entre `a_la_vez` hilos, cada uno con su azar (de `semilla`) y su servidor."""
    a_la_vez = max(1, min(a_la_vez, caidas))
    cuotas = [caidas // a_la_vez + (h < caidas % a_la_vez) for h in range(a_la_vez)]

    def tanda(h, url, contador):
        return _caidas_al_azar(punto, plantilla, url, contador, carpeta / f"azar{h}", referencia,
                               cuotas[h], random.Random(semilla + h), aviso)

    partes = repartir(list(range(a_la_vez)), url, contador, tanda, a_la_vez)
    total = {"caidas": 0, "ejecuciones": 0, "iguales": 0, "tras": collections.Counter(),
             "primera_peticion_s": [], "peticiones_de_mas": 0, "tokens_de_mas": 0}
    for parte in partes:
        for clave, valor in parte.items():
            total[clave] += collections.Counter(valor) if clave == "tras" else valor
    total["tras"] = dict(total["tras"])
    return total


CAIDAS_POR_EJECUCION = 4  # como mucho; cada ejecución se lleva entre 1 y estas, al azar


def _caidas_al_azar(punto, plantilla, url, contador, carpeta, referencia, caidas, azar, aviso=None):
    """Lo de `caidas_al_azar`, en un hilo: sus `caidas`, una ejecución tras otra.

    Cada ejecución saca primero sus momentos: entre 1 y CAIDAS_POR_EJECUCION pasos distintos de
    la ejecución sin caídas (la lista R de `simulacro.pasos_de_la_ejecucion`), todos igual de
    probables. Para cada uno, lanza un proceso, espera a que dé ese paso (contando los que ya se
    dieron antes) y lo mata entre 0 y lo que separa dos pasos en la referencia después. Así las
    caídas se reparten por toda la ejecución: sacarlas de los pasos que le quedan a cada proceso
    las amontonaba al final, porque cada caída deja menos trabajo a la siguiente."""
    de_la_ejecucion = simulacro.pasos_de_la_ejecucion(referencia["pasos"])
    hueco_s = referencia["trabajo_s"] / len(de_la_ejecucion)
    carpeta.mkdir()
    total = ejecuciones = iguales = peticiones = tokens = 0
    tras, primera = collections.Counter(), []
    while total < caidas:
        ejecuciones += 1
        base = simulacro.copiar_ejecucion(plantilla, carpeta / f"azar-{ejecuciones}")
        antes, tras_una_caida = len(contador.peticiones), False
        cuantas = min(caidas - total, azar.randint(1, CAIDAS_POR_EJECUCION))
        momentos = sorted(azar.sample(range(1, len(de_la_ejecucion) + 1), cuantas))
        esperas = [azar.uniform(0, hueco_s) for _ in momentos]
        for momento, espera in zip(momentos, esperas, strict=True):
            hechos = simulacro.pasos_de(base)
            dados = sum(1 for _, vida, clase, _ in hechos if vida >= 1 and clase != "vida")
            if momento <= dados:  # la caída anterior llegó más tarde que este momento: se salta
                continue
            lanzado = time.monotonic()
            proceso = simulacro.lanzar(punto, base, url, **{simulacro.AVISAR_PASOS: "1"})
            if simulacro.hasta_el_paso(proceso, momento - dados + 1):  # su vida es su paso 1
                time.sleep(espera)
            proceso.kill()
            _, errores = proceso.communicate(timeout=simulacro.ESPERA_DE_UN_PROCESO_S)
            if tras_una_caida:
                nuevas = [t for t, _ in contador.peticiones[antes:] if t >= lanzado]
                if nuevas:
                    primera.append(min(nuevas) - lanzado)
            if proceso.returncode != -9:  # terminó antes de llegar al momento: no hubo caída
                assert proceso.returncode == 0 or simulacro.YA_TERMINO in errores, errores
                break
            total, tras_una_caida = total + 1, True
            ahora = simulacro.pasos_de(base)
            tras[ahora[-1][2] if len(ahora) > len(hechos) else "arranque"] += 1
            if aviso:
                aviso()
        simulacro.hasta_el_final(punto, base, url)
        iguales += simulacro.foto(base) == referencia["foto"]
        peticiones += len(contador.peticiones) - antes - referencia["peticiones"]
        tokens += contador.entrada(antes) - referencia["entrada"]
    return {"caidas": total, "ejecuciones": ejecuciones, "iguales": iguales, "tras": dict(tras),
            "primera_peticion_s": primera, "peticiones_de_mas": peticiones, "tokens_de_mas": tokens}


def tabla(filas):
    """La tabla de las caídas en cada paso: por clase de paso, cuántas caídas, cuántas acabaron
    igual que sin caídas, y las peticiones y tokens de entrada que hubo que repetir."""
    por_clase = {}
    for fila in filas:
        cuenta = por_clase.setdefault(fila["clase"], [0, 0, 0, 0])
        cuenta[0] += 1
        cuenta[1] += fila["igual"]
        cuenta[2] += fila["peticiones_de_mas"]
        cuenta[3] += fila["tokens_de_mas"]
    lineas = [f"{'tras el paso':16} {'caídas':>6} {'iguales':>7} {'peticiones de más':>17} {'tokens de más':>13}"]
    for clase, (n, iguales, peticiones, tokens) in por_clase.items():
        lineas.append(f"{clase:16} {n:6d} {iguales:7d} {peticiones:17d} {tokens:13d}")
    n, iguales = len(filas), sum(f["igual"] for f in filas)
    peticiones, tokens = sum(f["peticiones_de_mas"] for f in filas), sum(f["tokens_de_mas"] for f in filas)
    lineas.append(f"{'total':16} {n:6d} {iguales:7d} {peticiones:17d} {tokens:13d}")
    return "\n".join(lineas)


def main(argv=None):
    """`python -m curso medir todo`: el simulacro entero con el punto de control 06, y sus cifras."""
    from curso import rutas
    punto = rutas.puntos_de_control()[6]
    with simulacro.carpeta_en_memoria() as carpeta, simulacro.servidor_que_cuenta() as (url, contador):
        plantilla = carpeta / "plantilla"
        simulacro.preparar(punto, plantilla)
        referencia = sin_caidas(punto, plantilla, url, contador, carpeta)
        print(f"Sin caídas: {referencia['segundos']:.2f} s de reloj en un proceso (arranque incluido; "
              f"{referencia['trabajo_s']:.2f} s desde que apunta su vida), "
              f"{referencia['peticiones']} peticiones, {referencia['entrada']} tokens de entrada.")
        filas = caidas_por_separado(punto, plantilla, url, contador, carpeta, referencia)
        print("\nUna caída tras cada paso, cada una en su propia ejecución:")
        print(tabla(filas))
        (carpeta / "editar").mkdir()
        editar = simulacro.caidas_al_editar(punto, carpeta / "editar")
        iguales = sum(c["igual"] for c in editar["caidas"])
        print(f"\nUna edición que acorta un fichero de {editar['bytes']} bytes a {editar['bytes_despues']}, con una "
              f"caída antes de cada una de sus {len(editar['llamadas'])} llamadas al sistema "
              f"({', '.join(dict.fromkeys(editar['llamadas']))}): {iguales} de {len(editar['caidas'])} "
              "acabaron igual que sin caídas.")
        (carpeta / "relectura").mkdir()
        relee = simulacro.preparar_relectura(punto, carpeta / "relectura" / "plantilla").parent
        sin_caer = sin_caidas(punto, relee, url, contador, carpeta / "relectura")
        filas_relee = caidas_por_separado(punto, relee, url, contador, carpeta / "relectura", sin_caer)
        limpiezas = sum(1 for _, _, clase, _ in sin_caer["pasos"] if clase == "limpieza")
        print(f"\nCon el hijo que relee ({limpiezas} paso(s) «limpieza»; RELECTURA en "
              "curso/material/simulacro.py), una caída tras cada paso:")
        print(tabla(filas_relee))
        azar = caidas_al_azar(punto, plantilla, url, contador, carpeta, referencia)
        print(f"\nAl azar: {azar['caidas']} caídas en {azar['ejecuciones']} ejecuciones; "
              f"{azar['iguales']} de {azar['ejecuciones']} acabaron igual que sin caídas.")
        print("Tras qué paso cayó cada proceso: " + ", ".join(f"{k} {v}" for k, v in sorted(azar["tras"].items())))
        print("  (cada momento, al azar sobre el trabajo durable: tras uno de los pasos de la ejecución, y "
              f"entre 0 y {referencia['trabajo_s'] / len(simulacro.pasos_de_la_ejecucion(referencia['pasos'])):.3f} s "
              "después; no sobre el arranque de Python)")
        print(f"Peticiones repetidas: {azar['peticiones_de_mas']}; con {azar['tokens_de_mas']} tokens de entrada.")
        if azar["primera_peticion_s"]:
            print(f"Del arranque tras una caída a la primera petición nueva: mediana "
                  f"{statistics.median(azar['primera_peticion_s']):.3f} s, máximo {max(azar['primera_peticion_s']):.3f} s "
                  f"({len(azar['primera_peticion_s'])} arranques).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
