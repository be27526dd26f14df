"""Para el widget y los tests de las carreras: lo que se lee de una exploración, calculado sin widgets.

Equipo del curso; lo estrena la lección 04 (dos resumidores y un mensaje que llega) y lo reutiliza
la 05 (el buzón). El widget (`curso/explorables/carreras/widget_de_las_carreras.py`) solo coloca lo que sale de aquí; los
textos son deterministas, así que un cuaderno puede imprimirlos y nbval compararlos:

    exploracion = explorar(ESCENARIO, "ingenua")
    print(totales(exploracion))          # 140 intercalados: 14 correctos, 126 ..., 63 pierden cobertura
    print(panel(exploracion, 5))         # el intercalado n.º 5: orden, cómo acaba, qué invariantes cumple
    print(dibujar_carriles(exploracion.registros[4]))   # el mismo, en carriles de texto
    print(transacciones(exploracion.registros[4], 6))  # su paso 6: qué leyó y escribió cada transacción

Todo es genérico sobre `curso.explorables.carreras.Exploracion`: «cómo acaba» un intercalado es lo que el
escenario anota como su resultado, y los fallos se nombran con las etiquetas (`fallo`) de las
invariantes del propio escenario.

Qué paso «rompe» un intercalado no lo dicen las invariantes (se comprueban al final). Aquí se
señala el primer paso en que el intercalado se aparta del MISMO intercalado con la variante
correcta: lo que ese paso contesta, o la foto de la base de datos tras él, ya es distinto. Es ahí
donde el código ingenuo empieza a hacer otra cosa.
"""
import html

from curso.explorables.carreras.bitacora import CONFIRMA, DESHACE, EMPIEZA, ESPERA, PIERDE

CORRECTA = "correcta"  # el nombre de la variante de referencia en cada escenario del curso

# Cómo le fue a cada paso, su color en los carriles y lo que dice la leyenda, en este orden.
BIEN, ERROR, ROMPE, NO_OCURRE = "bien", "error", "rompe", "no-ocurre"
ESTADOS = {
    BIEN: ("#e3f1e0", "sin novedad"),
    ROMPE: ("#f7c6c5", "el primer paso que se aparta de la variante correcta"),
    ERROR: ("#fbd9a6", "una excepción no prevista"),
    NO_OCURRE: ("#ececec", "no llega a ocurrir (su actor cayó antes)"),
}


# --- Elegir ---------------------------------------------------------------------------------

def variantes_en_orden(escenario, variantes=None):
    """Los nombres de las variantes que se ofrecen: la correcta primero y después las ingenuas.

    `variantes` elige algunas (en el orden dado); la correcta se añade siempre, porque es la
    referencia de la comparación. Un nombre que el escenario no tiene da ValueError.
    """
    existentes = list(escenario.variantes)
    if variantes is None:
        pedidas = existentes
    elif isinstance(variantes, str):
        pedidas = [variantes]
    else:
        pedidas = list(variantes)
    for nombre in pedidas:
        if nombre not in escenario.variantes:
            opciones = ", ".join(repr(n) for n in existentes)
            raise ValueError(f"el escenario «{escenario.nombre}» no tiene la variante {nombre!r}; "
                             f"tiene {opciones}")
    orden = [CORRECTA] if CORRECTA in escenario.variantes else []
    for nombre in pedidas:
        if nombre not in orden:
            orden.append(nombre)
    return orden


def vecino_que_falla(exploracion, i, sentido):
    """El número del intercalado que falla más cerca de `i` hacia delante (`sentido` > 0) o hacia
    atrás (`sentido` < 0), sin contar `i`; None si no queda ninguno en ese sentido."""
    numeros = [r.numero for r in exploracion.registros if not r.correcto]
    if sentido > 0:
        return next((n for n in numeros if n > i), None)
    return next((n for n in reversed(numeros) if n < i), None)


def registro_de(exploracion, i):
    """El registro del intercalado n.º `i` (desde 1, como los cuenta el explorador)."""
    if not isinstance(i, int) or isinstance(i, bool):
        raise ValueError(f"el intercalado tiene que ser un número entero, no {i!r}")
    if not 1 <= i <= exploracion.total:
        raise ValueError(f"no hay intercalado n.º {i}: «{exploracion.escenario}» tiene del 1 al "
                         f"{exploracion.total}")
    registro = exploracion.registros[i - 1]
    assert registro.numero == i, "el explorador numera los intercalados desde 1, en orden"
    return registro


# --- Los textos -----------------------------------------------------------------------------

