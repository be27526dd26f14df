"""Para los ejercicios de la lección 07: el compare-and-swap y la recepción idempotente, en PostgreSQL.

Cada caso trabaja en un esquema nuevo del servidor de la lección (`servidor_de_pruebas`: el de
CURSO_POSTGRES, que pone la primera celda del cuaderno; sin ella, uno de usar y tirar por caso, más
lento) y lo borra al acabar. El estado se prepara con los módulos del punto de control 07; la
función del alumno solo hace lo que se comprueba.

Las carreras no dependen de relojes: otra conexión actúa justo antes de la sentencia que escribe
del alumno (`OtroAntesDe`). Así, quien lee y después escribe ve cómo otro confirma en medio; quien
compara y escribe en una sola sentencia, no.
"""
import re
from contextlib import ExitStack, contextmanager

from curso import rutas
from curso.rutas import cargar_modulo
from curso.comprobaciones.ejercicios import Fallo, ejercicio, igual
from curso.postgres.cluster import VARIABLE_DE_CONEXION, FaltaPostgres, esquema_de_prueba, servidor_de_pruebas

# Si la otra conexión espera un cerrojo del alumno (un SELECT … FOR UPDATE, que también vale), se
# rinde tras este tiempo y lo intenta cuando el alumno acaba. Nunca lo obtendría antes: el alumno
# está parado esperándola.
ESPERA_AL_CERROJO = "500ms"


def referencia(nombre):
    """El módulo `nombre` del punto de control 07, cargado de nuevo: con él se prepara cada caso."""
    return cargar_modulo(rutas.puntos_de_control()[7] / f"{nombre}.py", f"_{nombre}_de_referencia")


@contextmanager
def base_de_prueba():
    """(abrir, esquema): un esquema vacío y `abrir(modulo)`, que conecta con él por el `abrir_buzon`
    (o `abrir`) del módulo. Al salir, cierra las conexiones y borra el esquema."""
    with ExitStack() as pila:
        try:
            servidor = pila.enter_context(servidor_de_pruebas())
        except FaltaPostgres as error:  # una línea por caso; cómo conseguirlo, en `python -m curso postgres`
            raise Fallo(f"un servidor PostgreSQL: el de {VARIABLE_DE_CONEXION} o uno de usar y tirar",
                        str(error).splitlines()[0], "sin servidor no se puede comprobar: mira cómo "
                        "conseguirlo con python -m curso postgres") from None
        esquema = pila.enter_context(esquema_de_prueba(servidor, prefijo="ejercicio"))

        def abrir(modulo):
            bd = getattr(modulo, "abrir_buzon", None) or modulo.abrir
            conexion = bd(esquema)
            pila.callback(conexion.close)  # antes que el DROP SCHEMA: se cierran en orden inverso
            return conexion
        yield abrir


class OtroAntesDe:
    """La conexión del alumno, que llama a `otro()` justo antes de su primera sentencia que empiece
    por `palabra` (UPDATE, INSERT): ahí otra conexión confirma su cambio. Lo demás va a la de verdad."""

    def __init__(self, conexion, palabra, otro):
        self._conexion, self._palabra, self._otro = conexion, palabra, otro
        self.hecho = False

    def __getattr__(self, nombre):
        return getattr(self._conexion, nombre)

    def execute(self, sql, *argumentos, **opciones):
        if not self.hecho and str(sql).lstrip().upper().startswith(self._palabra):
            self.hecho = True
            self._otro()
        return self._conexion.execute(sql, *argumentos, **opciones)


def intento(funcion, *args):
    """(lo que devolvió, None) o (None, la excepción). El NotImplementedError de un esbozo sigue su camino."""
    try:
        return funcion(*args), None
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - el código del alumno puede lanzar cualquier cosa
        return None, error


