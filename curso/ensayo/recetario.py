"""Para las lecciones 01 a 04: lo que contesta el servidor de ensayo con `guion:arregla`, `atasco` y `compacta`.

Reproducen sobre `recetario/` lo que se vio con un modelo local pequeño de verdad:

- `arregla`: lee, ejecuta los tests, arregla los tres errores citando exactamente, vuelve a
  ejecutar los tests (pasan todos) y termina con un texto.
- `atasco`: el fallo de la traza real. Lee recetas.txt, recetario.py y compra.py, ejecuta los
  tests y luego intenta editar recetario.py, pero en `antiguo` pone otras comillas que las del
  fichero (en el docstring, las triples; en la receta, las «»); `editar` lo rechaza, relee el
  fichero y vuelve a equivocarse igual, hasta el tope de 10 turnos.
- `compacta` (lección 03): la misma ejecución con compactación, y los tres fallos de sus
  resúmenes en la traza real: un resumen que cree el docstring de `ingredientes` y no su código,
  una cita de una función `veces` que no existe escrita a partir del resumen, y un resumen que
  dice «he modificado compra.py» sin que se haya modificado nada.

Como todo guion, solo miran la petición: el turno sale de los mensajes del asistente que trae y
de los ids de sus llamadas (ver `turno_de`), y lo que citan sale de la lectura de recetario.py
que el propio modelo hizo antes.

Con los guiones va `usuario_guionizado`, el que contesta a los permisos en esas ejecuciones: es
parte del escenario del recetario, no del harness.
"""
import re

from curso.ensayo.guiones import (bloques, contenido_de_resultado, guion, id_llamada, llamada,
                                  resultados, texto, texto_de, turnos_asistente, ultimo_usuario)

TESTS = "python3 -m unittest"
MODULOS_QUE_SE_ARREGLAN = ("recetario.py", "compra.py")  # donde están los tres errores


def usuario_guionizado(nombre, entrada):
    """El usuario de los cuadernos con el recetario: sí a ejecutar sus tests y a editar sus dos
    módulos; no a lo demás. Es del guion, no del harness: el harness solo sabe que hay un usuario
    (`permisos.atender(llamada, entorno, usuario)`). En la terminal, `correr.py` contesta lo mismo
    sin importarlo, con `--permitir-orden "python3 -m unittest" --permitir-editar recetario.py
    --permitir-editar compra.py`."""
    if nombre == "ejecutar":
        return entrada.get("comando") == TESTS
    if nombre == "editar":
        return entrada.get("ruta") in MODULOS_QUE_SE_ARREGLAN
    return False

# Los tres arreglos de `arregla`, citados tal cual de recetario/ (el test de tests/ guarda los suyos).
ARREGLOS = [
    ("recetario.py", '    partes[-1].rstrip(".")\n', '    partes[-1] = partes[-1].rstrip(".")\n'),
    ("recetario.py", "[parte.strip() for parte in", "[parte.strip().lower() for parte in"),
    ("compra.py", "if nombre.lower() not in todas", "if nombre not in todas"),
]


# La petición del resumen acaba con la INSTRUCCION de compactar.py (checkpoints/03_compactar/), que
# empieza por estas palabras. Los guiones no importan el harness: si allí cambian, cambian aquí.
MARCA_DEL_RESUMEN = "Hora de compactar."

# Los ids de `id_llamada`: el turno y la llamada. Un turno de más de seis cifras no lo pudo dar el
# guion (un millón de turnos no caben en ninguna ventana): ese id no es suyo, y no cuenta.
ID_DEL_ENSAYO = re.compile(r"toolu_ensayo_(\d{1,6})_\d{1,6}")


def es_resumen(peticion):
    """¿Es la petición del resumen? Su último mensaje es la instrucción de compactar."""
    ultimo = peticion["messages"][-1]
    return ultimo["role"] == "user" and texto_de(bloques(ultimo["content"])).startswith(MARCA_DEL_RESUMEN)


def llamadas_de(peticion):
    """Todas las llamadas (bloques `tool_use`) que trae la petición, en orden."""
    return [b for m in peticion["messages"] if m["role"] == "assistant"
            for b in bloques(m["content"]) if b["type"] == "tool_use"]


def turno_de(peticion):
    """El turno que toca contestar: uno más que el último que trae la petición.

    Sin compactación, el último turno es el número de mensajes del asistente. Una compactación
    los quita, pero no los turnos recientes, y éstos conservan los ids `toolu_ensayo_<turno>_<i>`
    que les dio el guion: el mayor de esos turnos es el último. Se toma el mayor de las dos
    cuentas, así que sin compactar sale lo mismo que contando mensajes.
    """
    ids = [int(m.group(1)) for ll in llamadas_de(peticion) if (m := ID_DEL_ENSAYO.fullmatch(ll["id"]))]
    return 1 + max([turnos_asistente(peticion)] + ids)


