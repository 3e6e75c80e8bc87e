"""The committed H200 stores as one history (formats 1, 2 and 6; five sweeps, four project
commits, an A/A pair last), built once for the history tests."""

from __future__ import annotations

import pytest

from orchestrator.report.history import course, timeline

from ...conftest import PROJECT

RESULTS = PROJECT / "docs" / "results"
H200 = [RESULTS / "h200-2026-11-30", RESULTS / "h200-2026-12-01", RESULTS / "h200",
        RESULTS / "h200-aa-2026-12-03" / "a", RESULTS / "h200-aa-2026-12-03" / "b"]


@pytest.fixture(scope="session")
def h200_history() -> course.History:
    # given out of time order: the history orders them by when each sweep started
    return course.build(timeline.load([str(p) for p in reversed(H200)]))


# every committed H200 store: the chapter's three frameworks, the size curves, both A/A pairs
EVERY_H200 = [*H200[:2], RESULTS / "h200-2026-12-02-chapter", *H200[2:],
              RESULTS / "h200-sizes-ncu-2026-12-03",
              RESULTS / "h200-aa-first-call-2026-12-03" / "a",
              RESULTS / "h200-aa-first-call-2026-12-03" / "b"]


@pytest.fixture(scope="session")
def every_h200_history() -> course.History:
    return course.build(timeline.load([str(p) for p in EVERY_H200]))
