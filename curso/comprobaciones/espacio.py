"""Para el alumno (`python -m curso comprobar N`): su espacio, comprobado por el contrato de cada ejercicio hasta el punto de control N.

`comparar N` enseña en qué se diferencia tu código del de referencia; `comprobar N` dice si
*cumple* lo que pide cada ejercicio: corre contra los módulos de tu espacio, no contra los del
punto de control, lo que califica (`curso/comprobaciones/contrato.py`): la comprobación de cada
ejercicio, la misma que `comprobar("N.M")` en el cuaderno, y los tests de contrato del punto de
control N (`checkpoints/NN_*/tests/`, los de la marca `contrato`). Los demás tests del punto de
control son de regresión del código que da el curso y no se corren. Escribe una línea por módulo:
✔, o ✘ con el primer test que falla, su ejercicio y lo que esperaba («ejercicio 3.2 pendiente» si
es que llega a su esbozo), o ⧗ con el test que se colgó; el código que da el curso, «·», salvo si
falta o no se puede importar.

Tu código corre en otro proceso, sobre una copia de tu espacio en una carpeta temporal, con un
presupuesto por test (`--limite S`: segundos de CPU, o parado sin pedir nada; la carga de la máquina
no cuenta): un bucle sin fin deja ese test «colgado» y los demás siguen;
al acabar no queda en marcha nada de lo que arrancó tu código (ver `curso/comprobaciones/aparte.py` y
`curso/clase/guardian.py`), y la carpeta temporal se borra.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

from curso import rutas
from curso.comprobaciones import aparte, culpa, tests_del_curso, veredicto

INTERRUMPIDO = 130  # el código de salida de la costumbre tras un Ctrl-C (128 + SIGINT)
# Procesos de tests a la vez en `comprobar N`: uno por cada TESTS_POR_PROCESO tests, como mucho
# PARTES (y no más del doble de núcleos). Muchos tests esperan más de lo que calculan, y en paralelo
# esas esperas se solapan; pero cada proceso paga su arranque (pytest y el curso: un par de segundos
# de CPU), que en un punto pequeño cuesta más de lo que ahorra. Las cifras, en curso/README.md.
PARTES = 4
TESTS_POR_PROCESO = 100
FOTOS_COMO_MUCHO = 5  # veces que se copia el espacio si cambia mientras se copia


def partes_para(tests):
    return max(1, min(PARTES, 2 * (os.cpu_count() or 1), -(-len(tests) // TESTS_POR_PROCESO)))


def modulos_de(carpeta):
    """Los módulos (sin .py) de una carpeta, en orden."""
    return sorted(p.stem for p in Path(carpeta).glob("*.py"))


def lecciones_de_los_modulos():
    """{módulo: primera lección cuyo punto de control lo tiene}."""
    leccion_de = {}
    for numero, carpeta in sorted(rutas.puntos_de_control().items()):
        for m in modulos_de(carpeta):
            leccion_de.setdefault(m, numero)
    return leccion_de


def _huella(espacio):
    """{ruta relativa: (tamaño, hora de modificación en ns)} del código del espacio."""
    huella = {}
    for relativa, fichero in rutas.ficheros(espacio).items():
        try:
            datos = fichero.stat()
        except OSError:  # se borró mientras se miraba
            continue
        huella[relativa] = (datos.st_size, datos.st_mtime_ns)
    return huella


def tomar_foto(espacio, destino):
    """Copia el código de `espacio` en `destino`, de una vez, antes de correr nada: todas las
    corridas de una comprobación (las partes a la vez y las de la culpa, que llegan un minuto
    después) ven el mismo espacio, aunque el alumno lo cambie mientras tanto desde el cuaderno. Si
    algo cambió mientras se copiaba (lo que copió no es lo que hay al acabar), vuelve a copiar.
    Devuelve `destino`."""
    destino = Path(destino)
    for _ in range(FOTOS_COMO_MUCHO):
        if destino.exists():
            shutil.rmtree(destino)
        destino.mkdir(parents=True)
        antes = _huella(espacio)
        for relativa in antes:
            (destino / relativa).parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(Path(espacio) / relativa, destino / relativa)
            except FileNotFoundError:
                break
        else:
            if _huella(espacio) == antes:
                return destino
    return destino  # cambia sin parar: la última copia, que es de un momento


def agrupar_por_modulo(modulos, ejercicio_de=None):
    """La función que achaca cada test a su módulo: el de su ejercicio, si califica (`ejercicio_de`:
    {test: ejercicio}); si no, el de su fichero (o su fichero si no es de ninguno)."""
    ejercicio_de = ejercicio_de or {}

    def grupo_de(test):
        if test in ejercicio_de:
            return tests_del_curso.modulo_del_ejercicio(ejercicio_de[test]) or tests_del_curso.fichero_de(test)
        return veredicto.modulo_de_test(tests_del_curso.fichero_de(test), modulos) or tests_del_curso.fichero_de(test)
    return grupo_de


class Progreso:
    """Dice una línea por módulo en cuanto acaban todos sus tests, mientras corren los demás."""

    def __init__(self, tests, grupo_de, escribir=print):
        self.quedan, self.fallan, self.grupo_de, self.escribir = {}, {}, grupo_de, escribir
        for t in tests:
            self.quedan.setdefault(grupo_de(t), set()).add(t)

    def __call__(self, test, falla):
        grupo = self.grupo_de(test)
        quedan = self.quedan.get(grupo)
        if not quedan or test not in quedan:
            return
        quedan.discard(test)
        self.fallan[grupo] = self.fallan.get(grupo, 0) + bool(falla)
        if not quedan:
            nombre = f"{grupo}.py" if not grupo.endswith(".py") else grupo
            fallan = self.fallan[grupo]
            self.escribir(f"  {'✘' if fallan else '✔'} {nombre}" + (f" ({fallan} fallan)" if fallan else ""),
                          flush=True)


def partir(tests, partes):
    """`tests` en `partes` grupos para correrlos a la vez, cada fichero entero en uno: de los que
    tienen más tests a los que menos, cada fichero al grupo que menos lleva (en su orden dentro de
    cada grupo). Repartir un fichero entre grupos (uno de cada `partes`) hacía que cada grupo
    preparara otra vez las fixtures de módulo de ese fichero (en el punto 06, la ejecución sin
    caídas del simulacro, una vez por grupo) e importara todos los ficheros: `comprobar 6` gastaba
    41 s de CPU así y 31 s por ficheros (cifras en curso/README.md)."""
    por_fichero = {}
    for test in tests:
        por_fichero.setdefault(tests_del_curso.fichero_de(test), []).append(test)
    n = max(1, min(partes, len(por_fichero)))
    grupos, cargas = [[] for _ in range(n)], [0] * n
    for _, suyos in sorted(por_fichero.items(), key=lambda par: (-len(par[1]), par[0])):
        i = cargas.index(min(cargas))
        grupos[i] += suyos
        cargas[i] += len(suyos)
    return [grupo for grupo in grupos if grupo]


def correr_en_partes(ficheros, carpeta_punto, tests, partes, **opciones):
    """Como aparte.correr_aparte, con los tests repartidos en `partes` procesos a la vez (cada uno
    con su copia, su presupuesto por test y su guardián); una sola Corrida con todo. Muchos tests
    esperan (a un proceso hijo, a un servidor, a que venza un plazo): en paralelo, esas esperas se
    solapan."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    avisar = opciones.pop("avisar", None)
    cerrojo = threading.Lock()

    def avisar_con_cerrojo(test, falla):
        with cerrojo:
            avisar(test, falla)

    grupos = partir(tests, partes)

    def correr_grupo(g):
        ids = [tests_del_curso.ejercicio_de_test(t) for t in g if tests_del_curso.ejercicio_de_test(t)]
        normales = [t for t in g if tests_del_curso.ejercicio_de_test(t) is None]
        return aparte.correr_aparte(ficheros, carpeta_punto, normales, ids,
                                    avisar=avisar_con_cerrojo if avisar else None, **opciones)

    with ThreadPoolExecutor(max_workers=len(grupos) or 1) as grupo:
        corridas = list(grupo.map(correr_grupo, grupos))
    junta = aparte.Corrida()
    for c in corridas:
        junta.resultados.update(c.resultados)
        junta.notas += c.notas
        junta.vueltas += c.vueltas
        junta.segundos = max(junta.segundos, c.segundos)
        junta.salida += c.salida
    return junta


