"""Un agente, acción a acción: el bucle de la lección 01 con cada paso apuntado antes de seguir.

Lección 06. El cuerpo del bucle de bucle.py, línea a línea, pero sin nada en memoria entre una
acción y la siguiente: cada acción empieza reconstruyendo M desde la base (`durable.reconstruir`,
lección 04) y deja apuntado lo que hizo antes de seguir:

1. si M acaba en observaciones (o en el pedido): pedir al modelo, apuntar la petición (sus
   tokens) y después su respuesta. La respuesta se apunta ANTES de actuar sobre ella: si el
   proceso muere a continuación, al reanudar se sigue con ESA respuesta, no con otra;
2. si la respuesta pide herramientas: limpiar los resultados viejos si toca (lección 03b: una
   vez por respuesta, apuntada en un paso «limpieza»), compactar si aún hace falta
   (`CompactacionDurable`, lección 04), atender cada llamada (las que tienen efectos, con
   intención y resultado: efectos.py) y apuntar sus observaciones;
3. si la respuesta es la final (o se acabó el tope): un hijo entrega por el buzón de la lección
   05; el padre da su informe por terminado.

Si el proceso muere en cualquier punto, la acción siguiente del mismo agente empieza donde se
quedó: el historial dice si falta pedir, atender las llamadas pendientes o entregar.
"""
import json

import buzon
import historial
import pasos
import subagentes
from compactar import INSTRUCCION, UMBRAL, tokens
from durable import CompactacionDurable, guardar, reconstruir
from efectos import atender
from encargos import validar_entrega
from entorno import CATALOGO, llamadas_de, texto_de
from hijos import leer_entrega
from limpiar import AL_MENOS, DISPARO, Descontado, limpiar, llamadas_por_id, marcador, resultados


class Modelo:
    """El modelo de un agente: le ofrece sus herramientas y apunta cada petición en `pasos`.

    `base` es un ModeloAPI (o cualquiera con `usage`). Al reanudar, el `usage` de la última
    petición se recupera de la base: la compactación lo necesita para decidir si toca."""

    def __init__(self, bd, agente, base):
        self.bd, self.id, self.base = bd, agente["id"], base
        self.ofrecidas = [h for h in CATALOGO if h["name"] in agente["herramientas"]]
        self.usage = ultimo_usage(bd, self.id)
        if getattr(base, "al_reintentar", False) is None:  # un ModeloConReintentos: cada reintento, un paso
            base.al_reintentar = lambda n, error, segundos: bd.apuntar(
                "reintento", self.id, intento=n + 1, error=str(error)[:200], espera=round(segundos, 3))

    def __call__(self, M, herramientas=()):
        respuesta = self.base(M, self.ofrecidas)
        self.usage = dict(self.base.usage)
        self.bd.apuntar("peticion", self.id, usage=self.usage, mensajes=len(M),
                        resumen=M[-1] == ("usuario", INSTRUCCION))
        return respuesta


def ultimo_usage(bd, agente):
    """El `usage` de la última petición de `agente` que no era un resumen, o None."""
    for (detalle,) in bd.execute("SELECT detalle FROM pasos WHERE clase='peticion' AND agente=? "
                                 "ORDER BY n DESC", (agente,)):
        detalle = json.loads(detalle)
        if not detalle["resumen"]:
            return detalle["usage"]
    return None


def M_de(bd, agente):
    """La M del agente, sacada solo de la base: la de la lección 04 (`reconstruir`), con los
    resultados que el agente ya limpió (lección 03b) cambiados por sus marcadores."""
    return con_marcadores(reconstruir(bd, agente["id"], agente["inicio"]), limpiados(bd, agente["id"]))


def limpiados(bd, agente):
    """Los ids de las llamadas cuyos resultados ha limpiado `agente`: los de sus pasos «limpieza»."""
    return [llamada for (detalle,) in bd.execute(
        "SELECT detalle FROM pasos WHERE clase='limpieza' AND agente=? ORDER BY n", (agente,))
        for llamada in json.loads(detalle)["llamadas"]]


