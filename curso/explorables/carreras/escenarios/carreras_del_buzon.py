"""Para la lección 05: entregas, repeticiones, caídas y llegadas tardías al buzón, como escenarios de carreras.

Tres escenarios que comparten los actores, los pasos y las invariantes del buzón de la lección 05.

Tres escenarios para el explorador de carreras (`curso.explorables.carreras`), con el `buzon.py` del punto
de control 05 (o el del alumno). Un padre espera a dos hijos, «logs» y «config», cada uno con
su encargo:

1. `DOS_HIJOS`: llegan las dos entregas; el transporte repite la de logs y logs manda después
   una corrección (una entrega nueva, con otra identidad).
2. `CAIDA`: el proceso que admite la entrega de logs cae a mitad de `admitir()`, justo antes
   de la segunda de sus dos escrituras (añadir el mensaje, marcar la entrega); al reiniciar
   admite lo que quedó pendiente. Mientras, llega config y el transporte repite logs.
3. `TARDIAS`: entregas a tres padres ya terminados (completada, fallida, cancelada) y un padre
   que se cancela mientras su único hijo entrega.

La caída es de verdad para SQLite: la conexión del actor se cierra con su transacción abierta,
sin ROLLBACK ni COMMIT, como quedaría tras un SIGKILL (con WAL, lo no confirmado no cuenta).

Cada actor usa su propia conexión, como si fueran procesos distintos; un observador mira la
base con SQL directo tras cada paso. Las invariantes se comprueban en TODOS los intercalados,
y cada una tiene al menos una variante ingenua que la rompe (marcadas «INGENUA» abajo):

- `marca_primero`: marca la entrega y después, en otra transacción, añade el mensaje;
- `cuenta_mensajes`: activa al padre contando mensajes en vez de mirar hijo por hijo;
- `sin_unique`: la tabla `mensajes` sin UNIQUE en `entrega`, y el mensaje y la marca en dos
  transacciones;
- `dos_transacciones`: lo mismo, con el UNIQUE: ya no duplica, pero la entrega se atasca;
- `ignora_terminados`: no mira el estado del padre.
"""
import json
import sqlite3
from itertools import pairwise

from curso.explorables.carreras.explorador import Escenario, Invariante, Paso, Variante
from curso.rutas import PUNTOS

MODULO = PUNTOS / "05_el_buzon" / "buzon.py"
PADRE = "padre"
TERMINALES = ("completada", "fallida", "cancelada")


def _encargo(objetivo, recursos, acciones, tope, plazo):
    return {"objetivo": objetivo, "recursos": recursos, "acciones": acciones,
            "entregable": {"hallazgos": [], "referencias": [], "incertidumbres": []},
            "tope_de_pasos": tope, "plazo": plazo}


ENCARGOS = {
    "logs": _encargo("Encontrar en los registros cuándo deja la API de poder hablar con db.",
                     ["logs/api@v9", "logs/db@v4"], ["leer", "buscar"], 8, 120),
    "config": _encargo("Averiguar en qué puerto escucha db según la configuración.",
                       ["config/"], ["leer"], 6, "2025-03-01T12:00:00+01:00"),
}

# Cada entrega: (padre, hijo, carga). La identidad es de la entrega, no de cada intento.
ENTREGAS = {
    "e-logs-1": (PADRE, "logs", {
        "hallazgos": ["La API intenta conectar con db en el puerto 5433."],
        "referencias": ["logs/api@v9:17"],
        "incertidumbres": ["No sé si db se reinició antes."]}),
    "e-logs-2": (PADRE, "logs", {
        "hallazgos": ["Corrige e-logs-1: el primer fallo es a las 10:02, no a las 10:04."],
        "referencias": ["logs/api@v9:12"],
        "incertidumbres": []}),
    "e-config": (PADRE, "config", {
        "hallazgos": ["db escucha en el puerto 5432."],
        "referencias": ["config/db.toml:3"],
        "incertidumbres": []}),
    "e-hijo": (PADRE, "hijo", {"hallazgos": ["Resultado a tiempo... o no."]}),
    **{f"e-{final}": (final, "tardio", {"hallazgos": [f"Resultado para un padre {final}."]})
       for final in TERMINALES},
}


# --- Preparar y observar --------------------------------------------------------------------

