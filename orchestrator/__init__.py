"""Reproduce the timing chapter's numbers (PyTorch and burn) from one YAML file.

Python users: `orchestrator.dataset.load(Path("results"))` returns the tidy figures and raw
samples of the latest sweep as pandas DataFrames.
"""

__version__ = "0.1.0"
