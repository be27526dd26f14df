"""Para quien da el curso: calificar los espacios de una clase entera."""
