"""How big an experiments file, and what it asks for, may be; the strict field types.

A small file must not make big work: an alias bomb expands to gigabytes, `processes:
10000000000000000000` plans forever and then overflows SQLite's integers. Every limit lives
here, checked where the input enters (the YAML loader, the pydantic fields, the plan), and each
refusal says which limit. The maxima are far above anything the chapter asks for; the JSON
Schema carries them (`maximum`), so an editor says it too.

The field types are strict: YAML's `8.7`, `true` or `"3"` are not counts (pydantic would make
them 8, 1 and 3), and what reaches a program's argv or environment can start a program.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field, Strict, WithJsonSchema

# the YAML loader (yamlsource)
MAX_FILE_BYTES = 2**20  # the chapter's file is 5 KiB
MAX_DEPTH = 32  # nesting of mappings and lists, aliases followed; the schema needs 6
MAX_VALUES = 100_000  # values built, each alias expanded again: an alias bomb stops here

# counts and sizes (config)
MAX_DIM = 2**20  # one side of a matrix
MAX_ELEMENTS = 2**30  # M x N: 4 GiB of float32 per matrix
MAX_REPS = 100_000
MAX_TIMED_RUNS = 10_000
MAX_PROCESSES = 1_000
MAX_REPEAT = 1_000
MAX_THREADS = 4_096
MAX_TIMEOUT_S = 86_400.0  # a day per run
MAX_ENERGY_S = 3_600.0
MAX_WAIT_S = 86_400.0
MAX_LOAD = 100_000.0

# Linux's MAX_ARG_STRLEN (32 pages) holds name=value and its NUL; a name gets 64 bytes of it
MAX_ENV_VALUE_BYTES = 32 * 4096 - 64

# the plan (plan)
MAX_RUNS = 100_000  # runs of one sweep; the chapter's sweep has a few hundred

StrictInt = Annotated[int, Strict()]  # not 8.7 -> 8, true -> 1 or "3" -> 3
StrictBool = Annotated[bool, Strict()]  # not 1 or "yes" (YAML's bare yes is a bool already)
# a whole number of seconds is fine (600), a bool or a string is not, nor .inf or .nan
Seconds = Annotated[float, Strict(), Field(allow_inf_nan=False)]


def _env_name(name: str) -> str:
    """What execve takes as a variable name: not empty, no '=', no NUL."""
    if not name or "=" in name or "\0" in name:
        raise ValueError(f"environment variable name {name!r} cannot be used (a name is not "
                         "empty and has no '=' or NUL)")
    return name


def _env_value(value: str) -> str:
    if "\0" in value:
        raise ValueError(f"environment value {value!r} contains a NUL byte, which no program "
                         "can be given")
    size = len(value.encode("utf-8", "surrogateescape"))
    if size > MAX_ENV_VALUE_BYTES:
        raise ValueError(f"environment value of {size} bytes: a program can be given at most "
                         f"{MAX_ENV_VALUE_BYTES} (Linux's limit on one variable, name=value)")
    return value


def _env_read(env: dict[str, str]) -> dict[str, str]:
    """A value the orchestrator itself reads (a program's `env_values`: JAX's cache rule) is
    checked here, like every other key, not where a sweep would stop on it."""
    from orchestrator import programs  # the registry, which a test may extend
    parsers = programs.env_values()
    for name, value in env.items():
        if name in parsers:
            try:
                parsers[name](value)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
    return env


EnvName = Annotated[str, AfterValidator(_env_name)]
EnvValue = Annotated[str, Strict(), AfterValidator(_env_value)]
Env = Annotated[dict[EnvName, EnvValue], AfterValidator(_env_read)]

_SHAPE_TEXT = re.compile(r"([0-9]+)x([0-9]+)")  # ASCII digits: not '١x8' or '1_000x8'


def shape(value: Any) -> tuple[int, int]:
    """[M, N] of whole numbers or 'MxN', each side and their product within the limits."""
    dims: list[Any] = []
    if isinstance(value, str) and (match := _SHAPE_TEXT.fullmatch(value)):
        dims = [int(match[1]), int(match[2])]
    elif isinstance(value, list | tuple) and len(value) == 2:
        dims = list(value)
    if len(dims) != 2 or any(type(d) is not int or d <= 0 for d in dims):
        raise ValueError(f"expected a shape [M, N] or 'MxN' with positive sizes, got {value!r}")
    m, n = dims
    if max(m, n) > MAX_DIM or m * n > MAX_ELEMENTS:
        raise ValueError(f"shape {m}x{n} is larger than the limit: each side at most {MAX_DIM}, "
                         f"M x N at most {MAX_ELEMENTS}")
    return (m, n)


_SIDE = {"type": "integer", "minimum": 1, "maximum": MAX_DIM}
Shape = Annotated[tuple[int, int], BeforeValidator(shape), WithJsonSchema({"anyOf": [
    {"type": "array", "prefixItems": [_SIDE, _SIDE], "minItems": 2, "maxItems": 2},
    {"type": "string", "pattern": "^[0-9]+x[0-9]+$"}]})]
# the schema says the limit; the message for 0 stays `sweep`'s own ("≥ 1 or 'auto'")
ThreadCount = Annotated[int, Strict(), WithJsonSchema(
    {"type": "integer", "minimum": 1, "maximum": MAX_THREADS})]
SHAPE_HELP = f"[M, N] or 'MxN'; each side at most {MAX_DIM}, M x N at most {MAX_ELEMENTS}"
