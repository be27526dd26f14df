"""Para los ejercicios de la lección 06: una edición como mucho una vez, dónde está cada agente al reanudar, y los reintentos.

Los casos de los ejercicios de la lección 06, cada uno con la frase de lo que la lección pidió y
junto a las pistas de su ejercicio.

Lección 06: una edición como mucho una vez (6.1), dónde está cada agente al reanudar (6.2) y
los reintentos (6.3).

Cada caso prepara su estado con los módulos del punto de control 06 (registro, durable...) y una
base SQLite de verdad. Las caídas se reproducen dejando la base y la copia de trabajo como las
deja un proceso que muere en ese punto: una intención sin resultado, con el fichero editado o
sin editar.
"""
import functools
import http.client
import json
import random
import sqlite3
from types import SimpleNamespace

from hypothesis import strategies as st

from curso import rutas
from curso.comprobaciones.diferencial import (Lanzo, Maquina, al_empezar, cerrar_y_borrar, copia_de_plantilla,
                                              intento, regla, sin_esperar_al_disco)
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual
from curso.rutas import cargar_modulo

INICIO = [("sistema", "Eres un hijo."), ("usuario", "Tu encargo: mira notas.txt.")]
TEXTO = "uno\ndos\n"


@functools.lru_cache(maxsize=None)
def referencia(nombre):
    """El módulo `nombre` del punto de control 06, cargado aparte (con sus vecinos) una sola vez:
    no guardan nada entre llamadas, y cargarlos en cada caso era lo que más tardaba."""
    return cargar_modulo(rutas.puntos_de_control()[6] / f"{nombre}.py", f"_{nombre}_06_de_referencia")


def mundo(tope=4):
    """(registro, durable, bd, agente, copia): una base con el hijo «h» y una copia con notas.txt."""
    R, D = referencia("registro"), referencia("durable")
    carpeta = carpeta_temporal("ejercicio-6-")
    bd = R.abrir(carpeta / "e.db")
    referencia("historial").crear_ejecucion(bd, "h")
    R.crear_agente(bd, "h", "hijo", 1, "guion:eco", INICIO, ["leer", "editar"], "copia", 1000, tope)
    (agente,) = R.agentes(bd)
    copia = carpeta / "copia"
    copia.mkdir()
    (copia / "notas.txt").write_text(TEXTO, encoding="utf-8")
    return R, D, bd, agente, copia


def llamada(id, nombre, **entrada):
    return {"type": "tool_use", "id": id, "name": nombre, "input": entrada}


def observacion(id, texto):
    return {"type": "tool_result", "tool_use_id": id, "content": texto}


def anotar(R, D, bd, *mensajes):
    for mensaje in mensajes:
        referencia("historial").anotar(bd, "h", D.guardar(mensaje))


LEE = ("asistente", [{"type": "text", "text": "Leo."}, llamada("t1", "leer", ruta="notas.txt")])
LEIDO = ("usuario", [observacion("t1", TEXTO)])
FINAL = ("asistente", [{"type": "text", "text": "Hecho."}])


# --- 6.2 -------------------------------------------------------------------------------------
caso = ejercicio(
    "6.2", leccion=6, titulo="donde_esta: M y lo que le toca a un agente, sacado solo de la base",
    nombre="donde_esta", modulo="agentes",
    pistas=[
        "Empieza por M = M_de(bd, agente): la M de la base (el inicio, el resumen activo y la cola "
        "posterior), no el historial entero.",
        "Mira el último mensaje de M. Si es del asistente y tiene llamadas (llamadas_de), toca "
        "«atender»; si es del asistente sin llamadas, es su respuesta final: «terminar».",
        "Si acaba en el pedido o en observaciones, toca «pedir»… salvo que respuestas(bd, agente) "
        "ya llegue a agente['tope']: entonces «terminar». Devuelve siempre (qué, M).",
    ],
)


@caso("un agente sin historial: toca pedir, con M = su inicio")
def _(donde_esta):
    _, _, bd, agente, _ = mundo()
    igual(donde_esta(bd, agente), ("pedir", INICIO))


@caso("tras una respuesta con llamadas sin observar: toca atenderlas, no volver a pedir")
def _(donde_esta):
    R, D, bd, agente, _ = mundo()
    anotar(R, D, bd, LEE)
    igual(donde_esta(bd, agente), ("atender", INICIO + [LEE]))


@caso("tras las observaciones: toca pedir otra vez")
def _(donde_esta):
    R, D, bd, agente, _ = mundo()
    anotar(R, D, bd, LEE, LEIDO)
    igual(donde_esta(bd, agente)[0], "pedir")


@caso("tras la respuesta final: toca terminar")
def _(donde_esta):
    R, D, bd, agente, _ = mundo()
    anotar(R, D, bd, LEE, LEIDO, FINAL)
    igual(donde_esta(bd, agente)[0], "terminar")


@caso("con el tope agotado y sin respuesta final: toca terminar, no pedir más")
def _(donde_esta):
    R, D, bd, agente, _ = mundo(tope=1)
    anotar(R, D, bd, LEE, LEIDO)
    igual(donde_esta(bd, agente)[0], "terminar", "con tope 1 y una respuesta ya dada")


@caso("con un resumen activo, M es el inicio, la nota y la cola, no el historial entero")
def _(donde_esta):
    R, D, bd, agente, _ = mundo(tope=9)
    dos = ("asistente", [llamada("t2", "leer", ruta="notas.txt")])
    anotar(R, D, bd, LEE, LEIDO, dos, ("usuario", [observacion("t2", TEXTO)]))
    referencia("resumenes").instalar(bd, "h", None, 2, [{"texto": "Leí notas.txt: dos líneas.", "fuente": 2}])
    que, M = donde_esta(bd, agente)
    igual((que, M), ("pedir", D.reconstruir(bd, "h", INICIO)), "M, la de la base")


@caso("con un resumen activo, el tope cuenta las respuestas de todo el historial, no solo las de M")
def _(donde_esta):
    R, D, bd, agente, _ = mundo(tope=2)
    dos = ("asistente", [llamada("t2", "leer", ruta="notas.txt")])
    anotar(R, D, bd, LEE, LEIDO, dos, ("usuario", [observacion("t2", TEXTO)]))
    referencia("resumenes").instalar(bd, "h", None, 2, [{"texto": "Leí notas.txt: dos líneas.", "fuente": 2}])
    igual(donde_esta(bd, agente)[0], "terminar",
          "con tope 2 y dos respuestas en el historial, aunque el resumen deje una sola en M")


