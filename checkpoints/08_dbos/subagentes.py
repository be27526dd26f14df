"""Los subagentes: un padre reparte investigación de solo lectura entre hijos e integra lo que entregan.

Lección 05. Cada hijo corre con `hijos.correr_hijo`, estrechado a su encargo. De arriba abajo:

- `repartir()` (fan-out): crea el padre esperando a sus hijos, corre cada hijo y entrega lo suyo
  por el buzón (`recibir` y `admitir`) a través de un transporte que puede entregar dos veces.
- `integrar()` (fan-in): con el padre en cola, comprueba cada hallazgo contra los ficheros que
  cita (`verificar`, `por_que_no`) y se queda solo con los que la evidencia respalda. Sin
  votar: que dos hijos digan lo mismo no lo hace más cierto, y que lo diga un solo hijo no lo
  hace menos. Integrar es código del harness (abrir ficheros, comparar citas): no le hace ninguna
  petición al modelo. Qué se concluye de lo comprobado ya depende del problema, no del harness.
"""
import functools
import re

import buzon
import herramientas
from hijos import correr_hijo

# --- Fan-out: repartir y entregar por el buzón -------------------------------------------------------

def transporte_directo(hijo, enviar):
    """Entrega una vez: [lo que contestó el buzón]."""
    return [enviar()]


def transporte_que_repite(*repetidos):
    """Un transporte que entrega dos veces lo de los hijos `repetidos`, como uno que perdió la
    confirmación del primer intento y reintenta. El buzón tiene que absorber la repetición."""
    def transporte(hijo, enviar):
        return [enviar() for _ in range(2 if hijo in repetidos else 1)]
    return transporte


def repartir(bd, padre, hijos, modelos, proyecto, transporte=transporte_directo):
    """Fan-out: crea `padre` esperando a `hijos` ({hijo: encargo}), corre cada hijo con su modelo
    (`modelos[hijo]`) y entrega su resultado por el buzón de `bd`.

    Cada entrega tiene una identidad estable, «padre/hijo/1»: la de esta entrega, no la de cada
    intento del transporte. `transporte(hijo, enviar)` llama a `enviar()` (que es `buzon.recibir`)
    una vez o más y devuelve lo que contestó cada vez; después se admite la entrega. Un hijo
    que falla o entrega algo que no cumple su encargo no tumba al padre: su informe dice por qué,
    y el padre sigue esperando (no hay entrega admitida de ese hijo).

    Devuelve {hijo: informe}, y cada informe es un dict con `entrega`, `motivo`, `carga`,
    `problema`, `M`, `recepciones` (["recibida", "duplicada"...]), `disposicion` (lo que contestó
    `admitir`, o None), `rechazo` (por qué no se admitió, o None) y `estado_del_padre` justo
    después de esa entrega.
    """
    if not isinstance(hijos, dict) or not all(isinstance(e, dict) for e in hijos.values()):
        raise ValueError("Los hijos deben ser un dict {hijo: encargo}: cada hijo necesita su encargo.")
    sin_modelo = [hijo for hijo in hijos if hijo not in modelos]
    if sin_modelo:
        raise ValueError(f"Faltan los modelos de {', '.join(map(repr, sin_modelo))}: no se ha creado nada.")
    buzon.crear_padre(bd, padre, hijos)
    informes = {}
    for hijo, su_encargo in hijos.items():
        informe = informes[hijo] = {"entrega": f"{padre}/{hijo}/1", "motivo": None, "carga": None,
                                    "problema": None, "M": None, "recepciones": [],
                                    "disposicion": None, "rechazo": None}
        try:
            informe.update(correr_hijo(modelos[hijo], su_encargo, proyecto))
        except Exception as e:  # la frontera entre hijo y padre: el fallo de un hijo es un dato
            informe["rechazo"] = f"El hijo falló antes de entregar: {type(e).__name__}: {e}"
        else:
            enviar = functools.partial(buzon.recibir, bd, padre, hijo, informe["entrega"], informe["carga"])
            try:
                informe["recepciones"] = transporte(hijo, enviar)
            except ValueError as e:  # la entrega no cumple el encargo: no entra en el buzón
                informe["rechazo"] = str(e)
            else:
                informe["disposicion"] = buzon.admitir(bd, informe["entrega"])
        informe["estado_del_padre"] = buzon.estado(bd, padre)[0]
    return informes

