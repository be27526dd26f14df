"""El material del curso «Construye tu agente», para el alumno, quien da el curso y quien lo escribe (mapa: README.md).

El alumno no escribe nada aquí: son las herramientas que usa (el servidor de ensayo, las
comprobaciones de los ejercicios, los puntos de control, los explorables).
"""
