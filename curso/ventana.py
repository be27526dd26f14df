"""El presupuesto de la ventana: una petición pieza a pieza y tres maneras de hacerla caber.

Equipo del curso; lo estrena la lección 02 (la ventana) y lo reutiliza la 03 (compactar) para
enseñar la misma petición antes y después de compactar. Aquí sólo hay lógica pura y texto
plano; la vista (un widget con dos deslizadores) está en `curso/vistas/ventana.py`.

De arriba abajo:

- `piezas_de(M, herramientas, fichero_de_proyecto)` parte la petición que representa M en
  piezas (el prompt de sistema, el fichero de proyecto, las herramientas, el pedido y, por cada
  turno, su llamada y su observación) con los tokens que cuenta el servidor de ensayo. Las
  piezas suman exactamente lo que cuenta el motor: cada una mide la diferencia entre dos
  prefijos del texto de la petición, así que los tokens de las marcas (`<user>`, los saltos de
  línea) también son de alguna pieza.
- `peticion_n(piezas, n)` es la petición n: el inicio y los n − 1 primeros turnos enteros.
- Tres políticas, cada una una función pura que devuelve un `Resultado`:
  `lo_trunca_el_modelo`, `lo_descarta_el_harness` y `el_harness_compacta`.
- `veredicto(...)` lo cuenta todo en texto plano, siempre igual para los mismos datos (nbval
  lo compara); `antes_y_despues(...)` hace lo mismo para la lección 03.

Los ajustes imposibles (una ventana menor que el inicio, una petición que no existe, una
reserva negativa...) lanzan `ValueError` con un mensaje en castellano que dice qué hacer.
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Optional

from curso.ensayo.motor import serializar_peticion
from curso.ensayo.tokens import trocear

RESERVA = 1024  # la reserva de la respuesta: el max_tokens que se deja libre en la ventana
PARA_EL_TURNO = 3072  # lo que se guarda para lo que traiga el turno en curso (sus observaciones)
UMBRAL = 4096  # el del curso: 8192 − 1024 de reserva − 3072 para el turno en curso
RECIENTES = 2  # los turnos enteros más recientes que la compactación deja tal cual
RESUMEN_SUPUESTO = 300  # tokens: un SUPUESTO del tamaño del resumen, no una medida

TIPOS = ("sistema", "proyecto", "herramientas", "pedido", "resumen", "llamada", "observacion",
         "reserva")
DEL_INICIO = ("sistema", "proyecto", "herramientas", "pedido")  # lo que ninguna política quita

ROLES = {"usuario": "user", "asistente": "assistant"}  # los mismos que usa api.peticion
RESUMEN_NUEVO = "resumen (tamaño supuesto)"  # el nombre de la pieza que deja la compactación
LARGO_DE_DESCRIPCION = 40  # caracteres de un argumento que se enseñan al describir una llamada


class Pieza(NamedTuple):
    """Un trozo de la petición: su nombre, sus tokens, su tipo (de `TIPOS`) y su turno (o None)."""
    nombre: str
    tokens: int
    tipo: str
    turno: Optional[int]


@dataclass(frozen=True)
class Resultado:
    """Lo que hace una política con una petición: qué conserva, qué quita y cómo queda."""
    politica: str  # "trunca", "descarta" o "compacta"
    conserva: tuple  # las piezas que llegan al modelo, en orden (sin la reserva)
    quita: tuple  # las piezas (o trozos de pieza) que salen
    ventana: int
    reserva: int
    original: int  # los tokens de la petición antes de la política
    salta: bool  # si la política ha tenido que actuar (la compactación: si pasó del umbral)
    umbral: Optional[int] = None  # sólo la compactación tiene umbral

    @property
    def peticion(self):
        """Los tokens de la petición que queda."""
        return sum(p.tokens for p in self.conserva)

    @property
    def pide(self):
        """Lo que la petición pide a la ventana: la petición más la reserva de la respuesta."""
        return self.peticion + self.reserva

    @property
    def cabe(self):
        return self.pide <= self.ventana

    @property
    def margen(self):
        """Los tokens de la ventana que sobran (negativo: los que faltan)."""
        return self.ventana - self.pide


# ---------------------------------------------------------------------------------------------
# Las piezas de una petición
# ---------------------------------------------------------------------------------------------

def describir_llamadas(bloques):
    """La descripción corta de una respuesta: «leer recetas.txt», «ejecutar python3 -m unittest»."""
    partes = []
    for b in bloques if isinstance(bloques, list) else [{"type": "text", "text": bloques}]:
        if b.get("type") != "tool_use":
            continue
        entrada = b.get("input") or {}
        clave = next((k for k in ("ruta", "comando") if isinstance(entrada.get(k), str)), None)
        if clave is None:
            clave = next((k for k, v in entrada.items() if isinstance(v, str)), None)
        argumento = entrada[clave] if clave else ""
        if len(argumento) > LARGO_DE_DESCRIPCION:
            argumento = argumento[:LARGO_DE_DESCRIPCION - 1] + "…"
        partes.append((b.get("name", "?") + " " + argumento).strip())
    return " + ".join(partes) or "respuesta de texto"


def _fichero(fichero_de_proyecto):
    """El texto del fichero de proyecto, se pase el texto o su ruta (None: no hay)."""
    if fichero_de_proyecto is None or isinstance(fichero_de_proyecto, str):
        return fichero_de_proyecto
    if isinstance(fichero_de_proyecto, (Path, os.PathLike)):
        return Path(fichero_de_proyecto).read_text(encoding="utf-8")
    raise ValueError("el fichero de proyecto debe ser su texto, su ruta o None, no %s"
                     % type(fichero_de_proyecto).__name__)


def _cuerpo(sistema, herramientas, mensajes):
    """Lo que cuenta el servidor de una petición, construida como la construye `api.peticion`."""
    return {"system": sistema, "tools": list(herramientas),
            "messages": [{"role": ROLES[rol], "content": c} for rol, c in mensajes]}


def piezas_de(M, herramientas, fichero_de_proyecto, primer_turno=1):
    """Las piezas de la petición que representa M, con los tokens del servidor de ensayo.

    M es como en el harness: `[("sistema", prompt + fichero de proyecto), ("usuario", pedido),
    ("asistente", [bloques]), ("usuario", [tool_result...]), ...]`. `fichero_de_proyecto` es el
    texto (o la ruta) del AGENTE.md que el harness pegó al final del prompt de sistema, para
    separarlo; None si no hay. Un mensaje del usuario que no contesta a una respuesta (la nota
    que deja la compactación) es una pieza «resumen». Los turnos se numeran desde
    `primer_turno`.
    """
    if not isinstance(M, (list, tuple)) or len(M) < 2:
        raise ValueError("M debe ser una lista que empiece por el prompt de sistema y el pedido: "
                         "[(\"sistema\", ...), (\"usuario\", ...), ...]")
    (rol, sistema), (rol_pedido, pedido) = M[0], M[1]
    if rol != "sistema" or not isinstance(sistema, str):
        raise ValueError("el primer mensaje de M debe ser (\"sistema\", texto), el prompt de sistema")
    if rol_pedido != "usuario":
        raise ValueError("el segundo mensaje de M debe ser el pedido, (\"usuario\", texto)")
    for i, mensaje in enumerate(M[1:], 1):
        if not (isinstance(mensaje, (list, tuple)) and len(mensaje) == 2 and mensaje[0] in ROLES):
            raise ValueError("el mensaje %d de M no es (\"usuario\" o \"asistente\", contenido)" % i)
    proyecto = _fichero(fichero_de_proyecto)
    if proyecto and not sistema.endswith(proyecto):
        raise ValueError("el prompt de sistema de M no acaba en ese fichero de proyecto: pasa el "
                         "AGENTE.md que se usó al construir M (o None si no tenía)")
    proyecto = proyecto or ""
    mensajes = [tuple(m) for m in M[1:]]

    # Los cortes: dónde acaba cada pieza en el texto que cuenta el servidor.
    completo = serializar_peticion(_cuerpo(sistema, herramientas, mensajes))
    fin_del_sistema = len(serializar_peticion(_cuerpo(sistema, [], [])))
    cortes = []  # (final en el texto, nombre, tipo, turno)
    if proyecto:
        cortes.append((fin_del_sistema - 1 - len(proyecto), "prompt de sistema", "sistema", None))
        cortes.append((fin_del_sistema, "fichero de proyecto", "proyecto", None))
    else:
        cortes.append((fin_del_sistema, "prompt de sistema", "sistema", None))
    if herramientas:
        cortes.append((len(serializar_peticion(_cuerpo(sistema, herramientas, []))),
                       "herramientas", "herramientas", None))
    turno, anterior = primer_turno - 1, None
    for i, (rol, contenido) in enumerate(mensajes):
        final = len(serializar_peticion(_cuerpo(sistema, herramientas, mensajes[:i + 1])))
        if i == 0:
            cortes.append((final, "pedido", "pedido", None))
        elif rol == "asistente":
            turno += 1
            cortes.append((final, describir_llamadas(contenido), "llamada", turno))
        elif anterior == "asistente":
            cortes.append((final, "observación del turno %d" % turno, "observacion", turno))
        else:
            cortes.append((final, "resumen", "resumen", None))
        anterior = rol
    # Cada pieza: lo que cuenta el prefijo que acaba en ella menos lo que contaba el anterior.
    piezas, contados = [], 0
    for final, nombre, tipo, t in cortes:
        hasta_aqui = len(trocear(completo[:final]))
        piezas.append(Pieza(nombre, hasta_aqui - contados, tipo, t))
        contados = hasta_aqui
    return tuple(piezas)


def _suma(piezas):
    return sum(p.tokens for p in piezas)


def _turnos(piezas):
    """Los números de turno de las piezas, en su orden y sin repetir."""
    vistos = []
    for p in piezas:
        if p.turno is not None and p.turno not in vistos:
            vistos.append(p.turno)
    return vistos


def numero_de_peticiones(piezas):
    """Cuántas peticiones se pueden formar: la del turno 1 (sólo el inicio) y una más por turno."""
    return len(_turnos(piezas)) + 1


def peticion_n(piezas, n):
    """Las piezas de la petición n: el inicio y los n − 1 primeros turnos enteros."""
    _entero(n, "el número de la petición")
    ultima = numero_de_peticiones(piezas)
    if not 1 <= n <= ultima:
        raise ValueError("la petición %d no existe: con este M van de la 1 (sólo el inicio) a la %d"
                         % (n, ultima))
    dentro = set(_turnos(piezas)[:n - 1])
    return tuple(p for p in piezas if p.turno is None or p.turno in dentro)


def pieza_de_reserva(reserva=RESERVA):
    """La reserva de la respuesta, como una pieza más (para dibujarla al final de la barra)."""
    return Pieza("reserva de la respuesta", reserva, "reserva", None)


def inicio_de(piezas):
    """Los tokens del inicio: prompt de sistema, fichero de proyecto, herramientas y pedido."""
    return sum(p.tokens for p in piezas if p.tipo in DEL_INICIO)


# ---------------------------------------------------------------------------------------------
# Las comprobaciones de los ajustes
# ---------------------------------------------------------------------------------------------

def _entero(valor, que):
    if isinstance(valor, bool) or not isinstance(valor, int):
        raise ValueError("%s debe ser un número entero, no %r" % (que, valor))


def _validar(piezas, ventana, reserva, **otros):
    _entero(ventana, "la ventana")
    _entero(reserva, "la reserva de la respuesta")
    for que, valor in otros.items():
        _entero(valor, que)
        if valor < 0:
            raise ValueError("%s no puede ser negativo (%d)" % (que, valor))
    if ventana < 1:
        raise ValueError("la ventana debe ser de 1 token o más, no de %d" % ventana)
    if reserva < 0:
        raise ValueError("la reserva de la respuesta no puede ser negativa (%d): pon 0 o más" % reserva)
    inicio = inicio_de(piezas)
    if ventana < inicio + reserva:
        raise ValueError("una ventana de %d tokens no llega ni para el inicio de M (%d tokens) más la "
                         "reserva de la respuesta (%d): ninguna política puede hacer sitio; sube "
                         "la ventana o baja la reserva" % (ventana, inicio, reserva))


def umbral(ventana, reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """El umbral de la compactación: la ventana menos la reserva y lo que traiga el turno en curso."""
    return ventana - reserva - para_el_turno


# ---------------------------------------------------------------------------------------------
# Las tres políticas
# ---------------------------------------------------------------------------------------------

def lo_trunca_el_modelo(piezas, ventana, reserva=RESERVA):
    """El modelo se queda con los últimos tokens que caben y pierde los del principio.

    Lo primero que se pierde es el prompt de sistema; una pieza cortada a medias se queda
    «sin el principio». (El servidor de ensayo no hace esto: contesta con un 400.)
    """
    _validar(piezas, ventana, reserva)
    sobra = _suma(piezas) + reserva - ventana  # lo que hay que quitar
    conserva, quita = [], []
    for p in piezas:
        if sobra <= 0:
            conserva.append(p)
        elif p.tokens <= sobra:
            quita.append(p)
            sobra -= p.tokens
        else:
            quita.append(p._replace(nombre=p.nombre + " (el principio)", tokens=sobra))
            conserva.append(p._replace(nombre=p.nombre + " (sin el principio)",
                                       tokens=p.tokens - sobra))
            sobra = 0
    return Resultado("trunca", tuple(conserva), tuple(quita), ventana, reserva,
                     _suma(piezas), bool(quita))


def _unidades(piezas):
    """Lo que el harness puede quitar entero, de lo más viejo a lo más nuevo: cada resumen
    anterior y cada turno (su llamada con su observación). El inicio no es una unidad."""
    unidades = []
    for p in piezas:
        if p.tipo in DEL_INICIO:
            continue
        if p.turno is not None and unidades and unidades[-1][0].turno == p.turno:
            unidades[-1].append(p)
        else:
            unidades.append([p])
    return unidades


def lo_descarta_el_harness(piezas, ventana, reserva=RESERVA):
    """El harness quita los turnos más viejos, enteros, hasta que la petición y la reserva caben.

    El inicio no sale nunca; cada llamada sale con su observación.
    """
    _validar(piezas, ventana, reserva)
    sobra = _suma(piezas) + reserva - ventana
    quita = []
    for unidad in _unidades(piezas):
        if sobra <= 0:
            break
        quita.extend(unidad)
        sobra -= sum(p.tokens for p in unidad)
    fuera = set(quita)
    conserva = tuple(p for p in piezas if p not in fuera)
    return Resultado("descarta", conserva, tuple(quita), ventana, reserva, _suma(piezas),
                     bool(quita))


def el_harness_compacta(piezas, ventana, reserva=RESERVA, resumen=RESUMEN_SUPUESTO,
                        recientes=RECIENTES, para_el_turno=PARA_EL_TURNO):
    """Si la petición pasa del umbral, los turnos viejos se cambian por un resumen.

    El umbral es `ventana − reserva − para_el_turno` (4096 en la ventana de 8192 del curso).
    Se quedan tal cual el inicio y los `recientes` turnos más nuevos; lo de en medio (los turnos
    viejos y un resumen anterior, si lo hay) pasa a ser un resumen de `resumen` tokens, un
    tamaño SUPUESTO. Si no pasa del umbral, o no hay ningún turno viejo, no quita nada.
    """
    _validar(piezas, ventana, reserva, resumen=resumen, recientes=recientes,
             para_el_turno=para_el_turno)
    limite = umbral(ventana, reserva, para_el_turno)
    salta = _suma(piezas) > limite
    unidades = _unidades(piezas)
    viejas = unidades[:max(0, len(unidades) - recientes)]
    turnos_viejos = [u for u in viejas if u[0].turno is not None]
    if not salta or not turnos_viejos:
        return Resultado("compacta", tuple(piezas), (), ventana, reserva, _suma(piezas), salta,
                         limite)
    quita = tuple(p for u in viejas for p in u)
    fuera = set(quita)
    nuevo = Pieza(RESUMEN_NUEVO, resumen, "resumen", None)
    inicio = [p for p in piezas if p.tipo in DEL_INICIO]
    resto = [p for p in piezas if p.tipo not in DEL_INICIO and p not in fuera]
    return Resultado("compacta", tuple(inicio + [nuevo] + resto), quita, ventana, reserva,
                     _suma(piezas), True, limite)


POLITICAS = {  # clave: (cómo se llama en la lección, la función)
    "trunca": ("lo trunca el modelo", lo_trunca_el_modelo),
    "descarta": ("lo descarta el harness", lo_descarta_el_harness),
    "compacta": ("el harness compacta", el_harness_compacta),
}


def aplicar(piezas, ventana, turno, reserva=RESERVA, resumen=RESUMEN_SUPUESTO,
            recientes=RECIENTES, para_el_turno=PARA_EL_TURNO):
    """{clave: Resultado} de las tres políticas sobre la petición `turno` de `piezas`."""
    peticion = peticion_n(piezas, turno)
    return {
        "trunca": lo_trunca_el_modelo(peticion, ventana, reserva),
        "descarta": lo_descarta_el_harness(peticion, ventana, reserva),
        "compacta": el_harness_compacta(peticion, ventana, reserva, resumen, recientes,
                                        para_el_turno),
    }


# ---------------------------------------------------------------------------------------------
# El veredicto, en texto plano
# ---------------------------------------------------------------------------------------------

_ARTICULOS = {  # cómo se nombra cada tipo de pieza en una frase, y cómo concuerda «entero»
    "sistema": ("el prompt de sistema", "entero"),
    "proyecto": ("el fichero de proyecto", "entero"),
    "herramientas": ("las herramientas", "enteras"),
    "pedido": ("el pedido", "entero"),
    "resumen": ("el resumen anterior", "entero"),
    "llamada": ("la llamada del turno %s", "entera"),
    "observacion": ("la observación del turno %s", "entera"),
}


def _nombrar(p):
    frase, entero = _ARTICULOS[p.tipo]
    return (frase % p.turno if "%s" in frase else frase), entero


def _lista(frases):
    return frases[0] if len(frases) == 1 else ", ".join(frases[:-1]) + " y " + frases[-1]


def _sobran(resultado):
    m = resultado.margen
    return "sobran %d" % m if m >= 0 else "faltan %d: sigue sin caber" % -m


def _lo_que_pierde(resultado):
    frases = []
    for p in resultado.quita:
        frase, entero = _nombrar(p)
        if p.nombre.endswith("(el principio)"):
            frases.append("el principio " + ("del " + frase[3:] if frase.startswith("el ") else
                                             "de " + frase))
        else:
            frases.append(frase + " " + entero)
    return frases


def _turnos_en_frase(piezas, con_descripcion):
    """«el turno 1 (leer recetas.txt, 1180 tokens)», «los turnos 1 a 7 (5285 tokens)»..."""
    turnos = _turnos(piezas)
    resumenes = [p for p in piezas if p.tipo == "resumen"]
    tokens = sum(p.tokens for p in piezas)
    partes = ["el resumen anterior"] if resumenes else []
    if len(turnos) == 1:
        partes.append("el turno %d" % turnos[0])
    elif len(turnos) == 2:
        partes.append("los turnos %d y %d" % tuple(turnos))
    elif turnos:
        seguidos = turnos == list(range(turnos[0], turnos[-1] + 1))
        partes.append("los turnos %d a %d" % (turnos[0], turnos[-1]) if seguidos else
                      "los turnos " + _lista([str(t) for t in turnos]))
    llamadas = [p.nombre for p in piezas if p.tipo == "llamada"]
    detalle = ", ".join(llamadas) + ", " if con_descripcion and 0 < len(llamadas) <= 3 else ""
    return "%s (%s%d tokens)" % (_lista(partes), detalle, tokens)


def _proporcion(tokens, ventana):
    if 2 * tokens < ventana:
        return "menos de la mitad de la ventana"
    return "el %d %% de la ventana" % round(100 * tokens / ventana)


def linea_de(resultado):
    """Una línea de texto que dice lo que hace una política y cómo queda la petición."""
    etiqueta = POLITICAS[resultado.politica][0]
    if resultado.politica == "trunca":
        if not resultado.quita:
            return "%s: no pierde nada; %s." % (etiqueta, _sobran(resultado))
        return "%s: pierde %s (%d tokens); %s." % (
            etiqueta, _lista(_lo_que_pierde(resultado)),
            sum(p.tokens for p in resultado.quita), _sobran(resultado))
    if resultado.politica == "descarta":
        if not resultado.quita:
            return "%s: no descarta nada; %s." % (etiqueta, _sobran(resultado))
        return "%s: descarta %s; %s." % (etiqueta, _turnos_en_frase(resultado.quita, True),
                                          _sobran(resultado))
    antes = resultado.original
    cuenta = "%d − %d − %d" % (resultado.ventana, resultado.reserva,
                               resultado.ventana - resultado.reserva - resultado.umbral)
    if not resultado.salta:
        return "%s: no salta (la petición, %d tokens, no pasa del umbral de %d = %s); %s." % (
            etiqueta, antes, resultado.umbral, cuenta, _sobran(resultado))
    if not resultado.quita:
        return ("%s: salta (%d tokens pasan del umbral de %d = %s), pero no hay turnos viejos "
                "que resumir: no quita nada; %s." % (etiqueta, antes, resultado.umbral, cuenta,
                                                    _sobran(resultado)))
    resumen = next(p for p in resultado.conserva if p.nombre == RESUMEN_NUEVO)
    return ("%s: salta (%d tokens pasan del umbral de %d = %s); %s pasan a un resumen de ~%d "
            "(tamaño supuesto); la petición queda en %d tokens, %s; %s." % (
                etiqueta, antes, resultado.umbral, cuenta,
                _turnos_en_frase(resultado.quita, False), resumen.tokens, resultado.peticion,
                _proporcion(resultado.peticion, resultado.ventana), _sobran(resultado)))


def veredicto(piezas, ventana, turno, reserva=RESERVA, resumen=RESUMEN_SUPUESTO,
              recientes=RECIENTES, para_el_turno=PARA_EL_TURNO):
    """El veredicto en texto plano: lo que pide la petición `turno` y una línea por política.

    `piezas` son las de M entero (`piezas_de`); `turno` es el número de la petición, la que
    manda el turno `turno` (el inicio y los `turno − 1` turnos anteriores).
    """
    resultados = aplicar(piezas, ventana, turno, reserva, resumen, recientes, para_el_turno)
    peticion = sum(p.tokens for p in peticion_n(piezas, turno))
    pide = peticion + reserva
    if pide <= ventana:
        cabe = "cabe, sobran %d" % (ventana - pide)
    else:
        cabe = "no cabe, faltan %d" % (pide - ventana)
    lineas = ["La petición %d pide %d tokens (%d + %d de reserva) a una ventana de %d: %s."
              % (turno, pide, peticion, reserva, ventana, cabe)]
    lineas += ["- " + linea_de(resultados[clave]) for clave in POLITICAS]
    return "\n".join(lineas)


def antes_y_despues(piezas_antes, piezas_despues, ventana=8192, reserva=RESERVA):
    """Dos líneas de texto: la misma petición antes y después de compactar (lección 03)."""
    _validar(piezas_antes, ventana, reserva)
    _validar(piezas_despues, ventana, reserva)
    lineas = []
    for cuando, piezas in (("Antes", piezas_antes), ("Después", piezas_despues)):
        tokens = sum(p.tokens for p in piezas)
        resumenes = [p for p in piezas if p.tipo == "resumen"]
        partes = ["el inicio (%d)" % inicio_de(piezas)]
        if resumenes:
            partes.append("un resumen de %d" % sum(p.tokens for p in resumenes))
        n = len(_turnos(piezas))
        partes.append("%d turno%s (%d)" % (n, "" if n == 1 else "s",
                                           sum(p.tokens for p in piezas if p.turno is not None)))
        pide = tokens + reserva
        estado = ("sobran %d" % (ventana - pide)) if pide <= ventana else ("faltan %d" % (pide - ventana))
        lineas.append("%s: %s = %d tokens; con la reserva pide %d a una ventana de %d: %s."
                      % (cuando, _lista(partes), tokens, pide, ventana, estado))
    return "\n".join(lineas)
