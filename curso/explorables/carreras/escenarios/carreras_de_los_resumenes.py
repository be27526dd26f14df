"""Para la lección 04: dos resumidores y un mensaje que llega mientras preparan, como escenario de carreras.

Al empezar, el historial tiene cuatro mensajes y el resumen activo llega hasta el 2. Los dos
resumidores parten de ese activo: A quiere cubrir hasta el 4; B, solo hasta el 3. Entre tanto,
un tercer actor, el bucle del agente, anota el mensaje 5, que acaba de llegar. Cada uno tiene sus
pasos, en este orden:

    A:      lee la base → prepara hasta 4 → instala
    B:      lee la base → prepara hasta 3 → instala
    bucle:  anota el mensaje 5

La carrera de verdad ocurre cuando los dos leen la misma base: solo uno puede instalar. En
otros intercalados no hay carrera: si B lee cuando A ya instaló hasta 4, no le queda nada que
resumir; si A lee cuando B ya instaló hasta 3, amplía el resumen de B hasta 4.

Cada actor usa su propia conexión, como si fueran procesos distintos; un cuarto «observador»
mira la base de datos con SQL directo (sin pasar por el código que se prueba) tras cada paso.
Las invariantes se comprueban en TODOS los intercalados, y cada una tiene una variante ingenua
que la rompe: así se ve que la comprobación puede fallar.
"""
import functools
import json
import sqlite3
from itertools import pairwise
from pathlib import Path

from curso.explorables.carreras.explorador import Escenario, Invariante, Paso, Variante
from curso.rutas import cargar_modulo
from curso.rutas import PUNTOS

MODULO = PUNTOS / "04_resumenes_en_sqlite" / "resumenes.py"
EJECUCION = "r-1"
ORIGINALES = (
    (1, "Regla del usuario: no se cambia ningún fichero."),
    (2, "El agente lee config/db.toml."),
    (3, "Observación: puerto = 5432."),
    (4, "El agente busca 5433 en logs/."),
)
LLEGADA = (5, "El usuario pide revisar TLS.")
COBERTURA_INICIAL = 2
RESUMEN_INICIAL = [{"texto": "No se cambia ningún fichero.", "fuente": 1}]
CORTES = {"A": 4, "B": 3}
BUCLE = "bucle"  # el tercer actor: el bucle del agente, que anota en el historial lo que llega
ACTORES = (*CORTES, BUCLE)


# --- Preparar y observar --------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _historial_junto_a(ruta):
    ruta = Path(ruta)
    vecino = ruta.with_name("historial_pg.py" if ruta.stem.endswith("_pg") else "historial.py")
    return cargar_modulo(vecino, f"_carreras_{vecino.stem}")


def historial_de(modulo):
    """El módulo que abre la base, crea la ejecución y anota (`abrir`, `crear_ejecucion`, `anotar`)
    para el `modulo` que se prueba: el historial.py de su misma carpeta (historial_pg.py para
    resumenes_pg.py, en la lección 07).
    """
    return _historial_junto_a(modulo.__file__)


def abrir_de(modulo):
    """La función que abre la conexión de un actor, para el `modulo` que se prueba."""
    return historial_de(modulo).abrir


def historial(mundo):
    return historial_de(mundo.modulo)


def preparar(mundo):
    """El estado inicial: historial 1-4 y un resumen activo hasta 2 (se prepara una vez)."""
    h = historial(mundo)
    bd = mundo.conexiones["preparacion"] = h.abrir(mundo.ruta)
    h.crear_ejecucion(bd, EJECUCION)
    for _, texto in ORIGINALES:
        h.anotar(bd, EJECUCION, texto)
    mundo.datos["inicial"] = mundo.modulo.instalar(bd, EJECUCION, None, COBERTURA_INICIAL, RESUMEN_INICIAL)


def conectar(mundo):
    """Una conexión por actor, como si fueran procesos distintos, y otra para observar."""
    for actor in ACTORES:
        mundo.conexiones[actor] = historial(mundo).abrir(mundo.ruta)
    mundo.conexiones["observador"] = sqlite3.connect(mundo.ruta, isolation_level=None)