# Lo pilla un mutante de las pruebas de mutación (`medir mutantes 6.2`): `== agente["tope"]`.
@caso("con más respuestas que el tope (un tope que se bajó al reanudar): toca terminar igual, no pedir")
def _(donde_esta):
    R, D, bd, agente, _ = mundo(tope=1)
    dos = ("asistente", [llamada("t2", "leer", ruta="notas.txt")])
    anotar(R, D, bd, LEE, LEIDO, dos, ("usuario", [observacion("t2", TEXTO)]))
    igual(donde_esta(bd, agente)[0], "terminar", "con tope 1 y ya dos respuestas: el tope está agotado")


# --- El diferencial del 6.2: historiales con respuestas, observaciones, resúmenes y limpiezas -------
#
# Cada secuencia anota en el historial del hijo «h» respuestas con una llamada o con dos a la vez,
# sus observaciones, respuestas finales y mensajes del usuario; a veces instala un resumen (una
# compactación) o apunta una limpieza (la 03b); y pregunta donde_esta con el tope por debajo, en y
# por encima de las respuestas que lleva.
def _agentes_del_diferencial(ruta):
    R = referencia("registro")
    bd = R.abrir(ruta)
    referencia("historial").crear_ejecucion(bd, "h")
    R.crear_agente(bd, "h", "hijo", 1, "guion:eco", INICIO, ["leer", "editar"], "copia", 1000, 4)
    bd.close()


def abrir_mundo(construir, nombre):
    """La base de un mundo: una copia de la plantilla, con la conexión que da registro.abrir (la que
    apunta los pasos), sin fsync y sin volver a mirar el esquema, que la plantilla ya tiene."""
    ruta = copia_de_plantilla(nombre, construir)
    bd = sin_esperar_al_disco(sqlite3.connect(ruta, isolation_level=None))
    bd.execute("PRAGMA foreign_keys=ON")
    return referencia("pasos").Conexion(bd), ruta


ANOTAR = ["una respuesta con una llamada", "una respuesta con una llamada", "una respuesta con dos llamadas",
          "sus observaciones", "sus observaciones", "la respuesta final", "un mensaje del usuario"]
TOPE = ["respuestas", "respuestas − 1", "respuestas + 1", "0", "99"]
OTRA_COSA = ["nada", "nada", "instalar un resumen hasta el último mensaje", "instalar un resumen hasta el penúltimo",
             "limpiar los resultados de la primera llamada", "limpiar los resultados de la primera llamada"]


class Agentes(Maquina):
    secuencias = 40
    pasos = 5
    para_encoger = 300
    pistas = {"lo que devuelve": "(qué, M) con M = M_de(bd, agente): atender si acaba en una respuesta con llamadas, "
                                 "terminar si acaba en la final o si respuestas(bd, agente) llega al tope; si no, pedir"}

    def preparar(self, donde_esta):
        bd, ruta = abrir_mundo(_agentes_del_diferencial, "agentes.db")
        return SimpleNamespace(donde_esta=donde_esta, bd=bd, ruta=ruta, turno=0, pendientes=[])

    def cerrar(self, mundo):
        cerrar_y_borrar(mundo.bd, carpeta=mundo.ruta.parent)

    def anotar(self, mundo, que):
        D, historial = referencia("durable"), referencia("historial")
        if que.startswith("una respuesta"):
            mundo.turno += 1
            llamadas = [llamada(f"t{mundo.turno}_{j}", "leer", ruta="notas.txt") for j in range(1 + ("dos" in que))]
            mundo.pendientes = [l["id"] for l in llamadas]
            mensaje = ("asistente", [{"type": "text", "text": f"Turno {mundo.turno}."}, *llamadas])
        elif que == "sus observaciones" and mundo.pendientes:
            mensaje = ("usuario", [observacion(i, TEXTO) for i in mundo.pendientes])
            mundo.pendientes = []
        elif que == "la respuesta final":
            mensaje = FINAL
        else:
            mensaje = ("usuario", "Sigue, por favor.")
        historial.anotar(mundo.bd, "h", D.guardar(mensaje))

    def otra_cosa(self, mundo, que):
        bd = mundo.bd
        if que.startswith("instalar"):
            (ultimo,) = bd.execute("SELECT COALESCE(MAX(seq), 0) FROM historial WHERE ejecucion='h'").fetchone()
            corte = ultimo - ("penúltimo" in que)
            activo, cobertura = referencia("resumenes").activo(bd, "h")
            if corte > cobertura:
                referencia("resumenes").instalar(bd, "h", activo, corte, [{"texto": "Leí notas.txt.", "fuente": corte}])
        elif que.startswith("limpiar"):
            bd.apuntar("limpieza", "h", llamadas=["t1_0"], tokens=100)

    def preguntar(self, mundo, tope):
        (agente,) = referencia("registro").agentes(mundo.bd)
        hechas = sum(1 for (t,) in mundo.bd.execute("SELECT texto FROM historial WHERE ejecucion='h'")
                     if json.loads(t)[0] == "asistente")
        agente["tope"] = {"respuestas": hechas, "respuestas − 1": max(hechas - 1, 0), "respuestas + 1": hechas + 1}.get(
            tope) if tope.startswith("respuestas") else int(tope)
        self.contar_paso(f"donde_esta(bd, agente) con tope = {agente['tope']} y {hechas} respuestas en su historial")
        return {"lo que devuelve": intento(mundo.donde_esta, mundo.bd, agente)}

    @al_empezar(anotar=st.builds(lambda cuantos, que: que[:cuantos], st.integers(0, 6),
                                 st.lists(st.sampled_from(ANOTAR), min_size=6, max_size=6)).map(
                                     lambda que: ["una respuesta con una llamada", "sus observaciones", *que]
                                     if "sus observaciones" not in que[:2] and len(que) > 3 else que),
                otra_cosa=st.sampled_from(OTRA_COSA), tope=st.sampled_from(TOPE))
    def empezar(self, mundo, anotar, otra_cosa, tope):
        for que in anotar:
            self.anotar(mundo, que)
        self.otra_cosa(mundo, otra_cosa)
        cuenta = f"anotar {', '.join(anotar) or 'nada'}; {otra_cosa}; "
        hechos = self.preguntar(mundo, tope)
        self.contar_paso(cuenta + self.cuenta)
        return hechos

    @regla(anotar=st.lists(st.sampled_from(ANOTAR), min_size=1, max_size=3), otra_cosa=st.sampled_from(OTRA_COSA),
           tope=st.sampled_from(TOPE))
    def seguir(self, mundo, anotar, otra_cosa, tope):
        return self.empezar(mundo, anotar, otra_cosa, tope)


caso.diferencial()(Agentes)


