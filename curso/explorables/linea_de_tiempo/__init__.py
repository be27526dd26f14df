"""El explorable de la línea de tiempo, para la lección 06: `carriles.py` calcula y `widget_de_la_linea.py` dibuja."""
