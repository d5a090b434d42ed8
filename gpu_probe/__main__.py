"""``python -m gpu_probe ...`` and ``torchrun ... -m gpu_probe ...``: see gpu_probe.launch."""

import sys

from gpu_probe.launch import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
