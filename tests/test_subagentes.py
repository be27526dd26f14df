"""Los subagentes de la lección 05: hijos estrechados, entrega por el buzón e integración por evidencia.

Corre el incidente de curso/datos/incidente/ (una API que conecta con db:5433 y una base que
escucha en el 5432) con los guiones `hijo-logs`, `hijo-config` y `solo`, sobre ficheros SQLite de
verdad, en el proceso (`ModeloGuionizado`) y por HTTP (`ServidorEnsayo` y `ModeloAPI`).

Los módulos del arnés se llaman como los de los demás puntos de control (`bucle`, `entorno`...):
el fixture `arnes` copia a una carpeta temporal los de la lección 05 y los de antes (de
checkpoints/05_el_buzon/ si ya están allí; si no, de la carpeta provisional del autor; y lo que
no cambia, de checkpoints/01_el_bucle/), la pone la primera en sys.path solo mientras duran estos
tests y después quita esos módulos de sys.modules.
"""
import hashlib
import importlib
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from curso import delegacion
from curso.ensayo.motor import segundos_modelados
from curso.ensayo.servidor import ServidorEnsayo
from curso.rutas import PUNTOS

INCIDENTE = delegacion.INCIDENTE
PROVISIONAL = Path("/tmp/autor/l05/sin_marcas")  # lo del autor, hasta que esté en el punto de control 05
FUENTES = [PUNTOS / "05_el_buzon", PROVISIONAL, PUNTOS / "01_el_bucle"]  # la primera que lo tenga
MODULOS = ["agente", "api", "bucle", "buzon", "compactar", "correr", "entorno", "guionizado",
           "herramientas", "permisos", "resumenes", "subagentes"]
OPCIONALES = {"compactar", "correr"}  # si el punto de control los trae, van también
PADRE = "padre"


@pytest.fixture(scope="module")
def arnes(tmp_path_factory):
    """{nombre: módulo} del arnés de la lección 05, importado desde una copia en una carpeta temporal."""
    carpeta = tmp_path_factory.mktemp("arnes")
    for nombre in MODULOS:
        origen = next((f / f"{nombre}.py" for f in FUENTES if (f / f"{nombre}.py").is_file()), None)
        if origen is None and nombre not in OPCIONALES:
            pytest.skip(f"falta {nombre}.py en {', '.join(map(str, FUENTES))}")
        if origen is not None:
            shutil.copy(origen, carpeta / f"{nombre}.py")
    guardados = {n: sys.modules.pop(n) for n in MODULOS if n in sys.modules}
    sys.path.insert(0, str(carpeta))
    try:
        yield {n: importlib.import_module(n) for n in MODULOS if (carpeta / f"{n}.py").exists()}
    finally:
        sys.path.remove(str(carpeta))
        for n in MODULOS:
            sys.modules.pop(n, None)
        sys.modules.update(guardados)


@pytest.fixture
def sub(arnes):
    return arnes["subagentes"]


@pytest.fixture
def bd(arnes, tmp_path):
    bd = arnes["buzon"].abrir_buzon(tmp_path / "buzon.db")
    yield bd
    bd.close()


def guionizado(arnes, guion):
    return arnes["guionizado"].ModeloGuionizado(guion)


def modelos_de_los_hijos(arnes, nuevo=None):
    nuevo = nuevo or (lambda guion: guionizado(arnes, guion))
    return {hijo: nuevo(guion) for hijo, guion in delegacion.GUIONES_DE_LOS_HIJOS.items()}


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
    for (rol, respuesta), (_, vueltas) in zip(M, M[1:]):
        if rol == "asistente":
            por_id = {r["tool_use_id"]: r for r in vueltas if isinstance(r, dict)}
            pares += [(b, por_id[b["id"]]) for b in respuesta if b.get("type") == "tool_use"]
    return pares


def linea(ruta_relativa, numero):
    """La línea `numero` (desde 1) de un fichero del incidente, leída aquí, sin el arnés."""
    return (INCIDENTE / ruta_relativa).read_text(encoding="utf-8").split("\n")[numero - 1]


