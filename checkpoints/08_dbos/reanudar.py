"""Reanudar: con solo el fichero de la base, seguir cada agente desde donde estaba.

Lección 06. `reanudar(ruta)` no necesita nada de la memoria del proceso que cayó:

1. comprueba el fichero sin cambiar lo que guarda (`comprobar`): que exista, que sea una base
   de SQLite de esta lección y que la ejecución no haya terminado ya. Si algo falla, lanza
   `NoSePuede` con un mensaje que dice qué hacer;
2. toma el cerrojo de la ejecución (`cerrojo`): si otro proceso la está reanudando, este se
   para y dice por qué. Dos procesos con el mismo agente harían cada paso dos veces;
3. rehace las vistas de los hijos (`preparar_vistas`);
4. apunta una vida nueva del proceso y, acción a acción (agentes.py), lleva a cada agente hasta
   el final. El orden es siempre el mismo: primero el agente que se quedó a medias de una
   acción; si ninguno, el hijo con menos respuestas (y, a igualdad, el primero); cuando todos
   los hijos han terminado, el padre. Así, con caídas o sin ellas, los agentes actúan en el
   mismo orden, y cada uno recibe las mismas respuestas.

Los agentes que ya terminaron siguen terminados: no se les pide nada. Lo que ya se recibió o
admitió en el buzón no se repite (buzon.py lo reconoce por la identidad de la entrega).

Lección 06, con el disco lleno. Si lo que falla al comprobar la base es que no queda sitio,
`comprobar` lanza `SinSitio`, un NoSePuede de los que se arreglan: lo hecho sigue guardado, y la
misma orden funcionará cuando haya sitio. Y `preparar_vistas` copia cada vista entera en una
carpeta provisional antes de ponerla en su sitio: si el disco se llena a mitad, no queda ninguna
a medias, y se para sin haber escrito nada en la base.
"""
import errno
import fcntl
import json
import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path

import buzon
import registro
from hijos import vista
from agentes import Modelo, a_medias, actuar, respuestas
from api import ModeloAPI
from efectos import BORRADOR
from entorno import texto_de
from reintentos import CUERPO_S, ModeloConReintentos


class NoSePuede(Exception):
    """No se puede reanudar esta ejecución; el mensaje dice por qué y qué hacer."""


class SinSitio(NoSePuede):
    """No se puede reanudar AHORA: el disco está lleno. No se ha perdido nada, y la misma orden
    funcionará cuando haya sitio (todo_junto.py sale con su código de «a medias», no con el de
    «no se puede»)."""


