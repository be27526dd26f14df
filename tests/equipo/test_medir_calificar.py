"""`python -m curso medir calificar`, sin medir nada: la clase de 30 que arma (sus errores típicos se
escriben sobre el texto de los puntos de control; si uno de ellos cambia, esto lo dice antes que la
medida) y que calificar encuentra a cada alumno donde lo dejó."""
from curso.clase import calificar
from curso.medir import clase_de_treinta as medir


def test_la_clase_de_la_medida_son_30_alumnos_con_cada_error_en_su_sitio(tmp_path):
    assert medir.armar_clase(tmp_path) == medir.ALUMNOS == 30
    usados = {error for _, _, errores, _ in medir.CLASE for error in errores}
    assert usados == set(medir.ERRORES)  # cada error típico lo tiene algún alumno
    alumnos = {a.nombre: a for a in calificar.alumnos_de(tmp_path)}
    assert alumnos["ivan"].donde == "ivan/construye-tu-agente-main/mi_agente/"
    assert alumnos["sin_espacio"].espacio is None
    assert "while True:" in (alumnos["colgado"].espacio / "bucle.py").read_text(encoding="utf-8")
    # Dos alumnos con el mismo punto de control no tienen el mismo texto: no comparten la caché.
    assert (alumnos["completo1"].espacio / "bucle.py").read_text() != (alumnos["completo2"].espacio / "bucle.py").read_text()


def test_no_hay_dos_espacios_iguales_y_el_vacio_se_encuentra(tmp_path):
    """Treinta espacios distintos: si dos fueran iguales, la segunda corrida saldría de la caché y la
    medida de la primera vez diría menos de lo que cuesta una clase de verdad."""
    medir.armar_clase(tmp_path)
    alumnos = calificar.alumnos_de(tmp_path)
    huellas = [tuple(sorted((p.name, p.read_bytes()) for p in a.espacio.rglob("*") if p.is_file()))
               if a.espacio else None for a in alumnos]
    assert len(set(huellas)) == len(alumnos) == 30
    vacio = next(a for a in alumnos if a.nombre == "vacio")
    assert vacio.espacio is not None and not any(vacio.espacio.iterdir())  # está, y está sin empezar
    assert (tmp_path / "completo1" / "notebooks" / "02_la_ventana.ipynb").exists()