# Lo que quieren decir los errores de PostgreSQL que el alumno se encuentra aquí: sus mensajes vienen
# del servidor, en inglés, y no dicen qué hay que cambiar.
EXPLICACIONES = {
    "25P02": "PostgreSQL ya había abortado tu transacción por un error anterior, como la clave duplicada de "
             "un INSERT, y rechaza cualquier otra sentencia hasta el ROLLBACK: capturar la excepción no la "
             "deshace. Evita el error con INSERT … ON CONFLICT DO NOTHING, o encierra la sentencia que puede "
             "fallar en un SAVEPOINT: un `with bd.transaction():` dentro de la transacción",
    "23505": "ya había una fila con esa clave, y un INSERT normal choca con ella: con ON CONFLICT … DO "
             "NOTHING no choca, y el número de filas insertadas dice si ya estaba",
}


def nombre_de(error):
    """Cómo se cita una excepción en un mensaje: su tipo y su mensaje; la de PostgreSQL que tiene
    explicación, con su tipo y su SQLSTATE (la explicación va aparte: ver `explicar`)."""
    if error is None:
        return "nada (terminó sin excepción)"
    sqlstate = getattr(error, "sqlstate", None)
    if sqlstate in EXPLICACIONES:
        return f"{type(error).__name__} (SQLSTATE {sqlstate})"
    return f"{type(error).__name__}: {error}"


def explicar(error, esperado):
    """Si `error` es de los que tienen explicación, un Fallo que la da en castellano."""
    sqlstate = getattr(error, "sqlstate", None)
    if sqlstate in EXPLICACIONES:
        raise Fallo(esperado, nombre_de(error), EXPLICACIONES[sqlstate])


class Otro:
    """La otra conexión: `hacer(conexion)` cuando el alumno llega a su sentencia (OtroAntesDe la
    llama). Si la fila la tiene bloqueada el alumno, se rinde y lo hace cuando él acaba (`despues`).
    `resultado` es (lo que devolvió, None) o (None, la excepción); None si aún no actuó."""

    def __init__(self, conexion, hacer):
        conexion.execute(f"SET lock_timeout = '{ESPERA_AL_CERROJO}'")
        self.conexion, self.hacer = conexion, hacer
        self.resultado, self.esperaba = None, False

    def __call__(self):
        valor, error = intento(self.hacer, self.conexion)
        if type(error).__name__ == "LockNotAvailable":
            self.esperaba = True
        else:
            self.resultado = (valor, error)

    def despues(self, sentencia):
        if self.esperaba:
            self.resultado = intento(self.hacer, self.conexion)
        if self.resultado is None:
            raise Fallo(f"una sentencia {sentencia} hecha con bd.execute", "ninguna: ¿usas otro cursor?")
        return self.resultado


# --- 7.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "7.1", leccion=7, titulo="mover_puntero en PostgreSQL: compare-and-swap en una sola sentencia",
    nombre=None, modulo="resumenes_pg",
    pistas=[
        "En READ COMMITTED, leer el puntero (SELECT) y después escribirlo (UPDATE) deja un hueco: "
        "otra transacción puede confirmar en medio. Haz la comparación DENTRO del UPDATE.",
        "UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s AND resumen_activo IS NOT DISTINCT "
        "FROM %s: IS NOT DISTINCT FROM compara también NULL (la primera vez la base es None), y `=` no.",
        "El cursor que devuelve bd.execute tiene rowcount: si es 0, otro movió el puntero antes. "
        "Lee el activo y lanza BaseObsoleta diciendo de qué base partías y cuál es la activa.",
    ],
)


def activo_de(bd):
    """El resumen activo de «e», leído con SQL directo y con su nombre."""
    return {"resumen activo": bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id='e'").fetchone()[0]}


def con_resumenes(abrir, cuantos):
    """(ref, bd, ids): la ejecución «e» con 6 mensajes y `cuantos` resúmenes instalados por la
    referencia, uno tras otro (el activo es el último)."""
    ref, historial = referencia("resumenes_pg"), referencia("historial_pg")
    bd = abrir(historial)
    historial.crear_ejecucion(bd, "e")
    for i in range(1, 7):
        historial.anotar(bd, "e", f"mensaje {i}")
    ids, base = [], None
    for corte in range(2, 2 + cuantos):
        base = ref.instalar(bd, "e", base, corte, [{"texto": f"hasta {corte}", "fuente": corte}])
        ids.append(base)
    return ref, bd, ids


def version_sin_activar(bd, cobertura):
    """Un resumen nuevo de «e», guardado pero sin activar: a él se moverá el puntero."""
    return bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo) VALUES ('e', %s, '[]') RETURNING id",
                      (cobertura,)).fetchone()[0]


