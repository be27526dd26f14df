"""Para la lección 06: los guiones `guion:hijo-config-anota` y `guion:padre-informe`.

La ejecución de la lección junta a un padre y dos hijos sobre el incidente de la lección 05
(curso/material/datos/incidente/). El hijo de los registros es el de la lección 05 (`hijo-logs`, tal
cual). Los otros dos son estos:

- `hijo-config-anota`: el hijo de la configuración, con una tarea más que ESCRIBE. Lee
  config/db.toml, intenta ejecutar `ss -ltn` (el harness se lo niega), busca «puerto», lee
  README.md y añade a su incidencia abierta una línea con el puerto de la base, y entrega tres
  hallazgos: el puerto, el de las conexiones confundido a propósito (como `hijo-config`) y la
  línea que ha escrito. La edición deja el texto `antiguo` en el fichero (la nota va detrás):
  aplicarla dos veces no falla, escribe la nota dos veces. Por eso el harness tiene que saber si
  ya la aplicó antes de una caída.
  Su M crece lo bastante para que la lección la compacte: contesta también a la petición del
  resumen (la que acaba en «Hora de compactar.»), y en el resumen deja las líneas de la
  configuración que aún necesita, con la forma `config/db.toml:N: texto` de `buscar`. Lo que
  entrega lo saca de las observaciones que aún trae la petición o, si ya se resumieron, de ese
  resumen.
- `hijo-config-relee`: el mismo hijo de la configuración, pero como los agentes de las
  ejecuciones de la semilla: lee ficheros enteros una y otra vez (README.md, config/db.toml,
  config/cola.toml...; `RELECTURAS`) y al final entrega el puerto de la base, sacado de la última
  lectura de config/db.toml que aún trae la petición. Es el hijo con el que los tests de la
  lección 06 ven limpiar antes de compactar: sus resultados viejos son lecturas que ya sirvieron.
- `padre-informe`: el padre, ya con las entregas de sus hijos comprobadas por el harness, escribe
  el informe del incidente con lo comprobado (las líneas que empiezan por ✔), la conclusión que
  saca de eso (`concluir`, de guiones_del_incidente.py) y lo que queda por comprobar. Cada hijo solo veía sus
  recursos, y dice lo que no pudo ver («no sé en qué puerto escucha»); si lo comprobado del otro
  hijo lo contesta, el padre no lo da por pendiente: dice qué lo contesta (`RESUELVE`). Es lo que
  se espera de quien integra, y lo que haría un modelo que lee su mensaje entero.

Como todo guion, solo miran la petición; el turno sale de `recetario.turno_de`, que sigue
contando bien después de una compactación.
"""
import re

from curso.ensayo.guiones import bloques, guion, id_llamada, llamada, texto, texto_de
from curso.ensayo.guiones_del_incidente import (CITA, CONFIG_DE_LA_BASE, PUERTO_CITADO, concluir, entregar,
                                                mira_los_puertos, hallazgo_del_puerto, observaciones, ultima)
from curso.ensayo.recetario import es_resumen, turno_de

README = "README.md"
ULTIMA_FRASE = "Nadie ha tocado la base."  # la última línea de la incidencia abierta del README
CONOCIDA = re.compile(rf"^{re.escape(CONFIG_DE_LA_BASE)}:(\d+): (.*)$", re.M)  # como las da buscar
# Las dudas de un hijo que contesta un hallazgo comprobado del otro: (lo que dice la duda, de qué
# carpeta tiene que ser la referencia del hallazgo que cita un puerto).
RESUELVE = [("en qué puerto escucha", "config/"), ("a qué puerto intenta conectar la API", "logs/")]


def nota_del_puerto(puerto):
    """La línea que el hijo añade al README."""
    return f"Según {CONFIG_DE_LA_BASE}, db escucha en el puerto {puerto}."


# --- Lo que el hijo sabe de config/db.toml, venga de donde venga ----------------------------------