def lo_que_califica(carpeta_punto, ficheros_de_tests=None, ejercicios=None):
    """{test: ejercicio} de lo que `comprobar N` corre contra el punto de control: los tests de
    contrato y la comprobación de los ejercicios (`ejercicios`, o todos los que se comprueban en sus
    módulos). Con `ficheros_de_tests`, solo los tests de contrato de esos ficheros, y (si no se dicen
    `ejercicios`) la comprobación de sus ejercicios y de los del módulo de cada fichero."""
    contratos = {t: id for t, id in tests_del_curso.que_califican(carpeta_punto, ()).items()
                 if ficheros_de_tests is None or tests_del_curso.fichero_de(t) in ficheros_de_tests}
    if ejercicios is None and ficheros_de_tests is not None:
        modulos = {veredicto.modulo_de_test(f, modulos_de(carpeta_punto)) for f in ficheros_de_tests}
        ejercicios = [id for id in tests_del_curso.ejercicios_con_modulo(carpeta_punto)
                      if id in contratos.values() or tests_del_curso.modulo_del_ejercicio(id) in modulos]
    if ejercicios is None:
        ejercicios = tests_del_curso.ejercicios_con_modulo(carpeta_punto)
    return {**contratos, **{tests_del_curso.test_de_ejercicio(id): id for id in ejercicios}}


