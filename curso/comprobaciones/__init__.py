"""Lo que juzga el código del alumno, para los dos `comprobar`: cada ejercicio (`comprobar("N.M")`) y su espacio entero (`comprobar N`)."""
