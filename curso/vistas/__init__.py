"""Las vistas del curso: widgets finos (ipywidgets) sobre la lógica pura de `curso/`.

Cada vista solo dibuja: lo que calcula está en un módulo sin widgets, probado con pytest
(`curso/ventana.py` para la de la ventana, que estrena la lección 02). El widget de las carreras
vive con su explorador, en `curso/carreras/widget.py`.
"""
