"""Para los ejercicios de la lección 05: recibir, admitir, la condición que activa al padre, e integrar por evidencia.

Los casos de los ejercicios de la lección 05, cada uno con la frase de lo que la lección pidió y
junto a las pistas de su ejercicio.

Cada caso prepara su estado por el camino de verdad, con `recibir` y `admitir`: los del punto de
control 05 para todo lo que no es el ejercicio que se comprueba, y la función del alumno para lo
que sí. Así un caso escrito para un error concreto es el que lo pilla, y el fallo de un ejercicio
no se cuela en la comprobación de otro.
"""
import sqlite3
from types import SimpleNamespace

from hypothesis import strategies as st

from curso import rutas
from curso.comprobaciones.diferencial import (Lanzo, Maquina, al_empezar, carpeta_fija, cerrar_y_borrar,
                                              copia_de_plantilla, intento, regla, sin_esperar_al_disco, una_vez)
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual
from curso.rutas import cargar_modulo
from curso.explorables.carreras.escenarios.carreras_del_buzon import Caida, ConexionQueCae
from curso.material.incidente import INCIDENTE

HALLAZGO = {"hallazgo": "la API conecta al 5433"}


def referencia():
    """El buzon.py del punto de control 05, cargado de nuevo: con él se prepara cada caso."""
    return cargar_modulo(rutas.puntos_de_control()[5] / "buzon.py", "_buzon_de_referencia")


def base(hijos=("logs", "config")):
    """(referencia, bd, ruta): un buzón nuevo en un fichero de verdad, con el padre «p»
    esperando a `hijos`, hecho con el buzon.py de referencia."""
    ref = referencia()
    ruta = carpeta_temporal("ejercicio-5-") / "buzon.db"
    bd = ref.abrir_buzon(ruta)
    ref.crear_padre(bd, "p", list(hijos))
    return ref, bd, ruta


def volcado(bd):
    return "\n".join(bd.iterdump())


def padre(bd):
    """El estado del padre «p», leído con SQL directo y con sus nombres."""
    estado, version = bd.execute("SELECT estado, version FROM ejecuciones WHERE id='p'").fetchone()
    return {"estado": estado, "versión": version}


def trayectoria(bd):
    """Los mensajes del padre «p»: [(seq, entrega), ...], leídos con SQL directo."""
    return bd.execute("SELECT seq, entrega FROM mensajes WHERE padre='p' ORDER BY seq").fetchall()


def entrega_en_el_buzon(bd, entrega):
    """Cómo está `entrega` en el buzón, con sus nombres (o None si no está)."""
    fila = bd.execute("SELECT disposicion, seq_admitida FROM buzon WHERE entrega=?", (entrega,)).fetchone()
    return None if fila is None else {"disposición": fila[0], "seq_admitida": fila[1]}


def lanza(excepcion, funcion, *args):
    try:
        funcion(*args)
    except excepcion:
        return
    except Exception as e:  # noqa: BLE001
        raise Fallo(excepcion.__name__, f"{type(e).__name__}: {e}") from e
    raise Fallo(excepcion.__name__, "ninguna excepción")


# --- El diferencial de 5.1, 5.2 y 5.3: secuencias de operaciones sobre un buzón -------------------
#
# Dos padres: «p» espera a «logs» y a «config», sin encargo; «q» espera a «solo», con un encargo que
# solo deja citar logs/. Cada secuencia recibe entregas (de hijos esperados, de uno que no, de un
# padre que no existe; la misma identidad otra vez, con los mismos datos o con otros; cargas que
# cumplen el encargo o no), las admite (también dos veces, y una que no está), termina padres y
# activa. Solo la función del ejercicio es la tuya; lo demás es de la referencia, en cada mundo.
ENCARGO_DE_Q = {"objetivo": "Mira los registros.", "recursos": ["logs/"], "acciones": ["leer"],
                "entregable": {"hallazgos": [], "referencias": [], "incertidumbres": []}, "tope_de_pasos": 3,
                "plazo": 120}
CARGAS = {"el hallazgo": HALLAZGO, "el mismo hallazgo, otro dict": dict(HALLAZGO), "otro hallazgo": {"hallazgo": "otro"},
          "una entrega con evidencia": {"hallazgos": ["La API no llega."], "referencias": ["logs/api.log:7"],
                                        "incertidumbres": []},
          "la misma, con las claves en otro orden": {"incertidumbres": [], "referencias": ["logs/api.log:7"],
                                                     "hallazgos": ["La API no llega."]},
          "una entrega sin evidencia": {"hallazgos": ["La API no llega."], "referencias": [], "incertidumbres": []},
          "una entrega que cita fuera de sus recursos": {"hallazgos": ["x"], "referencias": ["config/db.toml:6"],
                                                         "incertidumbres": []}}


def _buzon_del_diferencial(ruta):
    ref = referencia()
    bd = ref.abrir_buzon(ruta)
    ref.crear_padre(bd, "p", ["logs", "config"])
    ref.crear_padre(bd, "q", {"solo": ENCARGO_DE_Q})
    bd.close()


