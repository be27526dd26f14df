"""Los tests de los caminos importan `alumno` (este mismo directorio) por su nombre."""
import sys
from pathlib import Path

CARPETA = str(Path(__file__).resolve().parent)
if CARPETA not in sys.path:
    sys.path.insert(0, CARPETA)
