"""Para los ejercicios de la lección 07: el compare-and-swap y la recepción idempotente, en PostgreSQL.

Cada caso trabaja en un esquema nuevo del servidor de la lección (`servidor_de_pruebas`: el de
CURSO_POSTGRES, que pone la primera celda del cuaderno; sin ella, uno de usar y tirar por caso, más
lento) y lo borra al acabar. El estado se prepara con los módulos del punto de control 07; la
función del alumno solo hace lo que se comprueba.

Las carreras no dependen de relojes: otra conexión actúa justo antes de la sentencia que escribe
del alumno (`OtroAntesDe`). Así, quien lee y después escribe ve cómo otro confirma en medio; quien
compara y escribe en una sola sentencia, no.
"""
import json
import re
from contextlib import ExitStack, contextmanager
from types import SimpleNamespace

from hypothesis import strategies as st

from curso import rutas
from curso.comprobaciones.diferencial import Lanzo, Maquina, al_empezar, en_la_corrida, regla, una_vez
from curso.comprobaciones.diferencial import intento as hecho
from curso.comprobaciones.ejercicios import Fallo, ejercicio, igual
from curso.rutas import cargar_modulo
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


# --- Los mundos de los diferenciales de la 07 ----------------------------------------------------
#
# Crear un esquema con sus tablas cuesta: cada papel (la referencia, el alumno) tiene el suyo, con
# dos conexiones (la suya y la de «otro», para las carreras), creados una vez por corrida del
# diferencial; cada secuencia empieza vaciando sus tablas (TRUNCATE … RESTART IDENTITY) y
# sembrándolas otra vez con la referencia.
def servidor_del_diferencial():
    try:
        return en_la_corrida("el servidor de la 07", servidor_de_pruebas)
    except FaltaPostgres as error:
        raise Fallo(f"un servidor PostgreSQL: el de {VARIABLE_DE_CONEXION} o uno de usar y tirar",
                    str(error).splitlines()[0], "sin servidor no se puede comprobar: mira cómo conseguirlo con "
                    "python -m curso postgres") from None


def conexiones_del_papel(papel, modulo):
    """(la conexión, la de otro) del esquema del `papel`, abiertas con `modulo` (su abrir_buzon o abrir)."""
    def abrir():
        esquema = en_la_corrida(("esquema", papel), lambda: esquema_de_prueba(servidor_del_diferencial(),
                                                                             prefijo="diferencial"))
        abre = getattr(modulo, "abrir_buzon", None) or modulo.abrir
        return abre(esquema), abre(esquema)
    return una_vez(("conexiones", papel), abrir)


