"""Para los tests y los caminos al azar: otras soluciones buenas y errores escritos de cada ejercicio, como celdas que escribiría un alumno.

Un contrato entre la comprobación del cuaderno y todo lo que viene después (`comprobar N`, los
tests de los puntos de control siguientes, `calificar`) solo se puede probar con código que no
sea el de referencia. Aquí está ese código, ejercicio a ejercicio:

- `SEGUNDAS[id]`: una segunda solución buena, escrita de otra manera (otra estructura, otros
  nombres, sus propias palabras en cada mensaje que el texto del ejercicio no fija). Lo que el
  cuaderno da por bueno, lo tiene que dar por bueno todo lo que viene después.
- `ERRORES[id]`: los errores escritos para ese ejercicio, cada uno con el caso de su comprobación
  que lo pilla (`caso`: un trozo del nombre de ese caso).

Cada una es una `Variante`: `texto` es el cuerpo de una celda `%%modulo MODULO --cambia` (las
funciones, clases o constantes que cambian, cada una entera; lo demás sale del módulo que ya
había, con `curso.alumno.componer`). Las de la lección 02 y el 3.1 son funciones del cuaderno
(`modulo` None): su `texto` es la celda tal cual y `funcion` la define.
"""
from dataclasses import dataclass
from pathlib import Path

from curso import rutas
from curso.alumno import componer
from curso.comprobaciones import ejercicios


@dataclass(frozen=True)
class Variante:
    """Una manera de contestar al ejercicio `ejercicio`, con un nombre que la distingue."""
    ejercicio: str
    nombre: str
    modulo: str | None  # el módulo del espacio; None: una función del cuaderno (lección 02, 3.1)
    texto: str
    caso: str = ""  # en un error: un trozo del nombre del caso que lo pilla


def celda(variante):
    """El código de la celda que escribiría el alumno."""
    if variante.modulo is None:
        return variante.texto
    return f"%%modulo {variante.modulo} --cambia\n{variante.texto}"


def aplicar(variante, texto_del_modulo):
    """El texto del módulo `texto_del_modulo` después de ejecutar la celda de `variante`."""
    if variante.modulo is None:
        raise ValueError(f"La variante {variante.nombre!r} del {variante.ejercicio} es una función del "
                         "cuaderno, no un módulo: usa funcion(variante).")
    return componer.componer(texto_del_modulo, variante.texto, variante.modulo).texto


def funcion(variante, nombre):
    """La función `nombre` que define la celda de una variante del cuaderno (modulo None)."""
    espacio = {}
    exec(compile(variante.texto, f"<variante {variante.ejercicio} {variante.nombre}>", "exec"), espacio)
    return espacio[nombre]


def todas():
    """Todas las variantes, segundas soluciones y errores, en el orden de los ejercicios."""
    return [v for id in sorted(SEGUNDAS.keys() | ERRORES.keys(), key=ejercicios.clave)
            for v in ([SEGUNDAS[id]] if id in SEGUNDAS else []) + ERRORES.get(id, [])]


def _segunda(id, modulo, texto):
    return Variante(id, "segunda solución", modulo, texto.lstrip("\n"))


def _error(id, nombre, modulo, texto, caso):
    return Variante(id, nombre, modulo, texto.lstrip("\n"), caso)


def _cambiando(id, nombre, modulo, cambios, caso):
    """Un error escrito como la referencia con unos trozos cambiados: la celda lleva enteras las
    piezas (funciones, clases, constantes) del módulo del punto de control de la lección que
    contienen cada trozo viejo, ya cambiadas. Cada trozo tiene que estar en una sola pieza, una vez."""
    fichero = rutas.puntos_de_control()[ejercicios.buscar(id).leccion] / f"{modulo}.py"
    textos = {p.clave: "\n".join(p.texto) for p in componer.piezas(fichero.read_text(encoding="utf-8"), fichero.name)[0]
              if p.tipo in ("def", "class", "asignacion")}
    cambiadas = {}
    for viejo, nuevo in cambios:
        donde = [clave for clave, texto in {**textos, **cambiadas}.items() if viejo in texto]
        if len(donde) != 1 or {**textos, **cambiadas}[donde[0]].count(viejo) != 1:
            raise ValueError(f"El error {nombre!r} del {id}: el trozo {viejo!r} tiene que estar una sola vez "
                             f"en {fichero.name}, y está en {donde or 'ninguna pieza'}.")
        cambiadas[donde[0]] = cambiadas.get(donde[0], textos[donde[0]]).replace(viejo, nuevo)
    return _error(id, nombre, modulo, "\n\n\n".join(cambiadas.values()) + "\n", caso)


# ---------------------------------------------------------------- 00

SEGUNDAS = {}
ERRORES = {}

SEGUNDAS["0.1"] = _segunda("0.1", "calentamiento", '''
def ultima_linea(salida):
    """La última línea de `salida` que tiene algo, recortada."""
    con_algo = [trozo.strip() for trozo in salida.split("\\n") if trozo.strip()]
    return con_algo[-1] if con_algo else ""
''')

ERRORES["0.1"] = [
    _error("0.1", "la última línea aunque esté vacía", "calentamiento", '''
def ultima_linea(salida):
    """La última línea de `salida`."""
    lineas = salida.splitlines()
    return lineas[-1].strip() if lineas else ""
''', "salta las líneas vacías"),
]

# ---------------------------------------------------------------- 01

SEGUNDAS["1.1"] = _segunda("1.1", "entorno", '''
def llamadas_de(respuesta):
    """Los bloques tool_use de `respuesta`, en el orden en que vienen."""
    pedidas = []
    for bloque in respuesta:
        if bloque.get("type") == "tool_use":
            pedidas.append(bloque)
    return pedidas


def texto_de(respuesta):
    """Los textos de `respuesta` juntos, separados por un espacio y sin blancos en los extremos."""
    trozos = [bloque["text"] for bloque in respuesta if bloque.get("type") == "text"]
    return " ".join(trozos).strip()
''')

ERRORES["1.1"] = [
    _error("1.1", "texto_de sin quitar los extremos", "entorno", '''
def texto_de(respuesta):
    """El texto de una respuesta: sus bloques de texto, unidos por un espacio."""
    return " ".join(b["text"] for b in respuesta if b.get("type") == "text")
''', "quita los espacios y saltos de línea de los extremos"),
]

SEGUNDAS["1.2"] = _segunda("1.2", "permisos", '''
def permitido(nombre, entrada, usuario):
    """Leer, siempre; lo demás, solo si hay a quién preguntar y dice exactamente True."""
    if nombre not in SIN_PERMISO:
        return usuario is not None and usuario(nombre, entrada) is True
    return True
''')

ERRORES["1.2"] = [
    _error("1.2", "permitido devuelve la respuesta tal cual", "permisos", '''
def permitido(nombre, entrada, usuario):
    """¿Se puede ejecutar la herramienta `nombre`?"""
    if nombre in SIN_PERMISO:
        return True
    if usuario is None:
        return False
    return usuario(nombre, entrada)
''', "solo un True explícito cuenta como sí"),
    _error("1.2", "permitido convierte la respuesta con bool", "permisos", '''
def permitido(nombre, entrada, usuario):
    """¿Se puede ejecutar la herramienta `nombre`?"""
    if nombre in SIN_PERMISO:
        return True
    if usuario is None:
        return False
    return bool(usuario(nombre, entrada))
''', "solo un True explícito cuenta como sí"),
]

SEGUNDAS["1.3"] = _segunda("1.3", "bucle", '''
def bucle(modelo, inicio, entorno, tope, usuario=None):
    """Turno a turno: pedir, y atender lo que pida, hasta que conteste sin llamadas o llegue a `tope`."""
    M = list(inicio)
    turnos = 0
    while turnos < tope:
        turnos += 1
        contestacion = modelo(M, HERRAMIENTAS)
        M.append(("asistente", contestacion))
        if not llamadas_de(contestacion):
            return "fin", texto_de(contestacion), M
        M.append(("usuario", [atender(c, entorno, usuario) for c in llamadas_de(contestacion)]))
    return "tope", None, M
''')

ERRORES["1.3"] = [
    _error("1.3", "una observación por mensaje", "bucle", '''
def bucle(modelo, inicio, entorno, tope, usuario=None):
    """Pide, atiende y vuelve a pedir."""
    M = list(inicio)
    for _ in range(tope):
        respuesta = modelo(M, HERRAMIENTAS)
        M.append(("asistente", respuesta))
        pedidas = llamadas_de(respuesta)
        if not pedidas:
            return "fin", texto_de(respuesta), M
        for pedida in pedidas:
            M.append(("usuario", [atender(pedida, entorno, usuario)]))
    return "tope", None, M
''', "cada llamada recibe su observación, en un único mensaje"),
]

# ---------------------------------------------------------------- 02 (funciones del cuaderno)

