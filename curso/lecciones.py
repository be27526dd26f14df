"""El mapa del curso: cada lección, su cuaderno y los ficheros que añade o cambia en el harness.

Cada punto de control se llama como su cuaderno, salvo que la lección diga otro nombre en "punto".
Lo usan `preparar`, los tests de coherencia (dos puntos de control seguidos solo difieren en los
ficheros que declara la lección) y el README.
"""
LECCIONES = {
    0: {"cuaderno": "00_antes_de_empezar", "ficheros": ["calentamiento.py"]},
    1: {"cuaderno": "01_el_bucle",
        "ficheros": ["entorno.py", "procesos.py", "herramientas.py", "permisos.py", "bucle.py", "agente.py",
                     "api.py", "guionizado.py", "correr.py"]},
    2: {"cuaderno": "02_la_ventana", "ficheros": []},
    3: {"cuaderno": "03_compactar", "ficheros": ["compactar.py", "bucle.py", "agente.py", "correr.py"]},
    4: {"cuaderno": "04_resumenes_en_sqlite", "ficheros": ["validacion.py", "historial.py", "resumenes.py", "durable.py"]},
    5: {"cuaderno": "05_el_buzon",
        "ficheros": ["entorno.py", "procesos.py", "herramientas.py", "permisos.py", "exigencias.py", "encargos.py",
                     "padres.py", "buzon.py", "hijos.py", "subagentes.py"]},
    6: {"cuaderno": "06_todo_junto",
        "ficheros": ["pasos.py", "registro.py", "efectos.py", "agentes.py", "reintentos.py", "reanudar.py",
                     "todo_junto.py"]},
    # La única cuyo punto de control no se llama como su cuaderno: lo que deja es PostgreSQL.
    7: {"cuaderno": "07_cuando_una_maquina_no_basta", "punto": "07_postgresql",
        "ficheros": ["historial_pg.py", "resumenes_pg.py", "padres_pg.py", "buzon_pg.py"]},
}
