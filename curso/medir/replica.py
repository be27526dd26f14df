"""Para `medir replica`: la espera a la réplica síncrona de la lección 07, con un CHECKPOINT en marcha durante la recarga.

La celda del COMMIT de la lección 07 (y su test) ponen `synchronous_standby_names`, llaman a
pg_reload_conf() y necesitan que el COMMIT siguiente espere a la réplica. Que espere lo decide una
marca que pone el checkpointer cuando *él* relee la configuración (syncrep.c,
SyncRepUpdateSyncStandbysDefined), y en medio de un CHECKPOINT no la relee hasta acabarlo.

Cada vuelta: ensucia unas decenas de MB de la tabla de relleno, lanza un CHECKPOINT (otra
conexión, que queda esperando a que acabe: CheckpointDone) y, con el CHECKPOINT ya empezado, pone
la réplica y recarga. Después:

1. la espera ingenua, la de antes: esperar a que SHOW diga la réplica en una conexión nueva y
   confirmar una transacción que escribe. Si confirma sin esperar, esa espera habría fallado;
2. la espera de ahora, `curso.material.dos_conexiones.esperar_a_que_los_commits_esperen`, y después un
   COMMIT de verdad: tiene que quedarse esperando en SyncRep (si no, es un fallo).

Una vuelta cuenta solo si el CHECKPOINT seguía en marcha cuando se vio lo de la espera ingenua.
Objetivo: en VUELTAS vueltas que cuentan, 0 fallos de la espera de ahora. Usa un servidor de usar y
tirar propio (cambia su configuración), nunca el de CURSO_POSTGRES.

Uso: python -m curso medir replica
"""
import time

VUELTAS = 30
FILAS_DE_RELLENO = 300_000  # unos 80 MB: el CHECKPOINT tarda décimas de segundo en escribirlos
REPLICA = "replica_que_no_existe"
INTENTOS_POR_VUELTA = 3  # si el CHECKPOINT acaba antes de mirar, la vuelta se repite


def _commit_que_escribe(conexion):
    import psycopg

    from curso.material.dos_conexiones import en_otro_hilo

    bd = psycopg.connect(conexion)
    bd.add_notice_handler(lambda aviso: None)  # el WARNING al cancelar su espera: esperado
    bd.execute("SELECT pg_logical_emit_message(true, 'curso', 'medida')")
    return bd, en_otro_hilo(bd.commit)


def vuelta(conexion, mirador):
    """Una vuelta: {"en_marcha": el CHECKPOINT seguía durante la recarga y la espera ingenua,
    "ingenua_falla": un COMMIT no esperó aunque SHOW ya decía la réplica, "sonda_falla": tras la
    espera de ahora, un COMMIT no esperó}."""
    import psycopg

    from curso.material.dos_conexiones import (CADA_S, en_otro_hilo, esperando, esperar_a_que_espere,
                                      esperar_a_que_los_commits_esperen, esperar_al_ajuste)

    mirador.execute("UPDATE relleno SET x = x + 1")  # páginas sucias que el CHECKPOINT tendrá que escribir
    with psycopg.connect(conexion, autocommit=True) as lanza:
        checkpoint = en_otro_hilo(lanza.execute, "CHECKPOINT")
        # CheckpointDone: el checkpointer ya lo empezó (con CheckpointStart, aún podría releer antes).
        esperar_a_que_espere(mirador, lanza, checkpoint, "CheckpointDone")
        try:
            mirador.execute(f"ALTER SYSTEM SET synchronous_standby_names = '{REPLICA}'")
            mirador.execute("SELECT pg_reload_conf()")
            # 1. La espera ingenua.
            with psycopg.connect(conexion) as ingenua:
                esperar_al_ajuste(ingenua, "synchronous_standby_names", REPLICA)
                ingenua.add_notice_handler(lambda aviso: None)
                ingenua.execute("SELECT pg_logical_emit_message(true, 'curso', 'ingenua')")
                commit = en_otro_hilo(ingenua.commit)
                ingenua_falla = None
                while ingenua_falla is None:
                    if commit.acabada():
                        ingenua_falla = True
                    elif (esperando(mirador, ingenua) or (None, None))[1] == "SyncRep":
                        ingenua_falla = False
                    else:
                        time.sleep(CADA_S)
                en_marcha = not checkpoint.acabada()
                if not ingenua_falla:
                    mirador.execute("SELECT pg_cancel_backend(%s)", (ingenua.info.backend_pid,))
                commit.resultado()
            # 2. La espera de ahora, y un COMMIT que tiene que esperar.
            esperar_a_que_los_commits_esperen(mirador, conexion)
            victima, commit = _commit_que_escribe(conexion)
            with victima:
                try:
                    esperar_a_que_espere(mirador, victima, commit, "SyncRep")
                    sonda_falla = False
                    mirador.execute("SELECT pg_cancel_backend(%s)", (victima.info.backend_pid,))
                except RuntimeError:  # confirmó sin esperar
                    sonda_falla = True
                commit.resultado()
        finally:
            mirador.execute("ALTER SYSTEM RESET synchronous_standby_names")
            mirador.execute("SELECT pg_reload_conf()")
            esperar_al_ajuste(mirador, "synchronous_standby_names", "")
            checkpoint.resultado()
    return {"en_marcha": en_marcha, "ingenua_falla": ingenua_falla, "sonda_falla": sonda_falla}


