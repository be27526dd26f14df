"""Para `medir mutantes` y sus tests: los mutantes de las soluciones de referencia que no cambian lo que hace el código, cada uno con su porqué.

Un mutante vivo (la comprobación lo da por bueno) es un caso que falta o un mutante equivalente:
uno que ninguna comprobación puede distinguir, porque se comporta igual que la referencia con
cualquier entrada que el ejercicio admite. Aquí están los segundos, nombrados por el ejercicio y
por la línea que cambia (antes y después, sin sangría), no por el número de ocurrencia del
operador, que se mueve en cuanto se edita la celda. tests/lecciones/test_mutantes.py comprueba
que cada uno es un mutante de verdad de la referencia de hoy y que su comprobación lo deja pasar.

Este módulo no registra ningún ejercicio (`cargar_registro` importa todo el paquete): solo datos.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Equivalente:
    ejercicio: str
    antes: str     # la línea de la referencia, sin sangría
    despues: str   # la línea del mutante
    porque: str


EQUIVALENTES = [
]


def es_equivalente(mutante):
    """¿Está `mutante` (un `curso.medir.mutantes.Mutante`) en la lista?"""
    return any((e.ejercicio, e.antes, e.despues) == mutante.clave for e in EQUIVALENTES)
