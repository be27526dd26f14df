"""Para las celdas de la lección 07: dos conexiones a PostgreSQL que se turnan en un orden fijo.

Dos conexiones a PostgreSQL en un orden fijo: lo que usan las celdas de la lección 07 para
enseñar, contra el servidor de verdad, qué hace una transacción cuando otra se le cruza.

Una sentencia que choca con el cerrojo de otra transacción se queda esperando dentro del
servidor. Para verlo sin depender de cuánto tarda nada, la sentencia va en un hilo
(`en_otro_hilo`) y otra conexión pregunta a `pg_stat_activity` hasta que el servidor dice que
esa conexión espera (`esperar_a_que_espere`): entonces, y no antes, la celda sigue. No hay
pausas fijas: el orden lo marca el propio servidor, y las salidas son las mismas en cada máquina.
Lo mismo para el COMMIT que espera a una réplica síncrona: se sabe que esperará cuando un COMMIT
de prueba espera (`esperar_a_que_los_commits_esperen`), no cuando SHOW dice el ajuste nuevo.

Lección 07.
"""
import threading
import time

ESPERA_MAXIMA_S = 30  # un techo: en esta máquina, el servidor dice «espero» en milisegundos
CADA_S = 0.005        # cada cuánto se vuelve a preguntar a pg_stat_activity
LECTURAS_QUE_VEN_LA_ESPERA = 2  # la sentencia, de la segunda (ver esperar_a_que_espere)


class EnOtroHilo:
    """Una llamada que corre en su hilo; `resultado()` espera a que acabe y devuelve lo que devolvió
    (o lanza lo que lanzó)."""

    def __init__(self, funcion, *argumentos):
        self._valor = self._error = None
        self._hilo = threading.Thread(target=self._correr, args=(funcion, argumentos), daemon=True)
        self._hilo.start()

    def _correr(self, funcion, argumentos):
        try:
            self._valor = funcion(*argumentos)
        except BaseException as error:  # se relanza en quien pide el resultado
            self._error = error

    def acabada(self):
        return not self._hilo.is_alive()

    def resultado(self):
        self._hilo.join(ESPERA_MAXIMA_S)
        if self._hilo.is_alive():
            raise RuntimeError(f"La llamada sigue sin acabar tras {ESPERA_MAXIMA_S} s.")
        if self._error is not None:
            raise self._error
        return self._valor


def en_otro_hilo(funcion, *argumentos):
    """Empieza `funcion(*argumentos)` en otro hilo y vuelve enseguida (ver `EnOtroHilo`)."""
    return EnOtroHilo(funcion, *argumentos)


def esperando(observador, conexion):
    """(tipo, evento, sentencia) de lo que espera ahora el backend de `conexion`, según
    `pg_stat_activity` consultado desde `observador` (otra conexión, en autocommit); None si no
    espera nada. `sentencia` es la que está ejecutando (p. ej. 'COMMIT').

    'Lock' es un cerrojo de otra transacción (una fila, un cerrojo consultivo); 'IPC'/'SyncRep',
    la confirmación de una réplica síncrona. 'Client' (esperar al cliente) no cuenta: es estar
    parado, no esperar a otro."""
    fila = observador.execute(
        "SELECT wait_event_type, wait_event, query FROM pg_stat_activity WHERE pid = %s",
        (conexion.info.backend_pid,)).fetchone()
    if fila is None or fila[0] in (None, "Client", "Activity"):
        return None
    return fila[0], fila[1], fila[2]


def esperar_a_que_espere(observador, conexion, llamada=None, evento=None):
    """Vuelve cuando el backend de `conexion` está esperando (ver `esperando`), y dice a qué.

    Con `evento` (p. ej. 'transactionid', 'advisory', 'SyncRep'), solo cuando espera eso: antes
    puede pasar por esperas cortas de otra cosa (escribir en el disco, por ejemplo), que no son
    la que la celda quiere enseñar. Si `llamada` (un EnOtroHilo) acaba antes, es que no esperó:
    RuntimeError, con lo que devolvió, porque la celda contaba con lo contrario.

    Lo que dice, de la segunda lectura que ve la espera: en pg_stat_activity, la sentencia sale de
    una foto del estado de cada backend tomada al empezar la consulta, y la espera se lee del
    proceso después, en vivo (pg_stat_get_activity, en pgstatfuncs.c). La primera lectura puede
    juntar la espera de ahora con la sentencia de antes (`BEGIN ...`, que psycopg manda sola); la
    foto de la segunda ya es posterior a la espera, y un backend apunta su sentencia antes de
    ponerse a esperar."""
    limite = time.monotonic() + ESPERA_MAXIMA_S
    seguidas = 0
    while True:
        espera = esperando(observador, conexion)
        if espera is not None and evento in (None, espera[1]):
            seguidas += 1
            if seguidas == LECTURAS_QUE_VEN_LA_ESPERA:
                return espera
            continue
        seguidas = 0
        if llamada is not None and llamada.acabada():
            raise RuntimeError(f"La sentencia no esperó: acabó con {llamada.resultado()!r}.")
        if time.monotonic() > limite:
            raise RuntimeError(f"La conexión no se puso a esperar en {ESPERA_MAXIMA_S} s.")
        time.sleep(CADA_S)