SEGUNDAS["2.1"] = _segunda("2.1", None, '''
def tamano(usage):
    """Lo que ocupó la petición: lo calculado y lo que se leyó de la caché, si lo hay."""
    de_la_cache = usage.get("cache_read_input_tokens") or 0
    return de_la_cache + usage["input_tokens"]
''')

ERRORES["2.1"] = [
    _error("2.1", "olvidar la caché", None, '''
def tamano(usage):
    return usage["input_tokens"]
''', "con caché"),
    _error("2.1", "leer la caché con corchetes", None, '''
def tamano(usage):
    return usage["input_tokens"] + usage["cache_read_input_tokens"]
''', "sin caché"),
]

SEGUNDAS["2.2"] = _segunda("2.2", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    """Si lo que ya hay, la respuesta, las observaciones y la respuesta por venir caben en la ventana."""
    partes = [usage["input_tokens"], usage.get("cache_read_input_tokens", 0),
              usage["output_tokens"], observaciones, max_tokens]
    return not sum(partes) > ventana
''')

ERRORES["2.2"] = [
    _error("2.2", "olvidar la caché", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    return usage["input_tokens"] + usage["output_tokens"] + observaciones + max_tokens <= ventana
''', "la petición 11 de atasco no cabe"),
    _error("2.2", "olvidar max_tokens", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)
    return ahora + usage["output_tokens"] + observaciones <= ventana
