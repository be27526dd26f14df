"""Para quien escribe el curso (`python -m curso medir caminos`): caminos al azar de un alumno por los cuadernos, con semilla, y cada celda dos veces seguidas.

`python -m curso medir caminos --semilla S --n N [--pasos P] [--lecciones 1,2,3]` corre N caminos
al azar (tests/caminos/al_azar.py: un núcleo de Jupyter de verdad por camino, un solo espacio) con
la semilla S, y dice cuántos caminos y pasos corrieron y cuánto tardaron. Si uno falla, hypothesis
imprime la lista más corta de pasos que sigue fallando; con la misma semilla se repite.

`python -m curso medir caminos --otra-vez 4 [5 ...]` corre cada cuaderno resuelto de arriba abajo
desde su punto de control anterior, cada celda de código dos veces seguidas, y dice qué celdas no
se pueden volver a ejecutar (la segunda vez lanzan, o escriben una traza). Es un cuaderno entero por
lección: va aquí, no en la orden de tests del README.

Es una medida porque tarda (minutos, y CPU), no porque importe su velocidad: la del tramo de
.ci/run que lo corre se dice al final.
"""
import tempfile
import time

from curso import rutas
from curso.medir import de_los_tests


def _importar():
    de_los_tests("caminos")
    import al_azar
    import alumno
    return al_azar, alumno


def otra_vez(leccion, cambiadas=None):
    """Las celdas de `leccion` que, corridas dos veces seguidas tras las de arriba, fallan la segunda:
    [(id de la celda, lo que pasó)]. `cambiadas` ({id: texto}) corre otro texto en esas celdas (para
    los tests: la variante ingenua de una celda)."""
    cambiadas = cambiadas or {}
    _, alumno = _importar()
    malas = []
    with tempfile.TemporaryDirectory(prefix="otra-vez-") as carpeta:
        quien = alumno.Alumno(carpeta)
        if leccion > 0:
            quien.orden("restaurar", str(rutas.anterior(leccion)))
        with quien.abrir(leccion) as cuaderno:
            for celda in (c for c in cuaderno.celdas if c.tipo == "code"):
                texto = cambiadas.get(celda.id, celda.resuelta)
                primera = cuaderno.ejecutar(texto)
                if not primera.limpia:
                    malas.append((celda.id, f"la primera vez: {primera.error or 'escribe una traza'}"))
                    continue
                segunda = cuaderno.ejecutar(texto)
                if not segunda.limpia:
                    malas.append((celda.id, f"otra vez: {segunda.error or 'escribe una traza'}\n"
                                            f"{(segunda.traza or segunda.texto)[-1200:]}"))
    return malas


def main(argumentos=()):
    from curso.__main__ import Analizador
    analizador = Analizador(prog="python -m curso medir caminos")
    analizador.add_argument("--semilla", type=int, default=0, help="la semilla de hypothesis (0 si no se dice)")
    analizador.add_argument("--n", type=int, default=3, help="cuántos caminos")
    analizador.add_argument("--pasos", type=int, default=None, help="pasos de cada camino como mucho")
    analizador.add_argument("--lecciones", default=None, help="las lecciones de los caminos, p. ej. 1,2,3 "
                                                               "(si no se dicen, de la 00 a la 05)")
    analizador.add_argument("--sin-encoger", action="store_true", help="si uno falla, no buscar el camino más corto")
    analizador.add_argument("--otra-vez", type=rutas.leccion_pedida, nargs="+", metavar="N", default=None,
                            help="en vez de caminos: cada celda de estas lecciones dos veces seguidas")
    args = analizador.parse_args(list(argumentos))
    inicio = time.monotonic()
    if args.otra_vez is not None:
        total = 0
        for leccion in args.otra_vez:
            malas = otra_vez(leccion)
            total += len(malas)
            print(f"Lección {leccion:02d}: " + ("cada celda se puede ejecutar otra vez." if not malas else
                  f"{len(malas)} celda(s) no se pueden ejecutar otra vez:"))
            for id, que in malas:
                print(f"  · {id}: {que}")
        print(f"({time.monotonic() - inicio:.0f} s)")
        return 1 if total else 0
    al_azar, _ = _importar()
    lecciones = (tuple(rutas.leccion_pedida(x) for x in args.lecciones.split(",")) if args.lecciones else al_azar.LECCIONES)
    print(f"Caminos al azar: semilla {args.semilla}, {args.n} caminos, lecciones "
          f"{', '.join(f'{n:02d}' for n in lecciones)}…", flush=True)
    codigo = 0
    try:
        al_azar.correr(args.semilla, args.n, args.pasos or al_azar.PASOS, lecciones, encoger=not args.sin_encoger)
    except (AssertionError, ExceptionGroup) as hallazgo:  # varios hallazgos distintos: un grupo
        codigo = 1
        # hypothesis deja los pasos del camino más corto en las notas de la excepción (add_note).
        partes = hallazgo.exceptions if isinstance(hallazgo, ExceptionGroup) else [hallazgo]
        pasos = "\n\n".join(f"{parte}\n" + "\n".join(getattr(parte, "__notes__", [])) for parte in partes)
        print(f"✘ Falla (semilla {args.semilla}; repítelo con la misma orden). Cada hallazgo, con los pasos "
              f"más cortos que lo siguen dando:\n\n{pasos}")
    cuenta = al_azar.CUENTA
    pasos = ", ".join(f"{v} {k}" for k, v in sorted(cuenta.por_paso.items()))
    print(f"{'✔' if codigo == 0 else '✘'} {cuenta.caminos} caminos, {cuenta.pasos} pasos ({pasos}), "
          f"{cuenta.celdas} celdas ejecutadas, en {time.monotonic() - inicio:.0f} s.")
    if cuenta.respuestas:
        print("  En las celdas de ejercicio: " + ", ".join(f"{v} {k}" for k, v in sorted(cuenta.respuestas.items()))
              + ("" if al_azar.variantes else " (sin tests/variantes.py: ni errores escritos ni "
                 "segundas soluciones)"))
    return codigo