def medir(conexion, vueltas=VUELTAS, filas=FILAS_DE_RELLENO):
    """{"vueltas", "descartadas", "ingenua_falla", "sonda_falla", "segundos"} en el servidor de
    `conexion` (que tiene que ser propio: cambia su configuración)."""
    import psycopg

    cuenta = {"vueltas": 0, "descartadas": 0, "ingenua_falla": 0, "sonda_falla": 0}
    inicio = time.perf_counter()
    with psycopg.connect(conexion, autocommit=True) as mirador:
        mirador.execute("CREATE TABLE relleno (x INTEGER, y TEXT)")
        mirador.execute("INSERT INTO relleno SELECT g, repeat('x', 200) FROM generate_series(1, %s) g", (filas,))
        try:
            while cuenta["vueltas"] < vueltas:
                for _ in range(INTENTOS_POR_VUELTA):
                    hecho = vuelta(conexion, mirador)
                    if hecho["en_marcha"]:
                        break
                    cuenta["descartadas"] += 1
                else:
                    raise RuntimeError(f"{INTENTOS_POR_VUELTA} vueltas seguidas en las que el CHECKPOINT acabó "
                                       "antes de mirar: hace falta más relleno.")
                cuenta["vueltas"] += 1
                cuenta["ingenua_falla"] += hecho["ingenua_falla"]
                cuenta["sonda_falla"] += hecho["sonda_falla"]
                print(f"  vuelta {cuenta['vueltas']} de {vueltas}: espera ingenua "
                      f"{'falla' if hecho['ingenua_falla'] else 'acierta'}, sonda "
                      f"{'falla' if hecho['sonda_falla'] else 'acierta'}", flush=True)
        finally:
            mirador.execute("DROP TABLE relleno")
    cuenta["segundos"] = time.perf_counter() - inicio
    return cuenta


def main(vueltas=VUELTAS, filas=FILAS_DE_RELLENO):
    """Mide en un servidor de usar y tirar propio, imprime en castellano y devuelve las cifras."""
    from curso.postgres.cluster import ClusterTemporal

    print("Arrancando un PostgreSQL de usar y tirar propio (esta medida cambia su configuración)…", flush=True)
    with ClusterTemporal() as cluster:
        print(f"{vueltas} vueltas, cada una con un CHECKPOINT en marcha durante la recarga:", flush=True)
        cuenta = medir(cluster.conexion, vueltas, filas)
    cuenta["cumple_objetivo"] = cuenta["sonda_falla"] == 0
    print(f"\nCon un CHECKPOINT en marcha durante la recarga, en {cuenta['vueltas']} vueltas "
          f"({cuenta['descartadas']} descartadas porque el CHECKPOINT acabó antes de mirar):")
    print(f"  esperar a que SHOW diga la réplica: {cuenta['ingenua_falla']} de {cuenta['vueltas']} veces el "
          "COMMIT siguiente no esperó (la espera de antes habría fallado)")
    print(f"  esperar a ver un COMMIT esperando (la sonda): {cuenta['sonda_falla']} fallos de "
          f"{cuenta['vueltas']} (objetivo: 0)")
    print(f"  en {cuenta['segundos']:.1f} s")
    return cuenta