def lectura(peticion, ruta):
    """El texto de la última lectura de `ruta` que trae la petición, o "" si no lo ha leído."""
    pedidas, ultima = {}, ""
    for mensaje in peticion["messages"]:
        if not isinstance(mensaje["content"], list):
            continue
        for b in mensaje["content"]:
            if b["type"] == "tool_use" and b["name"] == "leer":
                pedidas[b["id"]] = b["input"].get("ruta")
            elif b["type"] == "tool_result" and pedidas.get(b["tool_use_id"]) == ruta and not b.get("is_error"):
                ultima = contenido_de_resultado(b)
    return ultima


def funcion(fuente, nombre):
    """El texto de `def nombre(...)` en `fuente`, hasta la línea en blanco que lo separa del siguiente."""
    m = re.search(rf"^def {nombre}\(.*?(?=\n\n\n|\Z)", fuente, re.S | re.M)
    return m.group(0) if m else f"def {nombre}(receta):\n    ..."


# Cuántas líneas de cada función cita el modelo en sus editar: calibrado para que cada llamada
# cueste lo que costó en la traza real (unos 290 tokens la de separar, unos 360 la de ingredientes).
LINEAS_CITADAS = {"separar": 5, "ingredientes": 6}


def cabeza(codigo, lineas):
    """Las primeras `lineas` líneas de `codigo`."""
    return "\n".join(codigo.split("\n")[:lineas])


def mal_citado(codigo):
    """`codigo` citado como lo citaba el modelo: comillas triples y «» cambiadas por comillas simples."""
    return codigo.replace('"""', '"\\"').replace("«", '\\"').replace("»", '\\"')


def ultima_observacion(peticion):
    """El texto del primer tool_result del último mensaje del usuario, o ""."""
    vueltas = resultados(ultimo_usuario(peticion))
    return contenido_de_resultado(vueltas[0]) if vueltas else ""


# Lo que resume `arregla` si compacta (lección 03: con 4096 de umbral, después del turno 7).
RESUMEN_DE_ARREGLA = (
    "Los tests fallaban (FAILED). He leído recetario.py y compra.py. En recetario.py, ingredientes "
    "no guardaba el resultado de rstrip ni pasaba a minúsculas: lo he arreglado con dos editar que "
    "han ido bien. En compra.py, comprobar_menu busca el nombre en minúsculas, pero las recetas "
    "empiezan por mayúscula. Me falta arreglar eso y volver a ejecutar los tests.")


@guion("arregla")
def arregla(peticion):
    """Lee, prueba, arregla los tres errores, vuelve a probar y cuenta cómo ha quedado."""
    if es_resumen(peticion):
        return [texto(RESUMEN_DE_ARREGLA)]
    turno = turno_de(peticion)
    i = id_llamada(turno)
    if turno == 1:
        return [texto("Primero ejecuto los tests para ver qué falla."), llamada(i, "ejecutar", comando=TESTS)]
    if turno == 2:
        return [texto("Fallan tests de los dos módulos. Leo recetario.py."), llamada(i, "leer", ruta="recetario.py")]
    if turno == 3:
        return [llamada(i, "leer", ruta="compra.py")]
    if 4 <= turno <= 6:
        ruta, antiguo, nuevo = ARREGLOS[turno - 4]
        motivos = ["ingredientes no guarda el resultado de rstrip: el punto final se queda.",
                   "ingredientes no pasa a minúsculas, aunque su docstring lo dice.",
                   "compra busca el nombre en minúsculas, pero las recetas empiezan por mayúscula."]
        return [texto(motivos[turno - 4]), llamada(i, "editar", ruta=ruta, antiguo=antiguo, nuevo=nuevo)]
    if turno == 7:
        return [texto("Vuelvo a ejecutar los tests."), llamada(i, "ejecutar", comando=TESTS)]
    salida = ultima_observacion(peticion).strip().splitlines()
    final = salida[-1] if salida else "(sin salida)"
    ran = next((l for l in salida if l.startswith("Ran ")), "")
    cuantos = ran.split()[1] if ran else "?"
    if final == "OK":
        return [texto(f"Hecho. Había tres errores: el punto final de los ingredientes, que no se "
                      f"quitaba; los ingredientes, que no pasaban a minúsculas; y compra, que "
                      f"buscaba las recetas en minúsculas. Ahora pasan los {cuantos} tests (OK).")]
    return [texto(f"He hecho los tres cambios, pero los tests siguen fallando: {final}")]


