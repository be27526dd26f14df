"""Para la lección 06 y sus tests: los carriles de la línea de tiempo de una ejecución, sacada de su base, sin widgets.

La línea de tiempo de una ejecución de la lección 06, sacada de su base: la lógica pura del
explorable (la vista fina, con ipywidgets, va aparte).

Un carril por agente. En cada carril, en el orden de los pasos durables (la tabla `pasos`, ver
pasos.py del punto de control 06):

- cada petición al modelo, con sus tokens de entrada frente a la ventana (una barra);
- cada compactación, cada entrega (recibida y admitida son dos marcas: dos pasos distintos), la
  activación del padre, y cada caída y reanudación del proceso (una vida nueva).

`describir(paso)` cuenta un paso con palabras (no con la etiqueta que guarda la base), y
`antes_de_la_caida(datos)` es el último paso de la primera vida que cayó: donde se abre el widget.

`estado_tras(datos, i)` dice qué guardaba la base justo después del paso i: para cada agente,
cuántos mensajes tiene su M, su resumen activo, sus llamadas pendientes y sus intenciones sin
resultado; y las filas del buzón. Todo se deduce de los pasos en orden: cada paso de clase
respuesta, observaciones o integración añade un mensaje al historial de su agente, y cada
compactación instala el siguiente resumen de ese agente.
"""
import json
import sqlite3
from collections import Counter

from curso.ensayo.tokens import VENTANA  # la del servidor de ensayo y la de `llama-server -c 8192`

AÑADEN_UN_MENSAJE = ("respuesta", "observaciones", "integracion")
MARCAS = ("peticion", "limpieza", "compactacion", "recibir", "admitir", "activacion", "reintento", "intencion",
          "resultado", "terminar")


def leer(ruta):
    """Todo lo que la línea de tiempo necesita de la base de `ruta`, leído con SQL directo."""
    bd = sqlite3.connect(ruta)
    try:
        agentes = [{"id": i, "papel": p, "inicio": len(json.loads(ini))} for i, p, ini in bd.execute(
            "SELECT id, papel, inicio FROM agentes ORDER BY orden")]
        pasos = [{"n": n, "vida": v, "clase": c, "agente": a, "detalle": json.loads(d)} for n, v, c, a, d in
                 bd.execute("SELECT n, vida, clase, agente, detalle FROM pasos WHERE vida >= 1 ORDER BY n")]
        historiales = {}
        for ejecucion, texto in bd.execute("SELECT ejecucion, texto FROM historial ORDER BY ejecucion, seq"):
            historiales.setdefault(ejecucion, []).append(json.loads(texto))
        resumenes = {}
        for ejecucion, id, cobertura in bd.execute("SELECT ejecucion, id, cobertura FROM resumenes ORDER BY id"):
            resumenes.setdefault(ejecucion, []).append((id, cobertura))
        esperados = {}
        for padre, hijo in bd.execute("SELECT padre, hijo FROM hijos_esperados"):
            esperados.setdefault(padre, set()).add(hijo)
    finally:
        bd.close()
    return {"agentes": agentes, "pasos": pasos, "historiales": historiales, "resumenes": resumenes,
            "esperados": esperados}


def _quien(paso):
    return paso["agente"] or "el proceso"


def describir(paso):
    """Un paso durable en palabras: «config apunta su intención de editar README.md»."""
    clase, agente, detalle = paso["clase"], _quien(paso), paso["detalle"]
    if clase == "vida":
        return (f"arranca el proceso (vida {paso['vida']})" if paso["vida"] <= 1 else
                f"arranca otro proceso tras la caída (vida {paso['vida']})")
    if clase == "peticion":
        u = detalle.get("usage", {})
        tokens = u.get("input_tokens", 0) + u.get("cache_read_input_tokens", 0)
        que = "un resumen" if detalle.get("resumen") else "su respuesta siguiente"
        return f"{agente} pide al modelo {que} ({tokens} tokens de entrada)"
    if clase == "respuesta":
        return f"{agente} guarda la respuesta " + (
            "final del modelo" if detalle.get("final") else "del modelo, que llama a herramientas")
    if clase == "terminar":
        problema = detalle.get("problema")
        return f"{agente} termina" + (f": {problema}" if problema else "")
    if clase == "intencion":
        ruta = detalle.get("ruta")
        return f"{agente} apunta su intención de editar" + (f" {ruta}" if ruta else "") + ", antes de editar"
    if clase in ("recibir", "admitir"):
        entrega = detalle.get("entrega", "")
        return (f"llega la entrega {entrega} de {agente}: recibida" if clase == "recibir" else
                f"se admite la entrega {entrega} de {agente}")
    frases = {
        "observaciones": "{} guarda lo que observaron sus herramientas",
        "integracion": "{} pasa a su historial lo que entregaron sus hijos",
        "compactacion": "{} instala un resumen (compactación)",
        "limpieza": "{} limpia resultados viejos de su M (lección 03b)",
        "resultado": "{} apunta el resultado de su edición",
        "reintento": "{} reintenta la petición al modelo",
    }
    return frases[clase].format(agente) if clase in frases else f"paso «{clase}» de {agente}"