# --- 6.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "6.1", leccion=6, titulo="atender: una edición como mucho una vez, con intención y resultado",
    nombre="atender", modulo="efectos",
    explicaciones={"UNIQUE constraint failed: llamadas.agente, llamadas.id": (
        "la tabla llamadas ya tenía la fila de esa llamada (ese agente y ese id): su intención se apuntó antes, y "
        "apuntarla otra vez choca con su clave. Antes de apuntar nada, lee la fila (SELECT … WHERE agente=? AND id=?): "
        "con resultado, devuelve ese; con la intención sola, decide con sus huellas (o, en una orden, "
        "ya_intentada=True)")},
    pistas=[
        "Si la llamada no se va a ejecutar (se_ejecutaria), devuelve atender_sin_efectos(...). Si "
        "ya tiene resultado en la tabla llamadas, devuelve ese resultado (json.loads), sin tocar nada.",
        "Si no tiene fila, apunta la intención ANTES de editar: intencion_de_editar(...) te da "
        "(antes, despues, esperado). Después mira la huella del fichero ahora.",
        "Si esperado es None o la huella es la de antes: edita (atender_sin_efectos) y llama a "
        "bd.efecto(). Si es la de después: la observación es resultado(id, esperado). Si no es "
        "ninguna: un error que diga que el fichero «ha cambiado», sin tocarlo. Al final, "
        "apuntar_resultado(...) y devuelve la observación.",
        "Una orden (ejecutar) no tiene huella ni ruta: no pasa por intencion_de_editar. Con "
        "ejecutar_como_mucho_una_vez(..., ya_intentada=...) se apunta su intención, se ejecuta "
        "solo si no se había intentado ya y se apunta su resultado.",
    ],
)

EDITAR = llamada("t1", "editar", ruta="notas.txt", antiguo="uno\n", nuevo="uno\nuno y medio\n")
EDITADO = "uno\nuno y medio\ndos\n"


def puede_editar(nombre, entrada):
    return nombre == "editar"


def preparada(atender):
    """(bd, copia, borrador, observación): la edición hecha una vez, sin caídas."""
    _, _, bd, _, copia = mundo()
    borrador = copia.parent / ".borrador"
    return bd, copia, borrador, atender(bd, "h", EDITAR, copia, puede_editar, borrador)


def sin_resultado(bd):
    """La base como la deja una caída antes de apuntar el resultado: la intención, sola."""
    with referencia("historial").transaccion(bd):
        bd.execute("UPDATE llamadas SET resultado=NULL WHERE agente='h' AND id='t1'")


def contenido(copia):
    return (copia / "notas.txt").read_text(encoding="utf-8")


@caso("una edición sin caídas: se hace y devuelve la observación de editar")
def _(atender):
    _, copia, _, obs = preparada(atender)
    igual((contenido(copia), obs.get("is_error", False)), (EDITADO, False))


@caso("la intención está en la base antes de que se llame a bd.efecto() (justo tras editar)")
def _(atender):
    _, _, bd, _, copia = mundo()
    visto = []
    bd.efecto = lambda: visto.append(bd.execute("SELECT COUNT(*) FROM llamadas WHERE id='t1'").fetchone()[0])
    atender(bd, "h", EDITAR, copia, puede_editar, copia.parent / ".borrador")
    if not visto:
        raise Fallo("bd.efecto() llamado justo después de editar", "no se llamó: el simulacro no puede caer ahí")
    igual(visto, [1], "filas de la intención cuando el fichero ya está editado")


@caso("caída tras editar y antes de apuntar el resultado: al reanudar no edita otra vez")
def _(atender):
    bd, copia, borrador, obs = preparada(atender)
    sin_resultado(bd)
    igual(atender(bd, "h", EDITAR, copia, puede_editar, borrador), obs, "la observación al reanudar")
    igual(contenido(copia), EDITADO, "notas.txt tras reanudar")


@caso("caída tras apuntar la intención y antes de editar: al reanudar edita, una vez")
def _(atender):
    bd, copia, borrador, obs = preparada(atender)
    sin_resultado(bd)
    (copia / "notas.txt").write_text(TEXTO, encoding="utf-8")  # la edición no llegó a hacerse
    igual(atender(bd, "h", EDITAR, copia, puede_editar, borrador), obs, "la observación al reanudar")
    igual(contenido(copia), EDITADO, "notas.txt tras reanudar")


@caso("si otro cambió el fichero entre la caída y la reanudación, no se toca y se dice")
def _(atender):
    bd, copia, borrador, _ = preparada(atender)
    sin_resultado(bd)
    ajeno = TEXTO + "tres\n"  # otro añadió una línea: antiguo sigue ahí, y la edición «cabría»
    (copia / "notas.txt").write_text(ajeno, encoding="utf-8")
    obs = atender(bd, "h", EDITAR, copia, puede_editar, borrador)
    igual((contenido(copia), obs.get("is_error")), (ajeno, True), "(notas.txt, is_error de la observación)")


# Lo pillan dos mutantes de las pruebas de mutación (`medir mutantes 6.1`): comparar las huellas
# con <= o >= en vez de ==. Un cambio ajeno es cualquier otro contenido, y su huella puede ir antes
# o después de las apuntadas: varios, para que no dependa de la suerte de uno.
@caso("cualquier cambio ajeno cuenta, no solo uno: ocho contenidos distintos, ninguno se toca")
def _(atender):
    vistos = []
    bd, copia, borrador, _ = preparada(atender)
    for n in range(8):
        sin_resultado(bd)  # cada vez, la misma caída: la intención sin su resultado
        ajeno = TEXTO + f"línea {n} de otro\n"
        (copia / "notas.txt").write_text(ajeno, encoding="utf-8")
        obs = atender(bd, "h", EDITAR, copia, puede_editar, borrador)
        vistos.append((contenido(copia) == ajeno, obs.get("is_error")))
    igual(vistos, [(True, True)] * 8, "(notas.txt sin tocar, is_error) con cada uno de los ocho cambios ajenos")


