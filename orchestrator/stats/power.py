"""How sure a verdict is: the family's level, paired rounds, and what more would decide.

`compare` judges many figures at once. Each figure's interval of B/A can be beyond the ±e band
(`slower`/`faster`), inside it (`same`), or neither (`inconclusive`); the p-value of "decided"
is 2·P(T > | |d| − log(1+e) | / se), the smallest two-sided level at which the interval leaves
the band's edge. One correction over those p-values (Benjamini-Hochberg by default: at most 5%
of the verdicts given are false, the promise users read; Holm for strict gates: at most 5%
chance of any false verdict) gives R decided figures of m, and one level q for every interval:

- BH: q = α·R/m (α/m when R = 0): the false-coverage-rate intervals of Benjamini & Yekutieli
  (2005); a figure is decided by BH exactly when its interval at 1 − q leaves the band edge;
- Holm: q = α/(m − R) (α when R = m): the level of Holm's last step; the R decided figures
  have p < q, the others p ≥ q.

So the interval printed (at level 1 − q) is the interval judged: beyond the band ⇔ slower or
faster, inside ⇔ same, else inconclusive, never a CI beyond the band beside `inconclusive`.

**Paired rounds.** With `variants:`, round k runs process k of every variant: the per-round
log ratio log B_k − log A_k removes what the round shares (machine state, drift). `paired`
judges B/A as a t interval on those differences (rounds − 1 df) when both sides ran the same
rounds.

**Processes that would decide.** `needed` is the smallest n per side at which, at the spread
observed, (t_{1−q/2} + t_{0.9})·se_n ≤ log(1+e): a change of none then reads `same` with 80%
power (|d| may fall either side: the two-sided 0.9), a change of (1+e)² `slower`/`faster` with
90% (se_n = s·√(2/n) with s the two sides' pooled log sd, 2n − 2 df; paired: s_d/√n, n − 1
df).

Looks under a sequential rule (run until decided) spend α in stats/sequential.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from orchestrator.stats import intervals

ALPHA = 0.05
POWER = 0.8
MOST = 1000  # `needed` beyond this: said as more than it
CORRECTIONS = ("bh", "holm")
DEFAULT_CORRECTION = "bh"


def p_decided(log_diff: float, se: float | None, df: float | None, min_effect: float,
              can_be_same: bool = True) -> float | None:
    """Two-sided p-value of 'the interval leaves the band edge' (beyond it, or inside it when
    `can_be_same`): the level at which this figure would first be decided."""
    if se is None or df is None:
        return None
    gap = abs(log_diff) - math.log1p(min_effect)  # > 0: beyond the band, < 0: inside it
    if se == 0:
        return 0.0 if gap > 0 or (can_be_same and gap < 0) else 1.0
    z = abs(gap) / se if can_be_same else gap / se  # one value: never `same`
    return min(1.0, 2 * intervals.t_sf(z, df))


def family_level(adjusted: Sequence[float | None], correction: str,
                 alpha: float = ALPHA) -> float:
    """The level q of every interval of the family (module docstring), from the adjusted
    p-values of its m judged figures."""
    known = [p for p in adjusted if p is not None]
    m = len(known)
    if m == 0:
        return alpha
    decided = sum(p < alpha for p in known)
    if correction == "holm":
        return alpha / max(m - decided, 1)
    return alpha * max(decided, 1) / m


def bounds(log_diff: float, se: float | None, df: float | None,
           q: float) -> tuple[float, float] | None:
    """B/A's interval at level 1 − q."""
    if se is None or df is None:
        return None
    half = intervals.t_quantile(1 - q / 2, df) * se if se > 0 else 0.0
    return _exp(log_diff - half), _exp(log_diff + half)


def _exp(x: float) -> float:
    """exp without an OverflowError: a bound at a tiny q with one degree of freedom (a long
    history's family, two processes a side) is beyond any float: infinite, as it is."""
    return math.inf if x > 709.0 else math.exp(x)


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float] | None:
    """(mean, se, df) of the per-round log differences log b_k − log a_k, rounds in order;
    None with fewer than 2 rounds or a value that has no log."""
    if len(a) != len(b) or len(a) < 2 or not all(x > 0 and y > 0 for x, y in zip(a, b,
                                                                               strict=True)):
        return None
    diffs = [math.log(y) - math.log(x) for x, y in zip(a, b, strict=True)]
    mean, sd = intervals.log_moments(diffs)
    return mean, sd / math.sqrt(len(diffs)), float(len(diffs) - 1)


def needed(spread: float, min_effect: float, q: float, paired_rounds: bool = False,
           power: float = POWER, log_diff: float | None = None,
           ran: int | None = None) -> int | None:
    """Processes per side (rounds, paired) that would decide a change of min_effect at the
    log spread `spread` (the two sides' pooled sd, or the sd of paired differences), at the
    family's level q with `power`. Where that design count is no more than the `ran`
    processes that left the figure undecided, the observed `log_diff` sits near a band edge
    (a 4.8% change against a 5% band): the count is then the one that puts the interval
    around it clear of that edge, never "~3 would decide" beside 10 that did not. (Below
    `ran` the design count stands: a noisy ratio near the edge is no estimate to project.)
    None when the spread is 0 (nothing more is needed); MOST + 1 above MOST."""
    if not spread > 0:
        return None
    design = _count(spread, min_effect, q, paired_rounds, power, None)
    if log_diff is None or ran is None or design > ran:
        return design
    return _count(spread, min_effect, q, paired_rounds, power,
                  abs(abs(log_diff) - math.log1p(min_effect)))


def _count(spread: float, min_effect: float, q: float, paired_rounds: bool, power: float,
           gap: float | None) -> int:
    edge = math.log1p(min_effect)

    def decides(n: int) -> bool:
        df = float(n - 1) if paired_rounds else float(2 * n - 2)
        se = spread / math.sqrt(n) if paired_rounds else spread * math.sqrt(2 / n)
        beta = intervals.t_quantile((1 + power) / 2, df)  # 'same' at no change: two-sided
        half = intervals.t_quantile(1 - q / 2, df) * se
        return (half + beta * se) <= edge and (gap is None or half <= gap)

    return _smallest(decides)


def pooled_spread(sd_a: float, sd_b: float) -> float:
    """The two sides' log spread as one sd (equal processes a side)."""
    return math.sqrt((sd_a * sd_a + sd_b * sd_b) / 2)


def processes_for(half_width: float, processes: int, target: float,
                  level: float = intervals.LEVEL) -> int | None:
    """The processes at which a figure whose t interval was ±half_width over `processes`
    would reach ±target at the spread it showed (a stopping target's missed line); None
    without a spread to project (fewer than 2 processes, no width), MOST + 1 beyond MOST."""
    if processes < 2 or not half_width > 0:
        return None
    p = 0.5 + level / 2
    spread = math.log1p(half_width) * math.sqrt(processes) / intervals.t_quantile(p, processes - 1)
    return _smallest(lambda n: intervals.t_quantile(p, n - 1) * spread / math.sqrt(n)
                     <= math.log1p(target))


def _smallest(reaches: Callable[[int], bool]) -> int:
    """The smallest n in 2..MOST for which `reaches(n)` holds, MOST + 1 if none. `reaches` is
    monotone in n (the interval's half-width, t quantile times se, shrinks as n grows), so
    a bisection asks about 10 n where a scan asked up to MOST: each is two t quantiles of
    100 incomplete-beta steps, and a compare of noisy figures at a tiny level took seconds."""
    if not reaches(MOST):
        return MOST + 1
    lo, hi = 1, MOST  # reaches(hi) holds; lo is below the range (never asked)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    return hi
