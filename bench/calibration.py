"""How often `compare` is wrong, and how often it answers: simulated families of figures drawn
from the real process spreads of the committed A/A stores (issue 41).

    .venv/bin/python bench/calibration.py [--families 2000] [--seed 0] [--markdown]

Each committed A/A pair gives a family: its figures with processes on both sides, each with the
between-process log spread it showed and its process counts (the stores through `compare`
itself; the CPU A/A and the within-sweep H200 A/A from their committed compare tables, the
spread read back from each 95% interval). A simulated comparison draws, for every figure, p
log process values a side around 0 with that spread (normal, or Student's t with 3 df scaled
to it: heavier tails than the data may have) and adds log(1 + change) to B for half the
figures (every other one; none in an A/A). Then compare's rule (stats/power.py:
p of "decided", the correction, the family's level, the verdict from the interval) is applied,
vectorised here; tests/test_bench_calibration.py checks it against compare.finish figure for
figure.

Printed per choice (Holm, Benjamini-Hochberg, and no correction as the reference), change and
store: the share of false verdicts among those given (averaged over families: the false
discovery rate), the share of families with any false verdict, and the power: the share of
changed figures given the right verdict (slower beyond the band; `same` for a change within
it). A `same` for a change beyond the band, or slower/faster for one within it, is false.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS = ROOT / "docs" / "results"
CHANGES = (0.0, 0.02, 0.05, 0.10, 1.0)  # A/A, 2%, 5%, 10%, 2×
CHOICES = ("bh", "holm", "none")
DESIGNS = ("paired", "paired-drift", "unpaired-drift")
ALPHA = 0.05


@dataclass(frozen=True)
class Family:
    """One committed A/A pair: each judged figure's log spread and processes a side."""

    name: str
    spread: np.ndarray
    pa: np.ndarray
    pb: np.ndarray
    groups: np.ndarray  # per figure, its group: the clocks of one target at one point
    steady: np.ndarray  # per figure, a median of steady timings (what `decide` judges)


CLOCK = re.compile(r" (no sync|with sync|device time( queued| \(queued\)| without flush)?|"
                   r"read-back|benchmark\.Timer|kernel time|first call (returned|after sync)|"
                   r"first call|device init)$")


def _groups(names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each figure's group (the figures in a row whose names differ only in the clock: the
    clocks of one matmul) and whether it is steady (a median: not a first call or a device
    init)."""
    groups, seen, key = [], set(), None
    for n in names:  # a new group where the rest of the name changes or a clock comes again
        if CLOCK.sub("", n) != key or n in seen:
            key, seen = CLOCK.sub("", n), set()
        seen.add(n)
        groups.append(len(groups) and groups[-1] + (len(seen) == 1))
    steady = [not re.search(r"first call|device init", n) for n in names]
    return np.array(groups), np.array(steady)


def _from_stores(name: str, folder: Path) -> Family:
    from orchestrator.report.compare import verdicts as compare

    c = compare.compare(compare.load_side(str(folder / "a")), compare.load_side(str(folder / "b")))
    rows = [r for r in c.rows if r.spread is not None and r.basis.startswith("processes")]
    counts = [re.match(r"processes (\d+)/(\d+)", r.basis) for r in rows]
    return Family(name, np.array([r.spread for r in rows]),
                  np.array([int(m.group(1)) for m in counts if m]),
                  np.array([int(m.group(2)) for m in counts if m]),
                  *_groups([r.figure for r in rows]))


def _spread_of(lo: float, hi: float, p: int) -> float:
    """A 95% Welch interval of equal sides back into the per-side log spread (2p − 2 df)."""
    se = math.log(hi / lo) / (2 * stats.t.ppf(0.975, 2 * p - 2))
    return se / math.sqrt(2 / p)


def _from_csv(name: str, path: Path) -> Family:
    rows = []
    with path.open(newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            m = re.match(r"processes (\d+)/(\d+)", r["basis"])
            if m and r["ci_low"] and m.group(1) == m.group(2):
                rows.append((_spread_of(float(r["ci_low"]), float(r["ci_high"]),
                                        int(m.group(1))), int(m.group(1)), r["figure"]))
    return Family(name, np.array([s for s, _, _ in rows]), np.array([p for _, p, _ in rows]),
                  np.array([p for _, p, _ in rows]), *_groups([n for _, _, n in rows]))


def _from_text(name: str, path: Path) -> Family:
    """A committed terminal table: `│ 0.512 – 1.42 │ processes 3/3, reps 20/20 │` cells."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.search(r"│ ([\d.e+-]+) – ([\d.e+-]+)\s+│ processes (\d+)/(\d+)", line)
        if m and m.group(3) == m.group(4):
            p = int(m.group(3))
            rows.append((_spread_of(float(m.group(1)), float(m.group(2)), p), p,
                         line.split("│")[2].strip()))
    return Family(name, np.array([s for s, _, _ in rows]), np.array([p for _, p, _ in rows]),
                  np.array([p for _, p, _ in rows]), *_groups([n for _, _, n in rows]))