''', "en una ventana de 8448"),
    _error("2.2", "olvidar la respuesta que acaba de llegar", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)
    return ahora + observaciones + max_tokens <= ventana
''', "la respuesta que acaba de llegar"),
    _error("2.2", "< en vez de <=", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    ahora = usage["input_tokens"] + usage.get("cache_read_input_tokens", 0)
    return ahora + usage["output_tokens"] + observaciones + max_tokens < ventana
''', "justo en el límite"),
    _error("2.2", "leer la caché con corchetes", None, '''
def cabe(usage, observaciones, ventana=8192, max_tokens=512):
    ahora = usage["input_tokens"] + usage["cache_read_input_tokens"]
    return ahora + usage["output_tokens"] + observaciones + max_tokens <= ventana
''', "sin cache_read_input_tokens"),
]

# ---------------------------------------------------------------- 03

SEGUNDAS["3.1"] = _segunda("3.1", None, '''
def umbral(ventana, reserva_respuesta, reserva_turno):
    """Lo que queda de `ventana` tras apartar las dos reservas; ValueError si no queda nada."""
    apartado = reserva_respuesta + reserva_turno
    if apartado >= ventana:
        raise ValueError(f"con {apartado} tokens reservados no queda nada de {ventana}")
    return ventana - apartado
''')

ERRORES["3.1"] = [
    _error("3.1", "sin ValueError cuando no queda sitio", None, '''
def umbral(ventana, reserva_respuesta, reserva_turno):
    return ventana - reserva_respuesta - reserva_turno
''', "si las reservas se comen la ventana"),
]

SEGUNDAS["3.2"] = _segunda("3.2", "compactar", '''
def corte(M, k):
    """Dónde empiezan los k turnos recientes: el en curso ocupa un mensaje y cada anterior, dos."""
    if k < 1:
        raise ValueError(f"k = {k}: tiene que ser al menos 1, porque el turno en curso no se resume nunca")
    if not M or M[-1][0] != "asistente":
        raise ValueError("M tiene que acabar en la respuesta del turno en curso: compacta justo "
                         "después de añadirla a M y antes de sus observaciones")
    posicion = len(M) - 1
    for _ in range(k - 1):
        posicion -= 2
    return posicion
''')

ERRORES["3.2"] = [
    _error("3.2", "dos mensajes también por el turno en curso", "compactar", '''
def corte(M, k):
    """La posición de M donde empiezan sus k turnos recientes."""
    if k < 1:
        raise ValueError(f"k = {k}: tiene que ser al menos 1")
    if not M or M[-1][0] != "asistente":
        raise ValueError("M tiene que acabar en la respuesta del turno en curso")
    return len(M) - 2 * k
''', "con 5 turnos y k = 2"),
]

SEGUNDAS["3.3"] = _segunda("3.3", "compactar", '''
def compactar(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """M tal cual mientras quepa o no haya un turno viejo entero; si no, con sus turnos viejos resumidos."""
    fin_del_inicio, desde_aqui = inicio_de(M), corte(M, k)
    if tokens(modelo) > umbral and desde_aqui - fin_del_inicio >= 2:
        contestacion = modelo([*M[:desde_aqui], ("usuario", INSTRUCCION)], HERRAMIENTAS)
        lo_resumido = texto_de(contestacion)
        if lo_resumido:
            return [*M[:fin_del_inicio], ("usuario", NOTA + lo_resumido), *M[desde_aqui:]]
    return M
''')

_COMPACTAR_CON = '''
def compactar(modelo, M, umbral=UMBRAL, k=RECIENTES):
    """La misma M si no hace falta compactar; si no, con el resumen."""
    hasta_el_pedido, desde = inicio_de(M), corte(M, k)
    if tokens(modelo) <= umbral:
        return M
    if desde - hasta_el_pedido < 2:
        return M
    peticion = M[:desde] + [("usuario", INSTRUCCION)]
    resumen = texto_de(modelo(PETICION))
    if not resumen:
        return M
    DEVOLVER
'''


def _compactar_con(peticion, devolver):
    return _COMPACTAR_CON.replace("PETICION", peticion).replace("DEVOLVER", devolver)


ERRORES["3.3"] = [
    _error("3.3", "modificar M en su sitio", "compactar", _compactar_con(
        "peticion, HERRAMIENTAS",
        'M[hasta_el_pedido:desde] = [("usuario", NOTA + resumen)]\n    return M'),
        "no modifica la M"),
    _error("3.3", "pedir el resumen sin herramientas", "compactar", _compactar_con(
        "peticion", 'return M[:hasta_el_pedido] + [("usuario", NOTA + resumen)] + M[desde:]'),
        "el resumen se pide"),
]

# ---------------------------------------------------------------- 03b

SEGUNDAS["3b.1"] = _segunda("3b.1", "limpiar", '''
def limpiar(M, usado, disparo=DISPARO, conservar=CONSERVAR, al_menos=AL_MENOS, excluir=EXCLUIR):
    """Los resultados viejos, por su marcador; o M tal cual si no hace falta o libera poco."""
    if conservar < 0:
        raise ValueError("conservar no puede ser negativo: son los resultados del final que se quedan")
    if usado <= disparo:
        return M, 0
    llamadas = llamadas_por_id(M)
    posiciones = resultados(M)
    viejos = posiciones[:-conservar] if conservar else posiciones
    a_cambiar = {}
    for donde in viejos:
        i, j = donde
        bloque = M[i][1][j]
        llamada = llamadas.get(bloque["tool_use_id"])
        if llamada is None or llamada["name"] in excluir:
            continue
        marca = marcador(llamada)
        if bloque["content"] != marca and estimar(marca) < estimar(bloque["content"]):
            a_cambiar[donde] = marca
    total = sum(estimar(M[i][1][j]["content"]) - estimar(marca) for (i, j), marca in a_cambiar.items())
    if not a_cambiar or total < al_menos:
        return M, 0
    limpia = []
    for i, (rol, contenido) in enumerate(M):
        if any(k == i for k, _ in a_cambiar):
            contenido = [{**b, "content": a_cambiar[i, j]} if (i, j) in a_cambiar else b
                         for j, b in enumerate(contenido)]
        limpia.append((rol, contenido))
    return limpia, total
''')

ERRORES["3b.1"] = [
    _cambiando("3b.1", "limpiar también los últimos resultados", "limpiar",
               [("todos[:max(len(todos) - conservar, 0)]", "todos")], "los `conservar` últimos"),
    _cambiando("3b.1", "quitar el resultado en vez de cambiar su contenido", "limpiar",
               [("[dict(b, content=nuevos[i, j]) if (i, j) in nuevos else b\n                            for j, b in enumerate(contenido)]",
                 "[b for j, b in enumerate(contenido) if (i, j) not in nuevos]")],
               "cada llamada sigue con su resultado"),
    _cambiando("3b.1", "limpiar aunque no llegue a al_menos", "limpiar",
               [("if not nuevos or liberados < al_menos:", "if not nuevos:")], "si no llega a `al_menos`"),
    _cambiando("3b.1", "limpiar también las herramientas excluidas", "limpiar",
               [('if uso is None or uso["name"] in excluir:', "if uso is None:")], "las herramientas de `excluir`"),
    _cambiando("3b.1", "quitar el mensaje entero en vez de su contenido", "limpiar",
               [("    M_nueva = list(M)\n", "    M_nueva = [m for k, m in enumerate(M) if k not in {i for i, _ in nuevos}]\n"),
                ("    for i in sorted({i for i, _ in nuevos}):\n", "    for i in []:\n")],
               "solo cambia el contenido"),
    _cambiando("3b.1", "cambiar los bloques de M en su sitio", "limpiar",
               [("M_nueva[i] = (rol, [dict(b, content=nuevos[i, j]) if (i, j) in nuevos else b",
                 "M_nueva[i] = (rol, [b.update(content=nuevos[i, j]) or b if (i, j) in nuevos else b")],
               "no modifica la M"),
]

# Errores plausibles que ningún caso escrito pilla y sí el diferencial (hallazgo 10 de la issue 40):
# cada uno con `caso` = la línea del diferencial.
LO_MISMO = "hace lo mismo que la solución de referencia"  # el nombre de la línea del diferencial (diferencial.py)

ERRORES["3b.1"] += [_cambiando("3b.1", nombre, "limpiar", cambios, LO_MISMO) for nombre, cambios in [
    ("no limpiar los resultados que vienen en bloques (content como lista)",
     [('if uso is None or uso["name"] in excluir:',
       'if uso is None or uso["name"] in excluir or not isinstance(bloque["content"], str):')]),
    ("un bloque nuevo con solo tres claves: se pierde is_error",
     [("[dict(b, content=nuevos[i, j]) if (i, j) in nuevos else b",
       '[{"type": "tool_result", "tool_use_id": b["tool_use_id"], "content": nuevos[i, j]} if (i, j) in nuevos else b')]),
    ("conservar los últimos mensajes con resultados, no los últimos resultados",
     [("    for i, j in todos[:max(len(todos) - conservar, 0)]:\n",
       "    mensajes = sorted({i for i, _ in todos})\n    viejos = set(mensajes[:max(len(mensajes) - conservar, 0)])\n"
       "    for i, j in [(i, j) for i, j in todos if i in viejos]:\n")]),
]]


# ---------------------------------------------------------------- 04

SEGUNDAS["4.1"] = _segunda("4.1", "historial", '''
@contextmanager
def transaccion(bd):
    """BEGIN IMMEDIATE; COMMIT si el bloque acaba bien y ROLLBACK si sale por donde sea."""
    bd.execute("BEGIN IMMEDIATE")
    confirmada = False
    try:
        yield bd
        bd.execute("COMMIT")
        confirmada = True
    finally:
        if not confirmada and bd.in_transaction:
            bd.execute("ROLLBACK")
''')

ERRORES["4.1"] = [
    _error("4.1", "COMMIT fuera del try", "historial", '''
@contextmanager
def transaccion(bd):
    """Una transacción de escritura: COMMIT si el bloque termina bien, ROLLBACK si no."""
    bd.execute("BEGIN IMMEDIATE")
    try:
        yield bd
    except BaseException:
        if bd.in_transaction:
            bd.execute("ROLLBACK")
        raise
    bd.execute("COMMIT")
''', "si el COMMIT falla"),
    _error("4.1", "except Exception en vez de BaseException", "historial", '''
@contextmanager
def transaccion(bd):
    """Una transacción de escritura: COMMIT si el bloque termina bien, ROLLBACK si no."""
    bd.execute("BEGIN IMMEDIATE")
    try:
        yield bd
        bd.execute("COMMIT")
    except Exception:
        if bd.in_transaction:
            bd.execute("ROLLBACK")
        raise
''', "KeyboardInterrupt"),
    _error("4.1", "BEGIN sin IMMEDIATE", "historial", '''
@contextmanager
def transaccion(bd):
    """Una transacción de escritura: COMMIT si el bloque termina bien, ROLLBACK si no."""
    bd.execute("BEGIN")
    try:
        yield bd
        bd.execute("COMMIT")
    except BaseException:
        if bd.in_transaction:
            bd.execute("ROLLBACK")
        raise
''', "BEGIN IMMEDIATE"),
]

SEGUNDAS["4.2"] = _segunda("4.2", "resumenes", '''
def validar_candidato(bd, ejecucion, corte, candidato):
    """ValueError si `candidato` no es una lista no vacía de {texto, fuente} con fuentes de `ejecucion` hasta `corte`."""
    exigir_ejecucion(ejecucion)
    exigir_entero_positivo(corte, "El corte")
    if not isinstance(candidato, list) or len(candidato) == 0:
        raise ValueError(f"Un candidato es una lista con alguna afirmación; esto es {muestra(candidato)}.")
    citadas = set()
    for posicion, afirmacion in enumerate(candidato, start=1):
        if not (isinstance(afirmacion, dict) and afirmacion.keys() == CLAVES_DE_AFIRMACION):
            raise ValueError(f"Cada afirmación lleva 'texto' y 'fuente', y nada más; la {posicion}.ª es "
                             f"{muestra(afirmacion)}.")
        exigir_texto(afirmacion["texto"], f"El texto de la afirmación {posicion}")
        exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {posicion}")
        citadas.add(afirmacion["fuente"])
    fuera = [f for f in sorted(citadas) if f > corte or not en_historial(bd, ejecucion, f)]
    if fuera:
        raise ValueError(f"El candidato cita el mensaje {fuera[0]}, que no está entre los que cubre "
                         f"(del 1 al {corte} de {ejecucion!r}).")
''')

ERRORES["4.2"] = [
    _error("4.2", "sin mirar el corte", "resumenes", '''
def validar_candidato(bd, ejecucion, corte, candidato):
    """Lanza ValueError si `candidato` no es un resumen válido."""
    exigir_ejecucion(ejecucion)
    exigir_entero_positivo(corte, "El corte")
    if not isinstance(candidato, list) or not candidato:
        raise ValueError("El resumen debe ser una lista no vacía de afirmaciones.")
    for numero, afirmacion in enumerate(candidato, 1):
        if not isinstance(afirmacion, dict) or set(afirmacion) != CLAVES_DE_AFIRMACION:
            raise ValueError(f"La afirmación {numero} no es un dict con 'texto' y 'fuente'.")
        exigir_texto(afirmacion["texto"], f"El texto de la afirmación {numero}")
        exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {numero}")
        if not en_historial(bd, ejecucion, afirmacion["fuente"]):
            raise ValueError(f"La fuente {afirmacion['fuente']} no está en el historial.")
''', "posterior al corte"),
]

ERRORES["4.2"] += [_cambiando("4.2", nombre, "resumenes", cambios, caso) for nombre, cambios, caso in [
    ("una fuente True pasa por el mensaje 1",
     [('        exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {numero}")\n', "")],
     "True no es 1"),
    ("claves de más", [("set(afirmacion) != CLAVES_DE_AFIRMACION", "not CLAVES_DE_AFIRMACION <= set(afirmacion)")],
     "sin claves de más"),
    ("una fuente de otra ejecución", [("if fuente > corte or not en_historial(bd, ejecucion, fuente):",
                                       "if fuente > corte:")], "solo existe en otra ejecución"),
    ("una lista vacía", [("    if not candidato:\n", "    if False:\n")], "lista no vacía"),
]]

SEGUNDAS["4.3"] = _segunda("4.3", "resumenes", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """El puntero de `ejecucion` pasa de `base` a `nuevo` en un solo UPDATE; BaseObsoleta si ya no estaba en `base`."""
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    cambiadas = bd.execute("UPDATE ejecuciones SET resumen_activo = :nuevo "
                           "WHERE id = :ejecucion AND resumen_activo IS :base",
                           {"nuevo": nuevo, "ejecucion": ejecucion, "base": base}).rowcount
    if cambiadas != 1:
        (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id = ?", (ejecucion,)).fetchone()
        raise BaseObsoleta(f"Otro instaló un resumen antes que tú: partías de {base!r} y el puntero ya "
                           f"está en {ahora}. Vuelve a leer el activo.")
''')

ERRORES["4.3"] = [
    _error("4.3", "comparar con = (NULL = NULL no es verdad)", "resumenes", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap."""
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    movido = bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=? AND resumen_activo = ?",
                        (nuevo, ejecucion, base))
    if movido.rowcount == 0:
        raise BaseObsoleta("otro movió el puntero antes")
''', "base None"),
    _error("4.3", "no mirar el número de filas", "resumenes", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap."""
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=? AND resumen_activo IS ?",
               (nuevo, ejecucion, base))
''', "otro lo movió antes"),
    _error("4.3", "un mensaje de BaseObsoleta que no dice cuál es el activo", "resumenes", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap."""
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    movido = bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=? AND resumen_activo IS ?",
                        (nuevo, ejecucion, base))
    if movido.rowcount == 0:
        raise BaseObsoleta("otro movió el puntero antes")
''', "con un mensaje que dice cuál es el activo"),
]

