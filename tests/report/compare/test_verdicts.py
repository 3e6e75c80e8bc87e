"""`compare`: matching, verdicts at their edges, the comparability list, outputs, bad input.

The chapter's own listings (tests/data/chapter_listings.log) against the committed H200 store;
hand-made logs in the printed-line contract with hand-made sample arrays for the verdict edges;
and real CPU sweeps (PyTorch and the burn template build; tests/report/conftest.py makes them
once a session for this module and test_aa), one of them slowed on purpose with a knob that
changes how fast MKL multiplies, not what is multiplied.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from orchestrator.cli import main
from orchestrator.data.durations import format_duration
from orchestrator.report.compare import output as compare_output
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import ONE_VALUE, load_side

from ...conftest import PROJECT, write
from .. import fake_stores

CHAPTER = PROJECT / "tests" / "data" / "chapter_listings.log"
H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"


# ---- the chapter's M2 Max listings against the H200 store ------------------------------------


@pytest.fixture(scope="module")
def chapter_vs_h200() -> compare.Comparison:
    return compare.compare(load_side(str(CHAPTER)), load_side(str(H200)))


def _h200_csv(**where: str) -> float:
    """A figure straight from the committed dataset.csv (not through the code under test)."""
    with (H200 / "dataset.csv").open(encoding="utf-8") as fh:
        found = [r for r in csv.DictReader(fh) if all(r[k] == v for k, v in where.items())]
    assert len(found) == 1, where
    return float(found[0]["value_s"])


def _row(c: compare.Comparison, figure: str) -> compare.Row:
    found = [r for r in c.rows if r.figure == figure]
    assert len(found) == 1, (figure, [r.figure for r in c.rows])
    return found[0]


def test_comparability_list_comes_first_and_names_both_machines(chapter_vs_h200) -> None:
    facts = {f.what: f for f in chapter_vs_h200.facts}
    assert (facts["accelerators (devices of the figures)"].a,
            facts["accelerators (devices of the figures)"].b) == ("metal, mps", "cuda")
    # the log carries no host facts: they read 'not recorded', never a guess
    assert (facts["GPU"].a, facts["GPU"].b) == ("not recorded", "NVIDIA H200")
    assert facts["CPU"].a == "not recorded" and "Xeon" in facts["CPU"].b
    assert (facts["torch"].a, facts["torch"].b) == ("2.15.0", "2.11.0+cu130")
    assert "cuda-nvrtc" in facts["burn features (backend)"].b
    assert (facts["CPU thread counts"].a, facts["CPU thread counts"].b) == ("1, 8", "1, 16")
    differs = [f.differs for f in chapter_vs_h200.facts]
    assert differs == sorted(differs, reverse=True)  # the differences first
    assert "torch accelerator: mps (A) compared with cuda (B)" in chapter_vs_h200.pairings
    assert "burn accelerator: metal (A) compared with cuda (B)" in chapter_vs_h200.pairings
    text = compare_output.render_markdown(chapter_vs_h200)
    assert text.index("## Machines and settings") < text.index("## methods")
    assert "| GPU | not recorded | NVIDIA H200 | differs |" in text


def test_machine_state_of_the_runs_is_listed_where_recorded() -> None:
    a, b = load_side(str(H200)), load_side(str(H200))
    assert "GPU clocks before runs" not in {f.what for f in compare.compare(a, b).facts}
    a.data.runs["gpu_sm_clock_mhz"], b.data.runs["gpu_sm_clock_mhz"] = 1980.0, 345.0
    a.data.runs["cpu_governor"], b.data.runs["cpu_governor"] = "performance", "powersave"
    facts = {f.what: (f.a, f.b) for f in compare.compare(a, b).facts}
    assert facts["GPU clocks before runs"] == ("SM 1980 MHz", "SM 345 MHz")
    assert facts["CPU governor"] == ("performance", "powersave")


def test_the_table_can_be_checked_by_hand(chapter_vs_h200) -> None:
    # chapter: 'mps 1024x1024 matmul with sync, 20 runs: min 535.250µs median 1.118ms'
    row = _row(chapter_vs_h200, "torch mps/cuda with sync")
    h200 = _h200_csv(experiment="methods", framework="torch", method="with_sync",
                     stat="median")
    assert (row.a, row.b) == (pytest.approx(1.118e-3), pytest.approx(h200))
    assert row.ratio == pytest.approx(h200 / 1.118e-3)
    # one value on each side (the chapter's log, the H200's one process): the ratio, no verdict
    assert (row.basis, row.verdict, row.section) == ("one value per side", ONE_VALUE, "methods")
    # chapter: 'metal 1024x1024 matmul first call: returned 10.875µs, after sync 3.600s' in
    # 'burn metal process 1'; the H200's process 1 of the first-call series was cold
    # (burn's cuda arithmetic is inferred TF32 from its accuracy run, the log records none)
    row = _row(chapter_vs_h200,
               "burn metal/cuda TF32 cold cache process 1 first call after sync")
    h200 = _h200_csv(experiment="first-call", framework="burn", method="first_call_after_sync",
                     process="1")
    assert row.ratio == pytest.approx(h200 / 3.6)
    assert "cache not recorded in A" in row.note
    # thread counts 8 and 16 are not the same measurement: apart, no verdict
    row = _row(chapter_vs_h200, "torch cpu 8/16 threads with sync")
    assert (row.verdict, row.apart) == ("", "threads 8 vs 16")
    row = _row(chapter_vs_h200, "torch cpu 1 thread with sync")
    h200 = _h200_csv(experiment="cpu", framework="torch", method="with_sync", stat="median",
                     threads="1")
    assert row.ratio == pytest.approx(h200 / 863.750e-6) and row.verdict == ONE_VALUE
    # accuracy is listed, never judged
    acc = [r for r in chapter_vs_h200.rows if r.section == "accuracy"]
    assert acc and all(r.verdict == "" and r.ratio is None for r in acc)


def test_writes_markdown_csv_png_and_keeps_to_its_own_files(chapter_vs_h200,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    written = compare_output.write(chapter_vs_h200, out)
    assert [p.name for p in written] == ["compare.md", "compare.csv", "compare.png", "compare.html"]
    with (out / "compare.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(chapter_vs_h200.rows)
    assert {r["verdict"] for r in rows} >= {ONE_VALUE, ""}
    assert (out / "compare.png").read_bytes()[:4] == b"\x89PNG"
    compare_output.write(chapter_vs_h200, out)  # ours: written again
    (out / "compare.md").write_text("my notes\n", encoding="utf-8")
    with pytest.raises(compare.InputError, match="was changed since compare wrote it"):
        compare_output.write(chapter_vs_h200, out)
    assert (out / "compare.md").read_text(encoding="utf-8") == "my notes\n"
    (out / "compare.csv").unlink()  # a folder of ours keeps to its own files: a user's
    (out / "compare.csv").write_text("a user's table\n")  # file of that name is refused too
    (out / "compare.md").unlink()
    with pytest.raises(compare.InputError, match=r"compare\.csv was changed since compare"):
        compare_output.write(chapter_vs_h200, out)
    assert not (out / "compare.md").exists()  # nothing written before the refusal


# ---- verdict edges with hand-made samples ----------------------------------------------------


def _log(path: Path, runs: dict[str, np.ndarray | float]) -> Path:
    """A torch cpu program's lines (docs/LINES.md) for each method, with `# samples` lines
    when the value is an array, a bare summary line when it is one number."""
    lines = ["### torch cpu threads 1", "torch 2.15.0, threads 1"]
    for method, values in runs.items():
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        summary = f"cpu 256x256 matmul {method}, {max(len(arr), 20)} runs: min " \
                  f"{format_duration(arr.min())} median {format_duration(np.median(arr))}"
        lines.append(summary)
        if arr.size > 1:
            lines.append(f"# samples cpu 256x256 matmul {method}: "
                         + " ".join(repr(float(v)) for v in arr))
    return write(path, "\n".join(lines) + "\n")


RNG = np.random.default_rng(7)
BASE = 300e-6 * (1 + 0.01 * RNG.standard_normal(20))  # 1% spread around 300 µs


def _verdicts(tmp_path: Path, a: dict[str, np.ndarray | float],
              b: dict[str, np.ndarray | float]) -> dict[str, compare.Row]:
    c = compare.compare(load_side(str(_log(tmp_path / "a.log", a))),
                        load_side(str(_log(tmp_path / "b.log", b))))
    return {r.figure.rsplit(" ", 2)[-2] + " " + r.figure.rsplit(" ", 2)[-1]: r for r in c.rows}


def test_one_process_a_side_gives_the_ratio_and_no_verdict(tmp_path: Path) -> None:
    # a log is one process: however tight its samples, they know nothing of the spread between
    # processes, so far apart or alike, no verdict (tests/stats/test_intervals.py: processes)
    rows = _verdicts(tmp_path, {"with sync": BASE, "no sync": BASE * 2},
                     {"with sync": BASE * 2, "no sync": BASE.copy()})
    for name, quotient in (("with sync", 2.0), ("no sync", 0.5)):
        row = rows[name]
        assert (row.verdict, row.basis) == (ONE_VALUE, "one value per side")
        assert row.ratio == pytest.approx(quotient, rel=1e-6)
        assert row.lo is None and row.detectable is None and row.p_value is None


def test_a_side_without_samples_is_one_value_too(tmp_path: Path) -> None:
    rows = _verdicts(tmp_path, {"with sync": 300e-6}, {"with sync": BASE * 1.3})
    assert (rows["with sync"].basis, rows["with sync"].verdict) == ("one value per side",
                                                                     ONE_VALUE)


def test_different_arithmetic_is_set_apart_without_a_verdict(tmp_path: Path) -> None:
    a = load_side(str(_log(tmp_path / "a.log", {"with sync": BASE})))
    b = load_side(str(_log(tmp_path / "b.log", {"with sync": BASE * 2})))
    plain = compare.compare(a, b)  # no precision column (today's logs): not recorded, judged
    assert [r.verdict for r in plain.rows] == [ONE_VALUE]
    assert "precision" not in {f.what for f in plain.facts}
    a.data.figures["precision"] = "fp32"  # the dataset's precision column, as a sweep records it
    b.data.figures["precision"] = "tf32"
    c = compare.compare(a, b)
    assert [(r.verdict, r.apart) for r in c.rows] == [("", "precision fp32 vs tf32")]
    assert [(f.a, f.b) for f in c.facts if f.what == "precision"] == [("fp32", "tf32")]
    assert [r.figure for r in c.rows] == ["torch cpu 256x256 FP32/TF32 1 thread with sync"]


def test_a_tf32_figure_says_tf32_in_its_name(tmp_path: Path) -> None:
    # the H200 A/A table had two `torch cuda no sync` rows, FP32 and TF32: the key had the
    # precision, the words did not
    names = {}
    for precision in ("fp32", "tf32"):
        a = load_side(str(_log(tmp_path / f"a-{precision}.log", {"with sync": BASE})))
        b = load_side(str(_log(tmp_path / f"b-{precision}.log", {"with sync": BASE})))
        a.data.figures["precision"] = b.data.figures["precision"] = precision
        names[precision] = [r.figure for r in compare.compare(a, b).rows]
    assert names == {"fp32": ["torch cpu 256x256 1 thread with sync"],
                     "tf32": ["torch cpu 256x256 TF32 1 thread with sync"]}


# ---- the command: --fail-on, bad input --------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(["compare", *argv])
    return code, capsys.readouterr().err.strip().splitlines()


def test_fail_on_slower_exits_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(2)
    a = fake_stores.store(tmp_path / "a", [{"with sync": fake_stores.spread(300e-6, 20, rng)}
                                           for _ in range(3)])
    b = fake_stores.store(tmp_path / "b", [{"with sync": fake_stores.spread(450e-6, 20, rng)}
                                           for _ in range(3)])
    out = str(tmp_path / "out")
    assert _run(capsys, str(a), str(b), "--out", out)[0] == 0
    assert _run(capsys, str(a), str(b), "--out", out, "--fail-on", "slower")[0] == 1
    assert _run(capsys, str(b), str(a), "--out", out, "--fail-on", "slower")[0] == 0


@pytest.mark.parametrize("case", ["nothing in common", "unknown sweep", "no store", "no log",
                                  "not a log", "bad effect"])
def test_bad_input_is_one_line_and_exit_two(case: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    torch_log = str(_log(tmp_path / "a.log", {"with sync": BASE}))
    burn_log = str(write(tmp_path / "b.log",
                         "metal 1024x1024 matmul with sync, 20 runs: min 1.0ms median 1.1ms\n"))
    (tmp_path / "empty").mkdir()
    argv = {
        "nothing in common": ([torch_log, burn_log], "no figure in common"),
        "unknown sweep": ([f"{H200}@20990101-000000-abcdef", torch_log], "no sweep"),
        "no store": ([str(tmp_path / "empty"), torch_log], "holds no results store"),
        "no log": ([str(tmp_path / "missing.log"), torch_log], "no such results folder"),
        "not a log": ([str(PROJECT / "pyproject.toml"), torch_log], "no figures in this log"),
        "bad effect": ([torch_log, torch_log, "--min-effect", "0"], "--min-effect"),
    }[case]
    code, err = _run(capsys, *argv[0], "--out", str(tmp_path / "out"))
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and argv[1] in err[0], err
    assert not (tmp_path / "out").exists()


# ---- real CPU sweeps: the same builds twice, and once slowed on purpose -------------------------

# tests/report/conftest.py's `cpu_sweeps` (shared with test_aa): torch 6 processes and burn's
# template build 3 a side, 128x128, 20 reps, MKL slowed in the third.
# This project's shared 2-core VM runs in two speed phases lasting tens of seconds: burn's
# template at 256x256 took 600 or 850 µs (median of 30) from one process to the next, torch 380
# or 490 µs, with tight intervals each time. Those are real differences of the machine between
# the two sides, which `compare` reports at the default 5% (seen: 0.77x-1.48x for the same
# builds). These tests judge at 60%, above the box's phases; the knob costs torch 2-5x.
EFFECT = 0.6
BASES = {"torch": "processes 6/6, reps 20/20", "burn": "processes 3/3, reps 20/20"}


def _sampled(c: compare.Comparison) -> dict[str, compare.Row]:
    return {r.figure: r for r in c.rows if ", reps " in r.basis}


@pytest.mark.cargo
@pytest.mark.torch
def test_two_sweeps_of_the_same_builds_come_out_the_same(cpu_sweeps) -> None:
    a, b = load_side(str(cpu_sweeps["a"])), load_side(str(cpu_sweeps["b"]))
    c = compare.compare(a, b)
    assert not c.only_a and not c.only_b and not [r for r in c.rows if r.apart]
    rows = _sampled(c)
    # every timed method of both programs matched (torch 4, burn 3), each judged on all its
    # processes and reps
    assert {f: r.basis for f, r in rows.items()} == {
        f: BASES[f.split(" ", 1)[0]] for f in rows}
    assert sorted(f.split(" ", 1)[0] for f in rows) == ["burn"] * 3 + ["torch"] * 4
    assert {f.rsplit(" thread ", 1)[1] for f in rows} == {
        "no sync", "with sync", "read-back", "benchmark.Timer"}
    verdicts = [r.verdict for r in compare.compare(a, b, EFFECT).rows if ", reps " in r.basis]
    assert "slower" not in verdicts and "faster" not in verdicts, verdicts
    # single figures (device init, first call): one value per process, judged on the processes
    single = {r.figure: r.basis for r in c.rows
              if r.figure.endswith(("device init", "first call"))}
    assert single and set(single.values()) == {"processes 6/6", "processes 3/3"}, single
    assert all(basis == BASES[f.split(" ", 1)[0]].split(",")[0] for f, basis in single.items())


@pytest.mark.cargo
@pytest.mark.torch
def test_a_sweep_slowed_on_purpose_is_slower_exactly_where_it_was_slowed(
        cpu_sweeps, tmp_path: Path) -> None:
    c = compare.compare(load_side(str(cpu_sweeps["a"])), load_side(str(cpu_sweeps["slow"])),
                        EFFECT)
    facts = {f.what: f for f in c.facts}
    assert (facts["experiment env"].a, facts["experiment env"].b) == (
        "none", "MKL_CBWR=COMPATIBLE")
    rows = _sampled(c)
    slower = {f for f, r in rows.items() if r.verdict == "slower"}
    torch_rows = {f for f in rows if f.startswith("torch ")}
    assert len(torch_rows) == 4
    # only torch may slow down, nothing is faster; on this shared box 3 processes a side are
    # often too few for a verdict at all (seen: intervals 1.07-147x), so the torch ratios are
    # held to their point value here; tests/report/compare/test_aa.py finds the change as `slower`
    seen = {f: (r.verdict, r.ratio, r.lo, r.hi) for f, r in rows.items()}
    assert slower <= torch_rows and "faster" not in {r.verdict for r in rows.values()}, seen
    assert all(rows[f].ratio > 1.3 for f in torch_rows), seen
    # a sweep against itself: every figure, single ones included, is the same
    argv = ["compare", str(cpu_sweeps["a"]), str(cpu_sweeps["a"]), "--out",
            str(tmp_path / "self")]
    assert main([*argv, "--fail-on", "slower", "--fail-on", "faster"]) == 0
