"""Punto de control 05: un hijo estrechado a su encargo (`hijos.py`), el reparto por el buzón y la
integración por evidencia (`subagentes.py`), sobre el incidente de curso/material/datos/incidente/.

Los hijos corren con los guiones `hijo-logs`, `hijo-config`, `solo` y `eco` en el proceso
(`ModeloGuionizado`), sobre ficheros SQLite de verdad. Lo que depende del servidor por HTTP y la
comparación «¿compensa delegar?» están en tests/test_subagentes.py.
"""
import hashlib
import json
import re
from itertools import pairwise
from pathlib import Path

import pytest

import buzon
import herramientas
from curso.material.delegacion import GUIONES_DE_LOS_HIJOS
from curso.material.incidente import INCIDENTE, encargos_del_incidente
from encargos import encargo
from curso.ensayo.guionizado import ModeloGuionizado
from hijos import ModeloEstrecho, correr_hijo, leer_entrega
from padres import abrir_buzon
from subagentes import integrar, repartir, transporte_directo, transporte_que_repite, verificar

PADRE = "padre"


@pytest.fixture
def bd(tmp_path):
    bd = abrir_buzon(tmp_path / "buzon.db")
    yield bd
    bd.close()


def modelos_de_los_hijos():
    return {hijo: ModeloGuionizado(guion) for hijo, guion in GUIONES_DE_LOS_HIJOS.items()}


class Grabando:
    """Envuelve a un modelo y apunta los nombres de las herramientas que se le ofrecen cada vez."""

    def __init__(self, modelo):
        self.modelo, self.ofrecidas = modelo, []

    @property
    def usage(self):
        return getattr(self.modelo, "usage", None)

    def __call__(self, M, herramientas=()):
        self.ofrecidas.append([h["name"] for h in herramientas])
        return self.modelo(M, herramientas)


