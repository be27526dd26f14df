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

from curso.alumno import componer


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
    return [v for id in sorted(SEGUNDAS.keys() | ERRORES.keys(), key=_clave)
            for v in ([SEGUNDAS[id]] if id in SEGUNDAS else []) + ERRORES.get(id, [])]


def _clave(id):
    return tuple(int(p) for p in id.split("."))


def _segunda(id, modulo, texto):
    return Variante(id, "segunda solución", modulo, texto.lstrip("\n"))


def _error(id, nombre, modulo, texto, caso):
    return Variante(id, nombre, modulo, texto.lstrip("\n"), caso)


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
''', "en una ventana de 8704"),
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
        raise BaseObsoleta(f"Otro instaló un resumen antes que tú: partías de {base!r} y el puntero ya "
                           "no está ahí. Lee otra vez el activo.")
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
