"""Profile runs: planned after their measured run, started under ncu, ncu's CSV kept and read.

No GPU and no Nsight Compute here: the skip path runs through the real sweep; the ncu wiring
runs against a fake `ncu` on PATH that writes the CSV the real ncu wrote on the H200
(tests/data/h200) or a broken one, and prints bench_py's real H200 output as the program's."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.data.store import Store
from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.records import Role, RunDef, RunRecord, Status, classify
from orchestrator.run import profile, sweep
from orchestrator.run.runner import RunContext, execute

from ..conftest import DATA, PROJECT, write

H200 = DATA / "h200"
FAKE_NCU = f"""#!{sys.executable}
import json, os, shutil, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
json.dump(args, open(os.environ["FAKE_NCU_ARGS"], "w"))
mode = os.environ.get("FAKE_NCU_MODE", "ok")
sys.stdout.write(open({str(H200 / "torch_cuda_fp32.log")!r}).read())
if mode == "ok":
    shutil.copy({str(H200 / "ncu_window_torch_fp32.csv")!r}, log)
elif mode == "truncated":
    open(log, "w").write(open({str(H200 / "ncu_window_torch_fp32.csv")!r}).read()[:1500])
elif mode == "empty":
    open(log, "w").close()
elif mode == "fifo":  # no writer: a blocking read would hang the sweep
    os.remove(log) if os.path.lexists(log) else None
    os.mkfifo(log)
elif mode == "devzero":
    os.symlink("/dev/zero", log)
elif mode == "sparse":  # 3 GB by its real size, no block written
    with open(log, "wb") as f:
        f.truncate(3 * 2**30)
elif mode == "long_name":  # one kernel name past csv's 128 KiB field limit
    text = open({str(H200 / "ncu_window_torch_fp32.csv")!r}).read()
    open(log, "w").write(text.replace("sm80_xmma", "k" * 200_000 + "sm80_xmma", 1))
elif mode == "many_kernels":  # inside the size cap, a distinct kernel per launch
    lines = open({str(H200 / "ncu_window_torch_fp32.csv")!r}).read().splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith('"ID",')][0]
    row = lines[head + 1]
    rows = [row.replace('"0",', f'"{{i}}",', 1).replace("sm80_xmma", f"k{{i}}_sm80", 1)
            for i in range(5000)]
    open(log, "w").write("\\n".join(lines[:head + 1] + rows) + "\\n")
elif mode == "many_launches":  # inside the size cap, one kernel launched 100,000 times
    lines = open({str(H200 / "ncu_window_torch_fp32.csv")!r}).read().splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith('"ID",')][0]
    row = lines[head + 1]
    with open(log, "w") as out:
        out.write("\\n".join(lines[:head + 1]) + "\\n")
        out.writelines(row.replace('"0",', f'"{{i}}",', 1) + "\\n" for i in range(100_000))
elif mode == "error":
    open(log, "w").write("==ERROR== The application returned an error code (1).\\n")
    sys.exit(1)
"""
EXPERIMENTS = """\
version: 1
defaults: {shape: [64, 64], reps: 20, timeout_s: 120, order: {interleave: false}}  # by position
experiments:
  methods:
    mode: mm
    profile: [ncu]
    targets:
      - {program: torch, device: cuda}
      - {program: torch, device: cpu}
  unprofiled:
    mode: mm
    profile: [ncu]
    targets:
      - {program: torch, device: cuda, profile: []}
"""


# PyTorch's CPU program at EXPERIMENTS' 64x64 as a stand-in Python: no facts for the probes
# (`-c`), one measured line and its samples for a run
STAND_IN_TORCH = f"""#!{sys.executable}
import sys
if sys.argv[1:2] != ["-c"]:
    print("cpu: device init 1.000ms")
    print("cpu 64x64 matmul with sync, 20 runs: min 1.000\\u00b5s median 2.000\\u00b5s")
    print("# samples cpu 64x64 matmul with sync: " + " ".join(["1e-06"] * 20))