def con_marcadores(M, llamadas):
    """M con el resultado de cada llamada de `llamadas` cambiado por su marcador (`limpiar.marcador`).
    Como `limpiar`: solo cambia contenidos, y nunca la M que recibe (los mensajes cambiados son copias)."""
    usos, llamadas, M = llamadas_por_id(M), set(llamadas), list(M)
    for i, j in resultados(M):
        bloque = M[i][1][j]
        if bloque["tool_use_id"] in llamadas and bloque["tool_use_id"] in usos:
            rol, contenido = M[i][0], list(M[i][1])
            contenido[j] = dict(bloque, content=marcador(usos[bloque["tool_use_id"]]))
            M[i] = (rol, contenido)
    return M


def respuestas(bd, agente):
    """Cuántas respuestas del modelo (sin contar resúmenes) tiene ya el historial del agente."""
    return sum(1 for rol, _ in historial_crudo(bd, agente["id"]) if rol == "asistente")


def historial_crudo(bd, agente):
    return [tuple(json.loads(t)) for (t,) in bd.execute(
        "SELECT texto FROM historial WHERE ejecucion=? ORDER BY seq", (agente,))]


def donde_esta(bd, agente):
    """(qué le toca, M) a `agente`, sacado solo de la base:

    - "pedir": M acaba en el pedido o en unas observaciones, y aún no agotó su tope (que
      cuenta las respuestas de todo su historial, `respuestas`, no las de M);
    - "atender": M acaba en una respuesta con llamadas que aún no tienen sus observaciones;
    - "terminar": M acaba en la respuesta final, o agotó su tope sin darla.

    M es la de la base (`M_de`): el inicio, el resumen activo y la cola posterior, no el
    historial entero."""
    M = M_de(bd, agente)
    if M[-1][0] == "asistente":
        return ("atender" if llamadas_de(M[-1][1]) else "terminar"), M
    return ("terminar" if respuestas(bd, agente) >= agente["tope"] else "pedir"), M


def a_medias(bd, agente):
    """¿Se quedó el agente a mitad de una acción? (Todo lo que no es pedir: una acción empieza
    siempre pidiendo, y sigue sin soltar al agente hasta su siguiente petición.)"""
    return donde_esta(bd, agente)[0] != "pedir"


def actuar(bd, agente, modelo, entorno, usuario, borrador, padre, copia):
    """Una acción de `agente` (ver el docstring del módulo). Devuelve "sigue" o "terminado"."""
    id = agente["id"]
    if agente["papel"] == "padre" and buzon.estado(bd, id)[0] == buzon.ESPERANDO:
        # Todos los hijos han terminado y alguno sin entrega admitida: el padre no se activará.
        with pasos.en(bd, "terminar", id, problema="algún hijo terminó sin entrega admitida"):
            buzon.terminar(bd, id, "fallida")
        return "terminado"
    que, M = donde_esta(bd, agente)
    if agente["papel"] == "padre" and len(M) == len(agente["inicio"]):
        with pasos.en(bd, "integracion", id):  # lo primero que ve el padre: lo comprobado
            historial.anotar(bd, id, guardar(("usuario", integracion(bd, padre, copia))))
        que, M = donde_esta(bd, agente)
    if que == "pedir":
        respuesta = modelo(M)
        with pasos.en(bd, "respuesta", id, final=not llamadas_de(respuesta)):
            historial.anotar(bd, id, guardar(("asistente", respuesta)))  # antes de actuar
        M = M + [("asistente", respuesta)]
        que = "atender" if llamadas_de(respuesta) else "terminar"
    if que == "terminar":
        return terminar(bd, agente, texto_de(M[-1][1]) if M[-1][0] == "asistente" else None, padre)
    M, visto = limpiar_lo_viejo(bd, agente, modelo, M)  # lección 03b: primero, lo barato
    with pasos.en(bd, "compactacion", id):
        M = CompactacionLimpia(bd, id, agente["umbral"])(visto, M)
    observaciones = [atender(bd, id, llamada, entorno, usuario, borrador) for llamada in llamadas_de(M[-1][1])]
    with pasos.en(bd, "observaciones", id):
        historial.anotar(bd, id, guardar(("usuario", observaciones)))
    return "sigue"


def medidas_de_limpiar(umbral):
    """(disparo, al_menos) de la limpieza de un agente con este umbral de compactación: los de
    limpiar.py (DISPARO y AL_MENOS, pensados para el UMBRAL de compactar.py), a su escala."""
    return umbral * DISPARO // UMBRAL, umbral * AL_MENOS // UMBRAL


