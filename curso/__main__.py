"""La línea de órdenes `python -m curso ORDEN`, para todos: una tabla de órdenes y un analizador en español.

La presenta la lección 00 (`doctor`, `comparar`, `restaurar`); el resto de lecciones añade
`servidor`, `medir` y `postgres` (la 07); `comprobar N` mira tu espacio por lo que hace; y los
instructores usan `generar`, `ejecutar`, `probar` y `calificar`.

`ORDENES` es la tabla de las órdenes: su nombre, el módulo donde vive y su línea de ayuda. Ese
módulo define `argumentos_<orden>(analizador)`, que añade sus argumentos al `Analizador` que
recibe (no hace falta si la orden no tiene), y `orden_<orden>(args)`, que hace el trabajo con los
argumentos ya leídos y devuelve None o True (código 0), False (1) o un código de salida. Un guion
en el nombre de la orden es un `_` en el de las funciones. El módulo de una orden se importa solo
cuando se usa esa orden (o se pide su ayuda), así que `python -m curso --ayuda` es rápido.

Argumentos que no valen: un mensaje en español y el código de salida 2.

Si quien lee la salida se va antes de que termine (`python -m curso comparar 1 | head`), la orden
acaba sin traza, con el código 1, como recomienda la documentación de Python para SIGPIPE.
"""
import argparse
import importlib
import os
import re
import sys

PROG = "python -m curso"
ERROR_DE_USO = 2  # lo mismo que usa argparse, y que `comparar` para un punto de control que no existe
SALIDA_CERRADA = 1  # quien leía la salida la cerró antes de tiempo (el «head» de una tubería)

# (orden, módulo, ayuda de una línea), en el orden en que las lista `python -m curso --ayuda`.
ORDENES = [
    ("doctor", "curso.alumno.doctor", "comprueba que tu entorno tiene lo que el curso necesita"),
    ("comparar", "curso.alumno.puntos", "compara tu espacio con el punto de control N"),
    ("restaurar", "curso.alumno.puntos", "pone en tu espacio el punto de control N"),
    ("comprobar", "curso.comprobaciones.espacio", "corre los tests del punto de control N contra tu espacio"),
    ("calificar", "curso.clase.calificar", "califica el espacio de cada alumno de una carpeta"),
    ("generar", "curso.autor.generar", "genera notebooks/ a partir de solutions/"),
    ("ejecutar", "curso.autor.ejecutar", "ejecuta cuadernos resueltos y guarda sus salidas"),
    ("sincronizar", "curso.autor.sincronizar", "lleva un fichero editado en un punto de control a sus copias siguientes"),
    ("servidor", "curso.ensayo.servidor", "arranca el servidor de ensayo en 127.0.0.1"),
    ("postgres", "curso.postgres.cluster", "arranca un PostgreSQL de usar y tirar (lección 07)"),
    ("modelo", "curso.modelo.llama_server", "instala y arranca un modelo pequeño de verdad con llama-server"),
    ("medir", "curso.medir", "mide el rendimiento de una pieza"),
    ("probar", "curso.autor.probar", "ejecuta los tests del curso"),
]
# Lo que argparse escribe en inglés, en español. Sus mensajes de error vienen con la forma de
# estas expresiones (Python 3.11 y 3.12).
TRADUCCION_DE_ERRORES = [
    (r"the following arguments are required: (.*)", r"faltan argumentos: \1"),
    (r"invalid choice: (.*) \(choose from (.*)\)", r"\1 no existe (elige entre \2)"),
    (r"unrecognized arguments: (.*)", r"argumentos que no reconozco: \1"),
    (r"ambiguous option: (.*) could match (.*)", r"opción ambigua: \1 puede ser \2"),
    (r"invalid int value: (.*)", r"\1 no es un número entero"),
    (r"invalid float value: (.*)", r"\1 no es un número"),
    (r"invalid (\w+) value: (.*)", r"valor no válido (se esperaba \1): \2"),
    (r"expected one argument", r"le falta su valor"),
    (r"expected at most one argument", r"admite como mucho un valor"),
    (r"expected at least one argument", r"necesita al menos un valor"),
    (r"ignored explicit argument (.*)", r"argumento explícito ignorado: \1"),
    (r"not allowed with argument (.*)", r"no se puede usar junto con \1"),
]
TRADUCCION_DE_AYUDA = [
    ("usage: ", "uso: "),
    ("positional arguments:", "argumentos:"),
    ("options:", "opciones:"),
    ("optional arguments:", "opciones:"),
]


def traducir_error(mensaje):
    """Un mensaje de error de argparse, en español (lo que no conoce lo deja como está)."""
    # «argument X: …» envuelve a otro mensaje, que también hay que traducir.
    envuelto = re.fullmatch(r"argument (.+?): (.*)", mensaje, re.DOTALL)
    if envuelto:
        return f"argumento {envuelto.group(1)}: {traducir_error(envuelto.group(2))}"
    for patron, sustituto in TRADUCCION_DE_ERRORES:
        if re.fullmatch(patron, mensaje, re.DOTALL):
            return re.sub(patron, sustituto, mensaje, count=1, flags=re.DOTALL)
    return mensaje


