"""Para quien da el curso: lo que escribe `calificar` (el CSV del libro de notas, la página HTML y las devoluciones).

Todo es puro (recibe las filas de `curso.clase.calificar` y devuelve texto), para probarlo por separado.

- El CSV tiene una fila por alumno: su identificador y dónde estaba su espacio; por lección, el
  estado, los tests que pasan y cuántos hay, y los ejercicios hechos y cuántos hay (números, que
  un libro de notas sabe sumar); lo mismo de todo junto; los totales; y un comentario (el primer
  problema y la pista de su ejercicio) que se puede retocar antes de importarlo. Se escribe en
  UTF-8 con BOM, para que Excel no enseñe `âœ”` donde pone ✔.
- La página cabe en 1400 píxeles de ancho: una tabla con una leyenda de los cuatro colores, una
  fila de resumen por lección (cuántas celdas de cada color) y, debajo, por alumno, el primer test
  que falla con la pista de su ejercicio y el detalle de cada lección. Sin nada de fuera.
- Una devolución por alumno, en texto, para dársela.
"""
import csv
import html
import io

from curso.comprobaciones import aparte, veredicto

VERDE, ROJA, AMBAR, GRIS = "verde", "roja", "ambar", "gris"  # los de curso.clase.calificar
LEYENDA = [
    (VERDE, "✔", "pasan todos los tests de la lección (o de todo junto)"),
    (AMBAR, "⚠", "ninguno falla, pero alguno se colgó (pasó de su límite de tiempo) o quedó sin comprobar"),
    (GRIS, "—", "sin empezar (no tiene ninguno de los módulos que la lección añade, o sus celdas del "
                "cuaderno están como las da el curso) o no encuentro su espacio (o su cuaderno)"),
    (ROJA, "✘", "algún test falla o falta algún módulo de la lección"),
]


def cabecera_csv(lecciones):
    campos = ["alumno", "espacio"]
    for n in lecciones:
        campos += [f"{n:02d} estado", f"{n:02d} tests", f"{n:02d} tests en total", f"{n:02d} ejercicios",
                   f"{n:02d} ejercicios en total"]
    campos += ["todo junto", "todo junto tests", "todo junto tests en total", "tests", "tests en total",
               "ejercicios", "ejercicios en total", "lecciones en verde"]
    campos += [f"ejercicio {id}" for id in ejercicios_de(lecciones)]
    return _linea_csv(campos + ["comentario"])


def _linea_csv(campos):
    salida = io.StringIO()
    csv.writer(salida).writerow(campos)  # \r\n al final, como pide RFC 4180 y espera Excel
    return salida.getvalue()


SIN_COMPROBAR = ""  # lo que lleva en el CSV una cuenta que no se pudo hacer: vacía, no 0


def sin_mirar(celda):
    """¿No se pudo ni mirar (no encuentro su espacio o su cuaderno)? Entonces sus cuentas no se saben."""
    return not getattr(celda, "contada", True)


def tests_pasan(celda):
    """Cuántos tests pasan, o SIN_COMPROBAR si alguno no llegó a correr (entonces no se sabe)."""
    return SIN_COMPROBAR if sin_mirar(celda) or getattr(celda, "tests_sin_comprobar", 0) else celda.tests_pasan


def ejercicios_hechos(celda):
    return SIN_COMPROBAR if sin_mirar(celda) or getattr(celda, "ejercicios_sin_comprobar", 0) else \
        celda.ejercicios_hechos


def ejercicios_de(lecciones):
    """Los ejercicios de las lecciones, en su orden: una columna cada uno."""
    return [id for leccion in lecciones.values() for id in leccion.ejercicios]


def cada_ejercicio(fila, lecciones):
    """{"3.2": 1, "3.3": 0, ...}: 1 si está hecho, 0 si no, SIN_COMPROBAR si no se sabe (no llegó a
    correr, o no encuentro su espacio o su cuaderno)."""
    valores = {}
    for n, leccion in lecciones.items():
        celda = fila.celdas[n]
        resultados = celda.comprobacion.ejercicios if celda.comprobacion else {}
        for id in leccion.ejercicios:
            r = resultados.get(id)
            if sin_mirar(celda) or (r is not None and r.estado in (aparte.SIN_COMPROBAR, aparte.SALTADO)):
                valores[id] = SIN_COMPROBAR
            else:
                valores[id] = int(r is not None and r.estado == aparte.PASA)
    return valores