def limpiar_lo_viejo(bd, agente, modelo, M):
    """La limpieza de la lección 03b, una vez por respuesta y apuntada: (M, lo que verá compactar).

    M acaba en una respuesta con llamadas. Si `limpiar` (con `medidas_de_limpiar`) libera algo,
    un paso «limpieza» apunta el turno, las llamadas limpiadas y los tokens liberados, y desde ese
    paso `M_de` las trae ya limpias. Si el proceso muere y la acción se repite, el paso ya está:
    no se limpia otra vez (M ya trae los marcadores), y compactar ve lo mismo que la primera vez,
    porque lo liberado sale del paso y no de limpiar lo que ya estaba limpio."""
    id, turno = agente["id"], respuestas(bd, agente)
    hecha = limpieza_del_turno(bd, id, turno)
    if hecha is not None:
        return M, Descontado(modelo, hecha["liberados"])
    disparo, al_menos = medidas_de_limpiar(agente["umbral"])
    limpia, liberados = limpiar(M, tokens(modelo), disparo=disparo, al_menos=al_menos)
    if not liberados:
        return M, modelo
    llamadas = [M[i][1][j]["tool_use_id"] for i, j in resultados(M) if limpia[i][1][j] != M[i][1][j]]
    bd.apuntar("limpieza", id, turno=turno, llamadas=llamadas, liberados=liberados)
    return limpia, Descontado(modelo, liberados)


def limpieza_del_turno(bd, agente, turno):
    """El detalle del paso «limpieza» de `agente` en su respuesta número `turno`, o None."""
    for (detalle,) in bd.execute("SELECT detalle FROM pasos WHERE clase='limpieza' AND agente=?", (agente,)):
        if json.loads(detalle)["turno"] == turno:
            return json.loads(detalle)
    return None


class CompactacionLimpia(CompactacionDurable):
    """La `CompactacionDurable` de la lección 04 para una M con resultados limpiados: lo que lee
    del almacén lleva los marcadores de `M_de`. Sin eso, la M limpia no empezaría por lo que
    guarda la base, y la compactación se negaría (su ValueError)."""

    def desde_el_almacen(self, inicio):
        M = con_marcadores(super().desde_el_almacen(inicio), limpiados(self.bd, self.ejecucion))
        self.vista = list(M)
        return M


def terminar(bd, agente, texto, padre):
    """El final de un agente: un hijo entrega por el buzón (o falla, diciendo por qué); el padre
    queda completado, y su informe es su última respuesta."""
    id = agente["id"]
    if agente["papel"] == "padre":
        with pasos.en(bd, "terminar", id, completada=texto is not None):
            buzon.terminar(bd, id, "completada" if texto is not None else "fallida")
        return "terminado"
    carga, problema = leer_entrega(texto)
    if problema is None:
        try:
            validar_entrega(encargo_de(bd, padre, id), carga)
        except ValueError as e:
            problema = str(e)
    if problema is None:
        entrega = f"{padre}/{id}/1"  # la identidad de ESTA entrega: la misma en cada intento
        with pasos.en(bd, "recibir", id, entrega=entrega):
            buzon.recibir(bd, padre, id, entrega, carga)
        with pasos.en(bd, "admitir", id, entrega=entrega):
            buzon.admitir(bd, entrega)
    with pasos.en(bd, "terminar", id, problema=problema):
        buzon.terminar(bd, id, "fallida" if problema else "completada")
    return "terminado"


def encargo_de(bd, padre, hijo):
    (encargo,) = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?",
                            (padre, hijo)).fetchone()
    return json.loads(encargo)


def integracion(bd, padre, copia):
    """El mensaje con que empieza el padre: las entregas de sus hijos comprobadas contra los
    ficheros de la copia de trabajo (`subagentes.integrar`, lección 05), una línea por hallazgo.
    La conclusión no la saca el harness: es del problema, y la saca el padre de lo comprobado."""
    hecho = subagentes.integrar(bd, padre, copia)
    lineas = ["Entregas de tus hijos, comprobadas contra los ficheros de la copia de trabajo:"]
    lineas += [f"✔ {f['hallazgo']} [{f['referencia']}]" for f in hecho["verificados"]]
    lineas += [f"✘ {f['hallazgo']} [{f['referencia']}]: {f['motivo']}" for f in hecho["descartados"]]
    lineas += [f"? {incertidumbre}" for incertidumbre in hecho["incertidumbres"]]
    lineas += ["", "Saca la conclusión de lo comprobado y escribe el informe del incidente para quien "
               "tiene que arreglarlo."]
    return "\n".join(lineas)