def comprobar_en(espacio, carpeta_punto, limite=aparte.LIMITE_TEST, parar=None, a_la_vista=None,
                 avisar=None, a_la_vez=2, ficheros_de_tests=None, ejercicios=None):
    """Corre lo que califica (`lo_que_califica`) contra los módulos de `espacio`, aparte, y reparte
    la culpa de lo que falle (`curso/comprobaciones/culpa.py`); la Comprobacion con una línea por
    módulo. avisar(test, falla): al acabar cada test de la primera corrida; a_la_vista: cómo se
    escribe la carpeta del espacio en los mensajes; ficheros_de_tests: solo los tests de contrato
    de esos ficheros («test_pasos.py»; todos si no se dice); ejercicios: solo esos ejercicios
    (todos los de los módulos del punto de control si no se dice).

    Todo corre sobre una foto del espacio tomada antes de empezar (`tomar_foto`): el veredicto es
    el del espacio de ese momento, aunque cambie mientras se comprueba."""
    a_la_vista = a_la_vista or f"{Path(espacio)}/"
    with tempfile.TemporaryDirectory(prefix="curso-foto-") as carpeta:
        foto = tomar_foto(espacio, Path(carpeta) / Path(espacio).name)
        return _comprobar_la_foto(foto, carpeta_punto, limite, parar, a_la_vista, avisar, a_la_vez,
                                  ficheros_de_tests, ejercicios)


def _comprobar_la_foto(espacio, carpeta_punto, limite, parar, a_la_vista, avisar, a_la_vez, ficheros_de_tests,
                       ejercicios):
    carpeta_punto = Path(carpeta_punto)
    modulos = modulos_de(carpeta_punto)
    ejercicio_de = lo_que_califica(carpeta_punto, ficheros_de_tests, ejercicios)
    tests = list(ejercicio_de)
    grupo_de = agrupar_por_modulo(modulos, ejercicio_de)
    corrida = correr_en_partes(rutas.ficheros(espacio), carpeta_punto, tests, partes_para(tests),
                               limite_test=limite, parar=parar, grupo_de=grupo_de, avisar=avisar,
                               a_la_vista=a_la_vista)

    def correr(ficheros, seleccion, ejercicios):
        return aparte.correr_aparte(ficheros, carpeta_punto, seleccion, ejercicios, limite_test=limite,
                                    parar=parar, grupo_de=grupo_de, a_la_vista=a_la_vista)

    def modulo_de(test):
        return tests_del_curso.modulo_del_ejercicio(ejercicio_de[test]) if test in ejercicio_de else \
            veredicto.modulo_de_test(tests_del_curso.fichero_de(test), modulos)

    if avisar is not None and any(r.estado not in (aparte.PASA, aparte.SALTADO) for r in corrida.resultados.values()):
        print("Buscando de quién es cada fallo (cada módulo que falla, con los demás de referencia)…", flush=True)
    reparto = culpa.repartir(espacio, carpeta_punto, tests, corrida.resultados, correr, modulo_de,
                             a_la_vista, a_la_vez, ejercicio_de=ejercicio_de)
    resultados, por = culpa.resultados_para(reparto, corrida.resultados, modulo_de)
    lineas = veredicto.lineas_de(modulos, set(modulos_de(espacio)), tests, resultados,
                                 leccion_de=lecciones_de_los_modulos(), por=por, culpables=reparto.culpables,
                                 modulo_de=modulo_de, ejercicio_de=ejercicio_de,
                                 punto=rutas.numero_de_leccion(carpeta_punto.name))
    pasan, total = veredicto.cuentas(tests, resultados)
    return veredicto.Comprobacion(rutas.numero_de_leccion(carpeta_punto.name), carpeta_punto.name.split('_', 1)[1], lineas, limite,
                                  pasan, total, ejercicios=veredicto.ejercicios_de(tests, resultados, ejercicio_de),
                                  notas=corrida.notas, sin_comprobar=veredicto.sin_comprobar(tests, resultados),
                                  culpables=reparto.culpables)


