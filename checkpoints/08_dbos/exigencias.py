"""Lo que el buzón exige a lo que llega de fuera: identidades cortas y documentos JSON puros.

Lección 05. Una entrega la escribe un hijo, y un hijo es un modelo: puede mandar cualquier cosa.
Antes de tocar la base, cada identidad (de un padre, de un hijo, de una entrega) tiene que ser un
texto corto, y cada documento (un encargo, la carga de una entrega), JSON puro. Se guarda en su
forma canónica, así que lo que se guarda es exactamente lo que se leerá después, y dos copias
del mismo documento se reconocen como iguales. Toda entrada mala es un ValueError en castellano
que dice qué encontró.
"""
import json
import math
import sys

from validacion import muestra

# Una identidad (de entrega, de padre o de hijo) nombra algo; no es un documento.
LARGO_MAXIMO_DE_IDENTIDAD = 100

# Una entrega es un documento de pocos niveles (la de un hijo tiene dos: el dict y sus listas).
# Treinta y dos sobran, y dejan a json.dumps, que es recursivo, lejos del límite de la pila.
PROFUNDIDAD_MAXIMA_DE_JSON = 32


def exigir_identidad(valor, que):
    """ValueError si `valor` no es un texto no vacío de como mucho LARGO_MAXIMO_DE_IDENTIDAD."""
    if not isinstance(valor, str) or not valor.strip():
        raise ValueError(f"{que} debe ser un texto no vacío, no {muestra(valor)}.")
    if len(valor) > LARGO_MAXIMO_DE_IDENTIDAD:
        raise ValueError(f"{que} tiene {len(valor)} caracteres; una identidad tiene como mucho {LARGO_MAXIMO_DE_IDENTIDAD}.")
    exigir_utf8(valor, que)


def exigir_utf8(texto, que):
    """ValueError si `texto` lleva caracteres que UTF-8 no puede guardar (un sustituto suelto)."""
    try:
        texto.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{que} contiene caracteres que no se pueden guardar en UTF-8.") from None


def json_canonico(valor, que):
    """El JSON canónico de un dict: claves ordenadas y sin espacios, así el orden en que se
    escribieron las claves no parece un cambio de contenido. Solo JSON puro (`exigir_json_puro`):
    lo que se guarda es exactamente lo que se leerá después."""
    if not isinstance(valor, dict):
        raise ValueError(f"{que} debe ser un dict (un objeto JSON), no {muestra(valor)}.")
    exigir_json_puro(valor, que)
    cuerpo = json.dumps(valor, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    exigir_utf8(cuerpo, que)
    return cuerpo


def exigir_json_puro(valor, que):
    """Lanza ValueError, diciendo qué encontró, si `valor` no es JSON puro: dicts con claves de
    texto, listas, textos, números finitos (enteros que Python sepa escribir), booleanos y None.

    Recorre el valor con una pila propia, no con recursión: lo anidado miles de veces, o lo que
    se contiene a sí mismo, se rechaza por su profundidad en vez de agotar la pila de Python.
    """
    por_mirar = [(valor, 1)]
    while por_mirar:
        actual, nivel = por_mirar.pop()
        if nivel > PROFUNDIDAD_MAXIMA_DE_JSON:
            raise ValueError(f"{que} anida más de {PROFUNDIDAD_MAXIMA_DE_JSON} niveles (¿se contiene a sí "
                             "misma?): una entrega es un documento pequeño.")
        if isinstance(actual, dict):
            for clave, dentro in actual.items():
                if not isinstance(clave, str):
                    raise ValueError(f"{que} tiene la clave {muestra(clave)}, y no es JSON puro: en JSON "
                                     "las claves son textos.")
                por_mirar.append((dentro, nivel + 1))
        elif isinstance(actual, list):
            por_mirar.extend((dentro, nivel + 1) for dentro in actual)
        elif isinstance(actual, float):
            if not math.isfinite(actual):
                raise ValueError(f"{que} contiene {muestra(actual)}, y JSON no admite NaN ni infinito.")
        elif isinstance(actual, int):  # también bool
            try:
                str(actual)  # JSON escribe los enteros en decimal
            except ValueError:
                raise ValueError(f"{que} contiene {muestra(actual)}, y Python solo escribe en decimal "
                                 f"enteros de hasta {sys.get_int_max_str_digits()} cifras.") from None
        elif actual is not None and not isinstance(actual, str):
            raise ValueError(f"{que} contiene {muestra(actual)}, que no es JSON puro: solo dicts, "
                             "listas, textos, números, booleanos y None.")
