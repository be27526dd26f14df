"""Para las lecciones 01 y 03 y `python -m curso medir modelo`: el harness del alumno contra un modelo de verdad, en vivo o grabado.

Equipo del curso. Si ANTHROPIC_BASE_URL apunta a un servidor de verdad (`python -m curso
modelo`, o cualquier llama-server), `servidor_real()` lo encuentra y las lecciones corren con él
el harness del espacio del alumno; si no, enseñan la ejecución GRABADA de `GRABADA`
(tests/datos/traza_real_smollm2.json), con la máquina y la fecha en que se grabó. Lo dicen siempre.

- `Cronometro(modelo)`: se pone entre la Traza y el ModeloAPI y apunta de cada petición cuándo
  empezó y acabó, su `usage` y sus bloques, en líneas como las de la traza de correr.py. Entre
  una petición y la siguiente, el tiempo es del harness (sus herramientas incluidas).
- `turnos(cronometro)`: las peticiones apuntadas, en el formato de las trazas del curso
  (curso/material/datos/traza_real.json): turno, segundos, tokens de entrada, lo que volvió.
- `hallazgos(traza)`: lo que hizo el modelo y qué contratos del harness se cumplieron, en frases.
- `velocidades(url)`: tokens por segundo al leer y al escribir, con ~1000 y ~7000 tokens en M,
  del extremo nativo `/completion` de llama-server, que devuelve `timings`; `/v1/messages` solo
  devuelve `usage`, sin tiempos.
- `cache_de_limpiar(url, corridas)`: la lección 03b con la caché de un servidor de verdad: las
  peticiones de cada política de limpieza, tal como las mandó el harness al de ensayo, otra vez a
  llama-server, y lo que dice su `usage` de cada una (recalculado y leído de la caché).
- `python -m curso.material.modelo_real grabar`: graba GRABADA contra el servidor de
  ANTHROPIC_BASE_URL (unos minutos en una CPU); `grabar-03b`, solo lo de la lección 03b.
"""
import datetime
import json
import os
import platform
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

from curso import rutas

GRABADA = Path("tests") / "datos" / "traza_real_smollm2.json"  # en la carpeta del curso (rutas.RAIZ)
PEDIDO = "Los tests fallan. Arregla lo que haga falta para que pasen."  # el de la lección 01
ANCHO = 110
TAMANOS = (1000, 7000)  # tokens en M para medir la velocidad (los de la semilla)
SEMILLA = {1000: 0.4, 7000: 1.6}  # s por token de salida, los de la ejecución de la semilla
ESPERA_S = 2  # para ver si hay servidor: no calcula nada
PUNTO_DE_LA_GRABACION = "03_compactar"  # su agente sin compactar es el de la lección 01


def _pedir(url, ruta, cuerpo=None, espera=ESPERA_S):
    """(estado, cabeceras, JSON o None) de un GET (sin cuerpo) o POST a `url + ruta`."""
    datos = None if cuerpo is None else json.dumps(cuerpo).encode()
    pedido = urllib.request.Request(url.rstrip("/") + ruta, datos, {"content-type": "application/json"},
                                    method="GET" if cuerpo is None else "POST")
    try:
        with urllib.request.urlopen(pedido, timeout=espera) as r:
            estado, cabeceras, crudo = r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        estado, cabeceras, crudo = e.code, dict(e.headers), e.read()
    try:
        return estado, {k.lower(): v for k, v in cabeceras.items()}, json.loads(crudo)
    except ValueError:
        return estado, cabeceras, None


def servidor_real(url=None):
    """La URL de un servidor de verdad (la de ANTHROPIC_BASE_URL si no se da), o None si no hay,
    no contesta, o es el de ensayo del curso (sus respuestas llevan `request-id: req_ensayo_…`)."""
    url = url or os.environ.get("ANTHROPIC_BASE_URL")
    if not url:
        return None
    try:
        # Con un guion del de ensayo como modelo: así el de ensayo también contesta 200, y lo
        # que lo distingue es su request-id (llama-server no mira el campo model).
        estado, cabeceras, datos = _pedir(url, "/v1/messages/count_tokens", {
            "model": "guion:eco", "messages": [{"role": "user", "content": "hola"}]})
    except (OSError, ValueError):
        return None
    if estado != 200 or not isinstance(datos, dict) or "input_tokens" not in datos:
        return None
    return None if str(cabeceras.get("request-id", "")).startswith("req_ensayo_") else url.rstrip("/")