SEGUNDAS["4.4"] = _segunda("4.4", "durable", '''
def armar(contexto, inicio):
    """El inicio, la nota del resumen activo si lo hay, y después la cola recuperada."""
    nota = []
    if contexto["resumen"] is not None:
        dice = lo_que_dice(contexto["resumen"], contexto["cobertura"])
        nota = [("usuario", NOTA + dice)]
    cola = [recuperar(guardado) for _seq, guardado in contexto["cola"]]
    return [*inicio, *nota, *cola]
''')

ERRORES["4.4"] = [
    _error("4.4", "añadir al inicio que le pasan", "durable", '''
def armar(contexto, inicio):
    """La M de un contexto."""
    M = inicio
    if contexto["resumen"] is not None:
        M.append(("usuario", NOTA + lo_que_dice(contexto["resumen"], contexto["cobertura"])))
    M.extend(recuperar(texto) for _, texto in contexto["cola"])
    return M
''', "no modifica el inicio"),
]

# ---------------------------------------------------------------- 05

SEGUNDAS["5.1"] = _segunda("5.1", "buzon", '''
def recibir(bd, padre, hijo, entrega, carga):
    """La entrega se guarda una vez: «recibida» la primera, «duplicada» si vuelve idéntica."""
    exigir_identidad(entrega, "La identidad de la entrega")
    exigir_identidad(padre, "El padre")
    exigir_identidad(hijo, "El hijo")
    cuerpo = json_canonico(carga, "La carga de la entrega")
    with transaccion(bd):
        (hay_padre,) = bd.execute("SELECT COUNT(*) FROM ejecuciones WHERE id=?", (padre,)).fetchone()
        if not hay_padre:
            raise ValueError(f"{padre!r} no es ninguna ejecución: el padre se crea con crear_padre().")
        encargo = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?",
                             (padre, hijo)).fetchone()
        if encargo is None:
            raise PermissionError(f"{hijo!r} no es uno de los hijos de {padre!r}: su entrega no entra.")
        ya_estaba = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=?", (entrega,)).fetchone()
        if ya_estaba == (padre, hijo, cuerpo):
            return DUPLICADA
        if ya_estaba is not None:
            raise ValueError(f"Con la identidad {entrega!r} llegó antes algo distinto: una corrección "
                             "necesita una identidad nueva.")
        if encargo[0] is not None:
            validar_entrega(json.loads(encargo[0]), carga)
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (?, ?, ?, ?)",
                   (entrega, padre, hijo, cuerpo))
    return RECIBIDA
''')

_RECIBIR_QUE = '''
def recibir(bd, padre, hijo, entrega, carga):
    """Guarda en el buzón la entrega `entrega` del hijo `hijo` para `padre`."""
    exigir_identidad(entrega, "La identidad de la entrega")
    exigir_identidad(padre, "El padre")
    exigir_identidad(hijo, "El hijo")
    cuerpo = json_canonico(carga, "La carga de la entrega")
    with transaccion(bd):
        if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (padre,)).fetchone():
            raise ValueError(f"No existe la ejecución padre {padre!r}.")
        esperado = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?",
                              (padre, hijo)).fetchone()
        if esperado is None:
            raise PermissionError(f"El padre {padre!r} no espera ninguna entrega de {hijo!r}.")
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=?", (entrega,)).fetchone()
        if anterior is not None:
            REPETIDA
        if esperado[0] is not None:
            validar_entrega(json.loads(esperado[0]), carga)
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (?, ?, ?, ?)",
                   (entrega, padre, hijo, cuerpo))
    return RECIBIDA
'''

ERRORES["5.1"] = [
    _error("5.1", "un duplicado del transporte tratado como un error", "buzon",
           _RECIBIR_QUE.replace("REPETIDA", 'raise ValueError("ya estaba")'), "«duplicada»"),
    _error("5.1", "la misma identidad con otros datos tomada por un duplicado", "buzon",
           _RECIBIR_QUE.replace("REPETIDA", "return DUPLICADA"), "con otros datos"),
]

SEGUNDAS["5.2"] = _segunda("5.2", "buzon", '''
def admitir(bd, entrega):
    """El mensaje, la marca y la activación, juntos en una transacción; admitir otra vez repite la respuesta."""
    exigir_identidad(entrega, "La identidad de la entrega")
    with transaccion(bd):
        en_el_buzon = bd.execute("SELECT padre, carga, disposicion FROM buzon WHERE entrega=?",
                                 (entrega,)).fetchone()
        if en_el_buzon is None:
            raise ValueError(f"{entrega!r} no ha llegado al buzón: primero se recibe (recibir) y luego se admite.")
        padre, carga, decidida = en_el_buzon
        if decidida != RECIBIDA:
            return decidida
        (como_esta,) = bd.execute("SELECT estado FROM ejecuciones WHERE id=?", (padre,)).fetchone()
        if como_esta in TERMINALES:
            bd.execute("UPDATE buzon SET disposicion=? WHERE entrega=?", (TARDIA, entrega))
            return TARDIA
        (ultimo,) = bd.execute("SELECT MAX(seq) FROM mensajes WHERE padre=?", (padre,)).fetchone()
        siguiente = (ultimo or 0) + 1
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
                   (padre, siguiente, entrega, carga))
        bd.execute("UPDATE buzon SET disposicion=?, seq_admitida=? WHERE entrega=?", (ADMITIDA, siguiente, entrega))
        activar_si_estan_todos(bd, padre)
    return ADMITIDA
''')

ERRORES["5.2"] = [
    _error("5.2", "admitir sin mirar si el padre ya terminó", "buzon", '''
def admitir(bd, entrega):
    """Incorpora la entrega `entrega` del buzón a la trayectoria de su padre."""
    exigir_identidad(entrega, "La identidad de la entrega")
    with transaccion(bd):
        fila = bd.execute("SELECT padre, carga, disposicion FROM buzon WHERE entrega=?", (entrega,)).fetchone()
        if fila is None:
            raise ValueError(f"No hay ninguna entrega {entrega!r} en el buzón.")
        padre, cuerpo, disposicion = fila
        if disposicion != RECIBIDA:
            return disposicion
        (seq,) = bd.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM mensajes WHERE padre=?", (padre,)).fetchone()
        bd.execute("INSERT INTO mensajes(padre, seq, entrega, carga) VALUES (?, ?, ?, ?)",
                   (padre, seq, entrega, cuerpo))
        bd.execute("UPDATE buzon SET disposicion='admitida', seq_admitida=? WHERE entrega=?", (seq, entrega))
        activar_si_estan_todos(bd, padre)
    return ADMITIDA
''', "«tardía»"),
]

SEGUNDAS["5.3"] = _segunda("5.3", "buzon", '''
def activar_si_estan_todos(bd, padre):
    """En cola, una sola vez, cuando no queda ningún hijo esperado sin una entrega admitida."""
    bd.execute(
        """UPDATE ejecuciones SET estado = 'en_cola', version = version + 1
           WHERE id = ? AND estado = 'esperando'
             AND NOT EXISTS (SELECT hijo FROM hijos_esperados WHERE padre = ?
                             EXCEPT
                             SELECT hijo FROM buzon WHERE padre = ? AND disposicion = 'admitida')""",
        (padre, padre, padre))
''')

ERRORES["5.3"] = [
    _error("5.3", "contar mensajes en vez de mirar cada hijo", "buzon", '''
def activar_si_estan_todos(bd, padre):
    """Activa al padre si ya tiene tantos mensajes como hijos."""
    bd.execute(
        "UPDATE ejecuciones SET estado='en_cola', version=version+1 WHERE id=? AND estado='esperando' "
        "AND (SELECT COUNT(*) FROM mensajes WHERE padre=?) >= "
        "    (SELECT COUNT(*) FROM hijos_esperados WHERE padre=?)", (padre, padre, padre))
''', "dos entregas admitidas del mismo hijo"),
]

SEGUNDAS["5.4"] = _segunda("5.4", "subagentes", '''
def por_que_no(hallazgo, referencia, proyecto):
    """None si la línea citada contiene cada cita del hallazgo; si no, el motivo, con palabras propias."""
    citado = CITA.findall(hallazgo)
    if len(citado) == 0:
        return "el hallazgo no trae ninguna cita entre « » con que comprobarlo"
    if referencia is None:
        return "le falta la referencia: no se sabe dónde mirar"
    encaja = REFERENCIA.fullmatch(referencia)
    if not encaja:
        return f"{referencia!r} no tiene la forma ruta:línea"
    ruta, numero = encaja["ruta"], int(encaja["linea"])
    try:
        del_fichero = herramientas.lineas(herramientas.contenido(proyecto, ruta))
    except herramientas.ErrorDeHerramienta:
        return f"{ruta} no se puede leer dentro del proyecto"
    if not 1 <= numero <= len(del_fichero):
        return f"{ruta} acaba en la línea {len(del_fichero)}, antes de la {numero}"
    faltan = [trozo for trozo in citado if trozo not in del_fichero[numero - 1]]
    if faltan:
        return f"en {ruta}:{numero} no aparece «{faltan[0]}»"
    return None


def verificar(carga, proyecto):
    """(verificados, descartados): cada hallazgo contra la referencia de su misma posición."""
    verificados, descartados = [], []
    referencias = list(carga.get("referencias", []))
    for posicion, hallazgo in enumerate(carga.get("hallazgos", [])):
        referencia = referencias[posicion] if posicion < len(referencias) else None
        por_que = por_que_no(hallazgo, referencia, proyecto)
        if por_que:
            descartados.append({"hallazgo": hallazgo, "referencia": referencia, "motivo": por_que})
        else:
            verificados.append({"hallazgo": hallazgo, "referencia": referencia})
    return verificados, descartados
''')