def preparador(padres):
    """`preparar` para unos padres {padre: (hijos, estado final o None)}: se ejecuta una vez."""
    def preparar(mundo):
        m = mundo.modulo
        bd = mundo.conexiones["preparacion"] = mundo.funcion("abrir_buzon")(mundo.ruta)
        for padre, (hijos, final) in padres.items():
            m.crear_padre(bd, padre, hijos)
            if final is not None:
                m.terminar(bd, padre, final)
        mundo.datos["esperados"] = {padre: tuple(hijos) for padre, (hijos, _) in padres.items()}
        mundo.datos["inicial"] = _foto(bd)
    return preparar


def conector(actores):
    """`conectar`: una conexión por actor, como si fueran procesos distintos, y otra para observar."""
    def conectar(mundo):
        for actor in actores:
            mundo.conexiones[actor] = mundo.funcion("abrir_buzon")(mundo.ruta)
        mundo.conexiones["observador"] = sqlite3.connect(mundo.ruta, isolation_level=None)
    return conectar


def observar(mundo):
    return _foto(mundo.conexiones["observador"])


def _foto(bd):
    """La base de datos en un instante: padres, buzón y trayectorias, con SQL directo."""
    bd.execute("BEGIN")
    try:
        padres = {id_: (estado, version) for id_, estado, version in
                  bd.execute("SELECT id, estado, version FROM ejecuciones ORDER BY id")}
        buzon = {entrega: (padre, hijo, disposicion, seq, carga) for entrega, padre, hijo, carga, disposicion, seq in
                 bd.execute("SELECT entrega, padre, hijo, carga, disposicion, seq_admitida FROM buzon ORDER BY entrega")}
        mensajes = tuple(bd.execute("SELECT padre, seq, entrega FROM mensajes ORDER BY padre, seq"))
    finally:
        bd.execute("COMMIT")
    return {"padres": padres, "buzon": buzon, "mensajes": mensajes}


def resultado(mundo):
    """Cómo acaba el padre principal (estado, versión, trayectoria), cuántas entregas quedan
    tardías y cuántos padres terminados se reabrieron."""
    foto = observar(mundo)
    estado, version = foto["padres"][PADRE]
    trayectoria = ", ".join(entrega for padre, _, entrega in foto["mensajes"] if padre == PADRE)
    texto = f"padre {estado} v{version}, trayectoria [{trayectoria}]"
    tardias = sum(d[2] == "tardia" for d in foto["buzon"].values())
    reabiertos = sum(estado in TERMINALES and foto["padres"][padre][0] not in TERMINALES
                     for padre, (estado, _) in mundo.datos["inicial"]["padres"].items())
    return (texto + (f", {tardias} tardías" if tardias else "")
            + (f", {reabiertos} padres terminados reabiertos" if reabiertos else ""))


# --- Los pasos ------------------------------------------------------------------------------

def recibir_entrega(mundo, actor, entrega):
    """`recibir` de la entrega `entrega` por `actor` (la apunta entre sus enviadas); lo usan los
    pasos de aquí y los de carreras_en_postgres.py."""
    padre, hijo, carga = ENTREGAS[entrega]
    mundo.de(actor).setdefault("enviadas", []).append(entrega)
    return mundo.funcion("recibir")(mundo.conexiones[actor], padre, hijo, entrega, carga)


def recibe(actor, entrega):
    return Paso(actor, f"recibe {entrega}", lambda mundo: recibir_entrega(mundo, actor, entrega))


def admite(actor, entrega):
    return Paso(actor, f"admite {entrega}",
                lambda mundo: mundo.funcion("admitir")(mundo.conexiones[actor], entrega))


def entrega(actor, entrega_):
    """Recibir y admitir seguidos, como hace un receptor que admite en cuanto guarda."""
    def hacer(mundo):
        recibida = recibir_entrega(mundo, actor, entrega_)
        return f"{recibida}, {mundo.funcion('admitir')(mundo.conexiones[actor], entrega_)}"
    return Paso(actor, f"entrega {entrega_}", hacer)


class Caida(BaseException):
    """El proceso muere aquí. BaseException: ningún `except Exception` del código la ataja."""


ESCRITURAS = {"mensaje": "añadir el mensaje", "marca": "marcar la entrega"}


def _escritura(sql):
    """¿Es `sql` una de las dos escrituras de admitir? «mensaje», «marca» o None."""
    sql = " ".join(sql.split()).lower()
    if sql.startswith("insert into mensajes"):
        return "mensaje"
    if sql.startswith("update buzon") and "seq_admitida" in sql:
        return "marca"
    return None


