"""Resúmenes versionados de una ejecución y el puntero al activo, movido con compare-and-swap.

Lección 04. Sobre las tablas de `historial.py`, `instalar` comprueba el candidato, añade una
versión y mueve el puntero, todo en una `transaccion`. El puntero solo se mueve si sigue en la
base de la que partió el resumen: si otro instaló antes, este llega tarde (`BaseObsoleta`). No se
borra nada. `contexto()` arma la petición siguiente: el resumen activo y la cola posterior.
"""
import json

from historial import en_historial, transaccion
from validacion import (exigir_base, exigir_ejecucion, exigir_entero_positivo, exigir_que_exista, exigir_resumen_de,
                        exigir_texto, muestra, nombre_del_resumen)

# Una afirmación del resumen: qué se afirma y qué mensaje del historial lo respalda.
CLAVES_DE_AFIRMACION = {"texto", "fuente"}


class BaseObsoleta(Exception):
    """El resumen partió de una base que ya no es la activa: otro instaló antes."""


def activo(bd, ejecucion):
    """(id, cobertura) del resumen activo de `ejecucion`, o (None, 0) si aún no tiene."""
    exigir_ejecucion(ejecucion)
    fila = bd.execute(
        "SELECT e.resumen_activo, COALESCE(r.cobertura, 0) FROM ejecuciones e "
        "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=?",
        (ejecucion,),
    ).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
    return fila


def instalar(bd, ejecucion, base, corte, candidato):
    """Instala `candidato` como resumen de `ejecucion` hasta `corte`, partiendo de `base`.

    `base` es el id del resumen activo que se leyó al preparar el candidato (None si no había
    ninguno); `corte`, el último mensaje del historial que el candidato resume. El candidato es
    una lista de afirmaciones {"texto": str, "fuente": seq}; la fuente puede ser cualquier
    mensaje de la ejecución hasta el corte, también uno que ya citaba un resumen anterior.

    Devuelve el id del resumen nuevo. Lanza ValueError si algo está mal formado y
    BaseObsoleta si el activo ya no es `base`. Un rechazo no cambia nada en la base de datos.
    """
    # Primero lo que se puede comprobar sin leer la base de datos.
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(corte, "El corte")

    with transaccion(bd):
        # Lo que depende de la base de datos, dentro del turno de escritura: nadie lo cambia
        # entre la comprobación y la escritura.
        exigir_que_exista(bd, ejecucion)
        cobertura_base = _cobertura(bd, ejecucion, base)
        if corte <= cobertura_base:
            raise ValueError(
                f"El corte {corte} no amplía la cobertura de la base ({cobertura_base}): "
                "un resumen nuevo debe cubrir más mensajes que aquel del que parte."
            )
        if not en_historial(bd, ejecucion, corte):
            raise ValueError(
                f"El corte {corte} no es un mensaje del historial de {ejecucion!r}: "
                "corta en un mensaje que exista."
            )
        validar_candidato(bd, ejecucion, corte, candidato)

        nuevo = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, ?, ?, ?)",
            (ejecucion, corte, json.dumps(candidato, ensure_ascii=False), base),
        ).lastrowid
        # Si el puntero ya no está en la base, mover_puntero lanza BaseObsoleta, y la excepción
        # deshace también el INSERT de arriba: no queda ninguna versión suelta.
        mover_puntero(bd, ejecucion, base, nuevo)
    return nuevo


