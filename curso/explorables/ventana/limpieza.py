"""Para la lección 03b (limpiar lo viejo) y sus tests: cada petición de dos corridas, con sus resultados enteros o borrados y la raya de la caché.

Equipo del curso. Lo estrena la lección 03b. Este módulo solo calcula y escribe texto plano; el
widget, con su deslizador, está en `curso/explorables/ventana/widget_de_la_limpieza.py`.

Qué entra. Una *corrida* es la lista de peticiones tal como se mandaron, cada una `(M, usage)`:
M, la lista de mensajes del harness tal cual se pasó al modelo, y `usage`, el dict que contestó
el servidor de ensayo. Aparte, `originales`: el contenido original de cada `tool_result`, por su
`tool_use_id` (la historia entera, que el harness guarda fuera de M). Un resultado es «entero»
si su contenido es igual al original y «borrado» si no: se compara con el original, no se busca
el texto del marcador (un fichero de verdad puede parecerse a un marcador).

Qué sale, en orden de lectura:

- `peticiones_de(corrida, originales, herramientas, fichero_de_proyecto)`: una `Peticion` por
  petición, con sus piezas (las de `presupuesto.piezas_de`, y cada observación partida en un
  resultado por `tool_result`, de tipo "entero" o "borrado"), los tokens de la petición, los que
  sirvió la caché (`cache_read_input_tokens`: la raya) y los que se recalculan.
- `comparar(corrida_a, corrida_b, originales, herramientas, fichero_de_proyecto)`: los pares
  `(Peticion, Peticion)` turno a turno, con la comprobación de que las dos hacen los mismos
  turnos; `totales(peticiones)`; `veredicto(pares, turno, nombres)`, en texto plano e idéntico
  para los mismos datos (nbval lo compara); `figura(pares, nombres)`, los tokens recalculados
  acumulados de las dos.

Las cuentas de `usage` son las de la API de Messages, que el servidor de ensayo imita
(`curso/ensayo/motor.py`): `input_tokens` son los tokens de entrada que NO salen de la caché; la
petición entera es `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`, y lo
que se recalcula es la petición menos lo leído de la caché.

Una entrada que no tiene sentido (un turno que no existe, un `usage` sin sus campos, un
`tool_use_id` sin original, dos corridas de distinta forma) lanza `ValueError` en castellano.
"""
from dataclasses import dataclass
from typing import NamedTuple

from curso.ensayo.motor import serializar_peticion
from curso.ensayo.tokens import trocear
from curso.explorables.ventana import presupuesto as v

ENTERO = "entero"  # el tipo de pieza de un resultado con su contenido original
BORRADO = "borrado"  # el de un resultado cuyo contenido ya no es el original: su marcador
ETIQUETAS = {ENTERO: "resultado entero", BORRADO: "resultado borrado (marcador)"}  # en los nombres
NOMBRES = ("cada turno", "por tandas")  # las dos políticas de la lección


@dataclass(frozen=True)
class Peticion:
    """Una petición de una corrida: sus piezas, cuántos tokens tiene y cuántos sirvió la caché."""
    numero: int  # desde 1: la petición del turno `numero`
    piezas: tuple  # `presupuesto.Pieza`, con los resultados de tipo "entero" o "borrado"
    entrada: int  # los tokens de la petición entera
    en_cache: int  # `cache_read_input_tokens`: el prefijo que compartía con la anterior

    @property
    def recalculados(self):
        """Los tokens que el servidor vuelve a calcular: lo que queda a la derecha de la raya."""
        return self.entrada - self.en_cache

    def resultados(self, tipo):
        """Las piezas de los resultados de ese tipo ("entero" o "borrado")."""
        return tuple(p for p in self.piezas if p.tipo == tipo)

    def pieza_del_corte(self):
        """La pieza donde cae la raya de la caché (None si la caché sirvió la petición entera)."""
        hasta = 0
        for p in self.piezas:
            hasta += p.tokens
            if self.en_cache < hasta:
                return p
        return None


class Totales(NamedTuple):
    """Lo de una corrida entera: peticiones, tokens mandados, leídos de la caché y recalculados."""
    peticiones: int
    entrada: int
    en_cache: int
    recalculados: int


# ---------------------------------------------------------------------------------------------
# Las piezas de una petición, con sus resultados
# ---------------------------------------------------------------------------------------------

def _numero(usage, campo, donde):
    valor = usage.get(campo, 0) if campo == "cache_creation_input_tokens" else usage.get(campo)
    if isinstance(valor, bool) or not isinstance(valor, int) or valor < 0:
        raise ValueError("%s: el usage no trae `%s` como un entero de 0 o más (trae %r); pasa el "
                         "usage que contestó el servidor a esa petición" % (donde, campo, valor))
    return valor


def _llamadas_por_id(M):
    """Cada bloque `tool_use` de M, por su id."""
    return {b.get("id"): b for rol, contenido in M if rol == "asistente" and isinstance(contenido, list)
            for b in contenido if isinstance(b, dict) and b.get("type") == "tool_use"}