class ConexionQueCae:
    """La conexión de un proceso que muere justo antes de la segunda de sus dos escrituras
    (añadir el mensaje y marcar la entrega, en el orden en que las haga el código). Desde ese
    momento no ejecuta nada más: tampoco el ROLLBACK del `except` de `transaccion()`."""

    def __init__(self, bd):
        self.bd, self.hechas, self.muerta = bd, [], None

    def __getattr__(self, nombre):
        return getattr(self.bd, nombre)

    def execute(self, sql, *argumentos):
        escritura = _escritura(sql)
        if self.muerta is None and escritura and self.hechas and escritura not in self.hechas:
            self.muerta = f"cae tras {ESCRITURAS[self.hechas[0]]}, antes de {ESCRITURAS[escritura]}"
        if self.muerta:
            raise Caida(self.muerta)
        if escritura:
            self.hechas.append(escritura)
        return self.bd.execute(sql, *argumentos)


def admite_y_cae(actor, entrega_):
    def hacer(mundo):
        conexion = ConexionQueCae(mundo.conexiones[actor])
        try:
            respuesta = mundo.funcion("admitir")(conexion, entrega_)
        except Caida as caida:
            # Cerrar sin COMMIT ni ROLLBACK: SQLite descarta la transacción abierta, como al
            # reabrir tras un SIGKILL.
            mundo.conexiones.pop(actor).close()
            return str(caida)
        return f"{respuesta}: no llega a caer"
    return Paso(actor, f"admite {entrega_} y cae", hacer)


def reinicia(actor):
    def hacer(mundo):
        anterior = mundo.conexiones.pop(actor, None)
        if anterior is not None:
            anterior.close()
        mundo.conexiones[actor] = mundo.funcion("abrir_buzon")(mundo.ruta)
        bd = mundo.conexiones[actor]  # la que se guarda: el explorador puede envolverla para anotar
        hechas = [f"{pendiente} {mundo.funcion('admitir')(bd, pendiente)}"
                  for pendiente in mundo.modulo.pendientes(bd)]
        return "; ".join(hechas) if hechas else "nada pendiente"
    return Paso(actor, "reinicia y admite lo pendiente", hacer)


def cancela(actor, padre):
    def hacer(mundo):
        mundo.modulo.terminar(mundo.conexiones[actor], padre, "cancelada")
        return "cancelado"
    return Paso(actor, f"cancela {padre}", hacer)


# --- Las invariantes ------------------------------------------------------------------------

def _fotos(mundo, eventos):
    return [mundo.datos["inicial"]] + [e.observacion for e in eventos]


def _enviadas(mundo):
    return {e for local in mundo.local.values() for e in local.get("enviadas", ())}


def ninguna_entrega_se_pierde(mundo, eventos):
    """Al final, cada entrega enviada está en el buzón, intacta y decidida; si está admitida,
    su mensaje está en la trayectoria con el número que dice su marca."""
    final = eventos[-1].observacion
    mensajes = {(padre, seq): entrega for padre, seq, entrega in final["mensajes"]}
    for entrega_ in _enviadas(mundo):
        if entrega_ not in final["buzon"]:
            return False
        padre, hijo, disposicion, seq, carga = final["buzon"][entrega_]
        if (padre, hijo) != ENTREGAS[entrega_][:2] or json.loads(carga) != ENTREGAS[entrega_][2]:
            return False
        if disposicion == "recibida":
            return False
        if disposicion == "admitida" and mensajes.get((padre, seq)) != entrega_:
            return False
    return True


def ninguna_entrega_se_duplica(mundo, eventos):
    """En ningún momento aparece una entrega dos veces en una trayectoria."""
    for foto in _fotos(mundo, eventos):
        entregas = [entrega_ for _, _, entrega_ in foto["mensajes"]]
        if len(entregas) != len(set(entregas)):
            return False
    return True


def _hijos_con_mensaje(foto, padre):
    return {foto["buzon"][entrega_][1] for p, _, entrega_ in foto["mensajes"] if p == padre}