def antes_de_la_caida(datos):
    """El índice (desde 0) del último paso antes de la primera caída, o None si no cayó nunca: el
    que precede al primer paso de una vida nueva (la reanudación)."""
    return next((i - 1 for i, p in enumerate(datos["pasos"]) if p["clase"] == "vida" and p["vida"] > 1 and i > 0),
                None)


def _llamadas(mensaje):
    rol, contenido = mensaje
    return [b["name"] for b in contenido if b.get("type") == "tool_use"] if rol == "asistente" else []


def estados(datos):
    """[estado tras cada paso]: ver `estado_tras`. Se calculan todos de una pasada."""
    largo = {a["id"]: 0 for a in datos["agentes"]}  # mensajes del historial de cada agente
    instalados = {a["id"]: 0 for a in datos["agentes"]}
    intenciones = {a["id"]: [] for a in datos["agentes"]}
    rutas = {}  # llamada -> el fichero que iba a editar, si la intención lo dice
    buzon, admitidos, activado, lista = {}, set(), None, []
    padres = {a["id"] for a in datos["agentes"] if a["papel"] == "padre"}
    for i, paso in enumerate(datos["pasos"]):
        agente, clase, detalle = paso["agente"], paso["clase"], paso["detalle"]
        if clase in AÑADEN_UN_MENSAJE:
            largo[agente] += 1
        elif clase == "compactacion":
            instalados[agente] += 1
        elif clase == "intencion":
            intenciones[agente].append(detalle.get("llamada"))
            if detalle.get("ruta"):
                rutas[detalle.get("llamada")] = detalle["ruta"]
        elif clase == "resultado" and detalle.get("llamada") in intenciones[agente]:
            intenciones[agente].remove(detalle["llamada"])
        elif clase == "recibir":
            buzon[detalle["entrega"]] = "recibida"
        elif clase == "admitir":
            buzon[detalle["entrega"]] = "admitida"
            admitidos.add(agente)
            for padre in padres:
                if activado is None and datos["esperados"].get(padre, set()) <= admitidos:
                    activado = i
        agentes = {}
        for a in datos["agentes"]:
            id, historial = a["id"], datos["historiales"].get(a["id"], [])
            resumen = datos["resumenes"].get(id, [])[instalados[id] - 1] if instalados[id] else None
            cobertura = resumen[1] if resumen else 0
            ultimo = historial[largo[id] - 1] if largo[id] else None
            agentes[id] = {
                "M": a["inicio"] + (1 if resumen else 0) + largo[id] - cobertura,
                "historial": largo[id], "resumen": resumen and resumen[0], "cobertura": cobertura,
                "pendientes": _llamadas(ultimo) if ultimo else [],
                "intenciones": list(intenciones[id]),
                "ediciones": [f"editar {rutas[llamada]} (llamada {llamada})" if llamada in rutas else
                              f"llamada {llamada}" for llamada in intenciones[id]],
            }
        lista.append({"paso": paso, "agentes": agentes, "buzon": dict(buzon), "activado": activado is not None})
    return lista


def estado_tras(datos, i):
    """Lo que guardaba la base justo después del paso i (desde 0): {"paso", "agentes": {id: {"M",
    "historial", "resumen", "cobertura", "pendientes", "intenciones", "ediciones"}}, "buzon":
    {entrega: disposición}, "activado": bool}. `intenciones` son los ids de las llamadas;
    `ediciones`, lo mismo en palabras («editar README.md (llamada …)»)."""
    return estados(datos)[i]