def suma_o_vacia(valores):
    """La suma, o SIN_COMPROBAR si alguno de los valores no se sabe."""
    valores = list(valores)
    return SIN_COMPROBAR if SIN_COMPROBAR in valores else sum(valores)


def _de(cuantos, total):
    """«5/12», o «sin comprobar (de 12)» si la cuenta no se pudo hacer."""
    return f"{cuantos}/{total}" if cuantos != SIN_COMPROBAR else f"sin comprobar (de {total})"


def fila_csv(fila, lecciones):
    """La línea de un alumno, con su \\r\\n. Una cuenta que no se pudo hacer (tests que no llegaron
    a correr tras un colgado) va vacía, no 0, y el comentario dice por qué."""
    campos = [fila.alumno.nombre, fila.alumno.donde]
    for n in lecciones:
        c = fila.celdas[n]
        campos += [c.texto, tests_pasan(c), c.tests_total, ejercicios_hechos(c), c.ejercicios_total]
    t = fila.todo_junto
    campos += [t.texto, tests_pasan(t), t.tests_total,
               suma_o_vacia(tests_pasan(fila.celdas[n]) for n in lecciones),
               sum(fila.celdas[n].tests_total for n in lecciones),
               suma_o_vacia(ejercicios_hechos(fila.celdas[n]) for n in lecciones),
               sum(fila.celdas[n].ejercicios_total for n in lecciones),
               sum(1 for n in lecciones if fila.celdas[n].estado == VERDE)]
    campos += list(cada_ejercicio(fila, lecciones).values())
    return _linea_csv(campos + [comentario(fila)])


def sin_comprobar(fila):
    """«Sin comprobar (por eso van vacías sus cuentas): 01, 3 tests y 2 ejercicios», o ""."""
    partes = []
    for n, c in fila.celdas.items():
        que = [f"{x} {nombre}" for x, nombre in ((getattr(c, "tests_sin_comprobar", 0), "tests"),
                                                 (getattr(c, "ejercicios_sin_comprobar", 0), "ejercicios")) if x]
        if que:
            partes.append(f"{n:02d}, {' y '.join(que)}")
    return ("Sin comprobar, por eso van vacías sus cuentas (no son ceros): " + "; ".join(partes) + ".") if partes else ""


def sin_calificar(fila):
    """«Sin calificar (sus cuentas van vacías): 02, no encuentro su cuaderno (…)», o "": las lecciones
    que no se pudieron ni mirar cuando el resto sí."""
    partes = [f"{n:02d}, {c.texto}" for n, c in fila.celdas.items() if sin_mirar(c)]
    return ("Sin calificar, por eso van vacías sus cuentas: " + "; ".join(partes) + ".") if partes else ""


def progreso(fila):
    """Una línea para la terminal: el alumno, dónde estaba su espacio y cada celda."""
    celdas = " · ".join(f"{n:02d} {c.texto}" for n, c in fila.celdas.items())
    donde = f" ({fila.alumno.donde})" if fila.alumno.donde else ""
    return f"{fila.alumno.nombre}{donde}: {celdas} · todo junto {fila.todo_junto.texto}"


# ---------------------------------------------------------------- el primer problema y su pista


def _pista(id):
    from curso.comprobaciones import ejercicios
    e = ejercicios.REGISTRO.get(id) or ejercicios.cargar_registro().get(id)
    return e.pistas[0] if e and e.pistas else ""


def _modulo_del_ejercicio(id):
    from curso.comprobaciones import ejercicios
    e = ejercicios.cargar_registro().get(id)
    return e.modulo if e else None


def _primer_culpable(fila):
    """El problema del primer culpable de la regla de la culpa (`curso/comprobaciones/culpa.py`:
    uno colgado, si no uno que no se importa, si no el del ejercicio más temprano), en la celda de
    la lección cuya línea lo nombra; o None si no hay culpables."""
    todo = fila.todo_junto.comprobacion if fila.todo_junto is not None else None
    if todo is None or not todo.culpables:
        return None
    culpa = todo.culpables[0]
    sitios = [(f"lección {n:02d}", c.comprobacion) for n, c in fila.celdas.items() if c.comprobacion]
    for donde, c in [*sitios, ("todo junto", todo)]:
        linea = next((l for l in c.lineas if l.modulo == culpa.modulo and l.culpable), None)
        if linea is not None:
            ejercicio = linea.pendiente or culpa.ejercicio
            return {"donde": donde, "que": f"{linea.nombre}: {linea.detalle}", "ejercicio": ejercicio,
                    "pista": _pista(ejercicio) if ejercicio else ""}
    ejercicio = culpa.ejercicio
    return {"donde": "todo junto", "que": f"{culpa.modulo}.py: {culpa.texto()}", "ejercicio": ejercicio,
            "pista": _pista(ejercicio) if ejercicio else ""}