ERRORES["5.4"] = [
    _error("5.4", "buscar la cita en todo el fichero", "subagentes", '''
def por_que_no(hallazgo, referencia, proyecto):
    """Mira si el fichero dice lo citado."""
    citas = CITA.findall(hallazgo)
    if not citas:
        return "no cita entre « » el texto que lo respalda"
    if referencia is None:
        return "no tiene referencia"
    partes = REFERENCIA.fullmatch(referencia)
    if partes is None:
        return f"la referencia {referencia!r} no dice la línea (ruta:línea)"
    try:
        texto = herramientas.contenido(proyecto, partes["ruta"])
    except herramientas.ErrorDeHerramienta as e:
        return str(e)
    for cita in citas:
        if cita not in texto:
            return f"{partes['ruta']} no dice «{cita}»"
    return None
''', "no en otra del fichero"),
]

# Los de tests/lecciones/test_comprobaciones_buzon.py, como trozos de la referencia cambiados.
ERRORES["5.1"] += [_cambiando("5.1", nombre, "buzon", cambios, caso) for nombre, cambios, caso in [
    ("aceptar la entrega de un hijo que el padre no espera", [("        if esperado is None:\n", "        if False:\n")],
     "no espera"),
    ("recibir que además admite", [("    return RECIBIDA", "    admitir(bd, entrega)\n    return RECIBIDA")],
     "recibir no admite"),
]]

ERRORES["5.2"] += [_cambiando("5.2", nombre, "buzon", cambios, caso) for nombre, cambios, caso in [
    ("admitir otra vez una entrega ya admitida", [("        if disposicion != RECIBIDA:\n", "        if False:\n")],
     "dos veces"),
    ("admitir sin activar al padre", [("        activar_si_estan_todos(bd, padre)\n", "")], "del último hijo"),
    ("el mensaje y la marca en dos transacciones", [(
        "        bd.execute(\n            \"UPDATE buzon SET disposicion='admitida'",
        "    with transaccion(bd):\n        bd.execute(\n            \"UPDATE buzon SET disposicion='admitida'")],
     "cae entre sus dos escrituras"),
]]

ERRORES["5.3"] += [_cambiando("5.3", nombre, "buzon", cambios, caso) for nombre, cambios, caso in [
    ("contar una entrega recibida como si estuviera admitida",
     [("\n                         AND b.disposicion = 'admitida'", "")], "recibida y sin admitir"),
    ("activar sin mirar que el padre siga esperando", [(" AND estado = 'esperando'", "")], "terminado"),
]]

# Los de tests/lecciones/test_comprobaciones_subagentes.py, como trozos de la referencia cambiados.
ERRORES["5.4"] += [_cambiando("5.4", nombre, "subagentes", cambios, caso) for nombre, cambios, caso in [
    ("dar por bueno un hallazgo sin cita",
     [('        return "no cita entre « » el texto que lo respalda"', "        return None")], "sin cita"),
    ("dar por bueno un hallazgo sin referencia", [('        return "no tiene referencia"', "        return None")],
     "sin referencia, se descarta"),
    ("mirar solo la primera cita", [("    for cita in citas:\n", "    for cita in citas[:1]:\n")], "cuentan las dos"),
    ("no mirar si el fichero tiene esa línea",
     [("    if numero > len(lineas):\n        return f\"{partes['ruta']} solo tiene {len(lineas)} líneas\"\n", "")],
     "que el fichero no tiene"),
    ("verificar cada hallazgo con la primera referencia",
     [("        referencia = referencias[i] if i < len(referencias) else None\n", "        referencia = referencias[0]\n")],
     "su mismo orden"),
    ("verificar sin mirar cuántas referencias hay",
     [("        referencia = referencias[i] if i < len(referencias) else None\n", "        referencia = referencias[i]\n")],
     "sin su referencia"),
    ("votar: lo que se repite se da por bueno",
     [("        if motivo is None:", "        if motivo is None or carga['hallazgos'].count(hallazgo) > 1:")],
     "sin votar"),
]]

# ---------------------------------------------------------------- 06

SEGUNDAS["6.1"] = _segunda("6.1", "efectos", '''
def atender(bd, agente, llamada, entorno, usuario, borrador):
    """Como permisos.atender, con la intención apuntada antes y el resultado después: cada efecto, una vez."""
    if not se_ejecutaria(llamada, usuario):
        return atender_sin_efectos(llamada, entorno, usuario)
    apuntada = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",
                          (agente, llamada["id"])).fetchone()
    if apuntada is not None and apuntada[0] is not None:
        return json.loads(apuntada[0])
    if llamada["name"] == "ejecutar":
        return ejecutar_como_mucho_una_vez(bd, agente, llamada, entorno, usuario,
                                           ya_intentada=apuntada is not None)
    if apuntada is None:
        antes, despues, esperado = intencion_de_editar(bd, agente, llamada, entorno, borrador)
    else:
        _, antes, despues, esperado = apuntada
    ruta = llamada["input"]["ruta"]
    como_esta = huella(herramientas.dentro(entorno, ruta))
    sin_hacer = esperado is None or como_esta == antes
    if sin_hacer:
        observacion = atender_sin_efectos(llamada, entorno, usuario)
        bd.efecto()
    elif como_esta == despues:
        observacion = resultado(llamada["id"], esperado)
    else:
        observacion = resultado(llamada["id"], f"Alguien más cambió {ruta} después de pedir esta edición: "
                                "no la hago. Vuelve a leerlo.", error=True)
    apuntar_resultado(bd, agente, llamada, observacion)
    return observacion
''')

ERRORES["6.1"] = [
    _error("6.1", "sin apuntar el resultado", "efectos", '''
def atender(bd, agente, llamada, entorno, usuario, borrador):
    """Como permisos.atender, pero sin apuntar el resultado."""
    if not se_ejecutaria(llamada, usuario):
        return atender_sin_efectos(llamada, entorno, usuario)
    fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",
                      (agente, llamada["id"])).fetchone()
    if fila is not None and fila[0] is not None:
        return json.loads(fila[0])
    if llamada["name"] == "ejecutar":
        return ejecutar_como_mucho_una_vez(bd, agente, llamada, entorno, usuario, ya_intentada=fila is not None)
    if fila is None:
        fila = (None,) + intencion_de_editar(bd, agente, llamada, entorno, borrador)
    _, antes, despues, esperado = fila
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if esperado is None or ahora == antes:
        observacion = atender_sin_efectos(llamada, entorno, usuario)
        bd.efecto()
    elif ahora == despues:
        observacion = resultado(llamada["id"], esperado)
    else:
        observacion = resultado(llamada["id"], "ha cambiado", error=True)
    return observacion
''', "queda apuntado en la tabla llamadas"),
]

SEGUNDAS["6.2"] = _segunda("6.2", "agentes", '''
def donde_esta(bd, agente):
    """(qué le toca, M), con M y el tope leídos de la base."""
    M = M_de(bd, agente)
    rol, contenido = M[-1]
    if rol != "asistente":
        agotado = respuestas(bd, agente) >= agente["tope"]
        return ("terminar" if agotado else "pedir"), M
    if llamadas_de(contenido):
        return "atender", M
    return "terminar", M
''')

ERRORES["6.2"] = [
    _error("6.2", "sin tope", "agentes", '''
def donde_esta(bd, agente):
    """(qué le toca, M)."""
    M = M_de(bd, agente)
    if M[-1][0] == "asistente":
        return ("atender" if llamadas_de(M[-1][1]) else "terminar"), M
    return "pedir", M
''', "con el tope agotado"),
]