def observar(mundo):
    """Una foto de la base de datos: quién está activo, qué cubre, la cola y el historial."""
    bd = mundo.conexiones["observador"]
    bd.execute("BEGIN")
    try:
        id_activo, cobertura = bd.execute(
            "SELECT e.resumen_activo, COALESCE(r.cobertura, 0) FROM ejecuciones e "
            "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=?", (EJECUCION,)
        ).fetchone()
        historial = tuple(bd.execute(
            "SELECT seq, texto FROM historial WHERE ejecucion=? ORDER BY seq", (EJECUCION,)
        ).fetchall())
        (versiones,) = bd.execute("SELECT COUNT(*) FROM resumenes").fetchone()
    finally:
        bd.execute("COMMIT")
    return {
        "activo": _autor(mundo, id_activo),
        "cobertura": cobertura,
        "cola": tuple(seq for seq, _ in historial if seq > cobertura),
        "historial": historial,
        "versiones": versiones,
    }


def resultado(mundo):
    foto = observar(mundo)
    return f"activo el resumen de {foto['activo']}, cobertura {foto['cobertura']}, cola {list(foto['cola'])}"


def _autor(mundo, id_resumen):
    if id_resumen == mundo.datos.get("inicial"):
        return "inicial"
    for actor in CORTES:
        if mundo.de(actor).get("instalado") == id_resumen:
            return actor
    return f"id {id_resumen}"


# --- Los pasos ------------------------------------------------------------------------------

def lee_la_base(actor):
    def hacer(mundo):
        leido = mundo.modulo.contexto(mundo.conexiones[actor], EJECUCION)
        mundo.de(actor)["leido"] = leido
        return f"base {leido['activo']}, cubre hasta {leido['cobertura']}"
    return Paso(actor, "lee la base", hacer)


def prepara(actor, corte):
    def hacer(mundo):
        local = mundo.de(actor)
        leido = local["leido"]
        if leido["cobertura"] >= corte:
            local["candidato"] = None  # lo que iba a resumir ya está resumido
            return f"nada que hacer: la base ya cubre hasta {leido['cobertura']}"
        # Aquí un modelo redactaría el resumen; lo sustituye una regla fija: conservar lo que
        # decía la base y añadir una afirmación por cada mensaje nuevo hasta el corte.
        nuevas = [{"texto": f"{texto} (resume {actor})", "fuente": seq}
                  for seq, texto in leido["cola"] if seq <= corte]
        local["candidato"] = list(leido["resumen"] or []) + nuevas
        return f"candidato de {len(local['candidato'])} afirmaciones"
    return Paso(actor, f"prepara hasta {corte}", hacer)


def instala(actor, corte):
    def hacer(mundo):
        local = mundo.de(actor)
        if local["candidato"] is None:
            return "no instala"
        base = local["intento"] = local["leido"]["activo"]
        instalar = mundo.funcion("instalar")
        try:
            local["instalado"] = instalar(mundo.conexiones[actor], EJECUCION, base, corte,
                                          local["candidato"])
        except mundo.modulo.BaseObsoleta:
            return "rechazado: base obsoleta"
        return f"instala el resumen {local['instalado']}"
    return Paso(actor, "instala", hacer)


def anota_el_mensaje():
    """El paso del bucle: anota el mensaje que acaba de llegar (el 5) al final del historial."""
    return Paso(BUCLE, f"anota el mensaje {LLEGADA[0]}", anotar_lo_que_llega)


def anotar_lo_que_llega(mundo):
    seq = historial(mundo).anotar(mundo.conexiones[BUCLE], EJECUCION, LLEGADA[1])
    return f"anotado como {seq}"


# --- Las invariantes ------------------------------------------------------------------------

def de_cada_base_se_instala_uno(mundo, eventos):
    """Si A y B parten de la misma base, gana uno y el otro se rechaza; no queda nada suelto."""
    intentos = {}
    for actor in CORTES:
        local = mundo.de(actor)
        if "intento" in local:
            intentos.setdefault(local["intento"], []).append(local.get("instalado"))
    instalados = [id_ for ids in intentos.values() for id_ in ids if id_ is not None]
    final = eventos[-1].observacion
    return (all(sum(id_ is not None for id_ in ids) == 1 for ids in intentos.values())
            and final["versiones"] == 1 + len(instalados)
            and final["activo"] == _autor(mundo, max(instalados, default=mundo.datos["inicial"])))