def foto_del_buzon(bd):
    """Lo que se compara de la base tras cada paso: los padres, el buzón y las trayectorias."""
    return {"padres": bd.execute("SELECT id, estado, version FROM ejecuciones ORDER BY id").fetchall(),
            "buzón": bd.execute("SELECT entrega, padre, hijo, carga, disposicion, seq_admitida FROM buzon "
                                "ORDER BY entrega").fetchall(),
            "trayectorias": bd.execute("SELECT padre, seq, entrega, carga FROM mensajes ORDER BY padre, seq").fetchall()}


# Las parejas (padre, hijo) que valen salen más a menudo (repetidas): con una de cada, casi todo
# serían rechazos y el buzón no llegaría a llenarse.
PAREJAS = [("p", "logs")] * 3 + [("p", "config")] * 3 + [("q", "solo")] * 2 + [
    ("p", "intruso"), ("nadie", "logs"), ("q", "logs"), ("p", "solo")]
RECIBIR = dict(pareja=st.sampled_from(PAREJAS), entrega=st.sampled_from(["e1", "e2", "e3", "e5"]),
               carga=st.sampled_from(["el hallazgo"] * 3 + list(CARGAS)))


# Cada secuencia empieza con de 0 a 6 cosas (el número, aparte: las listas de hypothesis suelen ser
# cortas): entregas recibidas y admitidas, solo recibidas, o la anterior otra vez (el transporte que
# repite), igual o con otra carga; y algún padre que termina.
COMO_LLEGA = ["admitida", "admitida", "solo recibida", "la anterior, repetida", "la anterior, repetida",
              "la anterior, con esta carga", "y termina su padre", "admitida en un proceso que cae a mitad",
              "y las de los demás hijos de su padre, admitidas", "y las de los demás hijos de su padre, admitidas"]
ENTREGAS = st.builds(lambda cuantas, entregas: entregas[:cuantas], st.integers(0, 6), st.lists(
    st.tuples(st.sampled_from(PAREJAS), st.sampled_from(["el hallazgo"] * 3 + list(CARGAS)), st.sampled_from(COMO_LLEGA)),
    min_size=6, max_size=6))


def contar_entregas(entregas):
    return "; ".join(f"{p}/{h} ({c}): {como}" for (p, h), c, como in entregas) or "ninguna entrega"


def _en_una_transaccion(apoyo, funcion, bd, padre):
    """Como la llama admitir: dentro de su transacción."""
    with apoyo.transaccion(bd):
        return funcion(bd, padre)


