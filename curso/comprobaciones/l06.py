"""Para los ejercicios de la lección 06: una edición como mucho una vez, dónde está cada agente al reanudar, y los reintentos.

Un solo fichero porque son los casos de los ejercicios de una lección, y cada caso es la frase de lo
que esa lección pidió; partirlo separaría un ejercicio de su pista.

Lección 06: una edición como mucho una vez (6.1), dónde está cada agente al reanudar (6.2) y
los reintentos (6.3).

Cada caso prepara su estado con los módulos del punto de control 06 (registro, durable...) y una
base SQLite de verdad. Las caídas se reproducen dejando la base y la copia de trabajo como las
deja un proceso que muere en ese punto: una intención sin resultado, con el fichero editado o
sin editar.
"""
import functools
import json
import random

from curso import rutas
from curso.rutas import cargar_modulo
from curso.comprobaciones.ejercicios import Fallo, carpeta_temporal, ejercicio, igual

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


# --- 6.1 -------------------------------------------------------------------------------------
caso = ejercicio(
    "6.1", leccion=6, titulo="atender: una edición como mucho una vez, con intención y resultado",
    nombre="atender", modulo="efectos",
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
