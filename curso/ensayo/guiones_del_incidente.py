"""Para la lección 05: los guiones del incidente, `guion:hijo-logs`, `guion:hijo-config` y `guion:solo`.

El proyecto es curso/material/datos/incidente/: una API que no llega a su base de datos. Sus registros
dicen que conecta con db:5433 y la configuración de la base dice que escucha en el 5432.

- `hijo-logs`: un hijo con los registros (logs/). Busca los fallos de conexión, lee
  logs/api.log y entrega tres hallazgos, cada uno con su cita y su referencia
  (`logs/api.log:7` y «connect to db:5433 failed: connection refused»).
- `hijo-config`: un hijo con la configuración (config/). Lee config/db.toml, intenta ejecutar
  `ss -ltn` aunque no se le ofrece esa herramienta (un modelo pequeño lo hace: el harness se la
  niega), busca «puerto» y entrega dos hallazgos. El segundo está MAL A PROPÓSITO: confunde dos
  líneas vecinas de config/db.toml y cita «max_conexiones = 20» en la línea de
  `max_conexiones = 100` (el 20 es de `conexiones_reservadas`, la línea siguiente). La
  integración por evidencia lo descarta; una votación, o fiarse del hijo, lo daría por bueno.
- `solo`: un único agente que lo investiga todo él mismo: lee el README, los dos registros y
  las dos configuraciones, y busca. Más turnos y una M más larga; es la comparación de
  «¿compensa delegar?».

Todos terminan con un texto que es la entrega en JSON: hallazgos, referencias (una por hallazgo,
en su orden) e incertidumbres. Como todo guion, solo miran la petición: el turno es el número de
mensajes del asistente, y lo que citan (números de línea y fragmentos) sale de las observaciones
que el propio modelo recibió antes, no de leer los ficheros por su cuenta.
"""
import json
import re

from curso.ensayo.guiones import (contenido_de_resultado, guion, id_llamada, llamada, texto,
                                  turnos_asistente)

PATRON_DE_FALLOS = "connection (refused|reset)|giving up"  # lo que buscan en los registros
PATRON_DE_PUERTOS = "puerto"  # lo que buscan en la configuración
REGISTRO_DE_LA_API = "logs/api.log"
CONFIG_DE_LA_BASE = "config/db.toml"

# Lo que el hijo de los registros cita de logs/api.log: (expresión del fragmento, hallazgo).
# `{puerto}` es el puerto que sale en el propio fragmento.
CITAS_DEL_REGISTRO = [
    (r"using DATABASE_URL=\S+",
     "La API toma la dirección de la base de DATABASE_URL, que apunta a db en el puerto {puerto}"),
    (r"connect to \S+ failed: connection refused",
     "La API no llega a la base: desde el primer intento, db rechaza la conexión en el puerto {puerto}"),
    (r"giving up after \d+ attempts",
     "La API deja de reintentar y se queda sin base de datos"),
]
PUERTO = re.compile(r"(?:puerto\s*=\s*|:)(\d{1,5})(?!\d)")  # «db:5433», «puerto = 5432», «db:80»


# --- Leer lo que trae la petición -------------------------------------------------------------

def observaciones(peticion):
    """[(nombre, entrada, texto, es_error)] de cada llamada ya contestada que trae la petición."""
    pedidas, vistas = {}, []
    for mensaje in peticion["messages"]:
        if not isinstance(mensaje["content"], list):
            continue
        for b in mensaje["content"]:
            if b["type"] == "tool_use":
                pedidas[b["id"]] = (b["name"], b["input"])
            elif b["type"] == "tool_result" and b["tool_use_id"] in pedidas:
                nombre, entrada = pedidas[b["tool_use_id"]]
                vistas.append((nombre, entrada, contenido_de_resultado(b), bool(b.get("is_error"))))
    return vistas


def ultima(peticion, nombre, **entrada):
    """El texto de la última observación sin error de `nombre` con esa entrada, o ""."""
    textos = [t for n, e, t, error in observaciones(peticion)
              if n == nombre and not error and all(e.get(k) == v for k, v in entrada.items())]
    return textos[-1] if textos else ""


def entregar(hallazgos, referencias, incertidumbres):
    """El texto final: la entrega en JSON, en una línea, como la escribiría el modelo."""
    return [texto(json.dumps({"hallazgos": hallazgos, "referencias": referencias,
                              "incertidumbres": incertidumbres}, ensure_ascii=False))]


