"""A captured log's figures carry the execution mode their process printed (`torch exec MODE`,
docs/LINES.md), as a stored run's definition gives it: `parse`, `report LOG` and `compare LOG`
all read logs through `dataset.from_parse`. The fixture is the real torch program's stdout on
this box (torch 2.15.0 CPU, 32x32, 2 reps), four processes captured one after another as a
person would: eager, `--exec compile --cache-dir DIR`, eager again, `--exec
compile:reduce-overhead`; so a mode must end where its process ends."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from orchestrator.data import dataset, parse
from orchestrator.records import CacheState, Figure, Header

PROJECT = Path(__file__).resolve().parents[2]
LOG = Path(__file__).resolve().parent / "torch" / "exec_modes_cpu.log"
# (first line, last line) of each process in the fixture, and the mode it printed
PROCESSES = [((1, 9), ""), ((10, 22), "compile"), ((23, 31), ""),
             ((32, 44), "compile:reduce-overhead")]


def _mode_at(line: int) -> str:
    return next(mode for (first, last), mode in PROCESSES if first <= line <= last)


def test_each_figure_has_the_mode_its_process_printed() -> None:
    parsed = parse.parse_text(LOG.read_text(encoding="utf-8"))
    assert parsed.unknown == []
    data = dataset.from_parse(parsed, LOG.name)
    fig = data.figures
    assert len(fig) == len(parsed.figures) > 30
    for line, mode in zip(fig["line_no"], fig["exec_mode"], strict=True):
        assert mode == _mode_at(int(line)), (line, mode)
    compiled = fig[fig["method"] == "compile_cache"]
    assert sorted(set(compiled["exec_mode"])) == ["compile", "compile:reduce-overhead"]


def test_parse_command_writes_the_column(tmp_path: Path) -> None:
    out = tmp_path / "log.csv"
    done = subprocess.run([sys.executable, "-m", "orchestrator", "parse", str(LOG), "--csv",
                           str(out)], cwd=PROJECT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    seen = {(r["method"], r["exec_mode"]) for r in rows if r["method"] == "first_call_inductor"}
    assert seen == {("first_call_inductor", "compile"),
                    ("first_call_inductor", "compile:reduce-overhead")}
    eager = [r for r in rows if r["method"] == "first_call"]
    assert [r["exec_mode"] for r in eager] == ["", "compile", "", "compile:reduce-overhead"]


def _fig(line: int, framework: str = "torch") -> Figure:
    return Figure(framework=framework, label="cpu", device="cpu", shape="8x8", op="matmul",
                  method="first_call", method_text="first call", stat="value", value=1.0,
                  runs=None, threads=None, cache=CacheState.NONE, process=None, warmup=None,
                  iteration=None, section=None, line_no=line)


def test_modes_stay_with_their_program_and_process() -> None:
    """Another program's figures between them take none; a log without main headers (lines
    pasted alone) still takes the exec header before them."""
    headers = [Header("torch", "2.15.0", 1, 1), Header("torch_exec", None, None, 4,
                                                       facts={"exec": "compile"}),
               Header("jax", "0.8", None, 10), Header("torch", "2.15.0", 1, 20)]
    figures = [_fig(5), _fig(12, "jax"), _fig(15), _fig(21), _fig(3)]
    assert dataset.exec_modes_of_log(figures, headers) == ["compile", "", "compile", "", ""]
    pasted = [Header("torch_exec", None, None, 2, facts={"exec": "cudagraph"})]
    assert dataset.exec_modes_of_log([_fig(1), _fig(3)], pasted) == ["", "cudagraph"]