def repartir(arnes, bd, transporte=None, hijos=None, modelos=None):
    sub = arnes["subagentes"]
    return sub.repartir(bd, PADRE, hijos or sub.encargos_del_incidente(),
                        modelos or modelos_de_los_hijos(arnes), INCIDENTE,
                        transporte or sub.transporte_directo)


# --- buscar ------------------------------------------------------------------------------------

def test_buscar_da_fichero_linea_y_texto_de_cada_coincidencia(arnes):
    patron = r"5433|puerto = \d+"
    esperado = []
    for p in sorted(INCIDENTE.rglob("*"), key=lambda p: p.relative_to(INCIDENTE).as_posix()):
        if p.is_file():
            for n, texto in enumerate(p.read_text(encoding="utf-8").split("\n"), 1):
                if re.search(patron, texto):
                    esperado.append(f"{p.relative_to(INCIDENTE).as_posix()}:{n}: {texto}")
    assert len(esperado) > 3
    assert arnes["herramientas"].buscar(INCIDENTE, patron).split("\n") == esperado
    solo_config = arnes["herramientas"].buscar(INCIDENTE, patron, "config/db.toml").split("\n")
    assert solo_config == [e for e in esperado if e.startswith("config/db.toml:")]
    assert "ninguna línea" in arnes["herramientas"].buscar(INCIDENTE, "no aparece en ningún sitio")


def test_buscar_corta_con_un_aviso_lo_que_pasa_del_limite(arnes, tmp_path):
    h = arnes["herramientas"]
    sobran = 7
    (tmp_path / "largo.log").write_text("".join(f"fallo {i}\n" for i in range(h.LIMITE_COINCIDENCIAS + sobran))
                                        + "fallo " + "x" * (2 * h.LARGO_DE_COINCIDENCIA) + "\n", encoding="utf-8")
    salida = h.buscar(tmp_path, "fallo").split("\n")
    assert len(salida) == h.LIMITE_COINCIDENCIAS + 1
    assert salida[-1].startswith("[…") and str(sobran + 1) in salida[-1]
    assert all(len(l) < h.LARGO_DE_COINCIDENCIA + 40 for l in h.buscar(tmp_path, "xxx").split("\n"))


@pytest.mark.parametrize("patron,ruta,dice", [
    ("puerto", "../", "sale de la copia"),
    ("puerto", "/etc", "sale de la copia"),
    ("puerto", "no_existe", "no existe"),
    ("(puerto", ".", "no es una expresión regular válida"),
])
def test_buscar_rechaza_rutas_de_fuera_y_patrones_rotos(arnes, patron, ruta, dice):
    h = arnes["herramientas"]
    with pytest.raises(h.ErrorDeHerramienta, match=dice):
        h.buscar(INCIDENTE, patron, ruta)


def test_buscar_no_sigue_un_enlace_que_sale_de_la_copia(arnes, tmp_path):
    fuera = tmp_path / "fuera.txt"
    fuera.write_text("secreto = 1\n", encoding="utf-8")
    copia = tmp_path / "copia"
    copia.mkdir()
    (copia / "dentro.txt").write_text("secreto = 0\n", encoding="utf-8")
    (copia / "enlace.txt").symlink_to(fuera)
    assert arnes["herramientas"].buscar(copia, "secreto") == "dentro.txt:1: secreto = 0"


def test_buscar_no_pide_permiso_y_editar_si(arnes, monkeypatch):
    permisos, entorno = arnes["permisos"], arnes["entorno"]
    busca = entorno.llamada("b1", "buscar", patron="5432", ruta="config")
    edita = entorno.llamada("e1", "editar", ruta="README.md", antiguo="tienda", nuevo="x")
    assert not permisos.atender(busca, INCIDENTE, None).get("is_error")
    assert "permiso" in permisos.atender(edita, INCIDENTE, None)["content"]
    # La variante ingenua: buscar fuera de SIN_PERMISO. Sin usuario, un hijo no podría buscar.
    monkeypatch.setattr(permisos, "SIN_PERMISO", {"leer"})
    assert permisos.atender(busca, INCIDENTE, None).get("is_error")


