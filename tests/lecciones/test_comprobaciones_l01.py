"""Lo que la lección 01 pide con palabras, su comprobación lo mira: cada descuido lo pilla su caso.

El texto de los ejercicios 1.1 y 1.2 pide dos cosas fáciles de olvidar: que `texto_de` quite los
espacios de los extremos y que en `permitido` solo un `True` explícito cuente como sí. Para cada
una se escribe aquí la implementación descuidada (la solución de referencia con una línea
cambiada), se corre la comprobación y se exige que falle exactamente el caso escrito para ese
descuido: ni ninguno (el descuido pasaría sin verse) ni otro en su lugar.
"""
import shutil

import pytest

from curso import rutas
from curso.alumno import cuaderno
from curso.comprobaciones import ejercicios

PUNTO_01 = rutas.puntos_de_control()[1]

CASO_DE_LOS_EXTREMOS = "texto_de quita los espacios y saltos de línea de los extremos"
CASO_DEL_TRUE = "solo un True explícito cuenta como sí: un usuario que contesta \"n\" no da permiso"

DESCUIDOS = {
    "texto_de sin quitar los extremos": (
        "1.1",
        '    return " ".join(b["text"] for b in respuesta if b.get("type") == "text").strip()\n',
        '    return " ".join(b["text"] for b in respuesta if b.get("type") == "text")\n',
        CASO_DE_LOS_EXTREMOS),
    "permitido devuelve la respuesta tal cual": (
        "1.2",
        "    return usuario(nombre, entrada) is True\n",
        "    return usuario(nombre, entrada)\n",
        CASO_DEL_TRUE),
    "permitido convierte la respuesta con bool": (
        "1.2",
        "    return usuario(nombre, entrada) is True\n",
        "    return bool(usuario(nombre, entrada))\n",
        CASO_DEL_TRUE),
}


def comprobar_con(id, fuente, tmp_path, diferencial=True):
    """La comprobación del ejercicio `id` con `fuente` como su módulo, en un espacio de prueba (sin el
    diferencial, con diferencial=False: para mirar qué caso escrito pilla cada descuido)."""
    e = ejercicios.REGISTRO[id]
    espacio = tmp_path / "espacio"
    shutil.copytree(PUNTO_01, espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (espacio / f"{e.modulo}.py").write_text(fuente, encoding="utf-8")
    try:
        return ejercicios.evaluar(id, espacio=espacio, diferencial=diferencial)
    finally:
        ejercicios.olvidar_modulos(espacio)


def modulo_de_referencia(id):
    """El texto del módulo que escribe la celda resuelta del ejercicio `id` (sin %%modulo ni marcas)."""
    fuente = ejercicios.celda_resuelta(id).source.split("\n", 1)[1]
    return cuaderno.sin_marcas(fuente).rstrip("\n") + "\n"


def en_rojo(resultado):
    return {l.caso for l in resultado.lineas if l.estado != "ok"}


ejercicios.cargar_registro()


@pytest.mark.parametrize("descuido", sorted(DESCUIDOS))
def test_cada_descuido_lo_pilla_su_caso_y_solo_el(descuido, tmp_path):
    id, bueno, malo, caso = DESCUIDOS[descuido]
    referencia = modulo_de_referencia(id)
    assert referencia.count(bueno) == 1, f"la solución de {id} ya no tiene la línea {bueno!r}"
    resultado = comprobar_con(id, referencia.replace(bueno, malo), tmp_path, diferencial=False)
    assert en_rojo(resultado) == {caso}, ejercicios.informe(resultado)


@pytest.mark.parametrize("id", ["1.1", "1.2"])
def test_la_referencia_pasa_esos_casos(id, tmp_path):
    resultado = comprobar_con(id, modulo_de_referencia(id), tmp_path)
    assert resultado.aprobado, ejercicios.informe(resultado)
    assert {CASO_DE_LOS_EXTREMOS, CASO_DEL_TRUE} & {l.caso for l in resultado.lineas}


def test_las_cifras_de_los_mensajes_del_13_dicen_que_cuentan(tmp_path):
    """Un bucle que se olvida de añadir la respuesta final a M: el mensaje dice «mensajes en M»."""
    referencia = modulo_de_referencia("1.3")
    bueno = '            return "fin", texto_de(respuesta), M\n'
    malo = '            return "fin", texto_de(respuesta), M[:-1]\n'
    assert referencia.count(bueno) == 1
    resultado = comprobar_con("1.3", referencia.replace(bueno, malo), tmp_path)
    informe = ejercicios.informe(resultado)
    assert "mensajes en M" in informe, informe
