"""Cold and warm proven: a fake burn that writes the real H200 cubecl database.

The fake stands where the exec-gpu build would be. Started in its crate folder, it copies the
real database (tests/data/h200/cubecl_env_cold) into cubecl's folder when that holds none (what
cubecl does after a cold autotune), touches Turso's lock file either way (a read-only cubecl
process gives it a new mtime), and writes one JIT file into its CUDA_CACHE_PATH when that is
empty (what the driver does). The sweep runs in-process on a copy of the project.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import Builder
from orchestrator.records import RunDef
from orchestrator.run.runner import RunContext, execute
from orchestrator.run.sweep import Sweep

from ..conftest import PROJECT
from ..test_faults import project_copy, runs_of  # noqa: F401 (a fixture)

FIXTURE = PROJECT / "tests" / "data" / "h200" / "cubecl_env_cold"
WINNER, MEDIAN = "matmul_specialized_tma_mma", 37.344e-6
FAKE_BURN = f"""
import os, shutil
from pathlib import Path
env = Path.cwd().parent / "target" / "environment"
cold = not (env / "default.db").exists()
if cold:
    env.mkdir(parents=True, exist_ok=True)
    for name in ("default.db", "default.db-wal"):
        shutil.copyfile(Path({str(FIXTURE)!r}) / name, env / name)
(env / "default.db-tshm").write_bytes(b"lock")
jit = Path(os.environ["CUDA_CACHE_PATH"])
if not any(jit.iterdir()):
    (jit / "index").write_bytes(b"sass" * 100)
