"""Llamadas con efectos: la intención antes de hacerla, el resultado después, y nunca dos veces.

Lección 06. Un proceso puede morir entre ejecutar una herramienta y apuntar su observación.
Volver a ejecutar `leer` o `buscar` no hace daño: solo miran. Volver a ejecutar `editar` sí:
o escribe dos veces (si `antiguo` sigue en el fichero tras la edición) o falla con «antiguo no
aparece», y en los dos casos la observación ya no es la que habría sido. Por eso, antes de
editar, se apunta la INTENCIÓN en la tabla `llamadas`, en su propio paso durable:

- la huella (SHA-256) del fichero ANTES;
- la huella que tendrá DESPUÉS y la observación que dará, sacadas de aplicar la edición a una
  copia del fichero en un borrador (con el mismo `editar` de herramientas.py);

y después de editar, el RESULTADO. Al reanudar, una intención sin resultado se decide mirando el
fichero: si tiene la huella de después, la edición se hizo (y su observación es la esperada);
si tiene la de antes, no se hizo, y se hace ahora; si no tiene ninguna de las dos, alguien más
lo cambió, y no se toca: el modelo recibe un error que lo dice.

`ejecutar` no se puede decidir así: una orden no deja huella comprobable. Con una intención sin
resultado no se repite (como mucho una vez): el modelo recibe un error que dice que no consta si
llegó a ejecutarse. Las llamadas que no se van a ejecutar (sin permiso, mal formadas) no tienen
efectos: las contesta `permisos.atender` como siempre.
"""
import hashlib
import json
import shutil

import herramientas
import historial
import pasos
from entorno import CATALOGO, resultado
from permisos import atender as atender_sin_efectos
from permisos import permitido, problema_de_argumentos

CON_EFECTOS = {"editar", "ejecutar"}
BORRADOR = ".borrador"  # carpeta, dentro de la de la ejecución, donde se ensaya una edición


def huella(fichero):
    """El SHA-256 del contenido de `fichero`, o None si no existe."""
    return hashlib.sha256(fichero.read_bytes()).hexdigest() if fichero.is_file() else None


def se_ejecutaria(llamada, usuario):
    """¿Llegaría `permisos.atender` a ejecutar esta llamada con efectos? (Sin permiso, o con los
    argumentos mal, contesta con un error sin ejecutar nada.)"""
    esquemas = {h["name"]: h for h in CATALOGO}
    nombre, entrada = llamada.get("name"), llamada.get("input")
    return (nombre in CON_EFECTOS and nombre in esquemas
            and problema_de_argumentos(esquemas[nombre], entrada) is None
            and permitido(nombre, entrada, usuario))


def atender(bd, agente, llamada, entorno, usuario, borrador):
    """La observación de `llamada` de `agente`: como `permisos.atender`, pero cada efecto se
    hace como mucho una vez aunque el proceso muera en cualquier punto y se reanude."""
    if not se_ejecutaria(llamada, usuario):
        return atender_sin_efectos(llamada, entorno, usuario)
    fila = bd.execute("SELECT resultado, antes, despues, esperado FROM llamadas WHERE agente=? AND id=?",
                      (agente, llamada["id"])).fetchone()
    if fila is not None and fila[0] is not None:
        return json.loads(fila[0])  # ya se hizo y se apuntó
    if llamada["name"] == "ejecutar":
        return ejecutar_como_mucho_una_vez(bd, agente, llamada, entorno, usuario, ya_intentada=fila is not None)
    if fila is None:
        fila = (None,) + intencion_de_editar(bd, agente, llamada, entorno, borrador)
    _, antes, despues, esperado = fila
    fichero = herramientas.dentro(entorno, llamada["input"]["ruta"])
    ahora = huella(fichero)
    if esperado is None or ahora == antes:  # no se ha hecho (o falla sin cambiar nada): se hace
        observacion = atender_sin_efectos(llamada, entorno, usuario)
        bd.efecto()
    elif ahora == despues:  # se hizo antes de la caída: su observación es la esperada
        observacion = resultado(llamada["id"], esperado)
    else:
        observacion = resultado(llamada["id"], f"{llamada['input']['ruta']} ha cambiado desde que se "
                                "pidió esta edición, y no se sabe por qué: no se ha tocado. Léelo otra "
                                "vez antes de editarlo", error=True)
    apuntar_resultado(bd, agente, llamada, observacion)
    return observacion


def intencion_de_editar(bd, agente, llamada, entorno, borrador):
    """Ensaya la edición en una copia del fichero y apunta la intención: (antes, después, esperado).

    Si la edición falla en el borrador (antiguo no aparece...), fallará igual en la copia de
    trabajo sin cambiar nada: `esperado` queda en None y no hay nada que decidir al reanudar."""
    ruta = llamada["input"]["ruta"]
    fichero = herramientas.dentro(entorno, ruta)
    shutil.rmtree(borrador, ignore_errors=True)
    despues = esperado = None
    if fichero.is_file():
        copia = herramientas.dentro(borrador, ruta)
        copia.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fichero, copia)
        try:
            esperado = herramientas.editar(borrador, **llamada["input"])
            despues = huella(copia)
        except herramientas.ErrorDeHerramienta:
            pass
        shutil.rmtree(borrador, ignore_errors=True)
    antes = huella(fichero)
    with pasos.en(bd, "intencion", agente, llamada=llamada["id"], ruta=ruta), historial.transaccion(bd):
        bd.execute("INSERT INTO llamadas(agente, id, nombre, entrada, antes, despues, esperado) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (agente, llamada["id"], llamada["name"], json.dumps(llamada["input"], ensure_ascii=False),
                    antes, despues, esperado))
    return antes, despues, esperado


def ejecutar_como_mucho_una_vez(bd, agente, llamada, entorno, usuario, ya_intentada):
    """Una orden se ejecuta solo si no se había intentado ya: una intención sin resultado, tras
    una caída, no se sabe si llegó a ejecutarse."""
    if ya_intentada:
        observacion = resultado(llamada["id"], "el proceso cayó mientras se ejecutaba esta orden y no "
                                "consta si llegó a ejecutarse: no se repite. Comprueba su efecto antes "
                                "de pedirla otra vez", error=True)
    else:
        with pasos.en(bd, "intencion", agente, llamada=llamada["id"]), historial.transaccion(bd):
            bd.execute("INSERT INTO llamadas(agente, id, nombre, entrada) VALUES (?, ?, ?, ?)",
                       (agente, llamada["id"], llamada["name"],
                        json.dumps(llamada["input"], ensure_ascii=False)))
        observacion = atender_sin_efectos(llamada, entorno, usuario)
        bd.efecto()
    apuntar_resultado(bd, agente, llamada, observacion)
    return observacion


def apuntar_resultado(bd, agente, llamada, observacion):
    """El resultado de una llamada con efectos, en su propio paso durable."""
    with pasos.en(bd, "resultado", agente, llamada=llamada["id"]), historial.transaccion(bd):
        bd.execute("UPDATE llamadas SET resultado=? WHERE agente=? AND id=?",
                   (json.dumps(observacion, ensure_ascii=False), agente, llamada["id"]))