def el_padre_se_activa_una_vez_tras_todos(mundo, eventos):
    """Cada padre que espera pasa a 'en_cola' una sola vez, y solo cuando cada hijo esperado
    tiene su mensaje en la trayectoria; si nadie lo termina, acaba en 'en_cola', versión 1."""
    fotos = _fotos(mundo, eventos)
    for padre, hijos in mundo.datos["esperados"].items():
        if fotos[0]["padres"][padre][0] in TERMINALES:
            continue
        activaciones = 0
        for antes, despues in pairwise(fotos):
            estado, version = despues["padres"][padre]
            if estado == "en_cola" and version > antes["padres"][padre][1]:
                activaciones += 1
            if estado == "en_cola" and not set(hijos) <= _hijos_con_mensaje(despues, padre):
                return False
        if activaciones > 1:
            return False
        if all(foto["padres"][padre][0] not in TERMINALES for foto in fotos):
            if fotos[-1]["padres"][padre] != ("en_cola", 1):
                return False
    return True


def un_padre_terminado_sigue_terminado(mundo, eventos):
    """Desde que un padre está terminado, ni su estado ni su versión cambian."""
    fotos = _fotos(mundo, eventos)
    for antes, despues in pairwise(fotos):
        for padre, (estado, version) in antes["padres"].items():
            if estado in TERMINALES and despues["padres"][padre] != (estado, version):
                return False
    return True


def lo_tardio_se_guarda_aparte(mundo, eventos):
    """A un padre terminado no se le añade nada a la trayectoria; lo que llega para él queda en
    el buzón como 'tardia'."""
    fotos = _fotos(mundo, eventos)
    for antes, despues in pairwise(fotos):
        for padre, (estado, _) in antes["padres"].items():
            if estado in TERMINALES:
                if [m for m in antes["mensajes"] if m[0] == padre] != [m for m in despues["mensajes"] if m[0] == padre]:
                    return False
    final = fotos[-1]
    for entrega_, (padre, _, disposicion, _, _) in final["buzon"].items():
        if fotos[0]["padres"][padre][0] in TERMINALES and disposicion != "tardia":
            return False
        if disposicion == "tardia" and any(m[2] == entrega_ for m in final["mensajes"]):
            return False
    return True


SE_PIERDE = Invariante("ninguna entrega se pierde", "pierden una entrega", ninguna_entrega_se_pierde)
SE_DUPLICA = Invariante("ninguna entrega se duplica", "duplican una entrega", ninguna_entrega_se_duplica)
UNA_ACTIVACION = Invariante("el padre se activa una vez, tras todos sus hijos",
                            "activan al padre antes de tiempo o más de una vez",
                            el_padre_se_activa_una_vez_tras_todos)
SIGUE_TERMINADO = Invariante("un padre terminado sigue terminado", "reabren un padre terminado",
                             un_padre_terminado_sigue_terminado)
TARDIO_APARTE = Invariante("lo tardío se guarda aparte", "meten una entrega tardía en la trayectoria",
                           lo_tardio_se_guarda_aparte)


# --- Las variantes ingenuas (cada una rompe al menos una invariante) ----------------------------

def _leer_entrega(bd, entrega_):
    fila = bd.execute(
        "SELECT b.padre, b.carga, b.disposicion, e.estado FROM buzon b "
        "JOIN ejecuciones e ON e.id = b.padre WHERE b.entrega=?", (entrega_,)).fetchone()
    if fila is None:
        raise ValueError(f"No hay ninguna entrega {entrega_!r} en el buzón.")
    return fila


def _siguiente(bd, padre):
    return bd.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)).fetchone()[0]


def ya_decidida(bd, entrega_, mirar_estado=True):
    """Lo que toda admisión mira primero (también las variantes de carreras_en_postgres.py). Devuelve (disposición, padre, carga): la disposición es
    None si hay que admitirla; si no, la que ya tenía, o «tardia» (que deja marcada) cuando su
    padre ya terminó y `mirar_estado`."""
    padre, cuerpo, disposicion, estado = _leer_entrega(bd, entrega_)
    if disposicion != "recibida":
        return disposicion, padre, cuerpo
    if mirar_estado and estado in TERMINALES:
        bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=?", (entrega_,))
        return "tardia", padre, cuerpo
    return None, padre, cuerpo


def _anadir_mensaje(bd, padre, seq, entrega_, cuerpo):
    bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
               (padre, seq, entrega_, cuerpo))


def _marcar_admitida(bd, entrega_, seq):
    bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?", (seq, entrega_))


def anadir_y_marcar(bd, padre, entrega_, cuerpo):
    """El mensaje y la marca, en la transacción en curso (lo que buzon.py hace bien; lo usan
    también las variantes de carreras_en_postgres.py)."""
    seq = _siguiente(bd, padre)
    _anadir_mensaje(bd, padre, seq, entrega_, cuerpo)
    _marcar_admitida(bd, entrega_, seq)