@guion("atasco")
def atasco(peticion):
    """La traza real del atasco: lecturas, tests y tres editar mal citados, hasta el tope."""
    turno = turnos_asistente(peticion) + 1
    i = id_llamada(turno)
    lecturas = {1: "recetas.txt", 2: "recetario.py", 3: "compra.py"}
    if turno in lecturas:
        return [llamada(i, "leer", ruta=lecturas[turno])]
    if turno == 4:
        return [llamada(i, "ejecutar", comando=TESTS)]
    if turno % 2 == 0:  # 6, 8, 10...: el error le dice que copie tal cual, y relee
        return [llamada(i, "leer", ruta="recetario.py")]
    fuente = lectura(peticion, "recetario.py")
    if turno % 4 == 3:  # 7, 11...: ingredientes, con el arreglo de las minúsculas y del punto
        antiguo = cabeza(funcion(fuente, "ingredientes"), LINEAS_CITADAS["ingredientes"])
        nuevo = antiguo.replace("[parte.strip() for", "[parte.strip().lower() for")
    else:  # 5, 9...: separar, con un «arreglo» que no arregla nada
        antiguo = cabeza(funcion(fuente, "separar"), LINEAS_CITADAS["separar"])
        nuevo = antiguo + "\n    receta = receta.strip().lower()"
    return [llamada(i, "editar", ruta="recetario.py", antiguo=mal_citado(antiguo), nuevo=mal_citado(nuevo))]


# --- compacta (lección 03) -------------------------------------------------------------------

# Lo que cita en los turnos 7 y 9: una función `veces` que no está en ningún fichero. La ha escrito
# a partir del primer resumen, sin leer compra.py, donde `veces` es otra: veces(ingrediente, menu).
VECES_INVENTADA = '''def veces(recetario, ingredientes):
    """Devuelve una lista de tuplas (ingrediente, veces), en orden de aparición en el recetario.

    recetario es el diccionario de recetas() e ingredientes, la lista de lo que se busca: cuenta
    en cuántas recetas aparece cada uno. Los que no están en ninguna receta no salen en la
    lista, ni con cero.
    """
    cuenta = {}
    for nombre, lista in recetario.items():
        for ingrediente in lista:
            if ingrediente in ingredientes:
                cuenta[ingrediente] = cuenta.get(ingrediente, 0) + 1
    return [(ingrediente, cuenta[ingrediente]) for ingrediente in cuenta]'''

# Los tres resúmenes, uno por compactación. Cada uno trae un fallo de la traza real.
RESUMENES = {
    # 1.º (después del turno 5): cree el docstring de `ingredientes`, no su código, y pone el
    # error en compra.py.
    "lecturas": (
        "He leído recetas.txt, recetario.py y compra.py. En recetas.txt hay una receta por línea, "
        "«Nombre: ingrediente, ingrediente.», y algunos ingredientes van con mayúscula («Huevos»). "
        "En recetario.py, separar divide la línea en el nombre y los ingredientes, y la función "
        "ingredientes ya los normaliza: los pasa a minúsculas y les quita el punto final, así que "
        "recetario.py está bien. compra.py tiene compra, comprobar_menu, veces, lista y falta. El "
        "error está en compra.py: veces cuenta los ingredientes de las recetas, pero no los pasa a "
        "minúsculas antes de compararlos, y eso causa errores de coincidencia. Todavía no he "
        "cambiado nada. Me falta arreglar veces en compra.py para que compare en minúsculas, y "
        "ejecutar python3 -m unittest para comprobarlo."),
    # 2.º (después del turno 7): da por buena la `veces` que el modelo se inventó en el turno 7.
    "recetario": (
        "Los tests fallan: FAILED (failures=2, errors=3), con fallos en los dos módulos. He leído "
        "recetas.txt, recetario.py y compra.py. En recetario.py, separar divide cada línea en el "
        "nombre y los ingredientes, e ingredientes ya los pasa a minúsculas y quita el punto "
        "final: ese módulo está bien y no hay que tocarlo. Quise editar separar en recetario.py y "
        "falló porque antiguo no aparecía en el fichero, así que no se cambió nada. El error está "
        "en compra.py: la función veces(recetario, ingredientes) devuelve una lista de tuplas "
        "(ingrediente, veces), pero no normaliza los ingredientes antes de compararlos, y por eso "
        "«Huevos» y «huevos» no coinciden. No he hecho ningún cambio efectivo. Me falta cambiar "
        "veces en compra.py para que pase los ingredientes a minúsculas, y volver a ejecutar "
        "python3 -m unittest para comprobar que pasan todos."),
    # 3.º (después del turno 10): dice que ha modificado compra.py, y ningún editar ha salido bien.
    "compra": (
        "He leído recetario.py y compra.py. recetario.py está bien: ingredientes pasa los "
        "ingredientes a minúsculas y quita el punto final. He identificado que compra.py no "
        "normaliza los ingredientes a minúsculas antes de compararlos, como sí hace recetario.py. "
        "Para corregirlo, he modificado compra.py para que veces(recetario, ingredientes) "
        "convierta todos los ingredientes a minúsculas antes de contarlos. Me falta ejecutar "
        "python3 -m unittest para comprobar que los tests pasan y, si algo sigue fallando, "
        "revisar compra."),
}

