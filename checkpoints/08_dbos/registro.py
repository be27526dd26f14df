"""El registro durable de una ejecución con varios agentes: todo lo que hace falta para seguir.

Lección 06. Un solo fichero SQLite guarda la ejecución entera. Sobre las tablas de la lección 04
(el historial de cada agente, sus resúmenes) y de la 05 (el estado de cada ejecución, los hijos
esperados, el buzón y la trayectoria del padre), esta lección añade:

- `curso`: de qué versión del curso es el fichero y dónde está la copia de trabajo;
- `agentes`: cada agente con lo que no cambia durante la ejecución: su papel, su modelo, el
  principio de su M, las herramientas que se le ofrecen, lo que puede editar, dónde actúan sus
  herramientas, su umbral de compactación y su tope de turnos;
- `llamadas`: cada llamada con efectos (una edición) apuntada como INTENCIÓN antes de hacerla y
  con su RESULTADO después (ver efectos.py);
- `pasos`: cada paso durable, numerado (ver pasos.py).

Dónde está cada agente no se guarda aparte: se deduce de su historial (¿acaba en una respuesta
con llamadas pendientes, en sus observaciones, en una respuesta final?) y de su estado en
`ejecuciones`. Lo que no se guarda dos veces no puede contradecirse.
"""
import json
from pathlib import Path

import buzon
import pasos
from durable import recuperar
from historial import transaccion

VERSION = "construye-tu-agente/06"  # cambia si cambia el esquema de esta lección
NOMBRE_DE_LA_BASE = "todo_junto.db"

TABLAS = (
    "CREATE TABLE IF NOT EXISTS curso (clave TEXT PRIMARY KEY, valor TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS agentes (
        id TEXT PRIMARY KEY REFERENCES ejecuciones(id),
        papel TEXT NOT NULL CHECK (papel IN ('padre', 'hijo')),
        orden INTEGER NOT NULL UNIQUE,      -- el turno de cada uno en el reparto
        modelo TEXT NOT NULL,               -- el campo model de sus peticiones
        inicio TEXT NOT NULL,               -- JSON: el principio de su M, [[rol, contenido], ...]
        herramientas TEXT NOT NULL,         -- JSON: los nombres de las que se le ofrecen
        escritura TEXT NOT NULL,            -- JSON: las rutas que puede editar ([] = ninguna)
        carpeta TEXT NOT NULL,              -- dónde actúan sus herramientas, desde la de la ejecución
        umbral INTEGER NOT NULL CHECK (umbral > 0),
        tope INTEGER NOT NULL CHECK (tope > 0)
    )""",
    """CREATE TABLE IF NOT EXISTS llamadas (
        agente TEXT NOT NULL REFERENCES agentes(id),
        id TEXT NOT NULL,                   -- el id del tool_use
        nombre TEXT NOT NULL,
        entrada TEXT NOT NULL,              -- JSON
        antes TEXT,                         -- la huella del fichero antes de editarlo
        despues TEXT,                       -- la huella que tendrá si la edición se aplica
        esperado TEXT,                      -- la observación que dará si se aplica
        resultado TEXT,                     -- el bloque tool_result, en JSON, cuando se sabe
        PRIMARY KEY (agente, id)
    )""",
    pasos.ESQUEMA,
)


def abrir(ruta, vida=0):
    """La base de `ruta` con las tablas de las lecciones 04, 05 y 06, envuelta en `pasos.Conexion`."""
    bd = pasos.Conexion(buzon.abrir_buzon(ruta), vida)
    nombres = {n for (n,) in bd.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"curso", "agentes", "llamadas", "pasos"} <= nombres:
        with pasos.en(bd, "esquema"), transaccion(bd):
            for sentencia in TABLAS:
                bd.execute(sentencia)
    return bd


def dato(bd, clave):
    """El valor de `clave` en la tabla `curso`, o None."""
    fila = bd.execute("SELECT valor FROM curso WHERE clave=?", (clave,)).fetchone()
    return fila and fila[0]


def agentes(bd):
    """Los agentes, en su orden: dicts con las columnas de `agentes`, el JSON ya leído."""
    filas = bd.execute("SELECT id, papel, orden, modelo, inicio, herramientas, escritura, carpeta, "
                       "umbral, tope FROM agentes ORDER BY orden").fetchall()
    claves = ("id", "papel", "orden", "modelo", "inicio", "herramientas", "escritura", "carpeta",
              "umbral", "tope")
    leidos = []
    for fila in filas:
        agente = dict(zip(claves, fila, strict=True))
        for clave in ("herramientas", "escritura"):
            agente[clave] = json.loads(agente[clave])
        agente["inicio"] = [tuple(m) for m in json.loads(agente["inicio"])]
        leidos.append(agente)
    return leidos


def crear_agente(bd, id, papel, orden, modelo, inicio, herramientas, carpeta, umbral, tope, escritura=()):
    """Añade un agente. Su ejecución (lección 04) tiene que existir ya: la del padre la crea
    `buzon.crear_padre`; la de un hijo, `historial.crear_ejecucion`."""
    with pasos.en(bd, "agente", id), transaccion(bd):
        bd.execute("INSERT INTO agentes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (id, papel, orden, modelo, json.dumps(inicio, ensure_ascii=False),
                    json.dumps(list(herramientas)), json.dumps(list(escritura)), str(carpeta),
                    umbral, tope))


def historial(bd, agente):
    """Todos los mensajes de `agente`, en orden, también los que un resumen ya cubre."""
    return [recuperar(t) for (t,) in bd.execute(
        "SELECT texto FROM historial WHERE ejecucion=? ORDER BY seq", (agente,))]


def estado(bd, agente):
    """El estado de la ejecución de `agente` (lección 05): 'en_marcha', 'completada'..."""
    return buzon.estado(bd, agente)[0]


def carpeta_de(ruta_bd, agente):
    """La carpeta donde actúan las herramientas de `agente`."""
    return Path(ruta_bd).resolve().parent / agente["carpeta"]