def totales(exploracion):
    """«N intercalados: X correctos, Y <fallo>, ...», con las etiquetas de las invariantes rotas."""
    etiquetas = dict(exploracion.invariantes)
    texto = f"{exploracion.total} intercalados: {exploracion.correctos} correctos"
    for nombre, cuantos in exploracion.por_fallo().items():
        if cuantos:
            texto += f", {cuantos} {etiquetas[nombre]}"
    return texto


def orden_de(registro):
    """El orden de un intercalado en una línea: «A lee · B escribe · A instala»."""
    return " · ".join(f"{actor} {paso}" for actor, paso in registro.orden)


def resumen(exploracion):
    """Los totales, cómo acaban los intercalados y, por cada invariante rota, el primero que la rompe."""
    lineas = [f"Escenario «{exploracion.escenario}», variante «{exploracion.variante}».",
              totales(exploracion) + ".", "Cómo acaban:"]
    lineas += [f"  {cuantos:>4} × {resultado}" for resultado, cuantos in exploracion.por_resultado().items()]
    for nombre, cuantos in exploracion.por_fallo().items():
        if cuantos:
            primero = exploracion.que_rompen(nombre)[0]
            lineas.append(f"Rompen «{nombre}»: {cuantos}. El primero, n.º {primero.numero}: {orden_de(primero)}.")
    return "\n".join(lineas)


def _que_falla(exploracion):
    return [r for r in exploracion.registros if not r.correcto]


def comparacion(exploracion, correcta):
    """Una línea que compara la variante de `exploracion` con la de referencia, `correcta`."""
    if exploracion.escenario != correcta.escenario or exploracion.total != correcta.total:
        raise ValueError(f"no se pueden comparar «{exploracion.escenario}» y «{correcta.escenario}»: "
                         "son escenarios distintos")
    total = correcta.total
    if exploracion.variante == correcta.variante:
        return (f"Es la variante de referencia («{correcta.variante}»): {correcta.correctos} de "
                f"{total} correctos.")
    texto = (f"Frente a «{correcta.variante}» ({correcta.correctos} de {total} correctos), "
             f"«{exploracion.variante}» tiene {exploracion.correctos} de {total}")
    fallan = _que_falla(exploracion)
    if not fallan:
        return texto + (": en este escenario no falla ningún intercalado, y eso no la hace correcta "
                        "(puede que este escenario no pase por donde se equivoca).")
    return texto + f"; el primero que falla es el n.º {fallan[0].numero}."


def cruce(por_escenario):
    """Una tabla de texto con cada variante frente a cada escenario, y qué escenarios la pillan.

    `por_escenario` es {etiqueta: {variante: Exploracion}}, los mismos nombres de variante en
    cada escenario. Cada celda dice cuántos intercalados salen correctos, «20/20», con una ✘
    delante si alguno falla. La última columna nombra los escenarios que pillan a la variante:
    aquellos en los que falla algún intercalado. Un «20/20» de una variante ingenua no la
    absuelve: ese escenario no pasa por donde ella se equivoca.
    """
    etiquetas = list(por_escenario)
    if not etiquetas:
        raise ValueError("no hay ningún escenario que cruzar")
    variantes = list(por_escenario[etiquetas[0]])
    for etiqueta in etiquetas[1:]:
        if list(por_escenario[etiqueta]) != variantes:
            raise ValueError(f"el escenario «{etiqueta}» no tiene las mismas variantes que "
                             f"«{etiquetas[0]}»")
    celdas = {}
    for etiqueta in etiquetas:
        for variante, exploracion in por_escenario[etiqueta].items():
            marca = "✘ " if exploracion.correctos < exploracion.total else ""
            celdas[variante, etiqueta] = f"{marca}{exploracion.correctos}/{exploracion.total}"
    filas = [["variante"] + etiquetas + ["la pillan"]]
    for variante in variantes:
        pillan = [e for e in etiquetas if celdas[variante, e].startswith("✘")]
        filas.append([variante] + [celdas[variante, e] for e in etiquetas]
                     + [", ".join(pillan) or "ninguno"])
    anchos = [max(len(fila[i]) for fila in filas) for i in range(len(filas[0]))]
    lineas = []
    for fila in filas:
        partes = ([fila[0].ljust(anchos[0])]
                  + [celda.rjust(ancho) for celda, ancho in zip(fila[1:-1], anchos[1:-1], strict=True)]
                  + [fila[-1]])
        lineas.append("   ".join(partes).rstrip())
    return "\n".join(lineas)