def _tokens_hasta(sistema, herramientas, mensajes):
    return len(trocear(serializar_peticion(v._cuerpo(sistema, herramientas, mensajes))))


def _partir_observacion(M, i, pieza, originales, herramientas, donde):
    """La observación M[i] en un trozo por bloque: cada `tool_result`, entero o borrado."""
    sistema, mensajes, llamadas = M[0][1], [tuple(m) for m in M[1:]], _llamadas_por_id(M)
    bloques = M[i][1]
    antes = _tokens_hasta(sistema, herramientas, mensajes[:i - 1])
    trozos = []
    for j, b in enumerate(bloques, 1):
        hasta = _tokens_hasta(sistema, herramientas, mensajes[:i - 1] + [("usuario", bloques[:j])])
        if b.get("type") != "tool_result":
            trozos.append(pieza._replace(nombre="%s (otro bloque)" % pieza.nombre, tokens=hasta - antes))
        else:
            id_ = b.get("tool_use_id")
            if id_ not in originales:
                raise ValueError("%s: el tool_result %r no está en `originales`; pasa el contenido "
                                 "original de cada resultado, por su tool_use_id" % (donde, id_))
            tipo = ENTERO if b.get("content") == originales[id_] else BORRADO
            uso = llamadas.get(id_)
            que = v.describir_llamadas([uso]) if uso else "resultado %s" % id_
            trozos.append(v.Pieza("%s (turno %d): %s" % (que, pieza.turno, ETIQUETAS[tipo]), hasta - antes, tipo,
                                  pieza.turno))
        antes = hasta
    return trozos


def piezas_con_resultados(M, originales, herramientas, fichero_de_proyecto, donde="M"):
    """Las piezas de `presupuesto.piezas_de`, con cada observación partida en sus resultados."""
    piezas = v.piezas_de(M, herramientas, fichero_de_proyecto)
    de_mensajes = piezas[len(piezas) - (len(M) - 2):] if len(M) > 2 else ()
    salida = list(piezas[:len(piezas) - len(de_mensajes)])
    for i, pieza in enumerate(de_mensajes, 2):
        if pieza.tipo == "observacion" and isinstance(M[i][1], list):
            salida += _partir_observacion(M, i, pieza, originales, herramientas, donde)
        else:
            salida.append(pieza)
    return tuple(salida)


def peticiones_de(corrida, originales, herramientas, fichero_de_proyecto):
    """Una `Peticion` por cada `(M, usage)` de la corrida, en su orden.

    Las piezas suman lo que cuenta el servidor de ensayo; si no suman la petición que dice
    `usage`, ese usage no es el de ese M (o viene de otro servidor, que cuenta con otro
    tokenizador), y se dice.
    """
    if not isinstance(corrida, (list, tuple)) or not corrida:
        raise ValueError("una corrida es una lista no vacía de peticiones, cada una (M, usage)")
    if not isinstance(originales, dict):
        raise ValueError("`originales` debe ser un dict: tool_use_id → contenido original")
    peticiones = []
    for n, peticion in enumerate(corrida, 1):
        donde = "la petición %d" % n
        if not (isinstance(peticion, (list, tuple)) and len(peticion) == 2
                and isinstance(peticion[1], dict)):
            raise ValueError("%s no es (M, usage): cada petición de la corrida es la M que se mandó "
                             "y el dict `usage` de su respuesta" % donde)
        M, usage = peticion
        en_cache = _numero(usage, "cache_read_input_tokens", donde)
        entrada = (_numero(usage, "input_tokens", donde) + en_cache
                   + _numero(usage, "cache_creation_input_tokens", donde))
        piezas = piezas_con_resultados(M, originales, herramientas, fichero_de_proyecto, donde)
        suma = sum(p.tokens for p in piezas)
        if suma != entrada:
            raise ValueError("%s: sus piezas suman %d tokens y el usage dice %d (input_tokens + "
                             "cache_read_input_tokens): ese usage no es el de esa M, o no viene del "
                             "servidor de ensayo" % (donde, suma, entrada))
        peticiones.append(Peticion(n, piezas, entrada, en_cache))
    return tuple(peticiones)


# ---------------------------------------------------------------------------------------------
# Las dos corridas, turno a turno
# ---------------------------------------------------------------------------------------------

def _ids_de_resultados(M):
    return [b.get("tool_use_id") for rol, c in M[2:] if rol == "usuario" and isinstance(c, list)
            for b in c if isinstance(b, dict) and b.get("type") == "tool_result"]


