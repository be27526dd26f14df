"""Para el ejercicio de la lección 03b: `limpiar`, con las cinco promesas de su contrato.

Cada caso está hecho para un error concreto (limpiar también el último resultado, dejar una
llamada sin su resultado, limpiar por debajo de `al_menos`, limpiar una herramienta excluida,
quitar el mensaje en vez de cambiar su contenido...) y su mensaje lo nombra. Como en la 03, los
casos que no son el de «no modifica la M» comparan con una copia tomada antes de llamar.
"""
import copy
from types import SimpleNamespace

from hypothesis import strategies as st

from curso.comprobaciones.diferencial import Maquina, al_empezar, regla
from curso.comprobaciones.ejercicios import Fallo, corto, ejercicio, igual
from curso.rutas import TRES_B

NOTA = "Resumen que escribiste al compactar, en vez de tus turnos anteriores:\n\n"  # la de compactar.py

caso = ejercicio(
    "3b.1", leccion=TRES_B, titulo="limpiar: los resultados viejos, por su marcador",
    nombre=None, modulo="limpiar",
    pistas=[
        "Empieza por lo que no hace nada: si `usado` no pasa de `disparo`, devuelve (M, 0), la "
        "misma M. Después recorre los resultados con `resultados(M)` (posiciones (mensaje, bloque), "
        "del más viejo al último) y deja fuera los `conservar` últimos.",
        "De cada resultado viejo, su llamada está en `llamadas_por_id(M)`: sáltalo si su herramienta "
        "está en `excluir`, si ya es su `marcador(uso)`, o si el marcador no es más corto "
        "(`estimar(contenido) - estimar(marcador)` ≤ 0). Suma lo que liberaría cada uno.",
        "Si no hay ninguno, o lo liberado no llega a `al_menos`, devuelve (M, 0). Si llega, construye "
        "una M nueva: `list(M)`, y en cada mensaje con algo que borrar, una lista nueva de bloques "
        "donde el bloque borrado es `dict(bloque, content=marcador)`. Nunca cambies los de M.",
    ],
)


def llamar(limpiar, turnos, **opciones):
    """M de prueba, una copia de cómo estaba, y lo que devuelve limpiar (usado: el disparo + 1)."""
    M = con_lecturas(limpiar, turnos)
    antes = copy.deepcopy(M)
    opciones.setdefault("usado", limpiar.DISPARO + 1)
    usado = opciones.pop("usado")
    return M, antes, limpiar.limpiar(M, usado, **opciones)


LARGO = "def f():\n    return 1\n" * 100  # un fichero mucho más largo que su marcador


def con_lecturas(limpiar, turnos):
    """Un turno por herramienta de `turnos` (leer, ejecutar o editar), con un resultado largo
    cada uno (o "ok" si se pide "corto"), y la respuesta del turno en curso al final."""
    M = [("sistema", "Eres un agente de prueba."), ("usuario", "Arregla recetario.py.")]
    for t, nombre in enumerate(turnos, start=1):
        herramienta = "leer" if nombre == "corto" else nombre
        entrada = {"comando": "python3 -m unittest"} if herramienta == "ejecutar" else {"ruta": f"f{t}.py"}
        M.append(("asistente", [{"type": "text", "text": f"Turno {t}."},
                                {"type": "tool_use", "id": f"t{t}", "name": herramienta, "input": entrada}]))
        M.append(("usuario", [{"type": "tool_result", "tool_use_id": f"t{t}",
                               "content": "ok" if nombre == "corto" else LARGO}]))
    M.append(("asistente", [{"type": "tool_use", "id": "t_fin", "name": "leer", "input": {"ruta": "fin.py"}}]))
    return M


def contenidos(M):
    return [b["content"] for rol, c in M if rol == "usuario" and isinstance(c, list)
            for b in c if b.get("type") == "tool_result"]


def marcadores(limpiar, M):
    usos = limpiar.llamadas_por_id(M)
    return [limpiar.marcador(usos[b["tool_use_id"]]) for rol, c in M if rol == "usuario" and isinstance(c, list)
            for b in c if b.get("type") == "tool_result"]


def como_quedan(limpiar, antes, nuevo):
    """Cómo quedó cada resultado de `nuevo` respecto a `antes`: «entero», «su marcador» u «otro texto»
    (así un fallo se lee en una línea, sin el fichero entero)."""
    return ["entero" if c == original else "su marcador" if c == marca else "otro texto"
            for c, original, marca in zip(contenidos(nuevo), contenidos(antes), marcadores(limpiar, antes), strict=False)]


