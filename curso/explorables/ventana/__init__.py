"""El explorable de la ventana, para las lecciones 02, 03 y 03b: `presupuesto.py` y `limpieza.py` calculan; `widget_de_la_ventana.py` y `widget_de_la_limpieza.py` dibujan."""
