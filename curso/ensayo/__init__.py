"""El servidor de ensayo, para los cuadernos y los tests: un modelo de mentira que habla la API de Messages de verdad.

Lo usa el curso para que todo funcione sin red, sin clave y sin servidor de modelos.
"""