def vaciar(bd, otra):
    """Deshace lo que una secuencia dejase a medias en cada conexión y vacía las tablas del esquema."""
    for conexion in (bd, otra):
        conexion.rollback()
    tablas = [t for (t,) in bd.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
    with bd.transaction():
        bd.execute("SET LOCAL lock_timeout = '5s'")  # si algo retuviera una fila, un error, no esperar sin fin
        bd.execute(f"TRUNCATE {', '.join(tablas)} RESTART IDENTITY CASCADE")


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


# El diferencial: secuencias de compare-and-swap en «e» (con el resumen 1 activo y el 2 y el 3 sin
# activar) y «f» (sin activo, con el 4 sin activar), desde la base activa, una vieja o None; y a
# veces otro instalador que mueve el mismo puntero justo antes de tu UPDATE, en su transacción.
class PunterosPG(Maquina):
    secuencias = 12
    pasos = 4
    para_encoger = 80
    pistas = {"lo que lanza": "un solo UPDATE … WHERE id=%s AND resumen_activo IS NOT DISTINCT FROM %s; si no cambió "
                              "ninguna fila (rowcount 0), BaseObsoleta",
              "¿el mensaje de BaseObsoleta nombra el activo de ahora?": "el mensaje dice cuál es el resumen activo "
                                                                        "ahora, con su número",
              "los punteros": "solo se mueve el puntero de esa ejecución, y solo si seguía en la base",
              "en la carrera": "con la comparación dentro del UPDATE (o la fila bloqueada), gana uno y el otro recibe "
                               "BaseObsoleta; el activo de su mensaje se lee después del UPDATE que no cambió nada"}

    def preparar(self, resumenes_pg):
        papel = "referencia" if resumenes_pg is self.referencia else "alumno"
        historial = una_vez("historial_pg", lambda: referencia("historial_pg"))
        ref = una_vez("resumenes_pg", lambda: referencia("resumenes_pg"))
        bd, otra = conexiones_del_papel(papel, historial)
        vaciar(bd, otra)
        for ejecucion in ("e", "f"):
            historial.crear_ejecucion(bd, ejecucion)
            for i in range(1, 7):
                historial.anotar(bd, ejecucion, f"mensaje {i}")
        ref.instalar(bd, "e", None, 2, [{"texto": "uno", "fuente": 2}])
        for ejecucion, cobertura in (("e", 3), ("e", 4), ("f", 2)):
            bd.execute("INSERT INTO resumenes(ejecucion, cobertura, cuerpo) VALUES (%s, %s, '[]')", (ejecucion, cobertura))
        return SimpleNamespace(resumenes_pg=resumenes_pg, bd=bd, otra=otra, ref=ref)

    def punteros(self, bd):
        return dict(bd.execute("SELECT id, resumen_activo FROM ejecuciones ORDER BY id").fetchall())

    @al_empezar(ejecucion=st.sampled_from(["e", "f"]), base=st.sampled_from(["la activa", "None", "otra"]),
                nuevo=st.integers(0, 2), otro=st.booleans())
    def empezar(self, mundo, ejecucion, base, nuevo, otro):
        return self.mover(mundo, ejecucion, base, nuevo, otro)

    @regla(ejecucion=st.sampled_from(["e", "f"]), base=st.sampled_from(["la activa", "None", "otra"]),
           nuevo=st.integers(0, 2), otro=st.booleans())
    def mover(self, mundo, ejecucion, base, nuevo, otro):
        bd, suyos = mundo.bd, {"e": [1, 2, 3], "f": [4]}[ejecucion]
        punteros = self.punteros(bd)
        el_nuevo = suyos[nuevo % len(suyos)]
        la_base = {"la activa": punteros[ejecucion], "None": None}.get(
            base, next((r for r in suyos if r != punteros[ejecucion]), punteros[ejecucion] or suyos[0]))
        if el_nuevo == la_base:  # instalar parte siempre de otra base que el resumen nuevo
            el_nuevo = next((r for r in suyos if r != la_base), None)
            if el_nuevo is None:
                self.contar_paso(f"nada que mover en {ejecucion!r}")
                return {}
        el_suyo = next((r for r in suyos if r not in (el_nuevo, la_base)), None) if otro else None
        self.contar_paso(f"mover_puntero(bd, {ejecucion!r}, {la_base}, {el_nuevo}) con los punteros en {punteros}"
                         + (f", y otro lo mueve de {la_base} a {el_suyo} justo antes de tu UPDATE" if el_suyo else ""))
        if el_suyo is None:
            lanza = hecho(mundo.resumenes_pg.mover_puntero, bd, ejecucion, la_base, el_nuevo)
            ahora = self.punteros(bd)
            return {"lo que lanza": lanza, "¿el mensaje de BaseObsoleta nombra el activo de ahora?":
                    self.nombra(lanza, ahora[ejecucion]), "los punteros": ahora}

        def mover_el_suyo(conexion):
            with mundo.ref.transaccion(conexion):
                mundo.ref.mover_puntero(conexion, ejecucion, la_base, el_suyo)
        el_otro = Otro(mundo.otra, mover_el_suyo)
        alumno = OtroAntesDe(bd, "UPDATE", el_otro)
        with mundo.ref.transaccion(alumno):
            lanza = hecho(mundo.resumenes_pg.mover_puntero, alumno, ejecucion, la_base, el_nuevo)
        if el_otro.resultado is None and not el_otro.esperaba:
            el_otro()  # tu código no llegó a un UPDATE (lanzó antes): el otro actúa igual, después
        _, error = el_otro.despues("UPDATE")
        ahora = self.punteros(bd)
        # Quién gana depende de cómo se espera (comparar en el UPDATE, o bloquear la fila con FOR UPDATE):
        # las dos valen. Lo que no cambia: gana uno, el otro recibe BaseObsoleta, y el activo es del que gana.
        resultados = {"tú": lanza if isinstance(lanza, Lanzo) else None, "el otro": Lanzo(error) if error else None}
        ganan = [quien for quien, r in resultados.items() if r is None]
        obsoletos = [quien for quien, r in resultados.items() if getattr(r, "tipo", None) == "BaseObsoleta"]
        del_que_gana = ganan and ahora[ejecucion] == {"tú": el_nuevo, "el otro": el_suyo}[ganan[0]]
        bien = len(ganan) == 1 and len(obsoletos) == 1 and del_que_gana
        if bien:
            nombra = "tú" not in obsoletos or self.nombra(resultados["tú"], ahora[ejecucion])
            carrera = ("gana uno, el otro recibe BaseObsoleta, y el activo es el del que gana"
                       + ("" if nombra else "; pero tu BaseObsoleta no nombra el activo de ahora"))
        else:
            carrera = (f"tú: {_tipo(resultados['tú'])}; el otro: {_tipo(resultados['el otro'])}; el activo es "
                       f"{ahora[ejecucion]} (el tuyo, {el_nuevo}; el suyo, {el_suyo})")
        # Quién ganó puede ser distinto en cada mundo, y los dos valen: se sigue desde el mismo sitio, el suyo.
        bd.execute("UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s", (el_suyo, ejecucion))
        return {"en la carrera": carrera, "los otros punteros": {e: a for e, a in ahora.items() if e != ejecucion}}

    @staticmethod
    def nombra(lanza, activo):
        """Si `lanza` es una BaseObsoleta, si su mensaje nombra el activo (None si no hay nada que mirar)."""
        if getattr(lanza, "tipo", None) != "BaseObsoleta" or activo is None:
            return None
        return bool(re.search(rf"\b{activo}\b", str(lanza.error)))


def _tipo(lanza):
    """«nada» o el tipo de lo que lanzó (sin su mensaje, que no fija el ejercicio)."""
    return lanza.tipo if isinstance(lanza, Lanzo) else "nada"


caso.diferencial()(PunterosPG)


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


# El diferencial: secuencias de recepciones en el buzón de PostgreSQL de lo que escribe el ejercicio, el
# INSERT y lo que se decide después: entregas de hijos que su padre espera («p» espera a «logs» y a
# «config»; «r», también a «logs») y que cumplen su encargo (lo de antes del INSERT lo da la celda),
# repetidas con los mismos datos (también escritos de otra manera) o con otros, o de otro padre; y a
# veces otro proceso que guarda la misma entrega (con los mismos datos, o con otros) justo antes.
CARGAS = {"el hallazgo": HALLAZGO, "el mismo hallazgo, escrito de otra manera": {"hallazgo": "la API conecta al 5433"},
          "otro hallazgo": {"hallazgo": "otro"}, "un hallazgo con acentos": {"hallazgo": "¿conexión rechazada? «ñ»"},
          "una entrega con evidencia": {"hallazgos": ["x"], "referencias": ["logs/api.log:7"], "incertidumbres": []},
          "la misma, con las claves en otro orden": {"incertidumbres": [], "referencias": ["logs/api.log:7"],
                                                     "hallazgos": ["x"]}}
PAREJAS = [("p", "logs")] * 3 + [("p", "config"), ("r", "logs")]
OTRO_72 = ["nadie más", "nadie más", "otro guarda la misma entrega justo antes",
           "otro guarda esa identidad con otros datos justo antes"]


class RecepcionesPG(Maquina):
    secuencias = 12
    pasos = 5
    para_encoger = 80
    pistas = {"lo que devuelve": "recibida si la guardó este INSERT (rowcount 1); si ya estaba, duplicada si la fila es "
                                 "(padre, hijo, cuerpo), la carga canónica; si no, sigue al ValueError",
              "lo que devuelve el otro": "con ON CONFLICT DO NOTHING nadie choca con la clave",
              "el buzón": "una fila por entrega; un rechazo no cambia nada"}

    def preparar(self, buzon_pg):
        papel = "referencia" if buzon_pg is self.referencia else "alumno"
        ref = una_vez("buzon_pg", lambda: referencia("buzon_pg"))
        bd, otra = conexiones_del_papel(papel, ref)
        vaciar(bd, otra)
        ref.crear_padre(bd, "p", ["logs", "config"])
        ref.crear_padre(bd, "r", ["logs"])
        return SimpleNamespace(buzon_pg=buzon_pg, bd=bd, otra=otra, ref=ref)

    @al_empezar(pareja=st.sampled_from(PAREJAS), entrega=st.sampled_from(["e1", "e2"]),
                carga=st.sampled_from(list(CARGAS)), otro=st.sampled_from(OTRO_72))
    def empezar(self, mundo, pareja, entrega, carga, otro):
        return self.recibir(mundo, pareja, entrega, carga, otro)

    @regla(pareja=st.sampled_from(PAREJAS), entrega=st.sampled_from(["e1", "e2"]), carga=st.sampled_from(list(CARGAS)),
           otro=st.sampled_from(OTRO_72), contar=lambda pareja, entrega, carga, otro:
           f"recibir(bd, {pareja[0]!r}, {pareja[1]!r}, {entrega!r}, {carga})" + (f", y {otro}" if otro != "nadie más"
                                                                                 else ""))
    def recibir(self, mundo, pareja, entrega, carga, otro):
        padre, hijo = pareja
        if otro == "nadie más":
            devuelve, del_otro = hecho(mundo.buzon_pg.recibir, mundo.bd, padre, hijo, entrega, CARGAS[carga]), None
        else:
            suya = CARGAS[carga] if otro.endswith("misma entrega justo antes") else {"hallazgo": "lo del otro"}
            el_otro = Otro(mundo.otra, lambda conexion: mundo.ref.recibir(conexion, "p", "logs", entrega, suya))
            devuelve = hecho(mundo.buzon_pg.recibir, OtroAntesDe(mundo.bd, "INSERT", el_otro), padre, hijo, entrega,
                               CARGAS[carga])
            if el_otro.resultado is None and not el_otro.esperaba:
                el_otro()  # tu código no llegó a un INSERT (lanzó antes): el otro guarda igual, después
            valor, error = el_otro.despues("INSERT")
            del_otro = Lanzo(error) if error else valor
        filas = mundo.bd.execute("SELECT entrega, padre, hijo, carga, disposicion FROM buzon ORDER BY entrega").fetchall()
        return {"lo que devuelve": devuelve, "lo que devuelve el otro": del_otro,
                "el buzón": [(e, p, h, json.loads(c), d) for e, p, h, c, d in filas]}


caso.diferencial()(RecepcionesPG)