_REINTENTOS = '''
def se_reintenta(error):
    """¿Se arregla `error` esperando? Sin respuesta, según la causa; con ella, según el estado."""
    if not isinstance(error, ErrorDelModelo):
        return isinstance(error, DE_LA_RED)
    if error.estado is None:
        return error.causa not in SIN_ARREGLO
    if error.codigo in api.LIMITES_DE_GASTO:
        return False
    return error.estado >= 500 or error.estado in REINTENTABLES


def espera(n, azar, base=BASE_S, tope=TOPE_S, pedida=None):
    """Lo que pida el servidor, si pide algo; si no, al azar hasta min(tope, base · 2^n)."""
    if pedida and pedida > 0:
        return pedida
    techo = min(tope, base * 2 ** n)
    return azar.uniform(0, techo)


class ModeloConReintentos:
    """Envuelve a un modelo (con `usage`) y reintenta lo que se arregla esperando.

    `al_reintentar(n, error, segundos)` (opcional) se llama antes de cada espera: para apuntarla."""

    def __init__(self, modelo, intentos=INTENTOS, base=BASE_S, tope=TOPE_S, plazo=PLAZO_S,
                 dormir=time.sleep, azar=None, reloj=time.monotonic, al_reintentar=None, cuerpo=CUERPO_S):
        if type(intentos) is not int or intentos < 1:
            raise ValueError(f"intentos tiene que ser un entero positivo, no {intentos!r}.")
        if not isinstance(plazo, (int, float)) or not plazo > 0:
            raise ValueError(f"plazo tiene que ser un número de segundos mayor que 0, no {plazo!r}.")
        if cuerpo is not None and (not isinstance(cuerpo, (int, float)) or not cuerpo > 0):
            raise ValueError(f"cuerpo tiene que ser un número de segundos mayor que 0, no {cuerpo!r}.")
        self.modelo, self.intentos, self.base, self.tope = modelo, intentos, base, tope
        self.plazo, self.dormir, self.reloj, self.cuerpo = plazo, dormir, reloj, cuerpo
        self.azar = azar or random.Random()
        self.al_reintentar = al_reintentar
        self.reintentos = []  # (n, error, segundos) de cada reintento de este modelo

    @property
    def usage(self):
        return self.modelo.usage

    def intento(self, M, herramientas, queda):
        """Una petición al modelo, que no espera al servidor más de `queda` segundos si el
        modelo tiene `espera` (un ModeloAPI): se le baja durante la petición."""
        propia = getattr(self.modelo, "espera", None)
        if propia is None:
            return self.modelo(M, herramientas)
        cuerpo = getattr(self.modelo, "cuerpo", None)
        self.modelo.espera = min(propia, max(queda, 0.01))
        if hasattr(self.modelo, "cuerpo") and self.cuerpo is not None:
            self.modelo.cuerpo = self.cuerpo
        try:
            return self.modelo(M, herramientas)
        finally:
            self.modelo.espera = propia
            if hasattr(self.modelo, "cuerpo"):
                self.modelo.cuerpo = cuerpo

    def __call__(self, M, herramientas=()):
        """La respuesta a M, con tantos intentos como haga falta y se pueda."""
        limite = self.reloj() + self.plazo
        hechos = 0
        while True:
            try:
                return self.intento(M, herramientas, limite - self.reloj())
            except Exception as fallo:  # noqa: BLE001 - se_reintenta decide qué se vuelve a intentar
                if not se_reintenta(fallo):
                    raise
                ultimo = fallo
            hechos += 1
            if hechos >= self.intentos:
                raise SeRinde(ultimo, "ya no quedan intentos") from ultimo
            segundos = espera(hechos - 1, self.azar, self.base, self.tope, pedida(ultimo))
            if segundos > UNA_ESPERA_S:
                raise SeRinde(ultimo, "el servidor pide una espera demasiado larga") from ultimo
            if self.reloj() + segundos >= limite:
                raise SeRinde(ultimo, "la espera no cabe en lo que queda de tiempo") from ultimo
            self.reintentos.append((hechos - 1, ultimo, segundos))
            if self.al_reintentar is not None:
                self.al_reintentar(hechos - 1, ultimo, segundos)
            self.dormir(segundos)
'''

SEGUNDAS["6.3"] = _segunda("6.3", "reintentos", _REINTENTOS)

ERRORES["6.3"] = [
    _error("6.3", "reintentar también los 4xx", "reintentos", '''
def se_reintenta(error):
    """¿Se arregla `error` esperando?"""
    if isinstance(error, ErrorDelModelo):
        if error.estado is None:
            return error.causa not in SIN_ARREGLO
        return True
    return isinstance(error, DE_LA_RED)
''', "no se reintenta ningún otro 4xx"),
]

# Los de tests/lecciones/test_comprobaciones_l06.py, escritos como trozos de la referencia cambiados.
ERRORES["6.2"] += [_cambiando("6.2", nombre, "agentes", cambios, caso) for nombre, cambios, caso in [
    ("M del historial entero", [("    M = M_de(bd, agente)\n    if M[-1][0]",
                                 "    M = agente['inicio'] + historial_crudo(bd, agente['id'])\n    if M[-1][0]")],
     "no el historial entero"),
    ("vuelve a pedir con llamadas pendientes", [('    if M[-1][0] == "asistente":\n        return ("atender"',
                                                 '    if False:\n        return ("atender"')],
     "toca atenderlas, no volver a pedir"),
    ("tope contado en M", [('return ("terminar" if respuestas(bd, agente) >= agente["tope"] else "pedir"), M',
                            'return ("terminar" if sum(r == "asistente" for r, _ in M) >= agente["tope"] '
                            'else "pedir"), M')],
     "el tope cuenta las respuestas de todo el historial"),
]]

ERRORES["6.1"] += [_cambiando("6.1", nombre, "efectos", cambios, caso) for nombre, cambios, caso in [
    ("sin intención", [("    if not se_ejecutaria(llamada, usuario):\n        return atender_sin_efectos",
                        "    if True:\n        return atender_sin_efectos")],
     "al reanudar no edita otra vez"),
    ("intención = hecha", [("    if esperado is None or ahora == antes:", "    if esperado is None:"),
                           ("    elif ahora == despues:", "    elif True:")],
     "al reanudar edita, una vez"),
    ("pisa cambios ajenos", [("    if esperado is None or ahora == antes:", "    if esperado is None or ahora != despues:")],
     "no se toca y se dice"),
    ("repite la orden tras una caída", [("ya_intentada=fila is not None)", "ya_intentada=False)")],
     "al reanudar no la repite"),
]]

_ESPERA_63 = "azar.uniform(0, min(tope, base * 2 ** n))"
ERRORES["6.3"] += [_cambiando("6.3", nombre, "reintentos", cambios, caso) for nombre, cambios, caso in [
    ("sin 408 ni 409", [("REINTENTABLES = {408, 409, 429}", "REINTENTABLES = {429}")], "se reintentan 408"),
    ("reintenta el límite de gasto", [("        if error.codigo in api.LIMITES_DE_GASTO:\n            return False\n", "")],
     "límite de gasto"),
    ("reintenta lo que no tuvo respuesta, sea lo que sea",
     [("            return error.causa not in SIN_ARREGLO", "            return True")], "URL que no es http"),
    ("sin tope", [(_ESPERA_63, "azar.uniform(0, base * 2 ** n)")], "se dobla"),
    ("el tope después del azar", [(_ESPERA_63, "min(tope, azar.uniform(0, base * 2 ** n))")],
     "va sobre la espera ya topada"),
    ("sin azar", [(_ESPERA_63, "min(tope, base * 2 ** n)")], "lleva azar"),
    ("obedece lo que pide aunque no sea más de 0", [("if pedida is not None and pedida > 0:", "if pedida is not None:")],
     "pide esperar más de 0 s"),
    ("sin al_reintentar", [("                if self.al_reintentar is not None:\n"
                            "                    self.al_reintentar(n, error, segundos)\n", "")],
     "se apunta antes de dormir"),
    ("un intento de más", [("for n in range(self.intentos):", "for n in range(self.intentos + 1):"),
                           ("n == self.intentos - 1", "n == self.intentos")], "tras `intentos` intentos"),
    ("sin tope de una espera", [("if segundos > UNA_ESPERA_S:", "if False:")], "más de UNA_ESPERA_S"),
    ("sin plazo", [("if self.reloj() + segundos >= fin:", "if False:")], "después del plazo"),
    ("cada intento con el plazo entero",
     [("return self.intento(M, herramientas, fin - self.reloj())", "return self.intento(M, herramientas, self.plazo)")],
     "lo que queda del plazo"),
]]


# El error corriente del 6.1 (issue 44, punto 3): apuntar la intención sin mirar antes si ya estaba.
# Sus casos dicen «lanzó IntegrityError: UNIQUE constraint failed…» y, una vez, qué quiere decir.
ERRORES["6.1"].append(_error("6.1", "apuntar la intención otra vez al reanudar", "efectos", '''
def atender(bd, agente, llamada, entorno, usuario, borrador):
    """Como permisos.atender, con la intención antes y el resultado después."""
    if not se_ejecutaria(llamada, usuario):
        return atender_sin_efectos(llamada, entorno, usuario)
    if llamada["name"] == "ejecutar":
        return ejecutar_como_mucho_una_vez(bd, agente, llamada, entorno, usuario, ya_intentada=False)
    antes, despues, esperado = intencion_de_editar(bd, agente, llamada, entorno, borrador)
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if esperado is None or ahora == antes:
        observacion = atender_sin_efectos(llamada, entorno, usuario)
        bd.efecto()
    elif ahora == despues:
        observacion = resultado(llamada["id"], esperado)
    else:
        observacion = resultado(llamada["id"], "ha cambiado", error=True)
    apuntar_resultado(bd, agente, llamada, observacion)
    return observacion
''', "al reanudar no edita otra vez"))