# --- Fan-in: integrar por evidencia ------------------------------------------------------------------

CITA = re.compile(r"«([^«»]+)»")  # lo que un hallazgo cita del fichero, entre « »
REFERENCIA = re.compile(r"(?P<ruta>[^:]+):(?P<linea>[1-9][0-9]{0,8})")  # «logs/api.log:7»: la línea, desde 1


def por_que_no(hallazgo, referencia, proyecto):
    """None si la línea `referencia` de `proyecto` dice todo lo que `hallazgo` cita entre « »;
    si no, por qué el hallazgo no se puede dar por bueno. Mira los ficheros, no al hijo."""
    citas = CITA.findall(hallazgo)
    if not citas:
        return "no cita entre « » el texto que lo respalda"
    if referencia is None:
        return "no tiene referencia"
    partes = REFERENCIA.fullmatch(referencia)
    if partes is None:
        return f"la referencia {referencia!r} no dice la línea (ruta:línea)"
    try:
        texto = herramientas.contenido(proyecto, partes["ruta"])  # como leer: sin salir del proyecto
    except herramientas.ErrorDeHerramienta as e:
        return str(e)
    lineas, numero = herramientas.lineas(texto), int(partes["linea"])
    if numero > len(lineas):
        return f"{partes['ruta']} solo tiene {len(lineas)} líneas"
    linea = lineas[numero - 1]
    for cita in citas:
        if cita not in linea:
            return f"la línea {numero} de {partes['ruta']} no dice «{cita}»: dice «{linea.strip()}»"
    return None


def verificar(carga, proyecto):
    """(verificados, descartados) de una entrega: cada hallazgo con la referencia de su mismo
    orden, comprobado contra `proyecto`. Cada uno es una lista de filas {"hallazgo": ...,
    "referencia": ...} (la referencia, None si no la hay), en el orden de los hallazgos; las de
    los descartados llevan además su "motivo"."""
    verificados, descartados = [], []
    referencias = carga.get("referencias", [])
    for i, hallazgo in enumerate(carga.get("hallazgos", [])):
        referencia = referencias[i] if i < len(referencias) else None
        motivo = por_que_no(hallazgo, referencia, proyecto)
        fila = {"hallazgo": hallazgo, "referencia": referencia}
        if motivo is None:
            verificados.append(fila)
        else:
            descartados.append(dict(fila, motivo=motivo))
    return verificados, descartados


def integrar(bd, padre, proyecto):
    """Fan-in: integra las entregas admitidas de `padre` comprobando su evidencia en `proyecto`.

    Solo con el padre 'en_cola' (ValueError si no: aún falta algún hijo). Devuelve un dict con
    `verificados` y `descartados` (cada uno con su `entrega`) y las `incertidumbres` de los
    hijos. No cambia el estado del padre: integrar otra vez da lo mismo.
    """
    estado, _ = buzon.estado(bd, padre)
    if estado != buzon.EN_COLA:
        raise ValueError(f"El padre {padre!r} está {estado!r}: integrar espera a que esté en cola, "
                         "con una entrega admitida de cada hijo.")
    verificados, descartados, incertidumbres = [], [], []
    for _, entrega, carga in buzon.mensajes(bd, padre):
        buenos, malos = verificar(carga, proyecto)
        verificados += [dict(fila, entrega=entrega) for fila in buenos]
        descartados += [dict(fila, entrega=entrega) for fila in malos]
        incertidumbres += carga.get("incertidumbres", [])
    return {"verificados": verificados, "descartados": descartados, "incertidumbres": incertidumbres}
