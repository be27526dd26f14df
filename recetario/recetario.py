"""El recetario de casa: qué recetas hay y qué lleva cada una.

Las recetas están en recetas.txt, junto a este módulo, una por línea y con esta forma:
«Nombre: ingrediente, ingrediente, ingrediente.» Las líneas que empiezan por # son comentarios.
En el fichero hay ingredientes escritos con mayúscula («Huevos»), así que aquí se pasan todos a
minúsculas: «Huevos» y «huevos» son el mismo ingrediente. Los nombres de las recetas, en cambio,
se quedan como en el fichero: «Tortilla» con mayúscula.
"""
import os

FICHERO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recetas.txt")


def lineas(fichero=FICHERO):
    """Las líneas de recetas del fichero, sin comentarios ni líneas en blanco."""
    with open(fichero, encoding="utf-8") as f:
        return [linea.strip() for linea in f if linea.strip() and not linea.startswith("#")]


def separar(receta):
    """«Tortilla: huevos, patatas, cebolla.» -> ("Tortilla", ["huevos", "patatas", "cebolla"])

    Una línea sin los dos puntos no es una receta: ValueError, con la línea.
    """
    if ":" not in receta:
        raise ValueError("a la receta le faltan los dos puntos: %r" % receta)
    nombre = receta.split(":", 1)[0].strip()
    return nombre, ingredientes(receta)


def ingredientes(receta):
    """«Tortilla: Huevos, patatas, cebolla.» -> ["huevos", "patatas", "cebolla"]

    Lo que va detrás de los dos puntos, separado por comas, en minúsculas y sin el punto final.
    """
    partes = [parte.strip() for parte in receta.split(":", 1)[1].split(",")]
    partes[-1].rstrip(".")
    return partes


def recetas(fichero=FICHERO):
    """{nombre: [ingredientes]}, con todas las recetas del fichero en su orden."""
    return dict(separar(receta) for receta in lineas(fichero))


def buscar(ingrediente, fichero=FICHERO):
    """Los nombres de las recetas que llevan `ingrediente`, en el orden del fichero.

    No mira mayúsculas: buscar("Huevos") y buscar("huevos") encuentran lo mismo.
    """
    buscado = ingrediente.strip().lower()
    return [nombre for nombre, lista in recetas(fichero).items() if buscado in lista]
