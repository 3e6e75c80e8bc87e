"""Render every committed docs/results report, export and compare again; say which differ.

    .venv/bin/python scripts/golden_check.py [--only NAME] [--keep DIR] [--against DIR]
        [--code TREE]

Each store with a committed `report/` beside it (or `dataset.csv`) is reported (exported) again
into a scratch folder by the CLI, and each committed compare of this round's variant sweep is
made again; every file the command writes (but the writer's manifest of inodes and times) is
compared byte for byte with the committed file of the same name. Prints one line per command
(files same / differing / new), exit 1 when any differs. Files only committed (an older code's
output the command no longer writes) are not compared. Some committed outputs were written by
older code (an export before later columns): to hold a refactoring to "nothing shown changes",
run it once with the code before it (`git archive BASE | tar -x -C /tmp/base`, `--code
/tmp/base --keep /tmp/before`), then with the code after it `--against /tmp/before`, which
compares with those outputs instead.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results"
VARIANTS = RESULTS / "h100-variants-2026-12-06"
# (committed output folder, the orchestrator's arguments with OUT for the scratch folder)
COMPARES = [
    (VARIANTS / "compare-a-b", ["compare", f"{VARIANTS}/variants#a", f"{VARIANTS}/variants#b"]),
    (VARIANTS / "compare-a-c", ["compare", f"{VARIANTS}/variants#a", f"{VARIANTS}/variants#c"]),
    (VARIANTS / "compare-a-c-unpaired", ["compare", f"{VARIANTS}/variants#a",
                                         f"{VARIANTS}/variants#c", "--unpaired"]),
    (VARIANTS / "compare-a-d", ["compare", f"{VARIANTS}/variants#a", f"{VARIANTS}/variants#d"]),
    (VARIANTS / "compare-a-slow", ["compare", f"{VARIANTS}/a", f"{VARIANTS}/slow"]),
]


def jobs() -> list[tuple[str, Path, list[str], str]]:
    """(name, committed folder, arguments, how the scratch output is given)."""
    found: list[tuple[str, Path, list[str], str]] = []
    for store in sorted(RESULTS.rglob("results.sqlite")):
        folder = store.parent
        name = str(folder.relative_to(RESULTS))
        # a store's report beside it, or beside its `results/` folder (cpu-sizes)
        committed = folder.parent / "report" if folder.name == "results" else folder / "report"
        if (committed / "report.md").is_file():
            found.append((f"report {name}", committed, ["report", str(folder)], "--out"))
        if (folder / "dataset.csv").is_file():
            found.append((f"export {name}", folder, ["export", str(folder)], "--csv"))
    if (VARIANTS / "report" / "report.md").is_file():
        found.append(("report h100-variants", VARIANTS / "report",
                      ["report", str(VARIANTS / "variants")], "--out"))
    found += [(f"compare {c.name}", c, args, "--out") for c, args in COMPARES]
    return found


def check(name: str, committed: Path, args: list[str], out_flag: str, scratch: Path,
          code: Path, against: Path | None) -> bool:
    folder = name.replace(" ", "_").replace("/", "_")
    out = scratch / folder
    if against is not None:
        committed = against / folder
    target = out / "dataset.csv" if out_flag == "--csv" else out
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "orchestrator", *args, out_flag, str(target)],
                          cwd=code, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        print(f"FAILED {name}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        return False
    same, differ, new = 0, [], []
    # the writer's manifest (.orchestrator-report.json) holds the files' inodes and times
    for made in sorted(p for p in out.rglob("*") if p.is_file()
                       if not (p.name.startswith(".orchestrator-") and p.suffix == ".json")):
        mine = committed / made.relative_to(out)
        if not mine.is_file():
            new.append(made.name)
        elif mine.read_bytes() == made.read_bytes():
            same += 1
        else:
            differ.append(str(made.relative_to(out)))
    print(f"{'ok    ' if not differ else 'DIFFER'} {name}: {same} same"
          + (f", differ: {', '.join(differ)}" if differ else "")
          + (f", not committed: {', '.join(new)}" if new else ""), flush=True)
    return not differ


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="only the jobs whose name contains this")
    parser.add_argument("--keep", type=Path, help="write the outputs here (kept)")
    parser.add_argument("--against", type=Path,
                        help="compare with an earlier run's --keep folder, not the committed")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the source tree whose orchestrator runs (default: this one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scratch = args.keep or Path(tmp)
        results = [check(*job, scratch, args.code.resolve(), args.against) for job in jobs()
                   if args.only is None or args.only in job[0]]
    print(f"{sum(results)} of {len(results)} identical")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
