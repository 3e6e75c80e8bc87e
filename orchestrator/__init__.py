"""Reproduce the timing chapter's numbers (PyTorch and burn) from one YAML file.

Layers, each a package whose `__init__` says what lives there and what it may import:

- `experiments`: the experiments file (models, YAML with positions) and the plan (runs, skips).
- `programs`: one folder per framework behind one interface, and their registry.
- `records`: the record types every layer speaks (runs, builds, figures; status, role, cache).
- `run`: executing a plan: sweep, processes, burn's cache, machine state, progress.
- `data`: the store (schema, migrations), parsing, the dataset, accuracy.
- `report`: the chapter's tables, checks and plots, compare, and the writer.
- `stats`: the statistics of timings (intervals, verdict tests, resampling, trend), a leaf.
- `vocabulary`: every measurement word once (methods, stats, dataset columns).
- `axes`: every sweep axis of a run once (default, run id, words, column, compare's key).
- `cli`, `errors`, `signals`: the command line; errors and signal deferral every layer uses.

Import rules (tests/test_layers.py enforces them): cli -> report -> data; cli -> run -> experiments
and data; every layer may use programs, the vocabulary, the axes and the records; programs use
nothing but the records; report and run use `stats`, which uses nothing of the package.

Python users: `orchestrator.dataset.load(Path("results"))` (the same module as
`orchestrator.data.dataset`) returns the tidy figures and raw samples of the latest sweep as
pandas DataFrames.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"


def __getattr__(name: str) -> ModuleType:
    # `from orchestrator import dataset` as the README shows, without importing pandas for
    # every command that never reads a dataset
    if name == "dataset":
        return importlib.import_module("orchestrator.data.dataset")
    raise AttributeError(f"module 'orchestrator' has no attribute {name!r}")
