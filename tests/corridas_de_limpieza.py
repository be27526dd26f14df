"""Para los tests del explorable de la limpieza (lección 03b): dos corridas de verdad por el motor del servidor de ensayo, con una limpieza hecha a mano.

La conversación es la de la ejecución `atasco` de la lección 01 (`curso.medir.redibujo_de_la_ventana.atasco`,
diez turnos que leen ficheros enteros una y otra vez). Se vuelve a mandar petición a petición a un
`Ensayo` (el motor del servidor de ensayo, sin HTTP) con un guion `eco`: la respuesta no importa,
importa el `usage`, que es el de verdad para esa M. Antes de cada petición, como el harness de la
lección, se limpia con el `usage` de la anterior: si pasó del disparo, los resultados más viejos
(todos menos los `conservar` últimos) pasan a un marcador, siempre que se borren al menos
`al_menos` tokens; si no, nada. Es una limpieza de prueba, no la del alumno.
"""
import copy

from curso.ensayo.motor import Ensayo
from curso.ensayo.tokens import contar
from curso.explorables.ventana.presupuesto import MAX_TOKENS

DISPARO = 3000  # tokens de la petición anterior a partir de los que se limpia
CONSERVAR = 2  # resultados del final que no se tocan
POR_TANDAS = 1500  # el `al_menos` de la política por tandas; la de cada turno borra lo que haya
MARCADOR = "[Resultado borrado para hacer sitio: %s(%s). Si lo necesitas, vuelve a pedirlo.]"


def marcador(uso):
    entrada = uso["input"]
    return MARCADOR % (uso["name"], entrada.get("ruta") or entrada.get("comando") or "")


def originales_de(M):
    return {b["tool_use_id"]: b["content"] for rol, c in M if rol == "usuario" and isinstance(c, list)
            for b in c if b.get("type") == "tool_result"}


def _limpiar(M, total_anterior, al_menos):
    """Limpia M en su sitio (sus resultados, no sus mensajes), como el harness antes de seguir."""
    if total_anterior is None or total_anterior <= DISPARO:
        return
    usos = {b["id"]: b for rol, c in M if rol == "asistente" for b in c if b.get("type") == "tool_use"}
    bloques = [b for rol, c in M if rol == "usuario" and isinstance(c, list) for b in c
               if b.get("type") == "tool_result"]
    viejos = bloques[:max(len(bloques) - CONSERVAR, 0)]
    candidatos = [(b, marcador(usos[b["tool_use_id"]])) for b in viejos
                  if b["content"] != marcador(usos[b["tool_use_id"]])]
    ahorro = sum(contar(b["content"]) - contar(m) for b, m in candidatos)
    if not candidatos or ahorro < al_menos:
        return
    for b, m in candidatos:
        b["content"] = m


def corrida(M_entera, herramientas, al_menos, ensayo=None, cambiar=None):
    """[(M, usage)] de cada petición de la conversación M_entera, limpiando antes de cada una.

    `cambiar(M)`, si se da, toca la conversación antes de empezar (para los casos raros de los tests).
    """
    ensayo = ensayo or Ensayo()
    M_entera = copy.deepcopy(M_entera)
    if cambiar:
        cambiar(M_entera)
    M, peticiones, total = list(M_entera[:2]), [], None
    for k in range(2, len(M_entera) + 1, 2):
        if k > 2:
            M.append(M_entera[k - 2])  # la respuesta del turno anterior
            _limpiar(M, total, al_menos)  # con el usage de la petición que la trajo
            M.append(M_entera[k - 1])  # y sus observaciones
        cuerpo = {"model": "guion:eco", "max_tokens": MAX_TOKENS, "system": M[0][1],
                  "tools": list(herramientas),
                  "messages": [{"role": {"usuario": "user", "asistente": "assistant"}[r], "content": c}
                               for r, c in M[1:]]}
        usage = ensayo.responder(copy.deepcopy(cuerpo))["usage"]
        peticiones.append((copy.deepcopy(M), dict(usage)))
        total = usage["input_tokens"] + usage["cache_read_input_tokens"]
    return peticiones


def dos_corridas(traza):
    """Las dos políticas sobre la conversación del atasco: (cada turno, por tandas, originales)."""
    M = traza["M"]
    return (corrida(M, traza["herramientas"], 1), corrida(M, traza["herramientas"], POR_TANDAS),
            originales_de(M))


