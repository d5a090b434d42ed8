"""Live-side tests import their helpers from support.py beside them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
