"""What scripts/h200/power.sh found (issue 41), from the compare.csv files and stores under OUT:
verdict counts, any interval beyond the band beside `inconclusive`, paired against unpaired
interval widths, and the until-decided sweep's stops.

    python scripts/h200/power_summary.py OUT
"""

from __future__ import annotations

import csv
import math
import sqlite3
import sys
from pathlib import Path

BAND = 1.05


def rows(out: Path, name: str) -> list[dict[str, str]]:
    path = out / name / "compare.csv"
    if not path.is_file():
        print(f"{name}: no compare.csv")
        return []
    return [r for r in csv.DictReader(path.open(encoding="utf-8")) if r["verdict"]]


def counts(name: str, found: list[dict[str, str]]) -> None:
    tally: dict[str, int] = {}
    for r in found:
        tally[r["verdict"]] = tally.get(r["verdict"], 0) + 1
    lying = [r for r in found if r["verdict"] == "inconclusive" and r["ci_low"]
             and (float(r["ci_low"]) > BAND or float(r["ci_high"]) < 1 / BAND)]
    level = next((r["ci_level"] for r in found if r.get("ci_level")), "")
    print(f"{name}: {tally}; interval level {level}; beyond the band beside inconclusive: "
          f"{len(lying)}")
    for r in found:
        print(f"  {r['verdict']:<13} {r['section']:<10} {r['figure']:<42} {r['ratio']:<11} "
              f"[{r['ci_low']} - {r['ci_high']}] {r['basis']} needed={r['processes_needed']}")


def widths(out: Path) -> None:
    paired = {(r["section"], r["figure"]): r for r in rows(out, "compare-variants-a-c")}
    unpaired = {(r["section"], r["figure"]): r for r in rows(out, "compare-variants-a-c-unpaired")}
    print("paired / unpaired interval width (log hi/lo), variants a/c:")
    ratios = []
    for key, p in paired.items():
        u = unpaired.get(key)
        if not u or not p["ci_low"] or not u["ci_low"]:
            continue
        wp = math.log(float(p["ci_high"]) / float(p["ci_low"]))
        wu = math.log(float(u["ci_high"]) / float(u["ci_low"]))
        ratios.append(wp / wu if wu else float("nan"))
        print(f"  {key[1]:<42} paired {wp:.4f} ({p['verdict']}) unpaired {wu:.4f} "
              f"({u['verdict']}) ratio {ratios[-1]:.2f}")
    if ratios:
        ratios.sort()
        print(f"  median paired/unpaired width: {ratios[len(ratios) // 2]:.2f} over "
              f"{len(ratios)} figures")


def stops(out: Path) -> None:
    store = out / "decide" / "results.sqlite"
    if not store.is_file():
        print("decide: no store")
        return
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    print("until decided, the store's stops:")
    for label, method, reason, half, processes in db.execute(
            "SELECT label, method, reason, half_width, processes FROM stops ORDER BY rowid"):
        print(f"  {label:<14} {method:<22} {reason:<14} ±{100 * (half or 0):.2f}% at "
              f"{processes} processes")


def main() -> None:
    out = Path(sys.argv[1])
    for name in ("compare-a-slow", "compare-holm-a-slow", "compare-variants-a-b",
                 "compare-variants-a-c", "compare-variants-a-c-unpaired", "compare-decide-a-b"):
        counts(name, rows(out, name))
    widths(out)
    stops(out)


if __name__ == "__main__":
    main()