class Buzon(Maquina):
    """El buzón con la función `del_alumno` ("recibir", "admitir" o "activar_si_estan_todos") de
    cada mundo; lo demás, de la referencia."""

    secuencias = 50
    pasos = 6
    para_encoger = 300
    del_alumno = None
    pistas = {"lo que devuelve": "recibida la primera vez, duplicada si vuelve idéntica; admitida, o tardia si el "
                                 "padre terminó; el tipo de excepción que dice su docstring",
              "la base": "lo que queda en la base tras el paso: un rechazo no cambia nada"}

    def preparar(self, buzon):
        ruta = copia_de_plantilla("buzon.db", _buzon_del_diferencial)
        bd = sin_esperar_al_disco(sqlite3.connect(ruta, isolation_level=None))
        bd.execute("PRAGMA foreign_keys=ON")
        if buzon is self.referencia or self.del_alumno == "recibir":
            apoyo = self.referencia
        elif self.del_alumno == "admitir":
            apoyo = self.referencia
            buzon.activar_si_estan_todos = self.referencia.activar_si_estan_todos  # el 5.3 tiene su ejercicio
        else:  # la activación del alumno, llamada desde el admitir de una referencia aparte, como en sus casos
            apoyo = una_vez("la referencia con la activación del alumno", referencia)
            apoyo.activar_si_estan_todos = buzon.activar_si_estan_todos
        funciones = {nombre: getattr(apoyo, nombre) for nombre in ("recibir", "admitir", "activar_si_estan_todos")}
        funciones[self.del_alumno] = getattr(buzon, self.del_alumno)
        return SimpleNamespace(bd=bd, ruta=ruta, funciones=funciones, apoyo=apoyo)

    def cerrar(self, mundo):
        cerrar_y_borrar(mundo.bd, carpeta=mundo.ruta.parent)

    def hechos(self, mundo, devuelve):
        return {"lo que devuelve": devuelve, "la base": foto_del_buzon(mundo.bd)}

    def admitir_cayendo(self, mundo, entrega):
        """admitir en un proceso que muere entre sus dos escrituras; después otro abre la base."""
        try:
            devuelve = mundo.funciones["admitir"](ConexionQueCae(mundo.bd), entrega)
        except Caida:
            devuelve = "cae a mitad"
        except Exception as error:  # noqa: BLE001 - lo que lance el alumno es un hecho
            devuelve = Lanzo(error)
        mundo.bd.close()  # el proceso muere: ni COMMIT ni ROLLBACK
        mundo.bd = sin_esperar_al_disco(sqlite3.connect(mundo.ruta, isolation_level=None))
        mundo.bd.execute("PRAGMA foreign_keys=ON")
        return devuelve

    @al_empezar(entregas=ENTREGAS, contar=lambda entregas: contar_entregas(entregas))
    def empezar(self, mundo, entregas):
        """Cada secuencia empieza con de 0 a 4 entregas y una activación de cada padre: así llega a
        padres con todos sus hijos admitidos, o con alguno solo recibido, que es donde se activan o no."""
        devuelto, anterior = [], None
        for n, ((padre, hijo), carga, como) in enumerate(entregas, 1):
            if como.startswith("la anterior") and anterior:
                padre, hijo, entrega, carga = anterior if como.endswith("repetida") else (padre, hijo, anterior[2], carga)
            else:
                entrega = f"e{n}"
            anterior = (padre, hijo, entrega, carga)
            devuelto.append(intento(mundo.funciones["recibir"], mundo.bd, padre, hijo, entrega, CARGAS[carga]))
            if como == "y termina su padre":
                devuelto.append(intento(mundo.apoyo.terminar, mundo.bd, padre, "cancelada"))
            if como in ("admitida", "y termina su padre") or como.startswith("la anterior"):
                devuelto.append(intento(mundo.funciones["admitir"], mundo.bd, entrega))
            if como == "admitida en un proceso que cae a mitad":
                devuelto.append(self.admitir_cayendo(mundo, entrega))
            if como == "y las de los demás hijos de su padre, admitidas":
                for otro in {"p": ("logs", "config"), "q": ("solo",)}.get(padre, ()):
                    devuelto.append(intento(mundo.funciones["recibir"], mundo.bd, padre, otro, f"e{n}{otro}",
                                            CARGAS["una entrega con evidencia"]))
                    devuelto.append(intento(mundo.funciones["admitir"], mundo.bd, f"e{n}{otro}"))
        if self.del_alumno == "activar_si_estan_todos":  # en el 5.2, la activación tiene que hacerla admitir
            for padre in ("p", "q"):
                devuelto.append(intento(_en_una_transaccion, mundo.apoyo, mundo.funciones["activar_si_estan_todos"],
                                        mundo.bd, padre))
        return self.hechos(mundo, devuelto)

    @regla(**RECIBIR, contar=lambda pareja, entrega, carga: f"recibir(bd, {pareja[0]!r}, {pareja[1]!r}, {entrega!r}, "
                                                            f"{carga})")
    def recibir(self, mundo, pareja, entrega, carga):
        padre, hijo = pareja
        return self.hechos(mundo, intento(mundo.funciones["recibir"], mundo.bd, padre, hijo, entrega, CARGAS[carga]))

    @regla(entrega=st.sampled_from(["e1", "e2", "e3", "e4", "e5", "nunca_recibida"]),
           contar=lambda entrega: f"admitir(bd, {entrega!r})")
    def admitir(self, mundo, entrega):
        return self.hechos(mundo, intento(mundo.funciones["admitir"], mundo.bd, entrega))

    @regla(que=st.sampled_from(["activar p", "activar q", "terminar p cancelada", "terminar q completada"]),
           contar=lambda que: f"{que.split()[0]}(bd, {', '.join(repr(x) for x in que.split()[1:])})")
    def otra_cosa(self, mundo, que):
        """Activar a un padre (sin más) o terminarlo."""
        accion, padre, *estado = que.split()
        if accion == "activar":
            funcion = mundo.funciones["activar_si_estan_todos"]
            return self.hechos(mundo, intento(_en_una_transaccion, mundo.apoyo, funcion, mundo.bd, padre))
        return self.hechos(mundo, intento(mundo.apoyo.terminar, mundo.bd, padre, *estado))


# --- 5.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.1", leccion=5, titulo="recibir: guardar una entrega una sola vez",
    nombre=None, modulo="buzon",
    pistas=[
        "Todo dentro de `with transaccion(bd):`. Primero, que el padre exista y que espere a ese "
        "hijo (la tabla hijos_esperados): si no lo espera, PermissionError.",
        "Después busca la entrega por su identidad en la tabla buzon. Si ya está con el mismo "
        "padre, hijo y carga, es un duplicado: return DUPLICADA. Si está con otros datos, ValueError.",
        "Si no estaba, INSERT INTO buzon(entrega, padre, hijo, carga) con la carga canónica "
        "(`cuerpo`) y return RECIBIDA. La disposición empieza en 'recibida' por defecto.",
        "Lo que dice su docstring y a veces se olvida: un padre que no existe es un ValueError (no un "
        "PermissionError), y si el hijo tiene encargo (la columna encargo de hijos_esperados, de ESE "
        "padre), lo que entrega tiene que cumplirlo: validar_entrega(json.loads(encargo), carga).",
    ],
)


@caso("la primera vez «recibida»; la misma entrega otra vez, «duplicada»")
def _(buzon):
    _, bd, _ = base()
    igual(buzon.recibir(bd, "p", "logs", "e1", HALLAZGO), "recibida", "la primera vez")
    igual(buzon.recibir(bd, "p", "logs", "e1", HALLAZGO), "duplicada", "la segunda vez, idéntica")


