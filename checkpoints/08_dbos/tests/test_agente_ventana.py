"""Punto de control 03: una petición que no cabe ni compactando para la ejecución, no la revienta.

La compactación mira M justo después de la respuesta del modelo, antes de las observaciones de
ese turno. Una observación enorme entra en M después, y la petición siguiente ya no cabe. Desde
la lección 01, `leer` devuelve como mucho LIMITE_LECTURA caracteres, así que un fichero de 40 KB
ya no lo provoca; con un `leer` sin límite (como era antes), sí. Si pasa, el agente para con el
motivo "ventana", el aviso del error como texto y M tal como iba, y no deja su copia en la
carpeta temporal.
"""
import tempfile

import pytest

import herramientas
from agente import agente
from api import ModeloAPI
from compactar import compactar
from curso.ensayo.servidor import ServidorEnsayo

KB = 1024
LINEA = "pollo, arroz, azafrán, judías verdes, garrofón, tomate, aceite, sal\n"  # una receta larga


@pytest.fixture
def proyecto_con_un_fichero_grande(tmp_path):
    """Un proyecto con un recetas.txt de unos 40 KB: lo que el guion `herramienta` pide leer."""
    proyecto = tmp_path / "proyecto"
    proyecto.mkdir()
    (proyecto / "AGENTE.md").write_text("Un proyecto con un fichero de recetas muy largo.\n", encoding="utf-8")
    recetas = LINEA * (40 * KB // len(LINEA.encode()) + 1)
    (proyecto / "recetas.txt").write_text(recetas, encoding="utf-8")
    return proyecto, recetas


@pytest.fixture
def temporal(tmp_path, monkeypatch):
    carpeta = tmp_path / "temporal"
    carpeta.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(carpeta))
    return carpeta


def test_un_fichero_de_40_kb_ya_no_para_al_agente_porque_se_lee_por_trozos(proyecto_con_un_fichero_grande,
                                                                           temporal):
    proyecto, recetas = proyecto_con_un_fichero_grande
    with ServidorEnsayo(0) as servidor:
        motivo, texto, M, copia = agente(ModeloAPI("guion:herramienta", url=servidor.url), "Lee las recetas.",
                                         proyecto, 10, compactar=compactar)
    assert motivo == "fin" and copia is None
    (observacion,) = M[3][1]
    corte = observacion["content"].rindex("[… ")
    trozo, nota = observacion["content"][:corte], observacion["content"][corte:]
    assert len(trozo) <= herramientas.LIMITE_LECTURA and recetas.startswith(trozo) and trozo.endswith("\n")
    assert nota.startswith("[… leídas las líneas 1 a ") and nota.endswith(f"desde={trozo.count(chr(10)) + 1}]")
    assert list(temporal.iterdir()) == []


@pytest.mark.parametrize("con_compactar", [False, True], ids=["sin compactar", "compactando"])
def test_con_leer_sin_limite_un_fichero_de_40_kb_para_al_agente_con_el_motivo_ventana(
        proyecto_con_un_fichero_grande, temporal, monkeypatch, con_compactar):
    """La variante ingenua de leer (el fichero entero, sin límite): la observación no cabe, y el
    test de arriba la detectaría. El agente, al menos, para limpio."""
    monkeypatch.setattr(herramientas, "LIMITE_LECTURA", 10 ** 9)
    proyecto, recetas = proyecto_con_un_fichero_grande
    assert len(recetas.encode()) >= 40 * KB
    with ServidorEnsayo(0) as servidor:
        motivo, texto, M, copia = agente(ModeloAPI("guion:herramienta", url=servidor.url), "Lee las recetas.",
                                         proyecto, 10, compactar=compactar if con_compactar else None)
    assert motivo == "ventana" and copia is None
    assert texto.startswith("la petición no cabe en la ventana del servidor: ")
    assert "8192" in texto and "compactarla" in texto
    # M está entera: el inicio, la respuesta que pidió leer y la observación con el fichero entero.
    assert [rol for rol, _ in M] == ["sistema", "usuario", "asistente", "usuario"]
    (llamada,) = [b for b in M[2][1] if b["type"] == "tool_use"]
    (observacion,) = M[3][1]
    assert (llamada["name"], llamada["input"]) == ("leer", {"ruta": "recetas.txt"})
    assert observacion["tool_use_id"] == llamada["id"] and observacion["content"] == recetas
    assert list(temporal.iterdir()) == []


def test_otro_error_del_modelo_sigue_saliendo_del_agente(proyecto_con_un_fichero_grande, temporal):
    """Solo la ventana es un motivo para parar: un error cualquiera del servidor sale como antes."""
    from api import ErrorDelModelo

    proyecto, _ = proyecto_con_un_fichero_grande
    with ServidorEnsayo(0) as servidor:
        with pytest.raises(ErrorDelModelo) as info:
            agente(ModeloAPI("guion:no-existe", url=servidor.url), "Lee las recetas.", proyecto, 10)
    assert info.value.estado == 404
    assert list(temporal.iterdir()) == []