def propiedades(url):
    """Lo que llama-server dice de sí mismo en GET /props (el modelo, la ventana), o {}."""
    try:
        estado, _, datos = _pedir(url, "/props")
    except (OSError, ValueError):
        return {}
    if estado != 200 or not isinstance(datos, dict):
        return {}
    ajustes = datos.get("default_generation_settings") or {}
    return {"modelo": Path(str(datos.get("model_path", "?"))).name, "ventana": ajustes.get("n_ctx"),
            "version": datos.get("build_info")}


def una_linea(texto, ancho=ANCHO):
    lineas = str(texto).strip().split("\n")
    return lineas[0][:ancho] + " …" if len(lineas[0]) > ancho or len(lineas) > 1 else lineas[0]


def linea(bloque):
    """La línea de un bloque, como la escribe la traza de correr.py."""
    if bloque.get("type") == "tool_use":
        return una_linea(f"llamada {bloque.get('name')} {json.dumps(bloque.get('input'), ensure_ascii=False)}")
    return una_linea("texto " + str(bloque.get("text", "")))


class Cronometro:
    """Envuelve a un modelo (un ModeloAPI) y apunta cada petición: `peticiones`, una lista de
    {"inicio", "fin", "usage", "respuesta", "resumen", "error"}. Expone el `usage` del envuelto."""

    def __init__(self, modelo, instruccion=None, reloj=time.monotonic):
        self.modelo, self.instruccion, self.reloj = modelo, instruccion, reloj
        self.peticiones, self.ultima_M = [], []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        apunte = {"inicio": self.reloj(), "resumen": self.instruccion is not None
                  and tuple(M[-1]) == ("usuario", self.instruccion), "error": None}
        self.peticiones.append(apunte)
        self.ultima_M = list(M)
        try:
            respuesta = self.modelo(M, herramientas)
        except Exception as error:
            apunte.update(fin=self.reloj(), error=f"{type(error).__name__}: {error}")
            raise
        apunte.update(fin=self.reloj(), usage=dict(self.modelo.usage), respuesta=list(respuesta))
        return respuesta


def turnos(cronometro, final):
    """Las peticiones de `cronometro` en el formato de las trazas del curso. `final`: el instante
    en que terminó el bucle (del mismo reloj); el harness de cada turno es lo que va del final de
    su petición al principio de la siguiente (o a `final`)."""
    filas, turno = [], 0
    peticiones = cronometro.peticiones
    for i, p in enumerate(peticiones):
        siguiente = peticiones[i + 1]["inicio"] if i + 1 < len(peticiones) else final
        if not p["resumen"]:
            turno += 1
        u = p.get("usage") or {}
        filas.append({
            "que": "resumen" if p["resumen"] else f"turno {turno}",
            "segundos": round(p["fin"] - p["inicio"], 3),
            "segundos_del_harness": round(max(siguiente - p["fin"], 0), 4),
            "tokens_de_entrada": u.get("input_tokens", 0) + (u.get("cache_read_input_tokens") or 0),
            "cache_read_input_tokens": u.get("cache_read_input_tokens"),
            "tokens_de_salida": u.get("output_tokens"),
            "bloques": [linea(b) for b in p.get("respuesta", [])],
            "error": p["error"],
        })
    return filas


def llamadas_de(fila):
    return [b for b in fila["bloques"] if b.startswith("llamada ")]


def hallazgos(traza):
    """Lo que hizo el modelo en `traza` (un dict con "turnos", "motivo" y, si las hay, las
    "observaciones" que devolvió el harness), en frases: lo que dice de él y del harness."""
    filas = [f for f in traza["turnos"] if f["que"] != "resumen"]
    frases = []
    segundos = sum(f["segundos"] for f in traza["turnos"])
    salida = sum(f["tokens_de_salida"] or 0 for f in traza["turnos"])
    frases.append(f"{len(filas)} turno(s) en {segundos:.1f} s de modelo; {salida} tokens escritos; "
                  f"motivo del final: «{traza['motivo']}».")
    llamadas = [llamada for f in filas for llamada in llamadas_de(f)]
    if not llamadas:
        frases.append("El modelo no pidió ninguna herramienta: contestó con texto, y el bucle acabó "
                      "limpio («fin»), como debe ante una respuesta sin llamadas. No ha leído ni "
                      "ejecutado nada: lo que diga del proyecto no sale del proyecto.")
    else:
        repetidas = [c for c, n in Counter(llamadas).items() if n > 1]
        frases.append(f"Pidió {len(llamadas)} llamada(s)" + (f"; repetidas: {', '.join(repetidas)}"
                                                            if repetidas else "") + ".")
    errores = [o for o in traza.get("observaciones", []) if o.startswith("error ")]
    if errores:
        frases.append(f"{len(errores)} llamada(s) volvieron como observación con is_error (el bucle "
                      f"siguió): {una_linea(errores[0], 80)}")
    fallidas = [f for f in traza["turnos"] if f["error"]]
    if fallidas:
        frases.append(f"Una petición falló y el harness la nombró: {una_linea(fallidas[0]['error'], 100)}")
    return frases