def devuelto(resultado):
    if not (isinstance(resultado, tuple) and len(resultado) == 2):
        raise Fallo("una tupla (M nueva, tokens liberados)", repr(resultado)[:120])
    return resultado


@caso("hasta el disparo, M vuelve tal cual (la misma lista) y 0 liberados")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 4)
    nuevo, liberados = devuelto(limpiar.limpiar(M, limpiar.DISPARO))
    if nuevo is not M:
        raise Fallo("la misma lista M", "otra lista", f"usado = {limpiar.DISPARO}, justo el disparo: no se limpia")
    igual(liberados, 0, "tokens liberados sin limpiar")


@caso("pasado el disparo, cada resultado viejo pasa al marcador de su llamada")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 4)
    nuevo, _ = devuelto(r)
    igual(como_quedan(limpiar, antes, nuevo), ["su marcador", "su marcador", "entero", "entero"],
          "cómo quedan los 4 resultados: los dos más viejos, con el marcador de su llamada")


@caso("los `conservar` últimos resultados quedan enteros")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 4, conservar=2)
    nuevo, _ = devuelto(r)
    igual(como_quedan(limpiar, antes, nuevo)[2:], ["entero", "entero"],
          "los 2 últimos resultados, con conservar=2: enteros, el modelo acaba de leerlos")
    M, antes, r = llamar(limpiar, ["leer"] * 5, conservar=3)
    igual(como_quedan(limpiar, antes, devuelto(r)[0]), ["su marcador", "su marcador", "entero", "entero", "entero"],
          "cómo quedan 5 resultados con conservar=3")


@caso("cada llamada sigue con su resultado: ninguno se quita")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 4)
    nuevo, _ = devuelto(r)
    ids = [b.get("tool_use_id") for rol, c in nuevo if rol == "usuario" and isinstance(c, list) for b in c]
    igual(ids, ["t1", "t2", "t3", "t4"],
          "los tool_use_id de los resultados de M: una llamada sin su resultado es un error 400 de la API")


@caso("solo cambia el contenido: los mismos mensajes, en el mismo orden, con los mismos bloques")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 4)
    nuevo, _ = devuelto(r)
    igual(len(nuevo), len(antes), "mensajes en M: limpiar no quita mensajes, cambia contenidos")
    sin_contenido = [(rol, [{k: v for k, v in b.items() if k != "content"} for b in c] if isinstance(c, list) else c)
                     for rol, c in nuevo]
    igual(sin_contenido, [(rol, [{k: v for k, v in b.items() if k != "content"} for b in c]
                           if isinstance(c, list) else c) for rol, c in antes],
          "M sin los contenidos de los resultados: igual que antes")


@caso("las herramientas de `excluir` no se limpian")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["editar", "leer", "ejecutar", "leer", "leer"], excluir=("editar", "ejecutar"),
                         al_menos=1)
    nuevo, _ = devuelto(r)
    igual(como_quedan(limpiar, antes, nuevo)[:3], ["entero", "su marcador", "entero"],
          "editar, leer y ejecutar, los tres viejos, con excluir=('editar', 'ejecutar'): solo se limpia leer")


@caso("si no llega a `al_menos`, no toca nada")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 3)  # solo t1 es viejo: ~650 tokens
    un_resultado = limpiar.estimar(LARGO) - limpiar.estimar(marcadores(limpiar, antes)[0])
    nuevo, liberados = devuelto(limpiar.limpiar(M, limpiar.DISPARO + 1, al_menos=un_resultado + 1))
    if nuevo is not M or liberados != 0:
        raise Fallo("(la misma M, 0)", f"(otra M, {liberados})",
                    f"borrar ese resultado libera {un_resultado} tokens, menos que al_menos = {un_resultado + 1}: "
                    "cada limpieza rompe la caché, y por tan poco no merece la pena")
    nuevo, liberados = devuelto(limpiar.limpiar(M, limpiar.DISPARO + 1, al_menos=un_resultado))
    igual(liberados, un_resultado, f"tokens liberados con al_menos = {un_resultado}, justo lo que libera")


@caso("devuelve lo liberado: lo que estimaban los resultados menos lo que estiman sus marcadores")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 5)
    _, liberados = devuelto(r)
    esperado = 3 * (limpiar.estimar(LARGO) - limpiar.estimar(marcadores(limpiar, antes)[0]))
    igual(liberados, esperado, "tokens liberados al borrar 3 resultados iguales")


