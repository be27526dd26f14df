"""La compactación del bucle, durable: M vive en SQLite y se reconstruye al reabrir el fichero.

Lección 04. `CompactacionDurable(bd, ejecucion)` se enchufa al bucle en lugar de `compactar`
(`agente(..., compactar=CompactacionDurable(bd, "e1"))`) sin cambiar ni una línea de bucle.py.
En cada turno:

1. anota en el historial de `historial.py` cada mensaje de M que aún no estaba (la respuesta
   del turno y las observaciones del anterior). El historial no se borra nunca;
2. si M pasa del umbral, hace lo mismo que `compactar`: el harness (nunca el modelo) corta en
   un turno entero, y el modelo escribe el resumen. Pero en vez de cambiar M en memoria,
   instala el resumen en la base de datos con compare-and-swap (`resumenes.instalar`);
3. devuelve la M que el bucle enviará, sacada del almacén: el inicio, una nota con el resumen
   y la cola del historial posterior a su cobertura (`reconstruir`).

Así, tras cualquier turno, cerrar la base de datos y abrirla otra vez da la misma M: lo que el
modelo ve no cambia (el mismo corte y el mismo resumen que `compactar`), cambia dónde vive.
Un mensaje se guarda como el JSON de `[rol, contenido]`.
"""
import json

import historial
import resumenes
from compactar import INSTRUCCION, NOTA, RECIENTES, UMBRAL, corte, inicio_de, tokens
from entorno import HERRAMIENTAS, texto_de


def guardar(mensaje):
    """El texto con que un mensaje `(rol, contenido)` de M va al historial."""
    rol, contenido = mensaje
    return json.dumps([rol, contenido], ensure_ascii=False)


def recuperar(texto):
    """El mensaje `(rol, contenido)` que se guardó con `guardar`."""
    rol, contenido = json.loads(texto)
    return rol, contenido


def lo_que_dice(resumen, cobertura):
    """El texto de la nota de un resumen: sus afirmaciones nuevas, las que citan su cobertura.

    `CompactacionDurable` guarda el texto del modelo como una afirmación que cita el último
    mensaje que cubre, y detrás las afirmaciones heredadas del resumen anterior, que citan
    mensajes anteriores. Las heredadas no se repiten en la nota: el modelo escribió el texto
    nuevo leyendo la nota anterior, y se guardan para poder volver a su fuente. Por eso la nota
    es NOTA + el último resumen, como con `compactar`. Un resumen en el que ninguna afirmación
    cita su cobertura (no lo instaló `CompactacionDurable`) se muestra entero.
    """
    nuevas = [a["texto"] for a in resumen if a["fuente"] == cobertura]
    return "\n\n".join(nuevas or [a["texto"] for a in resumen])


def armar(contexto, inicio):
    """La M de un `contexto` leído con `resumenes.contexto`: el inicio, la nota y la cola.

    La nota (un mensaje del usuario con NOTA y `lo_que_dice` el resumen) solo va si hay un
    resumen activo. La cola son los mensajes del historial posteriores a su cobertura, tal cual.
    """
    M = list(inicio)
    if contexto["resumen"] is not None:
        M.append(("usuario", NOTA + lo_que_dice(contexto["resumen"], contexto["cobertura"])))
    return M + [recuperar(texto) for _, texto in contexto["cola"]]


def reconstruir(bd, ejecucion, inicio):
    """La M que el bucle enviará en la ejecución `ejecucion`, sacada solo de la base de datos.

    `inicio` es el de `agente.inicio` (el prompt de sistema y el pedido): no se guarda, porque
    no cambia. Sirve también para retomar una ejecución: `bucle(modelo, reconstruir(...), ...)`.
    """
    return armar(resumenes.contexto(bd, ejecucion), inicio)


class CompactacionDurable:
    """Un paso de compactación para el bucle, como `compactar(modelo, M) -> M`, pero durable.

    Recuerda la última M que devolvió (`self.vista`) y qué mensaje del historial es cada una de
    sus posiciones (`self.seqs`: None para el inicio y la nota). Con eso sabe qué mensajes de M
    son nuevos y traduce el corte, una posición de M, al `seq` del historial que el resumen cubre.
    """

    def __init__(self, bd, ejecucion, umbral=UMBRAL, k=RECIENTES):
        self.bd, self.ejecucion, self.umbral, self.k = bd, ejecucion, umbral, k
        self.seqs = self.vista = None  # todavía no ha visto ninguna M
        if not bd.execute("SELECT 1 FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone():
            historial.crear_ejecucion(bd, ejecucion)

    def __call__(self, modelo, M):
        p, c = inicio_de(M), corte(M, self.k)  # M mal formada: el error de compactar, y nada escrito
        n = tokens(modelo)  # sin usage, también: antes de escribir nada
        self.anotar_nuevos(M, p)
        if n <= self.umbral or c - p < 2:  # como compactar: cabe, o no hay ningún turno entero
            return M
        leido = resumenes.contexto(self.bd, self.ejecucion)  # la base: el resumen activo ahora
        hasta = self.seqs[c - 1]  # el último mensaje que se resume: unas observaciones
        if hasta is None or hasta <= leido["cobertura"]:
            return M  # otro compactador ya resumió hasta aquí (o más): nada nuevo que resumir
        resumen = texto_de(modelo(M[:c] + [("usuario", INSTRUCCION)], HERRAMIENTAS))
        if not resumen:  # sin resumen no se instala nada, y M queda tal cual
            return M
        candidato = [{"texto": resumen, "fuente": hasta}] + (leido["resumen"] or [])
        try:
            resumenes.instalar(self.bd, self.ejecucion, leido["activo"], hasta, candidato)
        except resumenes.BaseObsoleta:
            # Mientras el modelo escribía, otro compactador instaló un resumen sobre la misma
            # base. El suyo se queda; este turno M sigue tal cual, y la próxima compactación
            # partirá del activo que haya entonces.
            return M
        return self.desde_el_almacen(M[:p])

    def anotar_nuevos(self, M, p):
        """Anota en el historial los mensajes de M posteriores a la última M devuelta."""
        if self.seqs is None:  # la primera vez: M tiene que empezar por lo que ya hay guardado
            guardada = self.desde_el_almacen(M[:p])
            if M[:len(guardada)] != guardada:
                raise ValueError(
                    f"M no empieza por lo que la base de datos guarda de la ejecución "
                    f"{self.ejecucion!r}: para retomarla, empieza el bucle desde "
                    "reconstruir(bd, ejecucion, inicio); para otra ejecución, usa otro nombre.")
        elif M[:len(self.vista)] != self.vista:
            raise ValueError(
                "M no sigue a la que devolvió la compactación anterior: usa un "
                "CompactacionDurable nuevo (con su propia ejecución) para cada ejecución del bucle.")
        for mensaje in M[len(self.seqs):]:
            self.seqs.append(historial.anotar(self.bd, self.ejecucion, guardar(mensaje)))
        self.vista = list(M)

    def desde_el_almacen(self, inicio):
        """La M que guarda la base de datos, y qué mensaje del historial es cada posición suya."""
        leido = resumenes.contexto(self.bd, self.ejecucion)
        M = armar(leido, inicio)
        self.seqs = [None] * (len(M) - len(leido["cola"])) + [seq for seq, _ in leido["cola"]]
        self.vista = list(M)
        return M
