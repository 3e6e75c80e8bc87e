"""Where a cargo build's minutes went, from the HTML that `cargo build --timings` leaves in the
target folder's cargo-timings/ (the orchestrator builds with `--timings`): per build its crate,
total time, units, the summed unit time, the serial tail and the longest units.

    .venv/bin/python bench/cargo_timings.py TARGET/cargo-timings/cargo-timing-*.html

Serial tail: from the last moment two or more units compiled at once to the build's end (on
2 cores, the time a second build in parallel would have had a free core). BENCHMARKS.md has
the figures of the cold clone of README command 1.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

LONGEST = 5


def _array(html: str, name: str) -> list[Any]:
    """The JSON array `const NAME = [...];` of cargo's page."""
    match = re.search(rf"const {name} = (\[.*?\n\]);", html, re.S)
    if match is None:
        raise ValueError(f"no {name} in the page (not a cargo-timing HTML?)")
    return json.loads(match.group(1))


def _cell(html: str, label: str) -> str:
    match = re.search(rf"<td>{re.escape(label)}</td><td>(.*?)</td>", html, re.S)
    return re.sub(r"<[^>]+>", " ", match.group(1)).strip() if match else "?"


def summary(path: Path) -> dict[str, Any]:
    html = path.read_text(encoding="utf-8", errors="replace")
    units = _array(html, "UNIT_DATA")
    busy = _array(html, "CONCURRENCY_DATA")
    total = float(_cell(html, "Total time:").split("s", 1)[0])
    last_parallel = max((b["t"] for b in busy if b["active"] >= 2), default=0.0)
    longest = sorted(units, key=lambda u: u["duration"], reverse=True)[:LONGEST]
    return {"file": path.name, "targets": _cell(html, "Targets:"),
            "start": _cell(html, "Build start:"), "total_s": total, "units": len(units),
            "dirty": _cell(html, "Dirty units:"), "summed_s": sum(u["duration"] for u in units),
            "first_unit_s": min((u["start"] for u in units), default=0.0),
            "serial_tail_s": total - last_parallel,
            "longest": [(u["name"] + u["target"], u["start"], u["duration"]) for u in longest]}


def main(paths: list[str]) -> int:
    for path in map(Path, paths):
        s = summary(path)
        longest = ", ".join(f"{n} {d:.0f} s (from {t:.0f} s)" for n, t, d in s["longest"])
        print(f"{s['targets']}: {s['total_s']:.1f} s from {s['start']}, {s['units']} units "
              f"({s['dirty']} compiled), summed {s['summed_s']:.0f} s, first unit at "
              f"{s['first_unit_s']:.1f} s, serial tail {s['serial_tail_s']:.0f} s; "
              f"longest: {longest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