def test_el_agente_del_recetario_sigue_viendo_las_mismas_herramientas(arnes):
    """buscar entra en el catálogo, no en lo que el bucle ofrece: las peticiones del recetario
    ocupan lo mismo que en la lección 01, y sus cifras calibradas siguen valiendo."""
    spec = importlib.util.spec_from_file_location("entorno_01", PUNTOS / "01_el_bucle" / "entorno.py")
    entorno_01 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entorno_01)
    assert arnes["entorno"].HERRAMIENTAS == entorno_01.HERRAMIENTAS
    assert [h["name"] for h in arnes["entorno"].CATALOGO] == ["leer", "editar", "ejecutar", "buscar"]


# --- Un hijo estrechado -------------------------------------------------------------------------

def test_a_los_hijos_solo_se_les_ofrece_leer_y_buscar(arnes, sub):
    for hijo, encargo in sub.encargos_del_incidente().items():
        modelo = Grabando(guionizado(arnes, delegacion.GUIONES_DE_LOS_HIJOS[hijo]))
        corrida = sub.correr_hijo(modelo, encargo, INCIDENTE)
        assert corrida["motivo"] == "fin" and corrida["problema"] is None
        assert modelo.ofrecidas and all(o == ["leer", "buscar"] for o in modelo.ofrecidas)
    solo_leer = sub.encargo("Lee la configuración.", ["config/"], acciones=["leer"])
    modelo = Grabando(lambda M, herramientas: [{"type": "text", "text": "{}"}])
    sub.correr_hijo(modelo, solo_leer, INCIDENTE)
    assert modelo.ofrecidas == [["leer"]]


def test_una_llamada_prohibida_vuelve_como_observacion_de_error(arnes, sub):
    # En el guion: hijo-config pide ejecutar, que ni se le ofrece; el arnés se lo niega.
    corrida = sub.correr_hijo(guionizado(arnes, "hijo-config"), sub.encargos_del_incidente()["config"], INCIDENTE)
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
    corrida = sub.correr_hijo(desobediente, sub.encargos_del_incidente()["config"], INCIDENTE)
    vueltas = [r for _, r in observaciones(corrida["M"])]
    assert len(vueltas) == 2 and all(r.get("is_error") for r in vueltas)
    assert "permiso" in vueltas[0]["content"] and "no hay ninguna herramienta" in vueltas[1]["content"]
    assert huella(INCIDENTE) == antes


def test_el_hijo_solo_ve_los_recursos_de_su_encargo(arnes, sub):
    def curioso(M, herramientas):
        if len(M) == 2:
            return [{"type": "tool_use", "id": "t1", "name": "leer", "input": {"ruta": "logs/api.log"}},
                    {"type": "tool_use", "id": "t2", "name": "buscar", "input": {"patron": "543"}}]
        return [{"type": "text", "text": "{}"}]
    corrida = sub.correr_hijo(curioso, sub.encargos_del_incidente()["config"], INCIDENTE)
    (_, lectura), (_, busqueda) = observaciones(corrida["M"])
    assert lectura.get("is_error") and "no existe" in lectura["content"]
    assert busqueda["content"].startswith("config/db.toml:") and "logs/" not in busqueda["content"]
    assert "logs/api.log:" in arnes["herramientas"].buscar(INCIDENTE, "543")  # en el proyecto, sí está


@pytest.mark.parametrize("recurso,dice", [("logs", "acabada en «/»"), ("README.md/", "acabada en «/»"),
                                          ("/etc/", "sale del proyecto"), ("no_existe/", "no está en el proyecto")])
def test_un_recurso_que_no_es_del_proyecto_se_rechaza_antes_de_correr(sub, recurso, dice):
    llamadas = []
    with pytest.raises(ValueError, match=dice):
        sub.correr_hijo(lambda M, h: llamadas.append(M) or [], sub.encargo("Mira.", [recurso]), INCIDENTE)
    assert llamadas == []


def test_el_hijo_no_pasa_del_tope_de_su_encargo(arnes, sub):
    corto = sub.encargo("Investígalo todo.", ["README.md", "config/", "logs/"], tope_de_pasos=3)
    corrida = sub.correr_hijo(guionizado(arnes, "solo"), corto, INCIDENTE, tope=50)
    assert corrida["motivo"] == "tope" and corrida["texto"] is None
    assert sum(rol == "asistente" for rol, _ in corrida["M"]) == 3
    assert "tope" in corrida["problema"]


