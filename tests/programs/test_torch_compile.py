"""torch.compile through the orchestrator, for real on the CPU (Inductor's C++ backend; g++ on
this box): a first-call series from emptied Inductor/Triton caches then warm, proven from the
folder (programs/torch/cache.py) and by torch's own counters; a mega series (`cache: [mega]`):
its priming run saves the mega-cache blob of a cold compile, its first process finds the folders
emptied, loads the blob and hits; the mode in the run's label and the dataset's `exec_mode`; the
first call taken apart in the report; an accuracy run through the compiled matmul. 32x32, 2
reps: each compiled process is a few seconds of compile on a quiet box.
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.programs.torch import cache
from orchestrator.records import RunDef

PROJECT = Path(__file__).resolve().parents[2]
EXPERIMENTS = """\
version: 1
defaults: {shape: [32, 32], reps: 2, order: {interleave: false}}
experiments:
  tc-first:
    mode: mm
    processes: 2
    cache: [cold]
    targets: [{program: torch, device: cpu, threads: [1], exec: [compile]}]
  tc-mega:
    mode: mm
    cache: [mega]
    targets: [{program: torch, device: cpu, threads: [1], exec: [compile]}]
  tc-acc:
    mode: accuracy
    shapes: [[16, 16]]
    targets: [{program: torch, device: cpu, exec: [eager, compile]}]
"""


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=PROJECT,
                          capture_output=True, text=True, timeout=900, check=False)


@pytest.mark.torch
def test_compile_series_cold_then_warm_proven_and_taken_apart(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    exp = tmp_path / "tc.yaml"
    exp.write_text(EXPERIMENTS, encoding="utf-8")
    results = tmp_path / "results"
    done = _cli("run", str(exp), "--results", str(results))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tc-first: torch cpu mm 32x32, threads 1, compile, cold cache, process 1/2" \
        in done.stdout + done.stderr
    out = tmp_path / "data.csv"
    assert _cli("export", str(results), "--csv", str(out)).returncode == 0
    rows = [r for r in csv.DictReader(out.open(encoding="utf-8"))
            if r["experiment"] == "tc-first"]
    assert {r["exec_mode"] for r in rows} == {"compile"}
    by = {(r["process"], r["method"], r["stat"]): r for r in rows}
    # cold: the folder empty before, an FX graph written; torch says miss
    assert by[("1", "first_call", "value")]["cache_proof"].startswith(
        "cold (empty before), compiled; written: inductor"), by[("1", "first_call", "value")]
    assert float(by[("1", "compile_cache", "fxgraph_cache_miss")]["value_s"]) == 1
    # warm: the same entries, byte-identical, none new; torch says hit
    assert by[("2", "first_call", "value")]["cache_proof"].startswith(
        "warm, 1 FX graph entries read, none written")
    assert float(by[("2", "compile_cache", "fxgraph_cache_hit")]["value_s"]) == 1
    for process in ("1", "2"):
        for stage in ("first_call_dynamo", "first_call_inductor", "first_call_run"):
            assert float(by[(process, stage, "value")]["value_s"]) >= 0
    # the compile is most of a cold first call
    assert float(by[("1", "first_call_inductor", "value")]["value_s"]) > \
        float(by[("1", "first_call_run", "value")]["value_s"])
    _mega_proven(list(csv.DictReader(out.open(encoding="utf-8"))))
    acc = {(r["exec_mode"], r["stat"]): r["value_s"]
           for r in csv.DictReader(out.open(encoding="utf-8"))
           if r["experiment"] == "tc-acc" and r["method"] == "accuracy"}
    assert {mode for mode, _stat in acc} == {"", "compile"}
    # a lone mm compiled for the CPU calls the same BLAS as eager: the same bits
    assert float(acc[("compile", "max_diff_torch_cpu")]) == 0
    report = _cli("report", str(results), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "| experiment | framework | device | process | cache | Dynamo trace | Inductor " \
           "compile | first run | compile caches | cache proof |" in text
    assert "| tc-first | PyTorch | cpu [compile] | 2 | warm |" in text
    assert "FX graph hit 1 miss 0" in text
    assert "| tc-mega | PyTorch | cpu [compile] | 1 | mega |" in text
    assert "mega-cache loaded " in text
    assert "| priming | PyTorch cpu [compile] | cold (its cache folder emptied), then saved the " \
           "mega-cache blob a mega series loads |" in text


def _mega_proven(rows: list[dict[str, str]]) -> None:
    """The priming run (cold) saved the blob; the mega process loaded those very bytes into
    emptied folders and its compile hit them."""
    mine = {(r["role"], r["cache"], r["method"], r["stat"]): r for r in rows
            if r["experiment"] == "tc-mega"}
    primed = mine[("priming", "cold", "first_call", "value")]["cache_proof"]
    loaded = mine[("measure", "mega", "first_call", "value")]["cache_proof"]
    size = mine[("priming", "cold", "compile_artifacts", "saved_bytes")]["value_s"]
    assert float(size) > 1000
    assert float(mine[("measure", "mega", "compile_artifacts", "loaded_bytes")]["value_s"]) == \
        float(size)
    digest = primed.split("mega-cache saved: ", 1)[1]
    assert loaded == (f"from artifacts (empty before), mega-cache loaded: {digest}; after: "
                      + loaded.split("; after: ", 1)[1]), (primed, loaded)
    assert float(mine[("measure", "mega", "compile_cache", "fxgraph_cache_hit")]["value_s"]) == 1
    assert float(mine[("measure", "mega", "compile_cache", "fxgraph_cache_miss")]["value_s"]) == 0


def test_proofs_read_the_folder(tmp_path: Path) -> None:
    """The proofs' words from folders laid out as Inductor lays them out."""
    empty = cache.look(tmp_path / "none")
    graph = tmp_path / "c" / "inductor" / "fxgraph" / "ab" / "key"
    graph.mkdir(parents=True)
    (graph / "entry").write_bytes(b"graph")
    filled = cache.look(tmp_path / "c")
    assert cache.cold_proof(empty, filled) == ("cold (empty before), compiled; written: "
                                               "inductor 1 files")
    assert cache.cold_proof(filled, filled).startswith("not cold: ")
    assert cache.warm_proof(filled, filled) == "warm, 1 FX graph entries read, none written"
    assert cache.warm_proof(empty, filled) == "not proven warm: no FX graph entry before"
    (graph / "entry").write_bytes(b"other")
    assert cache.warm_proof(filled, cache.look(tmp_path / "c")) == \
        "not warm: an FX graph entry changed"
    (graph / "second").write_bytes(b"new")
    (graph / "entry").write_bytes(b"graph")
    assert "1 new written" in cache.warm_proof(filled, cache.look(tmp_path / "c"))