def primer_problema(fila):
    """{"donde", "que", "ejercicio", "pista"} del primer problema del alumno: su primer culpable
    si hay alguno; si no, lección a lección, el primer test que falla o se cuelga, o el primer
    ejercicio sin hacer; o None si no hay."""
    culpable = _primer_culpable(fila)
    if culpable is not None:
        return culpable
    for n, celda in fila.celdas.items():
        c = celda.comprobacion
        if c is None or celda.estado == VERDE and c.ejercicios_hechos == len(c.ejercicios):
            continue
        malas = [l for l in c.lineas if l.estado not in veredicto.NO_IMPIDEN_EL_VERDE]
        sin_hacer = [(id, r) for id, r in c.ejercicios.items() if r.estado != aparte.PASA]
        if malas:
            l = malas[0]
            modulo = l.nombre.split(" (")[0].removesuffix(".py")
            from curso.comprobaciones.tests_del_curso import ejercicio_de_test
            ejercicio = (l.pendiente or l.ejercicio or (ejercicio_de_test(l.primero) if l.primero else None)
                         or next((id for id, _ in sin_hacer if _modulo_del_ejercicio(id) == modulo), ""))
            que = f"{l.nombre}: {l.detalle}"  # la línea ya nombra su test, por lo que comprueba
        elif sin_hacer:
            ejercicio, r = sin_hacer[0]
            que = f"ejercicio {ejercicio}: " + (f"{r.motivo}" if r.motivo else r.estado)
        else:
            continue
        return {"donde": f"lección {n:02d}", "que": que, "ejercicio": ejercicio,
                "pista": _pista(ejercicio) if ejercicio else ""}
    return None


def comentario(fila):
    """El comentario del CSV: el primer problema con la pista de su ejercicio, o que todo va bien."""
    celdas = list(fila.celdas.values())
    if celdas and all(c.estado == GRIS for c in celdas):
        return celdas[0].texto.capitalize() + "."
    problema = primer_problema(fila)
    if problema is None:
        empezadas = [n for n, c in fila.celdas.items() if c.estado != GRIS]
        texto = "Todo en verde" + (f" hasta la lección {max(empezadas):02d}." if empezadas else ".")
    else:
        texto = f"{problema['donde'].capitalize()}, {problema['que']}"
        if problema["pista"]:
            texto += f". Pista ({problema['ejercicio']}): {problema['pista']}"
    return " · ".join(x for x in (texto, sin_comprobar(fila), sin_calificar(fila)) if x)


# ---------------------------------------------------------------- la página


ESTILO = """
body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 1380px; padding: 0 10px;
       color: #222; font-size: 14px; overflow-wrap: anywhere; }
table.notas { border-collapse: collapse; width: 100%; table-layout: fixed; }
table.notas th, table.notas td { border: 1px solid #bbb; padding: .25em .4em; text-align: left;
       vertical-align: top; overflow-wrap: anywhere; }
table.notas thead th { overflow-wrap: normal; word-break: normal; hyphens: manual; }
table.notas th.alumno { width: 11em; }
table.notas td a { color: inherit; text-decoration: none; display: block; }
table.notas td a:focus, table.notas td a:hover { outline: 2px solid #2a5db0; }
table.notas th.numeros { width: 7em; }
td small, th small { color: #555; display: block; }
.verde { background: #d8f0d8; } .roja { background: #f6d0d0; }
.ambar { background: #fbe3b0; } .gris { background: #e6e6e6; color: #555; }
tfoot td { background: #f7f7f7; font-size: 12px; }
.leyenda span { display: inline-block; padding: .15em .6em; margin: 0 .4em .3em 0; border: 1px solid #bbb; }
pre { background: #f4f4f4; padding: .5em; white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .3em 0; } .pista { background: #eef4fb; padding: .4em .6em; }
"""


