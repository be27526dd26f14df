"""Para el explorador de carreras: los escenarios de cada lección, uno por módulo.

`resumenes` es el de la lección 04 (dos resumidores y un mensaje que llega); la lección 05
añade el suyo para el buzón. Cada módulo expone un `ESCENARIO` (un `curso.explorables.carreras.Escenario`)
con su variante «correcta» y sus variantes ingenuas.
"""