@caso("lo ya borrado no se vuelve a contar: limpiar dos veces es limpiar una")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 4)
    nuevo, _ = devuelto(r)
    otra, liberados = devuelto(limpiar.limpiar(nuevo, limpiar.DISPARO + 1, al_menos=1))
    igual((otra == nuevo, liberados), (True, 0), "(¿M igual?, liberados) al limpiar otra vez lo ya limpio")


@caso("un resultado más corto que su marcador se queda como está")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["corto", "leer", "leer", "leer"], al_menos=1)
    nuevo, _ = devuelto(r)
    igual(como_quedan(limpiar, antes, nuevo)[:2], ["entero", "su marcador"],
          "el resultado «ok» (su marcador ocuparía más que él) y el largo de detrás")


@caso("no modifica la M que le pasan")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 4)
    antes = copy.deepcopy(M)
    nuevo, _ = devuelto(limpiar.limpiar(M, limpiar.DISPARO + 1))
    if M != antes:
        raise Fallo("la M que recibió, sin cambios", "una M cambiada",
                    "cambiaste bloques de M en su sitio" + (" y la devolviste" if nuevo is M else "")
                    + ": la traza y quien llamó comparten esos bloques, y perderían el original. "
                    "Copia el bloque con dict(bloque, content=...) y el mensaje con una lista nueva")


# Los bordes de lo que dice el docstring, cada uno con el mutante que se colaba sin él
# (`python -m curso medir mutantes 3b.1`).

@caso("muy por debajo del disparo, tampoco se limpia")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 4)
    for usado in (0, limpiar.DISPARO // 2):
        nuevo, liberados = devuelto(limpiar.limpiar(M, usado, al_menos=1))
        if nuevo is not M or liberados != 0:
            raise Fallo("(la misma M, 0)", f"(otra M, {liberados})",
                        f"usado = {usado}, por debajo del disparo ({limpiar.DISPARO}): no hace falta sitio")


@caso("con conservar=0 se limpia hasta el último resultado; con más de los que hay, ninguno")
def _(limpiar):
    M, antes, r = llamar(limpiar, ["leer"] * 3, conservar=0, al_menos=1)
    igual(como_quedan(limpiar, antes, devuelto(r)[0]), ["su marcador"] * 3,
          "cómo quedan 3 resultados con conservar=0: no se conserva ninguno")
    M, antes, r = llamar(limpiar, ["leer"] * 2, conservar=5, al_menos=1)
    nuevo, liberados = devuelto(r)
    igual((como_quedan(limpiar, antes, nuevo), liberados), (["entero", "entero"], 0),
          "(cómo quedan, liberados) con 2 resultados y conservar=5: todos son de los que se conservan")


@caso("conservar negativo es un ValueError")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 3)
    try:
        limpiar.limpiar(M, limpiar.DISPARO + 1, conservar=-1)
    except ValueError:
        return
    raise Fallo("un ValueError", "ningún error", "conservar=-1: no hay «menos un» resultados que conservar")


@caso("solo se borra si el marcador es más corto: ni igual de largo, ni por un token menos se deja")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 4)
    marcas, cpt = marcadores(limpiar, M), limpiar.CARACTERES_POR_TOKEN
    largos = [len(marcas[0]), len(marcas[1]) + cpt]  # el 1.º estima lo mismo que su marcador; el 2.º, 1 token más
    for k, largo in enumerate(largos):
        i = 3 + 2 * k  # el mensaje de observaciones del turno k + 1
        M[i] = ("usuario", [dict(M[i][1][0], content="x" * largo)])
    antes = copy.deepcopy(M)
    nuevo, liberados = devuelto(limpiar.limpiar(M, limpiar.DISPARO + 1, al_menos=1))
    igual((como_quedan(limpiar, antes, nuevo), liberados), (["entero", "su marcador", "entero", "entero"], 1),
          "(cómo quedan, liberados): el 1.º ahorraría 0 tokens y se queda; el 2.º ahorra 1 y se borra")


@caso("cada resultado viejo pasa a su marcador, empiece por lo que empiece su texto")
def _(limpiar):
    M = con_lecturas(limpiar, ["leer"] * 4)
    M[3] = ("usuario", [dict(M[3][1][0], content='"""Un módulo con su docstring."""\n' + LARGO)])
    M[5] = ("usuario", [dict(M[5][1][0], content="~~~ una salida ~~~\n" + LARGO)])
    antes = copy.deepcopy(M)
    nuevo, _ = devuelto(limpiar.limpiar(M, limpiar.DISPARO + 1, al_menos=1))
    igual(como_quedan(limpiar, antes, nuevo), ["su marcador", "su marcador", "entero", "entero"],
          "un fichero que empieza por comillas y una salida que empieza por «~»: los dos, viejos, a su marcador")


