"""Para el ejercicio de la lección 03b: `limpiar`, con las cinco promesas de su contrato.

Cada caso está hecho para un error concreto (limpiar también el último resultado, dejar una
llamada sin su resultado, limpiar por debajo de `al_menos`, limpiar una herramienta excluida,
quitar el mensaje en vez de cambiar su contenido...) y su mensaje lo nombra. Como en la 03, los
casos que no son el de «no modifica la M» comparan con una copia tomada antes de llamar.
"""
import copy

from curso.comprobaciones.ejercicios import Fallo, ejercicio, igual
from curso.rutas import TRES_B

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
