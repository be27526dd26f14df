"""Los casos y las pistas de cada ejercicio, un módulo por lección (l00.py, l01.py...)."""