def test_leer_entrega_acepta_json_con_valla_y_nunca_lanza(sub):
    carga = {"hallazgos": [], "referencias": [], "incertidumbres": ["nada"]}
    assert sub.leer_entrega("```json\n" + json.dumps(carga) + "\n```") == (carga, None)
    for texto in ["no es JSON", "[1, 2]", "", None, "{\"hallazgos\": "]:
        carga, problema = sub.leer_entrega(texto)
        assert isinstance(carga, dict) and problema


# --- Fan-out: el buzón -----------------------------------------------------------------------------

def test_la_entrega_duplicada_se_admite_una_vez(arnes, sub, bd):
    informes = repartir(arnes, bd, sub.transporte_que_repite("logs"))
    assert informes["logs"]["recepciones"] == ["recibida", "duplicada"]
    assert informes["config"]["recepciones"] == ["recibida"]
    mensajes = arnes["buzon"].mensajes(bd, PADRE)
    assert [entrega for _, entrega, _ in mensajes] == [informes["logs"]["entrega"], informes["config"]["entrega"]]
    assert bd.execute("SELECT COUNT(*) FROM buzon").fetchone()[0] == 2
    # La variante ingenua: una identidad por intento y no por entrega. La repetición entra otra vez.
    arnes["buzon"].recibir(bd, PADRE, "logs", "intento-2", informes["logs"]["carga"])
    arnes["buzon"].admitir(bd, "intento-2")
    assert len(arnes["buzon"].mensajes(bd, PADRE)) == 3


@pytest.mark.parametrize("orden", [("logs", "config"), ("config", "logs")])
def test_el_padre_solo_pasa_a_la_cola_con_los_dos_hijos_admitidos(arnes, sub, bd, orden):
    vistos = []

    def mirando(hijo, enviar):  # el estado del padre justo antes de cada entrega
        vistos.append(arnes["buzon"].estado(bd, PADRE)[0])
        return [enviar()]
    encargos = sub.encargos_del_incidente()
    informes = repartir(arnes, bd, mirando, hijos={h: encargos[h] for h in orden})
    primero, segundo = orden
    assert informes[primero]["disposicion"] == informes[segundo]["disposicion"] == "admitida"
    assert vistos == ["esperando", "esperando"]
    assert informes[primero]["estado_del_padre"] == "esperando"
    assert informes[segundo]["estado_del_padre"] == "en_cola"
    assert arnes["buzon"].estado(bd, PADRE) == ("en_cola", 1)


def test_un_hijo_que_no_entrega_json_da_una_entrega_rechazada_y_el_padre_espera(arnes, sub, bd):
    # `eco` repite el encargo: texto, no JSON.
    corrida = sub.correr_hijo(guionizado(arnes, "eco"), sub.encargos_del_incidente()["config"], INCIDENTE)
    assert corrida["motivo"] == "fin" and "no es JSON" in corrida["problema"]
    modelos = modelos_de_los_hijos(arnes)
    modelos["config"] = guionizado(arnes, "eco")
    informes = repartir(arnes, bd, modelos=modelos)
    assert informes["logs"]["disposicion"] == "admitida"
    rechazo = informes["config"]
    assert rechazo["disposicion"] is None and rechazo["recepciones"] == [] and rechazo["rechazo"]
    assert bd.execute("SELECT hijo FROM buzon").fetchall() == [("logs",)]
    assert arnes["buzon"].estado(bd, PADRE)[0] == "esperando"
    with pytest.raises(ValueError, match="en cola"):
        sub.integrar(bd, PADRE, INCIDENTE)


def test_un_hijo_que_falla_no_tumba_al_padre(arnes, sub, bd):
    def roto(M, herramientas):
        raise RuntimeError("el servidor se ha ido")
    modelos = modelos_de_los_hijos(arnes)
    modelos["logs"] = roto
    informes = repartir(arnes, bd, modelos=modelos)
    assert "el servidor se ha ido" in informes["logs"]["rechazo"]
    assert informes["config"]["disposicion"] == "admitida"
    assert arnes["buzon"].estado(bd, PADRE)[0] == "esperando"


