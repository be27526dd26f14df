"""Los pasos durables: cada transacción que escribe algo, numerada y apuntada en la propia base.

Lección 06. Una ejecución con varios agentes avanza a base de transacciones: anotar una
respuesta, instalar un resumen, recibir una entrega, admitirla... Cada una que cambia filas es
un **paso durable**: si el proceso muere justo después de su COMMIT, lo que hizo queda; si muere
antes, no queda nada de ella.

`Conexion` envuelve la conexión de SQLite sin que historial.py ni buzon.py lo noten (tienen
`execute`, `in_transaction`... como siempre) y hace dos cosas en cada COMMIT de una transacción
que cambió alguna fila:

1. añade una fila a la tabla `pasos`, DENTRO de esa misma transacción: qué clase de paso era
   (la etiqueta que puso quien lo dio, con `en`), de qué agente y en qué vida del proceso. Cada
   transacción que cambia filas está en la tabla si y solo si se confirmó;
2. cuenta el paso, y mira si el simulacro pide morir ahí (ver MORIR_EN).

Lo que ve y lo que no: una transacción empieza con un `BEGIN` y acaba con cualquier sentencia
que SQLite acepta como su final (`COMMIT`, `END`, con `TRANSACTION` o sin él, con `;` o sin él,
en mayúsculas o minúsculas, con comentarios alrededor: https://www.sqlite.org/lang_transaction.html),
con el `commit()` de sqlite3 o al salir de un `with bd:`. Tu `historial.transaccion` puede
escribirlo como quiera. Lo único que confirmaría sin apuntar el paso es `executescript()`, que
el curso no usa (ver `historial.abrir`). Y «cambió alguna fila» se mira con `total_changes`, que
cuenta las filas de INSERT, UPDATE y DELETE: una transacción que solo cambia el esquema (un
CREATE TABLE) no lo mueve, y no se apunta. Así le pasa a la que crea las tablas en `registro.abrir`.

El simulacro de caídas se controla con variables de entorno, que el proceso lee al abrir:

- `CURSO_MORIR_EN=paso:K`: SIGKILL justo después del COMMIT del paso K de este proceso;
  `efecto:K`: justo después del efecto K (una edición aplicada, antes de apuntar su resultado).
- `CURSO_FALLAR_EN=K:lleno` o `K:solo_lectura`: desde el paso K, la base deja de crecer
  (`PRAGMA max_page_count`: lo que cabe en las páginas que ya tiene se sigue confirmando, como
  en un disco lleno de verdad) o no admite ninguna escritura (`PRAGMA query_only`), sin tocar
  el disco de la máquina.
"""
import json
import os
import re
import signal
from contextlib import contextmanager

from historial import transaccion

MORIR_EN = "CURSO_MORIR_EN"
FALLAR_EN = "CURSO_FALLAR_EN"

# Las sentencias que abren y cierran una transacción, como las escribe la gramática de SQLite:
# BEGIN [DEFERRED|IMMEDIATE|EXCLUSIVE] [TRANSACTION [nombre]], COMMIT|END [TRANSACTION [nombre]]
# y ROLLBACK [TRANSACTION [nombre]] (no ROLLBACK TO, que vuelve a un SAVEPOINT y la deja abierta).
_COMENTARIO = re.compile(r"--[^\n]*|/\*.*?(?:\*/|$)", re.DOTALL)
_DE_TRANSACCION = re.compile(
    r"(BEGIN|COMMIT|END|ROLLBACK)(?:\s+(?:DEFERRED|IMMEDIATE|EXCLUSIVE))?(?:\s+TRANSACTION(?:\s+[^\s;]+)?)?\s*;?",
    re.IGNORECASE)

ESQUEMA = """CREATE TABLE IF NOT EXISTS pasos (
    n INTEGER PRIMARY KEY,              -- el orden de todos los pasos de la ejecución
    vida INTEGER NOT NULL,             -- qué arranque del proceso lo dio (1, 2...)
    clase TEXT NOT NULL,               -- 'respuesta', 'observaciones', 'entrega'...
    agente TEXT,
    detalle TEXT NOT NULL DEFAULT '{}' -- JSON: los tokens de una petición, la entrega...
)"""


def orden_de(sql):
    """"BEGIN", "COMMIT" (también un END) o "ROLLBACK" si `sql` abre o cierra una transacción; si
    no, None. Sin los comentarios ni los espacios de alrededor, que SQLite no mira."""
    encaje = _DE_TRANSACCION.fullmatch(_COMENTARIO.sub(" ", sql).strip())
    if encaje is None:
        return None
    orden = encaje.group(1).upper()
    return "COMMIT" if orden == "END" else orden