print("cuda: device init 1.000ms")
# a cold first call pays the autotune: 26 s, and ms from its driver cache folder's name
after = f"26.{{sum(jit.name.encode()) % 1000:03d}}s" if cold else "1.500s"
print(f"cuda 1024x1024 matmul first call: returned 150.000\\u00b5s, after sync {{after}}")
print("cuda 1024x1024 matmul with sync, 3 runs: min 1.000\\u00b5s median 2.000\\u00b5s")
"""
GPU = {"program": "burn", "build": "gpu", "device": "cuda"}


def _sweep(root: Path, env: dict[str, str], tmp_path: Path, experiments: dict[str, Any],
           monkeypatch: pytest.MonkeyPatch) -> dict[tuple[str, ...], dict[str, Any]]:
    program = tmp_path / "fake-burn"
    program.write_text(f"#!{sys.executable}\n{FAKE_BURN}", encoding="utf-8")
    program.chmod(0o755)
    Builder(root)._install(Build(crate="exec-gpu", features=("cuda",)), program)
    config = root / "cache.yaml"
    config.write_text(yaml.safe_dump({
        "version": 1, "defaults": {"shape": [1024, 1024], "reps": 3},
        "builds": {"gpu": {"crate": "exec-gpu", "features": ["cuda"]}},
        "experiments": experiments}, sort_keys=False), encoding="utf-8")
    monkeypatch.setenv("PATH", env["PATH"])  # the fake nvidia-smi: cuda runs are not skipped
    monkeypatch.setenv("CUDA_CACHE_PATH", str(tmp_path / "users-own-jit-cache"))
    monkeypatch.setenv("CUDA_CACHE_DISABLE", "1")
    Sweep(root, root / "results", show=False).run(config)
    rows = {}
    for row in runs_of(root / "results").values():
        d = json.loads(row["definition_json"])
        rows[(row["experiment"], row["role"], d["cache"], str(d["process"]),
              str(d.get("repeat", 1)))] = {**row, "cache": json.loads(row["cache_json"]),
                                           "env": json.loads(row["env_json"]),
                                           "definition": d}
    return rows


def test_cold_series_repeat_and_warm_proofs(tmp_path: Path, project_copy: tuple[Path, dict],  # noqa: F811
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root, env = project_copy
    runs = _sweep(root, env, tmp_path, {
        "methods": {"mode": "mm", "cache": ["warm"], "targets": [GPU]},
        "first-call": {"mode": "mm", "cache": ["cold"], "processes": 2, "repeat": 2,
                       "targets": [GPU]},
        "small": {"mode": "mm", "cache": ["warm"], "shapes": [[512, 512]], "targets": [GPU]},
        "level": {"mode": "mm", "cache": ["warm"], "targets": [GPU],
                  "env": {"CUBECL_AUTOTUNE_LEVEL": "full"}},
    }, monkeypatch)
    assert all(r["status"] == "ok" for r in runs.values()), [r["reason"] for r in runs.values()]
    drivers = root / "results" / "driver-cache"

    # the priming run: labelled with the state it started in, recorded like a measured run
    prime = runs["methods", "priming", "cold", "1", "1"]
    assert prime["run_id"].endswith("-prime")
    assert prime["cache"]["proof"] == "cold, autotuned; driver cache empty"
    assert prime["cache"]["driver_cache"]["path"] == str(drivers / "warm")
    warm = runs["methods", "measure", "warm", "1", "1"]
    assert warm["cache"]["proof"] == "warm, no autotune; driver cache held 1 files (warm)"
    assert warm["cache"]["wrote"] is False  # the lock file's new time does not count
    assert warm["cache"]["after"]["newest_mtime"] > warm["cache"]["before"]["newest_mtime"]

    # every repeat a full cold series with its own new driver cache, shared by its process 2
    firsts = [runs["first-call", "measure", "cold", "1", r] for r in ("1", "2")]
    assert len({f["run_id"] for f in firsts}) == 2
    for repeat, first in zip(("1", "2"), firsts, strict=True):
        folder = drivers / first["run_id"]
        assert first["env"]["CUDA_CACHE_PATH"] == str(folder)
        assert "CUDA_CACHE_DISABLE" not in first["env"]  # the user's own did not leak in
        assert first["cache"]["removed"]["files"] == 3 and first["cache"]["wrote"] is True
        assert first["cache"]["proof"] == "cold, autotuned; driver cache new and empty"
        assert first["cache"]["driver_cache"]["after"] == {"files": 1, "bytes": 400}
        assert first["cache"]["autotune"]["kernel"] == WINNER
        assert first["cache"]["autotune"]["median_s"] == pytest.approx(MEDIAN)
        assert first["cache"]["autotune"]["measured"] == 20
        second = runs["first-call", "measure", "warm", "2", repeat]
        assert second["env"]["CUDA_CACHE_PATH"] == str(folder)
        assert second["cache"]["proof"] == ("warm, no autotune; driver cache held 1 files "
                                            "(cold series)")
        assert second["cache"]["autotune"]["kernel"] == WINNER

    # a warm run whose shape the store lacks is not proven warm
    small = runs["small", "measure", "warm", "1", "1"]
    assert small["cache"]["proof"].startswith(
        "not proven warm: no entry for device-0-0-cuda burn_cubecl-kernel-matmul-tune-base "
        "m=512 n=512 k=512 F32")
    assert small["cache"]["autotune"] is None
    # a setting that changes what warm means is recorded and in the proof
    level = runs["level", "measure", "warm", "1", "1"]
    assert level["cache"]["env"] == {"CUBECL_AUTOTUNE_LEVEL": "full"}
    assert level["cache"]["proof"].endswith("; env sets CUBECL_AUTOTUNE_LEVEL=full")


def test_changed_entry_is_not_warm(tmp_path: Path, project_copy: tuple[Path, dict],  # noqa: F811
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that rewrites the matmul entry (another winner) is caught by its bytes."""
    root, env = project_copy
    target = root / "bench_rust" / "target" / "environment"
    target.mkdir(parents=True)
    for name in ("default.db", "default.db-wal"):
        (target / name).write_bytes((FIXTURE / name).read_bytes())
    warm_driver = root / "results" / "driver-cache" / "warm"  # both caches warm: no priming
    warm_driver.mkdir(parents=True)
    (warm_driver / "index").write_bytes(b"sass")
    fake = FAKE_BURN.replace('(env / "default.db-tshm").write_bytes(b"lock")', _REWRITE)
    monkeypatch.setattr(sys.modules[__name__], "FAKE_BURN", fake)
    runs = _sweep(root, env, tmp_path, {"methods": {"mode": "mm", "cache": ["warm"],
                                                    "targets": [GPU]}}, monkeypatch)
    [warm] = runs.values()  # the store was there: no priming
    assert warm["cache"]["proof"].startswith("not warm: the entry for device-0-0-cuda")
    assert warm["cache"]["wrote"] is True
    assert warm["cache"]["autotune"]["kernel"] == "matmul_specialized_tma_mmX"


_REWRITE = """import sqlite3
db = sqlite3.connect(env / "default.db")  # the same winner under another name: valid CBOR
for ns, key, value in db.execute("SELECT namespace, key, value FROM entries").fetchall():
    if ns.endswith("matmul-tune-base"):
        value = value.replace(b"specialized_tma_mma", b"specialized_tma_mmX")
        db.execute("UPDATE entries SET value = ? WHERE namespace = ? AND key = ?",
                   (value, ns, key))
db.commit()
db.close()"""


