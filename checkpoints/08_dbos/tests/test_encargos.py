"""El encargo como contrato (lección 05): qué encargo y qué entrega acepta `encargos.py`.

Que el buzón lo aplique (guardar el encargo con el hijo, rechazar la entrega que no lo cumple sin
tocar la base) se prueba en test_buzon.py.
"""
import copy
import json

import pytest

from curso.comprobaciones import hostiles
from encargos import ACCIONES_DELEGABLES, PLAZO_S, TOPE_DE_PASOS, encargo, validar_encargo, validar_entrega

ENCARGO_LOGS = {
    "objetivo": "Encontrar en los registros cuándo deja la API de poder hablar con db.",
    "recursos": ["logs/api@v9", "logs/db@v4"],
    "acciones": ["leer", "buscar"],
    "entregable": {"hallazgos": [], "referencias": [], "incertidumbres": []},
    "tope_de_pasos": 8,
    "plazo": 120,
}
ENTREGA_LOGS = {
    "hallazgos": ["La API intenta conectar con db en el puerto 5433."],
    "referencias": ["logs/api@v9:17"],
    "incertidumbres": ["No sé si db se reinició antes."],
}


def con(base, **cambios):
    nuevo = copy.deepcopy(base)
    for clave, valor in cambios.items():
        if valor is ...:
            del nuevo[clave]
        else:
            nuevo[clave] = valor
    return nuevo


def test_un_encargo_bien_formado_se_acepta():
    assert validar_encargo(ENCARGO_LOGS) is None
    assert validar_encargo(con(ENCARGO_LOGS, plazo="2025-03-01T12:00:00+01:00", acciones=["leer"])) is None
    assert validar_encargo(con(ENCARGO_LOGS, recursos=["recetario/"], plazo=90.5)) is None


@pytest.mark.parametrize("cambios, mensaje", [
    ({"objetivo": ...}, "faltan 'objetivo'"),
    ({"presupuesto": 3}, "sobran 'presupuesto'"),
    ({"objetivo": "  "}, "El objetivo"),
    ({"recursos": []}, "está vacía"),
    ({"recursos": "logs/api@v9"}, "debe ser una lista de textos"),
    ({"recursos": ["logs/api@v9", "logs/api@v9"]}, "repetidos"),
    ({"recursos": ["logs/../secretos"]}, "sube de carpeta"),
    ({"acciones": ["leer", "editar"]}, "La acción 'editar' no se puede delegar"),
    ({"acciones": ["ejecutar"]}, "no se puede delegar"),
    ({"acciones": []}, "está vacía"),
    ({"entregable": {"hallazgos": [], "referencias": []}}, "faltan 'incertidumbres'"),
    ({"entregable": {"hallazgos": ["x"], "referencias": [], "incertidumbres": []}}, "lista vacía"),
    ({"entregable": []}, "El entregable debe ser un dict"),
    ({"tope_de_pasos": 0}, "entero positivo"),
    ({"tope_de_pasos": True}, "no un bool"),
    ({"tope_de_pasos": 8.0}, "entero positivo"),
    ({"plazo": "mañana"}, "no es una fecha y hora ISO 8601"),
    ({"plazo": "2025-03-01T12:00:00"}, "zona horaria"),
    ({"plazo": "2025-03-01"}, "zona horaria"),
    ({"plazo": 0}, "positivo y finito"),
    ({"plazo": hostiles.INFINITO}, "positivo y finito"),
    ({"plazo": True}, "fecha ISO 8601 o un número de segundos"),
    ({"plazo": None}, "fecha ISO 8601 o un número de segundos"),
    ({"plazo": 10**400}, "positivo y finito"),
    ({"plazo": hostiles.NAN}, "positivo y finito"),
    ({"plazo": 10**9}, "como mucho"),
    ({"tope_de_pasos": hostiles.ENTERO_ENORME}, r"un entero de unas \d+ cifras"),
])
def test_un_encargo_mal_formado_se_rechaza(cambios, mensaje):
    with pytest.raises(ValueError, match=mensaje):
        validar_encargo(con(ENCARGO_LOGS, **cambios))


def test_un_encargo_que_no_es_un_dict_se_rechaza():
    with pytest.raises(ValueError, match="El encargo debe ser un dict"):
        validar_encargo(json.dumps(ENCARGO_LOGS))


def test_una_entrega_que_cumple_el_encargo_se_acepta():
    assert validar_entrega(ENCARGO_LOGS, ENTREGA_LOGS) is None
    vacia = {"hallazgos": [], "referencias": [], "incertidumbres": ["No encontré nada."]}
    assert validar_entrega(ENCARGO_LOGS, vacia) is None
    carpeta = con(ENCARGO_LOGS, recursos=["recetario/"])
    assert validar_entrega(carpeta, con(ENTREGA_LOGS, referencias=["recetario/tienda.py:12"])) is None


@pytest.mark.parametrize("cambios, mensaje", [
    ({"incertidumbres": ...}, "faltan 'incertidumbres'"),
    ({"conclusion": "es la red"}, "sobran 'conclusion'"),
    ({"hallazgos": "parece un fallo de red"}, "debe ser una lista de textos"),
    ({"hallazgos": [17]}, "cada elemento debe ser un texto"),
    ({"referencias": []}, "hallazgos sin ninguna referencia"),
    ({"referencias": ["logs/red@v1:3"]}, "no está dentro de los recursos permitidos"),
    ({"referencias": ["logs/api@v9x"]}, "no está dentro de los recursos permitidos"),
    ({"referencias": ["logs/api@v9/../../secretos"]}, "no está dentro de los recursos permitidos"),
])
def test_una_entrega_que_incumple_el_encargo_se_rechaza(cambios, mensaje):
    with pytest.raises(ValueError, match=mensaje):
        validar_entrega(ENCARGO_LOGS, con(ENTREGA_LOGS, **cambios))


@pytest.mark.parametrize("carga", [None, "hallazgos", ["hallazgos", "referencias"]])
def test_una_entrega_que_no_es_un_dict_se_rechaza(carga):
    with pytest.raises(ValueError, match="La entrega debe ser un dict"):
        validar_entrega(ENCARGO_LOGS, carga)


def test_una_referencia_no_sale_de_su_carpeta():
    carpeta = con(ENCARGO_LOGS, recursos=["recetario/"])
    for referencia in ("recetario/../.env", "recetario", "recetarios/x.py", "/recetario/x.py"):
        with pytest.raises(ValueError, match="no está dentro de los recursos permitidos"):
            validar_entrega(carpeta, con(ENTREGA_LOGS, referencias=[referencia]))


def test_encargo_construye_uno_valido_con_la_forma_vacia_del_entregable():
    hecho = encargo("Mira la configuración.", ("config/",))
    assert hecho == {"objetivo": "Mira la configuración.", "recursos": ["config/"],
                     "acciones": list(ACCIONES_DELEGABLES),
                     "entregable": {"hallazgos": [], "referencias": [], "incertidumbres": []},
                     "tope_de_pasos": TOPE_DE_PASOS, "plazo": PLAZO_S}
    assert validar_encargo(hecho) is None


@pytest.mark.parametrize("argumentos, mensaje", [
    ({"acciones": ["leer", "ejecutar"]}, "no se puede delegar"),
    ({"tope_de_pasos": 0}, "entero positivo"),
    ({"recursos": []}, "está vacía"),
])
def test_encargo_no_construye_uno_que_no_valdria(argumentos, mensaje):
    base = {"objetivo": "Mira.", "recursos": ["config/"]}
    with pytest.raises(ValueError, match=mensaje):
        encargo(**dict(base, **argumentos))

