"""Los resúmenes durables de la lección 04, en PostgreSQL (psycopg 3): instalar y el contexto.

Lección 07. Las mismas funciones y promesas que `resumenes.py`, sobre las tablas de
`historial_pg.py`. En READ COMMITTED, leer y después escribir ya no es seguro: otro puede
confirmar en medio. Por eso el compare-and-swap es UNA sentencia (`mover_puntero`) y `contexto`
lee todo en una sola consulta.
"""
import json

import resumenes as _sqlite
from historial import en_historial
from historial_pg import ComoSqlite, exigir_guardable, transaccion
from resumenes import CLAVES_DE_AFIRMACION, BaseObsoleta  # noqa: F401  (las mismas, para quien use este módulo)
from validacion import exigir_base, exigir_entero_positivo, exigir_que_exista, exigir_resumen_de, nombre_del_resumen


def activo(bd, ejecucion):
    """(id, cobertura) del resumen activo de `ejecucion`, o (None, 0) si aún no tiene."""
    exigir_guardable(ejecucion)
    fila = bd.execute("SELECT e.resumen_activo, COALESCE(r.cobertura, 0) FROM ejecuciones e "
                      "LEFT JOIN resumenes r ON r.id = e.resumen_activo WHERE e.id=%s", (ejecucion,)).fetchone()
    if fila is None:
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
    return fila


def instalar(bd, ejecucion, base, corte, candidato):
    """Instala `candidato` como resumen de `ejecucion` hasta `corte`, partiendo de `base`.

    Lo mismo que `resumenes.instalar`: devuelve el id del resumen nuevo; ValueError si algo está
    mal formado y BaseObsoleta si el activo ya no es `base`. Un rechazo no cambia nada.

    Lo que se lee antes del compare-and-swap no cambia en medio (las ejecuciones no se borran, los
    resúmenes no cambian, el historial solo crece): solo el puntero, que protege `mover_puntero`.
    """
    exigir_guardable(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(corte, "El corte")
    with transaccion(bd):
        # Lo que depende de la base de datos, con las mismas comprobaciones que en SQLite.
        exigir_que_exista(ComoSqlite(bd), ejecucion)
        cobertura_base = 0 if base is None else exigir_resumen_de(ComoSqlite(bd), ejecucion, base, "La base")
        if corte <= cobertura_base:
            raise ValueError(f"El corte {corte} no amplía la cobertura de la base ({cobertura_base}): "
                             "un resumen nuevo debe cubrir más mensajes que aquel del que parte.")
        if not en_historial(ComoSqlite(bd), ejecucion, corte):
            raise ValueError(f"El corte {corte} no es un mensaje del historial de {ejecucion!r}: "
                             "corta en un mensaje que exista.")
        validar_candidato(bd, ejecucion, corte, candidato)
        (nuevo,) = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (%s, %s, %s, %s) RETURNING id",
            (ejecucion, corte, json.dumps(candidato, ensure_ascii=False), base)).fetchone()
        mover_puntero(bd, ejecucion, base, nuevo)  # su BaseObsoleta deshace también el INSERT
    return nuevo


def validar_candidato(bd, ejecucion, corte, candidato):
    """Lanza ValueError si `candidato` no es un resumen válido de `ejecucion` hasta `corte`.

    Es `resumenes.validar_candidato`, la misma función: sus consultas (solo lecturas) van con «?»,
    como las quiere sqlite3, y `ComoSqlite` las pasa a «%s», como las quiere psycopg.
    """
    exigir_guardable(ejecucion)
    _sqlite.validar_candidato(ComoSqlite(bd), ejecucion, corte, candidato)


def mover_puntero(bd, ejecucion, base, nuevo):
    """Compare-and-swap: el resumen activo de `ejecucion` pasa a ser `nuevo` solo si aún es `base`.

    Si otro lo movió antes, lanza BaseObsoleta y no cambia nada. Va dentro de la transacción de
    `instalar`. `nuevo` tiene que ser un resumen de `ejecucion` (ValueError si no).
    """
    exigir_guardable(ejecucion)
    exigir_base(base)
    exigir_entero_positivo(nuevo, "El resumen nuevo")
    exigir_resumen_de(ComoSqlite(bd), ejecucion, nuevo, "El resumen nuevo")
    # Una sola sentencia: la comparación y la escritura, juntas. Si otra transacción está moviendo
    # el puntero, el UPDATE espera a que acabe y evalúa el WHERE sobre la fila ya confirmada.
    # IS NOT DISTINCT FROM es el `IS` de SQLite: compara también NULL (aún sin resumen).
    movido = bd.execute(
        "UPDATE ejecuciones SET resumen_activo=%s WHERE id=%s AND resumen_activo IS NOT DISTINCT FROM %s",
        (nuevo, ejecucion, base))
    if movido.rowcount == 0:
        (ahora,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=%s", (ejecucion,)).fetchone()
        raise BaseObsoleta(
            f"La base de este resumen era {nombre_del_resumen(base)}, pero el activo ya es "
            f"{nombre_del_resumen(ahora)}: vuelve a leer el activo y prepara el resumen desde él.")


def contexto(bd, ejecucion):
    """Lo que necesita la petición siguiente: el resumen activo y la cola posterior.

    Devuelve {"activo": id o None, "resumen": lista de afirmaciones o None,
    "cobertura": n, "cola": [(seq, texto), ...]}, leído en UNA sentencia: en READ COMMITTED
    cada sentencia ve su propio instante, y así el resumen y su cola son del mismo.
    """
    exigir_guardable(ejecucion)
    filas = bd.execute(
        "SELECT e.resumen_activo, COALESCE(r.cobertura, 0), r.cuerpo, h.seq, h.texto "
        "FROM ejecuciones e LEFT JOIN resumenes r ON r.id = e.resumen_activo "
        "LEFT JOIN historial h ON h.ejecucion = e.id AND h.seq > COALESCE(r.cobertura, 0) "
        "WHERE e.id=%s ORDER BY h.seq", (ejecucion,)).fetchall()
    if not filas:
        raise ValueError(f"No existe la ejecución {ejecucion!r}: créala con crear_ejecucion().")
    id_activo, cobertura, cuerpo = filas[0][:3]
    return {
        "activo": id_activo,
        "resumen": None if cuerpo is None else json.loads(cuerpo),
        "cobertura": cobertura,
        "cola": [(seq, texto) for *_, seq, texto in filas if seq is not None],
    }
