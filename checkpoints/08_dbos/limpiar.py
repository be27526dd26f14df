"""Limpiar lo viejo: cambiar los resultados de herramientas antiguos por un marcador, antes de resumir.

Lección 03b. La mayor parte de M son observaciones: ficheros leídos enteros, salidas de los tests.
Las viejas ya sirvieron; si el modelo vuelve a necesitar una, puede pedirla otra vez. `limpiar`
cambia el *contenido* de los `tool_result` viejos por un marcador de una línea que dice qué
herramienta era, con qué entrada, y cómo recuperarlo. Es más barato que compactar: no pide nada
al modelo y no pierde nada que no se pueda volver a leer.

Lo que promete (cada punto es un test del punto de control, con una variante ingenua que lo rompe):

1. cada `tool_use` sigue con su `tool_result` justo detrás: la petición sigue siendo válida;
2. los `conservar` últimos resultados y los de las herramientas de `excluir`, byte a byte iguales;
3. limpiar dos veces es limpiar una, y solo cambia contenidos: ningún mensaje sale ni se mueve;
4. libera al menos `al_menos` tokens, o no toca nada;
5. no cambia la M que recibe: la historia entera sigue fuera (la traza de `correr.py` la guarda).

El harness no cuenta tokens: los que libera los estima por lo bajo, a `CARACTERES_POR_TOKEN`
caracteres cada uno (el tokenizador del servidor de ensayo y el de un modelo de verdad ponen
menos caracteres por token en código, así que lo liberado de verdad es algo más).
"""
import json

from compactar import UMBRAL

DISPARO = UMBRAL * 3 // 4  # 3072: se limpia antes de llegar al umbral de la compactación
CONSERVAR = 2  # resultados del final que no se tocan: el último y el de antes
AL_MENOS = 1024  # por tandas: cada limpieza rompe la caché del servidor, que sea por algo
EXCLUIR = ("editar",)  # lo que devuelve una edición es corto y dice qué cambió: no se borra
CARACTERES_POR_TOKEN = 3  # la estimación por lo bajo (ver el docstring)
LARGO_DE_LA_ENTRADA = 80  # caracteres de la entrada que el marcador repite como mucho

MARCADOR = "[Resultado borrado para hacer sitio: {llamada}. Si lo necesitas, vuelve a pedirlo.]"


def estimar(contenido):
    """Los tokens de un contenido de `tool_result` (texto o bloques), por lo bajo."""
    texto = contenido if isinstance(contenido, str) else json.dumps(contenido, ensure_ascii=False)
    return len(texto) // CARACTERES_POR_TOKEN


def marcador(uso):
    """El texto que queda en lugar de un resultado: la llamada que lo trajo, p. ej. leer(ruta="compra.py")."""
    entrada = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in uso["input"].items())
    if len(entrada) > LARGO_DE_LA_ENTRADA:
        entrada = entrada[:LARGO_DE_LA_ENTRADA] + "…"
    return MARCADOR.format(llamada=f"{uso['name']}({entrada})")


def llamadas_por_id(M):
    """{id: bloque tool_use} de todas las llamadas de M."""
    return {b["id"]: b for rol, contenido in M if rol == "asistente" and isinstance(contenido, list)
            for b in contenido if b.get("type") == "tool_use"}


def resultados(M):
    """Las posiciones (mensaje, bloque) de cada `tool_result` de M, de la más vieja a la última."""
    return [(i, j) for i, (rol, contenido) in enumerate(M) if rol == "usuario" and isinstance(contenido, list)
            for j, b in enumerate(contenido) if b.get("type") == "tool_result"]


def limpiar(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """(M nueva, tokens liberados), o (la misma M, 0) si no hace falta o no merece la pena.

    `usado`: lo que ocupó la última petición según el servidor (`compactar.tokens(modelo)`). Si no
    pasa de `disparo`, nada. Si pasa, cada resultado salvo los `conservar` últimos, los de `excluir`
    y los ya borrados pasa a su marcador, siempre que el marcador sea más corto; y solo si entre
    todos liberan `al_menos` tokens. Nunca modifica M ni sus bloques: los cambiados son copias.
    Un `conservar` negativo no tiene sentido: ValueError.
    """
    if conservar < 0:
        raise ValueError(f"conservar = {conservar}: son cuántos resultados del final no se tocan, 0 o más")
    if usado <= disparo:
        return M, 0
    usos = llamadas_por_id(M)
    todos = resultados(M)
    nuevos, liberados = {}, 0
    for i, j in todos[:max(len(todos) - conservar, 0)]:
        bloque = M[i][1][j]
        uso = usos.get(bloque["tool_use_id"])
        if uso is None or uso["name"] in excluir:
            continue
        texto = marcador(uso)
        ahorro = estimar(bloque["content"]) - estimar(texto)
        if bloque["content"] == texto or ahorro <= 0:
            continue  # ya borrado, o tan corto que el marcador ocuparía más
        nuevos[i, j], liberados = texto, liberados + ahorro
    if not nuevos or liberados < al_menos:
        return M, 0
    M_nueva = list(M)
    for i in sorted({i for i, _ in nuevos}):
        rol, contenido = M[i]
        M_nueva[i] = (rol, [dict(b, content=nuevos[i, j]) if (i, j) in nuevos else b
                            for j, b in enumerate(contenido)])
    return M_nueva, liberados


class Descontado:
    """El modelo tal cual, salvo su `usage`: le resta a la entrada lo que la limpieza acaba de liberar.

    Así `compactar`, que mira el `usage` de la última petición, ve lo que ocupa M ya limpia y solo
    resume si limpiar no bastó. Solo la suma de la entrada tiene sentido (la parte calculada puede
    quedar negativa: la petición limpia aún no se ha mandado).
    """

    def __init__(self, modelo, liberados):
        self.modelo, self.liberados = modelo, liberados

    @property
    def usage(self):
        usage = dict(self.modelo.usage)
        usage["input_tokens"] = usage["input_tokens"] - self.liberados
        return usage

    def __call__(self, M, herramientas=()):
        return self.modelo(M, herramientas)
