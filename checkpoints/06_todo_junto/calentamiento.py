"""El calentamiento de la lección 00: leer lo importante de una salida."""


def ultima_linea(salida):
    """La última línea con texto de `salida`, sin espacios en los extremos; "" si no hay ninguna."""
    for linea in reversed(salida.splitlines()):
        if linea.strip():
            return linea.strip()
    return ""