@caso("la misma identidad con otros datos es un ValueError, y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    antes = volcado(bd)
    lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", {"hallazgo": "otro"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("un hijo que el padre no espera es un PermissionError, y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    antes = volcado(bd)
    lanza(PermissionError, buzon.recibir, bd, "p", "intruso", "e9", {"hallazgo": "x"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


# Lo pilla un mutante del SQL (`medir mutantes 5.1 --operadores CambioEnSQL`): buscar el hijo
# esperado sin mirar de qué padre (`WHERE hijo=?`).
@caso("un hijo que espera otro padre tampoco vale: PermissionError, y no cambia nada")
def _(buzon):
    ref, bd, _ = base()
    ref.crear_padre(bd, "q", ["intruso"])
    antes = volcado(bd)
    lanza(PermissionError, buzon.recibir, bd, "p", "intruso", "e9", {"hallazgo": "x"})
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("recibir no admite: la entrega queda «recibida» y el padre, esperando")
def _(buzon):
    _, bd, _ = base(hijos=("logs",))
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    igual({"entrega e1": entrega_en_el_buzon(bd, "e1"), "padre": padre(bd), "trayectoria": trayectoria(bd)},
          {"entrega e1": {"disposición": "recibida", "seq_admitida": None},
           "padre": {"estado": "esperando", "versión": 0}, "trayectoria": []})


# Los tres siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 5.1`): comparar
# la entrega anterior con >= (según cómo se ordenen los datos, pasa por duplicada), no mirar que el
# padre exista, y no aplicar el encargo del hijo a lo que entrega.
@caso("la misma identidad y otra carga, sea cual sea (también las que se ordenan antes o después): ValueError")
def _(buzon):
    _, bd, _ = base()
    buzon.recibir(bd, "p", "logs", "e1", HALLAZGO)
    antes = volcado(bd)
    for otra in ({"a": 1}, {"zzz": 1}, {"hallazgo": ""}, {"hallazgo": "zzz"}):
        lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", otra)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("un padre que no existe es un ValueError (no un PermissionError), y no cambia nada")
def _(buzon):
    _, bd, _ = base()
    antes = volcado(bd)
    lanza(ValueError, buzon.recibir, bd, "nadie", "logs", "e1", HALLAZGO)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


@caso("con un encargo, lo que entrega el hijo tiene que cumplirlo (validar_entrega): si no, ValueError")
def _(buzon):
    from curso.material.incidente import encargos_del_incidente
    ref = referencia()
    bd = ref.abrir_buzon(carpeta_temporal("ejercicio-5-") / "buzon.db")
    encargos = cargar_modulo(rutas.puntos_de_control()[5] / "encargos.py", "_encargos_de_referencia")
    ref.crear_padre(bd, "p", encargos_del_incidente(encargos))
    antes = volcado(bd)
    sin_evidencia = {"hallazgos": ["La API no llega a la base."], "referencias": [], "incertidumbres": []}
    lanza(ValueError, buzon.recibir, bd, "p", "logs", "e1", sin_evidencia)
    igual(volcado(bd) == antes, True, "la base de datos cambió tras un rechazo")


class Recepciones(Buzon):
    del_alumno = "recibir"


caso.diferencial()(Recepciones)


# --- 5.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.2", leccion=5, titulo="admitir: el mensaje, la marca y la activación, en una transacción",
    nombre=None, modulo="buzon", usa=["5.3"],
    pistas=[
        "Dentro de `with transaccion(bd):` lee la entrega y el estado de su padre. Si no está, "
        "ValueError. Si ya no está «recibida», devuelve su disposición: admitir dos veces no cambia nada.",
        "Si el padre está en un estado terminal (TERMINALES), marca la entrega como 'tardia' y "
        "devuelve TARDIA: se guarda, pero no entra en la trayectoria.",
        "Si no: el seq siguiente del padre (MAX(seq) + 1), INSERT INTO mensajes, UPDATE buzon a "
        "'admitida' con ese seq, activar_si_estan_todos(bd, padre), y return ADMITIDA. Todo en la "
        "misma transacción: si algo cae a mitad, no queda nada hecho.",
    ],
)


def admitir_del_alumno(buzon, ref):
    """El `admitir` del alumno, con la activación de referencia: aquí se comprueba admitir, y
    `activar_si_estan_todos` tiene su propio ejercicio (el 5.3)."""
    buzon.activar_si_estan_todos = ref.activar_si_estan_todos
    return buzon.admitir


@caso("admitir añade el mensaje con seq 1 y marca la entrega como admitida")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    igual(admitir(bd, "e1"), "admitida", "lo que devuelve admitir")
    igual({"trayectoria": trayectoria(bd), "entrega e1": entrega_en_el_buzon(bd, "e1")},
          {"trayectoria": [(1, "e1")], "entrega e1": {"disposición": "admitida", "seq_admitida": 1}},
          "la trayectoria es [(seq, entrega), ...]")


@caso("admitir dos veces es inofensivo: un solo mensaje")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    admitir(bd, "e1")
    igual(admitir(bd, "e1"), "admitida", "lo que devuelve la segunda vez")
    igual(len(trayectoria(bd)), 1, "mensajes en la trayectoria del padre")


@caso("con la entrega del último hijo, el padre pasa a la cola en esa misma admisión")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    admitir(bd, "e1")
    igual(padre(bd), {"estado": "esperando", "versión": 0}, "el padre, con solo logs admitido")
    ref.recibir(bd, "p", "config", "e2", HALLAZGO)
    admitir(bd, "e2")
    igual(padre(bd), {"estado": "en_cola", "versión": 1}, "el padre, con los dos hijos admitidos")


@caso("a un padre terminado, la entrega llega «tardía»: se guarda y el padre no cambia")
def _(buzon):
    ref, bd, _ = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    ref.terminar(bd, "p", "cancelada")
    antes = padre(bd)
    igual(admitir(bd, "e1"), "tardia", "lo que devuelve admitir")
    igual({"padre": padre(bd), "trayectoria": trayectoria(bd),
           "disposición de e1": entrega_en_el_buzon(bd, "e1")["disposición"]},
          {"padre": antes, "trayectoria": [], "disposición de e1": "tardia"})


@caso("si el proceso cae entre sus dos escrituras, no queda nada y la entrega sigue «recibida»")
def _(buzon):
    ref, bd, ruta = base()
    admitir = admitir_del_alumno(buzon, ref)
    ref.recibir(bd, "p", "logs", "e1", HALLAZGO)
    try:
        admitir(ConexionQueCae(bd), "e1")
    except Caida:
        pass
    else:
        raise Fallo("dos escrituras: añadir el mensaje y marcar la entrega",
                    "admitir terminó sin hacer las dos")
    bd.close()  # el proceso muere: ni COMMIT ni ROLLBACK
    otra = sqlite3.connect(ruta, isolation_level=None)
    try:
        igual({"trayectoria": trayectoria(otra), "entrega e1": entrega_en_el_buzon(otra, "e1")},
              {"trayectoria": [], "entrega e1": {"disposición": "recibida", "seq_admitida": None}},
              "lo que queda en la base tras la caída")
    finally:
        otra.close()


@caso("una entrega que no está en el buzón es un ValueError")
def _(buzon):
    ref, bd, _ = base()
    lanza(ValueError, admitir_del_alumno(buzon, ref), bd, "no-existe")


class Admisiones(Buzon):
    del_alumno = "admitir"


caso.diferencial()(Admisiones)


# --- 5.3 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.3", leccion=5, titulo="activar_si_estan_todos: NOT EXISTS, no una cuenta",
    nombre=None, modulo="buzon",
    pistas=[
        "Es un solo UPDATE de ejecuciones: estado = 'en_cola' y version = version + 1, solo para "
        "el padre `padre` y solo si su estado es 'esperando' (así se activa una vez).",
        "La condición: que NO EXISTA ningún hijo esperado (hijos_esperados) para el que NO EXISTA "
        "una entrega suya en el buzón con disposicion = 'admitida'. Dos NOT EXISTS anidados.",
        "No cuentes mensajes: dos entregas admitidas del mismo hijo no son una de cada hijo. Y "
        "una entrega recibida y sin admitir no cuenta: mira la disposición.",
    ],
)


def con_activar_del_alumno(buzon):
    """(ref, bd): el buzón de referencia con la activación del alumno en su sitio. El `admitir`
    de referencia la llama en su transacción, como la llamará el tuyo."""
    ref, bd, _ = base()
    ref.activar_si_estan_todos = buzon.activar_si_estan_todos
    return ref, bd


def entrega(ref, bd, hijo, entrega):
    """Una entrega de `hijo` para «p», recibida y admitida."""
    ref.recibir(bd, "p", hijo, entrega, HALLAZGO)
    return ref.admitir(bd, entrega)


@caso("con un solo hijo admitido, el padre sigue esperando")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0}, "el padre, con solo logs admitido")