def test_torch_cuda_gets_its_own_driver_cache(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTorch's kernels are SASS: its runs get an explicit, recorded, separate folder."""
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!{sys.executable}\nimport os\nprint(os.environ['CUDA_CACHE_PATH'])\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CUDA_CACHE_PATH", "/users/own")
    run = RunDef(experiment="t", program="torch", device="cuda", mode="mm", shape=(8, 8),
                 reps=3)
    ctx = RunContext(PROJECT, str(fake), tmp_path / "scratch", {}, tmp_path / "driver-cache")
    rec = execute(run, ctx)
    folder = str((tmp_path / "driver-cache" / "torch").absolute())
    assert rec.stdout.decode().strip() == folder == rec.env["CUDA_CACHE_PATH"]
    assert rec.cache is not None
    driver = rec.cache["driver_cache"]
    assert driver["kind"] == "torch" and "precompiled SASS" in driver["why"]
    assert driver["before"] == driver["after"] == {"files": 0, "bytes": 0}
    assert rec.cache["proof"] == "driver cache empty"
    cpu = execute(RunDef(experiment="t", program="torch", device="cpu", mode="mm", shape=(8, 8),
                         reps=3), ctx)
    assert cpu.cache is None and "CUDA_CACHE_PATH" not in cpu.env  # no GPU, no driver cache


@pytest.mark.parametrize("env", [("CUDA_CACHE_PATH", "EXP"), ("CUDA_CACHE_DISABLE", "1")])
def test_an_experiments_own_driver_cache_is_what_the_record_describes(
        tmp_path: Path, env: tuple[str, str]) -> None:
    """An experiment's env naming its own CUDA_CACHE_PATH (or turning the cache off): the
    record describes that, never our folder the program did not use ('new and empty')."""
    fake = tmp_path / "fake-python"
    fake.write_text(f"#!{sys.executable}\nimport os\n"
                    "print(os.environ.get('CUDA_CACHE_PATH', 'unset'))\n")
    fake.chmod(0o755)
    theirs = tmp_path / "their-jit"
    theirs.mkdir()
    (theirs / "k.bin").write_bytes(b"x" * 10)
    value = str(theirs) if env[1] == "EXP" else env[1]
    run = RunDef(experiment="t", program="torch", device="cuda", mode="mm", shape=(8, 8),
                 reps=3, env=((env[0], value),))
    ctx = RunContext(PROJECT, str(fake), tmp_path / "scratch", {}, tmp_path / "driver-cache")
    rec = execute(run, ctx)
    assert rec.cache is not None
    driver = rec.cache["driver_cache"]
    assert not (tmp_path / "driver-cache").exists()  # ours was never made
    if env[0] == "CUDA_CACHE_PATH":
        assert rec.stdout.decode().strip() == str(theirs)
        assert driver["path"] == str(theirs) and driver["before"]["files"] == 1
        assert rec.cache["proof"].startswith("driver cache from the experiment env held 1 "
                                             "files")
        assert (theirs / "k.bin").exists()  # theirs: never emptied
    else:
        assert rec.stdout.decode().strip() == "unset"
        assert rec.cache["proof"].startswith("driver cache disabled (experiment env)")
    assert "new and empty" not in rec.cache["proof"]


def test_store_proofs_on_the_real_database(tmp_path: Path) -> None:
    from orchestrator.programs.burn import cubecl_proof as proof
    here = tmp_path / "environment"
    here.mkdir()
    for name in ("default.db", "default.db-wal"):
        (here / name).write_bytes((FIXTURE / name).read_bytes())
    seen = proof.look(here, "cuda", (1024, 1024), {})
    assert (seen["winner"], seen["measured"], seen["candidates"]) == (WINNER, 20, 33)
    assert seen["sessions"] == 1 and seen["entries"] == 4
    assert proof.warm_proof(seen, seen) == "warm, no autotune"
    assert proof.look(here, "cuda", (1024, 1024), {"CUBECL_AUTOTUNE_LEVEL": "minimal"})[
        "entry_digest"] is None  # minimal anchors 1024 at 1526: another key
    assert proof.look(here, "cuda", (1024, 1024), {"CUBECL_ENVIRONMENT": "other"})[
        "exists"] is False
    with sqlite3.connect(here / "default.db") as db:  # a new session row: another tune stored
        db.execute("INSERT INTO entries SELECT namespace, CAST(key || x'01' AS BLOB), value, "
                   "origin FROM entries WHERE namespace = 'records/v1/sessions'")
    after = proof.look(here, "cuda", (1024, 1024), {})
    assert proof.wrote(seen, after)
    assert proof.warm_proof(seen, after).startswith("warm matmul entry, but 1 new session")
    assert [proof.anchor(1024, level) for level in range(4)] == [1526, 1024, 1478, 1024]
    assert proof.cold_proof({"exists": False}, after) == "cold, autotuned"
    assert os.path.exists(here / "default.db")


def test_users_driver_cache_settings_never_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The orchestrator's CUDA_CACHE_* stay out; an experiment's own is kept and flagged."""
    from orchestrator.run.cache_record import env_overrides
    from orchestrator.run.runner import PASS_THROUGH, program_env
    monkeypatch.setenv("CUDA_CACHE_PATH", "/users/own")
    monkeypatch.setenv("CUDA_CACHE_DISABLE", "1")
    assert not {"CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE", "CUDA_CACHE_MAXSIZE"} & set(PASS_THROUGH)
    run = RunDef(experiment="t", program="burn", device="cuda", mode="mm", shape=(8, 8),
                 reps=3, build="b", crate="exec-gpu")
    assert not {"CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE"} & set(program_env(run))
    asked = RunDef(experiment="t", program="burn", device="cuda", mode="mm", shape=(8, 8),
                   reps=3, build="b", crate="exec-gpu",
                   env=(("CUBECL_AUTOTUNE_CACHE", "0"), ("CUDA_CACHE_DISABLE", "1"),
                        ("OTHER", "x")))
    assert program_env(asked)["CUDA_CACHE_DISABLE"] == "1"
    assert env_overrides(asked) == {"CUBECL_AUTOTUNE_CACHE": "0", "CUDA_CACHE_DISABLE": "1"}


def test_report_shows_choices_spread_priming_and_settings(
        tmp_path: Path, project_copy: tuple[Path, dict],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.data import dataset
    from orchestrator.report.writer import write
    root, env = project_copy
    runs = _sweep(root, env, tmp_path, {
        "methods": {"mode": "mm", "cache": ["warm"], "targets": [GPU],
                    "env": {"CUBECL_AUTOTUNE_CACHE": "1"}},
        "first-call": {"mode": "mm", "cache": ["cold"], "processes": 2, "repeat": 3,
                       "targets": [GPU]}}, monkeypatch)
    data = dataset.load(root / "results")
    fig = data.figures
    columns = fig.columns.tolist()  # new columns come after every public one (line_no last)
    mine = [columns.index(c) for c in ("autotune_kernel", "autotune_median_s", "cache_proof")]
    assert mine == sorted(mine) and mine[0] > columns.index("line_no")
    burn = fig[fig["method"] == "first_call_after_sync"]
    assert set(burn["autotune_kernel"]) == {WINNER}
    assert burn["autotune_median_s"].astype(float).tolist() == pytest.approx([MEDIAN] * 8)
    cold = burn[(burn["cache"] == "cold") & (burn["role"] == "measure")]
    afters = sorted(cold["value_s"].astype(float))
    assert len(afters) == 3 and all(26 < v < 27 for v in afters)
    assert set(burn[burn["role"] == "priming"]["cache"]) == {"cold"}
    out = tmp_path / "report"
    write(data, out)
    md = (out / "report.md").read_text()
    first_call = md.split("### First call across processes")[1].split("###")[0]
    assert "| autotune kernel | autotune median | cache proof |" in first_call
    assert f"| {WINNER} | 37.344µs | cold, autotuned; driver cache new and empty |" in first_call
    spread = md.split("### Cold first call over repeats")[1].split("###")[0]
    low, mid, high = (f"{v:.3f}s" for v in afters)
    assert "| first-call | burn | cuda | 3 |" in spread and f"{low} / {mid} / {high}" in spread
    priming = md.split("### Priming runs")[1].split("###")[0]
    assert "| methods | priming | burn cuda | cold (no cubecl cache) |" in priming
    assert ("cache settings in the runs' environment change what cold and warm mean: "
            "CUBECL_AUTOTUNE_CACHE=1 (experiments methods)") in md
    assert len(runs) == 8


def test_warm_after_a_cold_series_primes_the_driver_cache(
        tmp_path: Path, project_copy: tuple[Path, dict],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """cubecl's cache left by a cold series is warm, the shared driver cache is not: a priming
    run labelled warm fills it, so the measured warm run finds both caches warm."""
    root, env = project_copy
    runs = _sweep(root, env, tmp_path, {
        "first-call": {"mode": "mm", "cache": ["cold"], "targets": [GPU]},
        "methods": {"mode": "mm", "cache": ["warm"], "targets": [GPU]}}, monkeypatch)
    prime = runs["methods", "priming", "warm", "1", "1"]
    assert prime["cache"]["proof"] == "warm, no autotune; driver cache empty"
    warm = runs["methods", "measure", "warm", "1", "1"]
    assert warm["cache"]["proof"] == "warm, no autotune; driver cache held 1 files (warm)"
    assert len(runs) == 3
