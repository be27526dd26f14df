"""Para la lección 08: la línea de tiempo de la 06 con los pasos de DBOS, las caídas y lo que DBOS rehízo.

Lógica pura (la vista es la de la 06: `widget_de_la_linea.carriles_html`). Lee la base del sistema de
DBOS de una ejecución del port (las salidas guardadas de `operation_outputs`, en su orden) y el
diario del simulacro (curso/material/simulacro_dbos.py: cuándo arrancó cada proceso y qué
herramienta se ejecutó de verdad, con su hora), y arma los mismos `datos` que
`carriles.leer` saca de una base de la 06, para que `carriles.carriles` y la vista los dibujen:

- una petición al modelo (el paso `pedir`) es una barra, morada si es la de un resumen (la que sigue
  a otra petición sin herramientas en medio: así llama `compactar` al modelo);
- la intención de editar y la edición (8.1) son ✎ y ✓; `DBOS.send` de un hijo es ✉ en su carril, y
  el `DBOS.recv` del padre que la recibe, ✔ en el carril de ese hijo;
- cada proceso nuevo tras una caída es una caída (✖) y una reanudación (↻) en todos los carriles;
- y lo que DBOS **rehízo**: una herramienta que un proceso ejecutó después de su última salida
  guardada (murió antes de guardar ese paso), que el proceso siguiente vuelve a ejecutar. Se marca
  con ⟳ en el primer paso de ese agente en la vida siguiente.

`describir(paso)` dice un paso en palabras; `veredicto(datos, i)`, qué había guardado DBOS tras él.
"""
import json
import sqlite3
from collections import Counter
from pathlib import Path

from curso.explorables.linea_de_tiempo import carriles as ldt

CLASES = {"intencion_de_editar": "intencion", "aplicar_edicion": "resultado", "DBOS.send": "recibir"}


def _agente(workflow):
    return workflow.rsplit("/", 1)[-1]


def leer(carpeta):
    """Los `datos` de la línea de tiempo (los de `carriles.leer`) de la ejecución del port en `carpeta`."""
    carpeta = Path(carpeta)
    ejecucion = json.loads((carpeta / "ejecucion.json").read_text(encoding="utf-8"))
    bd = sqlite3.connect(carpeta / "dbos.sqlite")
    try:
        filas = bd.execute("SELECT workflow_uuid, function_id, function_name, output, completed_at_epoch_ms "
                           "FROM operation_outputs ORDER BY rowid").fetchall()  # rowid: el orden en que se guardaron
    finally:
        bd.close()
    apuntes = []
    if (carpeta / "diario.jsonl").exists():
        apuntes = [json.loads(linea) for linea in (carpeta / "diario.jsonl").read_text(encoding="utf-8").splitlines() if linea]
    vidas = sorted(a["t"] for a in apuntes if a.get("vida")) or [0]
    padre = ejecucion["padre"]["id"]
    agentes = [{"id": padre, "papel": "padre", "inicio": len(ejecucion["padre"]["inicio"])}] + [
        {"id": h["id"], "papel": "hijo", "inicio": len(h["inicio"])} for h in ejecucion["hijos"]]
    pasos, anterior = [], {}
    for workflow, numero, nombre, salida, hora in filas:
        agente = _agente(workflow)
        vida = sum(1 for v in vidas if v <= hora) or 1
        detalle, clase = {"paso": nombre}, CLASES.get(nombre, nombre)
        if nombre == "pedir":
            hecho = json.loads(salida)
            detalle.update(usage=hecho["usage"], resumen=anterior.get(workflow) == "pedir-con-llamadas")
            llama = any(b.get("type") == "tool_use" for b in hecho["respuesta"])
            anterior[workflow] = "pedir-con-llamadas" if llama and not detalle["resumen"] else "pedir"
            clase = "peticion"
        else:
            anterior[workflow] = nombre
        if nombre == "intencion_de_editar":  # la llamada: la de su edición, el paso siguiente del workflow
            detalle.update(ruta="README.md", llamada=f"{workflow}:{numero + 1}")
        if nombre == "aplicar_edicion":
            detalle.update(llamada=f"{workflow}:{numero}")
        if nombre == "DBOS.send":
            detalle.update(entrega=f"{padre}/{agente}")
        if nombre == "DBOS.recv":
            agente = json.loads(salida)["hijo"]
            clase, detalle["entrega"] = "admitir", f"{padre}/{agente}"
        pasos.append({"vida": vida, "clase": clase, "agente": agente, "detalle": detalle, "hora": hora})
    pasos = _con_vidas_y_rehechos(pasos, vidas, apuntes, ejecucion)
    for n, paso in enumerate(pasos, 1):
        paso["n"] = n
    esperados = {padre: {h["id"] for h in ejecucion["hijos"]}}
    return {"agentes": agentes, "pasos": pasos, "historiales": {}, "resumenes": {}, "esperados": esperados}