# --- Los hallazgos, sacados de las observaciones --------------------------------------------

def hallazgos_del_registro(registro):
    """(hallazgos, referencias) de una lectura de logs/api.log: la primera línea de cada cita."""
    hallazgos, referencias = [], []
    for expresion, hallazgo in CITAS_DEL_REGISTRO:
        for numero, linea in enumerate(registro.split("\n"), 1):
            m = re.search(expresion, linea)
            if m:
                puerto = PUERTO.search(m.group(0))
                frase = hallazgo.format(puerto=puerto.group(1) if puerto else "?")
                hallazgos.append(f"{frase}: «{m.group(0)}»")
                referencias.append(f"{REGISTRO_DE_LA_API}:{numero}")
                break
    return hallazgos, referencias


def hallazgo_del_puerto(busqueda):
    """(hallazgo, referencia) del puerto de la base en una búsqueda de «puerto», o (None, None)."""
    for linea in busqueda.split("\n"):
        m = re.match(rf"({re.escape(CONFIG_DE_LA_BASE)}):(\d+): .*?(puerto\s*=\s*(\d+))", linea)
        if m:  # el número, el de esa misma línea, tenga las cifras que tenga (un alumno puede editarla)
            return (f"La base de datos escucha en el puerto {m.group(4)}: «{m.group(3)}»",
                    f"{m.group(1)}:{m.group(2)}")
    return None, None


def hallazgo_confundido(config):
    """(hallazgo, referencia) mal a propósito: la línea de max_conexiones, con el número de la
    línea siguiente (conexiones_reservadas). Ver el docstring del módulo. (None, None) si no ve
    esas líneas."""
    lineas = config.split("\n")
    maximo = next((n for n, l in enumerate(lineas, 1) if l.startswith("max_conexiones")), None)
    reservadas = next((l for l in lineas if l.startswith("conexiones_reservadas")), "")
    numero = re.search(r"\d+", reservadas)
    if maximo is None or numero is None:
        return None, None
    return (f"La base admite muy pocas conexiones a la vez, y eso podría rechazar a la API: "
            f"«max_conexiones = {numero.group(0)}»", f"{CONFIG_DE_LA_BASE}:{maximo}")


# --- Los guiones ------------------------------------------------------------------------------

@guion("hijo-logs")
def hijo_logs(peticion):
    """El hijo de los registros: busca, lee logs/api.log y entrega (3 turnos)."""
    turno = turnos_asistente(peticion) + 1
    i = id_llamada(turno)
    if turno == 1:
        return [texto("Busco en los registros los fallos de conexión."),
                llamada(i, "buscar", patron=PATRON_DE_FALLOS, ruta="logs")]
    if turno == 2:
        return [texto("Los rechazos son de logs/api.log; el reset de logs/cola.log es de otro "
                      "servicio. Leo api.log entero para ver adónde intenta conectar."),
                llamada(i, "leer", ruta=REGISTRO_DE_LA_API)]
    registro = ultima(peticion, "leer", ruta=REGISTRO_DE_LA_API)
    hallazgos, referencias = hallazgos_del_registro(registro)
    incertidumbres = ["No he visto la configuración de la base: no sé en qué puerto escucha.",
                      "La conexión perdida con cola:6379 (logs/cola.log) es del servicio de cola: "
                      "no la relaciono con la base."]
    if not registro:
        incertidumbres.insert(0, f"No he podido leer {REGISTRO_DE_LA_API}.")
    return entregar(hallazgos, referencias, incertidumbres)


def mira_los_puertos(turno, i):
    """Los turnos 2 y 3 del hijo de la configuración (el de la lección 05 y el que anota de la 06):
    intenta ver los puertos abiertos con una orden, que no tiene, y los busca en la configuración."""
    if turno == 2:
        return [texto("Compruebo qué puertos están escuchando de verdad en la máquina."),
                llamada(i, "ejecutar", comando="ss -ltn")]
    return [texto("No puedo ejecutar órdenes. Busco los puertos en la configuración."),
            llamada(i, "buscar", patron=PATRON_DE_PUERTOS, ruta="config")]