def parte_del_harness(filas):
    """(segundos del harness, segundos del modelo, parte del harness) de unas filas."""
    harness = sum(f["segundos_del_harness"] for f in filas)
    modelo = sum(f["segundos"] for f in filas)
    return harness, modelo, harness / modelo if modelo else float("nan")


def texto_de_relleno(tokens):
    """Un texto de unos `tokens` tokens (con el tokenizador de un modelo pequeño, ~4 caracteres
    por token en este texto): para llenar M hasta un tamaño sin que importe lo que dice."""
    frase = "La lista de la compra sale del recetario, receta por receta. "
    return frase * max(1, round(tokens / 13))


def velocidades(url, tamanos=TAMANOS, escribir=32):
    """[{"tokens_en_M", "tokens_por_segundo_al_leer", "tokens_por_segundo_al_escribir",
    "segundos_por_token_de_salida"}] con M de unos `tamanos` tokens, del extremo nativo
    `/completion` de llama-server (sus `timings`), sin caché: se calcula el prompt entero."""
    filas = []
    frase = texto_de_relleno(1)
    estado, _, datos = _pedir(url, "/tokenize", {"content": frase}, espera=60)
    por_frase = len(datos["tokens"]) if estado == 200 and isinstance(datos, dict) else 13
    for tamano in tamanos:
        estado, _, datos = _pedir(url, "/completion", {
            "prompt": frase * max(1, round(tamano / por_frase)), "n_predict": escribir, "cache_prompt": False,
            "temperature": 0, "ignore_eos": True}, espera=900)
        if estado != 200 or not isinstance(datos, dict) or "timings" not in datos:
            raise RuntimeError(f"{url}/completion contestó {estado}: no es un llama-server con `timings`")
        t = datos["timings"]
        filas.append({"tokens_en_M": t["prompt_n"], "tokens_por_segundo_al_leer": round(t["prompt_per_second"], 1),
                      "tokens_por_segundo_al_escribir": round(t["predicted_per_second"], 2),
                      "segundos_por_token_de_salida": round(1 / t["predicted_per_second"], 3)})
    return filas


def maquina():
    """La CPU (el «Model name» de lscpu) y sus núcleos, y el sistema."""
    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        cpu = platform.processor() or "?"
    return {"cpu": cpu, "nucleos": os.cpu_count(), "sistema": f"{platform.system()} {platform.machine()}",
            "carga_media_al_grabar": round(os.getloadavg()[0], 1)}  # procesos esperando CPU: con otros, va más lento


def correr_leccion_01(url, tope=4, modelo="modelo"):
    """Corre el harness del espacio (agente, ModeloAPI, Traza de correr.py) sobre recetario/ con
    el pedido de la lección 01 contra `url`, imprimiendo la traza. Devuelve la traza en el formato
    del curso: {"pedido", "motivo", "texto_final", "turnos", "observaciones"}."""
    import shutil

    from agente import agente
    from api import ModeloAPI
    from correr import Traza

    from curso.ensayo.recetario import usuario_guionizado
    from curso.rutas import RECETARIO
    from api import ErrorDelModelo
    cronometro = Cronometro(ModeloAPI(modelo, url=url))
    try:
        motivo, texto, M, copia = agente(Traza(cronometro), PEDIDO, RECETARIO, tope=tope,
                                         usuario=usuario_guionizado, conservar=True)
        shutil.rmtree(copia.parent, ignore_errors=True)
    except ErrorDelModelo as error:  # el harness lo nombra; la traza se queda con lo que hubo
        motivo, texto, M = f"error del modelo: {error}", None, cronometro.ultima_M
    final = time.monotonic()
    observaciones = [linea_de_observacion(b) for rol, contenido in M if rol == "usuario"
                     and isinstance(contenido, list) for b in contenido]
    return {"pedido": PEDIDO, "motivo": motivo, "texto_final": texto, "turnos": turnos(cronometro, final),
            "observaciones": observaciones}


