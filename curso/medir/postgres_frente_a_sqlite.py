"""Para `medir postgres`: lo que cuesta y lo que aguanta el buzón en PostgreSQL (lección 07), en esta máquina.

Tres cifras, en la misma ejecución:

1. admisiones por segundo con 1, 2, 4 y 8 trabajadores a la vez (procesos aparte, cada uno con
   su conexión), en PostgreSQL (`buzon_pg.py`) y en SQLite (`buzon.py`, un fichero en el disco),
   y la proporción entre las dos. Todas las entregas ya están recibidas; los trabajadores se
   reparten las admisiones (los dos hijos de un padre, a trabajadores distintos: compiten por la
   fila del padre) y arrancan a la vez, cuando todos han conectado. Cada COMMIT espera al disco
   (synchronous_commit = on en PostgreSQL, synchronous=FULL en SQLite);
2. cuánto tarda explorar todos los intercalados de cada escenario de la lección 07 en PostgreSQL
   (`curso.explorables.carreras.explorar_en_postgres`, variante correcta);
3. el simulacro de varias máquinas (`curso.material.varias_maquinas`): trabajadores que hacen todas las
   entregas, unos muertos con SIGKILL y otros con la conexión cortada desde el servidor
   (pg_terminate_backend) a mitad de su trabajo; después se cuentan, en la base, las entregas
   perdidas y las repetidas (objetivo: 0 y 0).

Usa el servidor de CURSO_POSTGRES o, si no hay, arranca uno de usar y tirar (y lo borra al acabar).

Uso: python -m curso medir postgres
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from curso.rutas import PUNTOS

PUNTO = PUNTOS / "07_postgresql"
TRABAJADORES = (1, 2, 4, 8)
ADMISIONES = 1000      # por ronda: en esta máquina, alrededor de un segundo
RONDAS = 3             # se da la mediana: la máquina cambia de ritmo (otros procesos, cachés)
HIJOS = ("logs", "config")
PADRES_DEL_SIMULACRO = 30  # 60 entregas: cada trabajador las hace todas
TRABAJADORES_DEL_SIMULACRO = 8
ESPERA_MAXIMA_S = 300  # un techo para una ronda; ninguna tarda más de unos segundos


# --- Admisiones por segundo ----------------------------------------------------------------------

def _entregas(admisiones):
    """[(padre, hijo, entrega)]: `admisiones` entregas, dos por padre."""
    return [(f"p{n // len(HIJOS):05d}", HIJOS[n % len(HIJOS)], f"p{n // len(HIJOS):05d}/{HIJOS[n % len(HIJOS)]}")
            for n in range(admisiones)]


def _preparar(modulo, bd, entregas, deprisa):
    """Los padres y las entregas recibidas, sin medir (`deprisa`: el COMMIT no espera al disco)."""
    bd.execute(deprisa)
    for padre in dict.fromkeys(padre for padre, _, _ in entregas):
        modulo.crear_padre(bd, padre, list(HIJOS))
    for padre, hijo, entrega in entregas:
        modulo.recibir(bd, padre, hijo, entrega, {"hallazgos": [f"lo que vio {hijo}"]})


def _ronda(motor, destino, trabajadores, entregas):
    """Segundos desde que los `trabajadores` empiezan a la vez hasta que el último acaba."""
    entorno = dict(os.environ, PYTHONPATH=os.pathsep.join([str(PUNTO), *(p for p in sys.path if p)]))
    ids = [entrega for _, _, entrega in entregas]
    procesos = [subprocess.Popen(
        [sys.executable, "-m", "curso.medir.postgres_frente_a_sqlite", "trabajador", motor, str(destino), json.dumps(ids[k::trabajadores])],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=entorno) for k in range(trabajadores)]
    try:
        for proceso in procesos:
            if proceso.stdout.readline().strip() != "listo":
                raise RuntimeError(f"Un trabajador de {motor} no llegó a conectar.")
        inicio = time.perf_counter()
        for proceso in procesos:
            proceso.stdin.write("ya\n")
            proceso.stdin.flush()
        for proceso in procesos:
            if not proceso.stdout.readline().startswith("hecho"):
                raise RuntimeError(f"Un trabajador de {motor} no acabó sus admisiones.")
        segundos = time.perf_counter() - inicio
    finally:
        for proceso in procesos:
            if proceso.poll() is None:
                proceso.stdin.close()
            try:
                proceso.wait(ESPERA_MAXIMA_S)
            except subprocess.TimeoutExpired:
                proceso.kill()
                proceso.wait()
            proceso.stdout.close()
    return segundos


def _comprobar(bd, entregas, motor):
    (admitidas,) = bd.execute("SELECT COUNT(*) FROM buzon WHERE disposicion = 'admitida'").fetchone()
    (en_cola,) = bd.execute("SELECT COUNT(*) FROM ejecuciones WHERE estado = 'en_cola'").fetchone()
    if (admitidas, en_cola) != (len(entregas), len(entregas) // len(HIJOS)):
        raise RuntimeError(f"En {motor}, la medición dejó {admitidas} admitidas y {en_cola} padres en cola, "
                           f"no {len(entregas)} y {len(entregas) // len(HIJOS)}.")


def admisiones_en_postgres(conexion, trabajadores, admisiones):
    """Admisiones por segundo con `trabajadores` procesos, en un esquema nuevo de `conexion`."""
    from curso.rutas import cargar_modulo
    from curso.postgres.cluster import esquema_de_prueba

    buzon_pg = cargar_modulo(PUNTO / "buzon_pg.py", "_buzon_pg_medida")
    entregas = _entregas(admisiones)
    with esquema_de_prueba(conexion, prefijo="medir") as esquema:
        bd = buzon_pg.abrir_buzon(esquema)
        try:
            _preparar(buzon_pg, bd, entregas, "SET synchronous_commit = off")
            segundos = _ronda("postgres", esquema, trabajadores, entregas)
            _comprobar(bd, entregas, "PostgreSQL")
        finally:
            bd.close()
    return admisiones / segundos


def admisiones_en_sqlite(carpeta, trabajadores, admisiones):
    """Lo mismo en un fichero SQLite nuevo dentro de `carpeta`."""
    from curso.rutas import cargar_modulo

    buzon = cargar_modulo(PUNTO / "buzon.py", "_buzon_medida")
    entregas = _entregas(admisiones)
    ruta = Path(carpeta) / f"admisiones-{trabajadores}.db"
    bd = buzon.abrir_buzon(ruta)
    try:
        _preparar(buzon, bd, entregas, "PRAGMA synchronous=OFF")
        segundos = _ronda("sqlite", ruta, trabajadores, entregas)
        _comprobar(bd, entregas, "SQLite")
    finally:
        bd.close()
        for fichero in Path(carpeta).glob(f"{ruta.name}*"):  # con su -wal y su -shm
            fichero.unlink()
    return admisiones / segundos


def trabajador(motor, destino, entregas):
    """El proceso que admite: conecta, dice «listo», espera la salida y admite sus entregas."""
    if motor == "postgres":
        import buzon_pg as buzon
    else:
        import buzon
    bd = buzon.abrir_buzon(destino)
    print("listo", flush=True)
    if sys.stdin.readline().strip() != "ya":
        return
    for entrega in entregas:
        buzon.admitir(bd, entrega)
    print("hecho", flush=True)
    bd.close()


def medir_admisiones(conexion, carpeta, trabajadores=TRABAJADORES, admisiones=ADMISIONES, rondas=RONDAS):
    """{n: (admisiones/s en PostgreSQL, en SQLite)}: la mediana de `rondas`, alternando los motores."""
    cifras = {}
    for n in trabajadores:
        pg, sq = [], []
        for ronda in range(rondas):
            print(f"  {n} trabajador{'es' if n > 1 else ''}, ronda {ronda + 1} de {rondas}…", flush=True)
            pg.append(admisiones_en_postgres(conexion, n, admisiones))
            sq.append(admisiones_en_sqlite(carpeta, n, admisiones))
        cifras[n] = (statistics.median(pg), statistics.median(sq))
    return cifras


# --- Explorar y el simulacro -------------------------------------------------------------------

def medir_exploraciones(conexion, nombres=None):
    """{escenario: (intercalados, segundos)} de cada escenario de la lección 07 en PostgreSQL (o de
    los `nombres` de curso.explorables.carreras.escenarios.carreras_en_postgres.ESCENARIOS)."""
    from curso.explorables.carreras import explorar_en_postgres
    from curso.explorables.carreras.escenarios.carreras_en_postgres import ESCENARIOS

    cifras = {}
    for nombre in nombres or ESCENARIOS:
        escenario = ESCENARIOS[nombre]
        print(f"  explorando «{escenario.nombre}»…", flush=True)
        inicio = time.perf_counter()
        exploracion = explorar_en_postgres(escenario, "correcta", conexion=conexion)
        if exploracion.correctos != exploracion.total:
            raise RuntimeError(f"La variante correcta falla en «{escenario.nombre}»: {exploracion.resumen()}")
        cifras[nombre] = (exploracion.total, time.perf_counter() - inicio)
    return cifras


def percances(entregas, trabajadores):
    """{trabajador: (percance, tras cuántas entregas hechas)}: a los impares, SIGKILL; a los pares, el
    corte de su conexión desde el servidor; cada uno en otro momento, de la primera entrega a la
    penúltima (cada trabajador las hace todas, así que a todos les llega)."""
    return {n: ("sigkill" if n % 2 else "corte", 1 + (n - 1) * (entregas - 2) // max(1, trabajadores - 1))
            for n in range(1, trabajadores + 1)}


def medir_simulacro(conexion, padres=PADRES_DEL_SIMULACRO, trabajadores=TRABAJADORES_DEL_SIMULACRO):
    """{"sigkill", "corte", "reconecta", "entregas", "perdidas", "repetidas", "errores", ...} del
    simulacro de varias máquinas, en un esquema nuevo; perdidas y repetidas, contadas en la base."""
    from curso.material import varias_maquinas
    from curso.rutas import cargar_modulo
    from curso.postgres.cluster import esquema_de_prueba

    buzon_pg = cargar_modulo(PUNTO / "buzon_pg.py", "_buzon_pg_simulacro")
    nombres = [f"p{n:03d}" for n in range(padres)]
    plan = varias_maquinas.plan(nombres, list(HIJOS))
    with esquema_de_prueba(conexion, prefijo="simulacro") as esquema:
        bd = buzon_pg.abrir_buzon(esquema)
        try:
            for padre in nombres:
                buzon_pg.crear_padre(bd, padre, list(HIJOS))
            cuenta = varias_maquinas.simulacro(esquema, PUNTO, plan, percances(len(plan), trabajadores))
            por_entrega = dict(bd.execute("SELECT entrega, COUNT(*) FROM mensajes GROUP BY entrega").fetchall())
            (en_cola,) = bd.execute("SELECT COUNT(*) FROM ejecuciones WHERE estado='en_cola' AND version=1").fetchone()
        finally:
            bd.close()
    esperadas = [entrega for _, _, entrega, _ in plan]
    return {**cuenta, "entregas": len(esperadas),
            "perdidas": sum(por_entrega.get(e, 0) == 0 for e in esperadas),
            "repetidas": sum(max(0, por_entrega.get(e, 0) - 1) for e in esperadas),
            "padres_activados_una_vez": en_cola, "padres": padres}


# --- La orden ----------------------------------------------------------------------------------

def main(conexion=None, trabajadores=TRABAJADORES, admisiones=ADMISIONES, rondas=RONDAS,
         padres=PADRES_DEL_SIMULACRO, escenarios=None, trabajadores_del_simulacro=TRABAJADORES_DEL_SIMULACRO):
    """Mide, imprime en castellano y devuelve las cifras en un dict. Sin `conexion`, la de
    CURSO_POSTGRES o un servidor de usar y tirar. Los demás argumentos achican la medida (el test
    la corre en pequeño): cuántos trabajadores, admisiones por ronda, rondas, padres del simulacro,
    qué escenarios explorar (todos, si es None) y cuántos trabajadores en el simulacro."""
    from curso.postgres.cluster import servidor_de_pruebas

    with ExitStack() as pila:
        if conexion is None:
            print("Arrancando el servidor PostgreSQL (el de CURSO_POSTGRES, si está)…", flush=True)
            conexion = pila.enter_context(servidor_de_pruebas())
        carpeta = pila.enter_context(tempfile.TemporaryDirectory(prefix="medir-postgres-"))
        print("Admisiones por segundo, PostgreSQL y SQLite en la misma máquina:", flush=True)
        admisiones_por_s = medir_admisiones(conexion, carpeta, trabajadores, admisiones, rondas)
        print("Tiempo de explorar cada escenario de la lección 07 en PostgreSQL:", flush=True)
        exploraciones = medir_exploraciones(conexion, escenarios)
        print("El simulacro de varias máquinas (SIGKILL y cortes desde el servidor)…", flush=True)
        simulacro = medir_simulacro(conexion, padres, trabajadores_del_simulacro)

    print(f"\nAdmisiones por segundo ({admisiones} por ronda, mediana de {rondas} rondas; cada COMMIT espera al disco):")
    print(f"  {'trabajadores':>12}  {'PostgreSQL':>10}  {'SQLite':>8}  PostgreSQL/SQLite")
    for n, (pg, sq) in admisiones_por_s.items():
        print(f"  {n:>12}  {pg:>10.0f}  {sq:>8.0f}  {pg / sq:.2f}")
    print("Explorar todos los intercalados en PostgreSQL, variante correcta:")
    for nombre, (intercalados, segundos) in exploraciones.items():
        print(f"  {nombre}: {intercalados} intercalados en {segundos:.2f} s")
    cumple = simulacro["perdidas"] == 0 and simulacro["repetidas"] == 0 and not simulacro["errores"]
    print(f"Simulacro: {trabajadores_del_simulacro} trabajadores, cada uno con las {simulacro['entregas']} entregas; "
          f"{simulacro['sigkill']} muertos con SIGKILL (y sustituidos), "
          f"{simulacro['corte']} conexiones cortadas desde el servidor ({simulacro['reconecta']} reconexiones); "
          f"{simulacro['perdidas']} perdidas, {simulacro['repetidas']} repetidas (objetivo: 0 y 0); "
          f"{simulacro['padres_activados_una_vez']} de {simulacro['padres']} padres activados una vez"
          + (f"; errores: {simulacro['errores']}" if simulacro["errores"] else "") + ".")
    return {
        "admisiones_por_s": {n: {"postgres": pg, "sqlite": sq, "proporcion": pg / sq}
                             for n, (pg, sq) in admisiones_por_s.items()},
        "exploraciones": {nombre: {"intercalados": i, "segundos": s} for nombre, (i, s) in exploraciones.items()},
        "simulacro": simulacro,
        "cumple_objetivo": cumple,
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["trabajador"]:
        trabajador(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]))
    else:
        main()
