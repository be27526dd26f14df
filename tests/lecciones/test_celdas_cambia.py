"""Las celdas `%%modulo … --cambia` de los cuadernos resueltos frente a las funciones que el alumno escribe en sus ejercicios (issue 40, hallazgo 8).

Una celda --cambia sustituye enteras las piezas que trae (ver curso/alumno/componer.py). Si una de
ellas es una función que el alumno escribió para un ejercicio (el `bucle` del 1.3, que la 03 y la
03b cambian), su código se va del fichero: la celda tiene que decirlo, en su texto de antes y al
ejecutarse (esto último lo prueban tests/equipo/test_cuaderno.py y los caminos). Aquí se recorre cada
cuaderno resuelto como lo haría un alumno, desde el punto de control anterior, componiendo cada
celda %%modulo sobre lo que dejó la anterior, y se mira cada sustitución de una pieza de ejercicio.
"""
import json

from curso import rutas
from curso.alumno import componer, cuaderno


def _celdas(leccion):
    ruta = rutas.SOLUCIONES / f"{rutas.LECCIONES[leccion]['cuaderno']}.ipynb"
    return [(c["cell_type"], c.get("id"), "".join(c["source"]))
            for c in json.loads(ruta.read_text(encoding="utf-8"))["cells"]]


def sustituciones(leccion, celdas=None):
    """[(id de la celda, módulo, [piezas de ejercicio que sustituye], texto de encima)] de cada celda
    --cambia de `leccion` que sustituye una función o clase de un ejercicio por otra distinta."""
    celdas = celdas if celdas is not None else _celdas(leccion)
    anterior = rutas.puntos_de_control().get(rutas.anterior(leccion)) if rutas.anterior(leccion) is not None else None
    textos, halladas, encima = {}, [], ""
    for tipo, id, fuente in celdas:
        if tipo == "markdown":
            encima = fuente
            continue
        if not fuente.startswith("%%modulo"):
            continue
        cabecera, cuerpo = fuente.split("\n", 1)
        nombre, *opciones = cabecera.split()[1:]
        cuerpo = cuaderno.sin_marcas(cuerpo)
        if "--cambia" not in opciones:
            textos[nombre] = cuerpo
            continue
        if nombre not in textos:
            textos[nombre] = (anterior / f"{nombre}.py").read_text(encoding="utf-8")
        hecho = componer.componer(textos[nombre], cuerpo, nombre)
        cambiadas = {n.removesuffix("()") for n in hecho.cambia}
        suyas = sorted(p for p in cuaderno._piezas_de_ejercicio(nombre) if p in cambiadas)
        if suyas:
            halladas.append((id, nombre, suyas, encima))
        textos[nombre] = hecho.texto
    return halladas


def _que_no_lo_dicen(halladas):
    """Las sustituciones cuyo texto de encima no dice que sustituye la función ni dónde queda la tuya."""
    return [(id, nombre, piezas) for id, nombre, piezas, encima in halladas
            if not ("sustituye" in encima and ".copias/" in encima and all(f"`{p}`" in encima for p in piezas))]


def test_cada_celda_cambia_que_sustituye_la_funcion_de_un_ejercicio_lo_dice_antes():
    """Cada celda --cambia de cada lección: si sustituye la función de un ejercicio, su texto de
    encima dice que la sustituye y que tu fichero de antes queda en .copias/."""
    halladas = {leccion: sustituciones(leccion) for leccion in rutas.LECCIONES if rutas.anterior(leccion) is not None}
    assert any(halladas.values()), "ninguna celda --cambia sustituye la función de un ejercicio: ¿mira algo este test?"
    malas = {leccion: _que_no_lo_dicen(h) for leccion, h in halladas.items() if _que_no_lo_dicen(h)}
    assert not malas, malas


def test_el_texto_de_antes_de_la_03_no_lo_decia():
    """La variante ingenua, el texto de la 03 como estaba: «cambia en él cada pieza… (aquí, la
    función `bucle`, entera)», sin decir que tu bucle del 1.3 se va ni dónde queda. El test la pilla."""
    celdas = [(tipo, id, fuente.split("\n\nSi en el 1.3")[0].replace(
                   ": **sustituye tu `bucle` del ejercicio 1.3 por el de la celda**", "")) if id == "c10"
              else (tipo, id, fuente) for tipo, id, fuente in _celdas(3)]
    assert [id for id, _, _ in _que_no_lo_dicen(sustituciones(3, celdas))] == ["c11"]