def panel(exploracion, i):
    """El intercalado n.º `i`: su orden, cómo acaba, cada invariante (✔/✘) y los errores."""
    registro = registro_de(exploracion, i)
    rotas = set(registro.fallos)
    lineas = [
        f"Intercalado {registro.numero} de {exploracion.total}, variante «{exploracion.variante}».",
        "Orden: " + orden_de(registro) + ".",
        f"Cómo acaba: {registro.resultado or '(el escenario no lo anota)'}.",
        "Invariantes:",
    ]
    lineas += [f"  {'✘' if nombre in rotas else '✔'} {nombre}" for nombre, _ in exploracion.invariantes]
    lineas += [f"Error en el paso {e.posicion} ({e.actor} {e.paso}): {e.error}"
               for e in registro.eventos if e.error]
    return "\n".join(lineas)


# --- Lo que leyó y escribió cada transacción ------------------------------------------------

COMO_ACABA = {
    CONFIRMA: "confirmada en el paso {}",
    DESHACE: "deshecha en el paso {} con ROLLBACK: no queda nada de ella",
    PIERDE: "perdida en el paso {}: la conexión se cerró sin confirmar, no queda nada de ella",
}


def _transacciones_hasta(registro, posicion):
    """{(actor, número): {"lineas": [(paso, Operacion)], "fin": (paso, cómo) o None, "explicita"}},
    en el orden en que aparecen, con lo ocurrido hasta el paso `posicion` incluido."""
    todas = {}
    for evento in registro.eventos[:posicion]:
        for op in evento.operaciones:
            t = todas.setdefault((evento.actor, op.transaccion), {"lineas": [], "fin": None, "explicita": False})
            t["lineas"].append((evento.posicion, op))
            t["explicita"] |= op.clase == EMPIEZA
            if op.clase in COMO_ACABA:
                t["fin"] = (evento.posicion, op.clase)
            elif op.suelta:
                t["fin"] = (evento.posicion, "suelta")
    return todas


def transacciones(registro, posicion):
    """Para el paso n.º `posicion` (desde 1) de `registro`, qué leyó y qué escribió cada
    transacción: las que actúan en ese paso y las que siguen abiertas tras él (las de otros actores
    que aún no han confirmado), cada una con sus sentencias desde que empezó, el paso de cada una, y
    cómo acaba. Sale de lo que anotó el explorador (`Evento.operaciones`)."""
    if not isinstance(posicion, int) or isinstance(posicion, bool) or not 1 <= posicion <= len(registro.eventos):
        raise ValueError(f"no hay paso n.º {posicion!r}: el intercalado n.º {registro.numero} tiene del 1 al "
                         f"{len(registro.eventos)}")
    evento = registro.eventos[posicion - 1]
    lineas = [f"Paso {posicion} de {len(registro.eventos)}: {evento.actor} {evento.paso} → {evento.resultado}."]
    elegidas = [(clave, t) for clave, t in _transacciones_hasta(registro, posicion).items()
                if any(p == posicion for p, _ in t["lineas"])
                or (t["fin"] is None and (t["explicita"] or t["lineas"][-1][1].clase == ESPERA))]
    if not elegidas:
        lineas.append("En este paso nadie lee ni escribe en la base, y no queda ninguna transacción abierta.")
    orden = {actor: i for i, actor in enumerate(registro.actores)}
    for (actor, numero), t in sorted(elegidas, key=lambda par: (orden.get(par[0][0], 0), par[0][1])):
        espera = t["lineas"][-1][1].clase == ESPERA
        if t["fin"] is None and not t["explicita"]:
            estado = "aún no ha empezado: espera a otra transacción"
        elif t["fin"] is None:
            estado = "sigue abierta, sin confirmar: los demás aún no ven lo que escribió" + (
                "; su última sentencia espera a otra transacción" if espera else "")
        elif t["fin"][1] == "suelta":
            estado = "una sola sentencia, sin BEGIN: se confirma al momento"
        else:
            estado = COMO_ACABA[t["fin"][1]].format(t["fin"][0])
        lineas.append(f"{actor}, transacción {numero} ({estado}):")
        lineas += [f"  paso {p:>2} · {op.clase:<8} {op.sentencia}" + (f" {op.resultado}" if op.resultado else "")
                   for p, op in t["lineas"]]
    return "\n".join(lineas)


# --- Los carriles en texto ----------------------------------------------------------------

def carriles(registro):
    """Las filas (actor, paso, posición, resultado) de un intercalado, en orden."""
    return [(e.actor, e.paso, e.posicion, e.resultado) for e in registro.eventos]


