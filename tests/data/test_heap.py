"""heap.release hands freed memory back where glibc can, and is a no-op elsewhere."""

from __future__ import annotations

import sys

import psutil
import pytest

from orchestrator.data import heap


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim: Linux")
def test_on_linux_the_freed_heap_goes_back() -> None:
    keep, drop = [], []
    for i in range(200_000):  # interleaved: what survives pins the heap's pages, as in a load
        (keep if i % 50 == 0 else drop).append([i] * 120)
    proc = psutil.Process()
    del drop
    before = proc.memory_info().rss
    assert heap.release() is True
    assert proc.memory_info().rss < before - 50 * 2**20  # ~190 MB of freed lists kept till now
    assert len(keep) == 4000


def test_elsewhere_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    heap._trim.cache_clear()
    monkeypatch.setattr(sys, "platform", "darwin")
    try:
        assert heap.release() is False
    finally:
        heap._trim.cache_clear()