# Lo pillan mutantes del SQL (`medir mutantes 6.1 --operadores CambioEnSQL`): buscar la fila de la
# llamada sin su id (`WHERE agente=?`, o con OR) o sin su agente (`WHERE id=?`). Los ids de las
# llamadas los pone el modelo: dos agentes pueden usar el mismo («t1»), y un agente tiene muchas.
@caso("la fila de una llamada es la de ese agente y ese id: ni la de otra llamada suya, ni la de otro agente con el mismo id")
def _(atender):
    R, _, bd, _, copia = mundo()
    referencia("historial").crear_ejecucion(bd, "g")
    R.crear_agente(bd, "g", "hijo", 2, "guion:eco", INICIO, ["leer", "editar"], "copia", 1000, 4)
    suya = copia.parent / "copia_de_g"
    suya.mkdir()
    (suya / "notas.txt").write_text(TEXTO, encoding="utf-8")
    borrador = copia.parent / ".borrador"
    atender(bd, "g", EDITAR, suya, puede_editar, borrador)  # g ya hizo su t1
    atender(bd, "h", EDITAR, copia, puede_editar, borrador)  # el t1 de h es otra llamada
    igual(contenido(copia), EDITADO, "notas.txt de h tras su t1, con el t1 de g ya hecho")
    otra = llamada("t2", "editar", ruta="notas.txt", antiguo="dos\n", nuevo="dos\ntres\n")
    obs = atender(bd, "h", otra, copia, puede_editar, borrador)
    igual((contenido(copia), obs.get("tool_use_id")), (EDITADO + "tres\n", "t2"),
          "(notas.txt, tool_use_id de la observación) tras el t2 de h, con su t1 ya hecho")


@caso("con el resultado ya apuntado, devuelve ese y no toca el fichero")
def _(atender):
    bd, copia, borrador, obs = preparada(atender)
    (copia / "notas.txt").write_text(TEXTO, encoding="utf-8")
    igual((atender(bd, "h", EDITAR, copia, puede_editar, borrador), contenido(copia)), (obs, TEXTO))


@caso("tras una edición, su resultado (la observación entera) queda apuntado en la tabla llamadas")
def _(atender):
    bd, _, _, obs = preparada(atender)
    fila = bd.execute("SELECT resultado FROM llamadas WHERE agente='h' AND id='t1'").fetchone()
    igual(fila and fila[0] and json.loads(fila[0]), obs, "el resultado apuntado de la edición")


ORDEN = llamada("t6", "ejecutar", comando="echo hecho >> registro.txt")


def puede_todo(nombre, entrada):
    return True


def orden_hecha(atender):
    """(bd, copia, borrador, observación): la orden de ORDEN, ejecutada una vez sin caídas."""
    _, _, bd, _, copia = mundo()
    borrador = copia.parent / ".borrador"
    return bd, copia, borrador, atender(bd, "h", ORDEN, copia, puede_todo, borrador)


def registro_de(copia):
    fichero = copia / "registro.txt"
    return fichero.read_text(encoding="utf-8") if fichero.exists() else None


@caso("una orden (ejecutar) se ejecuta una vez, con su intención y su resultado apuntados")
def _(atender):
    bd, copia, _, obs = orden_hecha(atender)
    fila = bd.execute("SELECT nombre, resultado FROM llamadas WHERE agente='h' AND id='t6'").fetchone()
    igual((registro_de(copia), fila and fila[0], fila and fila[1] and json.loads(fila[1])),
          ("hecho\n", "ejecutar", obs), "(registro.txt, la llamada apuntada, su resultado)")


@caso("caída tras ejecutar una orden y antes de apuntar su resultado: al reanudar no la repite")
def _(atender):
    bd, copia, borrador, _ = orden_hecha(atender)
    with referencia("historial").transaccion(bd):
        bd.execute("UPDATE llamadas SET resultado=NULL WHERE agente='h' AND id='t6'")
    obs = atender(bd, "h", ORDEN, copia, puede_todo, borrador)
    igual((registro_de(copia), obs.get("is_error")), ("hecho\n", True),
          "(registro.txt tras reanudar, is_error: no consta si se ejecutó)")


@caso("leer, y lo que no tiene permiso, no se apuntan")
def _(atender):
    _, _, bd, _, copia = mundo()
    atender(bd, "h", llamada("t4", "leer", ruta="notas.txt"), copia, puede_editar, copia.parent / ".b")
    atender(bd, "h", llamada("t5", "ejecutar", comando="ls"), copia, puede_editar, copia.parent / ".b")
    igual(bd.execute("SELECT COUNT(*) FROM llamadas").fetchone()[0], 0, "filas en llamadas")


# --- El diferencial del 6.1: llamadas con efectos, caídas y cambios ajenos ------------------------
#
# Dos agentes con el mismo id de llamada («t1»), cada uno con su copia de notas.txt. Cada secuencia
# atiende ediciones (que se pueden aplicar, cuyo antiguo no está, de un fichero que no existe, con
# argumentos de menos), órdenes y lecturas, con y sin permiso; y entre medias se cae antes de apuntar
# un resultado (la intención sola), deshace una edición que no llegó al disco, o cambia el fichero
# otro. Tras cada paso se comparan la observación, los ficheros, la tabla llamadas y lo que había
# apuntado cuando se llamó a bd.efecto().
def _efectos_del_diferencial(ruta):
    _agentes_del_diferencial(ruta)
    R = referencia("registro")
    bd = R.abrir(ruta)
    referencia("historial").crear_ejecucion(bd, "g")
    R.crear_agente(bd, "g", "hijo", 2, "guion:eco", INICIO, ["leer", "editar"], "copia", 1000, 4)
    bd.close()


LLAMADAS_61 = {
    "editar t1 (uno → uno y medio)": EDITAR,
    "editar t2 (dos → dos y tres)": llamada("t2", "editar", ruta="notas.txt", antiguo="dos\n", nuevo="dos\ntres\n"),
    "editar t3 (un antiguo que no está)": llamada("t3", "editar", ruta="notas.txt", antiguo="cuatro", nuevo="cinco"),
    "editar t4 (un fichero que no existe)": llamada("t4", "editar", ruta="no_esta.txt", antiguo="a", nuevo="b"),
    "editar t7 (sin nuevo)": llamada("t7", "editar", ruta="notas.txt", antiguo="uno"),
    "ejecutar t6 (echo hecho >> registro.txt)": llamada("t6", "ejecutar", comando="echo hecho >> registro.txt"),
    "leer t5": llamada("t5", "leer", ruta="notas.txt"),
}
USUARIOS_61 = {"que deja editar": lambda nombre, entrada: nombre == "editar", "que deja todo": lambda n, e: True,
               "que no deja nada": lambda n, e: False}
# Lo que le pasa a una llamada: atenderla sin más, o atenderla, caer antes de apuntar su resultado (la
# intención se queda sola) y reanudarla, a veces con el fichero como antes de editar (la edición no
# llegó al disco) o cambiado por otro entre medias.
ESCENARIOS_61 = ["se atiende", "se atiende", "cae antes de apuntar su resultado y se reanuda",
                 "cae antes de apuntar su resultado, la edición no llegó al disco, y se reanuda",
                 "cae antes de apuntar su resultado, otro cambia notas.txt, y se reanuda",
                 "cae antes de apuntar su resultado, otro borra notas.txt, y se reanuda",
                 "se atiende, y otro cambia notas.txt"]
