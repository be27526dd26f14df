"""Los escenarios del explorador de carreras (`curso.carreras`), uno por módulo.

`resumenes` es el de la lección 04 (dos resumidores y un mensaje que llega); la lección 05
añade el suyo para el buzón. Cada módulo expone un `ESCENARIO` (un `curso.carreras.Escenario`)
con su variante «correcta» y sus variantes ingenuas.
"""
