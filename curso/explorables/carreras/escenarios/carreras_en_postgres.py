"""Para la lección 07: las carreras de las lecciones 04 y 05, con transacciones abiertas.

Son los mismos actores, invariantes y fotos que `carreras_de_los_resumenes.py` y `carreras_del_buzon.py` de esta carpeta, para
el explorador de `curso.explorables.carreras.paralelo`: cada actor con su hilo y su conexión, y los pasos
que escriben *partidos* antes de su COMMIT (el paso «confirma» que los sigue), para que entre
medias actúen los demás. Corren en PostgreSQL (los módulos del punto de control 07) y en SQLite
(los de los puntos de control 04 y 05), con las mismas variantes:

- `lee_y_escribe`, la que cambia de bando: el código de SQLite llevado tal cual a PostgreSQL. Lee
  (¿sigue el puntero en la base?, ¿le falta algún hijo al padre?, ¿está terminado?) y después
  escribe, en una transacción. En SQLite es correcta: `BEGIN IMMEDIATE` toma el turno de
  escritura al empezar, y quien llega después espera a que acabe. En PostgreSQL, en READ
  COMMITTED, otra transacción puede confirmar entre la lectura y la escritura;
- las ingenuas de las lecciones 04 y 05, que fallan en los dos.

Para que el número de intercalados siga siendo pequeño, solo se parten los pasos donde está la
carrera (instalar, admitir, terminar) y se juntan los que no tocan la base (leer y preparar).
"""
from curso.explorables.carreras.escenarios import carreras_del_buzon as b
from curso.explorables.carreras.escenarios import carreras_de_los_resumenes as r
from curso.explorables.carreras.explorador import Paso, Variante
from curso.explorables.carreras.paralelo import CONFIRMA, EscenarioEnParalelo, sin_parar
from curso.rutas import PUNTOS

PUNTO = PUNTOS / "07_postgresql"


def confirma(actor):
    return Paso(actor, "confirma", CONFIRMA)


# --- Lección 04: dos resúmenes y un mensaje ---------------------------------------------------

def lee_y_prepara(actor, corte):
    lee, prepara = r.lee_la_base(actor), r.prepara(actor, corte)

    def hacer(mundo):
        return f"{lee.hacer(mundo)}; {prepara.hacer(mundo)}"
    return Paso(actor, f"lee la base y prepara hasta {corte}", hacer)


def instalar_sin_condicion(modulo, bd, ejecucion, base, corte, candidato):
    """INGENUA: mueve el puntero con un UPDATE simple, sin comprobar que siga en `base`."""
    with modulo.transaccion(bd):
        (nuevo,) = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, ?, ?, ?) RETURNING id",
            (ejecucion, corte, r.json.dumps(candidato, ensure_ascii=False), base)).fetchone()
        bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", (nuevo, ejecucion))
    return nuevo


def instalar_leyendo_y_escribiendo(modulo, bd, ejecucion, base, corte, candidato):
    """INGENUA en PostgreSQL, correcta en SQLite: mira en la transacción que el puntero siga en la
    base y, si sigue, lo mueve con un UPDATE simple. En SQLite nadie escribe entre la lectura y el
    UPDATE (BEGIN IMMEDIATE); en PostgreSQL, en READ COMMITTED, otro puede confirmar en medio."""
    with modulo.transaccion(bd):
        (activo,) = bd.execute("SELECT resumen_activo FROM ejecuciones WHERE id=?", (ejecucion,)).fetchone()
        if activo != base:
            raise modulo.BaseObsoleta(f"La base era {base}, pero el activo ya es {activo}.")
        (nuevo,) = bd.execute(
            "INSERT INTO resumenes(ejecucion, cobertura, cuerpo, anterior) VALUES (?, ?, ?, ?) RETURNING id",
            (ejecucion, corte, r.json.dumps(candidato, ensure_ascii=False), base)).fetchone()
        bd.execute("UPDATE ejecuciones SET resumen_activo=? WHERE id=?", (nuevo, ejecucion))
    return nuevo


VARIANTES_DE_RESUMENES = {
    "correcta": Variante("correcta", "instalar() del punto de control (07 en PostgreSQL, 04 en SQLite): "
                                     "compare-and-swap con un UPDATE condicional."),
    "lee_y_escribe": Variante(
        "lee_y_escribe", "Ingenua en PostgreSQL: lee el puntero en la transacción y, si sigue en la base, "
                         "lo mueve con un UPDATE simple.",
        {"instalar": instalar_leyendo_y_escribiendo}),
    "ingenua": Variante("ingenua", "Ingenua: mueve el puntero sin comprobar que siga en la base.",
                        {"instalar": instalar_sin_condicion}),
    "cobertura_al_instalar": Variante(
        "cobertura_al_instalar", "Ingenua: la cobertura es todo lo que hay al instalar, no el corte.",
        {"instalar": r.instalar_hasta_lo_ultimo}),
    "borra_lo_resumido": Variante(
        "borra_lo_resumido", "Ingenua: borra del historial lo que ya cubre el resumen.",
        {"instalar": r.instalar_y_borrar_lo_resumido}),
}

RESUMENES = EscenarioEnParalelo(
    nombre="dos resúmenes y un mensaje, con transacciones abiertas",
    descripcion=(
        "El resumen activo cubre hasta 2. A prepara uno hasta 4 y B otro hasta 3; el mensaje 5 "
        "llega mientras tanto. Cada instalación se para antes de su COMMIT."
    ),
    modulo=PUNTO / "resumenes_pg.py",
    modulo_sqlite=r.MODULO,
    abrir=r.abrir_de,
    actores={
        "A": [lee_y_prepara("A", r.CORTES["A"]), r.instala("A", r.CORTES["A"]), confirma("A")],
        "B": [lee_y_prepara("B", r.CORTES["B"]), r.instala("B", r.CORTES["B"]), confirma("B")],
        r.BUCLE: [r.anota_el_mensaje()],
    },
    preparar=r.preparar,
    conectar=lambda mundo: None,
    observar=r.observar,
    resultado=r.resultado,
    invariantes=r.ESCENARIO.invariantes,
    variantes=VARIANTES_DE_RESUMENES,
)