def _run(cache_state: str, action: str) -> RunDef:
    return RunDef("e", "torch", "cpu", "mm", (8, 8), 1, exec="compile", cache=cache_state,
                  cache_action=action)


def test_mega_proof_reads_the_folder_and_the_blob(tmp_path: Path) -> None:
    """A cold first process saves the blob its definition's mega run loads; the proof needs
    the folder empty before, the blob there, an FX graph entry after."""
    folder = tmp_path / "target" / "torch-compile-cache"
    mega, cold = _run("mega", "delete"), _run("cold", "delete")
    assert cache.artifacts_use(mega) == "load" and cache.artifacts_use(cold) == "save"
    assert cache.artifacts_use(_run("mega", "none")) is None  # a later process: warm
    assert cache.blob_path(mega, folder) == cache.blob_path(cold, folder)
    assert cache.blob_path(mega, folder).parent == tmp_path / "target" / "torch-mega-cache"
    assert cache.artifacts_argv(mega, folder) == ["--load-cache-artifacts",
                                                  str(cache.blob_path(mega, folder))]
    before = cache.look(folder, mega)
    assert cache.mega_proof(before, before).startswith("not from artifacts: no blob at ")
    blob = cache.blob_path(mega, folder)
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"blob")
    before = cache.look(folder, mega)
    assert before["artifacts"]["bytes"] == 4
    assert cache.mega_proof(before, before).endswith("but no FX graph entry after")
    graph = folder / "inductor" / "fxgraph" / "ab"
    graph.mkdir(parents=True)
    (graph / "entry").write_bytes(b"graph")
    after = cache.look(folder, mega)
    digest = hashlib.sha256(b"blob").hexdigest()[:12]
    assert cache.mega_proof(before, after) == (
        f"from artifacts (empty before), mega-cache loaded: 4 bytes, sha256 {digest}; after: "
        "inductor 1 files")
    assert cache.mega_proof(after, after).startswith("not from artifacts: ")
    assert cache.saved_words(cache.look(folder, cold)) == f"; mega-cache saved: 4 bytes, " \
        f"sha256 {digest}"
    assert cache.saved_words(cache.look(folder, _run("warm", "ensure"))) == ""