LLAMADAS_CON_CAIDA = list(LLAMADAS_61)[:2] + list(LLAMADAS_61)[5:6]  # editar t1, editar t2, ejecutar t6


class Efectos(Maquina):
    secuencias = 30
    pasos = 3
    para_encoger = 300
    pistas = {"la observación": "sin fila, la intención antes de editar; con resultado, ese; con la intención sola, "
                                "la huella decide: la de antes, se edita; la de después, la observación esperada; "
                                "otra, un error sin tocar el fichero",
              "los ficheros": "cada efecto, como mucho una vez; un fichero que cambió otro no se toca",
              "la tabla llamadas": "intención (intencion_de_editar o ejecutar_como_mucho_una_vez) y resultado "
                                   "(apuntar_resultado) de cada llamada con efectos; nada de leer ni de lo que no "
                                   "tiene permiso",
              "filas de la intención al llamar a bd.efecto()": "la intención, apuntada antes de editar; bd.efecto() "
                                                                 "justo después"}

    def preparar(self, atender):
        bd, ruta = abrir_mundo(_efectos_del_diferencial, "efectos.db")
        copias = {}
        for agente in ("h", "g"):
            copias[agente] = ruta.parent / f"copia_{agente}"
            copias[agente].mkdir()
            (copias[agente] / "notas.txt").write_text(TEXTO, encoding="utf-8")
        mundo = SimpleNamespace(atender=atender, bd=bd, ruta=ruta, copias=copias, efectos=[], ultima={})
        bd.efecto = lambda: mundo.efectos.append(bd.execute(
            "SELECT COUNT(*) FROM llamadas WHERE agente=? AND id=?", mundo.actual).fetchone()[0])
        return mundo

    def cerrar(self, mundo):
        cerrar_y_borrar(mundo.bd, carpeta=mundo.ruta.parent)

    def atender(self, mundo, agente, que, usuario):
        pedida = LLAMADAS_61[que]
        mundo.actual, mundo.efectos = (agente, pedida["id"]), []
        observacion = intento(mundo.atender, mundo.bd, agente, pedida, mundo.copias[agente], USUARIOS_61[usuario],
                              mundo.ruta.parent / ".borrador")
        return {"la observación": observacion, "filas de la intención al llamar a bd.efecto()": mundo.efectos}

    def hacer(self, mundo, agente, que, escenario, usuario):
        """`que` de `agente` con `usuario`, en el `escenario` de ESCENARIOS_61: sus hechos, y los de la base y los ficheros."""
        notas = mundo.copias[agente] / "notas.txt"
        hechos = [self.atender(mundo, agente, que, usuario)]
        if escenario.startswith("cae"):
            with referencia("historial").transaccion(mundo.bd):
                mundo.bd.execute("UPDATE llamadas SET resultado=NULL WHERE agente=? AND id=?",
                                 (agente, LLAMADAS_61[que]["id"]))
        if "no llegó al disco" in escenario:
            notas.write_text(TEXTO, encoding="utf-8")
        if "otro cambia" in escenario:
            notas.write_text(notas.read_text(encoding="utf-8") + "una línea de otro\n", encoding="utf-8")
        if "otro borra" in escenario:
            notas.unlink(missing_ok=True)
        if escenario.endswith("se reanuda"):
            hechos.append(self.atender(mundo, agente, que, usuario))
        ficheros = {f"{a}/{n}": (c / n).read_text(encoding="utf-8") if (c / n).exists() else None
                    for a, c in mundo.copias.items() for n in ("notas.txt", "registro.txt")}
        filas = mundo.bd.execute("SELECT agente, id, nombre, entrada, antes, despues, esperado, resultado "
                                 "FROM llamadas ORDER BY agente, id").fetchall()
        return {"la observación": [sin_palabras(h["la observación"]) for h in hechos],
                "filas de la intención al llamar a bd.efecto()": [h["filas de la intención al llamar a bd.efecto()"]
                                                                   for h in hechos],
                "los ficheros": ficheros,
                "la tabla llamadas": [fila[:7] + (fila[7] and sin_palabras(json.loads(fila[7])),) for fila in filas]}

    @al_empezar(operaciones=st.builds(lambda cuantas, ops: ops[:cuantas], st.integers(1, 4), st.lists(
        st.tuples(st.sampled_from(["h", "h", "g"]), st.sampled_from(LLAMADAS_CON_CAIDA * 3 + list(LLAMADAS_61)),
                  st.sampled_from(ESCENARIOS_61), st.sampled_from(["que deja todo", "que deja todo", *USUARIOS_61])),
        min_size=4, max_size=4)),
        contar=lambda operaciones: "; ".join(contar_61(*op) for op in operaciones))
    def empezar(self, mundo, operaciones):
        return [self.hacer(mundo, *op) for op in operaciones]

    @regla(agente=st.sampled_from(["h", "g"]), que=st.sampled_from(list(LLAMADAS_61)),
           escenario=st.sampled_from(ESCENARIOS_61), usuario=st.sampled_from(list(USUARIOS_61)), contar=lambda **v:
           contar_61(v["agente"], v["que"], v["escenario"], v["usuario"]))
    def operacion(self, mundo, agente, que, escenario, usuario):
        return self.hacer(mundo, agente, que, escenario, usuario)


def contar_61(agente, que, escenario, usuario):
    return f"{que} de {agente}, con un usuario {usuario}: {escenario}"


def sin_palabras(observacion):
    """Lo que se compara de una observación: entera si no es un error; de un error, a qué llamada
    contesta y que es un error (sus palabras no las fija el ejercicio)."""
    if isinstance(observacion, dict) and observacion.get("is_error"):
        return {"tool_use_id": observacion.get("tool_use_id"), "is_error": True, "content": "(un mensaje de error)"}
    return observacion


caso.diferencial()(Efectos)


# --- 6.3 -------------------------------------------------------------------------------------
from curso.ensayo.fallos import RelojDeEnsayo  # noqa: E402 - solo lo usan los casos del 6.3

caso = ejercicio(
    "6.3", leccion=6, titulo="reintentos: qué se reintenta, cuánto se espera y cuándo se rinde",
    nombre=None, modulo="reintentos",
    pistas=[
        "se_reintenta: si es un ErrorDelModelo sin estado (no hubo respuesta), se reintenta salvo "
        "que su causa esté en SIN_ARREGLO; con estado, no si su codigo está en api.LIMITES_DE_GASTO, y "
        "sí si el estado está en REINTENTABLES o es de 500 para arriba. Cualquier otra excepción, "
        "solo si es de DE_LA_RED.",
        "espera(n, azar, base, tope, pedida): si pedida no es None y es mayor que 0, esa; si no, "
        "azar.uniform(0, min(tope, base * 2 ** n)). El tope va DENTRO del azar: topar después "
        "devuelve el tope a todos los clientes a la vez.",
        "En __call__: fin = self.reloj() + self.plazo, y un bucle de self.intentos vueltas que "
        "prueba self.intento(M, herramientas, fin - self.reloj()). Si falla con algo que no se "
        "reintenta, raise. Si era la última vuelta, raise SeRinde(error, motivo). Si no: segundos = "
        "espera(n, ..., pedida(error)); SeRinde si segundos > UNA_ESPERA_S o si self.reloj() + "
        "segundos >= fin; si no, apunta (n, error, segundos) en self.reintentos, llama a "
        "al_reintentar si lo hay y a self.dormir(segundos).",
    ],
)
M_63 = [("sistema", "s"), ("usuario", "u")]


