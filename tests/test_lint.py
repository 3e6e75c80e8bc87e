"""The code stays ruff clean (the project's style rules live in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

from .conftest import PROJECT


def test_ruff_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=PROJECT,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
