"""Para `calificar`: lo que salió de cada corrida de tests, guardado por el contenido de lo que entró.

La clave de una corrida resume todo lo que decide su resultado: los ficheros que se copian (por su
contenido, no por su nombre: dos alumnos con el mismo código comparten resultado), los tests que
se corren, los ejercicios, el límite por test, el punto de control y el propio curso
(`huella_del_curso`). Así volver a calificar solo corre lo que ha cambiado.
"""
import hashlib
import json
import os
import threading
from pathlib import Path

from curso import rutas
from curso.comprobaciones import aparte

VERSION_DE_LA_CACHE = 1  # cambia si cambia lo que se guarda o cómo se decide


def _resumen(ruta):
    return hashlib.sha256(Path(ruta).read_bytes()).hexdigest()


def contenido(ficheros):
    """{ruta relativa: resumen} de unos ficheros: dos copias con lo mismo dan lo mismo."""
    return {relativa: _resumen(origen) for relativa, origen in ficheros.items()}


def huella_del_curso():
    """Un resumen de todo lo que decide un resultado además del código del alumno: los puntos de
    control con sus tests, recetario/ y el código del curso."""
    h = hashlib.sha256(f"calificar {VERSION_DE_LA_CACHE}".encode())
    for base in (rutas.PUNTOS, rutas.RECETARIO, Path(aparte.__file__).parent.parent):
        for ruta in sorted(Path(base).rglob("*")):
            if ruta.is_file() and "__pycache__" not in ruta.parts and ruta.suffix != ".pyc":
                h.update(ruta.relative_to(base).as_posix().encode() + b"\0" + _resumen(ruta).encode())
    return h.hexdigest()


class Cache:
    """Resultados de corridas ya hechas, un fichero JSON por corrida, por la huella de lo que entró.

    No se guarda una corrida con algo que podría salir distinto la próxima vez (`aparte.es_estable`):
    un test saltado, sin comprobar (se acabó el tiempo, llegó un Ctrl-C) o colgado. Un colgado no es
    un veredicto final: con la máquina cargada pudo ser la carga, así que `calificar` lo vuelve a
    correr a solas al final, y la próxima calificación también.

    Sin carpeta (`--sin-cache`) guarda solo en memoria, mientras dura la calificación: así lo que se
    vuelve a correr a solas al final es solo lo que se colgó."""

    def __init__(self, carpeta, huella):
        self.carpeta, self.huella = (Path(carpeta) if carpeta else None), huella
        self.memoria = {}  # {clave: Corrida} de esta calificación

    def clave(self, punto, ficheros, seleccion, ejercicios, limite):
        h = hashlib.sha256(self.huella.encode())
        h.update(json.dumps([punto.name, sorted((r, _resumen(f)) for r, f in ficheros.items()),
                             list(seleccion), list(ejercicios), limite]).encode())
        return h.hexdigest()

    def leer(self, clave):
        if clave in self.memoria:
            return self.memoria[clave]
        if self.carpeta is None:
            return None
        try:
            datos = json.loads((self.carpeta / f"{clave}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return aparte.Corrida({t: aparte.Resultado(*r) for t, r in datos["resultados"].items()},
                              datos["notas"])

    def guardar(self, clave, corrida):
        if not all(aparte.es_estable(r) for r in corrida.resultados.values()):
            return
        self.memoria[clave] = corrida
        if self.carpeta is None:
            return
        self.carpeta.mkdir(parents=True, exist_ok=True)
        datos = {"resultados": {t: [r.estado, r.motivo, r.pendiente, r.caso, r.donde]
                                for t, r in corrida.resultados.items()},
                 "notas": corrida.notas}
        temporal = self.carpeta / f".{clave}.{threading.get_ident()}"
        temporal.write_text(json.dumps(datos, ensure_ascii=False), encoding="utf-8")
        os.replace(temporal, self.carpeta / f"{clave}.json")  # entera o nada, aunque llegue un Ctrl-C
