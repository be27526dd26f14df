"""El buzón durable: los hijos entregan, el padre admite, y nada se pierde ni se repite.

Lo introduce la lección 05. Un padre (una ejecución del agente) reparte trabajo de solo lectura
entre unos hijos, cada uno con su encargo, y espera sus resultados. Cuando un hijo acaba, puede
que nadie del lado del padre esté escuchando (ocupado en otra cosa, parado o a medio arrancar): por
eso entregar no es llamar a una función del padre en memoria, sino escribir una fila en la base de
datos de la lección 04, que sigue ahí aunque el proceso caiga.

Dos pasos separados:

- `recibir()` guarda la entrega en el `buzon` y contesta al transporte. Si el transporte la
  repite (perdió la respuesta), la identidad estable de la entrega la reconoce: «duplicada».
- `admitir()` la incorpora a la trayectoria del padre (`mensajes`), la marca como admitida y,
  si con ella cada hijo esperado tiene ya una entrega admitida (recibida no basta), pasa al
  padre de 'esperando' a 'en_cola'. Las tres
  cosas en UNA transacción: si el proceso cae a mitad, no queda ninguna. A un padre terminado
  no se le añade nada: su entrega se guarda como 'tardia'.

Las tablas, sobre la base de la lección 04:

- `ejecuciones` (de la lección 04) gana dos columnas: `estado` y `version`;
- `hijos_esperados`: a qué hijos espera cada padre, y el encargo de cada uno;
- `buzon`: cada entrega recibida, tal cual llegó, y qué se decidió de ella;
- `mensajes`: la trayectoria del padre, numerada, con una fila por entrega admitida.

El encargo es un contrato: `validar_encargo()` comprueba el que se da a un hijo y
`validar_entrega()` que la entrega cumpla con él; `recibir()` lo aplica si el hijo tiene uno.
"""
import json
import math
import sys
from datetime import datetime
from pathlib import PurePosixPath

from resumenes import abrir, muestra, transaccion

# --- Estados y disposiciones -----------------------------------------------------------------

ESPERANDO = "esperando"    # el padre espera a sus hijos: no hay nada que hacer con él
EN_COLA = "en_cola"        # cada hijo tiene una entrega admitida: un trabajador puede reclamarlo
EN_MARCHA = "en_marcha"    # alguien lo está ejecutando (lo que tienen las ejecuciones de la lección 04)
TERMINALES = ("completada", "fallida", "cancelada")   # de aquí ya no se sale
ESTADOS = (ESPERANDO, EN_COLA, EN_MARCHA) + TERMINALES

RECIBIDA = "recibida"      # en el buzón, todavía fuera de la trayectoria del padre
ADMITIDA = "admitida"      # en la trayectoria del padre, con su número (`seq_admitida`)
TARDIA = "tardia"          # llegó cuando el padre ya había terminado: se guarda, no se admite
DUPLICADA = "duplicada"    # lo que contesta recibir() a una entrega que ya tenía

# Una identidad (de entrega, de padre o de hijo) nombra algo; no es un documento.
LARGO_MAXIMO_DE_IDENTIDAD = 100

# Un coordinador no delega sin límite: cuántos hijos puede esperar un padre es un control del
# arnés, no algo que decida el modelo. En la lección bastan dos.
MAXIMO_DE_HIJOS = 8

# --- El esquema ------------------------------------------------------------------------------

# Las columnas que la lección 05 añade a `ejecuciones`. Las ejecuciones que ya existían (las de
# la lección 04) quedan 'en_marcha', con versión 0.
COLUMNAS_NUEVAS = (
    ("estado",
     "ALTER TABLE ejecuciones ADD COLUMN estado TEXT NOT NULL DEFAULT 'en_marcha' CHECK (estado IN "
     "('esperando', 'en_cola', 'en_marcha', 'completada', 'fallida', 'cancelada'))"),
    # Sube en cada cambio de estado: quien leyó una versión antigua puede notarlo.
    ("version",
     "ALTER TABLE ejecuciones ADD COLUMN version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0)"),
)

