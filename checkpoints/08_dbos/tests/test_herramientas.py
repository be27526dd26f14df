"""Punto de control 06: las herramientas, siempre dentro de la copia de trabajo, con lo que les añade la
lección 06: una edición de una vez (un provisional y os.replace) y abrir parte a parte, sin enlaces.

Cada test comprueba un invariante de `herramientas.py`. Los que rechazan algo comprueban
también que no ha pasado nada: el fichero sigue byte a byte igual, o lo de fuera no se ha leído.
"""
import errno
import os
import random
import re
import signal
import subprocess
import sys
import time
import tracemalloc

import pytest

import herramientas
from herramientas import ErrorDeHerramienta, editar, ejecutar, leer

COMPRA = '''"""La lista de la compra."""


def compra(menu):
    return sorted(menu)
'''
SECRETO = "esto está fuera de la copia y el modelo no debe verlo\n"


@pytest.fixture
def copia(tmp_path):
    """Una copia de trabajo pequeña, con un fichero al lado (fuera) que nadie debe tocar."""
    carpeta = tmp_path / "proyecto"
    (carpeta / "a").mkdir(parents=True)
    (carpeta / "compra.py").write_text(COMPRA, encoding="utf-8")
    (carpeta / "notas.txt").write_text("Tortilla: huevos, patatas, cebolla.\n", encoding="utf-8")
    (tmp_path / "x").write_text(SECRETO, encoding="utf-8")
    return carpeta


def bytes_de(ruta):
    return ruta.read_bytes()


def error_de(funcion, *argumentos):
    """El mensaje del ErrorDeHerramienta que lanza la llamada (falla si no lanza ninguno)."""
    with pytest.raises(ErrorDeHerramienta) as info:
        funcion(*argumentos)
    return str(info.value)


# --- leer ------------------------------------------------------------------------------------

def test_leer_devuelve_entero_un_fichero_que_cabe(copia):
    justo = "".join(f"línea {i}: «ñandú»\n" for i in range(300))[:herramientas.LIMITE_LECTURA]
    (copia / "justo.txt").write_text(justo, encoding="utf-8")
    assert leer(copia, "justo.txt") == justo  # ni un carácter de más: sin nota


LARGO = "".join(f"2024-05-14 línea {i}: «ñandú» connect to db:5433 failed\r\n" for i in range(800))  # ~40 KB


def trozos(copia, ruta):
    """Lo que devuelven las lecturas sucesivas de `ruta`, siguiendo el `desde` que dice cada nota."""
    leidos, desde = [], 1
    while True:
        leidos.append(leer(copia, ruta, desde=desde))
        siguiente = re.search(r"pide leer con desde=(\d+)\]$", leidos[-1])
        if not siguiente:
            return leidos
        desde = int(siguiente.group(1))


def test_un_fichero_largo_se_lee_por_trozos_que_caben_y_que_juntos_son_el_fichero(copia):
    (copia / "largo.log").write_bytes(LARGO.encode("utf-8"))
    leidos = trozos(copia, "largo.log")
    assert len(leidos) > 1
    texto = [t[:t.rindex("[… leídas las líneas")] for t in leidos]  # sin la nota del final
    assert all(len(t) <= herramientas.LIMITE_LECTURA for t in texto)
    assert "".join(texto) == LARGO  # byte a byte, con sus \r\n; ninguna línea partida ni repetida
    assert leidos[-1].endswith("hasta el final]")


def test_leer_sin_limite_devolveria_un_fichero_de_40_kb_de_una_vez(copia):
    """La variante ingenua (devolver el contenido entero) da una observación que no cabe en la
    ventana: el test de arriba la detectaría (cada trozo cabe en LIMITE_LECTURA)."""
    (copia / "largo.log").write_bytes(LARGO.encode("utf-8"))
    assert len(herramientas.contenido(copia, "largo.log")) > 6 * herramientas.LIMITE_LECTURA


def test_una_linea_mas_larga_que_el_limite_se_lee_por_su_principio_y_se_sigue_detras(copia):
    (copia / "una.txt").write_text("corta\n" + "x" * (herramientas.LIMITE_LECTURA + 10) + "\nfin\n",
                                   encoding="utf-8")
    leido = leer(copia, "una.txt", desde=2)
    assert leido.startswith("x" * herramientas.LIMITE_LECTURA + "\n[… la línea 2 de una.txt tiene")
    assert "desde=3]" in leido and leer(copia, "una.txt", desde=3).startswith("fin\n")