# Errores plausibles que ningún caso escrito pilla y sí el diferencial (hallazgo 10 de la issue 40).
ERRORES["6.1"] += [_cambiando("6.1", nombre, "efectos", cambios, LO_MISMO) for nombre, cambios in [
    ("llamar a bd.efecto() también al dar la observación esperada, sin editar",
     [("        observacion = resultado(llamada[\"id\"], esperado)\n",
       "        observacion = resultado(llamada[\"id\"], esperado)\n        bd.efecto()\n")]),
    ("la huella de ahora sin mirar si el fichero sigue ahí (otro lo borró)",
     [("    ahora = huella(fichero)", "    ahora = hashlib.sha256(fichero.read_bytes()).hexdigest()")]),
]]

ERRORES["6.2"] += [_cambiando("6.2", nombre, "agentes", cambios, LO_MISMO) for nombre, cambios in [
    ("M sin los marcadores de lo limpiado (reconstruir en vez de M_de)",
     [("    M = M_de(bd, agente)\n    if M[-1][0]", "    M = reconstruir(bd, agente[\"id\"], agente[\"inicio\"])\n    if M[-1][0]")]),
    ("el tope contado con todos los mensajes del historial, no con las respuestas",
     [('respuestas(bd, agente) >= agente["tope"]', 'len(historial_crudo(bd, agente["id"])) >= agente["tope"]')]),
]]
ERRORES["6.2"].append(_error("6.2", "el tope mirado antes que las llamadas pendientes", "agentes", '''
def donde_esta(bd, agente):
    """(qué le toca, M), sacado de la base."""
    M = M_de(bd, agente)
    if respuestas(bd, agente) >= agente["tope"]:
        return "terminar", M
    if M[-1][0] == "asistente":
        return ("atender" if llamadas_de(M[-1][1]) else "terminar"), M
    return "pedir", M
''', LO_MISMO))

ERRORES["6.3"] += [_cambiando("6.3", nombre, "reintentos", cambios, LO_MISMO) for nombre, cambios in [
    ("cualquier OSError tomado por un fallo de la red", [("    return isinstance(error, DE_LA_RED)",
                                                        "    return isinstance(error, OSError)")]),
    ("sin las respuestas a medias: solo ConnectionError y TimeoutError",
     [("    return isinstance(error, DE_LA_RED)", "    return isinstance(error, (ConnectionError, TimeoutError))")]),
]]


# ---------------------------------------------------------------- 07

SEGUNDAS["7.1"] = _segunda("7.1", "resumenes_pg", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """El puntero pasa a `nuevo` solo si sigue en `base`, en una sentencia; si no, BaseObsoleta con el activo."""
    exigir_guardable(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(ComoSqlite(bd), ejecucion, nuevo, "El resumen nuevo")
    cambiada = bd.execute(
        "UPDATE ejecuciones SET resumen_activo = %(nuevo)s "
        "WHERE id = %(ejecucion)s AND resumen_activo IS NOT DISTINCT FROM %(base)s RETURNING id",
        {"nuevo": nuevo, "ejecucion": ejecucion, "base": base}).fetchone()
    if cambiada is None:
        (el_de_ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id = %s",
                                    (ejecucion,)).fetchone()
        raise BaseObsoleta(f"Llegas tarde: partías de {base!r}, y el activo es ahora {el_de_ahora}. "
                           "Vuelve a empezar desde él.")
''')

ERRORES["7.1"] = [
    _error("7.1", "leer el puntero y después escribirlo", "resumenes_pg", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap en Python."""
    (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
    if ahora != base:
        raise BaseObsoleta(f"otro movió el puntero antes: el activo ya es el resumen {ahora}")
    bd.execute("UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s", (nuevo, ejecucion))
''', "a la vez"),
]

SEGUNDAS["7.2"] = _segunda("7.2", "buzon_pg", '''
def recibir(bd, padre, hijo, entrega, carga):
    """Como en buzon.py, con ON CONFLICT: dos entregas iguales a la vez, una «recibida» y otra «duplicada»."""
    exigir_nombre(entrega, "La identidad de la entrega")
    exigir_nombre(padre, "El padre")
    exigir_nombre(hijo, "El hijo")
    cuerpo = json_canonico(carga, "La carga de la entrega")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM ejecuciones WHERE id=%s", (padre,)).fetchone() is None:
            raise ValueError(f"No existe la ejecución padre {padre!r}: crea el padre con crear_padre().")
        esperado = bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=%s AND hijo=%s",
                              (padre, hijo)).fetchone()
        if esperado is None:
            raise PermissionError(f"El padre {padre!r} no espera ninguna entrega de {hijo!r}: solo "
                                  "aceptamos resultados de los hijos que el padre creó.")
        if esperado[0] is not None:
            validar_entrega(json.loads(esperado[0]), carga)
        nueva = bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s) "
                           "ON CONFLICT DO NOTHING RETURNING entrega", (entrega, padre, hijo, cuerpo)).fetchone()
        if nueva is not None:
            return RECIBIDA
        guardada = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if tuple(guardada) == (padre, hijo, cuerpo):
            return DUPLICADA
        raise ValueError(f"La entrega {entrega!r} ya se recibió con otros datos: una corrección es una "
                         "entrega nueva, con otra identidad; no reescribas la que ya llegó.")
''')

ERRORES["7.2"] = [
    _error("7.2", "mirar primero e insertar sin ON CONFLICT", "buzon_pg", '''
def recibir(bd, padre, hijo, entrega, carga):
    """El recibir de buzon.py, traducido."""
    cuerpo = json_canonico(carga, "La carga")
    with transaccion(bd):
        if bd.execute("SELECT 1 FROM hijos_esperados WHERE padre=%s AND hijo=%s", (padre, hijo)).fetchone() is None:
            raise PermissionError("ese padre no espera a ese hijo")
        anterior = bd.execute("SELECT padre, hijo, carga FROM buzon WHERE entrega=%s", (entrega,)).fetchone()
        if anterior is not None:
            if anterior == (padre, hijo, cuerpo):
                return DUPLICADA
            raise ValueError("la misma identidad con otros datos")
        bd.execute("INSERT INTO buzon(entrega, padre, hijo, carga) VALUES (%s, %s, %s, %s)",
                   (entrega, padre, hijo, cuerpo))
    return RECIBIDA
''', "justo antes de tu INSERT"),
]


# Los de tests/lecciones/test_comprobaciones_l07.py, como trozos de la referencia cambiados.
ERRORES["7.1"] += [_cambiando("7.1", nombre, "resumenes_pg", cambios, caso) for nombre, cambios, caso in [
    ("comparar con = (NULL = NULL no es verdad)", [("IS NOT DISTINCT FROM %s", "= %s")], "base None"),
    ("el IS de SQLite, que PostgreSQL no entiende con un parámetro", [("IS NOT DISTINCT FROM %s", "IS %s")],
     "sigue en la base"),
    ("no mirar el número de filas", [("    if movido.rowcount == 0:\n", "    if False:\n")], "otro lo movió antes"),
    ("un mensaje de BaseObsoleta que no dice cuál es el activo",
     [("{nombre_del_resumen(ahora)}: vuelve", "otro: vuelve")], "otro lo movió antes"),
    ("un UPDATE sin condición sobre la base",
     [(" AND resumen_activo IS NOT DISTINCT FROM %s", ""), ("(nuevo, ejecucion, base))", "(nuevo, ejecucion))")],
     "otro lo movió antes"),
]]

ERRORES["7.2"] += [_cambiando("7.2", nombre, "buzon_pg", cambios, caso) for nombre, cambios, caso in [
    ("un INSERT sin ON CONFLICT y sin mirar: el duplicado es un error de clave",
     [('"ON CONFLICT (entrega) DO NOTHING", (entrega', '"", (entrega')], "un reintento"),
    ("ON CONFLICT DO NOTHING sin mirar cuántas filas insertó: siempre «recibida»",
     [("        if guardada.rowcount == 1:\n", "        if True:\n")], "un reintento"),
    ("cero filas tomado siempre por un duplicado, sin comparar los datos",
     [("        if anterior == (padre, hijo, cuerpo):\n", "        if True:\n")], "con otros datos"),
]]