def la_cobertura_nunca_retrocede(mundo, eventos):
    coberturas = [COBERTURA_INICIAL] + [e.observacion["cobertura"] for e in eventos]
    return all(antes <= despues for antes, despues in pairwise(coberturas))


def el_mensaje_5_siempre_en_la_cola(mundo, eventos):
    for evento in eventos:
        foto = evento.observacion
        for seq, texto in foto["historial"]:
            if texto == LLEGADA[1] and seq not in foto["cola"]:
                return False
    return any(texto == LLEGADA[1] for _, texto in eventos[-1].observacion["historial"])


def el_historial_sigue_entero(mundo, eventos):
    completo = ORIGINALES + (LLEGADA,)
    return (all(e.observacion["historial"] in (ORIGINALES, completo) for e in eventos)
            and eventos[-1].observacion["historial"] == completo)


# --- Las variantes ingenuas (cada una rompe al menos una invariante) ----------------------------

def instalar_sin_condicion(modulo, bd, ejecucion, base, corte, candidato):
    """INGENUA: mueve el puntero con un UPDATE simple, sin comprobar que siga en `base`."""
    with modulo.transaccion(bd):
        nuevo = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, ?, ?, ?)",
            (ejecucion, corte, json.dumps(candidato, ensure_ascii=False), base),
        ).lastrowid
        bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", (nuevo, ejecucion))
    return nuevo


def instalar_hasta_lo_ultimo(modulo, bd, ejecucion, base, corte, candidato):
    """INGENUA: declara cubierto todo lo que hay al instalar, no el corte con que se preparó."""
    (ultimo,) = bd.execute("SELECT MAX(seq) FROM historial WHERE ejecucion=?", (ejecucion,)).fetchone()
    return modulo.instalar(bd, ejecucion, base, ultimo, candidato)


def instalar_y_borrar_lo_resumido(modulo, bd, ejecucion, base, corte, candidato):
    """INGENUA: instala bien, pero borra del historial lo que el resumen ya cubre, «para ahorrar»."""
    nuevo = modulo.instalar(bd, ejecucion, base, corte, candidato)
    with modulo.transaccion(bd):
        bd.execute("DELETE FROM historial WHERE ejecucion=? AND seq<=?", (ejecucion, corte))
    return nuevo


ESCENARIO = Escenario(
    nombre="dos resúmenes y un mensaje",
    descripcion=(
        "El resumen activo cubre hasta 2. A prepara uno hasta 4 y B otro hasta 3; "
        "el mensaje 5 llega mientras preparan."
    ),
    modulo=MODULO,
    actores={
        "A": [lee_la_base("A"), prepara("A", CORTES["A"]), instala("A", CORTES["A"])],
        "B": [lee_la_base("B"), prepara("B", CORTES["B"]), instala("B", CORTES["B"])],
        BUCLE: [anota_el_mensaje()],
    },
    preparar=preparar,
    conectar=conectar,
    observar=observar,
    resultado=resultado,
    invariantes=(
        Invariante("de cada base se instala exactamente uno", "instalan dos resúmenes, o ninguno, sobre la misma base",
                   de_cada_base_se_instala_uno),
        Invariante("la cobertura nunca retrocede", "pierden cobertura",
                   la_cobertura_nunca_retrocede),
        Invariante("el mensaje 5 siempre está en la cola", "pierden el mensaje 5",
                   el_mensaje_5_siempre_en_la_cola),
        Invariante("el historial sigue entero", "pierden historial",
                   el_historial_sigue_entero),
    ),
    variantes={
        "correcta": Variante("correcta", "instalar() del punto de control 04: compare-and-swap sobre la base."),
        "ingenua": Variante(
            "ingenua", "Ingenua: mueve el puntero sin comprobar que siga en la base.",
            {"instalar": instalar_sin_condicion}),
        "cobertura_al_instalar": Variante(
            "cobertura_al_instalar", "Ingenua: la cobertura es todo lo que hay al instalar, no el corte.",
            {"instalar": instalar_hasta_lo_ultimo}),
        "borra_lo_resumido": Variante(
            "borra_lo_resumido", "Ingenua: borra del historial lo que ya cubre el resumen.",
            {"instalar": instalar_y_borrar_lo_resumido}),
    },
)
