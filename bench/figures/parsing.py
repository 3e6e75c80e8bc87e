"""Figure 4: lines per second of the parser on a synthetic log."""

from __future__ import annotations

import time
from typing import Any

from figures.common import (
    say,
)
from orchestrator.data.parse import parse_text

# ---- 4. parsing -------------------------------------------------------------------------------


def synthetic_log(lines: int) -> str:
    """A log like a long sweep's: section and program headers, summaries, samples, first calls,
    warm-up lines and lines of no known form, in a fixed mix."""
    samples = " ".join(f"{0.004 + i * 1e-5:.6e}" for i in range(20))
    block = [
        "### burn flex threads 2 process {i}",
        "burn 0.22.1, features [std, flex, simd, rayon], rayon threads 2",
        "flex: device init 1.{i:03d}ms",
        "flex 1024x1024 matmul first call: 3.{i:03d}ms",
        "flex 1024x1024 matmul no sync, 20 runs: min 4.{i:03d}ms median 4.612ms",
        f"# samples flex 1024x1024 matmul no sync: {samples}",
        "flex 1024x1024 matmul with sync, 20 runs: min 4.113ms median 4.{i:03d}ms",
        f"# samples flex 1024x1024 matmul with sync: {samples}",
        "torch 2.9.1, threads 2",
        "cpu 1024x1024 matmul + sum().item(), 20 runs: min 651.666µs median 688.{i:03d}µs",
        "warm-up dropped, timed run 1: after sync 3.{i:03d}s",
        "note: a line of no known form {i}",
        "",
    ]
    out: list[str] = []
    i = 0
    while len(out) < lines:
        out.extend(line.format(i=i % 1000) for line in block)
        i += 1
    return "\n".join(out[:lines]) + "\n"


def figure_parse(quick: bool, sweep: dict[str, Any] | None) -> dict[str, Any]:
    lines = 1_000_000
    say(f"## 4. Parsing: parse_text on a synthetic {lines:,}-line log")
    text = synthetic_log(lines)
    times = []
    for _ in range(1 if quick else 3):
        start = time.perf_counter()
        parsed = parse_text(text)
        times.append(time.perf_counter() - start)
    best = min(times)
    result = {"lines": lines, "bytes": len(text.encode()), "seconds": best,
              "lines_per_s": lines / best, "figures": len(parsed.figures),
              "samples": len(parsed.samples), "unknown": len(parsed.unknown)}
    say(f"{lines / best:,.0f} lines/s ({len(text.encode()) / best / 1e6:.0f} MB/s): {best:.2f} s "
        f"for {len(parsed.figures):,} figures, {len(parsed.samples):,} sample lines, "
        f"{len(parsed.unknown):,} unknown lines kept")
    if sweep:
        parse_s = sweep["stdout_lines"] / result["lines_per_s"]
        result["sweep_parse_s"] = parse_s
        say(f"the sweep of figure 5 printed {sweep['stdout_lines']:,} lines in its "
            f"{sweep['runs']} runs: parsing them takes ~{parse_s * 1e3:.2f} ms, against "
            f"{sweep['run_s']:.1f} s of measured runs ({parse_s / sweep['run_s']:.1e} of it)")
    return result