class AlMaximo(random.Random):
    def uniform(self, a, b):
        return b


class AlMedio(random.Random):
    def uniform(self, a, b):
        return (a + b) / 2


class Falla:
    """Un modelo que lanza los `errores`, uno por llamada, y después contesta. Con `reloj`, cada
    llamada tarda `tarda` segundos en él; `vistas`, la `espera` que tenía en cada llamada."""

    def __init__(self, *errores, reloj=None, tarda=0):
        self.errores, self.llamadas, self.usage = list(errores), 0, {"input_tokens": 1, "output_tokens": 1}
        self.reloj, self.tarda, self.espera, self.vistas = reloj, tarda, 900, []

    def __call__(self, M, herramientas=()):
        self.llamadas += 1
        self.vistas.append(self.espera)
        if self.reloj is not None:
            self.reloj.ahora += self.tarda
        if self.errores:
            raise self.errores.pop(0)
        return [{"type": "text", "text": "hecho"}]


def error(r, estado, **opciones):
    return r.ErrorDelModelo(estado, f"el servidor contestó {estado}", **opciones)


def con_reloj(r, modelo, **opciones):
    """(ModeloConReintentos sobre `modelo` con un reloj de ensayo, el reloj)."""
    reloj = RelojDeEnsayo()
    return r.ModeloConReintentos(modelo, dormir=reloj.dormir, reloj=reloj, **opciones), reloj


def rendirse(r, con):
    """Llama a `con` y devuelve el nombre de lo que lanza (o «contesta»)."""
    try:
        con(M_63)
    except NotImplementedError:  # el esbozo: el caso queda pendiente
        raise
    except Exception as e:  # noqa: BLE001 - lo que lance el código del alumno es lo que se mira
        return type(e).__name__
    return "contesta"


def los_que(r, errores, reintenta):
    """Los nombres de `errores` ({nombre: error}) que se_reintenta reintenta (o no, con False)."""
    return [nombre for nombre, e in errores.items() if bool(r.se_reintenta(e)) == reintenta]


@caso("se reintentan 408, 409, 429, los 5xx y una petición sin respuesta de un momento")
def _(r):
    errores = {str(e): error(r, e) for e in (408, 409, 429, 500, 502, 503, 504, 529)}
    errores.update({
        "429 ramp_limit_exceeded": error(r, 429, codigo="ramp_limit_exceeded"),
        "conexión rechazada": error(r, None, causa="rechazada"), "conexión cortada": error(r, None, causa="cortada"),
        "sin respuesta a tiempo": error(r, None, causa="tiempo"), "ConnectionResetError": ConnectionResetError(),
        "TimeoutError": TimeoutError()})
    igual(los_que(r, errores, reintenta=False), [], "los que no se reintentan")


@caso("no se reintenta ningún otro 4xx (400, 401, 403, 404, 413), un 200 que no es de la API, ni lo que no es de la red")
def _(r):
    errores = {str(e): error(r, e) for e in (400, 401, 403, 404, 413, 200)}
    errores["ValueError"] = ValueError("x")
    igual(los_que(r, errores, reintenta=True), [], "los que se reintentan")


@caso("no se reintenta el 429 de un límite de gasto (su error.details.error_code)")
def _(r):
    errores = {c: error(r, 429, codigo=c) for c in ("enforced_spend_limit_reached", "contract_spend_limit_reached")}
    igual(los_que(r, errores, reintenta=True), [], "los que se reintentan")


@caso("no se reintenta una URL que no es http(s), un nombre que no se resuelve ni un certificado que no vale")
def _(r):
    errores = {c: error(r, None, causa=c) for c in ("esquema", "nombre", "certificado")}
    igual(los_que(r, errores, reintenta=True), [], "las causas que se reintentan")


@caso("la espera se dobla en cada reintento hasta el tope")
def _(r):
    igual([r.espera(n, AlMaximo(), base=1, tope=30) for n in range(7)], [1, 2, 4, 8, 16, 30, 30],
          "con el azar siempre al máximo")


@caso("el azar va sobre la espera ya topada: entre 0 y min(tope, base · 2^n)")
def _(r):
    igual([r.espera(n, AlMedio(), base=1, tope=30) for n in range(7)], [0.5, 1, 2, 4, 8, 15, 15],
          "con el azar siempre en el medio")


@caso("la espera lleva azar: entre 0 y su máximo, y no siempre la misma")
def _(r):
    azar = random.Random(6)
    esperas = [r.espera(3, azar, base=1, tope=30) for _ in range(50)]
    igual((all(0 <= s <= 8 for s in esperas), len(set(esperas)) > 1), (True, True), "(dentro, variadas)")


@caso("si el servidor pide esperar más de 0 s (pedida), la espera es esa; si no, la del azar")
def _(r):
    pedidas = [40, 0.25, 0, -3, None]
    igual({p: r.espera(3, AlMaximo(), base=1, tope=30, pedida=p) for p in pedidas},
          {40: 40, 0.25: 0.25, 0: 8, -3: 8, None: 8}, "{pedida: espera} con el azar al máximo")


@caso("reintenta hasta que contesta, y espera lo que dice espera() con lo que pide el servidor")
def _(r):
    modelo = Falla(error(r, 529), error(r, 429, cabeceras={"retry-after": "40"}), ConnectionResetError())
    con, reloj = con_reloj(r, modelo, azar=AlMaximo(), base=1, tope=30)
    igual((con(M_63), modelo.llamadas, reloj.esperas), ([{"type": "text", "text": "hecho"}], 4, [1, 40, 4]),
          "(respuesta, llamadas, esperas)")