def carriles(datos, ventana=VENTANA):
    """{agente: [marca, ...]}: las marcas de cada carril en orden. Cada marca es un dict con
    "i" (el paso, desde 0), "clase" y, si es una petición, "tokens", "fraccion" (de la ventana) y
    "resumen" (si era la petición de un resumen). Las caídas y reanudaciones van en todos los
    carriles: una caída justo después del último paso de una vida que no terminó, y una
    reanudación en el primer paso de la vida siguiente."""
    marcas = {a["id"]: [] for a in datos["agentes"]}
    padres = [a["id"] for a in datos["agentes"] if a["papel"] == "padre"]
    activado = next((j for j, e in enumerate(estados(datos)) if e["activado"]), None)
    for i, paso in enumerate(datos["pasos"]):
        clase, agente = paso["clase"], paso["agente"]
        if clase == "vida" and paso["vida"] > 1:
            for lista in marcas.values():
                lista.append({"i": i - 1, "clase": "caida"})
                lista.append({"i": i, "clase": "reanudacion"})
        elif clase == "peticion":
            u = paso["detalle"]["usage"]
            tokens = u["input_tokens"] + u.get("cache_read_input_tokens", 0)
            marcas[agente].append({"i": i, "clase": clase, "tokens": tokens, "fraccion": tokens / ventana,
                                   "resumen": paso["detalle"].get("resumen", False)})
        elif clase in MARCAS and agente in marcas:
            marcas[agente].append({"i": i, "clase": clase, **({"entrega": paso["detalle"]["entrega"]}
                                                               if "entrega" in paso["detalle"] else {})})
        if i == activado:
            for padre in padres:
                marcas[padre].append({"i": i, "clase": "activacion"})
    return marcas


def veredicto(datos, i):
    """El texto de lo que pasó en el paso i (en palabras: `describir`) y de lo que guarda la base
    justo después."""
    e = estado_tras(datos, i)
    paso = e["paso"]
    lineas = [f"Paso {i + 1} de {len(datos['pasos'])} · vida {paso['vida']} · {describir(paso)}"]
    for id, a in e["agentes"].items():
        partes = [f"M de {a['M']} mensajes ({a['historial']} en su historial)"]
        if a["resumen"]:
            partes.append(f"resumen {a['resumen']} activo, que cubre sus mensajes 1 a {a['cobertura']}")
        if a["pendientes"]:
            partes.append("llamadas sin observar: " + ", ".join(a["pendientes"]))
        if a["ediciones"]:
            partes.append("intenciones sin resultado: " + ", ".join(a["ediciones"]))
        lineas.append(f"  {id}: " + " · ".join(partes))
    buzon = ", ".join(f"{entrega} {d}" for entrega, d in sorted(e["buzon"].items())) or "vacío"
    lineas.append(f"  buzón: {buzon}" + (" · el padre ya está activado" if e["activado"] else ""))
    return "\n".join(lineas)


def resumen(datos, ventana=VENTANA):
    """Una línea por carril: peticiones, la mayor frente a la ventana, compactaciones, entregas;
    y cuántas vidas tuvo el proceso."""
    lineas = []
    for agente, marcas in carriles(datos, ventana).items():
        peticiones = [m for m in marcas if m["clase"] == "peticion"]
        mayor = max((m["tokens"] for m in peticiones), default=0)
        cuenta = Counter(m["clase"] for m in marcas)
        lineas.append(f"{agente}: peticiones: {len(peticiones)} ({sum(m['resumen'] for m in peticiones)} de "
                      f"resumen), la mayor de {mayor} tokens ({mayor / ventana:.0%} de la ventana) · "
                      f"compactaciones: {cuenta['compactacion']} · entregas recibidas: {cuenta['recibir']}, "
                      f"admitidas: {cuenta['admitir']}" + (" · activado" if cuenta["activacion"] else ""))
    vidas = max((p["vida"] for p in datos["pasos"]), default=0)
    lineas.append(f"{len(datos['pasos'])} pasos en {vidas} vida{'s' if vidas != 1 else ''} del proceso "
                  f"(reanudaciones: {vidas - 1})")
    return "\n".join(lineas)
