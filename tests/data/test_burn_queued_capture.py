"""burn's queued proof line, its CUDA backend header, on the contract.

`WRITTEN` below is written by hand after docs/LINES.md and bench-core's own unit tests
(bench_rust/bench-core/tests/core.rs, the same strings); `test_a_real_h200_capture` checks the
same things on the exec-gpu binary's real stdout captured on the H200 on 2026-12-02
(tests/data/h200/2026-12-02/burn-*.out: 20 of 20 at 1024², 0 of 20 at 256² and with
CUDA_LAUNCH_BLOCKING=1); `test_a_named_capture` checks a new one that scripts/h200/burn.sh names
in `BURN_CUDA_CAPTURE` (skipped, and said so, without it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.programs.burn import backend
from orchestrator.report import writer
from orchestrator.report.checks import Thresholds

# written per docs/LINES.md (the real captures are below)
Q = "cuda 1024x1024 matmul device time (profile_with flush, queued)"
WRITTEN = "\n".join((
    "burn 0.22.1, features [default, std, flex, simd, rayon, cuda, cuda-nvrtc], rayon threads 16",
    "burn precision unknown (cubecl's autotune picks the kernel; cubecl enables TF32 tensor "
    "cores on sm >= 80)",
    "burn backend cubecl-cuda 0.11.3, compiler nvrtc (CUDA C++ compiled at run time; "
    "cubecl-llvm patched out: no LLVM backend)",
    "cuda: device init 213.000ms",
    "cuda 1024x1024 matmul device time (profile_with flush), 3 runs: min 98.272µs median 100.768µs",
    f"{Q}, 3 runs: min 37.344µs median 37.632µs",
    f"# samples {Q}: 3.7632e-05 3.7344e-05 3.8e-05",
    f"{Q}: start event waited in 2 of 3 runs", ""))


def _check(text: str) -> None:
    parsed = parse_text(text)
    assert not parsed.unknown, parsed.unknown
    proof = [f for f in parsed.figures if f.stat == "queued_waited"]
    assert len(proof) == 1
    (p,) = proof
    assert (p.framework, p.method, p.label) == ("burn", "device_time_queued", "cuda")
    assert 0 <= p.value <= p.runs
    queued = {f.stat for f in parsed.figures if f.method == "device_time_queued"}
    assert {"min", "median", "queued_waited"} <= queued
    heads = [h for h in parsed.headers if h.kind == "burn_backend"]
    assert len(heads) == 1 and heads[0].facts["backend"] == "cubecl-cuda 0.11.3"
    assert heads[0].facts["compiler"] == "nvrtc"
    assert backend(parsed.headers, {}).startswith("cubecl-cuda 0.11.3, compiler nvrtc (")


def test_written_lines_parse_into_the_proof_and_the_backend() -> None:
    _check(WRITTEN)
    proof = next(f for f in parse_text(WRITTEN).figures if f.stat == "queued_waited")
    assert (proof.value, proof.runs) == (2.0, 3)


def test_the_report_header_names_the_backend(tmp_path: Path) -> None:
    log = tmp_path / "burn.log"
    log.write_text(WRITTEN, encoding="utf-8")
    data = dataset.from_parse(parse_text(WRITTEN), log.name)
    lines = writer._source_lines(data, Thresholds())
    assert ("burn CUDA backend: cubecl-cuda 0.11.3, compiler nvrtc (CUDA C++ compiled at run "
            "time; cubecl-llvm patched out: no LLVM backend).") in lines


def test_a_foreign_burn_proof_stays_unknown() -> None:
    bad = parse_text("cuda 8x8 matmul device time (profile_with flush, queued): start event "
                     "waited in 4 of 3 runs\ncuda 8x8 matmul device time (profile_with flush): "
                     "start event waited in 1 of 3 runs\n")
    assert not bad.figures and len(bad.unknown) == 2


CAPTURES = Path(__file__).parent / "h200" / "2026-12-02"
REAL = {"burn-1024.out": 20, "burn-256.out": 0, "burn-1024-blocking.out": 0}


@pytest.mark.parametrize(("name", "waited"), REAL.items())
def test_a_real_h200_capture(name: str, waited: int) -> None:
    text = (CAPTURES / name).read_text(encoding="utf-8")
    _check(text)
    (proof,) = [f for f in parse_text(text).figures if f.stat == "queued_waited"]
    assert (proof.value, proof.runs) == (waited, 20)


@pytest.mark.skipif(not os.environ.get("BURN_CUDA_CAPTURE"),
                    reason="no further capture named: scripts/h200/burn.sh sets "
                           "BURN_CUDA_CAPTURE to each new capture of a burn cuda mm stdout")
def test_a_named_capture() -> None:
    _check(Path(os.environ["BURN_CUDA_CAPTURE"]).read_text(encoding="utf-8"))