def _resumen_de_columna(celdas):
    cuenta = {estado: sum(1 for c in celdas if c.estado == estado) for estado, *_ in LEYENDA}
    return " · ".join(f"{simbolo} {cuenta[estado]}" for estado, simbolo, _ in LEYENDA)


def ancla(i, n):
    """El id del detalle de la celda de la lección `n` (None: todo junto) del alumno `i`."""
    return f"a{i}-" + ("todo" if n is None else f"{n:02d}")


def _td(celda, destino):
    """La celda: su texto es un enlace a su detalle (`destino`), que se abre con el teclado o con el
    dedo; el `title` lo enseña además al pasar el ratón."""
    e = html.escape
    lineas = chr(10).join(veredicto.lineas_para_leer(celda.comprobacion)) if celda.comprobacion else celda.texto
    numeros = ""
    if celda.tests_total:
        pasan = tests_pasan(celda)
        numeros = f"{pasan}/{celda.tests_total} tests" if pasan != SIN_COMPROBAR else \
            f"{celda.tests_total} tests, sin comprobar"
    if celda.ejercicios_total:
        hechos = ejercicios_hechos(celda)
        numeros += (" · " if numeros else "") + (
            f"{hechos}/{celda.ejercicios_total} ej." if hechos != SIN_COMPROBAR else
            f"{celda.ejercicios_total} ej., sin comprobar")
    return (f'<td class="{celda.estado}" title="{e(lineas)}"><a href="#{destino}">{e(celda.texto)}</a>'
            + (f"<small>{e(numeros)}</small>" if numeros else "") + "</td>")


def pagina_html(filas, lecciones, limite, faltan=0):
    """La página entera (ver el docstring del módulo). `faltan`: alumnos que no llegaron a
    calificarse (un Ctrl-C)."""
    e = html.escape
    cabecera = "".join(f"<th>{n:02d} {e(l.nombre.replace('_', ' '))}</th>" for n, l in lecciones.items())
    cuerpo = []
    for i, fila in enumerate(filas):
        tests = sum(fila.celdas[n].tests_pasan for n in lecciones)
        total = sum(fila.celdas[n].tests_total for n in lecciones)
        hechos = sum(fila.celdas[n].ejercicios_hechos for n in lecciones)
        ejercicios = sum(fila.celdas[n].ejercicios_total for n in lecciones)
        donde = f"<small>{e(fila.alumno.donde)}</small>" if fila.alumno.donde else ""
        cuerpo.append(f"<tr><th>{e(fila.alumno.nombre)}{donde}</th>"
                      + "".join(_td(fila.celdas[n], ancla(i, n)) for n in lecciones)
                      + _td(fila.todo_junto, ancla(i, None))
                      + f"<td>{tests}/{total} tests<small>{hechos}/{ejercicios} ejercicios</small></td></tr>")
    resumen = "".join(f"<td>{e(_resumen_de_columna([f.celdas[n] for f in filas]))}</td>" for n in lecciones)
    resumen += f"<td>{e(_resumen_de_columna([f.todo_junto for f in filas]))}</td><td></td>"
    leyenda = "".join(f'<span class="{estado}">{simbolo} {e(texto)}</span>' for estado, simbolo, texto in LEYENDA)
    aviso = (f'<p class="roja"><strong>Interrumpido:</strong> faltan {faltan} alumnos por calificar; '
             "vuelve a lanzar la orden y seguirá donde lo dejó (lo hecho está en la caché).</p>") if faltan else ""
    return f"""<!DOCTYPE html>
<html lang="es">
<head><meta charset="utf-8"><title>Calificaciones del curso</title><style>{ESTILO}</style></head>
<body>
<h1>Calificaciones del curso</h1>
{aviso}<p>Una fila por alumno y una columna por lección. Cada celda mira lo que esa lección añade o
cambia: los tests que trae su punto de control, con los módulos del alumno. Un módulo cuyos tests no
pasan con su espacio entero se repite con la versión de referencia de los demás: si sigue fallando, es
el <em>culpable</em>; si no, falla solo por otro y se nombra detrás de él («durable.py, por
resumenes.py»), así un fallo de otra lección no pinta esta de rojo. <strong>Todo junto</strong> es su espacio entero
contra todos esos tests. Cada test tiene {limite:g} s como mucho. Cada celda lleva a su detalle,
más abajo (con el ratón, el teclado o el dedo); al pasar el ratón, sus líneas.</p>
<p class="leyenda">{leyenda}</p>
<table class="notas">
<thead><tr><th class="alumno">alumno</th>{cabecera}<th>todo junto</th><th class="numeros">en total</th></tr></thead>
<tbody>
{chr(10).join(cuerpo)}
</tbody>
<tfoot><tr><th>por lección</th>{resumen}</tr></tfoot>
</table>
<h2>Por alumno</h2>
{chr(10).join(_detalle(fila, lecciones, i) for i, fila in enumerate(filas))}
</body>
</html>
"""


