"""La lista de la compra de un menú, a partir del recetario de recetario.py.

Un menú es una lista de nombres de recetas, escritos como en recetas.txt, y puede repetir
alguna: dos días de lentejas son dos recetas de lentejas. La compra junta los ingredientes de
todas y cuenta cuántas recetas del menú necesitan cada uno.
"""
from collections import Counter

from recetario import recetas


def compra(menu):
    """{ingrediente: cuántas recetas del menú lo llevan}, con los ingredientes en minúsculas."""
    todas = recetas()
    comprobar_menu(menu, todas)
    cuenta = Counter()
    for nombre in menu:
        cuenta.update(todas[nombre])
    return dict(cuenta)


def comprobar_menu(menu, todas):
    """Que las recetas de `menu` estén en `todas`.

    Si falta alguna, ValueError con su nombre y no se cuenta nada: mejor saberlo en casa que en
    la tienda.
    """
    faltan = [nombre for nombre in menu if nombre.lower() not in todas]
    if faltan:
        raise ValueError("no están en el recetario: " + ", ".join(faltan))


def veces(ingrediente, menu):
    """Cuántas recetas de `menu` llevan `ingrediente`, sin mirar mayúsculas; 0 si ninguna."""
    return compra(menu).get(ingrediente.strip().lower(), 0)


def lista(menu):
    """La lista para llevar a la tienda, por orden alfabético: «huevos (x2)», «leche»..."""
    return ["%s (x%d)" % (i, n) if n > 1 else i for i, n in sorted(compra(menu).items())]


def falta(menu, despensa):
    """La lista de la compra sin lo que ya hay en `despensa`, sin mirar mayúsculas.

    Lo que hay en casa no se compra, aunque el menú lo pida dos veces.
    """
    hay = {ingrediente.strip().lower() for ingrediente in despensa}
    return [linea for linea in lista(menu) if linea.split(" (x")[0] not in hay]
