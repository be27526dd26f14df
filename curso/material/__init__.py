"""El material de las lecciones, para sus celdas: el código que corren para enseñar algo (incidente, simulacro, varias máquinas...)."""