def test_repartir_sin_el_modelo_de_un_hijo_no_crea_nada(arnes, sub, bd):
    with pytest.raises(ValueError, match="config"):
        repartir(arnes, bd, modelos={"logs": guionizado(arnes, "hijo-logs")})
    assert bd.execute("SELECT COUNT(*) FROM ejecuciones").fetchone()[0] == 0


# --- Fan-in: integrar por evidencia -------------------------------------------------------------------

def test_integrar_se_queda_solo_con_lo_que_respalda_la_evidencia(arnes, sub, bd):
    repartir(arnes, bd, sub.transporte_que_repite("logs"))
    integrado = sub.integrar(bd, PADRE, INCIDENTE)
    entregados = [h for _, _, carga in arnes["buzon"].mensajes(bd, PADRE) for h in carga["hallazgos"]]
    assert len(integrado["verificados"]) + len(integrado["descartados"]) == len(entregados)
    for fila in integrado["verificados"]:  # comprobado aquí, leyendo el fichero sin el arnés
        ruta, numero = fila["referencia"].rsplit(":", 1)
        for cita in re.findall(r"«([^«»]+)»", fila["hallazgo"]):
            assert cita in linea(ruta, int(numero))
    # El hallazgo mal citado de hijo-config: entregado y admitido, pero la línea no lo dice.
    (descartado,) = integrado["descartados"]
    assert "max_conexiones = 20" in descartado["hallazgo"] and descartado["entrega"] == f"{PADRE}/config/1"
    ruta, numero = descartado["referencia"].rsplit(":", 1)
    assert "max_conexiones = 20" not in linea(ruta, int(numero))
    assert {f["entrega"] for f in integrado["verificados"]} == {f"{PADRE}/logs/1", f"{PADRE}/config/1"}
    assert "5433" in integrado["conclusion"] and "5432" in integrado["conclusion"]
    assert "logs/api.log:" in integrado["conclusion"] and "config/db.toml:" in integrado["conclusion"]
    assert sub.integrar(bd, PADRE, INCIDENTE) == integrado  # integrar no cambia nada


@pytest.mark.parametrize("hallazgo,referencia,dice", [
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml:1", "no dice"),
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml:999", "solo tiene"),
    ("Escucha en el 5432: «puerto = 5432»", "config/db.toml", "no dice la línea"),
    ("Escucha en el 5432: «puerto = 5432»", "../fuera.toml:1", "sale de la copia"),
    ("Escucha en el 5432: «puerto = 5432»", "config/otra.toml:6", "no existe"),
    ("Escucha en el 5432.", "config/db.toml:6", "no cita"),
    ("Escucha en el 5432: «puerto = 5432»", None, "no tiene referencia"),
])
def test_un_hallazgo_sin_evidencia_que_lo_respalde_se_descarta(sub, hallazgo, referencia, dice):
    carga = {"hallazgos": [hallazgo], "referencias": [referencia] if referencia else [], "incertidumbres": []}
    verificados, descartados = sub.verificar(carga, INCIDENTE)
    assert verificados == [] and dice in descartados[0]["motivo"]
    bueno = dict(carga, referencias=["config/db.toml:6"])
    if "«" in hallazgo:
        assert sub.verificar(bueno, INCIDENTE)[0] == [{"hallazgo": hallazgo, "referencia": "config/db.toml:6"}]


def test_dos_fuentes_que_repiten_lo_mismo_no_lo_hacen_mas_cierto(sub):
    """Sin votar: el mismo hallazgo falso dos veces sigue sin respaldo; uno cierto basta una vez."""
    falso = "La base escucha en el 5433: «puerto = 5433»"
    cierto = "La base escucha en el 5432: «puerto = 5432»"
    carga = {"hallazgos": [falso, falso, cierto], "referencias": ["config/db.toml:6"] * 3, "incertidumbres": []}
    verificados, descartados = sub.verificar(carga, INCIDENTE)
    assert [v["hallazgo"] for v in verificados] == [cierto] and len(descartados) == 2