def lineas_de_la_config(peticion):
    """{número: texto} de las líneas de config/db.toml que trae la petición: de su lectura, de
    una búsqueda o de un resumen anterior (que las copia con la forma de buscar)."""
    conocidas = {}
    for mensaje in peticion["messages"]:
        conocidas.update((int(n), t) for n, t in CONOCIDA.findall(texto_de(bloques(mensaje["content"]))))
    for nombre, entrada, visto, error in observaciones(peticion):
        if error:
            continue
        if nombre == "leer" and entrada.get("ruta") == CONFIG_DE_LA_BASE:
            conocidas.update(enumerate(visto.split("\n"), 1))
        else:
            conocidas.update((int(n), t) for n, t in CONOCIDA.findall(visto))
    return conocidas


def como_busqueda(conocidas, empieza):
    """Las líneas conocidas que empiezan por `empieza`, escritas como las devuelve buscar."""
    return "\n".join(f"{CONFIG_DE_LA_BASE}:{n}: {t}" for n, t in sorted(conocidas.items())
                     if t.startswith(empieza))


def puerto_de_la_base(conocidas):
    """(hallazgo, referencia, puerto) del puerto de la base, o (None, None, None)."""
    hallazgo, referencia = hallazgo_del_puerto(como_busqueda(conocidas, "puerto"))
    puerto = re.search(r"\d+", hallazgo.split("«")[1]).group(0) if hallazgo else None
    return hallazgo, referencia, puerto


def conexiones_confundidas(conocidas):
    """(hallazgo, referencia) mal a propósito, como el de `hijo-config`: la línea de
    max_conexiones con el número de la línea siguiente. (None, None) si no las conoce."""
    maximo = next((n for n, t in sorted(conocidas.items()) if t.startswith("max_conexiones")), None)
    reservadas = next((t for t in conocidas.values() if t.startswith("conexiones_reservadas")), "")
    numero = re.search(r"\d+", reservadas)
    if maximo is None or numero is None:
        return None, None
    return (f"La base admite muy pocas conexiones a la vez, y eso podría rechazar a la API: "
            f"«max_conexiones = {numero.group(0)}»", f"{CONFIG_DE_LA_BASE}:{maximo}")


def resumen(peticion):
    """Lo que el hijo escribe cuando le piden compactar: las líneas que aún necesita, tal cual."""
    conocidas = lineas_de_la_config(peticion)
    utiles = "\n".join(filter(None, (como_busqueda(conocidas, clave) for clave in
                                     ("puerto", "max_conexiones", "conexiones_reservadas"))))
    partes = [f"Lo que he visto de {CONFIG_DE_LA_BASE}:\n{utiles}" if utiles else
              f"Aún no he visto {CONFIG_DE_LA_BASE}."]
    negadas = [e for n, e, _, error in observaciones(peticion) if n == "ejecutar" and error]
    if negadas:
        partes.append("No puedo ejecutar órdenes: el harness me negó " + negadas[0].get("comando", "la orden") + ".")
    partes.append("Me falta: anotar el puerto en README.md y entregar.")
    return [texto("\n".join(partes))]


# --- Los guiones ------------------------------------------------------------------------------

@guion("hijo-config-anota")
def hijo_config_anota(peticion):
    """El hijo de la configuración que además anota el puerto en README.md (6 turnos)."""
    if es_resumen(peticion):
        return resumen(peticion)
    turno = turno_de(peticion)
    i = id_llamada(turno)
    if turno == 1:
        return [texto("Leo la configuración de la base."), llamada(i, "leer", ruta=CONFIG_DE_LA_BASE)]
    if turno in (2, 3):
        return mira_los_puertos(turno, i)
    if turno == 4:
        return [texto("Leo README.md para anotar el puerto en la incidencia abierta."),
                llamada(i, "leer", ruta=README)]
    conocidas = lineas_de_la_config(peticion)
    hallazgo, referencia, puerto = puerto_de_la_base(conocidas)
    leido = ultima(peticion, "leer", ruta=README)
    if turno == 5 and puerto and ULTIMA_FRASE in leido:
        return [texto("Añado el puerto a la incidencia abierta."),
                llamada(i, "editar", ruta=README, antiguo=ULTIMA_FRASE + "\n",
                        nuevo=f"{ULTIMA_FRASE}\n{nota_del_puerto(puerto)}\n")]
    hallazgos, referencias = [], []
    for h, r in ((hallazgo, referencia), conexiones_confundidas(conocidas)):
        if h:
            hallazgos.append(h)
            referencias.append(r)
    editado = [t for n, e, t, error in observaciones(peticion) if n == "editar" and not error]
    if editado and puerto:
        linea = next(n for n, t in enumerate(leido.split("\n"), 1) if ULTIMA_FRASE in t) + 1  # la nota, detrás
        hallazgos.append(f"He anotado el puerto en la incidencia abierta: «{nota_del_puerto(puerto)}»")
        referencias.append(f"{README}:{linea}")
    return entregar(hallazgos, referencias, [
        "No sé a qué puerto intenta conectar la API: ni sus registros ni su DATABASE_URL están "
        "entre mis recursos.",
        "No he podido comprobar qué puertos escuchan de verdad: no puedo ejecutar órdenes."])


