"""Punto de control 01: el prompt de sistema dice de cada herramienta lo que hace de verdad.

El prompt es el único texto que el modelo lee siempre. Cada herramienta tiene en él una línea
`- nombre(argumentos) …`, y esa línea se compara aquí con la herramienta:

- con su esquema (`entorno.HERRAMIENTAS`): las mismas herramientas, con los mismos argumentos;
- con sus límites: las cifras de la línea son las constantes de herramientas.py que la limitan y
  los valores por defecto de sus argumentos, ni más ni menos;
- con su comportamiento: `leer` pagina por la cifra que dice la línea, y su nota dice con qué
  `desde` seguir; pide permiso justo la herramienta cuya línea dice que lo pide (`permisos.permitido`).

Lo que hacen la espera y el corte de `ejecutar` con sus constantes lo prueba test_herramientas.py.
Cada prueba corre también con el prompt de antes (la variante ingenua, «leer(ruta) devuelve el
fichero entero», escrito cuando leer aún no paginaba): debe fallar.
"""
import inspect
import re

import pytest

import herramientas
from agente import SISTEMA
from entorno import HERRAMIENTAS
from permisos import permitido

# El apartado de las herramientas del prompt de antes, tal cual.
ANTES = """Las herramientas:
- leer(ruta) devuelve el fichero entero. Las rutas son relativas a la copia de trabajo; no \
puedes salir de ella.
- editar(ruta, antiguo, nuevo) cambia el texto antiguo por el nuevo. antiguo tiene que aparecer \
exactamente una vez en el fichero: si no aparece, o aparece más de una vez, no se cambia nada y \
recibes un error que lo dice. Para un cambio pequeño, cita solo las líneas que cambian y alguna \
de alrededor si hace falta para que sea único.
- ejecutar(comando) ejecuta una orden de la shell en la copia de trabajo y devuelve su código de \
salida y lo que escribió. Una orden que no termina se corta; una salida muy larga, también.

Cada escritura y cada orden se le preguntan al usuario antes de hacerse. El usuario puede \
denegar un permiso; si lo hace, no lo intentes de otra manera: explica qué querías hacer y por qué.
"""
PROMPTS = {"el_de_ahora": SISTEMA, "el_de_antes": ANTES}
# Las constantes de herramientas.py que limitan lo que hace cada herramienta.
LIMITES = {"leer": ["LIMITE_LECTURA"], "editar": [], "ejecutar": ["ESPERA_ORDEN", "LIMITE_SALIDA"]}
LINEA = re.compile(r"^- (\w+)\(([^)]*)\) (.*?)(?=^- |\n\n|\Z)", re.M | re.S)
PIDE, NO_PIDE = "Pide permiso.", "No pide permiso."


def lineas(prompt):
    """{herramienta: (sus argumentos, el texto de su línea en una línea)} de las líneas `- nombre(…)`."""
    return {m[1]: ([a.strip() for a in m[2].split(",") if a.strip()], " ".join(m[3].split()))
            for m in LINEA.finditer(prompt)}


def cifras(texto):
    """Los números enteros que escribe `texto`."""
    return {int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.]\d)", texto)}


def comprobar(variante, prueba):
    """Pasa `prueba(prompt)` con el prompt de ahora y falla con el de antes."""
    try:
        prueba(PROMPTS[variante])
    except AssertionError:
        assert variante == "el_de_antes", "el prompt de ahora no dice lo que hace la herramienta"
    else:
        assert variante == "el_de_ahora", "la prueba no ve el prompt de antes"


@pytest.mark.parametrize("variante", PROMPTS)
def test_el_prompt_nombra_cada_herramienta_con_los_argumentos_de_su_esquema(variante):
    def prueba(prompt):
        dice = {nombre: argumentos for nombre, (argumentos, _) in lineas(prompt).items()}
        assert dice == {h["name"]: list(h["input_schema"]["properties"]) for h in HERRAMIENTAS}
    comprobar(variante, prueba)


@pytest.mark.parametrize("variante", PROMPTS)
def test_las_cifras_de_cada_herramienta_son_sus_limites_y_sus_valores_por_defecto(variante):
    def prueba(prompt):
        for nombre, (_, texto) in lineas(prompt).items():
            por_defecto = {p.default for p in inspect.signature(getattr(herramientas, nombre)).parameters.values()
                           if isinstance(p.default, int)}
            limites = {getattr(herramientas, constante) for constante in LIMITES[nombre]}
            assert cifras(texto) == limites | por_defecto, nombre
    comprobar(variante, prueba)


@pytest.mark.parametrize("variante", PROMPTS)
def test_leer_pagina_por_la_cifra_que_dice_el_prompt(variante, tmp_path):
    """Un fichero tres veces más largo que la cifra sale en trozos que no pasan de ella, cada uno
    con su nota con el `desde` del siguiente, y los trozos juntos son el fichero."""
    def prueba(prompt):
        _, texto = lineas(prompt)["leer"]
        limite = max(cifras(texto), default=None)  # la otra cifra es el desde por defecto, 1
        assert limite and "desde" in texto
        fichero = "".join(f"línea {n}: {'x' * 70}\n" for n in range(3 * limite // 80))
        (tmp_path / "largo.txt").write_text(fichero, encoding="utf-8")
        trozos, desde = [], 1
        while desde is not None:
            leido = herramientas.leer(tmp_path, "largo.txt", desde=desde)
            trozo, _, nota = leido.rpartition("\n[…")
            assert len(trozo) <= limite
            trozos.append(trozo + "\n")
            siguiente = re.search(r"desde=(\d+)\]$", nota)
            desde = int(siguiente[1]) if siguiente else None
        assert len(trozos) >= 3 and "".join(trozos) == fichero
    comprobar(variante, prueba)


@pytest.mark.parametrize("variante", PROMPTS)
def test_pide_permiso_la_herramienta_que_el_prompt_dice_que_lo_pide(variante):
    """Sin usuario, `permitido` solo deja lo que no pide permiso; con un usuario que dice que sí, todo."""
    entradas = {"leer": {"ruta": "a.py"}, "editar": {"ruta": "a.py", "antiguo": "a", "nuevo": "b"},
                "ejecutar": {"comando": "ls"}}

    def prueba(prompt):
        for nombre, (_, texto) in lineas(prompt).items():
            assert texto.endswith((PIDE, NO_PIDE)), f"la línea de {nombre} no dice si pide permiso"
            assert permitido(nombre, entradas[nombre], None) is texto.endswith(NO_PIDE), nombre
            assert permitido(nombre, entradas[nombre], lambda *_: True) is True
        assert set(lineas(prompt)) == set(entradas)
    comprobar(variante, prueba)
