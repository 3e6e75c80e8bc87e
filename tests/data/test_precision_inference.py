"""Each build's arithmetic, inferred from the committed H200 accuracy arrays and printed in logs.

docs/results/h200-2026-11-30 was made before the precision header lines: every figure there is
inferred.
burn cuda (cubecl's autotune) computes with TF32 tensor cores; torch cuda ran with TF32 off.
"""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from orchestrator.data import accuracy, dataset, precision
from orchestrator.data.parse import parse_text

from ..conftest import PROJECT

H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"
LOGS = PROJECT / "tests" / "data" / "h200"
RUNS = {"torch cpu": "57076cc84be1d7c9", "torch cuda": "0e8969a400be835e",
        "burn flex": "2d5a97f87f5eb345", "burn cuda": "6de1ebf79a34c59a"}


def _arrays(run_id: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    db = sqlite3.connect(f"file:{H200 / 'results.sqlite'}?mode=ro&immutable=1", uri=True)
    try:
        found = {name: np.load(io.BytesIO(data)) for name, data in db.execute(
            "SELECT name, data FROM artifacts WHERE run_id=?", (run_id,))}
    finally:
        db.close()
    return found["a.npy"], found["b.npy"], found["c.npy"]


@pytest.fixture(scope="module")
def inferred() -> dict[str, accuracy.Inference]:
    return {name: accuracy.infer_precision(*_arrays(rid)) for name, rid in RUNS.items()}


def test_burn_cuda_is_tf32_with_the_evidence(inferred: dict[str, accuracy.Inference]) -> None:
    burn = inferred["burn cuda"]
    assert burn.precision == "tf32"
    assert f"{burn.max_err:.3e}" == "7.720e-03"  # what the stored arrays show
    assert f"{burn.tf32_err:.3e}" == "7.721e-03"  # TF32 rounding of the inputs alone
    assert burn.from_tf32 < 2e-6  # c is the TF32 product, to f32 rounding
    assert burn.evidence() == "max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3"


@pytest.mark.parametrize("name", ["torch cpu", "torch cuda", "burn flex"])
def test_the_others_are_fp32(inferred: dict[str, accuracy.Inference], name: str) -> None:
    found = inferred[name]
    assert found.precision == "fp32"
    assert found.max_err < 4e-6 < 1e-3 < found.tf32_err
    if name == "torch cuda":
        assert f"{found.max_err:.3e}" == "3.787e-06"


def test_round_to_nearest_even_is_what_the_gpu_did() -> None:
    """Truncation (cut the low 13 bits) and round-half-away miss burn cuda's c by far more than
    f32 rounding; round to nearest even matches it to 1.5e-6."""
    a, b, c = _arrays(RUNS["burn cuda"])
    c64 = c.astype(np.float64)

    def distance(a2: np.ndarray, b2: np.ndarray) -> float:
        return float(np.max(np.abs(c64 - a2.astype(np.float64) @ b2.astype(np.float64))))

    def half_away(x: np.ndarray) -> np.ndarray:
        bits = x.view(np.uint32).astype(np.uint64)
        return ((bits + 0x1000) >> 13 << 13).astype(np.uint32).view(np.float32)

    nearest = distance(accuracy.round_tf32(a), accuracy.round_tf32(b))
    truncated = distance(accuracy.truncate_tf32(a), accuracy.truncate_tf32(b))
    away = distance(half_away(a), half_away(b))
    assert nearest < 2e-6 and truncated > 1e-2 and away > 5e-4
    assert accuracy.infer_precision(a, b, c, rounding="truncate").precision == ""


def test_tf32_rounding_of_known_values() -> None:
    one_ulp = np.float32(2.0 ** -10)  # TF32's step at 1.0
    x = np.array([1.0, 1.0 + one_ulp / 2, 1.0 + 3 * one_ulp / 2, 1.0 + one_ulp / 2 + 2 ** -20,
                  -1.0 - 1.4 * one_ulp], dtype=np.float32)
    # a tie goes to the even mantissa (1.0 and 1+2ulp), above a tie up, negatives by magnitude
    assert accuracy.round_tf32(x).tolist() == [1.0, 1.0, 1.0 + 2 * one_ulp, 1.0 + one_ulp,
                                               -1.0 - one_ulp]
    assert accuracy.truncate_tf32(x).tolist() == [1.0, 1.0, 1.0 + one_ulp, 1.0,
                                                  -1.0 - one_ulp]


def test_an_error_neither_fp32_nor_tf32_is_not_named() -> None:
    a, b, c = _arrays(RUNS["torch cpu"])
    wrong = c.copy()
    wrong[3, 4] += np.float32(0.05)  # a real bug, not an arithmetic
    found = accuracy.infer_precision(a, b, wrong)
    assert found.precision == "" and "neither" in found.evidence()


def test_the_h200_store_gets_every_inferred_precision() -> None:
    every = dataset.load(H200).figures
    f = every[every["status"] == "ok"]
    by = f[f["shape"] == "1024x1024"].groupby(["framework", "build", "device"], dropna=False)[
        ["precision", "precision_source"]].agg(lambda s: tuple(sorted(set(s))))
    got = {k: tuple(v) for k, v in by.iterrows()}
    # this store ran accuracy at 256² only: its 1024² figures say the shape their label is from
    other = ("inferred at 256x256",)
    assert got[("burn", "cuda", "cuda")] == (("tf32",), other)
    for build in ("template", "default", "x86-v4"):  # every figure of the Flex builds
        assert got[("burn", build, "cpu")] == (("fp32",), other)
    assert got[("torch", "", "cuda")] == (("fp32",), other)
    assert got[("torch", "", "cpu")] == (("fp32",), other)
    own = f[(f["shape"] == "256x256") & (f["precision"] != "")]
    assert not own.empty and set(own["precision_source"]) == {"inferred"}
    mac = every[every["device"].isin(["metal", "mps"])]  # skipped on the H200: nothing known
    assert not mac.empty and set(mac["precision"]) == set(mac["precision_source"]) == {""}
    acc = f[(f["method"] == "accuracy") & (f["method_text"] == "burn cuda")]
    stats = dict(zip(acc["stat"], acc["value_s"], strict=True))
    assert f"{stats['max_err_tf32_inputs']:.3e}" == "7.721e-03"
    assert stats["max_diff_tf32_product"] < 2e-6


def test_printed_headers_win_and_logs_carry_them() -> None:
    parsed = parse_text((LOGS / "torch_cuda_tf32.log").read_text())
    got = {(r["precision"], r["precision_source"])
           for r in precision.of_log(parsed.figures, parsed.headers)}
    assert got == {("tf32", "printed")}
    burn = parse_text((LOGS / "burn_cuda_energy.log").read_text())
    frame = dataset.from_parse(burn, "burn.log").figures  # 'unknown' is not a precision
    assert set(frame["precision"]) == {""} and set(frame["precision_source"]) == {""}
    chapter = dataset.from_parse(parse_text((PROJECT / "tests" / "data" /
                                             "chapter_listings.log").read_text()), "c.log").figures
    assert set(chapter["precision"]) == {""}  # the chapter's logs never said


def test_a_printed_precision_is_kept_over_an_inference(tmp_path: Path) -> None:
    fp32_header = '[{"kind": "torch_precision", "precision": "fp32"}]'
    runs = [{"run_id": "r1", "headers_json": fp32_header,
             "definition_json": '{"experiment": "a", "program": "torch", "device": "cuda", '
                                '"mode": "accuracy", "shape": [8, 8], "reps": 1, '
                                '"features": [], "env": []}'},
            {"run_id": "r2", "headers_json": "[]",
             "definition_json": '{"experiment": "m", "program": "torch", "device": "cuda", '
                                '"mode": "mm", "shape": [8, 8], "reps": 1, '
                                '"features": [], "env": []}'}]
    tf32 = accuracy.Inference("tf32", 1e-2, 1e-2, 1e-6, 1e-6)
    got = precision.assign(runs, {"r1": tf32})
    assert got["r1"] == {"precision": "fp32", "precision_source": "printed"}
    assert got["r2"] == {"precision": "tf32", "precision_source": "inferred"}


def _run(run_id: str, mode: str, shape: list[int]) -> dict[str, str]:
    return {"run_id": run_id, "headers_json": "[]",
            "definition_json": '{"experiment": "e", "program": "burn", "build": "cuda", '
                               f'"device": "cuda", "mode": "{mode}", "shape": {shape}, '
                               '"reps": 1, "features": [], "env": []}'}


def test_the_inference_is_keyed_by_shape() -> None:
    """A 1024² run's label comes from a 1024² accuracy run, not a 256² one."""
    tf32 = accuracy.Inference("tf32", 1e-2, 1e-2, 1e-6, 1e-6)
    fp32 = accuracy.Inference("fp32", 1e-6, 1e-2, 1e-6, 1e-2)
    runs = [_run("acc256", "accuracy", [256, 256]), _run("acc1024", "accuracy", [1024, 1024]),
            _run("mm1024", "mm", [1024, 1024]), _run("mm256", "mm", [256, 256]),
            _run("mm64", "mm", [64, 64])]
    got = precision.assign(runs, {"acc256": fp32, "acc1024": tf32})
    assert got["mm1024"] == {"precision": "tf32", "precision_source": "inferred"}
    assert got["mm256"] == {"precision": "fp32", "precision_source": "inferred"}
    assert got["mm64"] == {"precision": "", "precision_source": ""}  # the shapes disagree
    only_256 = precision.assign(runs[:1] + runs[2:], {"acc256": tf32})
    assert only_256["mm1024"] == {"precision": "tf32", "precision_source": "inferred at 256x256"}
