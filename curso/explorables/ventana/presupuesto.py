"""Para las lecciones 02 y 03 y sus tests: el presupuesto de la ventana, pieza a pieza, y tres maneras de hacerla caber.

Una cuenta, la de la ventana: las piezas de una petición, las tres políticas y el veredicto; el
widget está aparte.

Equipo del curso. Lo estrena la lección 02 (la ventana) y lo vuelve a usar la 03 (compactar),
que enseña la misma petición antes y después de compactar. Este módulo solo calcula y escribe
texto plano; el widget, con sus deslizadores, está en `curso/explorables/ventana/widget_de_la_ventana.py`.

Qué comprueba quién. El servidor de ensayo, como la API de Messages, admite una petición si su
entrada más su `max_tokens` caben en la ventana; el harness pide `MAX_TOKENS` (512, el de
`api.py`). Esa es la cuenta de «cabe» o «no cabe» de todo el módulo. Aparte, el umbral de la
compactación (lección 03) se guarda más: `RESERVA` (1024) para la respuesta y `PARA_EL_TURNO`
(3072) para las observaciones del turno en curso.

En orden de lectura:

- `piezas_de(M, herramientas, fichero_de_proyecto)` parte la petición de M en piezas con los
  tokens que cuenta el servidor de ensayo: prompt de sistema, fichero de proyecto (AGENTE.md),
  herramientas, pedido, y la llamada y la observación de cada turno. Cada pieza se mide como
  la diferencia entre dos prefijos del texto que cuenta el servidor, así que las marcas (`<user>`,
  los saltos de línea) caen en alguna pieza y la suma es exactamente lo que cuenta el motor.
- `peticion_n(piezas, n)`: la petición n, que lleva el inicio y los n − 1 primeros turnos.
- Las tres políticas, funciones puras que devuelven un `Resultado`: `lo_trunca_el_modelo`,
  `lo_descarta_el_harness` y `el_harness_compacta`.
- `veredicto(...)` lo cuenta en texto plano, idéntico para los mismos datos (nbval lo compara);
  `antes_y_despues(...)` hace lo propio en la lección 03.

Un ajuste que no tiene sentido (una ventana en la que no cabe ni el inicio, una petición que no
existe, un `max_tokens` negativo...) lanza `ValueError` con un mensaje en castellano.
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Optional

from curso.ensayo.motor import serializar_peticion
from curso.ensayo.tokens import VENTANA, trocear  # la del servidor de ensayo (y la de `llama-server -c 8192`)

MAX_TOKENS = 512  # el de api.py: el servidor lo suma a la entrada para decidir si cabe
RESERVA = 1024  # lo que el umbral aparta para la respuesta: el doble de MAX_TOKENS
PARA_EL_TURNO = 3072  # lo que el umbral aparta para las observaciones del turno en curso
UMBRAL = VENTANA - RESERVA - PARA_EL_TURNO  # 4096, el de compactar.py
RECIENTES = 2  # turnos enteros del final que la compactación no resume
RESUMEN_SUPUESTO = 300  # tokens del resumen en el dibujo: un SUPUESTO, no una medida

TIPOS = ("sistema", "proyecto", "herramientas", "pedido", "resumen", "llamada", "observacion",
         "max_tokens")
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
    conserva: tuple  # las piezas que llegan al modelo, en orden
    quita: tuple  # las piezas (o trozos de pieza) que salen
    ventana: int
    max_tokens: int  # lo que el servidor suma a la entrada al comprobar si cabe
    original: int  # los tokens de la petición antes de la política
    salta: bool  # si la política ha tenido que actuar (la compactación: si pasó del umbral)
    umbral: Optional[int] = None  # solo la compactación tiene umbral...
    reserva: Optional[int] = None  # ...y la reserva de la respuesta que lo calcula

    @property
    def peticion(self):
        """Los tokens de entrada de la petición que queda."""
        return sum(p.tokens for p in self.conserva)

    @property
    def pide(self):
        """Lo que el servidor compara con la ventana: la entrada más `max_tokens`."""
        return self.peticion + self.max_tokens

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
    (rol, sistema), (rol_pedido, _) = M[0], M[1]
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
    """Cuántas peticiones salen de estas piezas: la del turno 1 (solo el inicio) y una por turno."""
    return len(_turnos(piezas)) + 1


def peticion_n(piezas, n):
    """Las piezas de la petición n: el inicio y los n − 1 primeros turnos enteros."""
    _entero(n, "el número de la petición")
    ultima = numero_de_peticiones(piezas)
    if not 1 <= n <= ultima:
        raise ValueError("la petición %d no existe: con este M van de la 1 (solo el inicio) a la %d"
                         % (n, ultima))
    dentro = set(_turnos(piezas)[:n - 1])
    return tuple(p for p in piezas if p.turno is None or p.turno in dentro)


def pieza_de_la_respuesta(max_tokens=MAX_TOKENS):
    """El sitio que la petición pide para la respuesta, como una pieza (va al final de la barra)."""
    return Pieza("max_tokens (la respuesta)", max_tokens, "max_tokens", None)


def inicio_de(piezas):
    """Los tokens del inicio: prompt de sistema, fichero de proyecto, herramientas y pedido."""
    return sum(p.tokens for p in piezas if p.tipo in DEL_INICIO)


# ---------------------------------------------------------------------------------------------
# Las comprobaciones de los ajustes
# ---------------------------------------------------------------------------------------------

def _entero(valor, que):
    if isinstance(valor, bool) or not isinstance(valor, int):
        raise ValueError("%s debe ser un número entero, no %r" % (que, valor))


def _validar(piezas, ventana, max_tokens, **otros):
    _entero(ventana, "la ventana")
    _entero(max_tokens, "max_tokens")
    for que, valor in otros.items():
        _entero(valor, que)
        if valor < 0:
            raise ValueError("%s no puede ser negativo (%d)" % (que, valor))
    if ventana < 1:
        raise ValueError("la ventana debe ser de 1 token o más, no de %d" % ventana)
    if max_tokens < 0:
        raise ValueError("max_tokens no puede ser negativo (%d): pon 0 o más" % max_tokens)
    inicio = inicio_de(piezas)
    if ventana < inicio + max_tokens:
        raise ValueError("en una ventana de %d tokens no caben ni el inicio de M (%d tokens) y los "
                         "%d de max_tokens: ninguna política puede hacer sitio; sube la ventana o "
                         "baja max_tokens" % (ventana, inicio, max_tokens))


def umbral(ventana, reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """El umbral de la compactación: la ventana sin la reserva de la respuesta ni la del turno."""
    return ventana - reserva - para_el_turno


# ---------------------------------------------------------------------------------------------
# Las tres políticas
# ---------------------------------------------------------------------------------------------

def lo_trunca_el_modelo(piezas, ventana, max_tokens=MAX_TOKENS):
    """Se quitan tokens por delante, sin mirar qué son, hasta que la petición cabe.

    Sale primero el prompt de sistema, luego lo que le sigue; la pieza donde acaba el recorte se
    queda «sin el principio». (Así hacen algunos servidores; el de ensayo, no: contesta con un 400.)
    """
    _validar(piezas, ventana, max_tokens)
    exceso = _suma(piezas) + max_tokens - ventana  # lo que hay que recortar
    conserva, quita = [], []
    for p in piezas:
        if exceso <= 0:
            conserva.append(p)
        elif p.tokens <= exceso:
            quita.append(p)
            exceso -= p.tokens
        else:
            quita.append(p._replace(nombre=p.nombre + " (el principio)", tokens=exceso))
            conserva.append(p._replace(nombre=p.nombre + " (sin el principio)",
                                       tokens=p.tokens - exceso))
            exceso = 0
    return Resultado("trunca", tuple(conserva), tuple(quita), ventana, max_tokens,
                     _suma(piezas), bool(quita))


def _unidades(piezas):
    """Lo que el harness puede quitar de una vez, de lo más viejo a lo más nuevo: un resumen
    anterior, o un turno (su llamada y su observación juntas). El inicio no es ninguna unidad."""
    unidades = []
    for p in piezas:
        if p.tipo in DEL_INICIO:
            continue
        if p.turno is not None and unidades and unidades[-1][0].turno == p.turno:
            unidades[-1].append(p)
        else:
            unidades.append([p])
    return unidades


def lo_descarta_el_harness(piezas, ventana, max_tokens=MAX_TOKENS):
    """El harness tira turnos enteros, empezando por el más viejo, hasta que la petición cabe.

    El inicio se queda siempre, y una llamada nunca sale sin su observación (ni al revés).
    """
    _validar(piezas, ventana, max_tokens)
    exceso = _suma(piezas) + max_tokens - ventana
    quita = []
    for unidad in _unidades(piezas):
        if exceso <= 0:
            break
        quita.extend(unidad)
        exceso -= sum(p.tokens for p in unidad)
    fuera = set(quita)
    conserva = tuple(p for p in piezas if p not in fuera)
    return Resultado("descarta", conserva, tuple(quita), ventana, max_tokens, _suma(piezas),
                     bool(quita))


def el_harness_compacta(piezas, ventana, max_tokens=MAX_TOKENS, resumen=RESUMEN_SUPUESTO,
                        recientes=RECIENTES, reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """Por encima del umbral, los turnos viejos pasan a ser un resumen.

    El umbral es `ventana − reserva − para_el_turno` (4096 con la ventana del curso). Se quedan
    el inicio y los `recientes` turnos del final; todo lo de en medio (turnos viejos y, si lo
    hay, un resumen anterior) se cambia por una pieza de `resumen` tokens, un tamaño SUPUESTO.
    Sin pasar del umbral, o sin ningún turno viejo, la petición queda igual.
    """
    _validar(piezas, ventana, max_tokens, resumen=resumen, recientes=recientes,
             reserva=reserva, para_el_turno=para_el_turno)
    limite = umbral(ventana, reserva, para_el_turno)
    salta = _suma(piezas) > limite
    unidades = _unidades(piezas)
    viejas = unidades[:max(0, len(unidades) - recientes)]
    if not salta or not any(u[0].turno is not None for u in viejas):
        return Resultado("compacta", tuple(piezas), (), ventana, max_tokens, _suma(piezas), salta,
                         limite, reserva)
    quita = tuple(p for u in viejas for p in u)
    fuera = set(quita)
    inicio = [p for p in piezas if p.tipo in DEL_INICIO]
    resto = [p for p in piezas if p.tipo not in DEL_INICIO and p not in fuera]
    nuevo = Pieza(RESUMEN_NUEVO, resumen, "resumen", None)
    return Resultado("compacta", tuple(inicio + [nuevo] + resto), quita, ventana, max_tokens,
                     _suma(piezas), True, limite, reserva)


POLITICAS = {  # clave: (cómo se llama en la lección, la función)
    "trunca": ("lo trunca el modelo", lo_trunca_el_modelo),
    "descarta": ("lo descarta el harness", lo_descarta_el_harness),
    "compacta": ("el harness compacta", el_harness_compacta),
}


def aplicar(piezas, ventana, turno, max_tokens=MAX_TOKENS, resumen=RESUMEN_SUPUESTO,
            recientes=RECIENTES, reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """{clave: Resultado} de las tres políticas sobre la petición `turno` de `piezas`."""
    peticion = peticion_n(piezas, turno)
    return {
        "trunca": lo_trunca_el_modelo(peticion, ventana, max_tokens),
        "descarta": lo_descarta_el_harness(peticion, ventana, max_tokens),
        "compacta": el_harness_compacta(peticion, ventana, max_tokens, resumen, recientes,
                                        reserva, para_el_turno),
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


def _margen(pide, ventana):
    """«sobran N» o «faltan N»: lo que queda de la ventana, o lo que le falta."""
    return "sobran %d" % (ventana - pide) if pide <= ventana else "faltan %d" % (pide - ventana)


def _sobran(resultado):
    texto = _margen(resultado.pide, resultado.ventana)
    return texto if resultado.cabe else texto + ": sigue sin caber"


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
    partes = ["el resumen anterior"] if any(p.tipo == "resumen" for p in piezas) else []
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
    return "%s (%s%d tokens)" % (_lista(partes), detalle, _suma(piezas))


def _proporcion(tokens, ventana):
    if 2 * tokens < ventana:
        return "menos de la mitad de la ventana"
    return "el %d %% de la ventana" % round(100 * tokens / ventana)


def linea_de(resultado):
    """Una línea de texto: qué hace una política con la petición y cómo la deja."""
    etiqueta = POLITICAS[resultado.politica][0]
    if resultado.politica == "trunca":
        if not resultado.quita:
            return "%s: no pierde nada; %s." % (etiqueta, _sobran(resultado))
        return "%s: pierde %s (%d tokens); %s." % (
            etiqueta, _lista(_lo_que_pierde(resultado)), _suma(resultado.quita), _sobran(resultado))
    if resultado.politica == "descarta":
        if not resultado.quita:
            return "%s: no descarta nada; %s." % (etiqueta, _sobran(resultado))
        return "%s: descarta %s; %s." % (etiqueta, _turnos_en_frase(resultado.quita, True),
                                          _sobran(resultado))
    antes = resultado.original
    para_el_turno = resultado.ventana - resultado.reserva - resultado.umbral
    cuenta = "%d − %d − %d" % (resultado.ventana, resultado.reserva, para_el_turno)
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


def veredicto(piezas, ventana, turno, max_tokens=MAX_TOKENS, resumen=RESUMEN_SUPUESTO,
              recientes=RECIENTES, reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """El veredicto en texto plano: si la petición `turno` cabe, y una línea por política.

    `piezas` son las de M entera (`piezas_de`); la petición `turno` es la que manda ese turno:
    el inicio y los `turno − 1` turnos anteriores. «Cabe» es lo que comprueba el servidor de
    ensayo: la entrada más `max_tokens`, dentro de la ventana.
    """
    resultados = aplicar(piezas, ventana, turno, max_tokens, resumen, recientes, reserva,
                         para_el_turno)
    entrada = _suma(peticion_n(piezas, turno))
    pide = entrada + max_tokens
    lineas = ["La petición %d ocupa %d tokens; con los %d de max_tokens pide %d a una ventana de "
              "%d: %s." % (turno, entrada, max_tokens, pide, ventana,
                           ("cabe, " if pide <= ventana else "no cabe, ") + _margen(pide, ventana))]
    lineas += ["- " + linea_de(resultados[clave]) for clave in POLITICAS]
    return "\n".join(lineas)


def antes_y_despues(piezas_antes, piezas_despues, ventana=VENTANA, max_tokens=MAX_TOKENS,
                    reserva=RESERVA, para_el_turno=PARA_EL_TURNO):
    """Dos líneas de texto: la misma petición antes y después de compactar (lección 03)."""
    _validar(piezas_antes, ventana, max_tokens)
    _validar(piezas_despues, ventana, max_tokens)
    limite = umbral(ventana, reserva, para_el_turno)
    lineas = []
    for cuando, piezas in (("Antes", piezas_antes), ("Después", piezas_despues)):
        entrada = _suma(piezas)
        partes = ["el inicio (%d)" % inicio_de(piezas)]
        resumenes = [p for p in piezas if p.tipo == "resumen"]
        if resumenes:
            partes.append("un resumen de %d" % _suma(resumenes))
        n = len(_turnos(piezas))
        partes.append("%d turno%s (%d)" % (n, "" if n == 1 else "s",
                                           _suma(p for p in piezas if p.turno is not None)))
        lado = "por encima" if entrada > limite else "por debajo"
        pide = entrada + max_tokens
        lineas.append("%s: %s = %d tokens, %s del umbral de %d; con los %d de max_tokens pide %d a "
                      "una ventana de %d: %s." % (cuando, _lista(partes), entrada, lado, limite,
                                                 max_tokens, pide, ventana, _margen(pide, ventana)))
    return "\n".join(lineas)
