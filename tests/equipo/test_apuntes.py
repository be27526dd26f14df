"""El modelo que apunta cada petición (`curso.material.apuntes.Apuntador`), con un modelo de mentira."""
import pytest

from curso.material.apuntes import Apuntador

INSTRUCCION = "Resume la conversación."


class ModeloDeMentira:
    """Contesta un texto con el número de la petición; su `usage` cambia en cada una, y la
    petición n.º `falla_en` lanza una excepción, como una que no cabe en la ventana."""

    def __init__(self, falla_en=None):
        self.n, self.falla_en, self.usage = 0, falla_en, {}

    def __call__(self, M, herramientas=()):
        self.n += 1
        if self.n == self.falla_en:
            raise RuntimeError("no cabe")
        self.usage = {"input_tokens": 10 * self.n, "cache_read_input_tokens": self.n, "output_tokens": 3}
        return [{"type": "text", "text": f"respuesta {self.n}"}]


def test_apunta_la_m_enviada_la_respuesta_y_el_usage_de_cada_peticion():
    apuntador = Apuntador(ModeloDeMentira())
    M = [("usuario", "hola")]
    primera = apuntador(M)
    M.append(("asistente", primera))
    M.append(("usuario", [{"type": "text", "text": "sigue"}]))
    apuntador(M)
    M[-1][1].append({"type": "text", "text": "cambiado después"})  # el bucle sigue cambiando su M
    primero, segundo = apuntador.peticiones
    assert primero["M"] == [("usuario", "hola")]
    assert segundo["M"][-1] == ("usuario", [{"type": "text", "text": "sigue"}])
    assert primero["respuesta"] == primera
    assert apuntador.usos == [{"input_tokens": 10, "cache_read_input_tokens": 1, "output_tokens": 3},
                              {"input_tokens": 20, "cache_read_input_tokens": 2, "output_tokens": 3}]
    assert apuntador.usage is apuntador.modelo.usage


def test_el_usage_apuntado_es_una_copia():
    modelo = ModeloDeMentira()
    apuntador = Apuntador(modelo)
    apuntador([("usuario", "hola")])
    modelo.usage["input_tokens"] = 999
    assert apuntador.usos[0]["input_tokens"] == 10


def test_separa_las_peticiones_de_resumen_de_las_de_turno():
    apuntador = Apuntador(ModeloDeMentira(), instruccion=INSTRUCCION)
    apuntador([("usuario", "hola")])
    apuntador([("usuario", "hola"), ("asistente", []), ("usuario", INSTRUCCION)])
    apuntador([("usuario", "resumen"), ("usuario", "sigue")])
    assert [p["resumen"] for p in apuntador.peticiones] == [False, True, False]
    assert [p["respuesta"][0]["text"] for p in apuntador.turnos()] == ["respuesta 1", "respuesta 3"]
    assert [p["respuesta"][0]["text"] for p in apuntador.resumenes()] == ["respuesta 2"]


def test_sin_instruccion_ninguna_peticion_es_de_resumen():
    apuntador = Apuntador(ModeloDeMentira())
    apuntador([("usuario", INSTRUCCION)])
    assert apuntador.resumenes() == [] and len(apuntador.turnos()) == 1


def test_una_peticion_que_falla_no_deja_apunte_y_su_error_sigue():
    apuntador = Apuntador(ModeloDeMentira(falla_en=2))
    apuntador([("usuario", "hola")])
    with pytest.raises(RuntimeError, match="no cabe"):
        apuntador([("usuario", "hola"), ("usuario", "otra")])
    assert len(apuntador.peticiones) == 1