@caso("cada reintento se apunta antes de dormir: en self.reintentos y con al_reintentar(n, error, segundos)")
def _(r):
    sucesos, errores = [], [error(r, 503), error(r, 529)]
    con = r.ModeloConReintentos(Falla(*errores), dormir=lambda s: sucesos.append(("dormir", s)), azar=AlMaximo(),
                                al_reintentar=lambda n, e, s: sucesos.append(("al_reintentar", n, e.estado, s)))
    con(M_63)
    igual(sucesos, [("al_reintentar", 0, 503, 1), ("dormir", 1), ("al_reintentar", 1, 529, 2), ("dormir", 2)],
          "lo que pasa, en orden")
    igual([(n, e.estado, s) for n, e, s in con.reintentos], [(0, 503, 1), (1, 529, 2)], "self.reintentos")


@caso("un 400 sale a la primera, sin esperar")
def _(r):
    modelo = Falla(error(r, 400))
    con, reloj = con_reloj(r, modelo)
    igual((rendirse(r, con), modelo.llamadas, reloj.esperas), ("ErrorDelModelo", 1, []),
          "(lo que lanza, llamadas, esperas)")


@caso("se rinde tras `intentos` intentos: SeRinde, con el último error")
def _(r):
    modelo = Falla(*[r.ErrorDelModelo(503, f"intento {n}") for n in range(1, 10)])
    con, reloj = con_reloj(r, modelo, intentos=4)
    try:
        con(M_63)
    except r.SeRinde as e:
        ultimo = getattr(e.ultimo, "mensaje", None)
    except NotImplementedError:  # el esbozo: el caso queda pendiente
        raise
    except Exception as e:  # noqa: BLE001 - lo que lance el código del alumno es lo que se mira
        ultimo = f"{type(e).__name__}, no SeRinde"
    else:
        ultimo = "ninguna excepción"
    igual((modelo.llamadas, len(reloj.esperas), ultimo), (4, 3, "intento 4"),
          "(llamadas, esperas, el último error de SeRinde)")


@caso("si el servidor pide esperar más de UNA_ESPERA_S (60 s) de una vez, se rinde sin esperar")
def _(r):
    modelo = Falla(error(r, 429, cabeceras={"retry-after": "61"}))
    con, reloj = con_reloj(r, modelo)
    igual((rendirse(r, con), modelo.llamadas, reloj.esperas), ("SeRinde", 1, []),
          "(lo que lanza, llamadas, esperas)")


@caso("no empieza una espera que acabaría después del plazo: se rinde antes")
def _(r):
    modelo = Falla(*[error(r, 503) for _ in range(9)])
    con, reloj = con_reloj(r, modelo, plazo=10, azar=AlMaximo())
    igual((rendirse(r, con), modelo.llamadas, reloj.esperas), ("SeRinde", 4, [1, 2, 4]),
          "(lo que lanza, llamadas, esperas) con plazo=10")


@caso("cada intento lleva lo que queda del plazo: self.intento(M, herramientas, queda)")
def _(r):
    reloj = RelojDeEnsayo()
    modelo = Falla(error(r, 503), error(r, 503), reloj=reloj, tarda=5)
    r.ModeloConReintentos(modelo, plazo=100, dormir=reloj.dormir, reloj=reloj, azar=AlMaximo())(M_63)
    igual(modelo.vistas, [100, 100 - 5 - 1, 100 - 5 - 1 - 5 - 2],
          "la espera del modelo en cada intento, con plazo=100 y peticiones de 5 s")


# Los tres siguientes los pillan mutantes de las pruebas de mutación (`medir mutantes 6.3`): cada
# frontera que dicen las pistas, en su sitio (`>` y no `>=` con UNA_ESPERA_S, `>=` y no `>` con el
# plazo) y los estados de uno en uno, no solo los de ejemplo.
@caso("todos los estados de 400 a 599, uno a uno: se reintentan los de REINTENTABLES y los 5xx, y nada más")
def _(r):
    reintentados = [e for e in range(400, 600) if r.se_reintenta(error(r, e))]
    igual(reintentados, [408, 409, 429, *range(500, 600)], "los estados que se reintentan")


@caso("si el servidor pide justo UNA_ESPERA_S (60 s), se espera y se reintenta: solo se rinde si pide más")
def _(r):
    modelo = Falla(error(r, 429, cabeceras={"retry-after": "60"}))
    con, reloj = con_reloj(r, modelo)
    igual((rendirse(r, con), modelo.llamadas, reloj.esperas), ("contesta", 2, [60]),
          "(lo que lanza, llamadas, esperas)")


@caso("tampoco empieza una espera que acabaría justo al final del plazo: no quedaría tiempo para el intento")
def _(r):
    modelo = Falla(*[error(r, 503) for _ in range(9)])
    con, reloj = con_reloj(r, modelo, plazo=7, azar=AlMaximo())
    igual((rendirse(r, con), modelo.llamadas, reloj.esperas), ("SeRinde", 3, [1, 2]),
          "(lo que lanza, llamadas, esperas) con plazo=7: tras 1 y 2 s, esperar 4 acabaría en el 7")


# --- El diferencial del 6.3: errores de cada clase, esperas y secuencias de fallos --------------------
#
# se_reintenta con respuestas HTTP de 100 a 599 (los bordes: 407–410, 428–430, 499, 500, 599), con y
# sin el código de un límite de gasto, sin respuesta por cada causa, y excepciones de la red y de
# Python; espera con n de 0 a 8, bases, topes y lo que pida el servidor (nada, 0, negativo, un poco,
# justo UNA_ESPERA_S, más); y el modelo con reintentos ante de 0 a 5 errores seguidos, con intentos,
# plazos y peticiones que tardan, en un reloj de ensayo y con azares que no dependen de la suerte.
class AlCero(random.Random):
    def uniform(self, a, b):
        return a


AZARES = {"al máximo": AlMaximo, "en el medio": AlMedio, "al mínimo": AlCero,
          "Random(7)": lambda: random.Random(7)}
ESTADOS = st.one_of(st.sampled_from([429, 429, 400, 407, 408, 409, 410, 413, 428, 430, 499, 500, 502, 529, 599, 200,
                                     300]), st.integers(100, 599))
CAUSAS = ["rechazada", "cortada", "tiempo", "red", "esquema", "nombre", "certificado"]  # las de api.py
ERRORES_DE_PYTHON = {"ConnectionResetError": ConnectionResetError, "ConnectionRefusedError": ConnectionRefusedError,
                     "TimeoutError": TimeoutError, "BrokenPipeError": BrokenPipeError,
                     "RemoteDisconnected": http.client.RemoteDisconnected,
                     "IncompleteRead": lambda: http.client.IncompleteRead(b""), "ValueError": ValueError,
                     "OSError": OSError, "KeyError": KeyError}
