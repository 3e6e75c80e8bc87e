"""``python -m bench_core`` from ``bench_py/``: the same program as ``bench_py/exec_gpu.py``."""

import sys

from .main import main

sys.exit(main())
