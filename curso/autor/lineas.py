"""Para quien escribe el curso: cuántas líneas del harness entrega cada lección para leer.

Lo que entrega la lección N son los ficheros que declara (`rutas.LECCIONES`) tal como quedan en su
punto de control: de un módulo nuevo, todas sus líneas; de uno que la lección cambia (una celda
`%%modulo … --cambia`), las líneas que no estaban en el punto de control anterior (las que añade o
cambia, según `difflib`). Se cuentan las líneas para leer, las que no están en blanco; `en_bruto`
da también las de `wc -l`.

Cada lección entrega solo lo que enseña: lo que un módulo no necesita hasta otra lección entra
en esa lección, con `--cambia`. La tabla de lecciones del README dice la cifra de cada una, y
tests/lecciones/test_lineas_entregadas.py comprueba que es la de aquí.

    python -m curso.autor.lineas        # la cifra de cada lección, con la de cada fichero
"""
import difflib
from pathlib import Path

from curso import rutas


def numeros_nuevos(antes, despues):
    """Los números (desde 1) de las líneas de `despues` (una lista) que no estaban en `antes`:
    todas si `antes` es None."""
    if antes is None:
        return list(range(1, len(despues) + 1))
    emparejadas = difflib.SequenceMatcher(a=antes, b=despues, autojunk=False).get_opcodes()
    return [n + 1 for que, _, _, j1, j2 in emparejadas if que in ("insert", "replace") for n in range(j1, j2)]


def nuevas(antes, despues):
    """Las líneas de `despues` (una lista) que no estaban en `antes`: todas si `antes` es None."""
    return [despues[n - 1] for n in numeros_nuevos(antes, despues)]


def por_fichero(numero, puntos=None):
    """{fichero: (líneas para leer, líneas en bruto)} de lo que entrega la lección `numero`.

    `puntos` es {número: carpeta} de los puntos de control (por defecto, los del curso)."""
    cuentas = {}
    for fichero, antes, despues in versiones(numero, puntos):
        entregadas = nuevas(antes, despues)
        cuentas[fichero] = (sum(1 for linea in entregadas if linea.strip()), len(entregadas))
    return cuentas


def versiones(numero, puntos=None):
    """[(fichero, líneas antes, líneas después)] de cada fichero que declara la lección `numero`:
    antes, en el punto de control anterior (None si allí no estaba); después, en el suyo."""
    puntos = rutas.puntos_de_control() if puntos is None else puntos
    anterior = rutas.anterior(numero)
    resultado = []
    for fichero in rutas.LECCIONES[numero]["ficheros"]:
        despues = (Path(puntos[numero]) / fichero).read_text(encoding="utf-8").splitlines()
        previo = Path(puntos[anterior]) / fichero if anterior is not None else None
        antes = previo.read_text(encoding="utf-8").splitlines() if previo and previo.exists() else None
        resultado.append((fichero, antes, despues))
    return resultado


def entregadas(numero, puntos=None):
    """Las líneas para leer (las que no están en blanco) que entrega la lección `numero`."""
    return sum(leer for leer, _ in por_fichero(numero, puntos).values())


def en_bruto(numero, puntos=None):
    """Las mismas, contando también las que están en blanco (lo que diría `wc -l`)."""
    return sum(bruto for _, bruto in por_fichero(numero, puntos).values())


def main():
    for numero in rutas.LECCIONES:
        cuentas = por_fichero(numero)
        detalle = ", ".join(f"{f} {leer}" for f, (leer, _) in cuentas.items())
        print(f"{numero:02d}: {entregadas(numero):5} para leer ({en_bruto(numero)} en bruto)"
              + (f" · {detalle}" if detalle else ""))


if __name__ == "__main__":
    main()