# El error_code de un 429 (los límites de gasto, y uno que no lo es): la API solo los manda con él.
CODIGOS_DEL_429 = [None, "enforced_spend_limit_reached", "contract_spend_limit_reached", "ramp_limit_exceeded"]
ERRORES_63 = st.one_of(
    st.builds(lambda estado, codigo, retry: ("http", estado, codigo if estado == 429 else None, retry),
              ESTADOS, st.sampled_from(CODIGOS_DEL_429), st.sampled_from([None, None, "1", "0", "40", "60", "61", "-3",
                                                                          "mañana"])),
    st.tuples(st.just("sin respuesta"), st.sampled_from(CAUSAS)),
    st.tuples(st.just("python"), st.sampled_from(list(ERRORES_DE_PYTHON)), st.sampled_from(["CuerpoSinAcabar", ""])))


def error_63(r, spec):
    """El error que describe `spec`, con las clases del módulo `r` (las suyas: sus isinstance las reconocen)."""
    if spec[0] == "http":
        _, estado, codigo, retry = spec
        return r.ErrorDelModelo(estado, f"el servidor contestó {estado}", codigo=codigo,
                                cabeceras={"retry-after": retry} if retry is not None else None)
    if spec[0] == "sin respuesta":
        return r.ErrorDelModelo(None, "sin respuesta", causa=spec[1])
    if spec[2] == "CuerpoSinAcabar":
        return r.api.CuerpoSinAcabar("el cuerpo no llegó entero")
    return ERRORES_DE_PYTHON[spec[1]]()


def contar_error(spec):
    if spec[0] == "http":
        return f"HTTP {spec[1]}" + (f" ({spec[2]})" if spec[2] else "") + (f" retry-after {spec[3]}" if spec[3] else "")
    return f"sin respuesta ({spec[1]})" if spec[0] == "sin respuesta" else (spec[2] or spec[1])


LLAMAR = st.tuples(st.just("llamar"), st.builds(lambda cuantos, errores: errores[:cuantos], st.integers(0, 5),
                                                st.lists(ERRORES_63, min_size=5, max_size=5)),
                   st.sampled_from([6, 1, 2, 3, 4]), st.sampled_from([1800, 7, 10, 3, 100]),
                   st.sampled_from([1, 0.5, 2]), st.sampled_from([30, 1, 4]), st.sampled_from([0, 0, 5]),
                   st.sampled_from(list(AZARES)))
ENTRADAS_63 = st.one_of(
    st.tuples(st.just("se_reintenta"), ERRORES_63), st.tuples(st.just("se_reintenta"), ERRORES_63),
    st.tuples(st.just("espera"), st.integers(0, 8), st.sampled_from(list(AZARES)), st.sampled_from([1, 0.5, 2]),
              st.sampled_from([30, 1, 4]), st.sampled_from([None, 0, -3, 0.25, 40, 60, 61])),
    LLAMAR, LLAMAR)


def contar_63(entrada):
    que, *resto = entrada
    if que == "se_reintenta":
        return f"se_reintenta({contar_error(resto[0])})"
    if que == "espera":
        n, azar, base, tope, pedida = resto
        return f"espera({n}, azar {azar}, base={base}, tope={tope}, pedida={pedida})"
    errores, intentos, plazo, base, tope, tarda, azar = resto
    return (f"ModeloConReintentos(un modelo que falla con [{', '.join(contar_error(e) for e in errores)}] y después "
            f"contesta, intentos={intentos}, plazo={plazo}, base={base}, tope={tope}, azar {azar}), cada petición "
            f"tarda {tarda} s")


def _llamar(r, errores, intentos, plazo, base, tope, tarda, azar):
    reloj = RelojDeEnsayo()
    lanzados = [error_63(r, e) for e in errores]
    modelo = Falla(*lanzados, reloj=reloj, tarda=tarda)
    apuntados = []
    con = r.ModeloConReintentos(modelo, intentos=intentos, plazo=plazo, base=base, tope=tope, dormir=reloj.dormir,
                                reloj=reloj, azar=AZARES[azar](),
                                al_reintentar=lambda n, e, s: apuntados.append((n, _cual(lanzados, e), s)))
    devuelve = intento(con, M_63)
    ultimo = getattr(getattr(devuelve, "error", None), "ultimo", None) if isinstance(devuelve, Lanzo) else None
    return {"lo que pasa": devuelve if isinstance(devuelve, Lanzo) else "contesta",
            "el último error de SeRinde": _cual(lanzados, ultimo) if ultimo is not None else None,
            "peticiones al modelo": modelo.llamadas, "esperas": reloj.esperas,
            "lo que quedaba del plazo en cada petición": modelo.vistas,
            "self.reintentos": [(n, _cual(lanzados, e), s) for n, e, s in con.reintentos],
            "al_reintentar": apuntados}


def _cual(lanzados, error):
    """El número del error `error` entre los que lanzó el modelo (el mismo objeto), o su repr."""
    return next((f"el error {i + 1}" for i, e in enumerate(lanzados) if e is error), repr(error))


@caso.diferencial(entradas=ENTRADAS_63, ejemplos=250, contar=contar_63, bordes=[
    ("se_reintenta", ("http", 408, None, None)), ("se_reintenta", ("http", 409, None, None)),
    ("se_reintenta", ("http", 429, "enforced_spend_limit_reached", None)),
    ("llamar", [("http", 429, None, "61")], 6, 1800, 1, 30, 0, "al máximo"),
    ("llamar", [("http", 429, None, "60")], 6, 1800, 1, 30, 0, "al máximo")], pistas={
    "se reintenta": "408, 409, 429 (salvo un límite de gasto), cualquier 5xx, y lo que no tuvo respuesta salvo "
                    "SIN_ARREGLO; de lo que no es ErrorDelModelo, solo lo de DE_LA_RED",
    "lo que espera": "lo pedido, si es más de 0; si no, azar.uniform(0, min(tope, base · 2^n))",
    "lo que pasa": "lo que no se reintenta sale tal cual; SeRinde tras `intentos`, si pide más de UNA_ESPERA_S o si "
                   "la espera acabaría en el plazo o después",
    "esperas": "entre un intento y el siguiente, dormir(espera(n, ...)) con n desde 0",
    "lo que quedaba del plazo en cada petición": "self.intento(M, herramientas, fin − self.reloj())",
    "self.reintentos": "(n, error, segundos) de cada reintento, antes de dormir",
    "al_reintentar": "al_reintentar(n, error, segundos) antes de dormir, si lo hay"})
def _(r, entrada):
    que, *resto = entrada
    if que == "se_reintenta":
        return {"se reintenta": bool(r.se_reintenta(error_63(r, resto[0])))}
    if que == "espera":
        n, azar, base, tope, pedida = resto
        return {"lo que espera": r.espera(n, AZARES[azar](), base=base, tope=tope, pedida=pedida)}
    return _llamar(r, *resto)