def comprobar(ruta):
    """El nombre del padre de la ejecución de `ruta`, o NoSePuede. No cambia lo que la base guarda.

    Solo lee, pero leer no deja los bytes del fichero siempre iguales: si un proceso murió con
    transacciones confirmadas en el -wal, al cerrar esta conexión SQLite las pasa al fichero
    principal (el mismo contenido, en otros bytes)."""
    ruta = Path(ruta)
    if not ruta.is_file():
        raise NoSePuede(f"No existe el fichero {ruta}: reanudar necesita la base de una ejecución "
                        "empezada (la crea «python todo_junto.py preparar CARPETA»).")
    # Una conexión normal que solo lee: al cerrarla, SQLite borra los ficheros -wal y -shm que
    # abrió. Una de solo lectura (mode=ro) no puede borrarlos, y dejaría la carpeta cambiada.
    try:
        bd = sqlite3.connect(ruta, isolation_level=None)
    except sqlite3.Error as e:
        if disco_lleno(ruta, e):
            raise SinSitio(LLENO.format(ruta=ruta)) from None
        raise NoSePuede(f"No se puede abrir {ruta} para leerla ({e}): comprueba sus permisos.") from None
    try:
        tablas = {n for (n,) in bd.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "curso" not in tablas:
            raise NoSePuede(f"La base {ruta} es de SQLite, pero no de una ejecución de la lección 06 "
                            "(no tiene la tabla «curso»): no se ha tocado.")
        version = dict(bd.execute("SELECT clave, valor FROM curso")).get("version")
        if version != registro.VERSION:
            raise NoSePuede(f"La base {ruta} es de otra versión del curso («{version}»; esta lección lee "
                            f"«{registro.VERSION}»): no se ha tocado. Empieza una ejecución nueva.")
        fila = bd.execute("SELECT a.id, e.estado FROM agentes a JOIN ejecuciones e "
                          "ON e.id = a.id WHERE a.papel='padre'").fetchone()
        if fila is None:
            raise NoSePuede(f"La base {ruta} no tiene ningún agente padre: no la preparó «python "
                            "todo_junto.py preparar», o se quedó a medias. No se ha tocado.")
        padre, estado = fila
    except sqlite3.DatabaseError as e:
        if disco_lleno(ruta, e):
            raise SinSitio(LLENO.format(ruta=ruta)) from None
        raise NoSePuede(f"El fichero {ruta} no es una base de SQLite que se pueda leer: no se ha "
                        "tocado. Reanuda con la base de una ejecución (todo_junto.db).") from None
    finally:
        bd.close()
    if estado in buzon.TERMINALES:
        raise NoSePuede(f"La ejecución de {ruta} ya terminó (el padre {padre!r} está {estado!r}): "
                        "no hay nada que reanudar, y no se ha tocado.")
    return padre


LLENO = ("No se puede leer {ruta}: el disco donde está se ha llenado, y SQLite necesita un poco de "
         "sitio para abrir una base con transacciones pendientes en su -wal. No se ha tocado lo que "
         "guarda: libera espacio y vuelve a reanudar.")


def sitio_libre(carpeta):
    """Los bytes libres del disco de `carpeta` para este usuario."""
    return shutil.disk_usage(carpeta).free


def disco_lleno(ruta, error):
    """¿Falló `error` (de SQLite, o del sistema) porque no queda sitio en el disco de `ruta`?

    Al escribir, SQLite lo dice con SQLITE_FULL. Al abrir una base que tiene un -wal pendiente y
    no su -shm, lo que falla es crear el -shm, y SQLite solo dice «disk I/O error»
    (SQLITE_IOERR_SHMSIZE): entonces se mira el sitio que queda."""
    nombre = getattr(error, "sqlite_errorname", "")
    return (nombre == "SQLITE_FULL" or getattr(error, "errno", None) == errno.ENOSPC
            or f"[Errno {errno.ENOSPC}]" in str(error)  # lo que junta shutil.Error de cada fichero
            or nombre.startswith("SQLITE_IOERR") and sitio_libre(Path(ruta).resolve().parent) == 0)


@contextmanager
def cerrojo(ruta):
    """El cerrojo de la ejecución: un fichero al lado de la base, bloqueado con flock mientras
    dura el bloque. El sistema lo suelta solo si el proceso muere, también con kill -9.

    Va al lado del fichero de verdad, con su ruta ya resuelta: la misma base, nombrada a través
    de un enlace, tiene el mismo cerrojo."""
    fichero = open(f"{Path(ruta).resolve()}.cerrojo", "a+")
    try:
        try:
            fcntl.flock(fichero, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fichero.seek(0)
            quien = fichero.read().strip() or "otro proceso"
            raise NoSePuede(f"Esta ejecución ya la está reanudando {quien}: este proceso se para para "
                            "no hacer cada paso dos veces. Espera a que termine y mira su informe.") from None
        fichero.seek(0)
        fichero.truncate()
        fichero.write(f"el proceso {os.getpid()}")
        fichero.flush()
        yield
    finally:
        fichero.close()  # cerrar el fichero suelta el flock


def siguiente(bd):
    """El agente que actúa ahora (ver el docstring del módulo), o None si la ejecución acabó."""
    todos = registro.agentes(bd)
    (padre,) = [a for a in todos if a["papel"] == "padre"]
    abiertos = [a for a in todos if a["papel"] == "hijo" and registro.estado(bd, a["id"]) == "en_marcha"]
    for hijo in abiertos:
        if a_medias(bd, hijo):
            return hijo
    if abiertos:
        return min(abiertos, key=lambda a: (respuestas(bd, a), a["orden"]))
    return None if registro.estado(bd, padre["id"]) in buzon.TERMINALES else padre


def preparar_vistas(bd, ruta, copia, padre):
    """Rehace la vista de cada hijo que trabaja en una (lección 05): solo sus recursos, copiados
    de la copia de trabajo. No guarda nada que no esté ya en la base, así que se puede rehacer.

    Cada vista se copia entera en una carpeta provisional y solo entonces ocupa su sitio: si la
    copia falla a mitad (un disco lleno), no queda ninguna vista a medias, y NoSePuede dice qué
    hacer. Nada de esto escribe en la base: se reanuda igual cuando vuelva a haber sitio."""
    for agente in registro.agentes(bd):
        carpeta = registro.carpeta_de(ruta, agente)
        if agente["papel"] == "hijo" and carpeta != copia:
            provisional = carpeta.with_name(carpeta.name + ".nueva")
            shutil.rmtree(provisional, ignore_errors=True)
            recursos = json.loads(bd.execute("SELECT encargo FROM hijos_esperados WHERE padre=? AND hijo=?",
                                             (padre, agente["id"])).fetchone()[0])["recursos"]
            try:
                provisional.mkdir(parents=True)
                vista(copia, recursos, provisional)
            except (OSError, shutil.Error) as e:
                shutil.rmtree(provisional, ignore_errors=True)
                lleno = disco_lleno(ruta, e)
                raise (SinSitio if lleno else NoSePuede)(
                    f"No se han podido copiar los ficheros que ve el hijo {agente['id']!r} "
                    f"({'no queda sitio en el disco' if lleno else e}). No ha quedado ninguna copia "
                    "a medias, y lo hecho hasta aquí sigue guardado en la base: cuando se pueda "
                    "escribir, vuelve a reanudar.") from None
            shutil.rmtree(carpeta, ignore_errors=True)
            provisional.rename(carpeta)


def reanudar(ruta, nuevo_modelo=None, cuerpo=CUERPO_S):
    """Lleva la ejecución de `ruta` hasta el final. Devuelve {"vida", "informe", "estado"}.

    `nuevo_modelo(nombre)` da el modelo base de cada agente (por defecto, un `ModeloAPI(nombre)`
    que usa ANTHROPIC_BASE_URL, con reintentos, y `cuerpo`: los segundos que puede tardar el cuerpo
    de una respuesta tras sus cabeceras antes de darla por atascada y reintentar). NoSePuede si no
    se puede (ver `comprobar` y `cerrojo`)."""
    padre = comprobar(ruta)
    nuevo_modelo = nuevo_modelo or (lambda nombre: ModeloConReintentos(ModeloAPI(nombre), cuerpo=cuerpo))
    with cerrojo(ruta):
        padre = comprobar(ruta)  # otra vez, ya con el cerrojo: quien lo tenía pudo terminarla
        bd = registro.abrir(ruta)
        try:
            copia = Path(ruta).resolve().parent / registro.dato(bd, "copia")
            preparar_vistas(bd, ruta, copia, padre)  # antes de escribir nada: si falla, nada cambia
            (vidas,) = bd.execute("SELECT COUNT(*) FROM pasos WHERE clase='vida'").fetchone()
            bd.vida = vidas + 1
            bd.apuntar("vida", None, pid=os.getpid())
            modelos = {}
            while (agente := siguiente(bd)) is not None:
                if agente["id"] not in modelos:
                    modelos[agente["id"]] = Modelo(bd, agente, nuevo_modelo(agente["modelo"]))
                escritura = set(agente["escritura"])
                actuar(bd, agente, modelos[agente["id"]], registro.carpeta_de(ruta, agente),
                       lambda nombre, entrada, e=escritura: nombre == "editar" and entrada.get("ruta") in e,
                       Path(ruta).resolve().parent / BORRADOR, padre, copia)
            estado = registro.estado(bd, padre)
            informe = texto_de(registro.historial(bd, padre)[-1][1]) if estado == "completada" else None
            return {"vida": bd.vida, "estado": estado, "informe": informe}
        finally:
            bd.close()