@caso("una entrega recibida y sin admitir no cuenta")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    ref.recibir(bd, "p", "config", "e2", HALLAZGO)  # recibida, pero nadie la ha admitido
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0},
          "el padre, con logs admitido y config solo recibido")


@caso("dos entregas admitidas del mismo hijo no activan al padre")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "logs", "e2")  # un resultado y su corrección: dos mensajes, un solo hijo
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), {"estado": "esperando", "versión": 0},
          "el padre, con dos entregas de logs y ninguna de config")


@caso("con los dos hijos admitidos, pasa a la cola una sola vez (versión + 1)")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "config", "e2")
    buzon.activar_si_estan_todos(bd, "p")  # otra vez: ya no está esperando
    igual(padre(bd), {"estado": "en_cola", "versión": 1},
          "el padre, tras admitir a los dos y activar otra vez")


# Lo pilla un mutante del SQL (`medir mutantes 5.3 --operadores CambioEnSQL`): el UPDATE sin
# `id = ?`, que activa a todos los padres que ya tienen sus entregas, no solo a `padre`.
@caso("activar a un padre no activa a otro: el UPDATE es solo para `padre`")
def _(buzon):
    ref, bd, _ = base()
    ref.crear_padre(bd, "q", ["solo"])
    ref.activar_si_estan_todos = lambda bd, padre: None  # q queda con su entrega admitida y sin activar
    ref.recibir(bd, "q", "solo", "eq", HALLAZGO)
    ref.admitir(bd, "eq")
    buzon.activar_si_estan_todos(bd, "p")
    igual(tuple(bd.execute("SELECT estado, version FROM ejecuciones WHERE id='q'").fetchone()), ("esperando", 0),
          "(estado, versión) de «q» tras activar a «p»")