def admitir_marcando_primero(modulo, bd, entrega_):
    """INGENUA: marca la entrega como admitida (y activa al padre) en una transacción, y añade
    el mensaje en otra. Si el proceso cae entre las dos, la entrega consta como admitida pero
    su mensaje no está: se ha perdido, y nadie la volverá a admitir."""
    with modulo.transaccion(bd):
        decidida, padre, cuerpo = ya_decidida(bd, entrega_)
        if decidida:
            return decidida
        seq = _siguiente(bd, padre)
        _marcar_admitida(bd, entrega_, seq)
        modulo.activar_si_estan_todos(bd, padre)
    with modulo.transaccion(bd):
        _anadir_mensaje(bd, padre, seq, entrega_, cuerpo)
    return "admitida"


def admitir_contando_mensajes(modulo, bd, entrega_):
    """INGENUA: todo en una transacción, pero activa al padre cuando tiene tantos mensajes como
    hijos espera. Un resultado y su corrección son dos mensajes de un mismo hijo."""
    with modulo.transaccion(bd):
        decidida, padre, cuerpo = ya_decidida(bd, entrega_)
        if decidida:
            return decidida
        anadir_y_marcar(bd, padre, entrega_, cuerpo)
        bd.execute(
            "UPDATE ejecuciones SET estado='en_cola', version=version+1 WHERE id=? AND estado='esperando' "
            "AND (SELECT COUNT(*) FROM mensajes WHERE padre=?) >= "
            "    (SELECT COUNT(*) FROM hijos_esperados WHERE padre=?)", (padre, padre, padre))
    return "admitida"


def admitir_en_dos_transacciones(modulo, bd, entrega_):
    """INGENUA: añade el mensaje en una transacción y marca la entrega (y activa al padre) en
    otra. Si el proceso cae entre las dos, la entrega sigue 'recibida' con su mensaje ya dentro:
    la siguiente admisión lo añade otra vez... salvo que el UNIQUE de `mensajes` lo impida, y
    entonces falla y la entrega se queda atascada."""
    with modulo.transaccion(bd):
        decidida, padre, cuerpo = ya_decidida(bd, entrega_)
        if decidida:
            return decidida
        seq = _siguiente(bd, padre)
        _anadir_mensaje(bd, padre, seq, entrega_, cuerpo)
    with modulo.transaccion(bd):
        _marcar_admitida(bd, entrega_, seq)
        modulo.activar_si_estan_todos(bd, padre)
    return "admitida"


# La tabla `mensajes` de buzon.py, sin UNIQUE en `entrega`.
MENSAJES_SIN_UNIQUE = """CREATE TABLE IF NOT EXISTS mensajes (
    padre TEXT NOT NULL REFERENCES ejecuciones(id),
    seq INTEGER NOT NULL CHECK (seq >= 1),
    entrega TEXT NOT NULL REFERENCES buzon(entrega),
    carga TEXT NOT NULL,
    PRIMARY KEY (padre, seq)
)"""


def abrir_buzon_sin_unique(modulo, ruta):
    """INGENUA: crea `mensajes` sin UNIQUE antes que nada; el resto del esquema, el de buzon.py
    (su CREATE TABLE IF NOT EXISTS ya no toca la tabla que existe). SQLite deja crear una tabla
    cuyas claves foráneas apuntan a tablas que aún no existen: se miran al escribir en ella."""
    bd = sqlite3.connect(ruta, isolation_level=None)
    try:
        bd.execute(MENSAJES_SIN_UNIQUE)
    finally:
        bd.close()
    return modulo.abrir_buzon(ruta)


def admitir_sin_mirar_el_estado(modulo, bd, entrega_):
    """INGENUA: no mira si el padre terminó; añade, marca y, si han llegado todos, pone al
    padre en cola, esté como esté. Reabre padres terminados y los activa más de una vez."""
    with modulo.transaccion(bd):
        decidida, padre, cuerpo = ya_decidida(bd, entrega_, mirar_estado=False)
        if decidida:
            return decidida
        anadir_y_marcar(bd, padre, entrega_, cuerpo)
        bd.execute(
            "UPDATE ejecuciones SET estado='en_cola', version=version+1 WHERE id=? AND NOT EXISTS ("
            "  SELECT 1 FROM hijos_esperados h WHERE h.padre=ejecuciones.id AND NOT EXISTS ("
            "    SELECT 1 FROM buzon b WHERE b.padre=h.padre AND b.hijo=h.hijo AND b.disposicion='admitida'))",
            (padre,))
    return "admitida"