@caso("si el puntero sigue en la base, pasa al nuevo")
def _(resumenes_pg):
    with base_de_prueba() as abrir:
        _, bd, (uno, dos) = con_resumenes(abrir, 2)
        resumenes_pg.mover_puntero(bd, "e", dos, uno)
        igual(activo_de(bd), {"resumen activo": uno})


@caso("si otro lo movió antes, BaseObsoleta, con un mensaje que dice cuál es el activo, y el puntero no cambia")
def _(resumenes_pg):
    with base_de_prueba() as abrir:
        _, bd, (uno, dos) = con_resumenes(abrir, 2)
        _, error = intento(resumenes_pg.mover_puntero, bd, "e", uno, uno)
        if type(error).__name__ != "BaseObsoleta":
            raise Fallo("BaseObsoleta", nombre_de(error))
        if not re.search(rf"\b{dos}\b", str(error)):
            raise Fallo(f"un mensaje que nombre el activo de ahora, el resumen {dos}", f"«{error}»",
                        "quien lo lea tiene que saber desde qué resumen volver a empezar")
        igual(activo_de(bd), {"resumen activo": dos})


@caso("la primera vez, con base None, compara también NULL (IS NOT DISTINCT FROM) y mueve")
def _(resumenes_pg):
    with base_de_prueba() as abrir:
        _, bd, _ = con_resumenes(abrir, 0)
        nuevo = version_sin_activar(bd, 2)
        resumenes_pg.mover_puntero(bd, "e", None, nuevo)
        igual(activo_de(bd), {"resumen activo": nuevo})


@caso("otro instalador confirma a la vez, entre tu lectura y tu escritura: gana uno, y el otro recibe BaseObsoleta")
def _(resumenes_pg):
    with base_de_prueba() as abrir:
        ref, bd, (uno,) = con_resumenes(abrir, 1)
        mio, suyo = version_sin_activar(bd, 3), version_sin_activar(bd, 4)

        def mover_el_suyo(conexion):
            with ref.transaccion(conexion):
                ref.mover_puntero(conexion, "e", uno, suyo)
        historial = referencia("historial_pg")
        otro = Otro(abrir(historial), mover_el_suyo)
        alumno = OtroAntesDe(abrir(historial), "UPDATE", otro)
        with ref.transaccion(alumno):
            _, error_mio = intento(resumenes_pg.mover_puntero, alumno, "e", uno, mio)
        _, error_suyo = otro.despues("UPDATE")
        errores = {"tú": error_mio, "el otro": error_suyo}
        ganan = [quien for quien, error in errores.items() if error is None]
        obsoletos = [quien for quien, error in errores.items() if type(error).__name__ == "BaseObsoleta"]
        activo = activo_de(bd)["resumen activo"]
        if len(ganan) != 1 or len(obsoletos) != 1 or activo != {"tú": mio, "el otro": suyo}[ganan[0]]:
            raise Fallo("gana uno, el otro recibe BaseObsoleta, y el activo es el del que gana",
                        f"tú: {nombre_de(error_mio)}; el otro: {nombre_de(error_suyo)}; el activo es {activo} "
                        f"(el tuyo es {mio}, el suyo {suyo})")