# --- El diferencial: historiales con limpiezas y compactaciones ------------------------------------
#
# Cada secuencia hace crecer una M con turnos de una o varias llamadas a la vez (leer, ejecutar,
# editar), con resultados largos, cortos, justo alrededor de su marcador, en bloques o con claves de
# más (is_error), la compacta a veces y la limpia con parámetros por debajo, en y por encima de cada
# disparo: `usado` alrededor de `disparo`, `conservar` = 0, 1, n − 1, n, n + 1 y n + 2 (n, los
# resultados que hay), `al_menos` justo en lo que liberaría la limpieza, uno menos y uno más.
# Lo limpiado sigue en la M de la secuencia, así que también se limpia lo ya limpio.

TAMANOS = ["largo", "corto", "marcador + 1", "marcador", "marcador − 1", "bloques", "con is_error"]


def contenido_de(limpiar, uso, tamano, turno):
    """El contenido del resultado de `uso`, del `tamano` pedido respecto a su marcador (con el
    `marcador` y el `estimar` de la referencia: el mismo en los dos mundos)."""
    marca = limpiar.marcador(uso)
    cpt = limpiar.CARACTERES_POR_TOKEN
    if tamano.startswith("marcador"):
        tokens = {"marcador + 1": 1, "marcador": 0, "marcador − 1": -1}[tamano]
        return "y" * (len(marca) + cpt * tokens)
    if tamano == "corto":
        return "ok"
    if tamano == "bloques":
        return [{"type": "text", "text": f"salida {turno}\n" + LARGO}]
    return f"# turno {turno}\n" + LARGO


# Las de un turno: una, o varias a la vez. Los valores que hacen que se limpie algo salen más a menudo
# (repetidos en la lista): sin nada que limpiar, casi ningún error se ve.
LLAMADAS = st.lists(st.tuples(st.sampled_from(["leer", "leer", "ejecutar", "editar"]),
                              st.sampled_from(["largo"] * 5 + TAMANOS)), min_size=1, max_size=3)
# De 0 a 5 turnos: el número se elige aparte, para que las M largas salgan tan a menudo como las cortas.
TURNOS = st.builds(lambda cuantos, turnos: turnos[:cuantos], st.integers(0, 5), st.lists(LLAMADAS, min_size=5, max_size=5))


def contar_turno(llamadas):
    return " y ".join(f"{herramienta} ({tamano})" for herramienta, tamano in llamadas)


# Los parámetros de una limpieza, por su relación con el estado: el disparo, los resultados que hay
# (n) y lo que liberaría la limpieza según la referencia.
PARAMETROS = dict(
    usado=st.sampled_from(["disparo + 1"] * 4 + ["disparo + 1000", "disparo", "disparo − 1", "0"]),
    conservar=st.sampled_from(["n + 1", "0", "0", "n", "n − 1", "1", "1", "n + 2", "por omisión", "por omisión", "−1"]),
    al_menos=st.sampled_from(["1", "lo que libera", "lo que libera + 1", "lo que libera − 1", "por omisión", "0"]),
    excluir=st.sampled_from(["por omisión"] * 3 + ["()", "('leer', 'editar')", "('ejecutar',)"]),
    disparo=st.sampled_from(["por omisión"] * 3 + ["0", "500"]))


