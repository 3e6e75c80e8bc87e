"""accuracy.compare: the reference, bit-for-bit groups, differing inputs, no torch cpu."""

from __future__ import annotations

import io

import numpy as np
import pytest

from orchestrator.data import accuracy
from orchestrator.data.accuracy import Arrays


def chapter_inputs(n: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """a = sin(k), b = cos(k), k = i*n + j, evaluated in f32 (the chapter's inputs)."""
    k = np.arange(n * n, dtype=np.float32).reshape(n, n)
    return np.sin(k), np.cos(k)


def reversed_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in f32, the k terms summed from the last: other rounding, same maths."""
    c = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for i in reversed(range(a.shape[1])):
        c += np.outer(a[:, i], b[i, :]).astype(np.float32)
    return c


@pytest.fixture(scope="module")
def arrays() -> dict[str, Arrays]:
    a, b = chapter_inputs(32)
    burn = reversed_sum(a, b)
    a_other = a.copy()
    a_other[1, 1] += np.float32(1e-3)  # e.g. a sin() of another libm
    return {
        "torch cpu": Arrays("torch cpu", "r1", a, b, a @ b),
        "torch cuda": Arrays("torch cuda", "r2", a, b, (a @ b).copy()),
        "burn flex(template)": Arrays("burn flex(template)", "r3", a, b, burn),
        "burn flex": Arrays("burn flex", "r4", a, b, burn.copy()),
        "burn cuda": Arrays("burn cuda", "r5", a_other, b, a_other @ b),
    }


def test_reference_is_the_f64_product_of_the_builds_own_inputs(arrays: dict[str, Arrays]) -> None:
    (comp,) = accuracy.compare([arrays["torch cpu"]])
    e = arrays["torch cpu"]
    ref = e.a.astype(np.float64) @ e.b.astype(np.float64)
    assert comp.max_err_f64_ref == float(np.max(np.abs(e.c - ref)))
    assert comp.max_abs_ref == float(np.max(np.abs(ref)))
    assert 0 < comp.max_err_f64_ref < 1e-4 * comp.max_abs_ref  # f32 rounding, no more
    assert comp.max_diff_torch_cpu == 0.0
    assert comp.inputs_match_torch_cpu is True
    assert comp.shape == "32x32"


def test_bitwise_groups(arrays: dict[str, Arrays]) -> None:
    comps = {c.name: c for c in accuracy.compare(list(arrays.values()))}
    assert comps["torch cpu"].bitwise_group == comps["torch cuda"].bitwise_group == 0
    assert comps["burn flex(template)"].bitwise_group == comps["burn flex"].bitwise_group == 1
    assert comps["burn cuda"].bitwise_group == 2
    assert comps["burn flex"].max_diff_torch_cpu > 0  # the summation order shows


def test_differing_inputs_are_reported_apart(arrays: dict[str, Arrays]) -> None:
    comps = {c.name: c for c in accuracy.compare(list(arrays.values()))}
    assert comps["burn cuda"].inputs_match_torch_cpu is False
    assert comps["burn flex"].inputs_match_torch_cpu is True
    # Against its own inputs burn cuda is as accurate as any build.
    assert comps["burn cuda"].max_err_f64_ref < 1e-4


def test_without_torch_cpu_there_is_no_cross_build_figure(arrays: dict[str, Arrays]) -> None:
    comps = accuracy.compare([arrays["burn flex"], arrays["burn cuda"]])
    assert [c.max_diff_torch_cpu for c in comps] == [None, None]
    assert [c.inputs_match_torch_cpu for c in comps] == [None, None]
    assert [c.bitwise_group for c in comps] == [0, 1]
    assert all(c.max_err_f64_ref > 0 for c in comps)


def test_chapter_inputs_give_the_chapter_max_ref() -> None:
    a, b = chapter_inputs()
    (comp,) = accuracy.compare([Arrays("torch cpu", "r", a, b, a @ b)])
    assert f"{comp.max_abs_ref:.4g}" == "1.095"
    assert comp.max_err_f64_ref < 1e-5  # the chapter: about 2e-6


def test_different_shapes_are_never_bitwise_equal() -> None:
    a, b = chapter_inputs(4)
    small = Arrays("torch cpu", "r1", a, b, a @ b)
    a8, b8 = chapter_inputs(8)
    big = Arrays("burn flex", "r2", a8, b8, a8 @ b8)
    comps = accuracy.compare([small, big])
    assert comps[0].bitwise_group != comps[1].bitwise_group
    assert comps[1].max_diff_torch_cpu is None  # no torch cpu of that shape


def test_build_name_from_the_programs_line() -> None:
    out = "burn 0.22.1, features [std]\nflex(template) 256x256 matmul accuracy: wrote /tmp/x\n"
    assert accuracy.build_name("burn", out, "flex") == "burn flex(template)"
    assert accuracy.build_name("torch", "", "cpu") == "torch cpu"


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _header(shape: tuple[int, ...], dtype: str = "<f4") -> bytes:
    """An .npy header alone, as a program that writes a huge array starts its file."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False,
                                                   "shape": shape})
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "head", "size", "words"), [
    ("c.npy", _header((100_000, 100_000)), 2**30, "c.npy: a 100000x100000 array, not the 8x8 "
     "of this 8x16 run"),
    ("b.npy", _header((8, 16)), 640, "b.npy: a 8x16 array, not the 16x8 of this 8x16 run"),
    ("a.npy", _header((8, 16)), 640, ""),  # 128 of header, 512 of array: an a of 8x16
    ("c.npy", _header((64,)), 384, "c.npy: a 1-D float32 array, not a 2-D float matrix"),
    ("c.npy", _header((8, 8), "|O"), 384, "c.npy: a 2-D object array, not a 2-D float matrix"),
    ("c.npy", b"\x93NUMPY stand-in", 15, "c.npy: .npy format 32.115, not an array numpy saves"),
    ("c.npy", b"PK\x03\x04", 4, "c.npy: not an .npy array"),
    ("c.npy", b"", 0, "c.npy: not an .npy array"),
])
def test_npy_headers_are_read_before_the_array(name: str, head: bytes, size: int,
                                               words: str) -> None:
    problem = accuracy.npy_problem(name, head, size, "8x16")
    if not words:  # the right shape; one byte short is the wrong length
        assert problem is None and len(head) == 128
        assert accuracy.npy_problem(name, head, 639, "8x16") == (
            "a.npy: 639 bytes stored, its header says 640")
    else:
        assert problem is not None and problem.startswith(words), problem


def test_arrays_of_the_runs_shape_pass_and_load() -> None:
    for name, shape in (("a.npy", (8, 16)), ("b.npy", (16, 8)), ("c.npy", (8, 8))):
        data = _npy(np.zeros(shape, dtype=np.float32))
        assert accuracy.npy_problem(name, data[:accuracy.NPY_HEAD], len(data), "8x16") is None
        assert accuracy.load_npy(data).shape == shape
    huge = _header((9000, 9000), "<f8")  # no shape known: the cap alone
    assert accuracy.npy_problem("c.npy", huge, 0, None) == (
        f"c.npy: {9000 * 9000 * 8} bytes of array, over the {accuracy.ARRAY_CAP} read at most")