TABLAS_NUEVAS = (
    # A quién espera cada padre. Se escribe al repartir el trabajo: la condición «han llegado
    # todos» se calcula sobre esta lista, nunca contando lo que llega.
    """CREATE TABLE IF NOT EXISTS hijos_esperados (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        hijo TEXT NOT NULL,
        encargo TEXT,                 -- el encargo del hijo en JSON canónico, o NULL si no tiene
        PRIMARY KEY (padre, hijo)
    )""",
    # Cada entrega recibida. `entrega` identifica la entrega, no cada intento del transporte.
    # La clave foránea (padre, hijo) impide guardar la entrega de un hijo que nadie espera.
    """CREATE TABLE IF NOT EXISTS buzon (
        entrega TEXT PRIMARY KEY,
        padre TEXT NOT NULL,
        hijo TEXT NOT NULL,
        carga TEXT NOT NULL,          -- JSON canónico: claves ordenadas, sin espacios
        disposicion TEXT NOT NULL DEFAULT 'recibida'
            CHECK (disposicion IN ('recibida', 'admitida', 'tardia')),
        seq_admitida INTEGER,         -- el número de su mensaje en la trayectoria del padre
        CHECK ((disposicion = 'admitida') = (seq_admitida IS NOT NULL)),
        FOREIGN KEY (padre, hijo) REFERENCES hijos_esperados(padre, hijo)
    )""",
    # Para buscar deprisa «¿tiene este hijo alguna entrega admitida?».
    "CREATE INDEX IF NOT EXISTS buzon_por_hijo ON buzon(padre, hijo, disposicion)",
    # La trayectoria del padre: lo que verá al reanudarse. UNIQUE en `entrega`: una misma
    # entrega no puede aparecer dos veces, pase lo que pase con el código de arriba.
    """CREATE TABLE IF NOT EXISTS mensajes (
        padre TEXT NOT NULL REFERENCES ejecuciones(id),
        seq INTEGER NOT NULL CHECK (seq >= 1),
        entrega TEXT NOT NULL UNIQUE REFERENCES buzon(entrega),
        carga TEXT NOT NULL,
        PRIMARY KEY (padre, seq)
    )""",
)


def abrir_buzon(ruta):
    """Abre la base de `ruta` con `abrir()` de la lección 04 y se asegura de que tenga el buzón."""
    bd = abrir(ruta)
    if not _esquema_completo(bd):
        crear_esquema(bd)
    return bd


def crear_esquema(bd):
    """Añade las columnas y tablas del buzón a la base de la lección 04: todo o nada.

    Abre su propia transacción: llámala fuera de cualquier otra. Sentencia a sentencia con
    execute(); executescript() confirmaría (COMMIT) lo que hubiera a medias antes de empezar.
    Lo comprueba todo dentro del turno de escritura: si dos procesos abren a la vez una base
    nueva, el segundo encuentra el trabajo hecho y no añade nada.
    """
    with transaccion(bd):
        columnas = {fila[1] for fila in bd.execute("PRAGMA table_info(ejecuciones)")}
        for columna, sentencia in COLUMNAS_NUEVAS:
            if columna not in columnas:
                bd.execute(sentencia)
        for sentencia in TABLAS_NUEVAS:
            bd.execute(sentencia)


def _esquema_completo(bd):
    columnas = {fila[1] for fila in bd.execute("PRAGMA table_info(ejecuciones)")}
    tablas = {nombre for (nombre,) in bd.execute(
        "SELECT name FROM sqlite_master WHERE name IN ('hijos_esperados', 'buzon', 'buzon_por_hijo', 'mensajes')")}
    return {c for c, _ in COLUMNAS_NUEVAS} <= columnas and len(tablas) == 4


# --- Repartir el trabajo: el padre y sus hijos -------------------------------------------------

