"""La línea de órdenes del curso: `python -m curso ORDEN`.

La presenta la lección 00 (`doctor`, `comparar`, `restaurar`); el resto de lecciones añade
`servidor`, `medir` y `postgres` (la 07); `comprobar N` mira tu espacio por lo que hace; y los
instructores usan `generar`, `probar` y `calificar`. Cada orden importa su
módulo solo cuando se usa, así que `python -m curso --ayuda` es rápido y funciona aunque falte
alguna pieza opcional.

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
            self.add_argument("-h", "--ayuda", "--help", action="help", default=argparse.SUPPRESS,
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


# ---------------------------------------------------------------- cargar las órdenes sin prisa


def _funcion(modulo, nombre, orden):
    """La función `modulo.nombre`, o None (diciéndolo) si esa pieza del curso todavía no existe."""
    try:
        objeto = importlib.import_module(modulo)
    except ModuleNotFoundError as error:
        # Solo si lo que falta es el propio módulo; un fallo dentro de él se deja ver entero.
        if error.name is None or not modulo.startswith(error.name):
            raise
        objeto = None
    funcion = getattr(objeto, nombre, None)
    if funcion is None:
        print(f"«{PROG} {orden}» todavía no existe en esta copia del curso "
              f"(falta {modulo}.{nombre}).", file=sys.stderr)
    return funcion


def _codigo(resultado):
    """El código de salida de lo que devuelve una orden (None cuenta como éxito)."""
    if resultado is None or resultado is True:
        return 0
    if resultado is False:
        return 1
    return resultado if isinstance(resultado, int) else 0


def orden_doctor(args, resto):
    main = _funcion("curso.doctor", "main", "doctor")
    return ERROR_DE_USO if main is None else main()


def orden_comparar(args, resto):
    from curso.puntos import comparar
    return comparar(args.n, con_soluciones=args.con_soluciones)


def orden_restaurar(args, resto):
    from curso.puntos import restaurar
    return restaurar(args.n)


def orden_comprobar(args, resto):
    from curso.comprobar import comprobar
    return comprobar(args.n, espacio=args.espacio, limite=args.limite)


def orden_calificar(args, resto):
    from curso.calificar import calificar
    return calificar(args.carpeta, salida=args.salida, limite=args.limite, lecciones=args.lecciones,
                     a_la_vez=args.a_la_vez, con_bom=not args.sin_bom, devoluciones=args.devoluciones,
                     con_cache=not args.sin_cache, limite_total=args.limite_total)


def _positivo(tipo):
    """Un tipo de argparse para números mayores que cero (segundos, procesos)."""
    def convertir(texto):
        valor = tipo(texto)
        if not valor > 0:
            raise argparse.ArgumentTypeError(f"tiene que ser mayor que cero (llegó {texto})")
        return valor
    convertir.__name__ = tipo.__name__
    return convertir


def orden_generar(args, resto):
    main = _funcion("curso.generar", "main", "generar")
    return ERROR_DE_USO if main is None else main(comprobar=args.comprobar)


def orden_servidor(args, resto):
    main = _funcion("curso.ensayo.servidor", "main", "servidor")
    return ERROR_DE_USO if main is None else main(resto)


def orden_medir(args, resto):
    main = _funcion("curso.medir", "main", f"medir {args.que}")
    return ERROR_DE_USO if main is None else main(args.que)


def orden_ejecutar(args, resto):
    main = _funcion("curso.ejecutar", "main", "ejecutar")
    return ERROR_DE_USO if main is None else main(args.n, sincronizar_puntos=args.sincronizar)


def orden_postgres(args, resto):
    main = _funcion("curso.postgres", "main", "postgres")
    return ERROR_DE_USO if main is None else main(resto)


def orden_probar(args, resto):
    main = _funcion("curso.probar", "main", "probar")
    return ERROR_DE_USO if main is None else main(resto)


# Las órdenes que pasan sus argumentos tal cual a otro analizador.
PASAN_ARGUMENTOS = {"servidor", "probar", "postgres"}


def analizador():
    """El analizador de `python -m curso`, con una suborden por orden."""
    raiz = Analizador(
        prog=PROG,
        description="Las herramientas del curso «Construye tu agente»: comprobar el entorno, "
                    "comparar tu código con los puntos de control y restaurarlos, el servidor "
                    "de ensayo y las medidas.",
        epilog=f"Ejemplos:\n  {PROG} doctor\n  {PROG} comparar 03\n  {PROG} restaurar 02\n"
               f"Más sobre una orden: {PROG} ORDEN --ayuda",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ordenes = raiz.add_subparsers(dest="orden", metavar="ORDEN", title="órdenes")

    doctor = ordenes.add_parser("doctor", help="comprueba que tu entorno tiene lo que el curso necesita",
                                description="Comprueba Python, los paquetes, SQLite, Jupyter y lo "
                                            "demás, y dice qué hacer con lo que falte.")
    doctor.set_defaults(hacer=orden_doctor)

    comparar = ordenes.add_parser("comparar", help="compara tu espacio con el punto de control N",
                                  description="Muestra en qué se diferencia tu espacio de trabajo "
                                              "del punto de control N (un diff por fichero). Sale "
                                              "con 0 si coinciden y 1 si no.")
    comparar.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 03")
    comparar.add_argument("--con-soluciones", action="store_true",
                          help="enseña también el diff de los ficheros con ejercicios pendientes "
                               "(que es su solución)")
    comparar.set_defaults(hacer=orden_comparar)

    restaurar = ordenes.add_parser("restaurar", help="pone en tu espacio el punto de control N",
                                   description="Copia el punto de control N a tu espacio de "
                                               "trabajo. Si ya tenías algo, antes lo mueve a una "
                                               "copia con fecha al lado: no se pierde nada.")
    restaurar.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 02")
    restaurar.set_defaults(hacer=orden_restaurar)

    comprobar = ordenes.add_parser("comprobar", help="corre los tests del punto de control N contra tu espacio",
                                   description="Corre los tests del punto de control N contra los "
                                               "módulos de tu espacio (no contra los del punto de "
                                               "control), en otro proceso y con tiempo máximo, y "
                                               "dice una línea por módulo: ✔, o ✘ con el primer "
                                               "test que falla. Sale con 0 si todo pasa y 1 si no.")
    comprobar.add_argument("n", metavar="N", help="el número del punto de control, p. ej. 03")
    comprobar.add_argument("--espacio", metavar="CARPETA",
                           help="comprueba esta carpeta en vez de tu espacio (mi_agente/)")
    comprobar.add_argument("--limite", metavar="S", type=_positivo(float),
                           help="segundos como mucho por test (30 si no se dice): el que pasa de "
                                "ahí queda «colgado» y los demás siguen")
    comprobar.set_defaults(hacer=orden_comprobar)

    calificar = ordenes.add_parser("calificar", help="califica el espacio de cada alumno de una carpeta",
                                   description="Para quien da el curso: cada subcarpeta de CARPETA "
                                               "es un alumno, y su espacio, la carpeta mi_agente/ "
                                               "que tenga dentro a cualquier profundidad. Cada "
                                               "lección se califica por lo que añade o cambia, y "
                                               "«todo junto» por el espacio entero; escribe "
                                               "calificaciones.csv (para el libro de notas) y "
                                               "calificaciones.html.")
    calificar.add_argument("carpeta", metavar="CARPETA", help="la carpeta con una subcarpeta por alumno")
    calificar.add_argument("--salida", metavar="CARPETA",
                           help="dónde escribir la tabla y la caché (en CARPETA si no se dice)")
    calificar.add_argument("--limite", metavar="S", type=_positivo(float),
                           help="segundos como mucho por test (30 si no se dice): el que pasa de ahí "
                                "queda «colgado» y los demás siguen")
    calificar.add_argument("--limite-total", metavar="S", type=_positivo(float),
                           help="segundos como mucho por corrida de tests (600 si no se dice)")
    calificar.add_argument("--lecciones", metavar="N", type=int, nargs="+",
                           help="solo estas lecciones (todas las que añaden módulos si no se dice)")
    calificar.add_argument("--a-la-vez", metavar="P", type=_positivo(int),
                           help="cuántos alumnos a la vez (tantos como núcleos si no se dice)")
    calificar.add_argument("--devoluciones", action="store_true",
                           help="escribe además devoluciones/ALUMNO.txt, una por alumno, para dársela")
    calificar.add_argument("--sin-bom", action="store_true",
                           help="el CSV sin BOM al principio (con él, Excel lo abre bien en UTF-8)")
    calificar.add_argument("--sin-cache", action="store_true",
                           help="vuelve a correr todo, aunque no haya cambiado")
    calificar.set_defaults(hacer=orden_calificar)

    generar = ordenes.add_parser("generar", help="genera notebooks/ a partir de solutions/",
                                 description="Escribe los cuadernos del alumno a partir de las "
                                             "soluciones, con los ejercicios vaciados.")
    generar.add_argument("--comprobar", action="store_true",
                         help="no escribe nada: solo comprueba que notebooks/ está al día")
    generar.set_defaults(hacer=orden_generar)

    servidor = ordenes.add_parser("servidor", help="arranca el servidor de ensayo en 127.0.0.1",
                                  description="Arranca el servidor de ensayo (la API de Messages "
                                              "con guiones, sin red ni clave).")
    servidor.add_argument("--puerto", metavar="P", type=int, help="el puerto donde escuchar")
    servidor.add_argument("--ventana", metavar="W", type=int,
                          help="la ventana de contexto en tokens (8192 si no se dice)")
    servidor.set_defaults(hacer=orden_servidor)

    from curso.medir import MEDICIONES  # la tabla de las medidas: no importa ninguna
    medir = ordenes.add_parser("medir", help="mide el rendimiento de una pieza",
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               description="Las medidas del curso (la velocidad va aquí, no en "
                                           "los tests):\n\n" + "\n".join(
                                               f"  {nombre:10} {m.descripcion}" for nombre, m in MEDICIONES.items()))
    medir.add_argument("que", metavar="QUE", choices=list(MEDICIONES),
                       help=f"qué medir: {', '.join(MEDICIONES)}")
    medir.set_defaults(hacer=orden_medir)

    postgres = ordenes.add_parser("postgres", help="arranca un PostgreSQL de usar y tirar (lección 07)",
                                  description="Arranca un PostgreSQL nuevo en una carpeta temporal, "
                                              "dice su cadena de conexión (para CURSO_POSTGRES) y, "
                                              "con Ctrl-C, lo para y lo borra.")
    postgres.add_argument("--puerto", metavar="P", type=int, help="el puerto de 127.0.0.1 (si no, uno libre)")
    postgres.set_defaults(hacer=orden_postgres)

    ejecutar = ordenes.add_parser("ejecutar", help="ejecuta cuadernos resueltos y guarda sus salidas",
                                  description="Para quien escribe el curso: ejecuta "
                                              "solutions/NN_*.ipynb como lo haría nbval, guarda "
                                              "sus salidas y regenera notebooks/.")
    ejecutar.add_argument("n", metavar="N", nargs="+", type=int, help="los números de las lecciones")
    ejecutar.add_argument("--sincronizar", action="store_true",
                          help="copia además los módulos que escribe al punto de control N "
                               "(y a los siguientes que tenían la misma versión)")
    ejecutar.set_defaults(hacer=orden_ejecutar)

    probar = ordenes.add_parser("probar", help="ejecuta los tests del curso",
                                description="Ejecuta los tests del curso y de los puntos de "
                                            "control; los argumentos de más se pasan tal cual.")
    probar.set_defaults(hacer=orden_probar)
    return raiz


def main(argv=None):
    """Ejecuta `python -m curso` con `argv` (sys.argv[1:] si no se da); devuelve el código de salida."""
    argv = list(sys.argv[1:] if argv is None else argv)
    raiz = analizador()
    args, sobrantes = raiz.parse_known_args(argv)
    if args.orden is None:
        raiz.error("falta la orden: doctor, comparar, restaurar, comprobar, calificar, generar, ejecutar, servidor, postgres, medir o probar")
    if sobrantes and args.orden not in PASAN_ARGUMENTOS:
        raiz.error(f"argumentos que no reconozco: {' '.join(sobrantes)}")
    # Las órdenes que pasan sus argumentos reciben lo escrito tras su nombre, tal cual.
    resto = argv[argv.index(args.orden) + 1:] if args.orden in PASAN_ARGUMENTOS else []
    return _codigo(args.hacer(args, resto))


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
