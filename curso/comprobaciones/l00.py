"""Para `comprobar("0.1")`: el ejercicio de calentamiento de la lección 00, que recorre todo el mecanismo."""
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