def linea_de_observacion(bloque):
    return una_linea(("error " if bloque.get("is_error") else "observación ") + str(bloque.get("content")))


def ventana_real(url):
    """El error de una petición que no cabe en la ventana del servidor, tal como lo nombra el
    harness: {"clase", "entrada", "ventana", "aviso"}."""
    from agente import inicio
    from api import ErrorDelModelo, ModeloAPI

    from curso.rutas import RECETARIO
    try:
        ModeloAPI("modelo", url=url)(inicio("Resume esto:\n" + texto_de_relleno(12000), RECETARIO))
    except ErrorDelModelo as error:
        return {"clase": type(error).__name__, "entrada": getattr(error, "entrada", None),
                "ventana": getattr(error, "ventana", None), "aviso": str(error)}
    return {"clase": None, "aviso": "el servidor aceptó una petición de ~12000 tokens"}


def resumir(url, turnos_guionizados=5):
    """Lección 03 con un modelo de verdad: la M de `atasco` (guionizada, sin HTTP) tras
    `turnos_guionizados` turnos, y el modelo de `url` escribiendo el resumen que `compactar` del
    espacio instala (con umbral 0: la M guionizada es más corta que el UMBRAL). Devuelve
    {"tokens_antes", "tokens_despues", "segundos", "tokens_de_salida", "resumen", "instalado"}."""
    import compactar as c
    from api import ModeloAPI
    from entorno import HERRAMIENTAS
    from curso.ensayo.guionizado import ModeloGuionizado

    from curso.ensayo.recetario import usuario_guionizado
    from curso.rutas import RECETARIO
    import agente as a
    guion = ModeloGuionizado("atasco")
    _, _, M, copia = a.agente(guion, PEDIDO, RECETARIO, tope=turnos_guionizados - 1,
                              usuario=usuario_guionizado, conservar=True)
    import shutil
    shutil.rmtree(copia.parent, ignore_errors=True)
    M = M + [("asistente", guion(M, HERRAMIENTAS))]  # acaba en la respuesta del turno en curso
    real = Cronometro(ModeloAPI("modelo", url=url), instruccion=c.INSTRUCCION)
    # Lo que cuenta el servidor de M sin su última respuesta (llama-server no cuenta una M que acaba
    # en una respuesta con llamadas: «Cannot continue an assistant message that contains tool calls»).
    contar = _pedir(url, "/v1/messages/count_tokens", _cuerpo(M[:-1]), espera=60)[2]["input_tokens"]
    real.modelo.usage = {"input_tokens": contar, "output_tokens": 0}  # lo que el servidor cuenta de M
    nueva = c.compactar(real, M, umbral=0)
    antes_de_resumir = contar
    despues = _pedir(url, "/v1/messages/count_tokens", _cuerpo(nueva[:-1]), espera=60)[2]["input_tokens"]
    (peticion,) = real.peticiones
    u = peticion.get("usage") or {}
    texto = "".join(b.get("text", "") for b in peticion.get("respuesta", []) if b.get("type") == "text")
    return {"turnos_guionizados": turnos_guionizados, "tokens_antes": antes_de_resumir,
            "tokens_despues": despues, "segundos": round(peticion["fin"] - peticion["inicio"], 2),
            "tokens_de_salida": u.get("output_tokens"), "resumen": texto,
            "instalado": nueva is not M and any(m[0] == "usuario" and isinstance(m[1], str)
                                                and m[1].startswith(c.NOTA) for m in nueva)}


def _cuerpo(M):
    """El cuerpo de count_tokens para M, como lo arma api.py."""
    from api import peticion
    from entorno import HERRAMIENTAS
    cuerpo = peticion(M, HERRAMIENTAS, "modelo")
    cuerpo.pop("max_tokens")
    return cuerpo


def con_su_nombre(politica, M, medida):
    """M con el nombre de `politica` y la marca de la `medida` delante del prompt de sistema (ver
    `cache_de_limpiar`)."""
    (rol, sistema), resto = M[0], M[1:]
    return [(rol, f"[{politica}, medida {medida}] {sistema}"), *resto]


