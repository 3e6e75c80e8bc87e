"""Stores made before the process became the unit (format 2: fixed counts, file order, one
process per steady target, 2-3 per first-call series) judged by today's rules, on the committed
docs/results/h200-2026-12-01 store itself, not a synthetic one.

B is a copy of it with every first-call value of the `first-call` experiment made 5x: each
figure keeps its own spread between processes, so the test reads, from the A/A comparison of
the store against itself, which figures are tight enough to call a 5x change and asserts the
5x comparison calls exactly those `slower`."""

from __future__ import annotations

import math
import shutil
import sqlite3
from pathlib import Path

import pytest

from orchestrator.report.compare import sides as compare_sides
from orchestrator.report.compare import verdicts as compare

from ..conftest import PROJECT

OLD = PROJECT / "docs" / "results" / "h200-2026-12-01"
FIRST = ("first_call_returned", "first_call_after_sync")
# two whole comparisons of a 2-format store read through migrated copies (~25 s)
pytestmark = pytest.mark.slow


def _copy(dest: Path) -> Path:
    dest.mkdir()
    shutil.copy2(OLD / "results.sqlite", dest / "results.sqlite")  # no -wal/-shm of a reader
    return dest


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[compare.Comparison, ...]:
    tmp = tmp_path_factory.mktemp("old")
    a, b = _copy(tmp / "a"), _copy(tmp / "b")
    with sqlite3.connect(b / "results.sqlite") as db:
        marks = ",".join("?" * len(FIRST))
        changed = db.execute(
            f"UPDATE figures SET value = value * 5 WHERE method IN ({marks}) AND run_id IN "
            "(SELECT run_id FROM runs WHERE experiment = 'first-call')", FIRST).rowcount
    db.close()
    assert changed == 20  # 10 runs x the two first-call methods
    side_a, side_b = compare_sides.load_side(str(a)), compare_sides.load_side(str(b))
    return (compare.compare(side_a, side_a), compare.compare(side_a, side_b),
            compare.compare(side_a, side_b, correction="holm"))


def _first_calls(comp: compare.Comparison) -> dict[str, compare.Row]:
    return {r.figure: r for r in comp.rows if r.section == "first call" and r.verdict
            and any(m.replace("_", " ") in r.figure for m in FIRST)}


def test_an_old_store_against_itself_has_no_faster_or_slower(judged) -> None:
    same, _, _ = judged
    verdicts = [r.verdict for r in same.rows if r.verdict]
    assert verdicts and not {"faster", "slower"} & set(verdicts)
    # fewer processes give wider intervals, never a refusal: every series of 2-3 processes has
    # an interval; single processes say `no verdict (one value)`
    series = [r for r in same.rows if r.basis.startswith("processes")]
    assert series and all(r.lo is not None and r.hi is not None for r in series)
    assert {r.basis for r in series} >= {"processes 2/2", "processes 3/3"}


def test_a_5x_change_is_slower_wherever_the_figures_own_spread_allows(judged) -> None:
    same, changed, strict = judged
    aa, five = _first_calls(same), _first_calls(changed)
    assert set(aa) == set(five) and len(five) == 8
    for name, row in five.items():
        assert row.ratio == pytest.approx(5.0) and row.verdict in ("slower", "inconclusive")
        # what the store's own A/A says this figure can detect: a change beyond (1+e)x its
        # A/A interval's half-width, Holm-corrected over the family
        tight = aa[name].hi is not None and math.log(aa[name].hi) < 0.25
        if tight:
            assert row.verdict == "slower", (name, row.basis, aa[name].hi)
        assert row.lo is not None and row.lo > 1.0  # its interval says slower even unjudged
    # Benjamini-Hochberg (the default) calls all eight; under Holm the loose ones (cold first
    # calls varying +-60% between processes) stay inconclusive, paying for every figure
    assert {r.verdict for r in five.values()} == {"slower"}
    held = _first_calls(strict)
    assert {r.verdict for r in held.values()} == {"slower", "inconclusive"}
    assert {r.basis for r in held.values() if r.verdict == "slower"} >= {"processes 3/3"}
