"""Para el servidor de ensayo: un contador de tokens aproximado, determinista y documentado.

Un servidor real cuenta con el tokenizador de su modelo (BPE, SentencePiece...), y dos modelos
cuentan distinto el mismo texto. El servidor de ensayo no tiene modelo, así que usa una regla
sencilla que se parece en promedio a un tokenizador de ese tipo sobre código y castellano:

- cada trozo de hasta 4 letras seguidas es un token («recetario» son 3: «rece», «tari», «o»);
- cada trozo de hasta 3 cifras seguidas es un token;
- cada signo (puntuación, comillas, paréntesis...) es un token, y una racha del mismo signo
  repetido, hasta 8 seguidos, también (tres comillas dobles seguidas, o una raya de ocho signos =, son un token cada una), como hacen
  los tokenizadores de verdad con las rayas y las comillas triples;
- cada salto de línea es un token; los espacios y tabuladores no cuentan.

La regla es lineal en el tamaño del texto y da siempre la misma cuenta para el mismo texto, que
es lo que necesita un ensayo reproducible. No es la cuenta de ningún modelo real.
"""
import itertools
import re

# La ventana del curso, en tokens: la del servidor de ensayo y la de `llama-server -c 8192`. La única
# vez que se escribe en curso/ (lo mira tests/equipo/test_casa.py): los demás la importan de aquí.
VENTANA = 8192

PATRON = re.compile(r"[^\W\d_]{1,4}|\d{1,3}|\n|([^\w\s]|_)\1{0,7}")


def trocear(texto):
    """La lista de tokens de `texto` según la regla de este módulo."""
    return [m.group(0) for m in PATRON.finditer(texto)]


def contar(texto):
    """Cuántos tokens tiene `texto` según la regla de este módulo."""
    return trocear_hasta(texto, 0)[1]


def trocear_hasta(texto, tope):
    """(los primeros `tope` tokens de `texto`, cuántos tiene en total), en una sola pasada.

    La lista no pasa de `tope` tokens aunque el texto sea enorme: así se puede contar una
    petición que no cabe en la ventana sin gastar memoria en guardar todos sus tokens.
    """
    trozos = (m.group(0) for m in PATRON.finditer(texto))
    primeros = list(itertools.islice(trozos, tope))
    return primeros, len(primeros) + sum(1 for _ in trozos)