def cache_de_limpiar(url, corridas, espera=900, modelo="modelo", nombrar=True):
    """Lección 03b con un servidor de verdad. `corridas`: {política: [(M, usage del de ensayo)]},
    las peticiones de una corrida tal como las mandó el harness. Manda cada M otra vez a `url`
    (`/v1/messages`, con `max_tokens` 1: lo que cuesta es leer la petición, no escribir; `modelo`
    es el campo `model`, que llama-server no mira) y apunta su `usage`. llama-server cuenta en `input_tokens` lo que recalculó y en
    `cache_read_input_tokens` lo que sacó de su caché (server-task.cpp, `to_json_anthropic_final`:
    input = n_prompt_tokens − n_prompt_tokens_cache).

    Esa caché no es solo la de la petición anterior: llama-server guarda también, en RAM, el
    estado de peticiones anteriores (`--cache-ram`, 8192 MiB por defecto; PR 16391 de llama.cpp)
    y retoma el que más comparta. Por eso el prompt de sistema de cada política empieza por su
    nombre y una marca nueva en cada medida: sin eso (`nombrar=False`, la variante ingenua), la
    segunda política leería de la caché lo que calculó la primera (su primera petición es la misma),
    y cada medida, lo que calcularon las anteriores en el mismo servidor. Devuelve {política:
    {"peticiones": [(recalculados, de la caché)], "recalculados", "total", "segundos", "parada"}};
    "parada" es el error de la primera petición que no aceptó (una M que con su tokenizador no cabe
    en la ventana), o None."""
    from api import peticion
    from entorno import HERRAMIENTAS
    medidas, medida = {}, uuid.uuid4().hex[:8]
    for politica, lista in corridas.items():
        filas, parada, inicio = [], None, time.monotonic()
        for M, _ in lista:
            cuerpo = peticion(con_su_nombre(politica, M, medida) if nombrar else M, HERRAMIENTAS, modelo)
            estado, _, datos = _pedir(url, "/v1/messages", dict(cuerpo, max_tokens=1), espera=espera)
            if estado != 200 or not isinstance(datos, dict) or "usage" not in datos:
                parada = f"la petición {len(filas) + 1} no entró: {estado} {str(datos)[:160]}"
                break
            u = datos["usage"]
            filas.append((u.get("input_tokens", 0), u.get("cache_read_input_tokens") or 0))
        medidas[politica] = {"peticiones": filas, "recalculados": sum(r for r, _ in filas),
                             "total": sum(r + c for r, c in filas),
                             "segundos": round(time.monotonic() - inicio, 1), "parada": parada}
    return medidas


def corridas_de_limpiar(tope=10):
    """Las dos corridas de la lección 03b (atasco, `tope` turnos, limpiando cada turno y por tandas),
    contra el servidor de ensayo y con el harness de sys.path: {política: [(M, usage)]}."""
    import functools

    from agente import agente
    from api import ModeloAPI
    from limpiar import AL_MENOS, limpiar

    from curso.ensayo.recetario import usuario_guionizado
    from curso.ensayo.servidor import arrancar_en_segundo_plano
    from curso.material.apuntes import Apuntador
    from curso.rutas import RECETARIO
    corridas = {}
    for politica, al_menos in (("cada turno", 1), ("por tandas", AL_MENOS)):
        servidor = arrancar_en_segundo_plano()
        try:
            apuntes = Apuntador(ModeloAPI("guion:atasco", url=servidor.url))
            agente(apuntes, PEDIDO, RECETARIO, tope=tope, usuario=usuario_guionizado,
                   limpiar=functools.partial(limpiar, al_menos=al_menos))
            corridas[politica] = [(p["M"], p["usage"]) for p in apuntes.peticiones]
        finally:
            servidor.parar()
    return corridas