def families() -> list[Family]:
    """The committed A/A pairs (docs/results), each as one family."""
    return [
        _from_csv("cpu-aa-2026-12-03", RESULTS / "cpu-aa-2026-12-03" / "compare.csv"),
        _from_stores("h200-aa-2026-12-03", RESULTS / "h200-aa-2026-12-03"),
        _from_stores("h200-aa-first-call-2026-12-03", RESULTS / "h200-aa-first-call-2026-12-03"),
        _from_text("h200-2026-12-02-aa (one sweep)",
                   RESULTS / "h200-2026-12-02-aa" / "compare-a-b.txt"),
    ]


# ---- the rule, vectorised over families (rows) × figures (columns) -------------------------


def _adjust(p: np.ndarray, choice: str) -> np.ndarray:
    """Adjusted p-values per row (BH, Holm, or none)."""
    if choice == "none":
        return p
    m = p.shape[1]
    order = np.argsort(p, axis=1)
    ranked = np.take_along_axis(p, order, axis=1)
    if choice == "holm":
        adj = np.maximum.accumulate(np.minimum(1, (m - np.arange(m)) * ranked), axis=1)
    else:
        adj = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[:, ::-1], axis=1)[:, ::-1]
        adj = np.minimum(adj, 1)
    out = np.empty_like(adj)
    np.put_along_axis(out, order, adj, axis=1)
    return out


def _level(adj: np.ndarray, choice: str) -> np.ndarray:
    """The family's q per row (report/power.family_level)."""
    m = adj.shape[1]
    decided = (adj < ALPHA).sum(axis=1)
    if choice == "holm":
        return ALPHA / np.maximum(m - decided, 1)
    if choice == "none":
        return np.full(adj.shape[0], ALPHA)
    return ALPHA * np.maximum(decided, 1) / m


def verdicts(d: np.ndarray, se: np.ndarray, df: np.ndarray, min_effect: float,
             choice: str, groups: np.ndarray | None = None) -> np.ndarray:
    """Per figure: +1 slower, −1 faster, 0 same, 9 inconclusive (compare.finish's rule);
    `holm-groups`: Holm within each group of figures (`groups`), no correction between
    groups (the family chosen by what the figures measure)."""
    edge = math.log1p(min_effect)
    gap = np.abs(d) - edge
    p = np.minimum(1, 2 * stats.t.sf(np.abs(gap) / se, df))
    if choice == "holm-groups":
        assert groups is not None
        q = np.empty(d.shape)
        for g in np.unique(groups):
            cols = groups == g
            q[:, cols] = _level(_adjust(p[:, cols], "holm"), "holm")[:, None]
    else:
        q = _level(_adjust(p, choice), choice)[:, None]
    half = stats.t.ppf(1 - q / 2, df) * se
    lo, hi = d - half, d + half
    out = np.full(d.shape, 9)
    out[lo > edge] = 1
    out[hi < -edge] = -1
    out[(lo >= -edge) & (hi <= edge)] = 0
    return out