"""


@pytest.fixture
def fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    write(bin_dir / "ncu", FAKE_NCU).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    return tmp_path / "ncu_args.json"


def _profile(tmp_path: Path, args: Path, mode: str):
    run = RunDef(experiment="t", program="torch", device="cuda", mode="mm", shape=(1024, 1024),
                 reps=20, profile="ncu",
                 env=(("FAKE_NCU_MODE", mode), ("FAKE_NCU_ARGS", str(args))))
    rec = execute(run, RunContext(PROJECT, sys.executable, tmp_path / "scratch", {}),
                  role=Role.PROFILE)
    parsed = sweep.parse_record(rec)
    rec.status, rec.reason = classify(rec, parsed)
    return rec, profile.add_figures(rec, parsed)


def test_plan_puts_each_profile_run_after_its_measured_run(tmp_path: Path) -> None:
    cfg = config.load(write(tmp_path / "e.yaml", EXPERIMENTS))
    planned = expand(cfg, {"cuda": None, "ncu": "Nsight Compute (ncu) is not on PATH"}, 4)
    runs = [(p.run.experiment, p.run.device, p.run.profile, p.skip_reason) for p in planned]
    assert runs == [("methods", "cuda", None, None),
                    ("methods", "cuda", "ncu", "Nsight Compute (ncu) is not on PATH"),
                    ("methods", "cpu", None, None), ("unprofiled", "cuda", None, None)]
    measured, prof = planned[0].run, planned[1].run
    assert prof.profile_of == measured.run_id != prof.run_id
    # the marker is not hashed while unset: a run without profile keeps its old id
    assert "profile" not in json.dumps(measured.describe())
    assert RunDef.from_definition(json.loads(json.dumps(prof.definition()))) == prof


def test_profile_key_is_checked_with_its_yaml_path(tmp_path: Path) -> None:
    bad = EXPERIMENTS.replace("profile: [ncu]", "profile: [nsys]")
    with pytest.raises(ConfigError) as caught:
        config.load(write(tmp_path / "e.yaml", bad))
    assert "experiments.methods.profile" in str(caught.value) and "'ncu'" in str(caught.value)


def test_profile_run_under_ncu_keeps_the_csv_and_reads_kernel_times(
        tmp_path: Path, fake_ncu: Path) -> None:
    rec, parsed = _profile(tmp_path, fake_ncu, "ok")
    assert rec.status == Status.OK, rec.reason
    args = json.loads(fake_ncu.read_text())
    # L2 as the timed runs had it: --cache-control none, --clock-control none
    assert args[:args.index("--log-file")] == [*profile.NCU_OPTIONS, "--cache-control", "none"]
    program = args[args.index("--log-file") + 2:]
    assert program[1].endswith("bench_py/exec_gpu.py") and program[-1] == "--profile-window"
    assert rec.artifacts[profile.ARTIFACT] == (H200 / "ncu_window_torch_fp32.csv").read_bytes()
    ncu_figs = [f for f in parsed.figures if f.profiler == "ncu"]
    assert {f.stat for f in ncu_figs} == {"kernel_min", "kernel_median", "min", "median"}
    # the program's own figures (its own CUPTI kernel time included) are kept beside them
    assert {f.profiler for f in parsed.figures if f.method == "kernel_time"} == {"ncu", "cupti"}
    assert any(f.method == "device_time" for f in parsed.figures)


@pytest.mark.parametrize(("mode", "why"), [
    ("truncated", "ncu: ncu's CSV line 9 has 9 of 15 fields (cut short?)"),
    ("empty", "ncu: ncu's CSV is empty"),
    ("none", "ncu: ncu wrote no CSV"),
    ("error", "exited with status 1 (==ERROR== The application returned an error code (1).)"),
])
def test_broken_ncu_output_fails_the_profile_run_and_keeps_the_program_figures(
        tmp_path: Path, fake_ncu: Path, mode: str, why: str) -> None:
    rec, parsed = _profile(tmp_path, fake_ncu, mode)
    assert rec.status == Status.FAILED
    assert why in rec.reason
    assert not [f for f in parsed.figures if f.profiler == "ncu"]
    assert any(f.method == "device_time" for f in parsed.figures)


@pytest.mark.parametrize(("mode", "why"), [
    ("fifo", "ncu's CSV is not a plain file (not read)"),
    ("devzero", "ncu's CSV is a symbolic link (not followed)"),
    ("sparse", "ncu's CSV is 3.0 GiB, over the 256.0 MiB kept"),
    ("long_name", "ncu: ncu's CSV line 6 cannot be read: field larger than field limit"),
    ("many_kernels", "ncu: ncu's CSV names more than 256 distinct kernels (line 262), the "
                     "most one profile run may add"),
    ("many_launches", "ncu: ncu's CSV holds more than 320 launches (line 326): 16 per matmul "
                      "of the window's 20"),
])
def test_hostile_ncu_output_is_refused_promptly_with_the_reason(
        tmp_path: Path, fake_ncu: Path, mode: str, why: str) -> None:
    """A FIFO, a link to /dev/zero, a 3 GB sparse file, a 200 KB kernel name, 5000 kernels, a
    100,000 launches of one kernel (within the size cap):
    each a failed profile run with its reason, in seconds (no hang, no MemoryError, no
    csv.Error), the program's own figures kept."""
    started = time.monotonic()
    rec, parsed = _profile(tmp_path, fake_ncu, mode)
    assert time.monotonic() - started < 60
    assert rec.status == Status.FAILED
    assert why in rec.reason
    assert not [f for f in parsed.figures if f.profiler == "ncu"]
    assert any(f.method == "device_time" for f in parsed.figures)