@caso("un padre terminado no se activa")
def _(buzon):
    ref, bd = con_activar_del_alumno(buzon)
    entrega(ref, bd, "logs", "e1")
    entrega(ref, bd, "config", "e2")
    ref.terminar(bd, "p", "fallida")
    antes = padre(bd)
    buzon.activar_si_estan_todos(bd, "p")
    igual(padre(bd), antes, "el padre terminado, tras activar otra vez")


class Activaciones(Buzon):
    del_alumno = "activar_si_estan_todos"


caso.diferencial()(Activaciones)


# --- 5.4 -------------------------------------------------------------------------------------
caso = ejercicio(
    "5.4", leccion=5, titulo="por_que_no y verificar: integrar comprobando la evidencia",
    nombre=None, modulo="subagentes",
    pistas=[
        "Primero lo que no hace falta abrir: las citas del hallazgo (CITA.findall) y la referencia "
        "(REFERENCIA.fullmatch, con su ruta y su línea). Sin cita, sin referencia o sin línea, "
        "devuelve un texto que diga por qué.",
        "Abre el fichero como lo abre leer: herramientas.contenido(proyecto, ruta) no sale del "
        "proyecto, y si no puede lanza ErrorDeHerramienta (su mensaje es un buen motivo). "
        "herramientas.lineas(texto) da sus líneas: la n es lineas[n - 1], si hay tantas.",
        "Cada cita tiene que estar en ESA línea, no en otra del fichero. En verificar, el hallazgo "
        "i va con la referencia i (None si hay menos referencias), y cada descartado lleva su motivo.",
    ],
)

CIERTO = "La base escucha en el 5432: «puerto = 5432»"  # config/db.toml:6 lo dice
OTRO_CIERTO = "La base admite cien conexiones: «max_conexiones = 100»"  # config/db.toml:7


def descartado(subagentes, hallazgo, referencia, proyecto=INCIDENTE):
    """El motivo que da `por_que_no`: tiene que ser un texto, no None ni una excepción."""
    motivo = subagentes.por_que_no(hallazgo, referencia, proyecto)
    igual(isinstance(motivo, str) and bool(motivo.strip()), True,
          f"por_que_no({hallazgo!r}, {referencia!r}) devolvió {motivo!r}: tenía que decir por qué no")


@caso("un hallazgo cuyas citas están en su línea se da por bueno (None)")
def _(subagentes):
    igual(subagentes.por_que_no(CIERTO, "config/db.toml:6", INCIDENTE), None, "config/db.toml:6")
    dos = "La API no llega: «connect to db:5433» «connection refused»"
    igual(subagentes.por_que_no(dos, "logs/api.log:7", INCIDENTE), None, "dos citas, las dos en logs/api.log:7")


@caso("sin cita entre « » no hay nada que comprobar: se descarta")
def _(subagentes):
    descartado(subagentes, "La base escucha en el 5432.", "config/db.toml:6")


@caso("sin referencia, se descarta")
def _(subagentes):
    descartado(subagentes, CIERTO, None)


@caso("una referencia sin número de línea se descarta")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/db.toml")


@caso("la cita tiene que estar en la línea citada, no en otra del fichero")
def _(subagentes):
    descartado(subagentes, OTRO_CIERTO, "config/db.toml:6")


@caso("con dos citas cuentan las dos, no solo la primera")
def _(subagentes):
    descartado(subagentes, "«puerto = 5432» y «max_conexiones = 20»", "config/db.toml:6")


@caso("una línea que el fichero no tiene se descarta, sin romper nada")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/db.toml:999")


@caso("la línea 0 no existe: no es la última del fichero")
def _(subagentes):
    descartado(subagentes, "Guarda las copias una semana: «conservar_dias = 7»", "config/db.toml:0")


@caso("una referencia que sale del proyecto no se lee")
def _(subagentes):
    carpeta = carpeta_temporal("ejercicio-5-")
    (carpeta / "proyecto").mkdir()
    (carpeta / "proyecto" / "notas.txt").write_text("nada\n", encoding="utf-8")
    (carpeta / "fuera.txt").write_text("secreto = 1\n", encoding="utf-8")
    descartado(subagentes, "Hay un secreto: «secreto = 1»", "../fuera.txt:1", carpeta / "proyecto")


@caso("un fichero que no está en el proyecto se descarta, sin romper nada")
def _(subagentes):
    descartado(subagentes, CIERTO, "config/otra.toml:6")


def verificar(subagentes, hallazgos, referencias):
    """El `verificar` del alumno sobre esa entrega, con el `por_que_no` de referencia mientras
    corre: así un fallo de uno no se cuela en los casos del otro."""
    suyo = subagentes.por_que_no
    subagentes.por_que_no = cargar_modulo(rutas.puntos_de_control()[5] / "subagentes.py",
                                          "_subagentes_de_referencia").por_que_no
    try:
        return subagentes.verificar({"hallazgos": hallazgos, "referencias": referencias,
                                     "incertidumbres": []}, INCIDENTE)
    finally:
        subagentes.por_que_no = suyo