# --- Lección 05: el buzón ---------------------------------------------------------------------

def entrega_partida(actor, entrega_):
    """Recibir (entero) y admitir, parándose antes del COMMIT de la admisión."""
    def hacer(mundo):
        with sin_parar():
            recibida = b.recibir_entrega(mundo, actor, entrega_)
        return f"{recibida}, {mundo.funcion('admitir')(mundo.conexiones[actor], entrega_)}"
    return Paso(actor, f"entrega {entrega_}", hacer)


def entrega_a_los_terminados(actor):
    def hacer(mundo):
        return "; ".join(b.entrega(actor, f"e-{final}").hacer(mundo) for final in b.TERMINALES)
    return Paso(actor, "entrega a los tres padres terminados", hacer)


def admitir_leyendo_y_escribiendo(modulo, bd, entrega_):
    """INGENUA en PostgreSQL, correcta en SQLite: `admitir` de buzon.py tal cual. En una transacción
    lee la entrega y el estado del padre, añade el mensaje, marca la entrega y activa al padre si
    ya están todos. En SQLite nadie escribe en medio (BEGIN IMMEDIATE); en PostgreSQL, dos
    admisiones a la vez no ven la del otro (y ninguna activa al padre), y una admisión no ve un
    `terminar` que aún no ha confirmado (y mete el mensaje en un padre terminado)."""
    with modulo.transaccion(bd):
        decidida, padre, cuerpo = b.ya_decidida(bd, entrega_)
        if decidida:
            return decidida
        b.anadir_y_marcar(bd, padre, entrega_, cuerpo)
        modulo.activar_si_estan_todos(bd, padre)
    return "admitida"


VARIANTES_DEL_BUZON = {
    "correcta": Variante("correcta", "admitir() del punto de control (07 en PostgreSQL, 05 en SQLite)."),
    "lee_y_escribe": Variante(
        "lee_y_escribe", "Ingenua en PostgreSQL: admitir de buzon.py tal cual, sin bloquear la fila del padre.",
        {"admitir": admitir_leyendo_y_escribiendo}),
    # sin_unique es la historia de la lección 05: su esquema es SQL de SQLite, y aquí no se repite.
    **{nombre: variante for nombre, variante in b.VARIANTES.items() if nombre not in ("correcta", "sin_unique")},
}


def escenario_del_buzon(nombre, descripcion, actores, padres, invariantes=b.COMUNES):
    return EscenarioEnParalelo(
        nombre=nombre, descripcion=descripcion, modulo=PUNTO / "buzon_pg.py", modulo_sqlite=b.MODULO,
        abrir="abrir_buzon", actores=actores, preparar=b.preparador(padres), conectar=lambda mundo: None,
        observar=b.observar, resultado=b.resultado, invariantes=invariantes, variantes=VARIANTES_DEL_BUZON)


DOS_HIJOS = escenario_del_buzon(
    "dos hijos, una repetición y una corrección, con transacciones abiertas",
    "El padre espera a logs y config. Llegan las dos entregas y el transporte repite la de logs; "
    "cada admisión se para antes de su COMMIT. Después, logs manda una corrección.",
    {
        "logs": [entrega_partida("logs", "e-logs-1"), confirma("logs"), b.entrega("logs", "e-logs-2")],
        "config": [entrega_partida("config", "e-config"), confirma("config")],
        "transporte": [entrega_partida("transporte", "e-logs-1"), confirma("transporte")],
    },
    {b.PADRE: (b.ENCARGOS, None)},
)

CAIDA = escenario_del_buzon(
    "una caída a mitad de admitir, con transacciones abiertas",
    "El proceso que admite la entrega de logs cae entre sus dos escrituras y, al reiniciar, admite "
    "lo pendiente; mientras, llega config, que se para antes de su COMMIT, y el transporte repite logs.",
    {
        "logs": [b.recibe("logs", "e-logs-1"), b.admite_y_cae("logs", "e-logs-1"), b.reinicia("logs")],
        "config": [entrega_partida("config", "e-config"), confirma("config")],
        "transporte": [b.entrega("transporte", "e-logs-1")],
    },
    {b.PADRE: (b.ENCARGOS, None)},
)

TARDIAS = escenario_del_buzon(
    "entregas tardías y una cancelación, con transacciones abiertas",
    "Tres padres terminados reciben una entrega cada uno; otro padre, que espera a un solo hijo, se "
    "cancela mientras ese hijo entrega. La admisión y la cancelación se paran antes de su COMMIT.",
    {
        "tardias": [entrega_a_los_terminados("tardias")],
        "hijo": [b.recibe("hijo", "e-hijo"), b.admite("hijo", "e-hijo"), confirma("hijo")],
        "cancelador": [b.cancela("cancelador", b.PADRE), confirma("cancelador")],
    },
    {b.PADRE: (["hijo"], None), **{final: (["tardio"], final) for final in b.TERMINALES}},
    invariantes=b.COMUNES + (b.SIGUE_TERMINADO, b.TARDIO_APARTE),
)

ESCENARIOS = {"resumenes": RESUMENES, "dos_hijos": DOS_HIJOS, "caida": CAIDA, "tardias": TARDIAS}
