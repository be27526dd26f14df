"""La convención de los esbozos, para `generar`, que los escribe, y para quien los lee (el cuaderno, `comprobar`, `comparar`).

Para el cuaderno del alumno, para `comprobar` y `comparar` y para `generar` (curso/autor), que
convierte cada región de solución de `solutions/` en un esbozo. Aquí solo las marcas de una región,
el aviso del NotImplementedError de un esbozo (empieza por el número de su ejercicio, para que
`comprobar` sepa cuál está pendiente aunque lo alcance el código de otro) y dónde dice una celda
qué ejercicio es: ningún import pesado, porque lo carga cada núcleo de los cuadernos.
"""
import re

INICIO = "# BEGIN SOLUCIÓN"
FIN = "# END SOLUCIÓN"

# El mensaje del NotImplementedError de un esbozo. Empieza por el número de su ejercicio para que
# `comprobar` sepa cuál está pendiente aunque lo alcance el código de otro ejercicio.
AVISO = "Ejercicio {numero} pendiente: completa {funcion}() en su celda, ejecútala y comprueba con comprobar(\"{numero}\")."
EJERCICIO_DEL_AVISO = re.compile(r"^Ejercicio (\d+[a-z]?(?:\.\d+)+) pendiente:")


def ejercicio_del_aviso(mensaje):
    """El número de ejercicio ("1.2") del mensaje de un esbozo, o None si no es uno."""
    encontrado = EJERCICIO_DEL_AVISO.match(str(mensaje))
    return encontrado.group(1) if encontrado else None


def ejercicio_de(celda):
    """El ejercicio de una celda ("1.2"), {función: ejercicio} si tiene varios, o None."""
    curso = celda.get("metadata", {}).get("curso", {})
    return curso.get("ejercicio") or curso.get("ejercicios")
