"""Para `medir mutantes` y sus tests: los mutantes de las soluciones de referencia que no cambian lo que hace el código, cada uno con su porqué.

Un mutante vivo (la comprobación lo da por bueno) es un caso que falta o un mutante equivalente:
uno que ninguna comprobación puede distinguir, porque se comporta igual que la referencia con
cualquier entrada que el ejercicio admite. Aquí están los segundos, nombrados por el ejercicio y
por la línea que cambia (antes y después, sin sangría), no por el número de ocurrencia del
operador, que se mueve en cuanto se edita la celda. tests/lecciones/test_mutantes.py comprueba
que cada uno es un mutante de verdad de la referencia de hoy y que su comprobación lo deja pasar.

Son datos de los tests, fuera del paquete: los leen ese test y `medir mutantes` (que pone tests/ en
sys.path con `curso.medir.de_los_tests`).
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Equivalente:
    ejercicio: str
    antes: str     # la línea de la referencia, sin sangría
    despues: str   # la línea del mutante
    porque: str


EQUIVALENTES = [
    Equivalente(
        "6.2", 'if M[-1][0] == "asistente":', 'if M[-1][0] <= "asistente":',
        "Los papeles de un mensaje de M son «sistema», «usuario» y «asistente» (la nota de un resumen "
        "es del usuario): ninguno va antes que «asistente» en el orden de los textos, así que `<=` "
        "solo es verdad con «asistente», igual que `==`."),
    Equivalente(
        "6.3", "if n == self.intentos - 1:", "if n >= self.intentos - 1:",
        "`n` sale de `range(self.intentos)`: nunca pasa de `self.intentos - 1`, así que `>=` solo es "
        "verdad en la última vuelta, igual que `==`."),
    Equivalente(
        "7.1", "if movido.rowcount == 0:", "if movido.rowcount <= 0:",
        "Tras un UPDATE, el rowcount de psycopg son las filas que cambió: 0 o más (solo es -1 antes "
        "de ejecutar nada), así que `<= 0` y `== 0` son lo mismo."),
    Equivalente(
        "4.3", "if movido.rowcount == 0:", "if movido.rowcount <= 0:",
        "Tras un UPDATE, el rowcount de sqlite3 son las filas que cambió: 0 o más (-1 solo para "
        "sentencias que no son DML), así que `<= 0` y `== 0` son lo mismo."),
    Equivalente(
        "7.2", "if guardada.rowcount == 1:", "if guardada.rowcount >= 1:",
        "Un INSERT … VALUES de una sola fila con ON CONFLICT DO NOTHING inserta 0 filas o 1: el "
        "rowcount nunca pasa de 1, así que `>= 1` y `== 1` son lo mismo."),
    Equivalente(
        "6.1", 'if llamada["name"] == "ejecutar":', 'if llamada["name"] >= "ejecutar":',
        "A esa línea solo llegan las herramientas con efectos que se ejecutan, «editar» y «ejecutar» "
        "(«leer» sale antes, por se_ejecutaria): «editar» va antes que «ejecutar» en el orden de los "
        "textos, así que `>=` solo es verdad con «ejecutar», igual que `==`."),
    Equivalente(
        "5.1", "if esperado[0] is not None:", "if esperado[ -1] is not None:",
        "`esperado` es una fila de una sola columna (SELECT encargo ...): su elemento -1 es el 0."),
    Equivalente(
        "5.1", "validar_entrega(json.loads(esperado[0]), carga)", "validar_entrega(json.loads(esperado[ -1]), carga)",
        "`esperado` es una fila de una sola columna (SELECT encargo ...): su elemento -1 es el 0."),
    Equivalente(
        "5.2", "if disposicion != RECIBIDA:", "if disposicion < RECIBIDA:",
        "Las disposiciones son «recibida», «admitida» y «tardia». «admitida» va antes que «recibida» y "
        "sale igual; «tardia» va después y sigue, pero una entrega solo es tardía si su padre ya estaba "
        "en un estado terminal, del que no se sale: la vuelve a marcar «tardia» y devuelve TARDIA, lo "
        "mismo que devolver su disposición."),
    Equivalente(
        "5.4", "return None", "pass",
        "Es la última sentencia de por_que_no: una función que se acaba sin return devuelve None."),
    # Estos dos cambian el número que dice un mensaje de error, no lo que hace la función: lanza el
    # mismo ValueError con las mismas entradas. El ejercicio no fija el texto de sus mensajes (el
    # alumno escribe los suyos: issue 25, «working code graded red» por una redacción que no se
    # pide), así que ninguna comprobación justa puede distinguirlos.
    Equivalente(
        "4.2", "for numero, afirmacion in enumerate(candidato, 1):", "for numero, afirmacion in enumerate(candidato, 2):",
        "Solo cambia el número de la afirmación que nombra el mensaje del ValueError, que el "
        "ejercicio no fija; las mismas entradas lanzan y pasan igual."),
    Equivalente(
        "4.2", "for numero, afirmacion in enumerate(candidato, 1):", "for numero, afirmacion in enumerate(candidato, 0):",
        "Solo cambia el número de la afirmación que nombra el mensaje del ValueError, que el "
        "ejercicio no fija; las mismas entradas lanzan y pasan igual."),
]


def es_equivalente(mutante):
    """¿Está `mutante` (un `curso.medir.mutantes.Mutante`) en la lista?"""
    return any((e.ejercicio, e.antes, e.despues) == mutante.clave for e in EQUIVALENTES)