def _detalle(fila, lecciones, i):
    """El detalle de un alumno, plegado: se abre al llegar a él desde una celda (un navegador abre
    el <details> que contiene el destino de un enlace) o al pulsar su resumen."""
    e = html.escape
    problema = primer_problema(fila)
    if problema:
        resumen = f"{problema['donde']}: {problema['que']}"
        pista = (f'<p class="pista"><strong>Pista del ejercicio {e(problema["ejercicio"])}:</strong> '
                 f'{e(problema["pista"])}</p>') if problema["pista"] else ""
        primero = f"<p><strong>Primer problema</strong>, {e(resumen)}</p>{pista}"
    else:
        resumen, primero = comentario(fila), ""
    partes = []
    for n, celda in list(fila.celdas.items()) + [(None, fila.todo_junto)]:
        titulo = f"{n:02d} {lecciones[n].nombre}" if n is not None else "todo junto"
        h4 = f'<h4 id="{ancla(i, n)}">'
        if celda.comprobacion is None:
            partes.append(f"{h4}{e(titulo)}: {e(celda.texto)}</h4>")
            continue
        c = celda.comprobacion
        lineas = veredicto.lineas_para_leer(c) + [f"· {nota}" for nota in c.notas]
        lineas += [f"{'✔' if r.estado == aparte.PASA else '✘'} ejercicio {id}"
                   + (f": {r.motivo}" if r.motivo and r.estado != aparte.PASA else "")
                   for id, r in c.ejercicios.items()]
        partes.append(f"{h4}{e(titulo)}: {_de(tests_pasan(celda), celda.tests_total)} tests</h4>"
                      f"<pre>{e(chr(10).join(lineas))}</pre>")
    return (f'<details id="a{i}"><summary><strong>{e(fila.alumno.nombre)}</strong> · {e(resumen)}</summary>'
            f"{primero}{''.join(partes)}</details>")


# ---------------------------------------------------------------- la devolución


def devolucion(fila, lecciones):
    """El texto para dar a un alumno: cada lección con sus líneas, su primer problema y la pista."""
    lineas = [f"Construye tu agente · lo que dicen los tests de tu espacio ({fila.alumno.nombre})"]
    if fila.alumno.donde:
        lineas.append(f"Tu espacio: {fila.alumno.donde}")
    problema = primer_problema(fila)
    if problema:
        lineas += ["", f"Lo primero que mirar: {problema['donde']}, {problema['que']}"]
        if problema["pista"]:
            lineas.append(f"Pista del ejercicio {problema['ejercicio']}: {problema['pista']}")
    for n, celda in list(fila.celdas.items()) + [(None, fila.todo_junto)]:
        titulo = f"Lección {n:02d} ({lecciones[n].nombre})" if n is not None else "Todo junto"
        lineas.append("")
        if celda.comprobacion is None:
            lineas.append(f"{titulo}: {celda.texto}")
            continue
        c = celda.comprobacion
        ejercicios = f", {_de(ejercicios_hechos(celda), len(c.ejercicios))} ejercicios" if c.ejercicios else ""
        lineas.append(f"{titulo}: {celda.texto} ({_de(tests_pasan(celda), c.tests_total)} tests{ejercicios})")
        lineas += [f"  {texto}" for texto in veredicto.lineas_para_leer(c)]
    ultima = max((n for n, c in fila.celdas.items() if c.comprobacion is not None), default=None)
    if ultima is not None:
        lineas += ["", f"Para verlo tú: python -m curso comprobar {ultima:02d} (tus módulos contra los tests) "
                       f"y python -m curso comparar {ultima:02d} (en qué difieren del punto de control)."]
    return "\n".join(lineas) + "\n"