@caso("verificar: cada hallazgo va con la referencia de su mismo orden")
def _(subagentes):
    verificados, _ = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:6", "config/db.toml:7"])
    igual([f["referencia"] for f in verificados], ["config/db.toml:6", "config/db.toml:7"],
          "las referencias de los verificados")


@caso("verificar: con las referencias cambiadas de orden, ninguno se da por bueno")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:7", "config/db.toml:6"])
    igual({"verificados": len(verificados), "descartados": len(descartados)},
          {"verificados": 0, "descartados": 2})


# Los dos siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 5.4`): `>=` en
# vez de `>` con el número de líneas, e `i != len(referencias)` en vez de `<`.
@caso("la última línea del fichero sí existe: una cita que está en ella se da por buena")
def _(subagentes):
    igual(subagentes.por_que_no("Guarda las copias una semana: «conservar_dias = 7»", "config/db.toml:17",
                                INCIDENTE), None, "config/db.toml:17, su última línea")


@caso("verificar: con menos referencias que hallazgos, los que sobran van con None")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO, CIERTO], ["config/db.toml:6"])
    igual(([f["referencia"] for f in verificados], [f["referencia"] for f in descartados]),
          (["config/db.toml:6"], [None, None]), "(referencias de los verificados, de los descartados)")


@caso("verificar: un hallazgo sin su referencia se descarta con su motivo, sin romper nada")
def _(subagentes):
    verificados, descartados = verificar(subagentes, [CIERTO, OTRO_CIERTO], ["config/db.toml:6"])
    igual(verificados, [{"hallazgo": CIERTO, "referencia": "config/db.toml:6"}], "los verificados")
    igual([(f["hallazgo"], f["referencia"]) for f in descartados], [(OTRO_CIERTO, None)], "los descartados")
    igual(bool(str(descartados[0].get("motivo") or "").strip()), True, "el descartado lleva su motivo")


@caso("verificar: sin votar, lo que se repite no por eso es cierto")
def _(subagentes):
    falso = "La base escucha en el 5433: «puerto = 5433»"
    verificados, _ = verificar(subagentes, [falso, falso, CIERTO], ["config/db.toml:6"] * 3)
    igual([f["hallazgo"] for f in verificados], [CIERTO], "los verificados")



# --- El diferencial del 5.4: hallazgos y referencias de todas las formas ---------------------------
#
# Un proyecto pequeño (y un fichero fuera de él) y hallazgos que citan de 0 a 2 trozos, de la línea
# citada, de otra línea, de fuera o de nada; referencias a cada línea alrededor del principio y del
# final de cada fichero (0, 1, la última, una más, 999), sin línea, a un fichero que no está, a una
# carpeta o fuera del proyecto. En verificar, de 0 a 3 hallazgos con de 0 a 3 referencias.
PROYECTO = {"a.txt": "puerto = 5432\nmax_conexiones = 100\nconservar_dias = 7\n",
            "sub/b.log": "conecta a db:5433\nconnection refused\n\npuerto = 5433\nfin"}
LINEAS = {ruta: texto.split("\n") for ruta, texto in PROYECTO.items()}


def _cita(ruta, numero, de_donde):
    """Un trozo que citar: de la línea `numero` de `ruta` (o de la primera, si no la tiene), de otra
    línea del proyecto, de fuera del proyecto o de ningún sitio."""
    lineas = [l for l in LINEAS.get(ruta, LINEAS["a.txt"]) if l]
    linea = LINEAS.get(ruta, [])[numero - 1] if 1 <= numero <= len(LINEAS.get(ruta, [])) else ""
    linea = linea or lineas[0]
    return {"de la línea": linea, "de un trozo de la línea": linea.split()[-1], "de otra línea":
            next(l for l in lineas + LINEAS["sub/b.log"] if l and l != linea and l not in linea),
            "de fuera del proyecto": "secreto = 1", "de ningún sitio": "nada de esto"}[de_donde]


def _hallazgo_y_referencia(ruta, numero, forma, citas):
    referencia = {"ruta:línea": f"{ruta}:{numero}", "sin línea": ruta, "sin referencia": None,
                  "con una línea que no es un número": f"{ruta}:x", "con ceros delante": f"{ruta}:0{numero}"}[forma]
    trozos = [_cita(ruta, numero, de_donde) for de_donde in citas]
    return ("Dice " + " y ".join(f"«{t}»" for t in trozos) if trozos else "Dice que sí."), referencia


# Un hallazgo y su referencia: a cada línea alrededor del principio y del final de cada fichero (0, 1,
# la última, una más, 999), sin línea, a un fichero que no está, a una carpeta, fuera del proyecto; y
# de 0 a 2 citas de la línea, de otra, de fuera o de nada.
HALLAZGO_Y_REFERENCIA = st.builds(
    _hallazgo_y_referencia,
    st.sampled_from(["a.txt", "sub/b.log", "a.txt", "sub/b.log", "../fuera.txt", "no_esta.txt", "sub"]),
    st.sampled_from([1, 2, 3, 1, 2, 3, 4, 5, 6, 0, 999]),
    st.sampled_from(["ruta:línea"] * 5 + ["sin línea", "sin referencia", "con una línea que no es un número",
                                          "con ceros delante"]),
    st.builds(lambda cuantas, citas: citas[:cuantas], st.integers(0, 2), st.lists(st.sampled_from(
        ["de la línea", "de la línea", "de un trozo de la línea", "de otra línea", "de fuera del proyecto",
         "de ningún sitio"]), min_size=2, max_size=2)))


