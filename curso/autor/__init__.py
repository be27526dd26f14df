"""Para quien escribe el curso: generar y ejecutar los cuadernos, probarlo todo, llevar las copias entre puntos de control."""