def test_sweep_records_skipped_profile_runs_linked_to_their_measured_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine has no GPU: the CUDA runs and their profile runs are skipped, with the
    reason, the profile run right after its measured run and linked to it."""
    monkeypatch.setattr(sweep, "capabilities", lambda python: {
        "cuda": "needs an NVIDIA GPU", "torch": None,
        "ncu": "Nsight Compute (ncu) is not on PATH"})
    # the one run that is not skipped is a stand-in's: what is proven is the order and the link
    # of the skipped runs (the real PyTorch program's CPU runs: tests/test_bench_py.py)
    stand_in = write(tmp_path / "python", STAND_IN_TORCH)
    stand_in.chmod(0o755)
    exp = write(tmp_path / "e.yaml", EXPERIMENTS.replace("device: cpu}", "device: cpu, "
                                                         "profile: [ncu]}"))
    results = tmp_path / "results"
    assert main(["run", str(exp), "--results", str(results), "--quiet",
                 "--python", str(stand_in)]) == 0
    with Store(results).reading() as store:  # in the order they were recorded
        runs = store.query("SELECT run_id, role, status, reason, experiment FROM runs "
                           "ORDER BY rowid")
    assert [(r["experiment"], r["role"], r["status"]) for r in runs] == [
        ("methods", "measure", "skipped"), ("methods", "profile", "skipped"),
        ("methods", "measure", "ok"), ("unprofiled", "measure", "skipped")]
    assert runs[1]["reason"] == "needs an NVIDIA GPU"
    # the dataset's row of the profile run names its measured run
    data = dataset.load(results)
    rows = data.figures[data.figures["role"] == "profile"]
    assert list(rows["profile_of"]) == [runs[0]["run_id"]]
    assert list(rows["reason"]) == ["needs an NVIDIA GPU"]
    assert set(data.figures[data.figures["role"] == "measure"]["profile_of"]) == {""}


def test_reparse_reads_the_kernel_lines_and_the_stored_csv_again(tmp_path: Path) -> None:
    """A store written by an older parser (no kernel figures) gets them from `reparse`."""
    run = RunDef(experiment="methods", program="torch", device="cuda", mode="mm",
                 shape=(1024, 1024), reps=20)
    log = (H200 / "torch_cuda_fp32.log").read_bytes()
    folder = tmp_path / "results"
    with Store(folder).writing() as store:
        sweep_id, _ = store.begin_sweep(write(tmp_path / "e.yaml", "version: 1\n"), {}, [], True)
        store.record_run(sweep_id, RunRecord(run=run, stdout=log), None)
        store.record_run(sweep_id, RunRecord(
            run=replace(run, profile="ncu"), role=Role.PROFILE, stdout=log,
            artifacts={profile.ARTIFACT: (H200 / "ncu_window_torch_fp32.csv").read_bytes()}),
            None)
    assert dataset.load(folder).figures["method"].isna().all()  # no figures yet
    runs, _figures, _damage = sweep.reparse(folder)
    assert runs == 2
    fig = dataset.load(folder).figures
    kernel = fig[fig["method"] == "kernel_time"]
    assert set(zip(kernel["role"], kernel["profiler"], strict=True)) == {
        ("measure", "cupti"), ("profile", "cupti"), ("profile", "ncu")}
    assert set(fig[fig["method"] == "device_time_queued"]["stat"]) == {"min", "median"}
