"""Figure 7: the commands at the limits of their inputs (issue 29, class 6).

A captured log may be up to `parse.LOG_CAP` (16 MiB) and hold up to `dataset.READ_FIGURES`
(100,000) figures; the figures are reached first (at about 4.6 MiB of summary lines).
`big_log` writes one at the cap: the chapter's own listings (tests/data/chapter_listings.log,
77 figures) again and again, each copy at a shape of its own (so every figure is distinct) and,
for a second side, each time scaled by a factor that varies with the copy (so the comparison
has slower, faster and same figures). Then `parse A`, `report A` and `compare A B` of those
logs, each a fresh process, with wall and CPU time and peak memory; and the same at a quarter
and a half of the cap, to see how each grows.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from figures.common import PROJECT, say
from figures.growth import cli
from orchestrator.data.dataset import READ_FIGURES
from orchestrator.data.parse import LOG_CAP

PER_COPY = 77  # figures of one copy of the chapter's listings

CHAPTER = PROJECT / "tests" / "data" / "chapter_listings.log"
_TIME = re.compile(r"(\d+\.\d+)(ns|µs|ms|s)\b")


def big_log(path: Path, size: int, scale: float = 0.0, copies: int | None = None) -> Path:
    """The chapter's listings, copied at distinct shapes up to `size` bytes (under the cap)
    or `copies` copies; `scale`: copy i's times multiplied by 1 + scale * ((i % 5) - 2) / 2."""
    text = CHAPTER.read_text(encoding="utf-8")
    parts, total, i = [], 0, 0
    while True:
        factor = 1 + scale * ((i % 5) - 2) / 2
        copy = text.replace("1024x1024", f"{i + 1}x1024")
        if factor != 1:
            copy = _TIME.sub(lambda m, f=factor: f"{float(m[1]) * f:.3f}{m[2]}", copy)
        if total + len(copy.encode()) >= size or (copies is not None and i >= copies):
            break
        parts.append(copy)
        total += len(copy.encode())
        i += 1
    path.write_text("".join(parts), encoding="utf-8")
    return path


def figure_limits(quick: bool, tmp: Path) -> list[dict[str, Any]]:
    say(f"## 7. The commands at their input limits: logs up to {READ_FIGURES} figures")
    rows = []
    for share in (0.25,) if quick else (0.25, 0.5, 1.0):
        copies = int(READ_FIGURES * share) // PER_COPY
        a = big_log(tmp / f"a-{share}.log", LOG_CAP - 4096, copies=copies)
        b = big_log(tmp / f"b-{share}.log", LOG_CAP - 4096, scale=0.2, copies=copies)
        row: dict[str, Any] = {"bytes": a.stat().st_size, "figures": copies * PER_COPY}
        row["parse"] = cli("parse", str(a), "--csv", str(tmp / f"parse-{share}.csv"))
        row["report"] = cli("report", str(a), "--out", str(tmp / f"report-{share}"))
        row["compare"] = cli("compare", str(a), str(b), "--out", str(tmp / f"compare-{share}"))
        rows.append(row)
        say(f"logs of {row['figures']} figures, {row['bytes'] / 2**20:.1f} MiB: " + "; ".join(
            f"{k} {row[k][0]:.1f} s (CPU {row[k][3]:.1f} s) {row[k][1]:.0f} MiB (exit {row[k][2]})"
            for k in ("parse", "report", "compare")))
    return rows
