"""Para la lección 05: ¿compensa delegar? Un agente solo frente a un padre con dos hijos, con las cifras del ensayo.

Corre el incidente de curso/material/datos/incidente/ de las dos maneras, con los guiones del servidor de
ensayo, y apunta el `usage` de cada respuesta:

- un agente solo (`guion:solo`) que lo lee y lo busca todo él mismo;
- un padre que reparte entre dos hijos (`guion:hijo-logs` y `guion:hijo-config`), recibe sus
  entregas por el buzón e integra por evidencia. El padre es código del harness: no llama al modelo.

De cada una cuenta los turnos (las peticiones al modelo), los tokens de entrada (`input_tokens`
más `cache_read_input_tokens`: lo que ocupa cada petición), la mayor de sus peticiones (lo que
más se acerca a la ventana), los calculados (`input_tokens`: lo que no estaba en la caché), los
de salida y los segundos modelados (`motor.segundos_modelados`, un modelo de una máquina modesta,
no un reloj). Con dos hijos hay dos tiempos: en serie (uno detrás de otro, como en un servidor
con una sola ranura) y en paralelo (el más lento de los dos, como con dos ranuras). Integrar no
suma nada a ninguno de los dos: aquí es código del harness, sin peticiones al modelo; un padre que
integrara preguntando al modelo sumaría esa petición detrás de la rama más lenta. Todas las
cifras son deterministas.

El harness (`subagentes`, `encargos` y el `api` con que habla `ModeloGuionizado`) no es parte de
`curso`: es el del alumno o el del punto de control 05. Quien llama lo pasa, o lo pone el primero
en sys.path y se importa por su nombre. Los encargos y la conclusión son los del incidente (`curso.material.incidente`).
"""
import importlib
import tempfile
from pathlib import Path

from curso.material.apuntes import Apuntador
from curso.ensayo.motor import segundos_modelados
from curso.material.incidente import INCIDENTE, concluir, encargo_en_solitario, encargos_del_incidente

PADRE = "padre"
GUION_EN_SOLITARIO = "solo"
GUIONES_DE_LOS_HIJOS = {"logs": "hijo-logs", "config": "hijo-config"}
COLUMNAS = ("turnos", "entrada", "mayor", "calculados", "salida", "segundos")


def cifras(usos):
    """Turnos, tokens (de entrada, la mayor petición, calculados y de salida) y segundos modelados
    de unas respuestas. `mayor` es el tamaño de la petición más grande (0 si no hay ninguna)."""
    tamanos = [u["input_tokens"] + u["cache_read_input_tokens"] for u in usos]
    return {
        "turnos": len(usos),
        "entrada": sum(tamanos),
        "mayor": max(tamanos, default=0),
        "calculados": sum(u["input_tokens"] for u in usos),
        "salida": sum(u["output_tokens"] for u in usos),
        "segundos": round(sum(segundos_modelados(u["input_tokens"],
                                                 u["input_tokens"] + u["cache_read_input_tokens"],
                                                 u["output_tokens"]) for u in usos), 2),
    }


def comparar_delegacion(subagentes=None, nuevo_modelo=None, carpeta=None, proyecto=INCIDENTE, encargos=None):
    """Las cifras del agente solo y las del padre con dos hijos, sobre `proyecto`.

    `subagentes` y `encargos` son módulos del harness (por defecto, `import subagentes` e
    `import encargos`); `nuevo_modelo(guion)`
    da un modelo nuevo para el guion `guion` (por defecto `curso.ensayo.guionizado.ModeloGuionizado`; con
    HTTP, p. ej. `lambda g: ModeloAPI("guion:" + g, url=...)`). Cada ejecución estrena modelo,
    y con él su caché. El buzón del padre es un fichero SQLite en `carpeta` (por defecto, una
    temporal que se borra al acabar).

    Devuelve {"solo": {...}, "delegado": {...}}: las columnas de `cifras`, `verificados`,
    `descartados` y `conclusion`; el delegado lleva además `hijos` (las cifras de cada hijo) y
    `segundos_en_paralelo`, mientras que su `segundos` es la suma, en serie.
    """
    if subagentes is None:
        subagentes = importlib.import_module("subagentes")
    if nuevo_modelo is None:
        from curso.ensayo.guionizado import ModeloGuionizado  # con el `api` del harness que se importe
        nuevo_modelo = ModeloGuionizado

    solo = Apuntador(nuevo_modelo(GUION_EN_SOLITARIO))
    corrida = subagentes.correr_hijo(solo, encargo_en_solitario(encargos), proyecto)
    verificados, descartados = subagentes.verificar(corrida["carga"], proyecto)
    resultado_solo = dict(cifras(solo.usos), verificados=len(verificados), descartados=len(descartados),
                          conclusion=concluir(verificados))

    hijos = {hijo: Apuntador(nuevo_modelo(guion)) for hijo, guion in GUIONES_DE_LOS_HIJOS.items()}
    with tempfile.TemporaryDirectory(prefix="delegacion-", dir=carpeta) as temporal:
        bd = subagentes.buzon.abrir_buzon(Path(temporal) / "buzon.db")
        try:
            subagentes.repartir(bd, PADRE, encargos_del_incidente(encargos), hijos, proyecto)
            integrado = subagentes.integrar(bd, PADRE, proyecto)
        finally:
            bd.close()
    por_hijo = {hijo: cifras(modelo.usos) for hijo, modelo in hijos.items()}
    resultado_delegado = dict(cifras([u for modelo in hijos.values() for u in modelo.usos]),
                              hijos=por_hijo,
                              segundos_en_paralelo=max(c["segundos"] for c in por_hijo.values()),
                              verificados=len(integrado["verificados"]),
                              descartados=len(integrado["descartados"]),
                              conclusion=concluir(integrado["verificados"]))
    return {"solo": resultado_solo, "delegado": resultado_delegado}


def tabla(comparacion):
    """La comparación como una tabla de texto, para imprimirla en un cuaderno."""
    filas = [("un agente solo", comparacion["solo"])]
    for hijo, sus_cifras in comparacion["delegado"]["hijos"].items():
        filas.append((f"  hijo {hijo}", sus_cifras))
    filas.append(("padre + hijos, en serie", comparacion["delegado"]))
    lineas = [f"{'':26}" + "".join(f"{c:>11}" for c in COLUMNAS)]
    for nombre, valores in filas:
        lineas.append(f"{nombre:26}" + "".join(f"{_celda(c, valores[c]):>11}" for c in COLUMNAS))
    paralelo = _celda("segundos", comparacion["delegado"]["segundos_en_paralelo"])
    lineas.append(f"{'padre + hijos, en paralelo':26}" + " " * 11 * (len(COLUMNAS) - 1) + f"{paralelo:>11}")
    return "\n".join(lineas)


def _celda(columna, valor):
    return f"{valor:.2f}" if columna == "segundos" else str(valor)
