"""Los caminos del alumno: un solo espacio de trabajo de la lección 00 a la 08, en núcleos de
Jupyter de verdad con `notebooks/` como directorio de trabajo, como en JupyterLab.

Un alumno no empieza cada lección desde un punto de control limpio, como nbval: lleva su
`mi_agente/` de una lección a otra, falla un ejercicio y lo arregla en la misma celda, deja otro
para luego, vuelve a una lección anterior, restaura un punto de control a mitad. Cada test de este
fichero es uno de esos caminos; entre los dos, cada ejercicio de las lecciones 00–08 se hace
fallando primero y arreglando después, y cada uno de 1.1, 1.2, 3.2, 4.1 y 5.x se deja pendiente
mientras las lecciones siguientes se resuelven.

El primer test es un solo paso de camino, el humo que corre también `probar --rapido` (ver
curso/autor/probar.py): la lección 00 fallando y arreglando su ejercicio en un espacio vacío.

El camino de quien lo ejecuta todo sin resolver nada es `--nbval-lax notebooks/`, que `probar` ya
corre con un solo espacio para todos los cuadernos del alumno (ver conftest.py): aquí no se repite.
"""
import pytest

from curso import rutas

from alumno import Alumno, recorrer


def _sin_problemas(recorrido):
    assert not recorrido.problemas, "\n\n".join(recorrido.problemas)


def _usa_la_referencia_una_vez(recorrido, modulo, ejercicios):
    """La lección dice una vez, al empezar, que sigue pendiente y qué referencia usa."""
    frase = f"esta lección usa {modulo} del punto de control {rutas.anterior(recorrido.numero):02d}"
    assert recorrido.veces(frase) == 1, (
        f"la lección {recorrido.numero:02d} tenía que decir una vez «{frase}» ({ejercicios} pendiente), "
        f"y lo dice {recorrido.veces(frase)}:\n{recorrido.salidas[0][1].texto}")
    primera = recorrido.salidas[0][1].texto
    assert frase in primera and ejercicios in primera, primera


def _ficheros(espacio):
    return {p.relative_to(espacio).as_posix(): p.read_bytes()
            for p in sorted(espacio.rglob("*.py"))
            if p.is_file() and not set(p.relative_to(espacio).parts) & rutas.IGNORADOS}


@pytest.mark.humo
def test_un_paso_la_leccion_00_fallando_y_arreglando_deja_el_espacio_como_su_punto_de_control(tmp_path):
    """Un paso: la lección 00 desde un espacio vacío.

    Falla y arregla el 0.1 en la misma celda; al acabar, el espacio es el punto de control 00."""
    alumno = Alumno(tmp_path)
    r = recorrer(alumno, 0)
    _sin_problemas(r)
    assert r.veces("Ejercicio 0.1: pendiente.") == 1 and r.veces("✔ Hecho.") >= 1, r.texto
    assert _ficheros(alumno.espacio) == _ficheros(rutas.puntos_de_control()[0])


