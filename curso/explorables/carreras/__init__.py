"""Para las lecciones 04, 05 y 07: el explorador de carreras, cada intercalado de unos pocos actores con una base de verdad.

Equipo del curso; lo estrena la lección 04 (dos resumidores y un mensaje que llega) y lo
reutilizan la 05 (el buzón) y la 07 (las dos, en PostgreSQL). Un paquete, por piezas que se leen por separado:

- `explorador.py`: qué es un escenario (`Escenario`, `Paso`, `Invariante`, `Variante`), cómo se
  recorren todos sus intercalados (`explorar`) y lo que queda anotado (`Exploracion`);
- `bitacora.py`: lo que cada actor lee y escribe en la base en cada paso, sentencia a sentencia y
  transacción a transacción (cada `Evento` lo lleva en `operaciones`);
- `textos.py`: lo que se lee de una exploración, sin widgets (`totales`, `panel`, `cruce`,
  `dibujar_carriles`, `transacciones`, el HTML de los carriles);
- `widget_de_las_carreras.py`: el widget, una vista fina sobre `textos.py` (`explorar_carreras`);
- `paralelo.py`: el mismo recorrido con cada actor en su hilo y su conexión, y transacciones
  abiertas entre pasos, en SQLite o en PostgreSQL (`explorar_en_sqlite`, `explorar_en_postgres`;
  lección 07);
- `escenarios/`: los escenarios del curso, uno por lección (`carreras_de_los_resumenes`,
  `carreras_del_buzon`, `carreras_en_postgres`).

Aquí está lo que usan los cuadernos y los tests: `from curso.explorables.carreras import explorar, totales`.
`explorar_carreras` se importa al pedirlo, para que quien no dibuja no cargue ipywidgets.
"""
from curso.explorables.carreras.explorador import (ERROR_INESPERADO, Escenario, Evento, Exploracion,
                                                   Invariante, Mundo, Paso, Registro, Variante, explorar,
                                                   intercalados, numero_de_intercalados)
from curso.explorables.carreras.paralelo import explorar_en_paralelo, explorar_en_postgres, explorar_en_sqlite
from curso.explorables.carreras.textos import (carriles, carriles_html, comparacion, cruce, dibujar_carriles,
                                               panel, resumen, totales, transacciones, vecino_que_falla)

__all__ = [
    "ERROR_INESPERADO", "Escenario", "Evento", "Exploracion", "Invariante", "Mundo", "Paso", "Registro", "Variante",
    "explorar", "intercalados", "numero_de_intercalados",
    "explorar_en_paralelo", "explorar_en_postgres", "explorar_en_sqlite",
    "carriles", "carriles_html", "comparacion", "cruce", "dibujar_carriles", "panel", "resumen", "totales",
    "transacciones", "vecino_que_falla",
    "explorar_carreras",  # la da __getattr__, al pedirla
]


def __getattr__(nombre):
    if nombre == "explorar_carreras":
        from curso.explorables.carreras.widget_de_las_carreras import explorar_carreras
        return explorar_carreras
    raise AttributeError(f"el módulo curso.explorables.carreras no tiene {nombre!r}")
