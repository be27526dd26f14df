"""Para quien da el curso: las notas de `calificar` en la forma que importan Moodle y Canvas (`--formato`).

El CSV propio del curso (`notas.py`) lleva todo: estados, tests, ejercicios y el comentario. Un
libro de notas de un LMS quiere menos y más estricto: una columna con la que reconoce a cada
alumno, una columna por calificación con un número (o vacía: sin nota, que no es un 0) y, si acaso,
un comentario. Aquí se escriben las dos formas más usadas, tal como las leen sus importadores:

- **Moodle** (Calificaciones → Importar → Archivo CSV; `grade/import/csv/classes/load_data.php`):
  en el formulario de importación se dice qué columna identifica al usuario («Mapear desde»
  `usuario`, «Mapear a» `username`, o a `useremail`/`useridnumber` si los identificadores son
  correos o números de identificación) y a qué elemento de calificación va cada columna (uno que ya
  exista o uno nuevo con el nombre de la columna); el comentario se mapea como retroalimentación
  de uno de ellos. Una nota vacía o «-» es «sin nota» (no la toca); los números, con punto decimal.
  Lee UTF-8 y quita el BOM.
- **Canvas** (Calificaciones → Importar; `app/models/gradebook_importer.rb`): la cabecera empieza
  por `Student`, `ID`, `SIS User ID`, `SIS Login ID` y `Section` (las columnas del alumno; la
  última tiene que ser `Section`); cada columna de después es una tarea («Lección 03 compactar»:
  si no existe, la crea). Una segunda fila que empieza por `Points Possible` dice los puntos de
  cada tarea. Reconoce al alumno por `ID` (su número de Canvas, que no sabemos: va vacío), si no
  por `SIS User ID` y `SIS Login ID` (el identificador del alumno), y si no por el nombre. Una nota
  vacía o «-» es «sin nota». Canvas no importa comentarios por CSV: no van.

La nota de una lección es el número de sus ejercicios hechos (de tantos como tiene), y hay una
columna por ejercicio con 1 o 0. El identificador de cada alumno es el nombre de su carpeta, o el
que diga `--identificadores` (un CSV «carpeta,identificador»: el login del LMS, su correo o su
número de la secretaría).
"""
import csv
import io

from curso.clase import notas

COLUMNAS_DEL_ALUMNO_EN_CANVAS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
PUNTOS_EN_CANVAS = "Points Possible"


def _csv(filas):
    salida = io.StringIO()
    csv.writer(salida).writerows(filas)  # \r\n al final de cada fila, como pide RFC 4180
    return salida.getvalue()


def titulo_de_leccion(n, leccion):
    """«Lección 03 compactar»: el nombre de la calificación de una lección en el LMS."""
    return f"Lección {n:02d} {leccion.nombre.replace('_', ' ')}"


def columnas(lecciones):
    """[(título, sobre cuánto)]: cada lección (la nota es cuántos de sus ejercicios están hechos),
    cada ejercicio (1 o 0) y el total de ejercicios hechos."""
    ids = notas.ejercicios_de(lecciones)
    return ([(titulo_de_leccion(n, leccion), len(leccion.ejercicios)) for n, leccion in lecciones.items()]
            + [(f"Ejercicio {id}", 1) for id in ids] + [("Ejercicios hechos", len(ids))])


def notas_del_alumno(fila, lecciones):
    """Las notas de `fila` en el orden de `columnas`; vacía (SIN_COMPROBAR) la que no se sabe."""
    cada = notas.cada_ejercicio(fila, lecciones)
    return ([notas.ejercicios_hechos(fila.celdas[n]) for n in lecciones] + list(cada.values())
            + [notas.suma_o_vacia(cada.values())])


def leer_identificadores(fichero):
    """{carpeta: identificador} de un CSV de dos columnas (una cabecera «carpeta,identificador» se salta)."""
    with open(fichero, encoding="utf-8-sig", newline="") as f:
        filas = [fila for fila in csv.reader(f) if fila and any(c.strip() for c in fila)]
    if filas and [c.strip().lower() for c in filas[0][:2]] == ["carpeta", "identificador"]:
        filas = filas[1:]
    malas = [i for i, fila in enumerate(filas, 1) if len(fila) < 2 or not fila[0].strip() or not fila[1].strip()]
    if malas:
        raise ValueError(f"{fichero}: cada fila tiene que ser «carpeta,identificador» (mira la fila {malas[0]}).")
    return {fila[0].strip(): fila[1].strip() for fila in filas}


def moodle(filas, lecciones, identificadores=None):
    """El CSV para el importador de Moodle (ver el docstring del módulo)."""
    identificadores = identificadores or {}
    salida = [["usuario", *(titulo for titulo, _ in columnas(lecciones)), "Comentario"]]
    for fila in filas:
        nombre = fila.alumno.nombre
        salida.append([identificadores.get(nombre, nombre), *notas_del_alumno(fila, lecciones),
                       notas.comentario(fila)])
    return _csv(salida)


def canvas(filas, lecciones, identificadores=None):
    """El CSV para el importador de Canvas (ver el docstring del módulo)."""
    identificadores = identificadores or {}
    titulos, puntos = zip(*columnas(lecciones), strict=True)
    salida = [[*COLUMNAS_DEL_ALUMNO_EN_CANVAS, *titulos],
              [PUNTOS_EN_CANVAS, *[""] * (len(COLUMNAS_DEL_ALUMNO_EN_CANVAS) - 1), *puntos]]
    for fila in filas:
        nombre = fila.alumno.nombre
        identificador = identificadores.get(nombre, nombre)
        salida.append([nombre, "", identificador, identificador, "", *notas_del_alumno(fila, lecciones)])
    return _csv(salida)


# Lo que escribe `calificar --formato F`, además de su calificaciones.csv: calificaciones-F.csv.
ESCRITORES = {"moodle": moodle, "canvas": canvas}