def test_quien_deja_el_1_1_y_el_3_2_para_luego_y_vuelve_a_lecciones_pasadas(tmp_path):
    """Deja el 1.1 y el 3.2 para luego y vuelve atrás.

    00 → 08, con la 03b, fallando y arreglando cada ejercicio salvo 1.1, 3.2 y 3.3, que deja en
    el esbozo; tras la 03 vuelve a la 02 (y después sigue por la 03b), y tras la 08, a la 02, la
    04 y la 05."""
    alumno = Alumno(tmp_path)
    pendiente_1_1 = "El ejercicio 1.1 sigue pendiente"
    pendientes_3 = "Los ejercicios 3.2 y 3.3 siguen pendientes"

    _sin_problemas(recorrer(alumno, 0))
    _sin_problemas(recorrer(alumno, 1, dejar={"1.1"}))
    primera_02 = recorrer(alumno, 2)
    _sin_problemas(primera_02)
    _usa_la_referencia_una_vez(primera_02, "entorno.py", pendiente_1_1)
    r = recorrer(alumno, 3, dejar={"3.2", "3.3"})
    _sin_problemas(r)
    _usa_la_referencia_una_vez(r, "entorno.py", pendiente_1_1)

    # Vuelve a la 02 con la 03 hecha: la lección funciona como se escribió, dice una vez que el
    # espacio va por delante, y no cambia nada del espacio.
    antes = _ficheros(alumno.espacio)
    otra_02 = recorrer(alumno, 2)
    _sin_problemas(otra_02)
    assert otra_02.veces("Tu espacio va por delante de esta lección") == 1, otra_02.salidas[0][1].texto
    assert _ficheros(alumno.espacio) == antes, "volver a la lección 02 cambió el espacio"
    distintas = [id_ for (id_, a), (_, b) in zip(primera_02.salidas[1:-1], otra_02.salidas[1:-1], strict=True)
                 if a.texto != b.texto]
    assert not distintas, f"la lección 02, vuelta a recorrer, dice otra cosa en {distintas}"

    for numero in (rutas.TRES_B, 4, 5, 6, 7, 8):
        r = recorrer(alumno, numero)
        _sin_problemas(r)
        # La 03 cambia entorno.py sobre la referencia (leer por trozos): desde ahí, ya está completo.
        assert r.veces(pendiente_1_1) == 0, r.salidas[0][1].texto
        _usa_la_referencia_una_vez(r, "compactar.py", pendientes_3)

    # Con la 08 hecha, vuelve a la 02, la 04 y la 05.
    antes = _ficheros(alumno.espacio)
    for numero in (2, 4, 5):
        r = recorrer(alumno, numero)
        _sin_problemas(r)
        assert r.veces("Tu espacio va por delante de esta lección") == 1, r.salidas[0][1].texto
    assert _ficheros(alumno.espacio) == antes, "volver a lecciones pasadas cambió el espacio"


def test_quien_deja_el_1_2_el_4_1_y_el_buzon_para_luego_y_restaura_a_mitad(tmp_path):
    """Deja el 1.2, el 4.1 y el buzón para luego y restaura a mitad.

    01, 03 → 07 (se salta la 00 y la 02) fallando y arreglando cada ejercicio salvo 1.2, 4.1 y
    5.1–5.3; después restaura el punto de control 03 y rehace la 04, esta vez con el 4.1."""
    alumno = Alumno(tmp_path)
    pendiente_1_2 = "El ejercicio 1.2 sigue pendiente"
    pendiente_4_1 = "El ejercicio 4.1 sigue pendiente"
    pendientes_5 = "Los ejercicios 5.1, 5.2 y 5.3 siguen pendientes"

    # Empieza por la 01 (se salta la 00) y se salta también la 02, que no construye nada.
    _sin_problemas(recorrer(alumno, 1, dejar={"1.2"}))
    r = recorrer(alumno, 3)
    _sin_problemas(r)
    _usa_la_referencia_una_vez(r, "permisos.py", pendiente_1_2)
    r = recorrer(alumno, 4, dejar={"4.1"})
    _sin_problemas(r)
    assert r.veces(pendiente_1_2) == 0, r.salidas[0][1].texto  # la 03 cambió permisos.py (leer por trozos)
    r = recorrer(alumno, 5, dejar={"5.1", "5.2", "5.3"})
    _sin_problemas(r)
    assert r.veces(pendiente_1_2) == 0, r.salidas[0][1].texto
    _usa_la_referencia_una_vez(r, "historial.py", pendiente_4_1)
    for numero in (6, 7):
        r = recorrer(alumno, numero)
        _sin_problemas(r)
        assert r.veces(pendiente_1_2) == 0, r.salidas[0][1].texto
        _usa_la_referencia_una_vez(r, "historial.py", pendiente_4_1)
        _usa_la_referencia_una_vez(r, "buzon.py", pendientes_5)

    # Restaura el punto de control 03 y rehace desde la 04: su trabajo queda en una copia entera.
    suyo = _ficheros(alumno.espacio)
    salida = alumno.orden("restaurar", "3")
    (copia,) = [p for p in alumno.espacio.parent.iterdir() if p.name.startswith("espacio.copia-")]
    assert _ficheros(copia) == suyo, salida
    assert _ficheros(alumno.espacio) == _ficheros(rutas.puntos_de_control()[3]), salida
    r = recorrer(alumno, 4)
    _sin_problemas(r)
    assert r.veces("sigue pendiente") == 0 and r.veces("siguen pendientes") == 0, r.texto
