"""Para quien escribe el curso: ejecuta un cuaderno resuelto y pone al día lo que sale de él.

    python -m curso ejecutar 03               # ejecuta solutions/03_*.ipynb y guarda sus salidas
    python -m curso ejecutar 03 --sincronizar # además, copia los módulos al punto de control 03

Cada lección tiene una sola fuente, su cuaderno resuelto. Después de cambiarlo hay que
(1) volver a ejecutarlo, para que sus salidas sean las que nbval comparará; (2) regenerar el
cuaderno del alumno; y (3) si cambió algún `%%modulo`, llevar el fichero al punto de control.
Esta orden hace las tres cosas como las haría nbval bajo `probar`: un núcleo nuevo con la carpeta
`solutions/` como directorio de trabajo, un espacio de trabajo nuevo y vacío y su propia carpeta
temporal (TMPDIR), que se borra al terminar aunque el cuaderno falle a medias; si acaba bien y
aun así deja algo en ella, lo dice.

Al sincronizar, solo se escriben los ficheros que la lección declara (`curso/rutas.py`); un
fichero que cambia en el punto de control NN también cambia en los puntos de
control siguientes que tenían exactamente la versión vieja (el mismo módulo, sin tocar por su
lección); donde una lección posterior tiene su propia versión, se detiene y lo dice.

El cuaderno se escribe bajo un cerrojo (`fcntl.flock` sobre `solutions/.NN.cerrojo`), el mismo
que deben tomar quienes editen ese cuaderno a la vez, para que nadie pise el trabajo de otro.
"""
import contextlib
import fcntl
import os
import tempfile
import time
from pathlib import Path

from curso import rutas

SEGUNDOS_POR_CELDA = 600  # una celda que tarda más está colgada