# Lo que lee `hijo-config-relee`, un fichero entero por turno; después, entrega.
RELECTURAS = [README, CONFIG_DE_LA_BASE, "config/cola.toml"] + [README, CONFIG_DE_LA_BASE] * 3


@guion("hijo-config-relee")
def hijo_config_relee(peticion):
    """El hijo de la configuración que relee ficheros enteros (`RELECTURAS`) antes de entregar."""
    if es_resumen(peticion):
        return resumen(peticion)
    turno = turno_de(peticion)
    if turno <= len(RELECTURAS):
        ruta = RELECTURAS[turno - 1]
        return [texto(f"Leo {ruta} entero."), llamada(id_llamada(turno), "leer", ruta=ruta)]
    hallazgo, referencia, _ = puerto_de_la_base(lineas_de_la_config(peticion))
    return entregar([hallazgo] if hallazgo else [], [referencia] if referencia else [],
                    ["No sé a qué puerto intenta conectar la API: sus registros no están entre mis recursos."])


@guion("padre-informe")
def padre_informe(peticion):
    """El padre: el informe del incidente, sacado de las entregas ya comprobadas (1 turno)."""
    dicho = texto_de(bloques(peticion["messages"][-1]["content"]))
    comprobados = [linea[2:] for linea in dicho.split("\n") if linea.startswith("✔ ")]
    descartados = [linea for linea in dicho.split("\n") if linea.startswith("✘ ")]
    dudas = [linea[2:] for linea in dicho.split("\n") if linea.startswith("? ")]
    # La conclusión la saca el padre (no el harness) de lo comprobado: «hallazgo [referencia]».
    filas = [{"hallazgo": c.rsplit(" [", 1)[0], "referencia": c.rsplit(" [", 1)[-1][:-1]} for c in comprobados]
    conclusion = concluir(filas)
    contestadas = {duda: quien for duda in dudas if (quien := contesta(duda, filas))}
    partes = [f"Informe del incidente. {conclusion}", "", "Comprobado en los ficheros:"]
    partes += [f"- {c}" for c in comprobados] or ["- nada"]
    partes += ["", f"Descartado por no coincidir con su fuente: {len(descartados)} hallazgo(s).",
               "", "Queda por comprobar:"]
    partes += [f"- {p}" for p in dudas if p not in contestadas] or ["- nada"]
    if contestadas:
        partes += ["", "Lo que un hijo no podía ver lo ha comprobado el otro:"]
        partes += [f"- «{duda}»: contestado en {quien}." for duda, quien in contestadas.items()]
    return [texto("\n".join(partes))]


def contesta(duda, filas):
    """Las referencias de los hallazgos comprobados que contestan `duda` (ver RESUELVE), o None."""
    for dice, carpeta in RESUELVE:
        if dice in duda:
            refs = [f["referencia"] for f in filas if f["referencia"].startswith(carpeta)
                    and any(PUERTO_CITADO.search(cita) for cita in CITA.findall(f["hallazgo"]))]
            return ", ".join(refs) or None
    return None
