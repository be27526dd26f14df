"""Los guiones del recetario: lo que contesta el servidor de ensayo con `guion:arregla` y `guion:atasco`.

Reproducen sobre `recetario/` lo que se vio con un modelo local pequeño de verdad:

- `arregla`: lee, ejecuta los tests, arregla los tres errores citando exactamente, vuelve a
  ejecutar los tests (pasan todos) y termina con un texto.
- `atasco`: el fallo de la traza real. Lee recetas.txt, recetario.py y compra.py, ejecuta los
  tests y luego intenta editar recetario.py citando `antiguo` con las comillas cambiadas (las
  triples del docstring y las «» de la receta); el error lo manda a releer el fichero, y vuelve a
  citar mal, hasta el tope de 10 turnos.

Como todo guion, sólo miran la petición: el turno es el número de mensajes del asistente que ya
trae, y lo que citan sale de la lectura de recetario.py que el propio modelo hizo antes.
"""
import re

from curso.ensayo.guiones import (contenido_de_resultado, guion, id_llamada, llamada, resultados,
                                  texto, turnos_asistente, ultimo_usuario)

TESTS = "python3 -m unittest"

# Los tres arreglos de `arregla`, citados tal cual de recetario/ (el test de tests/ guarda los suyos).
ARREGLOS = [
    ("recetario.py", '    partes[-1].rstrip(".")\n', '    partes[-1] = partes[-1].rstrip(".")\n'),
    ("recetario.py", "[parte.strip() for parte in", "[parte.strip().lower() for parte in"),
    ("compra.py", "if nombre.lower() not in todas", "if nombre not in todas"),
]


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


@guion("arregla")
def arregla(peticion):
    """Lee, prueba, arregla los tres errores, vuelve a probar y cuenta cómo ha quedado."""
    turno = turnos_asistente(peticion) + 1
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