def comparar(corrida_a, corrida_b, originales, herramientas, fichero_de_proyecto):
    """Las dos corridas turno a turno: una tupla de pares `(Peticion de a, Peticion de b)`.

    Las dos tienen que hacer los mismos turnos (el mismo guion, las mismas llamadas): el mismo
    número de peticiones, y en cada una los mismos `tool_result` en el mismo orden.
    """
    if not isinstance(corrida_a, (list, tuple)) or not isinstance(corrida_b, (list, tuple)):
        raise ValueError("las dos corridas deben ser listas de peticiones (M, usage)")
    if len(corrida_a) != len(corrida_b):
        raise ValueError("las dos corridas no tienen las mismas peticiones (%d y %d): compara dos "
                         "corridas del mismo guion, con el mismo tope" % (len(corrida_a), len(corrida_b)))
    a = peticiones_de(corrida_a, originales, herramientas, fichero_de_proyecto)
    b = peticiones_de(corrida_b, originales, herramientas, fichero_de_proyecto)
    for n, ((Ma, _), (Mb, _)) in enumerate(zip(corrida_a, corrida_b, strict=True), 1):
        if _ids_de_resultados(Ma) != _ids_de_resultados(Mb):
            raise ValueError("en la petición %d las dos corridas no llevan los mismos tool_result: "
                             "no hacen los mismos turnos, y compararlas no diría nada de la limpieza" % n)
    return tuple(zip(a, b, strict=True))


def totales(peticiones):
    """Los `Totales` de una corrida (sus `Peticion`): la suma de cada cifra sobre sus peticiones."""
    return Totales(len(peticiones), sum(p.entrada for p in peticiones),
                   sum(p.en_cache for p in peticiones), sum(p.recalculados for p in peticiones))


def par_del_turno(pares, turno):
    """El par `(Peticion de a, Peticion de b)` del turno `turno`, desde 1."""
    if isinstance(turno, bool) or not isinstance(turno, int):
        raise ValueError("el turno debe ser un número entero, no %r" % (turno,))
    if not 1 <= turno <= len(pares):
        raise ValueError("el turno %d no existe: estas corridas van del 1 al %d" % (turno, len(pares)))
    return pares[turno - 1]


def _donde_corta(p):
    corte = p.pieza_del_corte()
    if p.en_cache == 0:
        return "nada venía de la caché: la recalcula entera"
    if corte is None:
        return "la caché la sirvió entera"
    ultimo = max((q.turno for q in p.piezas if q.turno is not None), default=None)
    if corte.turno is not None and corte.turno == ultimo:  # el último turno es lo nuevo
        return "la raya cae en lo nuevo del turno %d: no recalcula nada de lo que ya había mandado" % corte.turno
    return "la raya cae en «%s»: de ahí al final, todo se recalcula" % corte.nombre


def _linea(nombre, p):
    enteros, borrados = len(p.resultados(ENTERO)), len(p.resultados(BORRADO))
    return ("- %s: %d tokens (%d resultado%s entero%s, %d borrado%s); %d de la caché, recalcula %d; %s."
            % (nombre, p.entrada, enteros, "" if enteros == 1 else "s", "" if enteros == 1 else "s",
               borrados, "" if borrados == 1 else "s", p.en_cache, p.recalculados, _donde_corta(p)))


def veredicto(pares, turno, nombres=NOMBRES):
    """El veredicto en texto plano del turno `turno` (desde 1) y de la corrida entera."""
    a, b = par_del_turno(pares, turno)
    ta, tb = totales([x for x, _ in pares]), totales([y for _, y in pares])
    if tb.recalculados < ta.recalculados:
        gana = "%s recalcula %d menos" % (nombres[1], ta.recalculados - tb.recalculados)
    elif ta.recalculados < tb.recalculados:
        gana = "%s recalcula %d menos" % (nombres[0], tb.recalculados - ta.recalculados)
    else:
        gana = "las dos recalculan lo mismo"
    return "\n".join([
        "Turno %d de %d." % (turno, len(pares)), _linea(nombres[0], a), _linea(nombres[1], b),
        "En toda la corrida (%d peticiones): %s recalcula %d tokens de %d, y %s %d de %d: %s."
        % (len(pares), nombres[0], ta.recalculados, ta.entrada, nombres[1], tb.recalculados,
           tb.entrada, gana)])


def figura(pares, nombres=NOMBRES):
    """La figura de la lección: los tokens recalculados acumulados, turno a turno, de las dos."""
    from matplotlib.figure import Figure  # aquí: el resto del módulo no necesita matplotlib

    turnos = list(range(1, len(pares) + 1))
    fig = Figure(figsize=(7, 3.6), layout="constrained")
    ejes = fig.add_subplot()
    for k, (nombre, marca) in enumerate(zip(nombres, ("o-", "s--"), strict=False)):
        acumulado, suma = [], 0
        for par in pares:
            suma += par[k].recalculados
            acumulado.append(suma)
        ejes.plot(turnos, acumulado, marca, label="%s (%d en total)" % (nombre, suma))
    ejes.set_xlabel("turno")
    ejes.set_ylabel("tokens recalculados, acumulados")
    ejes.set_xticks(turnos)
    ejes.set_title("Lo que la caché no pudo servir")
    ejes.grid(alpha=0.3)
    ejes.legend()
    return fig