VARIANTES = {
    "correcta": Variante("correcta", "buzon.py del punto de control 05: admitir en una sola transacción."),
    "marca_primero": Variante(
        "marca_primero", "Ingenua: marca la entrega y después, en otra transacción, añade el mensaje.",
        {"admitir": admitir_marcando_primero}),
    "cuenta_mensajes": Variante(
        "cuenta_mensajes", "Ingenua: activa al padre contando mensajes, no mirando hijo por hijo.",
        {"admitir": admitir_contando_mensajes}),
    "sin_unique": Variante(
        "sin_unique", "Ingenua: mensajes sin UNIQUE en entrega; el mensaje y la marca, en dos transacciones.",
        {"abrir_buzon": abrir_buzon_sin_unique, "admitir": admitir_en_dos_transacciones}),
    "dos_transacciones": Variante(
        "dos_transacciones", "Ingenua: el mensaje y la marca en dos transacciones (con el UNIQUE).",
        {"admitir": admitir_en_dos_transacciones}),
    "ignora_terminados": Variante(
        "ignora_terminados", "Ingenua: admite sin mirar si el padre ya terminó.",
        {"admitir": admitir_sin_mirar_el_estado}),
}


# --- Los tres escenarios --------------------------------------------------------------------

COMUNES = (SE_PIERDE, SE_DUPLICA, UNA_ACTIVACION)  # lo que el buzón promete en todos


def escenario_del_buzon(nombre, descripcion, actores, padres, invariantes=COMUNES):
    """Un escenario sobre el buzón.py del punto de control 05, con las variantes de arriba.

    `padres` es {padre: (sus hijos esperados, su estado final o None)}, lo que `preparador` deja en
    la base antes de empezar; cada actor tiene su propia conexión."""
    return Escenario(nombre=nombre, descripcion=descripcion, modulo=MODULO, actores=actores,
                     preparar=preparador(padres), conectar=conector(tuple(actores)),
                     observar=observar, resultado=resultado, invariantes=invariantes,
                     variantes=VARIANTES)


DOS_HIJOS = escenario_del_buzon(
    "dos hijos, una repetición y una corrección",
    "El padre espera a logs y config. Llegan las dos entregas; el transporte repite la de logs "
    "y logs manda después una corrección, una entrega nueva.",
    {
        "logs": [entrega("logs", "e-logs-1"), entrega("logs", "e-logs-2")],
        "config": [recibe("config", "e-config"), admite("config", "e-config")],
        "transporte": [entrega("transporte", "e-logs-1")],
    },
    {PADRE: (ENCARGOS, None)},
)

CAIDA = escenario_del_buzon(
    "una caída a mitad de admitir",
    "El padre espera a logs y config. El proceso que admite la entrega de logs cae entre sus "
    "dos escrituras y, al reiniciar, admite lo pendiente; mientras, llega config y el "
    "transporte repite la entrega de logs.",
    {
        "logs": [recibe("logs", "e-logs-1"), admite_y_cae("logs", "e-logs-1"), reinicia("logs")],
        "config": [entrega("config", "e-config")],
        "transporte": [entrega("transporte", "e-logs-1")],
    },
    {PADRE: (ENCARGOS, None)},
)

TARDIAS = escenario_del_buzon(
    "entregas tardías y una cancelación",
    "Tres padres ya terminados (completada, fallida, cancelada) reciben una entrega cada uno; "
    "otro padre, que espera a un solo hijo, se cancela mientras ese hijo entrega.",
    {
        "tardias": [entrega("tardias", f"e-{final}") for final in TERMINALES],
        "hijo": [recibe("hijo", "e-hijo"), admite("hijo", "e-hijo")],
        "cancelador": [cancela("cancelador", PADRE)],
    },
    {PADRE: (["hijo"], None), **{final: (["tardio"], final) for final in TERMINALES}},
    invariantes=COMUNES + (SIGUE_TERMINADO, TARDIO_APARTE),
)

ESCENARIOS = {"dos_hijos": DOS_HIJOS, "caida": CAIDA, "tardias": TARDIAS}
ESCENARIO = CAIDA  # el central de la lección: lo que el buzón promete ante una caída