def validar_candidato(bd, ejecucion, corte, candidato):
    """Lanza ValueError si `candidato` no es un resumen válido de `ejecucion` hasta `corte`.

    Válido es una lista no vacía de afirmaciones {"texto": texto no vacío, "fuente": seq} cuyas
    fuentes son mensajes del historial de `ejecucion` no posteriores a `corte`; también los que
    ya citaba un resumen anterior (una referencia heredada sigue siendo válida). Encontrar la
    fila prueba que la referencia existe, no que la frase diga lo que dice el mensaje.

    No escribe nada. `instalar` la llama dentro de su transacción. Como es pública, comprueba
    también la ejecución y el corte: con un corte NaN, ninguna fuente sería «posterior».
    """
    exigir_ejecucion(ejecucion)
    exigir_entero_positivo(corte, "El corte")
    if not isinstance(candidato, list):
        raise ValueError(f"El resumen debe ser una lista de afirmaciones, no {muestra(candidato)}.")
    if not candidato:
        raise ValueError("El resumen está vacío: debe conservar al menos una afirmación con su fuente.")
    for numero, afirmacion in enumerate(candidato, 1):
        if not isinstance(afirmacion, dict) or set(afirmacion) != CLAVES_DE_AFIRMACION:
            raise ValueError(
                f"La afirmación {numero} debe ser un dict con exactamente las claves "
                f"'texto' y 'fuente', no {muestra(afirmacion)}."
            )
        exigir_texto(afirmacion["texto"], f"El texto de la afirmación {numero}")
        exigir_entero_positivo(afirmacion["fuente"], f"La fuente de la afirmación {numero}")
    for fuente in sorted({afirmacion["fuente"] for afirmacion in candidato}):
        if fuente > corte or not en_historial(bd, ejecucion, fuente):
            raise ValueError(
                f"La fuente {fuente} no es un mensaje de {ejecucion!r} anterior o igual al "
                f"corte {corte}: cita solo mensajes que el resumen cubre."
            )


def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap: el resumen activo de `ejecucion` pasa a ser `nuevo` solo si aún es `base`.

    Si otro lo movió antes, lanza BaseObsoleta y no cambia nada. Va dentro de la transacción de
    `instalar`, para que su excepción deshaga también la versión recién insertada.

    `nuevo` tiene que ser un resumen de `ejecucion` (ValueError si no): el puntero de una
    ejecución nunca señala el resumen de otra. El esquema tampoco lo deja (ver historial.ESQUEMA).
    """
    exigir_ejecucion(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(bd, ejecucion, nuevo, "El resumen nuevo")
    # `IS` compara también NULL (sin resumen previo), cosa que `=` no hace.
    movido = bd.execute(
        "UPDATE ejecuciones SET resumen_activo=? WHERE id=? AND resumen_activo IS ?",
        (nuevo, ejecucion, base),
    )
    if movido.rowcount == 0:
        (ahora,) = bd.execute(
            "SELECT resumen_activo FROM ejecuciones WHERE id=?", (ejecucion,)
        ).fetchone()
        raise BaseObsoleta(
            f"La base de este resumen era {nombre_del_resumen(base)}, pero el activo ya es "
            f"{nombre_del_resumen(ahora)}: vuelve a leer el activo y prepara el resumen desde él."
        )


def contexto(bd, ejecucion):
    """Lo que necesita la petición siguiente: el resumen activo y la cola posterior.

    Devuelve {"activo": id o None, "resumen": lista de afirmaciones o None,
    "cobertura": n, "cola": [(seq, texto), ...]}, leído todo en una sola instantánea.
    """
    exigir_ejecucion(ejecucion)
    bd.execute("BEGIN")  # una transacción de lectura: el resumen y la cola, del mismo instante
    try:
        fila = bd.execute(
            "SELECT e.resumen_activo, COALESCE(r.cobertura, 0), r.cuerpo FROM ejecuciones e "
            "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=?",
            (ejecucion,),
        ).fetchone()
        if fila is None:
            raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
        id_activo, cobertura, cuerpo = fila
        cola = bd.execute(
            "SELECT seq, texto FROM historial WHERE ejecucion=? AND seq>? ORDER BY seq",
            (ejecucion, cobertura),
        ).fetchall()
    finally:
        bd.execute("COMMIT")
    return {
        "activo": id_activo,
        "resumen": None if cuerpo is None else json.loads(cuerpo),
        "cobertura": cobertura,
        "cola": cola,
    }


# --- Consultas de apoyo -----------------------------------------------------------------------

def _cobertura(bd, ejecucion, base):
    return 0 if base is None else exigir_resumen_de(bd, ejecucion, base, "La base")