def proyecto():
    """La carpeta del proyecto, con fuera.txt al lado: la misma ruta en los dos mundos, hecha una vez."""
    return una_vez("el proyecto del 5.4", _proyecto)


def _proyecto():
    carpeta = carpeta_fija("proyecto-5.4")
    for ruta, texto in PROYECTO.items():
        (carpeta / "proyecto" / ruta).parent.mkdir(parents=True, exist_ok=True)
        (carpeta / "proyecto" / ruta).write_text(texto, encoding="utf-8")
    (carpeta / "fuera.txt").write_text("secreto = 1\n", encoding="utf-8")
    return carpeta / "proyecto"


def motivo(valor):
    """Lo que se compara de lo que devuelve por_que_no: None, o que es un texto con algo (no cuál)."""
    if valor is None or isinstance(valor, Lanzo):
        return valor
    return "un motivo" if isinstance(valor, str) and valor.strip() else f"{valor!r}, que no es un motivo"


ENTRADAS_54 = st.one_of(
    st.builds(lambda hr: ("por_que_no", *hr), HALLAZGO_Y_REFERENCIA),
    st.builds(lambda hr: ("por_que_no", *hr), HALLAZGO_Y_REFERENCIA),
    st.builds(lambda pares, cuantas, cambiar: ("verificar", [h for h, _ in pares],
                                               _referencias([r for _, r in pares], cuantas, cambiar)),
              st.lists(HALLAZGO_Y_REFERENCIA, max_size=3),
              st.sampled_from(["todas", "una menos", "dos menos", "ninguna", "una de más"]), st.booleans()))


def _referencias(referencias, cuantas, cambiar):
    """Las referencias de una entrega: las de cada hallazgo; o con una, dos o todas de menos (los
    hallazgos que sobran van con None), o con una de más; y quizá en otro orden."""
    quitar = {"todas": 0, "una menos": 1, "dos menos": 2, "ninguna": len(referencias)}.get(cuantas)
    referencias = referencias + ["a.txt:1"] if quitar is None else referencias[:max(len(referencias) - quitar, 0)]
    return referencias[::-1] if cambiar else referencias


def contar_54(entrada):
    que, hallazgos, referencias = entrada
    if que == "por_que_no":
        return f"por_que_no({hallazgos!r}, {referencias!r}, proyecto)"
    return f"verificar({{'hallazgos': {hallazgos!r}, 'referencias': {referencias!r}}}, proyecto)"


def _diferencial_54(subagentes, entrada):
    que, hallazgos, referencias = entrada
    if que == "por_que_no":
        return {"lo que devuelve por_que_no": motivo(intento(subagentes.por_que_no, hallazgos, referencias, proyecto()))}
    suyo = subagentes.por_que_no
    subagentes.por_que_no = una_vez("por_que_no de referencia", lambda: cargar_modulo(
        rutas.puntos_de_control()[5] / "subagentes.py", "_subagentes_del_diferencial").por_que_no)
    try:
        devuelve = subagentes.verificar({"hallazgos": hallazgos, "referencias": referencias, "incertidumbres": []},
                                        proyecto())
    finally:
        subagentes.por_que_no = suyo
    verificados, descartados = devuelve
    return {"los verificados": verificados,
            "los descartados": [(f.get("hallazgo"), f.get("referencia"), motivo(f.get("motivo"))) for f in descartados]}


caso.diferencial(entradas=ENTRADAS_54, ejemplos=250, contar=contar_54, bordes=[
    ("por_que_no", "Dice «puerto = 5432» y «nada de esto»", "a.txt:1"),
    ("por_que_no", "Dice «nada de esto» y «puerto = 5432»", "a.txt:1"),
    ("por_que_no", "Dice «fin»", "sub/b.log:5"), ("por_que_no", "Dice «fin»", "sub/b.log:6"),
    ("por_que_no", "Dice «puerto = 5432»", "a.txt:0"), ("por_que_no", "Dice «conservar_dias = 7»", "a.txt:0"),
    ("verificar", ["Dice «puerto = 5432»", "Dice «max_conexiones = 100»"], ["a.txt:2", "a.txt:1"]),
    ("verificar", ["Dice «puerto = 5432»", "Dice «puerto = 5432»"], ["a.txt:1"])], pistas={
    "lo que devuelve por_que_no": "None si la línea citada dice cada cita; un texto con el porqué si no (sin cita, "
                                  "sin referencia, sin línea, un fichero que no se puede leer, una línea que no tiene)",
    "los verificados": "cada hallazgo con la referencia de su mismo orden (None si no la hay)",
    "los descartados": "los que no valen, con su referencia y un motivo"})(_diferencial_54)