def simulate(fam: Family, change: float, choice: str, n: int, rng: np.random.Generator,
             noise: str = "normal", min_effect: float = 0.05,
             design: str = "unpaired") -> dict[str, float]:
    """n simulated comparisons of one family; the false-verdict share, any-false rate, power.
    `design`: `unpaired` (Welch on two sweeps' processes), `paired` (the processes of both
    sides run in the same rounds, one each, judged on the per-round log ratios; nothing shared
    by a round), `paired-drift` (half of each figure's variance shared by the round: drift
    between rounds) and `unpaired-drift` (the same draws judged by Welch)."""
    m = len(fam.spread)
    shift = np.zeros(m)
    if change:
        shift[::2] = math.log1p(change)

    def draw(p: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """p values a side of each figure (NaN beyond p), normal or t3 scaled to `scale`."""
        most = int(p.max())
        if noise == "t3":
            z = rng.standard_t(3, size=(n, m, most)) / math.sqrt(3)
        else:
            z = rng.standard_normal((n, m, most))
        mask = np.arange(most)[None, None, :] < p[None, :, None]
        return np.where(mask, z, np.nan) * scale[None, :, None], mask

    if design == "unpaired":
        a, _ = draw(fam.pa, fam.spread)
        b, _ = draw(fam.pb, fam.spread)
    else:  # the same rounds a side; a round's shared part in both
        p = np.minimum(fam.pa, fam.pb)
        share = 0.5 if design.endswith("drift") else 0.0
        shared = draw(p, fam.spread * math.sqrt(share))[0] if share else 0.0
        a = shared + draw(p, fam.spread * math.sqrt(1 - share))[0]
        b = shared + draw(p, fam.spread * math.sqrt(1 - share))[0]
    if design.startswith("paired"):
        diffs = b - a
        d = np.nanmean(diffs, axis=2) + shift
        se = np.sqrt(np.nanvar(diffs, axis=2, ddof=1) / p)
        df = np.broadcast_to((p - 1).astype(float), d.shape)
    else:
        pa, pb = (~np.isnan(a)).sum(axis=2), (~np.isnan(b)).sum(axis=2)
        va = np.nanvar(a, axis=2, ddof=1) / pa
        vb = np.nanvar(b, axis=2, ddof=1) / pb
        d = np.nanmean(b, axis=2) - np.nanmean(a, axis=2) + shift
        se = np.sqrt(va + vb)
        df = (va + vb) ** 2 / (va ** 2 / (pa - 1) + vb ** 2 / (pb - 1))
    v = verdicts(d, se, df, min_effect, choice, fam.groups)
    return score(v, shift, min_effect, n)


def score(v: np.ndarray, shift: np.ndarray, min_effect: float, n: int) -> dict[str, float]:
    """The false share among verdicts (averaged over families), any-false rate, power and
    decided share of verdicts v (families × figures) against the true shifts."""
    edge = math.log1p(min_effect)
    truth = np.where(shift > edge + 1e-12, 1, np.where(shift < -edge - 1e-12, -1, 0))
    given = v != 9
    false = given & (v != truth[None, :])
    per_family = np.where(given.sum(1) > 0, false.sum(1) / np.maximum(given.sum(1), 1), 0)
    changed = shift != 0
    right = (v == truth[None, :]) & changed[None, :]
    return {"false_share": float(per_family.mean()), "any_false": float(false.any(1).mean()),
            "power": float(right.sum() / max(changed.sum() * n, 1)) if changed.any()
            else float("nan"), "decided": float(given.mean())}


def table(n: int, seed: int, noise: str = "normal",
          processes: int | None = None) -> list[dict[str, object]]:
    """Every line: each correction on two sweeps (unpaired), then Holm within groups, then
    the paired designs under the default (the first lines' draws kept as they were);
    `processes`: every figure with that many a side instead of the stores' counts."""
    rng = np.random.default_rng(seed)
    out = []
    fams = families()
    if processes:
        fams = [replace(f, pa=np.full_like(f.pa, processes), pb=np.full_like(f.pb, processes))
                for f in fams]
    extra = [("holm-groups", "unpaired")] + [("bh", d) for d in DESIGNS]
    for lines in ([(c, "unpaired") for c in CHOICES], extra):
        for fam in fams:
            for choice, design in lines:
                for change in CHANGES:
                    r = simulate(fam, change, choice, n, rng, noise, design=design)
                    out.append({"family": fam.name, "figures": len(fam.spread),
                                "choice": choice, "design": design, "change": change, **r})
    rank = {k: i for i, k in enumerate((*CHOICES, "holm-groups", "unpaired", *DESIGNS,
                                        *(f.name for f in fams)))}
    return sorted(out, key=lambda r: (r["design"] != "unpaired", rank[str(r["family"])],
                                      rank[str(r["choice"])], rank[str(r["design"])]))


def change_name(change: object) -> str:
    c = float(change)  # type: ignore[arg-type]
    return "A/A" if c == 0 else "2×" if c == 1.0 else f"+{100 * c:.0f}%"


def _pct(x: float) -> str:
    return "" if math.isnan(x) else f"{100 * x:.1f}%"


def markdown(rows: list[dict[str, object]]) -> str:
    """The unpaired lines as the correction table, the designs' as their own."""
    two = [r for r in rows if r["design"] == "unpaired"]
    designs = [r for r in rows if r["design"] != "unpaired"]
    return _lines(two, "correction", "choice") + "\n\n" + _lines(designs, "design", "design")


def _lines(rows: list[dict[str, object]], title: str, key: str) -> str:
    head = (f"| store (figures) | {title} | change | false among verdicts | any false | "
            "power | decided |\n| --- | --- | --- | --- | --- | --- | --- |")
    lines = [head]
    for r in rows:
        change = change_name(r["change"])
        lines.append(f"| {r['family']} ({r['figures']}) | {r[key]} | {change} | "
                     f"{_pct(r['false_share'])} | {_pct(r['any_false'])} | "  # type: ignore
                     f"{_pct(r['power'])} | {_pct(r['decided'])} |")  # type: ignore
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--noise", choices=["normal", "t3"], default="normal")
    parser.add_argument("--processes", type=int, default=None, help="every figure with this "
                        "many processes (rounds) a side instead of the stores' counts")
    parser.add_argument("--looks", action="store_true", help="run until decided instead: "
                        "a look after every round under each way of spending α")
    parser.add_argument("--pilot", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10, help="max rounds (--looks)")
    args = parser.parse_args(argv)
    if args.looks:
        import calibration_looks as looks

        print(f"{args.families} simulated runs until decided per group and line, pilot "
              f"{args.pilot}, at most {args.rounds} rounds, paired, noise {args.noise}, seed "
              f"{args.seed}, min_effect 5%; every figure of a group changed (none in an A/A)")
        print(looks.markdown(looks.table(families(), CHANGES, args.families, args.seed,
                                         args.pilot, args.rounds, args.noise), change_name))
        return 0
    rows = table(args.families, args.seed, args.noise, args.processes)
    print(f"{args.families} simulated comparisons per line, noise {args.noise}, seed "
          f"{args.seed}, --min-effect 5%; half the figures changed (none in an A/A); "
          f"processes a side: {args.processes or 'as in the stores'}")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