@pytest.mark.parametrize("desde, dice", [(0, "la primera es la 1"), (9, "no hay línea 9")])
def test_un_desde_fuera_del_fichero_da_error(copia, desde, dice):
    assert dice in error_de(leer, copia, "notas.txt", desde)


def test_un_fichero_que_no_existe_da_error_con_lo_que_hay(copia):
    mensaje = error_de(leer, copia, "recetas.txt")
    assert "no existe" in mensaje and "recetas.txt" in mensaje
    assert "compra.py" in mensaje and "notas.txt" in mensaje


def test_un_fichero_binario_da_error(copia):
    (copia / "foto.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    assert "no es un fichero de texto" in error_de(leer, copia, "foto.png")


# --- rutas fuera de la copia ------------------------------------------------------------------

FUERA = ["../x", "a/../../x", "/etc/passwd"]


@pytest.mark.parametrize("ruta", FUERA)
def test_leer_fuera_de_la_copia_da_error_y_no_lee_nada(copia, ruta):
    mensaje = error_de(leer, copia, ruta)
    assert "sale de la copia" in mensaje
    assert SECRETO.strip() not in mensaje and "root:" not in mensaje


@pytest.mark.parametrize("ruta", FUERA[:2])  # /etc/passwd no se intenta escribir ni en un test
def test_editar_fuera_de_la_copia_da_error_y_no_escribe_nada(copia, ruta):
    fuera = copia.parent / "x"
    antes = bytes_de(fuera)
    assert "sale de la copia" in error_de(editar, copia, ruta, "fuera", "DENTRO")
    assert bytes_de(fuera) == antes


def test_un_enlace_que_apunta_fuera_tambien_da_error(copia):
    (copia / "enlace.txt").symlink_to(copia.parent / "x")
    mensaje = error_de(leer, copia, "enlace.txt")
    assert "sale de la copia" in mensaje and SECRETO.strip() not in mensaje


def test_una_comprobacion_ingenua_de_rutas_deja_salir(copia, monkeypatch):
    """La variante ingenua (solo rechazar rutas absolutas) lee ../x: la comprobación de arriba
    la detectaría."""
    def dentro_ingenua(entorno, ruta):
        if os.path.isabs(ruta):
            raise ErrorDeHerramienta("ruta absoluta")
        return copia / ruta
    monkeypatch.setattr(herramientas, "dentro", dentro_ingenua)
    assert leer(copia, "../x") == SECRETO


# --- editar ----------------------------------------------------------------------------------

def test_editar_cambia_la_unica_aparicion(copia):
    antes = (copia / "compra.py").read_text(encoding="utf-8")
    respuesta = editar(copia, "compra.py", "return sorted(menu)", "return sorted(set(menu))")
    assert "editado compra.py" in respuesta
    assert (copia / "compra.py").read_text(encoding="utf-8") == antes.replace(
        "return sorted(menu)", "return sorted(set(menu))")


def test_antiguo_que_no_aparece_no_cambia_nada_y_pide_copiarlo_tal_cual(copia):
    antes = bytes_de(copia / "compra.py")
    # Las comillas cambiadas, como las cita un modelo pequeño: no aparece.
    mensaje = error_de(editar, copia, "compra.py", "'''La lista de la compra.'''", "'''Otra.'''")
    assert "no aparece" in mensaje and "tal cual" in mensaje and "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


def test_antiguo_repetido_no_cambia_nada(copia):
    antes = bytes_de(copia / "compra.py")
    mensaje = error_de(editar, copia, "compra.py", "menu", "platos")
    assert "veces" in mensaje and "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


def test_antiguo_vacio_no_cambia_nada(copia):
    antes = bytes_de(copia / "compra.py")
    assert "No se ha cambiado nada" in error_de(editar, copia, "compra.py", "", "x")
    assert bytes_de(copia / "compra.py") == antes


def test_si_no_se_puede_escribir_el_fichero_queda_como_estaba(copia, monkeypatch):
    """Un disco lleno al escribir el texto nuevo: falla la escritura del provisional, y el
    fichero sigue siendo el de antes, entero, sin restos del provisional al lado."""
    antes = bytes_de(copia / "compra.py")

    def disco_lleno(fd):
        raise OSError(errno.ENOSPC, "No queda espacio en el dispositivo")
    monkeypatch.setattr(herramientas.os, "fsync", disco_lleno)
    with pytest.raises(OSError):
        editar(copia, "compra.py", "return sorted(menu)", "return sorted(set(menu))")
    assert bytes_de(copia / "compra.py") == antes
    assert sorted(p.name for p in copia.iterdir()) == ["a", "compra.py", "notas.txt"]


def test_editar_conserva_los_permisos_del_fichero(copia):
    (copia / "compra.py").chmod(0o750)
    editar(copia, "compra.py", "return sorted(menu)", "return sorted(set(menu))")
    assert (copia / "compra.py").stat().st_mode & 0o777 == 0o750


def test_editar_en_su_sitio_deja_un_fichero_a_medias_si_la_escritura_falla(copia):
    """La variante ingenua (escribir encima del fichero abierto, como hacía editar): si falla a
    mitad, el fichero se queda a medias. El test de arriba la detectaría."""
    antes = bytes_de(copia / "compra.py")
    with open(copia / "compra.py", "r+b") as f:
        f.truncate(0)  # lo primero que hace quien reescribe el fichero entero en su sitio...
        f.write(antes[:10])  # ...y solo llega a escribir el principio
    assert bytes_de(copia / "compra.py") != antes


def test_un_nuevo_que_no_se_puede_guardar_no_vacia_el_fichero(copia):
    """Un JSON puede traer medio par sustituto (\\ud800): no se puede escribir en UTF-8, y el
    fichero no debe quedarse a medias (ni vacío) por haberlo intentado."""
    antes = bytes_de(copia / "compra.py")
    mensaje = error_de(editar, copia, "compra.py", "return sorted(menu)", "return \ud800")
    assert "No se ha cambiado nada" in mensaje
    assert bytes_de(copia / "compra.py") == antes


# --- ejecutar --------------------------------------------------------------------------------

def test_ejecutar_devuelve_el_codigo_de_salida_y_la_salida(copia):
    orden = f'{sys.executable} -c "import sys; print(\'hola desde la copia\'); sys.exit(3)"'
    primera, resto = ejecutar(copia, orden).split("\n", 1)
    assert primera == "código de salida 3"
    assert resto.strip() == "hola desde la copia"


def test_ejecutar_escribe_relativas_las_rutas_de_la_copia(copia):
    (copia / "roto.py").write_text("raise ValueError('roto')\n", encoding="utf-8")
    salida = ejecutar(copia, f"{sys.executable} roto.py")
    assert salida.startswith("código de salida 1")
    assert 'File "roto.py"' in salida
    assert str(copia.resolve()) not in salida


def test_una_salida_enorme_se_corta_con_un_aviso(copia):
    sobra = 5000
    total = herramientas.LIMITE_SALIDA + sobra
    salida = ejecutar(copia, f"{sys.executable} -c \"print('x' * {total}, end='')\"")
    assert "salida cortada" in salida and f"{sobra} caracteres más" in salida
    assert salida.count("x") == herramientas.LIMITE_SALIDA


def test_una_orden_que_no_termina_se_corta_con_un_error(copia, monkeypatch):
    monkeypatch.setattr(herramientas, "ESPERA_ORDEN", 0.3)
    mensaje = error_de(ejecutar, copia, "sleep 5")
    assert "no terminó" in mensaje and "se ha cortado" in mensaje


# --- ejecutar: ningún proceso se queda corriendo -------------------------------------------------

def procesos_con(marca):
    """Los pid de los procesos vivos cuya línea de órdenes lleva `marca` (leído de /proc)."""
    vivos = []
    for carpeta in os.listdir("/proc"):
        try:
            with open(f"/proc/{carpeta}/cmdline", "rb") as f:
                if marca.encode() in f.read():
                    vivos.append(int(carpeta))
        except (OSError, ValueError):
            pass  # no es un proceso, o ya ha terminado
    return vivos


def quedan_vivos(marca, espera=3.0):
    """Los procesos con `marca` que siguen vivos tras darles `espera` segundos para morir."""
    final = time.monotonic() + espera
    while (vivos := procesos_con(marca)) and time.monotonic() < final:
        time.sleep(0.05)
    return vivos


@pytest.fixture
def marca():
    """Una duración de `sleep` que no usa nadie más en la máquina: sirve de marca en la línea de
    órdenes. Al terminar el test se matan los que queden, aunque el test haya fallado."""
    numero = f"300.{random.randrange(10**8):08d}1"
    yield numero
    for pid in procesos_con(numero):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


sin_proc = pytest.mark.skipif(not os.path.isdir("/proc"), reason="hace falta /proc (Linux)")

FORMAS_DE_NO_TERMINAR = {
    "sleep": "sleep {m}",
    "dos_sleep": "sleep {m} & sleep {m}",
    "bash_c": "bash -c 'sleep {m}; true'",
    "subshell": "(sleep {m})",
    "hijo_python": f"{sys.executable} -c 'import time; time.sleep({{m}})'",
}


@sin_proc
@pytest.mark.parametrize("forma", sorted(FORMAS_DE_NO_TERMINAR))
def test_una_orden_cortada_no_deja_ningun_proceso(copia, monkeypatch, marca, forma):
    monkeypatch.setattr(herramientas, "ESPERA_ORDEN", 0.5)
    orden = FORMAS_DE_NO_TERMINAR[forma].format(m=marca)
    assert "no terminó" in error_de(ejecutar, copia, orden)
    assert quedan_vivos(marca) == []


@sin_proc
def test_un_hijo_en_segundo_plano_no_bloquea_y_no_se_queda(copia, monkeypatch, marca):
    """`sleep & echo lanzado` vuelve en cuanto termina la shell, con lo que escribió; lo que dejó
    en segundo plano se mata entonces (la orden es todo su grupo de procesos)."""
    monkeypatch.setattr(herramientas, "ESPERA_ORDEN", 20)
    antes = time.monotonic()
    salida = ejecutar(copia, f"sleep {marca} & echo lanzado")
    assert time.monotonic() - antes < 10
    assert salida == "código de salida 0\nlanzado\n"
    assert quedan_vivos(marca) == []


def test_una_salida_de_100_mb_no_ocupa_100_mb(copia):
    """La salida se lee a trozos y solo se guarda lo que se va a devolver."""
    total = 100 * 2**20
    orden = f"{sys.executable} -c \"import sys; [sys.stdout.write('x' * 2**20) for _ in range(100)]\""
    tracemalloc.start()
    try:
        salida = ejecutar(copia, orden)
        _, pico = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pico < 5 * 2**20, f"pico de {pico / 2**20:.0f} MB"
    assert salida.count("x") == herramientas.LIMITE_SALIDA
    assert f"salida cortada: {total - herramientas.LIMITE_SALIDA} caracteres más" in salida


def test_ejecutar_no_se_come_la_entrada_del_harness(copia):
    """Con `head -n 1`, la orden no lee la entrada del harness (en correr.py, las respuestas del
    usuario a los permisos): la línea sigue ahí para quien la pida después."""
    lectura, escritura = os.pipe()
    os.write(escritura, b"s\n")
    os.close(escritura)
    guardada = os.dup(0)
    os.dup2(lectura, 0)
    try:
        salida = ejecutar(copia, "head -n 1")
    finally:
        os.dup2(guardada, 0)
        os.close(guardada)
    queda = os.read(lectura, 100)
    os.close(lectura)
    assert salida == "código de salida 0\n"
    assert queda == b"s\n"


# --- enlaces que dan vueltas, y una carpeta cambiada por un enlace a mitad -----------------------

@pytest.mark.parametrize("herramienta", ["leer", "editar"])
def test_un_bucle_de_enlaces_da_error_sin_la_ruta_de_la_copia(copia, herramienta):
    (copia / "bucle").symlink_to(copia / "bucle")
    argumentos = (copia, "bucle") if herramienta == "leer" else (copia, "bucle", "a", "b")
    mensaje = error_de(getattr(herramientas, herramienta), *argumentos)
    assert "bucle" in mensaje and str(copia.parent) not in mensaje


@pytest.fixture
def cambiazo(copia, monkeypatch):
    """Entre la comprobación de la ruta (`dentro`) y la apertura, alguien cambia la carpeta
    `datos/` de la copia por un enlace a una carpeta de fuera con un fichero del mismo nombre."""
    (copia / "datos").mkdir()
    (copia / "datos" / "f.txt").write_text("dentro: valor = 1\n", encoding="utf-8")
    fuera = copia.parent / "fuera"
    fuera.mkdir()
    (fuera / "f.txt").write_text("fuera: valor = 1\n", encoding="utf-8")
    comprobar = herramientas.dentro

    def comprobar_y_cambiar(entorno, ruta):
        destino = comprobar(entorno, ruta)
        if not (copia / "datos").is_symlink():
            (copia / "datos").rename(copia / "datos_antes")
            (copia / "datos").symlink_to(fuera)
        return destino
    monkeypatch.setattr(herramientas, "dentro", comprobar_y_cambiar)
    return fuera / "f.txt"


def test_leer_no_sale_aunque_cambien_la_carpeta_a_mitad(copia, cambiazo):
    mensaje = error_de(leer, copia, "datos/f.txt")
    assert "fuera" not in mensaje and "enlace" in mensaje


def test_editar_no_escribe_fuera_aunque_cambien_la_carpeta_a_mitad(copia, cambiazo):
    antes = bytes_de(cambiazo)
    assert "No se ha cambiado nada" in error_de(editar, copia, "datos/f.txt", "valor = 1", "valor = 2")
    assert bytes_de(cambiazo) == antes


@pytest.mark.parametrize("herramienta", ["leer", "editar"])
def test_un_enlace_duro_a_un_fichero_de_fuera_no_se_abre(copia, herramienta):
    fuera = copia.parent / "x"
    os.link(fuera, copia / "duro.txt")  # otro nombre, dentro de la copia, del fichero de fuera
    argumentos = (copia, "duro.txt") if herramienta == "leer" else (copia, "duro.txt", "fuera", "DENTRO")
    mensaje = error_de(getattr(herramientas, herramienta), *argumentos)
    assert "enlace duro" in mensaje and SECRETO.strip() not in mensaje
    assert bytes_de(fuera) == SECRETO.encode("utf-8")


def test_un_enlace_duro_entre_dos_ficheros_de_la_copia_si_se_abre(copia):
    os.link(copia / "notas.txt", copia / "a" / "otra.txt")
    assert leer(copia, "a/otra.txt") == leer(copia, "notas.txt")


def test_abrir_sin_contar_los_enlaces_duros_leeria_fuera(copia, monkeypatch):
    """La variante ingenua: no mirar cuántos nombres tiene el fichero. Lee el de fuera por su
    enlace duro: test_un_enlace_duro_a_un_fichero_de_fuera_no_se_abre la detectaría."""
    os.link(copia.parent / "x", copia / "duro.txt")
    monkeypatch.setattr(herramientas, "nombres_dentro", lambda base, estado: estado.st_nlink)
    assert leer(copia, "duro.txt") == SECRETO


def test_abrir_por_su_nombre_lo_comprobado_saldria(copia, cambiazo):
    """La variante ingenua: comprobar la ruta y abrirla después por su nombre. Con el cambiazo,
    lee el fichero de fuera: los dos tests de arriba la detectarían."""
    assert herramientas.dentro(copia, "datos/f.txt").read_text(encoding="utf-8") == "fuera: valor = 1\n"


# --- los saltos de línea, tal cual -------------------------------------------------------------

SALTOS = {"crlf": b"uno\r\ndos\r\ntres\r\n", "cr": b"uno\rdos\rtres\r", "mezcla": b"uno\r\ndos\ntres\rcuatro"}


@pytest.mark.parametrize("saltos", sorted(SALTOS))
def test_leer_devuelve_los_saltos_de_linea_tal_cual(copia, saltos):
    (copia / "f.txt").write_bytes(SALTOS[saltos])
    assert leer(copia, "f.txt") == SALTOS[saltos].decode("utf-8")


@pytest.mark.parametrize("saltos", sorted(SALTOS))
def test_editar_solo_cambia_lo_editado_y_respeta_los_saltos(copia, saltos):
    (copia / "f.txt").write_bytes(SALTOS[saltos])
    editar(copia, "f.txt", "dos", "DOS")
    assert bytes_de(copia / "f.txt") == SALTOS[saltos].replace(b"dos", b"DOS")


@pytest.mark.parametrize("saltos", sorted(SALTOS))
def test_un_antiguo_de_varias_lineas_copiado_de_leer_se_encuentra(copia, saltos):
    """Lo que devuelve leer se puede citar tal cual, saltos de línea incluidos."""
    (copia / "f.txt").write_bytes(SALTOS[saltos])
    texto = leer(copia, "f.txt")
    antiguo = texto[:texto.index("tres")]  # «uno», «dos» y sus saltos, sean cuales sean
    editar(copia, "f.txt", antiguo, antiguo.upper())
    assert bytes_de(copia / "f.txt") == SALTOS[saltos].replace(b"uno", b"UNO").replace(b"dos", b"DOS")


@sin_proc
def test_cortar_solo_la_shell_deja_huerfanos(copia, marca):
    """La variante ingenua: `subprocess.run` con timeout mata a la shell y nada más. Los dos
    `sleep` siguen vivos: test_una_orden_cortada_no_deja_ningun_proceso la detectaría."""
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(f"sleep {marca} & sleep {marca}", shell=True, cwd=copia, timeout=0.5)
    assert len(quedan_vivos(marca, espera=0.5)) == 2