# Errores plausibles que ningún caso escrito pilla y sí el diferencial (hallazgo 10 de la issue 40).
ERRORES["7.1"] += [_cambiando("7.1", nombre, "resumenes_pg", cambios, LO_MISMO) for nombre, cambios in [
    ("el activo del mensaje de BaseObsoleta, leído sin decir de qué ejecución",
     [('(ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()',
       '(ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones ORDER BY id DESC").fetchone()')]),
]]
ERRORES["7.1"].append(_error("7.1", "el activo del mensaje, leído antes del UPDATE", "resumenes_pg", '''
def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap en una sentencia; el mensaje dice el activo que había al empezar."""
    exigir_guardable(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(ComoSqlite(bd), ejecucion, nuevo, "El resumen nuevo")
    (antes,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
    movido = bd.execute(
        "UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s AND resumen_activo IS NOT DISTINCT FROM %s",
        (nuevo, ejecucion, base))
    if movido.rowcount == 0:
        raise BaseObsoleta(f"Partías de {nombre_del_resumen(base)}, pero el activo es {nombre_del_resumen(antes)}.")
''', LO_MISMO))

ERRORES["7.2"] += [_cambiando("7.2", nombre, "buzon_pg", cambios, LO_MISMO) for nombre, cambios in [
    ("comparar lo guardado sin su padre: la misma identidad de otro padre pasa por duplicada",
     [("        if anterior == (padre, hijo, cuerpo):", "        if tuple(anterior)[1:] == (hijo, cuerpo):")]),
    ("comparar con un JSON propio y no con `cuerpo`: con acentos, un duplicado parece otros datos",
     [("        if anterior == (padre, hijo, cuerpo):",
       "        if anterior == (padre, hijo, json.dumps(carga, sort_keys=True, separators=(\",\", \":\"))):")]),
]]


# ---------------------------------------------------------------- un espacio con variantes


def sigue_igual(variante, n):
    """¿Tiene el punto de control `n` las mismas piezas que cambia `variante` que el de su lección?

    Si una lección posterior reescribe la función (la 03 le da a `bucle` su paso de compactar), el
    alumno la escribe otra vez en esa celda, y la variante de antes ya no es lo que tiene."""
    puntos = rutas.puntos_de_control()
    claves = [p.clave for p in componer.piezas(variante.texto, "La variante")[0]]

    def piezas_en(numero):
        fichero = puntos[numero] / f"{variante.modulo}.py"
        if not fichero.exists():
            return None
        texto = {p.clave: p.texto for p in componer.piezas(fichero.read_text(encoding="utf-8"), fichero.name)[0]}
        return [texto.get(c) for c in claves]
    return piezas_en(n) is not None and piezas_en(n) == piezas_en(ejercicios.buscar(variante.ejercicio).leccion)


def poner(espacio, n, lista):
    """Escribe en `espacio` (una carpeta con los módulos del punto de control `n`) cada variante de
    `lista` de un módulo del espacio cuya lección no pasa de `n` y que `sigue_igual` en `n`.
    Devuelve las que puso."""
    puestas = []
    for v in lista:
        if v.modulo is None or ejercicios.buscar(v.ejercicio).leccion > n or not sigue_igual(v, n):
            continue
        fichero = Path(espacio) / f"{v.modulo}.py"
        fichero.write_text(aplicar(v, fichero.read_text(encoding="utf-8")), encoding="utf-8")
        puestas.append(v)
    return puestas


# ---------------------------------------------------------------- 08

SEGUNDAS["8.1"] = _segunda("8.1", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    """Mira el fichero antes de editar: ya editado, sin tocar; cambiado por otro, un error."""
    ruta = llamada["input"]["ruta"]
    como_esta = huella(herramientas.dentro(entorno, ruta))
    if intencion["esperado"] is not None and como_esta != intencion["antes"]:
        if como_esta == intencion["despues"]:
            return resultado(llamada["id"], intencion["esperado"])
        return resultado(llamada["id"], f"No edito {ruta}: alguien lo cambió después de pedir la edición.",
                         error=True)
    return atender(llamada, entorno, usuario)
''')

ERRORES["8.1"] = [
    _error("8.1", "editar siempre, sin mirar el fichero (lo que hace un paso normal)", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    return atender(llamada, entorno, usuario)
''', "el paso repetido"),
    _error("8.1", "mirar solo si ya está hecha: un fichero cambiado por otro se edita", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if intencion["esperado"] is not None and ahora == intencion["despues"]:
        return resultado(llamada["id"], intencion["esperado"])
    return atender(llamada, entorno, usuario)
''', "alguien más cambió"),
    _error("8.1", "sin esperado, dar por hecha la edición que falla", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if ahora == intencion["antes"] and intencion["esperado"] is not None:
        return atender(llamada, entorno, usuario)
    if ahora == intencion["despues"] or intencion["esperado"] is None:
        return resultado(llamada["id"], intencion["esperado"])
    return resultado(llamada["id"], "cambiado por otro", error=True)
''', "una edición que falla"),
    _error("8.1", "editar sin preguntar al usuario", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if intencion["esperado"] is None or ahora == intencion["antes"]:
        return atender(llamada, entorno, lambda nombre, entrada: True)
    if ahora == intencion["despues"]:
        return resultado(llamada["id"], intencion["esperado"])
    return resultado(llamada["id"], "cambiado por otro", error=True)
''', "sin permiso"),
]

# Errores plausibles que ningún caso escrito pilla y sí el diferencial (como los de la 03b, la 06 y la 07).
ERRORES["8.1"] += [
    _error("8.1", "la huella de después sin mirar que haya esperado: un fichero borrado pasa por editado",
           "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    ahora = huella(herramientas.dentro(entorno, llamada["input"]["ruta"]))
    if ahora == intencion["antes"]:
        return atender(llamada, entorno, usuario)
    if ahora == intencion["despues"]:
        return resultado(llamada["id"], intencion["esperado"])
    return resultado(llamada["id"], "cambiado por otro", error=True)
''', LO_MISMO),
    _error("8.1", "su propia huella, sin mirar si el fichero existe", "efectos_dbos", '''
def aplicar_una_vez(entorno, llamada, intencion, usuario):
    import hashlib
    fichero = herramientas.dentro(entorno, llamada["input"]["ruta"])
    ahora = hashlib.sha256(fichero.read_bytes()).hexdigest()
    if intencion["esperado"] is None or ahora == intencion["antes"]:
        return atender(llamada, entorno, usuario)
    if ahora == intencion["despues"]:
        return resultado(llamada["id"], intencion["esperado"])
    return resultado(llamada["id"], "cambiado por otro", error=True)
''', LO_MISMO),
]

SEGUNDAS["8.2"] = _segunda("8.2", "flujos", '''
def repartir_en_cola(padre, hijos, proyecto, cola):
    """Encola todos los hijos y después espera a cada uno, en su orden."""
    def encolar(agente):
        with SetWorkflowID(padre + "/" + agente["id"]):
            return cola.enqueue(hijo, padre, agente, proyecto)
    return [h.get_result() for h in list(map(encolar, hijos))]
''')

ERRORES["8.2"] = [
    _error("8.2", "llamar a cada hijo sin la cola", "flujos", '''
def repartir_en_cola(padre, hijos, proyecto, cola):
    return repartir(padre, hijos, proyecto)
''', "encolado en la cola"),
    _error("8.2", "esperar a cada hijo nada más encolarlo", "flujos", '''
def repartir_en_cola(padre, hijos, proyecto, cola):
    hechos = []
    for agente in hijos:
        with SetWorkflowID(f"{padre}/{agente['id']}"):
            hechos.append(cola.enqueue(hijo, padre, agente, proyecto).get_result())
    return hechos
''', "con la de dos, sí"),
    _error("8.2", "encolar sin el id «padre/hijo»", "flujos", '''
def repartir_en_cola(padre, hijos, proyecto, cola):
    encolados = [cola.enqueue(hijo, padre, agente, proyecto) for agente in hijos]
    return [e.get_result() for e in encolados]
''', "id «padre/hijo»"),
]

# Errores plausibles que ningún caso escrito pilla y sí el diferencial: en los casos escritos el padre
# es el id del workflow que llama y el hijo de prueba no mira ni su padre ni su proyecto.
ERRORES["8.2"] += [_cambiando("8.2", nombre, "flujos", cambios, LO_MISMO) for nombre, cambios in [
    ("el id de cada hijo con DBOS.workflow_id, no con el padre que recibes",
     [("SetWorkflowID(f\"{padre}/{agente['id']}\"):\n            encolados.append(",
       "SetWorkflowID(f\"{DBOS.workflow_id}/{agente['id']}\"):\n            encolados.append(")]),
    ("el padre y el proyecto cambiados de sitio en enqueue",
     [("cola.enqueue(hijo, padre, agente, proyecto)", "cola.enqueue(hijo, proyecto, agente, padre)")]),
]]