def comprobar(n, espacio=None, limite=None):
    """`python -m curso comprobar N`: los tests del punto de control N contra tu espacio (o contra
    `espacio`), con `limite` segundos como mucho por test (aparte.LIMITE_TEST si no se dice).
    Escribe una línea por módulo y devuelve 0 si todo pasa, 1 si no, 2 si N no existe."""
    limite = limite or aparte.LIMITE_TEST
    try:
        _, carpeta = rutas.punto_de_control(n, orden="comprobar")
    except rutas.PuntoDeControlDesconocido as error:
        print(error, file=sys.stderr)
        return rutas.ARGUMENTO_INVALIDO
    de_donde = f"{Path(espacio)}/" if espacio else rutas.describir_espacio()
    espacio = Path(espacio).resolve() if espacio else rutas.espacio()
    if not espacio.is_dir():
        print(f"✘ No hay ningún espacio en {espacio}: escribe primero algún módulo "
              f"(o di cuál con --espacio CARPETA).")
        return 1
    print(f"Corriendo contra tu código la comprobación de cada ejercicio y los tests de contrato del punto "
          f"de control {carpeta.name.split('_')[0]} (cada test, como mucho {limite:g} s de CPU o parado); "
          "cada módulo, en cuanto acaban sus tests:", flush=True)
    try:
        modulos = modulos_de(carpeta)
        ejercicio_de = lo_que_califica(carpeta)
        progreso = Progreso(list(ejercicio_de), agrupar_por_modulo(modulos, ejercicio_de))
        comprobacion = comprobar_en(espacio, carpeta, limite, a_la_vista=f"{espacio}/", avisar=progreso)
    except KeyboardInterrupt:  # los tests ya están parados y su carpeta temporal, borrada
        print("Interrumpido: se han parado los tests.", file=sys.stderr)
        return INTERRUMPIDO
    print(veredicto.informe(comprobacion, de_donde))
    aparte_del_espacio = ejercicios_del_cuaderno(rutas.numero_de_leccion(carpeta.name))
    if aparte_del_espacio:
        print(aparte_del_espacio)
    return 0 if comprobacion.en_verde else 1


def ejercicios_del_cuaderno(numero):
    """La línea que dice dónde se comprueban los ejercicios hasta la lección `numero` que son
    funciones del cuaderno (los de la 02, el 3.1): no escriben nada en tu espacio, así que los tests
    de un punto de control no los miran, y sin esta línea `comprobar 2` no diría nada de ellos.
    None si no hay ninguno."""
    from curso.comprobaciones import ejercicios
    suyos = [e for e in ejercicios.cargar_registro().values() if e.modulo is None and e.leccion <= numero]
    if not suyos:
        return None
    ids = ejercicios.ordenados(e.id for e in suyos)
    como = ejercicios.enumerar_textos([f'comprobar("{id}")' for id in ids])
    return (f"ⓘ {'El ejercicio' if len(ids) == 1 else 'Los ejercicios'} {ejercicios.enumerar(ids)} "
            f"{'es una función' if len(ids) == 1 else 'son funciones'} del cuaderno, no de tu espacio: "
            f"estos tests no {'lo' if len(ids) == 1 else 'los'} miran. Se comprueba"
            f"{'' if len(ids) == 1 else 'n'} en el cuaderno de su lección, con {como}.")


# --- python -m curso comprobar ----------------------------------------------------------------

def argumentos_comprobar(analizador):
    analizador.description = ("Corre los tests del punto de control N contra los módulos de tu "
                              "espacio (no contra los del punto de control), en otro proceso y con "
                              "tiempo máximo, y dice una línea por módulo: ✔, o ✘ con el primer test "
                              "que falla. Sale con 0 si todo pasa y 1 si no.")
    analizador.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 03")
    analizador.add_argument("--espacio", metavar="CARPETA",
                            help="comprueba esta carpeta en vez de tu espacio (mi_agente/)")
    analizador.add_argument("--limite", metavar="S", type=analizador.positivo(float),
                            help="segundos de CPU como mucho por test, y segundos parado sin pedir "
                                 "CPU ni disco (30 si no se dice): el que pasa de ahí queda «colgado» "
                                 "y los demás siguen")


def orden_comprobar(args):
    return comprobar(args.n, espacio=args.espacio, limite=args.limite)
