"""stats/sequential.py: alpha spending over looks after every round, for the paired t.

References: scipy's t and normal, the published Lan-DeMets Pocock-type boundaries, and the
repeated intervals' coverage measured by an independent simulation, against the textbook
conversion of the normal boundary (scipy's multivariate normal) that it replaces."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from orchestrator.stats import sequential


def test_the_normal_is_scipys_far_into_the_tail() -> None:
    for p in (0.3, 0.025, 1e-4, 1e-9, 1e-13):
        assert sequential.normal_isf(p) == pytest.approx(stats.norm.isf(p), rel=1e-9)
        assert sequential.normal_sf(stats.norm.isf(p)) == pytest.approx(p, rel=1e-9)


def test_the_spending_functions_are_their_closed_forms() -> None:
    for t in (0.1, 0.3, 0.7, 1.0):
        assert sequential.spent(t, 0.05, "obrien-fleming") == pytest.approx(
            2 * stats.norm.sf(stats.norm.isf(0.025) / math.sqrt(t)), rel=1e-9)
        assert sequential.spent(t, 0.05, "pocock") == pytest.approx(
            0.05 * math.log(1 + (math.e - 1) * t), rel=1e-12)


@pytest.mark.parametrize("rounds", [3, 6])
@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_one_look_is_the_fixed_t_interval(rounds: int, spending: str) -> None:
    """A single look spends all of α: its level is α, its boundary scipy's t quantile."""
    (q,) = sequential.look_levels(rounds, rounds, 0.05, spending).values()
    assert q == pytest.approx(0.05, rel=0.03)


def test_pocock_type_at_many_rounds_is_the_published_normal_boundary() -> None:
    """Five looks at 40, 80, ... 200 rounds (39-199 df: nearly normal) give the boundaries
    of Lan-DeMets Pocock-type spending, two-sided 5% (gsDesign: 2.438 2.427 2.410 2.397 2.386),
    as levels."""
    cs = sequential._t_boundaries((40, 80, 120, 160, 200), 200, 0.05, "pocock")
    got = [2 * stats.t.sf(c, n - 1) for c, n in zip(cs, (40, 80, 120, 160, 200), strict=True)]
    want = [2 * stats.norm.sf(z) for z in (2.438, 2.427, 2.410, 2.397, 2.386)]
    assert got == pytest.approx(want, rel=0.05)


def test_bonferroni_is_alpha_over_the_looks_and_spending_keeps_more_for_the_last() -> None:
    b = sequential.look_levels(3, 10, 0.05, "bonferroni")
    assert list(b) == list(range(3, 11)) and all(q == pytest.approx(0.05 / 8) for q in b.values())
    obf = sequential.look_levels(3, 10, 0.05, "obrien-fleming")
    pocock = sequential.look_levels(3, 10, 0.05, "pocock")
    assert obf[10] > pocock[10] > b[10]
    assert obf[3] < b[3] < pocock[3]  # O'Brien-Fleming: almost nothing at the pilot
    assert all(q <= 0.05 for q in (*obf.values(), *pocock.values()))
    assert sequential.look_levels(3, 10, 0.05, "pocock") == pocock  # the same every time


def test_bad_spending_and_no_looks_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown spending"):
        sequential.look_levels(3, 10, 0.05, "haybittle")
    with pytest.raises(ValueError, match="no look"):
        sequential.look_levels(5, 4, 0.05, "pocock")


def _normal_boundaries(fractions: list[float], alpha: float, spending: str) -> list[float]:
    """The known-spread boundaries, solved on scipy's multivariate normal."""
    t = np.array(fractions)
    cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
    cs: list[float] = []
    for k in range(1, len(t) + 1):
        def crossed(c: float, k: int = k) -> float:
            b = np.array([*cs, c])
            return 1 - stats.multivariate_normal(np.zeros(k), cov[:k, :k]).cdf(
                b, lower_limit=-b) - sequential.spent(t[k - 1], alpha, spending)
        cs.append(optimize.brentq(crossed, 0.5, 12, xtol=1e-6))
    return cs


def _missed(levels: dict[int, float], x: np.ndarray) -> float:
    """The share of runs whose interval misses the truth at any look."""
    missed = np.zeros(len(x), dtype=bool)
    for k, q in levels.items():
        t = np.abs(x[:, :k].mean(1)) / (x[:, :k].std(1, ddof=1) / math.sqrt(k))
        missed |= t > (stats.t.isf(q / 2, k - 1) if q > 0 else np.inf)
    return float(missed.mean())


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock", "bonferroni"])
@pytest.mark.parametrize("alpha", [0.05, 0.0125])
def test_repeated_t_intervals_cover_at_every_look_together(spending: str, alpha: float) -> None:
    """The rule's case: paired t after rounds 3..6 (2..5 df). The chance that any look's
    interval misses stays within α (an independent simulation, another seed); a fixed
    interval at α peeked at every round misses far more."""
    rng = np.random.default_rng(7)
    n = 100_000
    x = rng.standard_normal((n, 6))
    levels = sequential.look_levels(3, 6, alpha, spending)
    assert _missed(levels, x) <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / n)
    assert _missed({k: alpha for k in levels}, x) > 1.8 * alpha


@pytest.mark.parametrize("spending", ["obrien-fleming", "pocock"])
def test_the_textbook_t_conversion_would_break_the_promise(spending: str) -> None:
    """Why the boundaries are simulated: the normal boundary taken at its nominal level on
    t (the usual conversion) misses in more than α of the runs at 2..5 df."""
    rng = np.random.default_rng(8)
    n = 100_000
    x = rng.standard_normal((n, 6))
    cs = _normal_boundaries([3 / 6, 4 / 6, 5 / 6, 1.0], 0.05, spending)
    textbook = {k: 2 * stats.norm.sf(c) for k, c in zip(range(3, 7), cs, strict=True)}
    assert _missed(textbook, x) > 0.05 + 3 * math.sqrt(0.05 * 0.95 / n)
