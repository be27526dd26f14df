"""El material del curso «Construye tu agente».

El alumno no escribe nada aquí: son las herramientas que usa (el servidor de ensayo, las
comprobaciones de los ejercicios, los puntos de control, los explorables).
"""