def dibujar_carriles(registro):
    """El intercalado en texto monoespaciado: una fila por paso, una columna por actor."""
    actores = list(registro.actores)
    cabecera = ["#"] + actores
    filas = []
    for actor, paso, posicion, resultado in carriles(registro):
        fila = [str(posicion)] + [""] * len(actores)
        fila[1 + actores.index(actor)] = f"{paso} → {resultado}"
        filas.append(fila)
    anchos = [max(len(fila[i]) for fila in [cabecera] + filas) for i in range(len(cabecera))]

    def linea(celdas):
        partes = [celdas[0].rjust(anchos[0])] + [c.ljust(a) for c, a in zip(celdas[1:], anchos[1:], strict=True)]
        return " | ".join(partes).rstrip()

    separador = "-+-".join("-" * a for a in anchos)
    return "\n".join([linea(cabecera), separador] + [linea(f) for f in filas])


# --- Los carriles en HTML -----------------------------------------------------------------

def desvio(registro, referencia):
    """La posición (desde 1) del primer paso en que `registro` se aparta de `referencia`, el mismo
    intercalado con la variante correcta, o None.

    Solo se busca si `registro` rompe alguna invariante y `referencia` recorre los mismos pasos en
    el mismo orden. Apartarse es contestar otra cosa o dejar otra foto de la base de datos.
    """
    if referencia is None or registro.correcto or registro.orden != referencia.orden:
        return None
    for propio, suyo in zip(registro.eventos, referencia.eventos, strict=True):
        if (propio.resultado, propio.observacion) != (suyo.resultado, suyo.observacion):
            return propio.posicion
    return None


def estados(registro, referencia=None):
    """Cómo le fue a cada paso, en orden: BIEN, ERROR, NO_OCURRE o ROMPE (ver `desvio`)."""
    primero = desvio(registro, referencia)
    caidos = set()
    resultado = []
    for evento in registro.eventos:
        if evento.posicion == primero:
            estado = ROMPE
        elif evento.error:
            estado = ERROR
        elif evento.actor in caidos:
            estado = NO_OCURRE
        else:
            estado = BIEN
        if evento.error:
            caidos.add(evento.actor)
        resultado.append(estado)
    return resultado


ELEGIDO = ("#1565c0", "el paso elegido: debajo, lo que leyó y escribió cada transacción")


def carriles_html(registro, referencia=None, elegido=None):
    """La tabla de carriles: una columna por actor, una fila por paso en el orden global, y cada
    celda del color de cómo le fue (`estados`). Lleva la clase CSS `carreras-carriles`; cada
    celda con paso, `carril-<estado>`; la fila del paso `elegido` (su posición, desde 1),
    `carreras-elegido`, con su número resaltado."""
    actores = list(registro.actores)
    estilo_celda = "border:1px solid #bbb;padding:3px 6px;vertical-align:top;text-align:left;line-height:1.3"
    cabecera = "".join(f'<th style="{estilo_celda};background:#f6f6f6">{html.escape(a)}</th>'
                       for a in actores)
    filas = []
    for evento, estado in zip(registro.eventos, estados(registro, referencia), strict=True):
        celdas = [""] * len(actores)
        color, explicacion = ESTADOS[estado]
        celdas[actores.index(evento.actor)] = (
            f'<td class="carril-{estado}" title="{html.escape(explicacion)}" '
            f'style="{estilo_celda};background:{color}"><b>{html.escape(evento.paso)}</b>'
            f' → {html.escape(evento.resultado)}</td>')
        if evento.posicion == elegido:
            numero = (f'<td style="{estilo_celda};background:{ELEGIDO[0]};color:#fff;text-align:right">'
                      f'<b>{evento.posicion}</b></td>')
        else:
            numero = f'<td style="{estilo_celda};color:#666;text-align:right">{evento.posicion}</td>'
        fila = '<tr class="carreras-elegido">' if evento.posicion == elegido else "<tr>"
        filas.append(fila + numero + "".join(c or f'<td style="{estilo_celda}"></td>' for c in celdas) + "</tr>")
    muestras = list(ESTADOS.values()) + ([ELEGIDO] if elegido is not None else [])
    leyenda = " ".join(
        f'<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;'
        f'width:10px;height:10px;border:1px solid #999;background:{color};margin-right:4px">'
        f'</span>{html.escape(texto)}</span>' for color, texto in muestras)
    return (f'<div class="carreras-carriles" style="font-family:sans-serif;font-size:12px">'
            f'<table style="border-collapse:collapse;margin:6px 0">'
            f'<thead><tr><th style="{estilo_celda};background:#f6f6f6">#</th>{cabecera}</tr></thead>'
            f'<tbody>{"".join(filas)}</tbody></table>'
            f'<div style="font-size:11px">{leyenda}</div></div>')