def huella(carpeta):
    """Un resumen del contenido de todos los ficheros de `carpeta`, para ver que nadie escribió."""
    h = hashlib.sha256()
    for p in sorted(Path(carpeta).rglob("*")):
        if p.is_file():
            h.update(p.relative_to(carpeta).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def observaciones(M):
    """[(llamada, resultado)] de M, cada llamada con la observación que le contestó."""
    pares = []
    for (rol, respuesta), (_, vueltas) in pairwise(M):
        if rol == "asistente":
            por_id = {r["tool_use_id"]: r for r in vueltas if isinstance(r, dict)}
            pares += [(b, por_id[b["id"]]) for b in respuesta if b.get("type") == "tool_use"]
    return pares


def linea(ruta_relativa, numero):
    """La línea `numero` (desde 1) de un fichero del incidente, leída aquí, sin el harness."""
    return (INCIDENTE / ruta_relativa).read_text(encoding="utf-8").split("\n")[numero - 1]


def repartir_(bd, transporte=None, hijos=None, modelos=None):
    return repartir(bd, PADRE, hijos or encargos_del_incidente(), modelos or modelos_de_los_hijos(),
                    INCIDENTE, transporte or transporte_directo)


# --- Un hijo estrechado -------------------------------------------------------------------------

def test_a_los_hijos_solo_se_les_ofrece_leer_y_buscar():
    for hijo, su_encargo in encargos_del_incidente().items():
        modelo = Grabando(ModeloGuionizado(GUIONES_DE_LOS_HIJOS[hijo]))
        corrida = correr_hijo(modelo, su_encargo, INCIDENTE)
        assert corrida["motivo"] == "fin" and corrida["problema"] is None
        assert modelo.ofrecidas and all(o == ["leer", "buscar"] for o in modelo.ofrecidas)
    solo_leer = encargo("Lee la configuración.", ["config/"], acciones=["leer"])
    modelo = Grabando(lambda M, herramientas: [{"type": "text", "text": "{}"}])
    correr_hijo(modelo, solo_leer, INCIDENTE)
    assert modelo.ofrecidas == [["leer"]]


def test_una_llamada_prohibida_vuelve_como_observacion_de_error():
    # En el guion: hijo-config pide ejecutar, que ni se le ofrece; el harness se lo niega.
    corrida = correr_hijo(ModeloGuionizado("hijo-config"), encargos_del_incidente()["config"], INCIDENTE)
    ejecuta = [(ll, r) for ll, r in observaciones(corrida["M"]) if ll["name"] == "ejecutar"]
    assert len(ejecuta) == 1 and ejecuta[0][1].get("is_error") and "permiso" in ejecuta[0][1]["content"]

    # Un modelo que intenta escribir y usar una herramienta inventada: dos errores, nada cambia.
    def desobediente(M, herramientas):
        if len(M) == 2:
            return [{"type": "tool_use", "id": "t1", "name": "editar",
                     "input": {"ruta": "config/db.toml", "antiguo": "5432", "nuevo": "5433"}},
                    {"type": "tool_use", "id": "t2", "name": "borrar", "input": {"ruta": "config/db.toml"}}]
        return [{"type": "text", "text": "{}"}]
    antes = huella(INCIDENTE)
    corrida = correr_hijo(desobediente, encargos_del_incidente()["config"], INCIDENTE)
    vueltas = [r for _, r in observaciones(corrida["M"])]
    assert len(vueltas) == 2 and all(r.get("is_error") for r in vueltas)
    assert "permiso" in vueltas[0]["content"] and "no hay ninguna herramienta" in vueltas[1]["content"]
    assert huella(INCIDENTE) == antes


def test_el_hijo_solo_ve_los_recursos_de_su_encargo():
    def curioso(M, herramientas):
        if len(M) == 2:
            return [{"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "logs/api.log"}},
                    {"type": "tool_use", "id": "t2", "name": "buscar", "input": {"patron": "543"}}]
        return [{"type": "text", "text": "{}"}]
    corrida = correr_hijo(curioso, encargos_del_incidente()["config"], INCIDENTE)
    (_, lectura), (_, busqueda) = observaciones(corrida["M"])
    assert lectura.get("is_error") and "no existe" in lectura["content"]
    assert busqueda["content"].startswith("config/db.toml:") and "logs/" not in busqueda["content"]
    assert "logs/api.log:" in herramientas.buscar(INCIDENTE, "543")  # en el proyecto, sí está


@pytest.mark.parametrize("recurso,dice", [("logs", "acabada en «/»"), ("README.md/", "acabada en «/»"),
                                          ("/etc/", "sale del proyecto"), ("no_existe/", "no está en el proyecto")])
def test_un_recurso_que_no_es_del_proyecto_se_rechaza_antes_de_correr(recurso, dice):
    llamadas = []
    with pytest.raises(ValueError, match=dice):
        correr_hijo(lambda M, h: llamadas.append(M) or [], encargo("Mira.", [recurso]), INCIDENTE)
    assert llamadas == []


def test_el_hijo_no_pasa_del_tope_de_su_encargo():
    corto = encargo("Investígalo todo.", ["README.md", "config/", "logs/"], tope_de_pasos=3)
    corrida = correr_hijo(ModeloGuionizado("solo"), corto, INCIDENTE, tope=50)
    assert corrida["motivo"] == "tope" and corrida["texto"] is None
    assert sum(rol == "asistente" for rol, _ in corrida["M"]) == 3
    assert "tope" in corrida["problema"]


@pytest.mark.parametrize("tope", [0, -1, 2.0, True, "3"])
def test_un_tope_que_no_es_un_entero_positivo_se_rechaza_antes_de_correr(tope):
    corto = encargo("Investígalo todo.", ["README.md", "config/", "logs/"], tope_de_pasos=3)
    with pytest.raises(ValueError, match="El tope debe ser un entero positivo"):
        correr_hijo(ModeloGuionizado("solo"), corto, INCIDENTE, tope=tope)


def test_el_modelo_estrecho_deja_ver_el_usage_del_que_envuelve():
    """La traza de correr.py lee `.usage` del modelo que tiene delante; delante de un hijo está
    el estrecho, que lo toma del suyo (y None si el suyo no lo tiene)."""
    class ConUsage:
        usage = {"input_tokens": 7, "output_tokens": 2}
    assert ModeloEstrecho(ConUsage(), ["leer"]).usage == ConUsage.usage
    assert ModeloEstrecho(lambda M, herramientas=(): [], ["leer"]).usage is None


def test_leer_entrega_acepta_json_con_valla_y_nunca_lanza():
    carga = {"hallazgos": [], "referencias": [], "incertidumbres": ["nada"]}
    assert leer_entrega("```json\n" + json.dumps(carga) + "\n```") == (carga, None)
    for texto in ["no es JSON", "[1, 2]", "", None, "{\"hallazgos\": "]:
        carga, problema = leer_entrega(texto)
        assert isinstance(carga, dict) and problema


# --- Fan-out: el buzón -----------------------------------------------------------------------------

@pytest.mark.parametrize("hijos", [["logs", "config"], {"logs": "mira los logs"}])
def test_repartir_sin_un_encargo_por_hijo_se_rechaza_sin_tocar_la_base(bd, hijos):
    antes = list(bd.iterdump())
    with pytest.raises(ValueError, match="Los hijos deben ser un dict"):
        repartir(bd, PADRE, hijos, modelos_de_los_hijos(), INCIDENTE)
    assert list(bd.iterdump()) == antes


def test_la_entrega_duplicada_se_admite_una_vez(bd):
    informes = repartir_(bd, transporte_que_repite("logs"))
    assert informes["logs"]["recepciones"] == ["recibida", "duplicada"]
    assert informes["config"]["recepciones"] == ["recibida"]
    mensajes = buzon.mensajes(bd, PADRE)
    assert [entrega for _, entrega, _ in mensajes] == [informes["logs"]["entrega"], informes["config"]["entrega"]]
    assert bd.execute("SELECT COUNT(*) FROM buzon").fetchone()[0] == 2
    # La variante ingenua: una identidad por intento y no por entrega. La repetición entra otra vez.
    buzon.recibir(bd, PADRE, "logs", "intento-2", informes["logs"]["carga"])
    buzon.admitir(bd, "intento-2")
    assert len(buzon.mensajes(bd, PADRE)) == 3


@pytest.mark.parametrize("orden", [("logs", "config"), ("config", "logs")])
def test_el_padre_solo_pasa_a_la_cola_con_los_dos_hijos_admitidos(bd, orden):
    vistos = []

    def mirando(hijo, enviar):  # el estado del padre justo antes de cada entrega
        vistos.append(buzon.estado(bd, PADRE)[0])
        return [enviar()]
    encargos = encargos_del_incidente()
    informes = repartir_(bd, mirando, hijos={h: encargos[h] for h in orden})
    primero, segundo = orden
    assert informes[primero]["disposicion"] == informes[segundo]["disposicion"] == "admitida"
    assert vistos == ["esperando", "esperando"]
    assert informes[primero]["estado_del_padre"] == "esperando"
    assert informes[segundo]["estado_del_padre"] == "en_cola"
    assert buzon.estado(bd, PADRE) == ("en_cola", 1)


def test_un_hijo_que_no_entrega_json_da_una_entrega_rechazada_y_el_padre_espera(bd):
    # `eco` repite el encargo: texto, no JSON.
    corrida = correr_hijo(ModeloGuionizado("eco"), encargos_del_incidente()["config"], INCIDENTE)
    assert corrida["motivo"] == "fin" and "no es JSON" in corrida["problema"]
    modelos = modelos_de_los_hijos()
    modelos["config"] = ModeloGuionizado("eco")
    informes = repartir_(bd, modelos=modelos)
    assert informes["logs"]["disposicion"] == "admitida"
    rechazo = informes["config"]
    assert rechazo["disposicion"] is None and rechazo["recepciones"] == [] and rechazo["rechazo"]
    assert bd.execute("SELECT hijo FROM buzon").fetchall() == [("logs",)]
    assert buzon.estado(bd, PADRE)[0] == "esperando"
    with pytest.raises(ValueError, match="en cola"):
        integrar(bd, PADRE, INCIDENTE)


def test_un_hijo_que_falla_no_tumba_al_padre(bd):
    def roto(M, herramientas):
        raise RuntimeError("el servidor se ha ido")
    modelos = modelos_de_los_hijos()
    modelos["logs"] = roto
    informes = repartir_(bd, modelos=modelos)
    assert "el servidor se ha ido" in informes["logs"]["rechazo"]
    assert informes["config"]["disposicion"] == "admitida"
    assert buzon.estado(bd, PADRE)[0] == "esperando"


def test_repartir_sin_el_modelo_de_un_hijo_no_crea_nada(bd):
    with pytest.raises(ValueError, match="config"):
        repartir_(bd, modelos={"logs": ModeloGuionizado("hijo-logs")})
    assert bd.execute("SELECT COUNT(*) FROM ejecuciones").fetchone()[0] == 0


# --- Fan-in: integrar por evidencia -------------------------------------------------------------------

@pytest.mark.contrato("5.4")
def test_integrar_se_queda_solo_con_lo_que_respalda_la_evidencia(bd):
    repartir_(bd, transporte_que_repite("logs"))
    integrado = integrar(bd, PADRE, INCIDENTE)
    entregados = [h for _, _, carga in buzon.mensajes(bd, PADRE) for h in carga["hallazgos"]]
    assert len(integrado["verificados"]) + len(integrado["descartados"]) == len(entregados)
    for fila in integrado["verificados"]:  # comprobado aquí, leyendo el fichero sin el harness
        ruta, numero = fila["referencia"].rsplit(":", 1)
        for cita in re.findall(r"«([^«»]+)»", fila["hallazgo"]):
            assert cita in linea(ruta, int(numero))
    # El hallazgo mal citado de hijo-config: entregado y admitido, pero la línea no lo dice.
    (descartado,) = integrado["descartados"]
    assert "max_conexiones = 20" in descartado["hallazgo"] and descartado["entrega"] == f"{PADRE}/config/1"
    ruta, numero = descartado["referencia"].rsplit(":", 1)
    assert "max_conexiones = 20" not in linea(ruta, int(numero))
    assert {f["entrega"] for f in integrado["verificados"]} == {f"{PADRE}/logs/1", f"{PADRE}/config/1"}
    assert set(integrado) == {"verificados", "descartados", "incertidumbres"}  # concluir es del problema
    assert integrar(bd, PADRE, INCIDENTE) == integrado  # integrar no cambia nada


# El 5.4 pide «un texto con el porqué», no qué palabras: el test mira que lo haya, no cuál es.
@pytest.mark.contrato("5.4")
@pytest.mark.parametrize("hallazgo,referencia,por_que", [
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml:1", "la línea no lo dice"),
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml:999", "el fichero no tiene esa línea"),
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml", "la referencia no dice la línea"),
    ("Escucha en el 5432: «puerto = 5432»", "../fuera.toml:1", "sale de la copia"),
    ("Escucha en el 5432: «puerto = 5432»", "config/otra.toml:6", "el fichero no existe"),
    ("Escucha en el 5432.", "config/db.toml:6", "no cita nada"),
    ("Escucha en el 5432: «puerto = 5432»", None, "sin referencia"),
])
def test_un_hallazgo_sin_evidencia_que_lo_respalde_se_descarta(hallazgo, referencia, por_que):
    carga = {"hallazgos": [hallazgo], "referencias": [referencia] if referencia else [], "incertidumbres": []}
    verificados, descartados = verificar(carga, INCIDENTE)
    assert verificados == [] and isinstance(descartados[0]["motivo"], str), por_que
    assert descartados[0]["motivo"].strip(), por_que
    bueno = dict(carga, referencias=["config/db.toml:6"])
    if "«" in hallazgo:
        assert verificar(bueno, INCIDENTE)[0] == [{"hallazgo": hallazgo, "referencia": "config/db.toml:6"}]


@pytest.mark.contrato("5.4")
def test_dos_fuentes_que_repiten_lo_mismo_no_lo_hacen_mas_cierto():
    """Sin votar: el mismo hallazgo falso dos veces sigue sin respaldo; uno cierto basta una vez."""
    falso = "La base escucha en el 5433: «puerto = 5433»"
    cierto = "La base escucha en el 5432: «puerto = 5432»"
    carga = {"hallazgos": [falso, falso, cierto], "referencias": ["config/db.toml:6"] * 3, "incertidumbres": []}
    verificados, descartados = verificar(carga, INCIDENTE)
    assert [v["hallazgo"] for v in verificados] == [cierto] and len(descartados) == 2
