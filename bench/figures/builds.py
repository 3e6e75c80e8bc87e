"""Figure 3: `build` with everything up to date, against cargo's own no-op check."""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

from figures.common import (
    PROJECT,
    PYTHON,
    orchestrator,
    say,
)
from orchestrator.experiments.plan import builds_needed
from orchestrator.programs.burn.cargo import Builder
from orchestrator.run.sweep import plan

# ---- 3. rebuilds -------------------------------------------------------------------------------


def _build_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("ok ", "failed"))]


def _all_fresh(stdout: str) -> bool:
    """Every build that succeeds was up to date (a failure is retried by cargo every time)."""
    ok = [line for line in _build_lines(stdout) if line.startswith("ok ")]
    return bool(ok) and all("(up to date)" in line for line in ok)


def _expected_failures(stdout: str) -> int:
    return sum(line.startswith("failed (expected)") for line in _build_lines(stdout))


def _built_seconds(stdout: str) -> float:
    return sum(float(x) for x in re.findall(r"built in ([0-9.]+) s", stdout))


@contextmanager
def touched(path: Path) -> Iterator[bytes]:
    """Append a comment to `path`; put the exact bytes back afterwards, whatever happens,
    unless someone else changed the file meanwhile (then say so and leave it)."""
    original = path.read_bytes()
    edited = original + b"\n// touched by bench/harness.py to time a rebuild; removed after\n"
    path.write_bytes(edited)
    try:
        yield original
    finally:
        if path.read_bytes() == edited:
            path.write_bytes(original)
        else:
            say(f"WARNING: {path} changed during the rebuild (another editor?): not restored; "
                "remove the harness's comment line by hand")


def _timed_builds(args: list[str], times: int) -> tuple[list[float], str]:
    walls, out = [], ""
    for _ in range(times):
        wall, _code, out = orchestrator("build", "experiments.yaml", *args)
        walls.append(wall)
        if not _all_fresh(out):
            say("WARNING: a build was not up to date (sources changed meanwhile?)")
    return walls, out


def figure_builds(quick: bool, tmp: Path) -> dict[str, Any]:
    say("## 3. Rebuilds: python -m orchestrator build experiments.yaml")
    result: dict[str, Any] = {}
    config, planned = plan(PROJECT / "experiments.yaml", None, PYTHON)
    needed = builds_needed(config, planned)
    failing = {name for name, build in needed.items() if build.expect_failure}
    # the experiments whose builds can all succeed here: `build --only` them
    clean = [name for name, exp in config.experiments.items()
             if not any(t.build in failing for t in exp.targets)]
    wall, _code, out = orchestrator("build", "experiments.yaml")
    if not _all_fresh(out):
        say(f"(first call had work to do: {wall:.1f} s; builds are now up to date)")
    times = 3 if quick else 5
    walls, out = _timed_builds([], times)
    fails = _expected_failures(out)
    result.update(all_wall=median(walls), builds=len(_build_lines(out)), expected_failures=fails)
    say(f"all {len(_build_lines(out))} builds: {median(walls):.3f} s (median of {times}; min "
        f"{min(walls):.3f} s): the stamps match, no cargo for the builds that succeed"
        + (f"; cargo runs again for the {fails} expected failure(s) ({', '.join(sorted(failing))}"
           "): a failure is never taken as up to date" if fails else ""))
    if failing:
        walls, out = _timed_builds(["--only", *clean], times)
        result["ok_wall"] = median(walls)
        say(f"the {len(_build_lines(out))} builds that succeed (--only {' '.join(clean)}): "
            f"{median(walls):.3f} s (min {min(walls):.3f} s); no cargo at all")
    # the peer: cargo's own check that there is nothing to do, build by build
    builder = Builder(PROJECT)
    if builder.cargo is not None:
        cargo_walls = {}
        for name, build in needed.items():
            start = time.perf_counter()
            subprocess.run(builder.cargo_argv(build), cwd=builder.rust_dir, capture_output=True,
                           check=False)
            cargo_walls[name] = time.perf_counter() - start
        ok_walls = [w for n, w in cargo_walls.items() if n not in failing]
        result["cargo_noop"] = sum(ok_walls)
        say(f"cargo itself, nothing to do: {sum(ok_walls):.3f} s for the {len(ok_walls)} builds "
            f"that succeed ({', '.join(f'{w:.2f}' for w in ok_walls)} s): what the stamps save"
            + "".join(f"; failing {n}: {w:.2f} s" for n, w in cargo_walls.items()
                      if n in failing))
    if quick:
        say("touched rebuild: skipped (--quick)")
        return result
    source = PROJECT / "bench_rust" / "bench-core" / "src" / "format.rs"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    with touched(source):
        wall, code, out = orchestrator("build", "experiments.yaml")
    result["touched_wall"] = wall
    result["touched_cargo"] = _built_seconds(out)
    say(f"after touching {source.relative_to(PROJECT)}: {wall:.1f} s, exit {code}; cargo "
        f"compiled the {len(re.findall('built in', out))} builds that succeed in "
        f"{_built_seconds(out):.1f} s of it:")
    for line in _build_lines(out):
        name = line.split(": ", 1)[0]
        found = re.search(r"\((built in [0-9.]+ s|up to date)\)", line)
        say(f"  {name}: {found.group(1) if found else line.split(': ', 1)[-1][:80]}")
    wall, code, out = orchestrator("build", "experiments.yaml")
    result["restore_wall"] = wall
    same = hashlib.sha256(source.read_bytes()).hexdigest() == digest
    _w, _c, check = orchestrator("build", "experiments.yaml")
    say(f"restored byte-identical: {same}; rebuilt in {wall:.1f} s; now up to date: "
        f"{_all_fresh(check)}")
    return result
