"""Los explorables de las lecciones, para sus cuadernos: cada uno, un paquete con su lógica pura y su widget."""