class Limpiezas(Maquina):
    secuencias = 80
    pasos = 6
    # El hallazgo 5 de la issue 40, de borde: con conservar mayor que los resultados que hay, un corte
    # todos[:len(todos) - conservar] se vuelve negativo y limpia lo que tenía que conservar.
    bordes = [[("empezar", dict(turnos=[[("leer", "largo")], [("leer", "largo")]], usado="disparo + 1",
                                conservar="n + 1", al_menos="1", excluir="por omisión", disparo="por omisión"))]]
    pistas = {"cómo quedan los resultados": "cada resultado, salvo los `conservar` últimos, los de `excluir`, los "
                                            "ya borrados y los que no ocupan más que su marcador, pasa a su marcador",
              "tokens liberados": "lo que estimaban los resultados borrados menos lo que estiman sus marcadores; 0 si "
                                  "no se limpia",
              "¿la misma M?": "si no hace falta limpiar o se liberaría menos de `al_menos`, devuelve la misma M",
              "la M que recibió": "no cambies M ni sus bloques: copia el bloque con dict(bloque, content=...)"}

    def preparar(self, limpiar):
        return SimpleNamespace(limpiar=limpiar, M=[("sistema", "Eres un agente de prueba."), ("usuario", "Arregla f.py.")],
                               turnos=0)

    @al_empezar(turnos=TURNOS, **PARAMETROS)
    def empezar(self, mundo, turnos, **parametros):
        """Cada secuencia empieza con una M de 0 a 5 turnos y una limpieza: así todas limpian algo."""
        for llamadas in turnos:
            self.turno(mundo, llamadas)
        return self.limpiar(mundo, **parametros)

    @regla(llamadas=LLAMADAS, contar=lambda llamadas: "otro turno: " + contar_turno(llamadas))
    def turno(self, mundo, llamadas):
        mundo.turnos += 1
        t, usos, resultados = mundo.turnos, [], []
        for k, (herramienta, tamano) in enumerate(llamadas):
            entrada = ({"comando": "python3 -m unittest " + "x" * (40 * k)} if herramienta == "ejecutar"
                       else {"ruta": f"f{t}_{k}.py"})
            uso = {"type": "tool_use", "id": f"t{t}_{k}", "name": herramienta, "input": entrada}
            bloque = {"type": "tool_result", "tool_use_id": uso["id"],
                      "content": contenido_de(self.referencia, uso, tamano, t)}
            if tamano == "con is_error":
                bloque["is_error"] = True
            usos.append(uso)
            resultados.append(bloque)
        mundo.M = mundo.M + [("asistente", [{"type": "text", "text": f"Turno {t}."}, *usos]), ("usuario", resultados)]
        return {}

    @regla(quedan=st.sampled_from([1, 2, 0]), contar=lambda quedan: f"compactar, con {quedan} turnos recientes")
    def compactar(self, mundo, quedan):
        """Como la compactación de la 03: el inicio, la nota del resumen y los turnos del final."""
        mundo.M = mundo.M[:2] + [("usuario", NOTA + "Leí los ficheros.")] + (mundo.M[-2 * quedan:] if quedan else [])
        return {}

    @regla(**PARAMETROS)
    def limpiar(self, mundo, usado, conservar, al_menos, excluir, disparo):
        ref = self.referencia
        M = mundo.M + [("asistente", [{"type": "tool_use", "id": "t_fin", "name": "leer", "input": {"ruta": "fin.py"}}])]
        n, el_disparo = len(ref.resultados(M)), ref.DISPARO if disparo == "por omisión" else int(disparo)
        valores = {"n + 1": n + 1, "n + 2": n + 2, "n": n, "n − 1": max(n - 1, 0), "−1": -1, "0": 0, "1": 1,
                   "disparo + 1": el_disparo + 1, "disparo": el_disparo, "disparo − 1": el_disparo - 1,
                   "disparo + 1000": el_disparo + 1000, "()": (), "('leer', 'editar')": ("leer", "editar"),
                   "('ejecutar',)": ("ejecutar",), "500": 500}
        opciones = {nombre: valores[v] for nombre, v in (("disparo", disparo), ("conservar", conservar),
                                                          ("excluir", excluir)) if v != "por omisión"}
        if "libera" in al_menos:  # lo que liberaría limpiando sin mínimo, según la referencia
            libera = ref.limpiar(M, el_disparo + 1, **dict(opciones, al_menos=0))[1] if conservar != "−1" else 0
            opciones["al_menos"] = libera + {"lo que libera": 0, "lo que libera + 1": 1, "lo que libera − 1": -1}[al_menos]
        elif al_menos != "por omisión":
            opciones["al_menos"] = int(al_menos)
        self.contar_paso(f"limpiar(M, {valores[usado]}" + "".join(f", {k}={v!r}" for k, v in opciones.items())
                         + f"), con {n} resultado{'s' if n != 1 else ''} en M (el disparo es {el_disparo})")
        antes = copy.deepcopy(M)
        devuelve = mundo.limpiar.limpiar(M, valores[usado], **opciones)
        if not (isinstance(devuelve, tuple) and len(devuelve) == 2 and isinstance(devuelve[0], list)):
            return {"lo que devuelve": corto(devuelve, 80)}
        nuevo, liberados = devuelve
        if len(nuevo) == len(M):
            mundo.M = nuevo[:-1]  # lo limpiado se queda: la siguiente limpieza lo verá ya limpio
        return {"lo que devuelve": "una tupla (M, tokens liberados)",
                "cómo quedan los resultados": como_quedan(ref, antes, nuevo), "tokens liberados": liberados,
                "¿la misma M?": nuevo is M, "la M nueva": nuevo,
                "la M que recibió": "sin cambios" if M == antes else "cambiada"}


caso.diferencial()(Limpiezas)
