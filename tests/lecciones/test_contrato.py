"""Lo que el cuaderno da por bueno, lo da por bueno todo lo que viene después: las segundas soluciones de variantes.py, juntas, contra los tests de cada punto de control.

Un espacio por lección N: los módulos del punto de control N con todas las segundas soluciones de
las lecciones hasta N puestas como las pondría el alumno (`variantes.poner`). Contra él, lo que
califica, como en `comprobar N` y `calificar`: los tests de contrato del punto de control N (los de
regresión fijan la referencia, y no califican: `curso/comprobaciones/contrato.py`) y las
comprobaciones de sus ejercicios, en otro proceso (`aparte.correr_aparte`, lo mismo que usan `comprobar N` y `calificar`). Cada prueba
distinta corre una sola vez: `repetidos.tests_que_corren` sobre los espacios compuestos deja solo
la copia más alta de las que coinciden en el test y en todo lo que importa.

La ingenua (correr solo la comprobación del cuaderno) no ve lo que este test vio al escribirse:
tests de los puntos de control que querían palabras que el ejercicio no pide («el activo ya es el
resumen 1», «ya se recibió con otros datos», «solo tiene», «3 intentos»...).
"""
import shutil

import pytest

from curso import rutas
from curso.autor import repetidos
import variantes
from curso.comprobaciones import aparte, ejercicios, tests_del_curso
from curso.comprobaciones.contrato import contratos_del_punto
from curso.postgres.cluster import VARIABLE_DE_CONEXION

# Las segundas soluciones no cuelgan ningún test: el límite por test no es lo que se prueba aquí. Con
# holgura, para que una máquina lenta y muy ocupada no convierta en colgado un test lento de verdad
# (el de una caída tras cada paso tarda 8 s en esta máquina tranquila; en CI pasó de 30).
LIMITE_SIN_COLGADOS = 90

ejercicios.cargar_registro()


def espacios_compuestos(carpeta):
    """{N: carpeta} con los módulos del punto de control N, las segundas soluciones puestas y sus
    tests/ (para que repetidos compare lo que de verdad corre)."""
    compuestos = {}
    for n, punto in sorted(rutas.puntos_de_control().items()):
        espacio = carpeta / punto.name
        shutil.copytree(punto, espacio, ignore=shutil.ignore_patterns("__pycache__"))
        variantes.poner(espacio, n, variantes.SEGUNDAS.values())
        compuestos[n] = espacio
    return compuestos


def ejercicios_de(n):
    return ejercicios.ordenados(id for id, e in ejercicios.REGISTRO.items() if e.leccion == n and e.modulo)


def test_poner_deja_fuera_lo_que_una_leccion_posterior_reescribe(tmp_path):
    """La 03 reescribe `bucle`: la segunda solución del 1.3 va en los puntos 01 y 02, no después."""
    bucle = variantes.SEGUNDAS["1.3"]
    assert variantes.sigue_igual(bucle, 2) and not variantes.sigue_igual(bucle, 3)
    espacio = tmp_path / "e"
    shutil.copytree(rutas.puntos_de_control()[3], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    puestas = variantes.poner(espacio, 3, variantes.SEGUNDAS.values())
    assert {v.ejercicio for v in puestas} == {"0.1", "1.1", "1.2", "3.2", "3.3"}


@pytest.mark.lento
def test_las_segundas_soluciones_pasan_cada_punto_de_control_y_sus_comprobaciones(tmp_path, postgres, monkeypatch):
    monkeypatch.setenv(VARIABLE_DE_CONEXION, postgres)
    compuestos = espacios_compuestos(tmp_path)
    corren, _ = repetidos.tests_que_corren(compuestos)
    rojos = []
    for n, espacio in compuestos.items():
        ficheros = {t.name for t in corren.get(n, [])}
        seleccion = [t for t in contratos_del_punto(espacio) if tests_del_curso.fichero_de(t) in ficheros]
        if not seleccion and not ejercicios_de(n):
            continue
        del_espacio = {p.name: p for p in espacio.glob("*.py")}
        corrida = aparte.correr_aparte(del_espacio, rutas.puntos_de_control()[n], seleccion, ejercicios_de(n),
                                       limite_test=LIMITE_SIN_COLGADOS)
        rojos += [f"{espacio.name} {test}: {r.estado} {r.motivo}" for test, r in sorted(corrida.resultados.items())
                  if r.estado != aparte.PASA]
    assert not rojos, "\n".join(rojos)


# Los tests que pedían nuestras palabras (hallazgo 2 de la issue 25): con las segundas soluciones,
# que dicen lo mismo con otras, fallaban aunque el cuaderno daba «✔ Hecho».
PEDIAN_NUESTRAS_PALABRAS = {
    4: ["test_resumenes.py::test_mover_puntero_solo_lo_mueve_desde_su_base",
        "test_resumenes.py::test_instalar_con_base_obsoleta_no_cambia_nada",
        "test_resumenes.py::test_validar_candidato_acepta_o_rechaza_sin_escribir_nada",
        "test_resumenes.py::test_un_candidato_mal_formado_no_cambia_nada"],
    5: ["test_buzon.py::test_la_misma_identidad_con_otros_datos_es_un_error",
        "test_buzon.py::test_un_hijo_no_esperado_es_permission_error",
        "test_buzon.py::test_admitir_una_entrega_desconocida_es_value_error",
        "test_subagentes.py::test_un_hallazgo_sin_evidencia_que_lo_respalde_se_descarta"],
    6: ["test_reintentos.py::test_se_rinde_tras_los_intentos_con_el_ultimo_error",
        "test_reintentos.py::test_mas_de_un_minuto_de_una_vez_no_se_espera",
        "test_reintentos.py::test_no_empieza_una_espera_que_acabaria_despues_del_plazo",
        "test_efectos.py::test_si_otro_cambio_el_fichero_entre_la_caida_y_la_reanudacion_no_se_toca"],
}


@pytest.mark.parametrize("n", sorted(PEDIAN_NUESTRAS_PALABRAS))
def test_los_tests_que_pedian_nuestras_palabras_aceptan_las_de_la_segunda_solucion(n, tmp_path):
    espacio = tmp_path / "espacio"
    shutil.copytree(rutas.puntos_de_control()[n], espacio, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    puestas = {v.ejercicio for v in variantes.poner(espacio, n, variantes.SEGUNDAS.values())}
    assert puestas >= {id for id, e in ejercicios.REGISTRO.items() if e.leccion == n and e.modulo}
    corrida = aparte.correr_aparte({p.name: p for p in espacio.glob("*.py")}, rutas.puntos_de_control()[n],
                                   PEDIAN_NUESTRAS_PALABRAS[n])
    rojos = {test: r.motivo for test, r in corrida.resultados.items() if r.estado != aparte.PASA}
    assert set(corrida.resultados) == set(PEDIAN_NUESTRAS_PALABRAS[n]) and not rojos, rojos
