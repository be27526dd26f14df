"""Los tests del recetario y de la lista de la compra: python3 -m unittest"""
import unittest

from compra import compra, falta, lista, veces
from recetario import FICHERO, buscar, recetas, separar

MENU = ["Tortilla", "Flan"]


class TestRecetario(unittest.TestCase):
    def test_una_receta_por_linea(self):
        with open(FICHERO, encoding="utf-8") as f:
            lineas = [linea for linea in f if linea.strip() and not linea.startswith("#")]
        self.assertEqual(len(recetas()), len(lineas))

    def test_nombre(self):
        self.assertEqual(separar("Flan: huevos, leche.")[0], "Flan")

    def test_sin_punto(self):
        receta = "Tortilla: huevos, patatas, cebolla."
        self.assertEqual(separar(receta), ("Tortilla", ["huevos", "patatas", "cebolla"]))

    def test_sin_dos_puntos(self):
        with self.assertRaises(ValueError):
            separar("Tortilla con patatas.")

    def test_minusculas(self):
        for nombre, ingredientes in recetas().items():
            self.assertEqual(ingredientes, [i.lower() for i in ingredientes], nombre)

    def test_buscar(self):
        self.assertIn("Tortilla", buscar("PATATAS"))
        self.assertEqual(buscar("Patatas"), buscar("patatas"))


class TestCompra(unittest.TestCase):
    def test_compra(self):
        cuenta = compra(MENU)
        self.assertEqual(cuenta["huevos"], 2)
        self.assertEqual(veces("Cebolla", MENU), 1)
        self.assertEqual(falta(["Flan"], ["Leche", "azúcar"]), ["huevos", "vainilla"])

    def test_repetidas(self):
        cuenta = compra(["Flan", "Flan"])
        self.assertEqual(cuenta["leche"], 2)
        self.assertEqual(lista(["Flan", "Flan"])[:2], ["azúcar (x2)", "huevos (x2)"])

    def test_minusculas(self):
        self.assertIn("tomates", compra(["Gazpacho"]))

    def test_no_esta(self):
        with self.assertRaisesRegex(ValueError, "Pulpo a la gallega"):
            compra(["Tortilla", "Pulpo a la gallega"])


if __name__ == "__main__":
    unittest.main()