class Analizador(argparse.ArgumentParser):
    """Un ArgumentParser que habla español: ayuda con -h/--ayuda y errores traducidos."""

    def __init__(self, *args, add_help=True, **kwargs):
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = "argumentos"
        self._optionals.title = "opciones"
        if add_help:
            # --ayuda primero: la línea «uso:» enseña la primera, y la pista de los errores dice --ayuda.
            self.add_argument("--ayuda", "-h", "--help", action="help", default=argparse.SUPPRESS,
                              help="muestra esta ayuda y sale")

    def _traducir_ayuda(self, texto):
        for ingles, espanol in TRADUCCION_DE_AYUDA:
            texto = texto.replace(ingles, espanol)
        return texto

    def format_usage(self):
        return self._traducir_ayuda(super().format_usage())

    def format_help(self):
        return self._traducir_ayuda(super().format_help())

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(ERROR_DE_USO, f"{self.prog}: error: {traducir_error(message)}\n"
                                f"Para ver las órdenes y sus opciones: {PROG} --ayuda\n")

    def pasar_el_resto(self, destino, metavar, ayuda):
        """Lo que no sea una opción de esta orden no es un error: llega tal cual, en su orden,
        en `args.<destino>` (así pasa `probar` sus argumentos a pytest)."""
        self.allow_abbrev = False  # que «--a» sea de pytest y no se tome por «--ayuda»
        self.usage = f"%(prog)s [--ayuda] [{metavar} ...]"
        self.add_argument_group("argumentos", f"{metavar} ...  {ayuda}")
        self.set_defaults(_resto=destino, **{destino: []})

    @staticmethod
    def positivo(tipo):
        """Un tipo de argumento para números mayores que cero (segundos, procesos)."""
        def convertir(texto):
            valor = tipo(texto)
            if not valor > 0:
                raise argparse.ArgumentTypeError(f"tiene que ser mayor que cero (llegó {texto})")
            return valor
        convertir.__name__ = tipo.__name__
        return convertir

    @staticmethod
    def entero_entre(minimo, maximo, que):
        """Un tipo de argumento para enteros de `minimo` a `maximo` (p. ej. un puerto)."""
        def convertir(texto):
            try:
                valor = int(texto)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{que} debe ser un número entero, no «{texto}»") from None
            if not minimo <= valor <= maximo:
                raise argparse.ArgumentTypeError(f"{que} debe estar entre {minimo} y {maximo}, no {valor}")
            return valor
        return convertir


# ---------------------------------------------------------------- la tabla y sus módulos


def funciones(orden):
    """El nombre de las dos funciones de `orden` en su módulo: (argumentos_…, orden_…)."""
    nombre = orden.replace("-", "_")
    return f"argumentos_{nombre}", f"orden_{nombre}"


def _codigo(resultado):
    """El código de salida de lo que devuelve una orden (None cuenta como éxito)."""
    if resultado is None or resultado is True:
        return 0
    if resultado is False:
        return 1
    return resultado if isinstance(resultado, int) else 0


def analizador(cargar=()):
    """El analizador de `python -m curso`: una suborden por fila de `ORDENES`. Solo las órdenes
    de `cargar` importan su módulo y declaran sus argumentos; las demás están con su línea de
    ayuda, que es lo único que necesita la ayuda general."""
    raiz = Analizador(
        prog=PROG,
        description="Las herramientas del curso «Construye tu agente»: comprobar el entorno, "
                    "comparar tu código con los puntos de control y restaurarlos, el servidor "
                    "de ensayo y las medidas.",
        epilog=f"Ejemplos:\n  {PROG} doctor\n  {PROG} comparar 03\n  {PROG} restaurar 02\n"
               f"Más sobre una orden: {PROG} ORDEN --ayuda",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subordenes = raiz.add_subparsers(dest="orden", metavar="ORDEN", title="órdenes")
    raiz.subordenes = {}
    for orden, modulo, ayuda in ORDENES:
        sub = raiz.subordenes[orden] = subordenes.add_parser(
            orden, help=ayuda, description=ayuda[0].upper() + ayuda[1:] + ".")
        if orden in cargar:
            declarar, hacer = funciones(orden)
            objeto = importlib.import_module(modulo)
            getattr(objeto, declarar, lambda analizador: None)(sub)
            sub.set_defaults(hacer=getattr(objeto, hacer))
    return raiz


def _orden_pedida(argv):
    """El nombre de la orden de `argv`, si es una de la tabla."""
    # La raíz no tiene más opción que la ayuda: si hay orden, es lo primero.
    return argv[0] if argv and argv[0] in {orden for orden, _, _ in ORDENES} else None


def main(argv=None):
    """Ejecuta `python -m curso` con `argv` (sys.argv[1:] si no se da); devuelve el código de salida."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pedida = _orden_pedida(argv)
    raiz = analizador(cargar=[pedida] if pedida else [])
    args, sobrantes = raiz.parse_known_args(argv)
    if args.orden is None:
        raiz.error("falta la orden: " + ", ".join(orden for orden, _, _ in ORDENES))
    if sobrantes:
        destino = getattr(args, "_resto", None)
        if destino is None:
            raiz.subordenes[args.orden].error(f"argumentos que no reconozco: {' '.join(sobrantes)}")
        setattr(args, destino, sobrantes)
    return _codigo(args.hacer(args))


def desde_la_terminal():
    """`main()` para `python -m curso`: si la tubería de la salida se cierra antes de tiempo,
    se acaba en silencio en vez de con una traza de BrokenPipeError."""
    try:
        codigo = main()
        sys.stdout.flush()  # dentro del try: lo que quede en el búfer también puede romperse
    except BrokenPipeError:
        # Lo que aún quedara por escribir va a /dev/null, para que Python no lo intente al salir.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        codigo = SALIDA_CERRADA
    return codigo


if __name__ == "__main__":
    sys.exit(desde_la_terminal())
