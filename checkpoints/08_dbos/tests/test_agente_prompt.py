"""Punto de control 01: el prompt de sistema dice de cada herramienta lo que hace de verdad.

El prompt es el único texto que el modelo lee siempre. Cada herramienta tiene en él una línea
`- nombre(argumentos) …`, y esa línea se compara aquí con la herramienta:

- con su esquema (`entorno.HERRAMIENTAS`): las mismas herramientas, con los mismos argumentos;
- con sus límites: las cifras de la línea son las constantes de herramientas.py que la limitan y
  los valores por defecto de sus argumentos, ni más ni menos;
- con su comportamiento: `leer` devuelve el fichero entero si su línea no dice un límite, y si lo
  dice, pagina por esa cifra y su nota dice con qué `desde` seguir (desde la lección 03); pide
  permiso justo la herramienta cuya línea dice que lo pide (`permisos.permitido`).

Lo que hacen la espera y el corte de `ejecutar` con sus constantes lo prueba test_herramientas.py.
Cada prueba corre también con una variante ingenua del prompt que dice otra cosa de lo que prueba
(la que pasó de verdad: «leer(ruta) devuelve el fichero entero» cuando leer ya paginaba), y debe
fallar con ella.
"""
import inspect
import re

import pytest

import herramientas
from agente import SISTEMA
from entorno import HERRAMIENTAS
from permisos import permitido

# Las constantes de herramientas.py que limitan lo que hace cada herramienta (si las tiene).
LIMITES = {"leer": ["LIMITE_LECTURA"], "editar": [], "ejecutar": ["ESPERA_ORDEN", "LIMITE_SALIDA"]}
LINEA = re.compile(r"^- (\w+)\(([^)]*)\) (.*?)(?=^- |\n\n|\Z)", re.M | re.S)
PIDE, NO_PIDE = "Pide permiso.", "No pide permiso."
ENTRADAS = {"leer": {"ruta": "a.py"}, "editar": {"ruta": "a.py", "antiguo": "a", "nuevo": "b"},
            "ejecutar": {"comando": "ls"}}


def lineas(prompt):
    """{herramienta: (sus argumentos, el texto de su línea en una línea)} de las líneas `- nombre(…)`."""
    return {m[1]: ([a.strip() for a in m[2].split(",") if a.strip()], " ".join(m[3].split()))
            for m in LINEA.finditer(prompt)}


def cifras(texto):
    """Los números enteros que escribe `texto`."""
    return {int(n) for n in re.findall(r"(?<![\w.])\d+(?![\w.]\d)", texto)}


def por_defecto(nombre):
    """Los valores por defecto numéricos de los argumentos de la herramienta `nombre`."""
    return {p.default for p in inspect.signature(getattr(herramientas, nombre)).parameters.values()
            if isinstance(p.default, int)}


def cambiar_linea(prompt, nombre, nueva):
    """`prompt` con la línea de la herramienta `nombre` cambiada por `nueva`."""
    m = next(m for m in LINEA.finditer(prompt) if m[1] == nombre)
    return prompt[:m.start()] + nueva + ("\n" if prompt[m.end() - 1] == "\n" else "") + prompt[m.end():]


def leer_al_reves(prompt):
    """La línea de leer, diciendo lo contrario de lo que hace: «entero» si pagina, un límite si no."""
    if hasattr(herramientas, "LIMITE_LECTURA"):  # la variante de verdad, la del prompt de antes
        return cambiar_linea(prompt, "leer", "- leer(ruta) devuelve el fichero entero. No pide permiso.")
    return cambiar_linea(prompt, "leer", "- leer(ruta) devuelve como mucho 6000 caracteres: si no cabe, "
                                         "una nota dice con qué desde seguir. No pide permiso.")


VARIANTES = {
    "el_de_ahora": lambda prompt: prompt,
    "un_argumento_de_menos": lambda prompt: re.sub(r"^(- editar\([^,)]*), [^)]*\)", r"\1)", prompt, flags=re.M),
    "otra_cifra": lambda prompt: re.sub(r"\b60 s\b", "30 s", prompt),
    "el_permiso_al_reves": lambda prompt: prompt.replace(NO_PIDE, PIDE),
    "leer_al_reves": leer_al_reves,
}


def comprobar(variante, prueba):
    """Pasa `prueba(prompt)` con el prompt de ahora y falla con la variante ingenua."""
    prompt = VARIANTES[variante](SISTEMA)
    assert variante == "el_de_ahora" or prompt != SISTEMA, f"la variante {variante} no cambia nada"
    try:
        prueba(prompt)
    except AssertionError:
        assert variante != "el_de_ahora", "el prompt de ahora no dice lo que hace la herramienta"
    else:
        assert variante == "el_de_ahora", f"la prueba no ve la variante {variante}"


@pytest.mark.parametrize("variante", ["el_de_ahora", "un_argumento_de_menos"])
def test_el_prompt_nombra_cada_herramienta_con_los_argumentos_de_su_esquema(variante):
    def prueba(prompt):
        dice = {nombre: argumentos for nombre, (argumentos, _) in lineas(prompt).items()}
        assert dice == {h["name"]: list(h["input_schema"]["properties"]) for h in HERRAMIENTAS}
    comprobar(variante, prueba)


@pytest.mark.parametrize("variante", ["el_de_ahora", "otra_cifra", "leer_al_reves"])
def test_las_cifras_de_cada_herramienta_son_sus_limites_y_sus_valores_por_defecto(variante):
    def prueba(prompt):
        for nombre, (_, texto) in lineas(prompt).items():
            limites = {getattr(herramientas, c) for c in LIMITES[nombre] if hasattr(herramientas, c)}
            assert cifras(texto) == limites | por_defecto(nombre), nombre
    comprobar(variante, prueba)


@pytest.mark.parametrize("variante", ["el_de_ahora", "leer_al_reves"])
def test_leer_devuelve_lo_que_dice_su_linea(variante, tmp_path):
    """Un fichero de 18.000 caracteres: si la línea de leer no dice un límite, sale entero; si lo
    dice, en trozos que no pasan de él, cada uno con su nota con el `desde` del siguiente, y los
    trozos juntos son el fichero."""
    fichero = "".join(f"línea {n}: {'x' * 70}\n" for n in range(18000 // 80))
    (tmp_path / "largo.txt").write_text(fichero, encoding="utf-8")

    def prueba(prompt):
        _, texto = lineas(prompt)["leer"]
        limite = max(cifras(texto) - por_defecto("leer"), default=None)
        if limite is None:
            assert "entero" in texto and herramientas.leer(tmp_path, "largo.txt") == fichero
            return
        assert "desde" in texto and "desde" in inspect.signature(herramientas.leer).parameters
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


@pytest.mark.parametrize("variante", ["el_de_ahora", "el_permiso_al_reves"])
def test_pide_permiso_la_herramienta_que_el_prompt_dice_que_lo_pide(variante):
    """Sin usuario, `permitido` solo deja lo que no pide permiso; con un usuario que dice que sí, todo."""
    def prueba(prompt):
        assert set(lineas(prompt)) == set(ENTRADAS)
        for nombre, (_, texto) in lineas(prompt).items():
            assert texto.endswith((PIDE, NO_PIDE)), f"la línea de {nombre} no dice si pide permiso"
            assert permitido(nombre, ENTRADAS[nombre], None) is texto.endswith(NO_PIDE), nombre
            assert permitido(nombre, ENTRADAS[nombre], lambda *_: True) is True
    comprobar(variante, prueba)
