"""El explorable de la ventana, para las lecciones 02 y 03: `presupuesto.py` calcula y `widget_de_la_ventana.py` dibuja."""