def crear_padre(bd, padre, hijos):
    """Crea la ejecución `padre`, en 'esperando', y la lista de hijos que espera.

    `hijos` es una lista de nombres o un dict {hijo: encargo}; cada encargo se valida con
    `validar_encargo()` y se guarda, para que `recibir()` lo aplique a lo que entregue ese hijo.
    """
    _exigir_identidad(padre, "El padre")
    if isinstance(hijos, dict):
        encargos = dict(hijos)
    elif isinstance(hijos, (list, tuple)):
        for hijo in hijos:
            _exigir_identidad(hijo, "El nombre de un hijo")
        encargos = dict.fromkeys(hijos)
        if len(encargos) != len(hijos):
            raise ValueError(f"La lista de hijos tiene nombres repetidos: {muestra(hijos)}.")
    else:
        raise ValueError(f"Los hijos deben ser una lista de nombres o un dict {{hijo: encargo}}, no {muestra(hijos)}.")
    if not 1 <= len(encargos) <= MAXIMO_DE_HIJOS:
        raise ValueError(f"Un padre espera entre 1 y {MAXIMO_DE_HIJOS} hijos, no {len(encargos)}.")
    filas = []
    for hijo, encargo in encargos.items():
        _exigir_identidad(hijo, "El nombre de un hijo")
        if encargo is not None:
            validar_encargo(encargo)
            encargo = _json_canonico(encargo, f"El encargo de {hijo!r}")
        filas.append((padre, hijo, encargo))
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError(f"La ejecución {padre!r} ya existe: un padre nuevo necesita un nombre nuevo.")
        bd.execute("INSERT INTO ejecuciones(id, estado, version) VALUES (?, 'esperando', 0)", (padre,))
        for fila in filas:
            bd.execute("INSERT INTO hijos_esperados(padre, hijo, encargo) VALUES (?, ?, ?)", fila)


# --- Recibir: guardar lo que llega ---------------------------------------------------------------

def recibir(bd, padre, hijo, entrega, carga):
    """Guarda en el buzón la entrega `entrega` del hijo `hijo` para `padre`.

    Devuelve "recibida" la primera vez y "duplicada" si ya estaba, idéntica (el transporte la
    repitió). Lanza ValueError si algo está mal formado, si el padre no existe o si la misma
    identidad llega con otros datos; PermissionError si `padre` no espera a `hijo`. Un rechazo
    no cambia nada en la base de datos. Recibir no admite: eso lo hace `admitir()`.
    """
    # Primero lo que se puede comprobar sin leer la base de datos.
    _exigir_identidad(entrega, "La identidad de la entrega")
    _exigir_identidad(padre, "El padre")
    _exigir_identidad(hijo, "El hijo")
    cuerpo = _json_canonico(carga, "La carga de la entrega")

    with transaccion(bd):
        if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")
        esperado = bd.execute(
            "SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?", (padre, hijo)
        ).fetchone()
        if esperado is None:
            raise PermissionError(
                f"El padre {padre!r} no espera ninguna entrega de {hijo!r}: solo aceptamos "
                "resultados de los hijos que el padre creó."
            )
        anterior = bd.execute(
            "SELECT padre, hijo, carga FROM buzon WHERE entrega=?", (entrega,)
        ).fetchone()
        if anterior is not None:
            if anterior == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError(
                f"La entrega {entrega!r} ya se recibió con otros datos: una corrección es una "
                "entrega nueva, con otra identidad; no reescribas la que ya llegó."
            )
        if esperado[0] is not None:
            validar_entrega(json.loads(esperado[0]), carga)
        bd.execute(
            "INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (?, ?, ?, ?)",
            (entrega, padre, hijo, cuerpo),
        )
    return RECIBIDA


# --- Admitir: la entrega entra en la trayectoria del padre ------------------------------------------

