"""bench/calibration.py: its vectorised rule is compare.finish's, figure for figure, and its
families come from the committed A/A stores."""

from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest

from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import Row
from orchestrator.stats import power

from .conftest import PROJECT

_spec = importlib.util.spec_from_file_location("calibration", PROJECT / "bench" / "calibration.py")
assert _spec is not None and _spec.loader is not None
calibration = importlib.util.module_from_spec(_spec)
sys.modules["calibration"] = calibration  # its dataclass looks its module up while made
_spec.loader.exec_module(calibration)

WORDS = {1: "slower", -1: "faster", 0: "same", 9: "inconclusive"}


@pytest.mark.parametrize("choice", ["bh", "holm"])
@pytest.mark.parametrize("seed", range(6))
def test_the_vectorised_rule_is_compare_finish(choice: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = 30
    d = rng.normal(0, 0.15, (1, m)) + np.where(np.arange(m) % 2, math.log(1.4), 0)[None, :]
    se = rng.uniform(0.005, 0.2, (1, m))
    df = rng.uniform(2, 10, (1, m))
    want = calibration.verdicts(d, se, df, 0.05, choice)[0]
    rows = []
    for i in range(m):
        row = Row("methods", f"f{i}", "median", 1.0, 1.0, ratio=math.exp(d[0, i]),
                  basis="processes 3/3", log_diff=float(d[0, i]), se=float(se[0, i]),
                  df=float(df[0, i]))
        row.p_value = power.p_decided(row.log_diff, row.se, row.df, 0.05)
        rows.append(row)
    compare.finish(rows, choice, 0.05)
    assert [r.verdict for r in rows] == [WORDS[int(v)] for v in want]


def test_the_families_are_the_committed_aa_pairs() -> None:
    found = {f.name: f for f in calibration.families()}
    assert len(found) == 4
    for fam in found.values():
        assert len(fam.spread) >= 20 and (fam.spread > 0).all() and (fam.pa >= 2).all()


def test_an_aa_family_stays_within_five_percent_false() -> None:
    fam = calibration.families()[1]
    r = calibration.simulate(fam, 0.0, "bh", 300, np.random.default_rng(1))
    assert r["false_share"] <= 0.05