def _con_vidas_y_rehechos(pasos, vidas, apuntes, ejecucion):
    """Los pasos con uno de clase "vida" al empezar cada vida tras la primera y, detrás, uno
    "reintento" por cada herramienta que la vida anterior ejecutó sin llegar a guardar su paso."""
    carpetas = {Path(h["carpeta"]).name: h["id"] for h in ejecucion["hijos"]}
    salida, vida_de = [], 1
    for paso in pasos:
        while paso["vida"] > vida_de:
            vida_de += 1
            hasta = vidas[vida_de - 1]
            ultima = max((p["hora"] for p in salida if p.get("hora") and p["vida"] == vida_de - 1), default=0)
            sin_guardar = [a for a in apuntes if "herramienta" in a and ultima < a["t"] <= hasta
                           and not a["donde"].startswith(("borrador-", ".borrador"))]
            salida.append({"vida": vida_de, "clase": "vida", "agente": None, "detalle": {}})
            for a in sin_guardar:
                salida.append({"vida": vida_de, "clase": "reintento", "agente": carpetas.get(a["donde"]),
                               "detalle": {"herramienta": a["herramienta"], "donde": a["donde"]}})
        salida.append(paso)
    return salida


def describir(paso):
    """Un paso en palabras."""
    clase, agente, detalle = paso["clase"], paso["agente"] or "el proceso", paso["detalle"]
    if clase == "vida":
        return f"muere el proceso; otro lanza DBOS, que recupera lo pendiente (vida {paso['vida']})"
    if clase == "reintento":
        return (f"DBOS repite el paso de {agente} que llegó a {detalle['herramienta']} en {detalle['donde']} "
                "sin que se guardara su salida: al menos una vez")
    if clase == "peticion":
        u = detalle["usage"]
        que = "un resumen" if detalle["resumen"] else "su respuesta siguiente"
        return f"{agente}: DBOS guarda la petición de {que} ({u['input_tokens'] + u['cache_read_input_tokens']} tokens de entrada) y su respuesta"
    frases = {"intencion": "{}: DBOS guarda la intención de editar README.md (las huellas de antes y de después)",
              "resultado": "{}: DBOS guarda la edición, hecha tras mirar el fichero",
              "recibir": "{}: DBOS.send manda la entrega al padre (y guarda que la mandó)",
              "admitir": "el padre recibe con DBOS.recv la entrega de {}",
              "herramienta": "{}: DBOS guarda lo que observó una herramienta",
              "preparar_vista": "{}: DBOS guarda que preparó su vista",
              "integrar": "{}: DBOS guarda la integración de las entregas, comprobadas contra los ficheros",
              "hijo": "{}: empieza un workflow hijo", "DBOS.getResult": "{}: DBOS guarda lo que devolvió un hijo",
              "DBOS.sleep": "{}: DBOS guarda hasta cuándo esperará el mensaje"}
    return frases.get(clase, "{}: paso «" + clase + "»").format(agente)


def veredicto(datos, i):
    """Lo que pasó en el paso i (desde 0) y lo que DBOS tenía guardado justo después: cuántas
    salidas de paso de cada agente."""
    paso = datos["pasos"][i]
    guardados = Counter(p["agente"] for p in datos["pasos"][:i + 1] if p["clase"] not in ("vida", "reintento"))
    lineas = [f"Paso {i + 1} de {len(datos['pasos'])} · vida {paso['vida']} · {describir(paso)}"]
    lineas += [f"  {a['id']}: {guardados[a['id']]} salidas de paso guardadas" for a in datos["agentes"]]
    return "\n".join(lineas)


def rehechos(datos):
    """Los pasos «reintento»: lo que DBOS rehízo tras una caída."""
    return [p for p in datos["pasos"] if p["clase"] == "reintento"]


def resumen(datos):
    """Como `carriles.resumen`, con lo rehecho."""
    return ldt.resumen(datos) + f"\nrehecho tras una caída: {len(rehechos(datos))} paso(s)"