def esperar_a_que_se_cierre(observador, pid):
    """Vuelve cuando la sesión del backend `pid` ya no está en pg_stat_activity (se cerró: el
    servidor, al salir de ella, suelta sus cerrojos un instante antes de borrarla de ahí)."""
    limite = time.monotonic() + ESPERA_MAXIMA_S
    while observador.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
        if time.monotonic() > limite:
            raise RuntimeError(f"La sesión {pid} sigue abierta tras {ESPERA_MAXIMA_S} s.")
        time.sleep(CADA_S)


def con_ajustes(conexion, **ajustes):
    """La cadena de conexión `conexion` con `ajustes` de la sesión añadidos al final de sus opciones
    (options=-c nombre=valor), donde mandan: con_ajustes(c, lock_timeout="1s")."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    opciones = [conninfo_to_dict(conexion).get("options") or "", *(f"-c {k}={v}" for k, v in ajustes.items())]
    return make_conninfo(conexion, options=" ".join(opciones).strip())


def esperar_al_ajuste(bd, nombre, valor):
    """Vuelve cuando el backend de la conexión `bd` ve el ajuste `nombre` con `valor`.

    Tras un pg_reload_conf(), cada proceso del servidor relee la configuración cuando le toca, no
    en el acto: el backend de `bd`, antes de su siguiente sentencia. Lo que dice SHOW es su copia,
    y solo la suya: no dice si otros procesos del servidor la han releído ya. Para que un COMMIT
    espere a una réplica síncrona hace falta además una marca que pone otro proceso (ver
    `esperar_a_que_los_commits_esperen`); para saber que un COMMIT ya NO esperará, en cambio, basta
    con esta: un backend cuyo synchronous_standby_names está vacío no mira la marca."""
    limite = time.monotonic() + ESPERA_MAXIMA_S
    while bd.execute(f"SHOW {nombre}").fetchone()[0] != valor:
        if time.monotonic() > limite:
            raise RuntimeError(f"La conexión no ve {nombre} = {valor!r} en {ESPERA_MAXIMA_S} s.")
        time.sleep(CADA_S)


def esperar_a_que_los_commits_esperen(observador, conexion):
    """Vuelve cuando el COMMIT de una transacción que escribe se queda esperando a la réplica
    síncrona, tras poner synchronous_standby_names y llamar a pg_reload_conf(). Devuelve lo que
    esperaba la sonda (('IPC', 'SyncRep', 'COMMIT')).

    Que un COMMIT espere lo deciden dos cosas: el ajuste de su propio backend (lo que dice SHOW,
    ver `esperar_al_ajuste`) y una marca compartida que pone solo el checkpointer, cuando *él*
    relee la configuración (syncrep.c: SyncRepUpdateSyncStandbysDefined). En medio de un
    CHECKPOINT no la relee hasta acabarlo: SHOW ya dice el valor nuevo y los COMMIT aún no
    esperan. Por eso se pregunta a un COMMIT de verdad: una sonda (una transacción que escribe en
    el WAL con pg_logical_emit_message; un XID solo no basta, porque un COMMIT que no escribió en
    el WAL no espera a nadie) confirma, una y otra vez, hasta que `observador` la ve esperando en
    SyncRep. Entonces se la suelta con pg_cancel_backend: su COMMIT vuelve bien, con un WARNING
    (ya estaba confirmada en el disco del servidor). La sonda es una conexión nueva a `conexion`,
    y no toca ninguna tabla."""
    import psycopg

    limite = time.monotonic() + ESPERA_MAXIMA_S
    with psycopg.connect(conexion) as sonda:
        sonda.add_notice_handler(lambda aviso: None)  # el WARNING de la cancelación: lo esperamos
        while True:
            sonda.execute("SELECT pg_logical_emit_message(true, 'curso', 'sonda')")
            commit = en_otro_hilo(sonda.commit)
            while not commit.acabada():
                espera = esperando(observador, sonda)
                if espera is not None and espera[1] == "SyncRep":
                    observador.execute("SELECT pg_cancel_backend(%s)", (sonda.info.backend_pid,))
                    commit.resultado()
                    return espera
                if time.monotonic() > limite:
                    observador.execute("SELECT pg_cancel_backend(%s)", (sonda.info.backend_pid,))
                    commit.resultado()
                    raise RuntimeError(f"La sonda no se vio esperando a la réplica en {ESPERA_MAXIMA_S} s.")
                time.sleep(CADA_S)
            commit.resultado()  # confirmó sin esperar: la marca aún no está puesta; otra sonda
            if time.monotonic() > limite:
                raise RuntimeError(f"En {ESPERA_MAXIMA_S} s, ningún COMMIT esperó a la réplica síncrona: "
                                   "¿está puesto synchronous_standby_names, y synchronous_commit?")
            time.sleep(CADA_S)