@guion("hijo-config")
def hijo_config(peticion):
    """El hijo de la configuración: lee, intenta ejecutar (se le niega), busca y entrega (4 turnos)."""
    turno = turnos_asistente(peticion) + 1
    i = id_llamada(turno)
    if turno == 1:
        return [llamada(i, "leer", ruta=CONFIG_DE_LA_BASE)]
    if turno in (2, 3):
        return mira_los_puertos(turno, i)
    hallazgos, referencias = [], []
    for hallazgo, referencia in (hallazgo_del_puerto(ultima(peticion, "buscar", patron=PATRON_DE_PUERTOS)),
                                 hallazgo_confundido(ultima(peticion, "leer", ruta=CONFIG_DE_LA_BASE))):
        if hallazgo:
            hallazgos.append(hallazgo)
            referencias.append(referencia)
    return entregar(hallazgos, referencias, [
        "No sé a qué puerto intenta conectar la API: ni sus registros ni su DATABASE_URL están "
        "entre mis recursos.",
        "No he podido comprobar qué puertos escuchan de verdad: no puedo ejecutar órdenes."])


# El agente en solitario: lo lee todo, en este orden, y después entrega.
PASOS_EN_SOLITARIO = [
    ("leer", {"ruta": "README.md"}),
    ("buscar", {"patron": PATRON_DE_FALLOS, "ruta": "logs"}),
    ("leer", {"ruta": REGISTRO_DE_LA_API}),
    ("leer", {"ruta": "logs/cola.log"}),
    ("leer", {"ruta": CONFIG_DE_LA_BASE}),
    ("leer", {"ruta": "config/cola.toml"}),
    ("buscar", {"patron": PATRON_DE_PUERTOS, "ruta": "config"}),
]


@guion("solo")
def solo(peticion):
    """Un agente que investiga todo él mismo: siete llamadas y la entrega (8 turnos)."""
    turno = turnos_asistente(peticion) + 1
    if turno <= len(PASOS_EN_SOLITARIO):
        nombre, entrada = PASOS_EN_SOLITARIO[turno - 1]
        return [llamada(id_llamada(turno), nombre, **entrada)]
    hallazgos, referencias = hallazgos_del_registro(ultima(peticion, "leer", ruta=REGISTRO_DE_LA_API))
    hallazgo, referencia = hallazgo_del_puerto(ultima(peticion, "buscar", patron=PATRON_DE_PUERTOS))
    if hallazgo:
        hallazgos.append(hallazgo)
        referencias.append(referencia)
    return entregar(hallazgos, referencias, [
        "No veo el valor de DATABASE_URL del despliegue: se fija fuera de este repositorio.",
        "La conexión perdida con cola:6379 (logs/cola.log) es del servicio de cola y se recuperó "
        "en un segundo: no la relaciono con la base."])


# --- La conclusión, sacada de lo comprobado (la de la lección 05 y la del padre guionizado de la 06) ---

CITA = re.compile(r"«([^«»]+)»")  # lo que un hallazgo cita del fichero, entre « » (como en subagentes.py)
# El puerto dentro de una cita: «db:5433», «puerto = 5432»; no «09:11» (por eso 4 o 5 cifras, y no
# 1 a 5 como `PUERTO`, que lee un fragmento del registro que ya se sabe que lleva un puerto).
PUERTO_CITADO = re.compile(r"(?:puerto\s*=\s*|:)(\d{4,5})(?!\d)")


def concluir(verificados):
    """La conclusión, sacada solo de lo comprobado: qué puerto citan las fuentes, y si coinciden.

    `verificados` son las filas que da `subagentes.integrar` (o `verificar`): {"hallazgo",
    "referencia", ...}. Un hallazgo descartado no entra: por eso se concluye después de integrar.
    """
    puertos = {}  # puerto -> referencias que lo citan, en orden de aparición
    for fila in verificados:
        for cita in CITA.findall(fila["hallazgo"]):
            for puerto in PUERTO_CITADO.findall(cita):
                puertos.setdefault(puerto, []).append(fila["referencia"])
    if not puertos:
        return "Ningún hallazgo comprobado cita un puerto: falta evidencia para concluir."
    if len(puertos) == 1:
        (puerto, donde), = puertos.items()
        return (f"Todo lo comprobado cita el mismo puerto, {puerto} ({', '.join(donde)}): el fallo no "
                "está en el puerto.")
    partes = [f"{puerto} ({', '.join(donde)})" for puerto, donde in puertos.items()]
    return "Los puertos no coinciden: " + " frente a ".join(partes) + "."