def _plan(variable):
    """(clase, número) de una variable como «paso:3» o «3:lleno», o None si no está."""
    valor = os.environ.get(variable, "")
    if not valor:
        return None
    a, b = valor.split(":", 1)
    return (a, int(b)) if variable == MORIR_EN else (b, int(a))


class Conexion:
    """Una conexión de SQLite que numera y apunta sus pasos durables (ver el docstring del módulo)."""

    def __init__(self, bd, vida=0):
        self.bd, self.vida = bd, vida
        self.hechos = {"paso": 0, "efecto": 0}  # los de este proceso
        self.etiqueta = ("otro", None, {})
        self._cambios = None  # total_changes al empezar la transacción de escritura en curso
        self._forzar = False  # apuntar el paso aunque la transacción no escriba nada más
        self._morir, self._fallar = _plan(MORIR_EN), _plan(FALLAR_EN)

    def __getattr__(self, nombre):  # in_transaction, close, iterdump...: los de la conexión
        return getattr(self.bd, nombre)

    def execute(self, sql, *argumentos):
        orden = orden_de(sql)
        if orden == "BEGIN":
            cursor = self.bd.execute(sql, *argumentos)
            self._cambios = self.bd.total_changes
            return cursor
        if orden == "COMMIT":
            return self._confirmar(lambda: self.bd.execute(sql, *argumentos))
        if orden == "ROLLBACK":
            self._cambios, self._forzar = None, False
        return self.bd.execute(sql, *argumentos)

    def commit(self):
        """El `commit()` de sqlite3: confirma la transacción abierta, y se apunta como un COMMIT."""
        return self._confirmar(self.bd.commit)

    def rollback(self):
        self._cambios, self._forzar = None, False
        return self.bd.rollback()

    def __enter__(self):
        return self

    def __exit__(self, tipo, valor, traza):
        """`with bd:` como en sqlite3: al salir, confirma si el bloque acabó bien y deshace si no."""
        if tipo is not None:
            self.rollback()
            return False
        try:
            self.commit()
        except BaseException:
            self.rollback()
            raise
        return False

    def _confirmar(self, confirmar):
        """Confirma con `confirmar()`; antes, si la transacción cambió alguna fila, apunta el paso
        dentro de ella."""
        if self._cambios is None or not self.bd.in_transaction:  # no hay ninguna que apuntar
            self._cambios, self._forzar = None, False
            return confirmar()
        escribio = self.bd.total_changes != self._cambios or self._forzar
        self._cambios, self._forzar = None, False
        if escribio:
            clase, agente, detalle = self.etiqueta
            self.bd.execute("INSERT INTO pasos(vida, clase, agente, detalle) VALUES (?, ?, ?, ?)",
                            (self.vida, clase, agente, json.dumps(detalle, ensure_ascii=False)))
        resultado = confirmar()
        if escribio:
            self._contar("paso")
        return resultado

    def apuntar(self, clase, agente=None, **detalle):
        """Un paso que solo apunta algo que pasó fuera de la base (una petición al modelo)."""
        with en(self, clase, agente, **detalle), transaccion(self):
            self._forzar = True

    def efecto(self):
        """Lo llama quien acaba de cambiar algo fuera de la base (una edición), antes de apuntarlo."""
        self._contar("efecto")

    def _contar(self, clase):
        self.hechos[clase] += 1
        if self._morir == (clase, self.hechos[clase]):
            os.kill(os.getpid(), signal.SIGKILL)  # el simulacro: sin limpiar nada, como un kill -9
        if clase == "paso" and self._fallar and self.hechos["paso"] == self._fallar[1]:
            if self._fallar[0] == "lleno":
                (paginas,) = self.bd.execute("PRAGMA page_count").fetchone()
                self.bd.execute(f"PRAGMA max_page_count = {paginas}")
            else:
                self.bd.execute("PRAGMA query_only = ON")


@contextmanager
def en(bd, clase, agente=None, **detalle):
    """Los pasos que se den dentro del bloque se apuntan como `clase` de `agente`, con `detalle`."""
    anterior = bd.etiqueta
    bd.etiqueta = (clase, agente, detalle)
    try:
        yield bd
    finally:
        bd.etiqueta = anterior


def lista(bd):
    """Todos los pasos: [{"n", "vida", "clase", "agente", "detalle"}, ...] en orden."""
    return [{"n": n, "vida": v, "clase": c, "agente": a, "detalle": json.loads(d)} for n, v, c, a, d in
            bd.execute("SELECT n, vida, clase, agente, detalle FROM pasos ORDER BY n")]
