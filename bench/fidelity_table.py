"""Print the cost model's prediction errors against published runs (docs/fidelity.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.core.fidelity import table  # noqa: E402

if __name__ == "__main__":
    print(table())
