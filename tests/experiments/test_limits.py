"""Shapes and environment names: what a program can be given, within the limits."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from orchestrator.experiments import limits


@pytest.mark.parametrize(("value", "shape"), [([8, 4], (8, 4)), ("64x32", (64, 32)),
                                              ((1, limits.MAX_DIM), (1, limits.MAX_DIM))])
def test_shapes(value: object, shape: tuple[int, int]) -> None:
    assert limits.shape(value) == shape


@pytest.mark.parametrize("value", [[8.7, 8], [True, 8], ["8", "8"], "١x8", "1_000x8", "8X8",
                                   [0, 8], [8], "8x8x8", [limits.MAX_DIM + 1, 1],
                                   [2**15, 2**15 + 1]])
def test_shapes_refused(value: object) -> None:
    with pytest.raises(ValueError, match="shape"):
        limits.shape(value)


@pytest.mark.parametrize("env", [{"": "x"}, {"A=B": "x"}, {"A\0": "x"}, {"A": "x\0"},
                                 {"A": 1}, {"A": True},
                                 {"A": "y" * (limits.MAX_ENV_VALUE_BYTES + 1)}])
def test_env_no_program_can_take(env: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(limits.Env).validate_python(env)
    assert TypeAdapter(limits.Env).validate_python({"A": "=x y"}) == {"A": "=x y"}