# El padre pasa a la cola solo si está esperando y NO EXISTE ningún hijo esperado sin una
# entrega admitida. Contar mensajes no sirve: dos entregas de un mismo hijo (un resultado y su
# corrección) también son dos mensajes. Y una entrega solo recibida no cuenta: aún no está en la
# trayectoria del padre.
def activar_si_estan_todos(bd, padre):
    """Pasa a `padre` de 'esperando' a 'en_cola' (versión + 1) si cada hijo esperado tiene una
    entrega admitida. Se llama dentro de la transacción de `admitir`.

    La condición es un NOT EXISTS sobre los hijos esperados, nunca una cuenta de mensajes: dos
    mensajes del mismo hijo no son uno de cada uno. Y `estado = 'esperando'` hace que un padre se
    active una sola vez, y que uno terminado no se mueva.
    """
    bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = ? AND estado = 'esperando'
             AND NOT EXISTS (
                 SELECT 1 FROM hijos_esperados h
                 WHERE h.padre = ejecuciones.id
                   AND NOT EXISTS (
                       SELECT 1 FROM buzon b
                       WHERE b.padre = h.padre AND b.hijo = h.hijo
                         AND b.disposicion = 'admitida'))""",
        (padre,),
    )


def admitir(bd, entrega):
    """Incorpora la entrega `entrega` del buzón a la trayectoria de su padre.

    Todo en una transacción: añadir el mensaje, marcar la entrega como admitida con su número
    y, si ya hay una entrega admitida de cada hijo esperado, pasar al padre de 'esperando' a
    'en_cola' (versión + 1). Si el proceso cae a mitad, no queda nada hecho y la entrega sigue
    'recibida', lista para admitirla otra vez.

    Devuelve "admitida", o "tardia" si el padre ya había terminado (la entrega se guarda, pero
    ni entra en la trayectoria ni despierta al padre). Admitir dos veces no cambia nada: la
    segunda devuelve lo mismo que la primera. Lanza ValueError si la entrega no está en el buzón.
    """
    _exigir_identidad(entrega, "La identidad de la entrega")
    with transaccion(bd):
        fila = bd.execute(
            "SELECT b.padre, b.carga, b.disposicion, e.estado "
            "FROM buzon b JOIN ejecuciones e ON e.id = b.padre WHERE b.entrega=?",
            (entrega,),
        ).fetchone()
        if fila is None:
            raise ValueError(f"No hay ninguna entrega {entrega!r} en el buzón: recíbela antes con recibir().")
        padre, cuerpo, disposicion, estado_del_padre = fila
        if disposicion != RECIBIDA:
            return disposicion  # ya se decidió: admitir otra vez no cambia nada
        if estado_del_padre in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion='tardia' WHERE entrega=?", (entrega,))
            return TARDIA  # el return confirma (COMMIT) la marca, como el final del bloque
        # El número siguiente se calcula dentro del turno de escritura (BEGIN IMMEDIATE): nadie
        # más puede elegir el mismo entre esta lectura y el INSERT.
        (seq,) = bd.execute(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)
        ).fetchone()
        bd.execute(
            "INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
            (padre, seq, entrega, cuerpo),
        )
        bd.execute(
            "UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?", (seq, entrega)
        )
        activar_si_estan_todos(bd, padre)
    return ADMITIDA


def pendientes(bd):
    """Las entregas recibidas y aún sin decidir, en el orden en que llegaron.

    Tras un reinicio basta con admitirlas: lo que se recibió no depende de ningún aviso en memoria.
    """
    return [entrega for (entrega,) in bd.execute(
        "SELECT entrega FROM buzon WHERE disposicion='recibida' ORDER BY rowid")]


# --- Consultar y terminar ---------------------------------------------------------------------

def estado(bd, padre):
    """(estado, versión) de la ejecución `padre`."""
    _exigir_identidad(padre, "El padre")
    fila = bd.execute("SELECT estado, version FROM ejecuciones WHERE id=?", (padre,)).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {padre!r}.")
    return fila


def mensajes(bd, padre):
    """La trayectoria de `padre`: [(seq, entrega, carga), ...] en orden, con la carga ya leída."""
    _exigir_identidad(padre, "El padre")
    return [(seq, entrega, json.loads(cuerpo)) for seq, entrega, cuerpo in bd.execute(
        "SELECT seq, entrega, carga FROM mensajes WHERE padre=? ORDER BY seq", (padre,))]


def terminar(bd, padre, estado):
    """Lleva a `padre` al estado terminal `estado` ('completada', 'fallida' o 'cancelada').

    Sube la versión. Un padre terminado sigue terminado: terminarlo otra vez es un error.
    """
    if estado not in TERMINALES:
        raise ValueError(f"El estado final debe ser uno de {', '.join(TERMINALES)}, no {muestra(estado)}.")
    _exigir_identidad(padre, "El padre")
    with transaccion(bd):
        fila = bd.execute("SELECT estado FROM ejecuciones WHERE id=?", (padre,)).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {padre!r}.")
        if fila[0] in TERMINALES:
            raise ValueError(f"La ejecución {padre!r} ya terminó como {fila[0]!r}: un padre terminado sigue terminado.")
        bd.execute("UPDATE ejecuciones SET estado=?, version=version+1 WHERE id=?", (estado, padre))


# --- El encargo: el contrato de trabajo de cada hijo ---------------------------------------------

CLAVES_DEL_ENCARGO = ("objetivo", "recursos", "acciones", "entregable", "tope_de_pasos", "plazo")
CAMPOS_DEL_ENTREGABLE = ("hallazgos", "referencias", "incertidumbres")

# Solo se delega investigación de solo lectura: los artefactos tienen un único escritor, el
# padre. Un hijo no amplía su autoridad porque el modelo se lo pida.
ACCIONES_DELEGABLES = ("leer", "buscar")

# Un hijo investiga durante minutos (el de la lección tiene 120 s). Un plazo de más de un día,
# en segundos, es casi seguro un error de unidades (¿milisegundos?), o no es un plazo.
PLAZO_MAXIMO_S = 24 * 60 * 60


def validar_encargo(encargo):
    """Comprueba un encargo; lanza ValueError, en castellano, ante lo primero que esté mal.

    Un encargo es un dict con exactamente estas claves:

    - `objetivo`: qué debe averiguar el hijo (un texto);
    - `recursos`: las rutas que puede consultar (una lista de textos; una que acaba en «/»
      es una carpeta);
    - `acciones`: lo que puede hacer con ellos, de entre «leer» y «buscar»;
    - `entregable`: la forma de la entrega, {"hallazgos": [], "referencias": [], "incertidumbres": []};
    - `tope_de_pasos`: cuántos pasos puede dar como mucho (un entero positivo);
    - `plazo`: hasta cuándo, como fecha y hora ISO 8601 con zona horaria o en segundos.
    """
    if not isinstance(encargo, dict):
        raise ValueError(f"El encargo debe ser un dict, no {muestra(encargo)}.")
    _exigir_claves(encargo, CLAVES_DEL_ENCARGO, "El encargo")
    if not isinstance(encargo["objetivo"], str) or not encargo["objetivo"].strip():
        raise ValueError("El objetivo del encargo debe ser un texto que diga qué averiguar.")
    recursos = encargo["recursos"]
    _exigir_lista_de_textos(recursos, "La lista de recursos del encargo", vacia_permitida=False)
    for recurso in recursos:
        if ".." in PurePosixPath(recurso).parts:
            raise ValueError(f"El recurso {recurso!r} sube de carpeta con «..»: nombra las rutas sin salir de ellas.")
    acciones = encargo["acciones"]
    _exigir_lista_de_textos(acciones, "La lista de acciones del encargo", vacia_permitida=False)
    for accion in acciones:
        if accion not in ACCIONES_DELEGABLES:
            raise ValueError(
                f"La acción {accion!r} no se puede delegar: un hijo solo puede "
                f"{' y '.join(ACCIONES_DELEGABLES)} (investigación de solo lectura)."
            )
    entregable = encargo["entregable"]
    if not isinstance(entregable, dict):
        raise ValueError(f"El entregable debe ser un dict con {', '.join(CAMPOS_DEL_ENTREGABLE)}, no {muestra(entregable)}.")
    _exigir_claves(entregable, CAMPOS_DEL_ENTREGABLE, "El entregable")
    for campo in CAMPOS_DEL_ENTREGABLE:
        if entregable[campo] != [] or type(entregable[campo]) is not list:
            raise ValueError(f"El campo {campo!r} del entregable debe ser una lista vacía: es la forma, que el hijo rellena.")
    tope = encargo["tope_de_pasos"]
    if type(tope) is not int or tope < 1:  # type(...) is int descarta bool
        raise ValueError(f"El tope de pasos debe ser un entero positivo (no un bool), no {muestra(tope)}.")
    _exigir_plazo(encargo["plazo"])
    _exigir_json_puro(encargo, "El encargo")  # se guarda en JSON: todo él tiene que poder escribirse


def validar_entrega(encargo, carga):
    """Comprueba que `carga` cumpla el encargo `encargo`; lanza ValueError si no.

    La entrega tiene exactamente los campos del entregable, cada uno una lista de textos; cada
    referencia (una ruta, o «ruta:dónde», como «logs/api.log:17») está dentro de los recursos
    permitidos; y si hay hallazgos, hay al menos una referencia que los respalde.
    """
    validar_encargo(encargo)
    if not isinstance(carga, dict):
        raise ValueError(f"La entrega debe ser un dict con {', '.join(CAMPOS_DEL_ENTREGABLE)}, no {muestra(carga)}.")
    _exigir_claves(carga, CAMPOS_DEL_ENTREGABLE, "La entrega")
    for campo in CAMPOS_DEL_ENTREGABLE:
        _exigir_lista_de_textos(carga[campo], f"El campo {campo!r} de la entrega")
    for referencia in carga["referencias"]:
        if not _dentro_de(referencia, encargo["recursos"]):
            raise ValueError(
                f"La referencia {referencia!r} no está dentro de los recursos permitidos "
                f"({', '.join(encargo['recursos'])}): el hijo no podía consultarla."
            )
    if carga["hallazgos"] and not carga["referencias"]:
        raise ValueError("La entrega tiene hallazgos sin ninguna referencia: un hallazgo sin evidencia no se puede comprobar.")


def _dentro_de(referencia, recursos):
    if ".." in PurePosixPath(referencia).parts:
        return False
    for recurso in recursos:
        if referencia == recurso or referencia.startswith(recurso + ":"):
            return True
        if recurso.endswith("/") and referencia.startswith(recurso) and len(referencia) > len(recurso):
            return True
    return False


def _exigir_plazo(plazo):
    if isinstance(plazo, str):
        try:
            momento = datetime.fromisoformat(plazo)
        except ValueError:
            raise ValueError(f"El plazo {plazo!r} no es una fecha y hora ISO 8601 (como «2025-03-01T12:00:00+01:00»).") from None
        if momento.tzinfo is None:
            raise ValueError(f"El plazo {plazo!r} necesita fecha, hora y zona horaria: sin zona, no se sabe cuándo vence.")
    elif type(plazo) in (int, float):  # descarta bool
        # Comparar no convierte: ni 10**400 ni NaN la rompen, y NaN no la pasa (math.isfinite,
        # en cambio, convierte a float y lanza OverflowError con un int enorme).
        if not 0 < plazo <= PLAZO_MAXIMO_S:
            raise ValueError(f"El plazo en segundos debe ser un número positivo y finito, de como mucho "
                             f"{PLAZO_MAXIMO_S} (un día), no {muestra(plazo)}.")
    else:
        raise ValueError(f"El plazo debe ser una fecha ISO 8601 o un número de segundos, no {muestra(plazo)}.")


# --- Comprobaciones -------------------------------------------------------------------------

def _exigir_identidad(valor, que):
    if not isinstance(valor, str) or not valor.strip():
        raise ValueError(f"{que} debe ser un texto no vacío, no {muestra(valor)}.")
    if len(valor) > LARGO_MAXIMO_DE_IDENTIDAD:
        raise ValueError(f"{que} tiene {len(valor)} caracteres; una identidad tiene como mucho {LARGO_MAXIMO_DE_IDENTIDAD}.")
    _exigir_utf8(valor, que)


def _exigir_utf8(texto, que):
    try:
        texto.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{que} contiene caracteres que no se pueden guardar en UTF-8.") from None


def _json_canonico(valor, que):
    """El JSON canónico de un dict: claves ordenadas y sin espacios, así el orden en que se
    escribieron las claves no parece un cambio de contenido. Solo JSON puro (`_exigir_json_puro`):
    lo que se guarda es exactamente lo que se leerá después."""
    if not isinstance(valor, dict):
        raise ValueError(f"{que} debe ser un dict (un objeto JSON), no {muestra(valor)}.")
    _exigir_json_puro(valor, que)
    cuerpo = json.dumps(valor, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    _exigir_utf8(cuerpo, que)
    return cuerpo


# Una entrega es un documento de pocos niveles (la de un hijo tiene dos: el dict y sus listas).
# Treinta y dos sobran, y dejan a json.dumps, que es recursivo, lejos del límite de la pila.
PROFUNDIDAD_MAXIMA_DE_JSON = 32


def _exigir_json_puro(valor, que):
    """Lanza ValueError, diciendo qué encontró, si `valor` no es JSON puro: dicts con claves de
    texto, listas, textos, números finitos (enteros que Python sepa escribir), booleanos y None.

    Recorre el valor con una pila propia, no con recursión: lo anidado miles de veces, o lo que
    se contiene a sí mismo, se rechaza por su profundidad en vez de agotar la pila de Python.
    """
    por_mirar = [(valor, 1)]
    while por_mirar:
        actual, nivel = por_mirar.pop()
        if nivel > PROFUNDIDAD_MAXIMA_DE_JSON:
            raise ValueError(f"{que} anida más de {PROFUNDIDAD_MAXIMA_DE_JSON} niveles (¿se contiene a sí "
                             "misma?): una entrega es un documento pequeño.")
        if isinstance(actual, dict):
            for clave, dentro in actual.items():
                if not isinstance(clave, str):
                    raise ValueError(f"{que} tiene la clave {muestra(clave)}, y no es JSON puro: en JSON "
                                     "las claves son textos.")
                por_mirar.append((dentro, nivel + 1))
        elif isinstance(actual, list):
            por_mirar.extend((dentro, nivel + 1) for dentro in actual)
        elif isinstance(actual, float):
            if not math.isfinite(actual):
                raise ValueError(f"{que} contiene {muestra(actual)}, y JSON no admite NaN ni infinito.")
        elif isinstance(actual, int):  # también bool
            try:
                str(actual)  # JSON escribe los enteros en decimal
            except ValueError:
                raise ValueError(f"{que} contiene {muestra(actual)}, y Python solo escribe en decimal "
                                 f"enteros de hasta {sys.get_int_max_str_digits()} cifras.") from None
        elif actual is not None and not isinstance(actual, str):
            raise ValueError(f"{que} contiene {muestra(actual)}, que no es JSON puro: solo dicts, "
                             "listas, textos, números, booleanos y None.")


def _exigir_claves(valor, claves, que):
    faltan = [c for c in claves if c not in valor]
    sobran = [c for c in valor if c not in claves]
    if faltan or sobran:
        detalle = "; ".join(parte for parte in (
            f"faltan {', '.join(map(repr, faltan))}" if faltan else "",
            f"sobran {', '.join(map(repr, sobran))}" if sobran else "") if parte)
        raise ValueError(f"{que} debe tener exactamente las claves {', '.join(claves)} ({detalle}).")


def _exigir_lista_de_textos(valor, que, vacia_permitida=True):
    if type(valor) is not list:
        raise ValueError(f"{que}: debe ser una lista de textos, no {muestra(valor)}.")
    if not valor and not vacia_permitida:
        raise ValueError(f"{que}: está vacía; hace falta al menos un elemento.")
    for elemento in valor:
        if not isinstance(elemento, str) or not elemento.strip():
            raise ValueError(f"{que}: cada elemento debe ser un texto no vacío, y hay {muestra(elemento)}.")
        _exigir_utf8(elemento, que)
    if len(set(valor)) != len(valor):
        raise ValueError(f"{que}: tiene elementos repetidos, {muestra(valor)}.")
