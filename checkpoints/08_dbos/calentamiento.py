"""El calentamiento: leer lo importante de una salida.

Lección 00. El primer ejercicio, para ver cómo funcionan `%%modulo`, `comprobar` y `pista`.
"""


def ultima_linea(salida):
    """La última línea con texto de `salida`, sin espacios en los extremos; "" si no hay ninguna."""
    for linea in reversed(salida.splitlines()):
        if linea.strip():
            return linea.strip()
    return ""
