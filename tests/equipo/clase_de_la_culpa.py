"""Para test_culpa.py: una clase sintética (la arma `armar`) y, al lado, su clave: lo que la regla de la culpa debe decir de cada alumno.

Cada alumno sale del punto de control 04 con un error típico escrito encima (o ninguno), y lleva su
nombre en un comentario al final de cada módulo, como en `medir calificar`: no hay dos iguales. La
clave se escribió a mano antes de correr nada, a partir de lo que hace cada error (no de lo que
dijo el código): qué dice la celda de cada lección, a quién hay que mirar primero y qué módulos
fallan solo por otro («durable.py, por resumenes.py»).
"""
from pathlib import Path

from curso import rutas
from curso.medir.clase_de_treinta import escribir_espacio

PUNTO = 4
LECCIONES = [1, 4]
CONTEXTO = "def contexto(bd, ejecucion):\n"
# Cómo se cuelgan los dos colgados: un bucle sin fin que duerme. Un `while True: pass` se cuelga
# igual para la regla (el límite de cada test es de reloj, no de CPU: comprobaciones/aparte.py),
# pero quema un núcleo entero hasta que lo matan, en cada vuelta que llega a él: eran unos 80 s de
# CPU de la suite. El colgado que sí quema CPU está en test_calificar.py y en `medir calificar`.
COLGARSE = "    import time\n    while True:\n        time.sleep(1)"
ERRORES = {
    # Un `:` de menos: historial.py no se puede importar, y con él nada de lo que lo importa.
    "sintaxis_historial": ("historial", "def abrir(ruta):", "def abrir(ruta)"),
    # Un bucle sin fin en resumenes.contexto: se cuelga todo lo que lo llama.
    "colgado_resumenes": ("resumenes", CONTEXTO, CONTEXTO + COLGARSE + "\n"),
    # Un bucle sin fin en permisos.permitido: se cuelga todo lo que pide permiso (lección 01).
    "colgado_permisos": ("permisos", "    return usuario(nombre, entrada) is True", COLGARSE),
    # Un compare-and-swap que no compara con su base: fallan sus tests y los de durable.py, que
    # confía en él para no pisar un resumen más nuevo.
    "cas": ("resumenes", 'WHERE id=? AND resumen_activo IS ?",\n        (nuevo, ejecucion, base),',
            'WHERE id=?",\n        (nuevo, ejecucion),'),
}
# La clave. estados: {lección: cómo empieza su celda}; primero: el módulo de «Lo primero que
# mirar» (y lo que su texto tiene que decir); consecuencias: {módulo: su culpable}, en la celda de
# la lección 04 y en las líneas de todo junto.
CLAVE = {
    "bien": {"estados": {1: "✔", 4: "✔"}, "primero": None, "consecuencias": {}},
    "sintaxis_historial": {"estados": {1: "✔", 4: "✘ historial.py"},
                           "primero": ("historial", ["línea", "`def abrir(ruta)`", "SyntaxError"]),
                           # validacion.py es código que da el curso: sus tests son de regresión y
                           # no califican, así que no tiene consecuencias (antes, sí).
                           "consecuencias": {"resumenes": "historial",
                                             "durable": "historial"}},
    "colgado_resumenes": {"estados": {1: "✔", 4: "⚠ resumenes.py colgado"},
                          "primero": ("resumenes", ["colg", "no terminó en"]),
                          # (test_validacion.py, que importa resumenes, era otra consecuencia
                          # cuando calificaba; ahora es de regresión: validacion.py lo da el curso.)
                          "consecuencias": {"durable": "resumenes"}},
    "colgado_permisos": {"estados": {1: "⚠ permisos.py colgado", 4: "✔"},
                         "primero": ("permisos", ["colg", "no terminó en"]),
                         "consecuencias": {}},
    # El compare-and-swap es el ejercicio 4.3; antes se decía el 4.2, el primero de resumenes.py
    # (hallazgo 7 de la issue 40).
    "cas": {"estados": {1: "✔", 4: "✘ resumenes.py"}, "primero": ("resumenes", ["ejercicio 4.3"]),
            "consecuencias": {"durable": "resumenes"}},
    "sin_empezar": {"estados": {1: "sin empezar", 4: "sin empezar"}, "primero": None, "consecuencias": {}},
}


def armar(carpeta):
    """Escribe la clase en `carpeta`, una subcarpeta por alumno; devuelve {alumno: su mi_agente/}."""
    punto = rutas.puntos_de_control()[PUNTO]
    espacios = {}
    for nombre in CLAVE:
        espacio = Path(carpeta) / nombre / "mi_agente"
        espacio.mkdir(parents=True)
        espacios[nombre] = espacio
        if nombre == "sin_empezar":
            continue  # un mi_agente/ vacío: lo creó la primera celda y no escribió nada más
        escribir_espacio(espacio, punto, nombre, [ERRORES[nombre]] if nombre in ERRORES else [])
    return espacios
