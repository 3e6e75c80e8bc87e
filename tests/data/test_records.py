"""The records: one classify decides whether a run failed; enums keep the stored strings."""

from __future__ import annotations

import json

import pytest

from orchestrator.data.parse import parse_text
from orchestrator.data.records import (
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