def test_la_conclusion_sale_solo_de_lo_comprobado(sub):
    cierto = {"hallazgo": "La base escucha en el 5432: «puerto = 5432»", "referencia": "config/db.toml:6"}
    falso = {"hallazgo": "La API conecta con el 5433: «puerto = 5433»", "referencia": "config/db.toml:6"}
    carga = {"hallazgos": [cierto["hallazgo"], falso["hallazgo"]], "referencias": ["config/db.toml:6"] * 2,
             "incertidumbres": []}
    verificados, _ = sub.verificar(carga, INCIDENTE)
    assert "5432" in sub.concluir(verificados) and "5433" not in sub.concluir(verificados)
    assert "5433" in sub.concluir([cierto, falso])  # la variante ingenua: concluir sin comprobar
    assert "falta evidencia" in sub.concluir([])


# --- Por HTTP, y la comparación --------------------------------------------------------------------------

def test_por_http_da_lo_mismo_que_en_el_proceso(arnes, sub, tmp_path):
    resultados = {}
    with ServidorEnsayo(0) as servidor:
        nuevos = {"local": lambda g: guionizado(arnes, g),
                  "http": lambda g: arnes["api"].ModeloAPI("guion:" + g, url=servidor.url)}
        for via, nuevo in nuevos.items():
            bd = arnes["buzon"].abrir_buzon(tmp_path / f"{via}.db")
            try:
                repartir(arnes, bd, sub.transporte_que_repite("config"), modelos=modelos_de_los_hijos(arnes, nuevo))
                resultados[via] = (arnes["buzon"].mensajes(bd, PADRE), sub.integrar(bd, PADRE, INCIDENTE))
            finally:
                bd.close()
    assert resultados["http"] == resultados["local"]
    assert len(resultados["local"][1]["verificados"]) >= 2


def test_comparar_delegacion_da_cifras_deterministas_que_cuadran_con_el_usage(arnes, sub, tmp_path):
    creados = []

    def nuevo(guion):
        creados.append((guion, guionizado(arnes, guion)))
        return creados[-1][1]
    una = delegacion.comparar_delegacion(sub, nuevo, carpeta=tmp_path)
    assert delegacion.comparar_delegacion(sub, carpeta=tmp_path) == una
    assert list(tmp_path.iterdir()) == []  # la base temporal del padre no se queda
    solo, delegado = una["solo"], una["delegado"]
    # Los turnos son los mensajes del asistente de una ejecución igual, contados aquí.
    corrida = sub.correr_hijo(guionizado(arnes, "solo"), sub.encargo_en_solitario(), INCIDENTE)
    assert solo["turnos"] == sum(rol == "asistente" for rol, _ in corrida["M"])
    hijos = delegado["hijos"]
    for columna in ("turnos", "entrada", "calculados", "salida"):
        assert delegado[columna] == sum(c[columna] for c in hijos.values())
    assert delegado["mayor"] == max(c["mayor"] for c in hijos.values())
    assert delegado["segundos"] == pytest.approx(sum(c["segundos"] for c in hijos.values()), abs=0.02)
    assert delegado["segundos_en_paralelo"] == max(c["segundos"] for c in hijos.values())
    # El último usage de cada modelo, pasado por el modelo de tiempo, está en sus segundos.
    for guion, modelo in creados:
        u = modelo.usage
        ultimo = segundos_modelados(u["input_tokens"], u["input_tokens"] + u["cache_read_input_tokens"],
                                    u["output_tokens"])
        fila = solo if guion == "solo" else hijos[{g: h for h, g in delegacion.GUIONES_DE_LOS_HIJOS.items()}[guion]]
        assert 0 < ultimo <= fila["segundos"]
        # Sin compactar, cada petición lleva dentro la anterior: la mayor es la última.
        assert fila["mayor"] == u["input_tokens"] + u["cache_read_input_tokens"]
    assert solo["descartados"] == 0 and delegado["descartados"] == 1
    for lado in (solo, delegado):
        assert "5433" in lado["conclusion"] and "5432" in lado["conclusion"]
    tabla = delegacion.tabla(una)
    assert f"{delegado['segundos_en_paralelo']:.2f}" in tabla and str(solo["entrada"]) in tabla
    assert str(solo["mayor"]) in tabla.splitlines()[1] and "mayor" in tabla.splitlines()[0]
