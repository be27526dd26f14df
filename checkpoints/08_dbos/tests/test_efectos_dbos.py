"""Una edición como mucho una vez bajo DBOS (efectos_dbos.py): el paso que edita mira antes el fichero.

Sin DBOS: `aplicar_una_vez` recibe la intención que DBOS habría guardado (`ensayar`) y el fichero como
lo deja un proceso que muere en cada punto. La variante ingenua (lo que hace un paso normal: editar
sin mirar) añade la nota dos veces cuando el paso se repite.
"""
import pytest

import efectos_dbos
from efectos import BORRADOR
from entorno import resultado
from permisos import atender

TEXTO = "# incidencia\n\nNadie ha tocado la base.\n"
NOTA = "El puerto es el 5432.\n"
EDITAR = {"type": "tool_use", "id": "e1", "name": "editar",
          "input": {"ruta": "README.md", "antiguo": "Nadie ha tocado la base.\n",
                    "nuevo": "Nadie ha tocado la base.\n" + NOTA}}
USUARIO = efectos_dbos.escritor(["README.md"])


def ingenua(entorno, llamada, intencion, usuario):
    """Lo que hace una edición en un paso normal de DBOS: editar, sin mirar nada."""
    return atender(llamada, entorno, usuario)


@pytest.fixture
def copia(tmp_path):
    (tmp_path / "copia").mkdir()
    (tmp_path / "copia" / "README.md").write_text(TEXTO, encoding="utf-8")
    return tmp_path / "copia"


def test_ensayar_no_toca_el_fichero_y_da_las_dos_huellas_y_la_observacion(copia):
    intencion = efectos_dbos.ensayar(copia, EDITAR, copia.parent / BORRADOR)
    assert (copia / "README.md").read_text(encoding="utf-8") == TEXTO
    assert intencion["antes"] == efectos_dbos.huella(copia / "README.md")
    assert intencion["despues"] not in (None, intencion["antes"])
    assert intencion["esperado"] == "editado README.md: una sustitución"
    assert [p.name for p in copia.iterdir()] == ["README.md"]  # el borrador no queda en la copia
    assert not (copia.parent / BORRADOR).exists()  # ni en la carpeta de la ejecución


def test_un_borrador_que_dejo_un_proceso_muerto_se_borra_al_ensayar_otra_vez(copia):
    borrador = copia.parent / BORRADOR
    (borrador / "README.md").parent.mkdir(parents=True)
    (borrador / "README.md").write_text("a medias", encoding="utf-8")  # murió a mitad del ensayo
    assert efectos_dbos.ensayar(copia, EDITAR, borrador)["esperado"] == "editado README.md: una sustitución"
    assert not borrador.exists()


@pytest.mark.parametrize("aplicar, veces", [(efectos_dbos.aplicar_una_vez, 1), (ingenua, 2)])
def test_el_paso_repetido_tras_editar_no_edita_otra_vez(copia, aplicar, veces):
    intencion = efectos_dbos.ensayar(copia, EDITAR, copia.parent / BORRADOR)
    primera = aplicar(copia, EDITAR, intencion, USUARIO)
    segunda = aplicar(copia, EDITAR, intencion, USUARIO)  # DBOS repite el paso: murió antes de guardar su salida
    assert (copia / "README.md").read_text(encoding="utf-8").count(NOTA) == veces
    assert segunda == primera  # la misma observación: por ella no se nota; por el fichero, sí


def test_un_fichero_que_cambio_otro_no_se_toca(copia):
    intencion = efectos_dbos.ensayar(copia, EDITAR, copia.parent / BORRADOR)
    (copia / "README.md").write_text("otra cosa\n", encoding="utf-8")
    observacion = efectos_dbos.aplicar_una_vez(copia, EDITAR, intencion, USUARIO)
    assert observacion["is_error"] is True and "ha cambiado" in observacion["content"]
    assert (copia / "README.md").read_text(encoding="utf-8") == "otra cosa\n"


def test_con_la_huella_de_despues_da_la_observacion_esperada(copia):
    intencion = efectos_dbos.ensayar(copia, EDITAR, copia.parent / BORRADOR)
    atender(EDITAR, copia, USUARIO)  # el proceso que murió ya editó
    assert efectos_dbos.aplicar_una_vez(copia, EDITAR, intencion, USUARIO) == resultado("e1", intencion["esperado"])


def test_solo_va_en_dos_pasos_una_edicion_que_se_va_a_hacer():
    assert efectos_dbos.es_una_edicion(EDITAR, ["README.md"])
    assert not efectos_dbos.es_una_edicion(EDITAR, [])  # sin permiso: la contesta un paso normal, con su error
    assert not efectos_dbos.es_una_edicion(dict(EDITAR, input={"ruta": "README.md"}), ["README.md"])
    assert not efectos_dbos.es_una_edicion(dict(EDITAR, name="leer"), ["README.md"])
