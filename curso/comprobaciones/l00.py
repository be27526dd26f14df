"""Para `comprobar("0.1")`: el ejercicio de calentamiento de la lección 00, que recorre todo el mecanismo."""
from hypothesis import strategies as st

from curso.comprobaciones.ejercicios import ejercicio, igual

caso = ejercicio(
    "0.1", leccion=0, titulo="ultima_linea: la última línea con texto de una salida",
    nombre="ultima_linea", modulo="calentamiento",
    pistas=[
        "Parte el texto en líneas con texto.splitlines().",
        "Recorre las líneas desde el final y devuelve la primera que no esté vacía "
        "(una línea con solo espacios también cuenta como vacía: usa .strip()).",
        "Si ninguna línea tiene texto, devuelve la cadena vacía \"\". Y devuelve la línea "
        "sin los espacios de los extremos.",
    ],
)


@caso("la última línea de una salida de unittest")
def _(ultima_linea):
    salida = "....F.E\n" + "-" * 70 + "\nRan 7 tests in 0.003s\n\nFAILED (failures=1, errors=1)\n"
    igual(ultima_linea(salida), "FAILED (failures=1, errors=1)")


@caso("salta las líneas vacías y las de solo espacios del final")
def _(ultima_linea):
    igual(ultima_linea("primera\nsegunda\n\n   \n\t\n"), "segunda")


@caso("quita los espacios de los extremos")
def _(ultima_linea):
    igual(ultima_linea("  OK  \n"), "OK")


@caso("un texto sin líneas con texto da la cadena vacía")
def _(ultima_linea):
    igual(ultima_linea(""), "")
    igual(ultima_linea("\n \n"), "")


# Las salidas: líneas de letras, espacios y tabuladores, vacías o no, separadas por \n (lo que
# escribe un programa en la terminal), con o sin salto de línea al final.
LINEA = st.text(alphabet="aZ.( )\t", max_size=6)
SALIDAS = st.builds(lambda lineas, final: "\n".join(lineas) + final,
                    st.lists(LINEA, max_size=6), st.sampled_from(["", "\n", "\n\n", " \n"]))


@caso.diferencial(entradas=SALIDAS, ejemplos=200, contar=lambda salida: f"ultima_linea({salida!r})",
                  pistas={"lo que devuelve": "la última línea que tenga algo que no sea espacio, sin los "
                                             "espacios de los extremos; \"\" si ninguna tiene"})
def _(ultima_linea, salida):
    return {"lo que devuelve": ultima_linea(salida)}
