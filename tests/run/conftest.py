"""Fixtures of the run layer's tests: a fake pynvml installed for one test."""

from __future__ import annotations

import sys

import pytest

from orchestrator.run import gpu_state

from .fake_nvml import FakeNvml


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    """The fake NVML as `pynvml`, and no hung NVML thread left from an earlier test."""
    fake = FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(gpu_state, "_hung", [])
    return fake
