"""Para quien escribe el curso: de cada cuaderno resuelto (`solutions/`), el del alumno (`notebooks/`).

Una sola fuente por lección: el cuaderno de `solutions/` lleva las soluciones entre dos marcas,

    # BEGIN SOLUCIÓN
    ...
    # END SOLUCIÓN

(la convención de nbgrader y otter, en castellano), siempre dentro del cuerpo de una función. La
celda dice qué ejercicio es en sus metadatos (`{"curso": {"ejercicio": "1.2"}}`), o, si tiene más
de uno, el de cada función (`{"curso": {"ejercicios": {"compactar": "3.1", "corte": "3.3"}}}`). `generar`
cambia cada región por un esbozo que no falla al definirse, solo al llamarse, y borra las salidas:

    # Tu código aquí (ejercicio 1.2).
    raise NotImplementedError("Ejercicio 1.2 pendiente: ...")

`generar --comprobar` no escribe nada: dice si algún cuaderno del alumno no es lo que escribiría.
"""
import re
import sys

from curso import rutas
from curso.comprobaciones.esbozos import AVISO, FIN, INICIO, ejercicio_de

# nbformat se importa dentro de las funciones que lo usan: importarlo es lento (valida con
# jsonschema, que compila gramáticas al cargarse), y quien solo quiere las marcas no lo necesita.

DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")


class ErrorDeRegion(ValueError):
    """Una región de solución mal puesta: sin cerrar, fuera de una función o sin ejercicio."""


def esbozo(fuente, ejercicio):
    """`fuente` con cada región de solución cambiada por un esbozo del `ejercicio` ("1.2").

    `ejercicio` también puede ser {función: ejercicio}, para una celda con varios.
    """
    lineas = fuente.split("\n")
    salida, funcion, dentro = [], None, None
    for numero, linea in enumerate(lineas, start=1):
        marca = linea.strip()
        if dentro is not None:
            if marca == FIN:
                dentro = None
            elif marca == INICIO:
                raise ErrorDeRegion(f"línea {numero}: una región de solución dentro de otra")
            continue
        if marca == FIN:
            raise ErrorDeRegion(f"línea {numero}: «{FIN}» sin su «{INICIO}»")
        if marca == INICIO:
            sangria = linea[: len(linea) - len(linea.lstrip())]
            if funcion is None or len(sangria) <= len(funcion[0]):
                raise ErrorDeRegion(
                    f"línea {numero}: la región de solución tiene que ir dentro del cuerpo de una "
                    "función, para que el esbozo no falle al definirse"
                )
            numero = ejercicio.get(funcion[1]) if isinstance(ejercicio, dict) else ejercicio
            if not numero:
                raise ErrorDeRegion(f"la celda tiene una región de solución en {funcion[1]}() pero "
                                    'no dice qué ejercicio es (metadatos {"curso": {"ejercicio": "N.M"}})')
            aviso = AVISO.format(numero=numero, funcion=funcion[1])
            salida += [f"{sangria}# Tu código aquí (ejercicio {numero}).",
                       f"{sangria}raise NotImplementedError({aviso!r})"]
            dentro = numero
            continue
        definicion = DEF.match(linea)
        if definicion:
            funcion = (definicion.group(1), definicion.group(2))
        salida.append(linea)
    if dentro is not None:
        raise ErrorDeRegion(f"línea {dentro}: «{INICIO}» sin su «{FIN}»")
    return "\n".join(salida)


def cuaderno_del_alumno(resuelto):
    """El cuaderno del alumno que corresponde a un cuaderno resuelto (objetos nbformat)."""
    import nbformat

    alumno = nbformat.from_dict(resuelto)
    alumno.metadata.pop("widgets", None)
    for celda in alumno.cells:
        if celda.cell_type != "code":
            continue
        try:
            celda.source = esbozo(celda.source, ejercicio_de(celda))
        except ErrorDeRegion as e:
            raise ErrorDeRegion(f"celda {celda.get('id', '?')}: {e}") from None
        celda.outputs = []
        celda.execution_count = None
        celda.metadata.pop("execution", None)
    return alumno


def texto_del_alumno(ruta_resuelto):
    """El texto exacto (JSON) que `generar` escribe para el cuaderno resuelto de esa ruta."""
    import nbformat

    resuelto = nbformat.read(ruta_resuelto, as_version=4)
    return nbformat.writes(cuaderno_del_alumno(resuelto)) + "\n"


def main(comprobar=False):
    """Escribe (o, con `comprobar`, solo compara) cada notebooks/NN_*.ipynb. Devuelve 0 o 1."""
    resueltos = sorted(rutas.SOLUCIONES.glob("[0-9][0-9]*_*.ipynb"))
    if not resueltos:
        print("No hay cuadernos en solutions/.", file=sys.stderr)
        return 1
    distintos = []
    for ruta in resueltos:
        try:
            texto = texto_del_alumno(ruta)
        except ErrorDeRegion as e:
            print(f"✘ {ruta.name}: {e}", file=sys.stderr)
            return 1
        destino = rutas.CUADERNOS / ruta.name
        actual = destino.read_text(encoding="utf-8") if destino.exists() else None
        if actual == texto:
            print(f"  igual      notebooks/{ruta.name}")
            continue
        distintos.append(destino)
        if comprobar:
            estado = "falta" if actual is None else "distinto"
            print(f"✘ {estado:10} notebooks/{ruta.name}")
        else:
            destino.parent.mkdir(exist_ok=True)
            destino.write_text(texto, encoding="utf-8")
            print(f"✎ escrito    notebooks/{ruta.name}")
    sobran = sorted({p.name for p in rutas.CUADERNOS.glob("*.ipynb")} - {p.name for p in resueltos})
    for nombre in sobran:
        print(f"✘ sobra      notebooks/{nombre} (no tiene fuente en solutions/)")
    if comprobar and (distintos or sobran):
        print("Los cuadernos del alumno no son los que escribiría generar: "
              "ejecuta python -m curso generar.", file=sys.stderr)
        return 1
    return 0


# --- python -m curso generar ------------------------------------------------------------------

def argumentos_generar(analizador):
    analizador.description = ("Escribe los cuadernos del alumno a partir de las soluciones, con "
                              "los ejercicios vaciados.")
    analizador.add_argument("--comprobar", action="store_true",
                            help="no escribe nada: solo comprueba que notebooks/ está al día")


def orden_generar(args):
    return main(comprobar=args.comprobar)