# Los textos que acompañan a algunas llamadas, y el informe final si el tope lo deja llegar.
TEXTOS_DE_COMPACTA = {
    8: ("La edición de compra.py ha fallado: antiguo no aparece en el fichero. Según mi resumen, el "
        "error está en veces(recetario, ingredientes), que no pasa los ingredientes a minúsculas "
        "antes de compararlos, y eso es lo que hay que arreglar. Puede que haya copiado mal las "
        "comillas o algún espacio, como me pasó antes con recetario.py. Leo compra.py para ver el "
        "texto exacto de veces antes de volver a editar, y esta vez copio antiguo tal cual."),
    10: ("Antes de intentar otro cambio en veces, ejecuto los tests para ver qué falla ahora en "
         "compra.py y en recetario.py, y si el error de las minúsculas sigue ahí o ya está "
         "arreglado."),
    11: ("He modificado compra.py para que veces compare los ingredientes en minúsculas. Con "
         "estos cambios, los tests ahora pasan."),
}


def resumen_de_compacta(peticion):
    """El resumen de `compacta`: depende de lo que ha intentado editar en lo que trae la petición."""
    editados = [ll["input"].get("ruta") for ll in llamadas_de(peticion) if ll["name"] == "editar"]
    if "compra.py" in editados:
        return RESUMENES["compra"]
    return RESUMENES["recetario"] if editados else RESUMENES["lecturas"]


def cita_inventada():
    """(antiguo, nuevo) del editar de compra.py de los turnos 7 y 9, que no puede salir bien:
    la `veces` inventada, y la misma con los ingredientes en minúsculas."""
    en_minusculas = "    ingredientes = [i.lower() for i in ingredientes]\n"
    nuevo = (VECES_INVENTADA.replace("    cuenta = {}", en_minusculas + "    cuenta = {}")
             .replace("if ingrediente in ingredientes:", "if ingrediente.lower() in ingredientes:"))
    return VECES_INVENTADA, nuevo


@guion("compacta")
def compacta(peticion):
    """La traza real con compactación: el atasco hasta el turno 5, y tres resúmenes con sus fallos.

    Con el umbral de 4096 y dos turnos recientes, la compactación salta después de los turnos 5,
    7 y 10, ni antes ni después: los tamaños de los resúmenes y de los textos están calibrados
    para eso y para quedar cerca de las cifras de curso/material/datos/traza_real.json. Solo mira la
    petición: la del resumen se reconoce por su último mensaje (`es_resumen`), y el resumen que
    toca, por lo que ha intentado editar en lo que trae (nada, recetario.py o compra.py); en las
    demás, el turno sale de `turno_de`, que sigue contando bien después de compactar.

    Los editar de los turnos 7 y 9 escriben 504 tokens, cerca de los 512 de `max_tokens` del
    harness: si crecieran, el servidor los cortaría.
    """
    if es_resumen(peticion):
        return [texto(resumen_de_compacta(peticion))]
    turno = turno_de(peticion)
    i = id_llamada(turno)
    lecturas = {1: "recetas.txt", 2: "recetario.py", 3: "compra.py", 6: "recetario.py"}
    if turno in lecturas:  # las tres lecturas del atasco y, después del error, otra de recetario.py
        return [llamada(i, "leer", ruta=lecturas[turno])]
    if turno == 4:
        return [llamada(i, "ejecutar", comando=TESTS)]
    if turno == 5:  # separar con las comillas triples cambiadas (las «» sí, tal cual)
        antiguo = cabeza(funcion(lectura(peticion, "recetario.py"), "separar"), LINEAS_CITADAS["separar"])
        nuevo = antiguo + "\n    receta = receta.strip().lower()"
        triples = '"""', '"\\"'
        return [llamada(i, "editar", ruta="recetario.py", antiguo=antiguo.replace(*triples),
                        nuevo=nuevo.replace(*triples))]
    if turno in (7, 9):  # la misma cita inventada, antes y después de leer compra.py
        antiguo, nuevo = cita_inventada()
        return [llamada(i, "editar", ruta="compra.py", antiguo=antiguo, nuevo=nuevo)]
    if turno == 8:
        return [texto(TEXTOS_DE_COMPACTA[8]), llamada(i, "leer", ruta="compra.py")]
    if turno == 10:
        return [texto(TEXTOS_DE_COMPACTA[10]), llamada(i, "ejecutar", comando=TESTS)]
    return [texto(TEXTOS_DE_COMPACTA[11])]  # el informe inventado, y se acaba
