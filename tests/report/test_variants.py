"""A/B measured interleaved in one sweep (`variants:`): each target runs once per variant, the
processes of both in the same shuffled rounds (so drift hits both alike), and compare reads
RESULTS#a and RESULTS#b as the two sides. Real torch cpu runs (MKL_CBWR=COMPATIBLE makes
MKL's steady figures several times slower on this box: tests/report/compare/test_aa.py).

Five processes per variant: with three, a 2.8x change on CI's 2-core box came out
`inconclusive` (95% interval 1.77-4.37x, but Holm over the four steady figures gave p 0.068:
Welch's t on ~2 degrees of freedom), a true verdict of the design, not a flake to retry. Five
give ~8 degrees of freedom, where the same spread is p < 0.001."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.errors import ConfigError, InputError
from orchestrator.experiments import config
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import load_side

from ..conftest import write
from .compare.test_aa import STEADY
from .conftest import AB


def test_fewer_than_two_variants_is_one_line(tmp_path: Path) -> None:
    text = AB.replace("      slow: {env: {MKL_CBWR: COMPATIBLE}, note: MKL's conditional "
                      "numerical reproducibility}\n", "")
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    assert "experiments.torch-cpu.variants" in str(info.value)
    assert "at least two variants" in str(info.value)


@pytest.mark.torch
def test_both_variants_run_interleaved_in_one_sweep(swept: Path) -> None:
    runs = dataset.load(swept).runs
    figures = dataset.load(swept).figures
    order = [figures[figures["run_id"] == rid]["variant"].iloc[0] for rid in runs["run_id"]]
    # each round holds one process of each variant, in a shuffled order
    assert [sorted(order[k:k + 2]) for k in range(0, 10, 2)] == [["a", "slow"]] * 5
    assert set(figures[figures["variant"] == "slow"]["measure_env"]) == {
        "MKL_CBWR=COMPATIBLE"}


@pytest.mark.torch
def test_compare_reads_the_two_variants_as_two_sides(swept: Path) -> None:
    c = compare.compare(load_side(f"{swept}#a"), load_side(f"{swept}#slow"))
    steady = {r.figure: r for r in c.rows if r.verdict and r.figure.endswith(STEADY)}
    assert len(steady) == 4 and all(r.basis.startswith("processes 5/5") for r in
                                    steady.values())
    assert {r.verdict for r in steady.values()} == {"slower"}, {
        f: (r.ratio, r.lo, r.hi, r.p_holm) for f, r in steady.items()}
    with pytest.raises(InputError, match=r"no variant 'b' in .*variants: a, slow"):
        load_side(f"{swept}#b")


@pytest.mark.torch
def test_compare_of_variant_sides_through_the_command(swept: Path, tmp_path: Path) -> None:
    assert main(["compare", f"{swept}#a", f"{swept}#slow", "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c").is_dir()
    # what a side reads, for the outputs' never-an-input check: the folder, not 'r#a'
    from orchestrator.cli import _sources
    assert _sources([f"{swept}#a", f"{swept}@x#a"]) == [swept, swept]


def _ab_store(folder: Path) -> Path:
    """One sweep of two variants (hand-made, torch cpu's printed lines): b sets three
    variables, only one of which measure_env lists."""
    import numpy as np

    from orchestrator.data.store import Store
    from orchestrator.records import RunDef, RunRecord
    from orchestrator.run.sweep import parse_record

    from .fake_stores import lines
    envs = {"a": (), "b": (("LD_PRELOAD", "/opt/slow.so"), ("PYTHONPATH", "/opt/x"),
                          ("SCALE", "3"))}
    config = folder.parent / "ab.yaml"
    config.write_text("version: 1\n", encoding="utf-8")
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(config, {"cores_usable": 2}, [], new=True)
        for i in range(1, 4):
            for variant, env in envs.items():
                run = RunDef(experiment="cpu", program="torch", device="cpu", mode="mm",
                             shape=(256, 256), reps=20, threads=1, process=i, processes=3,
                             variant=variant, env=env)
                scale = 3.0 if variant == "b" else 1.0
                rec = RunRecord(run=run, stdout=lines({"with sync": np.full(20, 1e-3 * scale)
                                                       }).encode(),
                                load_before={"load1": 0.5}, load_after={"load1": 0.5})
                store.record_run(sweep, rec, parse_record(rec))
        store.end_sweep(sweep, "complete")
    return folder


def test_compare_of_variants_shows_every_variable_a_variant_sets(tmp_path: Path) -> None:
    """`compare R#a R#b` said `experiment env: none | none | same` while b set LD_PRELOAD,
    PYTHONPATH and SCALE (only measure_env's list was read for a variant); two folders with
    the same difference showed it all. Now a variant side shows all of its own."""
    from orchestrator.report.compare.sides import machine_facts
    folder = _ab_store(tmp_path / "r")
    facts = {f.what: f for f in machine_facts(load_side(f"{folder}#a"),
                                              load_side(f"{folder}#b"))}
    row = facts["experiment env"]
    assert (row.a, row.differs) == ("none", True)
    for pair in ("LD_PRELOAD=/opt/slow.so", "PYTHONPATH=/opt/x", "SCALE=3"):
        assert pair in row.b


@pytest.mark.torch
def test_report_of_a_variant_sweep_keeps_each_variant_apart(swept: Path, tmp_path: Path
                                                            ) -> None:
    out = tmp_path / "rep"
    assert main(["report", str(swept), "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("- **")]
    assert header[0].startswith("- **A** = `r@") and header[0].endswith(
        "#a`: " + header[0].split("#a`: ", 1)[1])
    assert header[0].endswith("variant a: env no variables.")
    assert header[1].endswith("variant slow: env MKL_CBWR=COMPATIBLE; note: MKL's conditional "
                              "numerical reproducibility.")
    # the column groups: one per variant, as `report A B` shows sides
    assert "| build | A: 1 thread | A: BLAS | B: 1 thread | B: BLAS |" in text
    # the figures table: each variant's own 5 processes, never the 10 of both
    rows = [line for line in text.splitlines() if line.startswith("| torch-cpu | PyTorch cpu")
            and "| with sync |" in line and " × " in line]
    assert sorted(r.split(" | ")[1] for r in rows) == ["PyTorch cpu #a, 1 thread",
                                                      "PyTorch cpu #slow, 1 thread"]
    assert all("| 5 × 20 |" in r for r in rows), rows
    figures = (out / "figures.csv").read_text(encoding="utf-8")
    assert "10 × 20" not in figures and "#slow" in figures


@pytest.mark.torch
def test_report_of_one_variant(swept: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    assert main(["report", f"{swept}#slow", "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "Source: results store, 5 runs." in text
    rows = [line for line in text.splitlines() if "| with sync |" in line and " × " in line]
    assert rows and all("| 5 × 20 |" in r and "#" not in r for r in rows), rows
    assert main(["report", f"{swept}#b", "--out", str(tmp_path / "no")]) == 2


@pytest.mark.torch
def test_export_of_a_variant_sweep_and_of_one_variant(swept: Path, tmp_path: Path) -> None:
    import pandas as pd

    assert main(["export", str(swept), "--csv", str(tmp_path / "all.csv")]) == 0
    rows = pd.read_csv(tmp_path / "all.csv", low_memory=False)
    assert set(rows["variant"]) == {"a", "slow"}
    assert main(["export", f"{swept}#slow", "--csv", str(tmp_path / "slow.csv")]) == 0
    slow = pd.read_csv(tmp_path / "slow.csv", low_memory=False)
    assert set(slow["variant"]) == {"slow"} and len(slow) == (rows["variant"] == "slow").sum()
    samples = pd.read_csv(tmp_path / "slow.samples.csv")
    assert set(samples["run_id"]) <= set(slow["run_id"])


@pytest.mark.torch
def test_compare_of_a_whole_variant_sweep_is_refused_naming_its_parts(swept: Path,
                                                                      tmp_path: Path) -> None:
    # compare never pools two variants into one side: the sweep named whole is one line
    assert main(["compare", str(swept), f"{swept}#a", "--out", str(tmp_path / "c")]) == 2
    assert not (tmp_path / "c").exists()
    with pytest.raises(InputError, match=r"holds 2 parts compare never pools .*r#a, .*r#slow"):
        from orchestrator.report.compare.sides import one_part
        one_part(str(swept))


@pytest.mark.torch
def test_report_html_of_a_variant_sweep_in_chromium(swept: Path, tmp_path: Path) -> None:
    """report.html beside the variant sweep's report.md: each joined table's column groups as
    grouped header cells naming the variant with its env and note, then the whole sweep's
    sections and plots; opened in a real browser."""
    from tests.report.chromium import file_url, open_page

    from .test_html_report import CHECKS, _tables_in

    out = tmp_path / "rep"
    assert main(["report", str(swept), "--out", str(out)]) == 0
    groups = """[...document.querySelectorAll('th.group')].map(t => t.innerText)"""
    seen = open_page(file_url(out / "report.html"),
                     f"({{...{CHECKS}, groups: {groups}}})")
    assert seen.errors == []
    got = seen.result
    md = (out / "report.md").read_text(encoding="utf-8")
    assert got["tables"] == _tables_in(md) and all(n > 0 for n in got["rows"])
    assert sorted(p["name"] for p in got["plots"]) == sorted(p.name for p in out.glob("*.png"))
    assert got["plots"] and all(p["ok"] for p in got["plots"]), got["plots"]
    assert got["broken"] == [] and "#findings" in got["toc"] and "#the-whole-sweep" in got["toc"]
    assert got["csv"] and all((out / name).is_file() for name in got["csv"])
    a = [g for g in got["groups"] if g.startswith("A\n")]
    slow = [g for g in got["groups"] if g.startswith("B\n")]
    assert a and all(g.endswith("#a: variant a: env no variables") for g in a), a
    assert slow and all(g.endswith("variant slow: env MKL_CBWR=COMPATIBLE; note: MKL's "
                                   "conditional numerical reproducibility") for g in slow), slow
    # the whole sweep after the groups: its findings, each variant's rows apart
    text = got["text"]
    assert text.index("Every table of the sweep") < text.index("Findings")
    assert "PyTorch cpu #slow, 1 thread" in text
