"""Time one f32 matmul in PyTorch the right and the wrong ways (the chapter's ``exec_gpu.py``).

The program is the package ``bench_core`` beside this file (one module per concern, mirroring
``bench_rust/bench-core/src/``; its ``__init__`` holds the full description of the modes and
the timing details). This script is its entry point under the path the orchestrator, the
bundles and the shell scripts run: ``python bench_py/exec_gpu.py ARGS`` or, from ``bench_py/``,
``python -m exec_gpu ARGS``. Standalone: standard library, ``torch`` and ``numpy`` only; it
does not import the orchestrator and needs no install. Printed lines: docs/LINES.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if __name__ == "__main__":
    # a GPU box may run a read-only copy of the project: write no __pycache__ beside it
    sys.dont_write_bytecode = True
if _HERE not in sys.path:  # loaded by file path (tests, importlib): find the package beside
    sys.path.insert(0, _HERE)

from bench_core.main import main  # noqa: E402  (after the path is known)

if __name__ == "__main__":
    sys.exit(main())
