"""Los subagentes de la lección 05 con el equipo del curso: `buscar` sobre el incidente, la
conclusión del incidente (`curso.material.incidente`), lo mismo por HTTP que en el proceso y la comparación
«¿compensa delegar?» (`curso.material.delegacion`).

Corre el incidente de curso/material/datos/incidente/ (una API que conecta con db:5433 y una base que
escucha en el 5432) con los guiones `hijo-logs`, `hijo-config` y `solo`, sobre ficheros SQLite de
verdad, en el proceso (`ModeloGuionizado`) y por HTTP (`ServidorEnsayo` y `ModeloAPI`). Lo que es
solo del harness (un hijo estrechado, el reparto, verificar) lo prueba el punto de control 05, en
checkpoints/05_el_buzon/tests/test_subagentes.py.

Los módulos del harness se llaman como los de los demás puntos de control (`bucle`, `entorno`...):
el fixture `arnes` copia a una carpeta temporal los de la lección 05 y los de antes (de
checkpoints/05_el_buzon/ si ya están allí; si no, de la carpeta provisional del autor; y lo que
no cambia, de checkpoints/01_el_bucle/), la pone la primera en sys.path solo mientras duran estos
tests y después quita esos módulos de sys.modules.
"""
import importlib
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

from curso.material import delegacion
from curso.ensayo.guionizado import ModeloGuionizado
from curso.ensayo.motor import segundos_modelados
from curso.ensayo.servidor import ServidorEnsayo
from curso.material.incidente import concluir, encargo_en_solitario, encargos_del_incidente
from curso.rutas import PUNTOS

INCIDENTE = delegacion.INCIDENTE  # el de curso.material.incidente
PROVISIONAL = Path("/tmp/autor/l05/sin_marcas")  # lo del autor, hasta que esté en el punto de control 05
FUENTES = [PUNTOS / "05_el_buzon", PROVISIONAL, PUNTOS / "01_el_bucle"]  # la primera que lo tenga
MODULOS = ["agente", "api", "bucle", "buzon", "compactar", "correr", "encargos", "entorno", "exigencias",
           "herramientas", "hijos", "historial", "limpiar", "padres", "permisos", "procesos",
           "resumenes", "subagentes", "validacion"]
OPCIONALES = {"compactar", "correr", "limpiar"}  # si el punto de control los trae, van también
PADRE = "padre"


@pytest.fixture(scope="module")
def arnes(tmp_path_factory):
    """{nombre: módulo} del harness de la lección 05, importado desde una copia en una carpeta temporal."""
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
    return ModeloGuionizado(guion, api=arnes["api"])


def modelos_de_los_hijos(arnes, nuevo=None):
    nuevo = nuevo or (lambda guion: guionizado(arnes, guion))
    return {hijo: nuevo(guion) for hijo, guion in delegacion.GUIONES_DE_LOS_HIJOS.items()}



def repartir(arnes, bd, transporte=None, hijos=None, modelos=None):
    sub = arnes["subagentes"]
    return sub.repartir(bd, PADRE, hijos or encargos_del_incidente(arnes["encargos"]),
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
    ocupan lo mismo que antes de la lección 05 (con el leer por trozos de la 03), y sus cifras
    calibradas siguen valiendo."""
    spec = importlib.util.spec_from_file_location("entorno_04", PUNTOS / "04_resumenes_en_sqlite" / "entorno.py")
    entorno_04 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entorno_04)
    assert arnes["entorno"].HERRAMIENTAS == entorno_04.HERRAMIENTAS
    assert [h["name"] for h in arnes["entorno"].CATALOGO] == ["leer", "editar", "ejecutar", "buscar"]


# --- La conclusión del incidente (curso.material.incidente) ----------------------------------------------

def test_la_conclusion_sale_solo_de_lo_comprobado(sub):
    cierto = {"hallazgo": "La base escucha en el 5432: «puerto = 5432»", "referencia": "config/db.toml:6"}
    falso = {"hallazgo": "La API conecta con el 5433: «puerto = 5433»", "referencia": "config/db.toml:6"}
    carga = {"hallazgos": [cierto["hallazgo"], falso["hallazgo"]], "referencias": ["config/db.toml:6"] * 2,
             "incertidumbres": []}
    verificados, _ = sub.verificar(carga, INCIDENTE)
    assert "5432" in concluir(verificados) and "5433" not in concluir(verificados)
    assert "5433" in concluir([cierto, falso])  # la variante ingenua: concluir sin comprobar
    assert "falta evidencia" in concluir([])
    mismo = {"hallazgo": "Y la configuración lo repite: «puerto = 5432»", "referencia": "config/db.toml:6"}
    assert "el mismo puerto, 5432" in concluir([cierto, mismo])


def test_la_conclusion_del_incidente_cita_los_dos_puertos_y_de_donde_salen(arnes, sub, bd):
    repartir(arnes, bd, sub.transporte_que_repite("logs"))
    conclusion = concluir(sub.integrar(bd, PADRE, INCIDENTE)["verificados"])
    assert "5433" in conclusion and "5432" in conclusion
    assert "logs/api.log:" in conclusion and "config/db.toml:" in conclusion


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
    corrida = sub.correr_hijo(guionizado(arnes, "solo"), encargo_en_solitario(arnes["encargos"]), INCIDENTE)
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
