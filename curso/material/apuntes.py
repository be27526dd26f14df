"""Para las lecciones 05 y 06: un modelo que apunta cada petición que le pasa a otro, para medir una ejecución.

Equipo del curso; lo usan las lecciones 02 (el `usage` de cada turno), 03 (qué peticiones son
de resumen y qué M vio el modelo en cada turno) y 05 (las cifras de la delegación), y los tests.
Se pone entre el bucle y el modelo sin que el bucle lo note: se llama igual que un modelo
(`apuntador(M, herramientas)`) y expone el `usage` del modelo que envuelve.

    apuntador = Apuntador(ModeloAPI("guion:compacta", url=...), instruccion=INSTRUCCION)
    agente(apuntador, PEDIDO, RECETARIO, ...)
    apuntador.usos                    # el usage de cada respuesta, en orden
    apuntador.turnos()                # las peticiones de turno (sin las de resumen)

De cada petición que el modelo contesta queda un dict con:

- "M": una copia de la conversación tal como se envió (después el bucle sigue cambiando la suya);
- "respuesta": los bloques que volvieron;
- "usage": una copia del `usage` de esa respuesta;
- "resumen": True si era la petición de resumen de la compactación (su último mensaje es
  `("usuario", instruccion)`); siempre False si no se da `instruccion`.

Una petición que falla (p. ej. la que no cabe en la ventana) no deja apunte: no tiene respuesta
ni `usage`, y la excepción sigue su camino hasta quien llamó al bucle.
"""
import copy


class Apuntador:
    """Envuelve a `modelo` y apunta en `peticiones` cada petición contestada (ver el módulo)."""

    def __init__(self, modelo, instruccion=None):
        self.modelo, self.instruccion, self.peticiones = modelo, instruccion, []

    @property
    def usage(self):
        return self.modelo.usage

    def __call__(self, M, herramientas=()):
        enviada = copy.deepcopy(M)
        respuesta = self.modelo(M, herramientas)
        self.peticiones.append({
            "M": enviada,
            "respuesta": respuesta,
            "usage": dict(self.modelo.usage),
            "resumen": self.instruccion is not None and enviada[-1] == ("usuario", self.instruccion),
        })
        return respuesta

    @property
    def usos(self):
        """El `usage` de cada respuesta, en orden."""
        return [peticion["usage"] for peticion in self.peticiones]

    def turnos(self):
        """Las peticiones de turno del bucle: todas menos las de resumen."""
        return [peticion for peticion in self.peticiones if not peticion["resumen"]]

    def resumenes(self):
        """Las peticiones de resumen de la compactación."""
        return [peticion for peticion in self.peticiones if peticion["resumen"]]