@contextlib.contextmanager
def cerrojo(cuaderno):
    """Bloquea `cuaderno` mientras dura el `with` (lo comparten todos los que lo escriben)."""
    ruta = Path(cuaderno).with_name(f".{Path(cuaderno).name.split('_')[0]}.cerrojo")
    with open(ruta, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cuaderno_resuelto(n):
    """La ruta de solutions/NN_*.ipynb."""
    numero = n if isinstance(n, rutas.Intercalada) else int(n)
    encontrados = sorted(rutas.SOLUCIONES.glob(f"{numero:02d}_*.ipynb"))
    if not encontrados:
        raise SystemExit(f"No hay ningún cuaderno resuelto {numero:02d} en solutions/.")
    return encontrados[0]


@contextlib.contextmanager
def variables(**valores):
    """Pone esas variables de entorno mientras dura el `with` (el núcleo las hereda) y deja las de
    antes al salir."""
    anteriores = {nombre: os.environ.get(nombre) for nombre in valores}
    os.environ.update(valores)
    try:
        yield
    finally:
        for nombre, valor in anteriores.items():
            if valor is None:
                os.environ.pop(nombre, None)
            else:
                os.environ[nombre] = valor


def ejecutar(ruta, espacio, temporal):
    """Ejecuta el cuaderno `ruta` en un núcleo nuevo con `espacio` como espacio de trabajo y
    `temporal` como carpeta temporal (TMPDIR).

    La carpeta temporal propia es la que tendría bajo `probar`: si el cuaderno falla a medias, lo
    que sus celdas iban a borrar al final se queda ahí, y no en la del sistema. Es 0711 porque,
    como root, el PostgreSQL de la lección 07 corre como `postgres` y tiene que atravesarla."""
    import nbformat
    from nbclient import NotebookClient

    with cerrojo(ruta):
        cuaderno = nbformat.read(ruta, as_version=4)
    Path(temporal).mkdir(exist_ok=True)
    os.chmod(temporal, 0o711)
    with variables(**{rutas.VARIABLE_ESPACIO: str(espacio), "TMPDIR": str(temporal)}):
        cliente = NotebookClient(cuaderno, timeout=SEGUNDOS_POR_CELDA, kernel_name="python3", record_timing=False,
                                 resources={"metadata": {"path": str(ruta.parent)}})
        cliente.execute()
    fuentes = [c.source for c in cuaderno.cells]
    with cerrojo(ruta):
        # Si alguien cambió el cuaderno mientras corría, guardar pisaría su cambio.
        if [c.source for c in nbformat.read(ruta, as_version=4).cells] != fuentes:
            raise SystemExit(f"✘ {ruta.name} cambió mientras se ejecutaba: no se guarda. "
                             "Vuelve a ejecutar la orden.")
        nbformat.write(cuaderno, ruta)
    return cuaderno


def sincronizar(numero, espacio):
    """Copia los módulos de `espacio` al punto de control `numero` y a los siguientes que
    tenían la versión vieja. Devuelve las líneas que describen lo hecho."""
    from curso.rutas import LECCIONES

    puntos = rutas.puntos_de_control()
    propios = set(LECCIONES.get(numero, {}).get("ficheros", []))
    lineas = []
    for relativa in rutas.ficheros(espacio):
        nuevo = (Path(espacio) / relativa).read_bytes()
        destino = puntos[numero] / relativa
        viejo = destino.read_bytes() if destino.exists() else None
        if viejo == nuevo:
            continue
        if relativa not in propios:
            # Lo copió `preparar` de un punto de control anterior: su fuente es otra lección, y
            # escribirlo aquí podría deshacer lo que esa lección acaba de sincronizar.
            lineas.append(f"    ({relativa} no es de la lección {numero:02d} y difiere del punto de "
                          f"control: sincroniza la lección que lo escribe)")
            continue
        destino.parent.mkdir(parents=True, exist_ok=True)
        destino.write_bytes(nuevo)
        lineas.append(f"  {destino.relative_to(rutas.RAIZ)}")
        siguientes, propia = con_la_version_vieja(puntos, numero, relativa, viejo, nuevo)
        for siguiente in siguientes:
            otro = puntos[siguiente] / relativa
            otro.write_bytes(nuevo)
            lineas.append(f"  {otro.relative_to(rutas.RAIZ)}")
        if propia is not None:
            lineas.append(tiene_su_version(propia, relativa))
    return lineas


def con_la_version_vieja(puntos, numero, relativa, viejo, nuevo):
    """Adónde llevar un cambio de `relativa` en el punto de control `numero` (de `viejo` a `nuevo`,
    en bytes; None si no existía): (los números de los puntos de control siguientes, seguidos,
    cuya copia es exactamente `viejo`; el del primero que tiene su propia versión, o None).

    El primero que no tiene `viejo` corta la cadena: lo que viene detrás es de otra lección. Si
    ese ya tiene `nuevo`, no es una versión propia (alguien ya llevó el cambio hasta ahí).
    No escribe nada; `puntos` es {número: carpeta}, el de `rutas.puntos_de_control()`."""
    siguientes = []
    for siguiente in sorted(n for n in puntos if n > numero):
        otro = puntos[siguiente] / relativa
        actual = otro.read_bytes() if otro.exists() else None
        if actual != viejo:
            return siguientes, (siguiente if actual != nuevo else None)
        siguientes.append(siguiente)
    return siguientes, None


def tiene_su_version(numero, relativa):
    """La línea que dice que el punto de control `numero` tiene su propia versión de `relativa`."""
    return f"    (el punto de control {numero:02d} tiene su propia versión de {relativa}: no se toca)"


def main(numeros, sincronizar_puntos=False):
    from curso.autor import generar

    for n in numeros:
        ruta = cuaderno_resuelto(n)
        inicio = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="curso-ejecutar-", ignore_cleanup_errors=True) as tmp:
            # El espacio va dentro de la carpeta temporal, como bajo nbval: `comparar` lo dice
            # «una carpeta temporal», sin una ruta que cambie en cada ejecución.
            temporal = Path(tmp) / "temporal"
            espacio = temporal / "espacio"
            os.chmod(tmp, 0o711)
            print(f"▶ ejecutando {ruta.relative_to(rutas.RAIZ)}...", flush=True)
            ejecutar(ruta, espacio, temporal)
            print(f"✔ {ruta.name} ejecutado y guardado ({time.monotonic() - inicio:.0f} s)")
            quedan = sorted(p.name for p in temporal.iterdir() if p != espacio)
            if quedan:
                print(f"⚠ {ruta.name} deja en la carpeta temporal {', '.join(quedan)}: bajo `probar`, "
                      "su parte fallará. Que la celda que lo crea lo borre.")
            if sincronizar_puntos:
                cambios = sincronizar(rutas.numero_de_leccion(ruta.name), espacio)
                print("Ficheros puestos al día:" if cambios else "Los puntos de control ya estaban al día.")
                print("\n".join(cambios))
        with cerrojo(ruta):
            (rutas.CUADERNOS / ruta.name).write_text(generar.texto_del_alumno(ruta), encoding="utf-8")
        print(f"✎ notebooks/{ruta.name} regenerado")
    return 0


# --- python -m curso ejecutar -----------------------------------------------------------------

def argumentos_ejecutar(analizador):
    analizador.description = ("Para quien escribe el curso: ejecuta solutions/NN_*.ipynb como lo "
                              "haría nbval, guarda sus salidas y regenera notebooks/.")
    analizador.add_argument("n", metavar="N", nargs="+", type=rutas.leccion_pedida, help="los números de las lecciones (3b para la 03b)")
    analizador.add_argument("--sincronizar", action="store_true",
                            help="copia además los módulos que escribe al punto de control N "
                                 "(y a los siguientes que tenían la misma versión)")


def orden_ejecutar(args):
    return main(args.n, sincronizar_puntos=args.sincronizar)
