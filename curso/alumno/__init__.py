"""Para el alumno: la extensión de los cuadernos, los puntos de control y el doctor del entorno."""
