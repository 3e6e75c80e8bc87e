"""The records: one classify decides whether a run failed; enums keep the stored strings."""

from __future__ import annotations

import json

import pytest

from orchestrator.data.parse import parse_text
from orchestrator.records import (
    CacheAction,
    CacheState,
    Outcome,
    Role,
    RunDef,
    RunRecord,
    Status,
    classify,
)

GOOD = b"flex 8x8 matmul with sync, 3 runs: min 1.000us median 2.000us\n"


def _rec(mode: str = "mm", stdout: bytes = GOOD, code: int | None = 0, stderr: bytes = b"",
         artifacts: dict[str, bytes] | None = None, **outcome: object) -> RunRecord:
    run = RunDef(experiment="t", program="burn", device="flex", mode=mode, shape=(8, 8), reps=3,
                 build="b", crate="exec-cpu", timeout_s=5)
    out = Outcome(code, bool(outcome.get("timed_out")), 0.1, stdout, stderr,
                  outcome.get("truncated_at"))  # type: ignore[arg-type]
    return RunRecord(run=run, stdout=stdout, stderr=stderr, artifacts=artifacts or {},
                     outcome=out, returncode=code)


@pytest.mark.parametrize(("rec", "reason"), [
    (_rec(timed_out=True), "timed out after 5 s (process group killed)"),
    (_rec(code=None), "did not start"),
    (_rec(code=-11), "killed by signal SIGSEGV"),
    (_rec(code=3, stderr=b"first\nboom\n"), "exited with status 3: boom"),
    (_rec(truncated_at=1000), "output cut at 1000 bytes (the rest is lost)"),
    (_rec(stdout=b" \n"), "printed nothing"),
    (_rec(stdout=GOOD.rstrip()), "output ends in a partial line"),
    # an accuracy run with empty stdout fails like any other (the sweep always did so)
    (_rec(mode="accuracy", stdout=b""), "printed nothing"),
    (_rec(mode="accuracy", stdout=b"torch cpu 8x8 matmul accuracy: wrote x\n"),
     "wrote no .npy arrays"),
])
def test_every_process_fault_is_one_failed_reason(rec: RunRecord, reason: str) -> None:
    assert classify(rec, parse_text(rec.stdout.decode())) == (Status.FAILED, reason)


def test_figures_are_checked_only_once_parsed() -> None:
    rec = _rec(stdout=b"no figure here\n", stderr=b"why: no device\n")
    assert classify(rec) == (Status.OK, "")  # the runner's view: the process was fine
    assert classify(rec, parse_text("no figure here\n")) == (
        Status.FAILED, "printed no figures (1 unknown lines): why: no device")
    assert classify(_rec(), parse_text(GOOD.decode())) == (Status.OK, "")
    accuracy = _rec(mode="accuracy", stdout=b"x\n", artifacts={"a.npy": b""})
    assert classify(accuracy, parse_text("x\n")) == (Status.OK, "")  # arrays, not figures


def test_a_record_without_a_process_keeps_its_decision() -> None:
    run = RunDef(experiment="t", program="torch", device="cuda", mode="mm", shape=(8, 8), reps=1)
    skipped = RunRecord(run=run, status=Status.SKIPPED, reason="needs an NVIDIA GPU")
    assert classify(skipped, None) == (Status.SKIPPED, "needs an NVIDIA GPU")


def test_enums_store_and_hash_as_their_old_strings() -> None:
    assert [str(s) for s in Status] == ["ok", "failed", "skipped"]
    assert [str(r) for r in Role] == ["measure", "priming", "profile"]
    plain = {"cache": "none", "cache_action": "none"}
    assert json.dumps({"cache": CacheState.NONE, "cache_action": CacheAction.NONE}) == \
        json.dumps(plain)
    assert (CacheState.NONE.column, CacheState.COLD.column) == ("", "cold")
    assert CacheState.of(None) is CacheState.of("") is CacheState.NONE
    run = RunDef(experiment="t", program="burn", device="cuda", mode="mm", shape=(8, 8), reps=1,
                 cache=CacheState.COLD, cache_action=CacheAction.DELETE)
    again = RunDef.from_definition(json.loads(json.dumps(run.definition())))
    assert again == run and again.run_id == run.run_id and again.cache is CacheState.COLD


PANIC_NOW = (b"thread 'main' panicked at bench-core/src/bench.rs:120:9:\n"
             b"shapes differ: [8, 8] and [9, 9]\n"
             b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")


@pytest.mark.parametrize(("stderr", "why"), [
    (PANIC_NOW, "thread 'main' panicked at bench-core/src/bench.rs:120:9: shapes differ: "
                "[8, 8] and [9, 9]"),
    # older Rust: the message on the panic line; a backtrace after it
    (b"thread '<unnamed>' panicked at 'no device', src/main.rs:3:5\nstack backtrace:\n" +
     b"   0: std::panicking::begin_panic\n" * 200, "thread '<unnamed>' panicked at 'no device', "
     "src/main.rs:3:5"),
    (b"warning: slow\nfatal: out of memory\n", "fatal: out of memory"),
    # a worker thread's panic is the cause of main's that follows it
    (b"thread '<unnamed>' panicked at src/a.rs:1:1:\nindex out of bounds\n"
     b"thread 'main' panicked at src/main.rs:9:9:\ncalled `Result::unwrap()` on an `Err`\n",
     "thread '<unnamed>' panicked at src/a.rs:1:1: index out of bounds"),
    (b"terminate called after throwing an instance of 'c10::Error'\n  what():  CUDA error: "
     b"out of memory\nException raised from x at y.cpp:1\nframe #0: z + 0x1\n",
     "what():  CUDA error: out of memory"),
    (b"", ""),
])
def test_the_reason_quotes_a_panic_not_the_backtrace_hint(stderr: bytes, why: str) -> None:
    from orchestrator.records import stderr_reason

    assert stderr_reason(stderr) == why
    status, reason = classify(_rec(code=-6, stderr=stderr))
    assert (status, reason) == (Status.FAILED, "killed by signal SIGABRT" + (f": {why}" if why
                                                                             else ""))


def test_a_cut_stderr_alone_does_not_fail_a_complete_run() -> None:
    rec = _rec(stderr=b"e" * 100)
    assert rec.outcome is not None
    rec.outcome.stderr_truncated_at = 100
    assert classify(rec, parse_text(GOOD.decode())) == (Status.OK, "")
    rec.outcome.over_cap, rec.outcome.returncode = True, -9  # killed by us while printing
    assert classify(rec)[1].startswith("output cut at 100 bytes (the rest is lost): still "
                                       "printing at several times that, process group killed")


def test_refused_arrays_fail_the_run() -> None:
    rec = _rec(mode="accuracy", stdout=b"x\n", artifacts={"b.npy": b""})
    rec.refused = "array a.npy is 3.0 GiB, over the 64.5 KiB a 8x8 run's arrays may take"
    assert classify(rec, parse_text("x\n")) == (Status.FAILED, rec.refused)