# Lo pilla un mutante del SQL (`medir mutantes 7.1 --operadores CambioEnSQL`): un UPDATE sin
# `id=%s`, que mueve el puntero de todas las ejecuciones que tenían la misma base.
@caso("solo se mueve el puntero de esa ejecución: otra con la misma base (aún sin resumen) no cambia")
def _(resumenes_pg):
    with base_de_prueba() as abrir:
        _, bd, _ = con_resumenes(abrir, 0)
        referencia("historial_pg").crear_ejecucion(bd, "f")
        nuevo = version_sin_activar(bd, 2)
        _, error = intento(resumenes_pg.mover_puntero, bd, "e", None, nuevo)
        (de_f,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id='f'").fetchone()
        igual((nombre_de(error), activo_de(bd)["resumen activo"], de_f), (nombre_de(None), nuevo, None),
              "(lo que lanzó, el activo de «e», el de «f»)")


# --- 7.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "7.2", leccion=7, titulo="recibir en PostgreSQL: una entrega repetida es «duplicada», también a la vez",
    nombre=None, modulo="buzon_pg",
    pistas=[
        "Mirar si la entrega ya está y después insertarla deja un hueco: otro proceso puede guardar "
        "la misma entrega en medio, y tu INSERT chocaría con la clave. Que lo resuelva el INSERT.",
        "INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (...) ON CONFLICT (entrega) DO NOTHING. "
        "Si otro la está guardando, espera a que confirme, y entonces no inserta nada.",
        "Si rowcount es 1, es nueva: RECIBIDA. Si es 0 ya estaba: léela (SELECT padre, hijo, carga) y, si "
        "es idéntica (con la carga canónica, `cuerpo`), DUPLICADA; si no, deja seguir al ValueError.",
    ],
)

HALLAZGO = {"hallazgo": "la API conecta al 5433"}


def buzon_de_prueba(abrir):
    """(ref, bd): un buzón nuevo con el padre «p» esperando a «logs» y a «config»."""
    ref = referencia("buzon_pg")
    bd = abrir(ref)
    ref.crear_padre(bd, "p", ["logs", "config"])
    return ref, bd


def filas_del_buzon(bd):
    return bd.execute("SELECT entrega, hijo, disposicion FROM buzon ORDER BY entrega").fetchall()


@caso("la primera vez «recibida»; la misma entrega otra vez (un reintento), «duplicada», con una sola fila")
def _(buzon_pg):
    with base_de_prueba() as abrir:
        _, bd = buzon_de_prueba(abrir)
        for carga, esperado, cuando in ((HALLAZGO, "recibida", "la primera vez"),
                                        (dict(HALLAZGO), "duplicada", "la segunda vez, idéntica")):
            valor, error = intento(buzon_pg.recibir, bd, "p", "logs", "e1", carga)
            explicar(error, esperado)
            igual(nombre_de(error) if error else valor, esperado, cuando)
        igual(filas_del_buzon(bd), [("e1", "logs", "recibida")])


@caso("la misma identidad con otros datos es un ValueError, y no cambia nada")
def _(buzon_pg):
    with base_de_prueba() as abrir:
        _, bd = buzon_de_prueba(abrir)
        buzon_pg.recibir(bd, "p", "logs", "e1", HALLAZGO)
        for hijo, carga in (("logs", {"hallazgo": "otro"}), ("config", HALLAZGO)):
            _, error = intento(buzon_pg.recibir, bd, "p", hijo, "e1", carga)
            explicar(error, "ValueError")
            if type(error) is not ValueError:
                raise Fallo("ValueError", nombre_de(error), f"la entrega e1 otra vez, de {hijo!r} con {carga}")
        igual(filas_del_buzon(bd), [("e1", "logs", "recibida")], "el buzón tras los rechazos")


@caso("otro proceso guarda la misma entrega justo antes de tu INSERT: tú devuelves «duplicada», sin error")
def _(buzon_pg):
    with base_de_prueba() as abrir:
        ref, bd = buzon_de_prueba(abrir)
        otro = Otro(abrir(ref), lambda conexion: ref.recibir(conexion, "p", "logs", "e1", HALLAZGO))
        alumno = OtroAntesDe(abrir(ref), "INSERT", otro)
        mio, error = intento(buzon_pg.recibir, alumno, "p", "logs", "e1", HALLAZGO)
        suyo, error_suyo = otro.despues("INSERT")
        explicar(error, "duplicada, sin error")
        igual({"tú": nombre_de(error) if error else mio, "el otro": nombre_de(error_suyo) if error_suyo else suyo,
               "filas en el buzón": filas_del_buzon(bd)},
              {"tú": "duplicada", "el otro": "recibida", "filas en el buzón": [("e1", "logs", "recibida")]})