def con_tool_choice(url):
    """La primera petición de la lección 01, tal cual la arma api.py, con `tool_choice` {"type":
    "any"} (que exige una llamada): [líneas de lo que volvió]. llama-server la traduce a
    "required" y, si reconoce en la plantilla de chat cómo se escriben las llamadas, construye una
    gramática que obliga al modelo a escribir una (server-chat.cpp, chat-auto-parser-generator.cpp)."""
    from agente import inicio
    from api import peticion
    from entorno import HERRAMIENTAS

    from curso.rutas import RECETARIO
    cuerpo = peticion(inicio(PEDIDO, RECETARIO), HERRAMIENTAS, "modelo")
    cuerpo["tool_choice"] = {"type": "any"}
    cuerpo["max_tokens"] = 128  # basta para ver si empieza una llamada
    estado, _, datos = _pedir(url, "/v1/messages", cuerpo, espera=900)
    if estado != 200 or not isinstance(datos, dict):
        return [f"el servidor contestó {estado}: {str(datos)[:200]}"]
    return [linea(b) for b in datos.get("content", [])]


def grabada():
    """La ruta de la ejecución grabada, en la carpeta del curso como se haya instalado (rutas.RAIZ)."""
    return rutas.RAIZ / GRABADA


def cargar_grabada(ruta=None):
    return json.loads(Path(ruta or grabada()).read_text(encoding="utf-8"))


def grabar(url, ruta=None):
    """Graba en `ruta` la ejecución de la lección 01, el resumen de la 03, el error de la
    ventana, las velocidades y la prueba de tool_choice, con la máquina y la fecha. Cada parte se
    guarda al acabar en `ruta` + ".parcial": si una falla, la siguiente vez solo se rehace esa."""
    ruta = Path(ruta or grabada())
    parcial = ruta.with_name(ruta.name + ".parcial")
    datos = json.loads(parcial.read_text(encoding="utf-8")) if parcial.exists() else {}
    anterior = cargar_grabada(ruta) if ruta.exists() else {}
    if "leccion_03b" in anterior:  # la graba grabar_03b, con su harness: se queda como estaba
        datos.setdefault("leccion_03b", anterior["leccion_03b"])
    datos.update({
        "_que_es": ("Ejecución GRABADA del harness del curso contra un modelo de verdad (no guionizada), "
                    "con la máquina y la fecha en que se grabó. Las lecciones 01 y 03 la enseñan cuando "
                    "no hay un servidor de verdad en ANTHROPIC_BASE_URL, siempre con esta etiqueta."),
        "fecha": datetime.date.today().isoformat(), "maquina": maquina(), "servidor": propiedades(url),
        "harness": f"checkpoints/{PUNTO_DE_LA_GRABACION}"})
    for clave, hacer in (("leccion_01", correr_leccion_01), ("ventana", ventana_real),
                         ("velocidades", velocidades), ("con_tool_choice_any", con_tool_choice),
                         ("leccion_03", resumir)):
        if clave not in datos:
            datos[clave] = hacer(url)
            parcial.write_text(json.dumps(datos, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    ruta.write_text(json.dumps(datos, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    parcial.unlink()
    return datos


def grabar_03b(url, ruta=None):
    """Añade (o rehace) en `ruta` lo de la lección 03b, la caché de llama-server con las dos políticas
    de limpieza, sin tocar lo demás de la grabación; con su propia fecha y máquina."""
    ruta = Path(ruta or grabada())
    datos = cargar_grabada(ruta)
    corridas = corridas_de_limpiar()
    datos["leccion_03b"] = {"fecha": datetime.date.today().isoformat(), "maquina": maquina(),
                            "servidor": propiedades(url), "harness": "checkpoints/03b_limpiar_lo_viejo",
                            "medidas": cache_de_limpiar(url, corridas),
                            "medidas_sin_su_nombre": cache_de_limpiar(url, corridas, nombrar=False)}
    ruta.write_text(json.dumps(datos, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return datos["leccion_03b"]


if __name__ == "__main__":
    if sys.argv[1:] not in (["grabar"], ["grabar-03b"]):
        sys.exit("uso: python -m curso.material.modelo_real grabar | grabar-03b  (con ANTHROPIC_BASE_URL puesta)")
    url = servidor_real()
    if url is None:
        sys.exit("No hay un servidor de verdad en ANTHROPIC_BASE_URL: arráncalo (python -m curso modelo).")
    if sys.argv[1] == "grabar-03b":
        sys.path.insert(0, str(rutas.PUNTOS / "03b_limpiar_lo_viejo"))  # el harness con limpiar
        grabar_03b(url)
    else:
        sys.path.insert(0, str(rutas.PUNTOS / PUNTO_DE_LA_GRABACION))  # el harness que se graba
        grabar(url)
    print(f"Grabada en {grabada()}")
