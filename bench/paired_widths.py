"""Paired against unpaired on a real variant sweep: each figure's 95% interval width both ways.

    .venv/bin/python bench/paired_widths.py RESULTS#a RESULTS#c

`compare`'s own rows (paired by round, and `--unpaired`'s Welch) give each figure's log
difference, standard error and degrees of freedom; both widths are taken at the same 95%
(compare prints each at its family's level, which differs between the two runs), so the ratio
is the design's alone. Also printed: the standard errors' ratio (the width less what the
degrees of freedom cost, t at rounds − 1 against Welch's): below 1 where the rounds share a
drift that pairing removes, about 1 where they share nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.sides import load_side
from orchestrator.stats import intervals


def widths(a: str, b: str) -> list[tuple[str, float, float, float, float]]:
    """(figure, paired width, unpaired width, paired df, unpaired df) per steady figure judged
    paired: widths are log(hi/lo) at 95%."""
    pa = compare.compare(load_side(a), load_side(b))
    un = compare.compare(load_side(a), load_side(b), paired=False)
    unpaired = {(r.section, r.figure): r for r in un.rows}
    out = []
    for r in pa.rows:
        u = unpaired.get((r.section, r.figure))
        if not r.paired or u is None or r.se is None or u.se is None or not r.df or not u.df:
            continue
        wp = 2 * intervals.t_quantile(0.975, r.df) * r.se
        wu = 2 * intervals.t_quantile(0.975, u.df) * u.se
        out.append((r.figure, wp, wu, r.df, u.df))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    args = parser.parse_args(argv)
    found = widths(args.a, args.b)
    print(f"{args.a} against {args.b}: 95% interval width of log B/A, paired by round and "
          "unpaired (Welch)")
    print("| figure | paired | unpaired | paired / unpaired | df paired / Welch | "
          "se paired / unpaired |\n| --- | --- | --- | --- | --- | --- |")
    ratios = []
    for figure, wp, wu, dp, du in found:
        ratio = wp / wu if wu else math.nan
        t_cost = intervals.t_quantile(0.975, dp) / intervals.t_quantile(0.975, du)
        ratios.append(ratio)
        print(f"| {figure} | {wp:.3f} | {wu:.3f} | {ratio:.2f} | {dp:.0f} / {du:.1f} | "
              f"{ratio / t_cost:.2f} |")
    if ratios:
        ratios.sort()
        print(f"\nmedian paired / unpaired width {ratios[len(ratios) // 2]:.2f} over "
              f"{len(ratios)} figures (range {ratios[0]:.2f}-{ratios[-1]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
