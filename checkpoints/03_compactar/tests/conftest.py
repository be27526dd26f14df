"""Los tests de este punto de control importan sus módulos por su nombre (`import calentamiento`)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
