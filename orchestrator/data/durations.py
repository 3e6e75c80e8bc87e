"""Durations as the benchmark programs print them.

Every duration in the programs' output uses Rust's `{:.3?}` form for `std::time::Duration`
(`791.000ns`, `28.166µs`, `1.118ms`, `3.600s`). This module reads that form back into seconds
(`parse_duration`) and writes it (`format_duration`, `format_nanos`) exactly as Rust does, so the
Python benchmark program and the reports print the same strings as the Rust crates.
"""

from __future__ import annotations

import math
import re

# Decimal exponent per unit. Appending it to the printed digits and calling float() once gives
# the correctly rounded double of the printed value (651.666µs -> 651.666e-6 exactly), which
# multiplying by 1e-6 would not always do.
UNIT_EXPONENTS: dict[str, str] = {
    "s": "",
    "ms": "e-3",
    "µs": "e-6",  # U+00B5 MICRO SIGN: what Rust prints
    "μs": "e-6",  # U+03BC GREEK SMALL LETTER MU: what people type
    "us": "e-6",
    "ns": "e-9",
}

# One optional space between number and unit: Rust never prints one, people sometimes do.
_DURATION = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+) ?(s|ms|µs|μs|us|ns)", re.ASCII)

_NANOS_PER_SEC = 1_000_000_000
_NANOS_PER_MILLI = 1_000_000
_NANOS_PER_MICRO = 1_000
_PRECISION = 3  # the `.3` of `{:.3?}`


def parse_duration(text: str) -> float:
    """Return the seconds in a printed duration such as `28.166µs`; ValueError if malformed."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a duration: {text!r}")
    number, unit = match.groups()
    return float(number + UNIT_EXPONENTS[unit])


def format_duration(seconds: float) -> str:
    """Format seconds as Rust's `{:.3?}` formats the equal `Duration` (integer nanoseconds)."""
    nanos = seconds * 1e9  # may overflow to inf for an absurd (but finite) seconds
    if not math.isfinite(nanos) or seconds < 0:
        raise ValueError(f"not a duration: {seconds!r} s")
    return format_nanos(round(nanos))


def format_nanos(nanos: int) -> str:
    """Format a whole number of nanoseconds exactly as Rust's `{:.3?}` for `Duration`."""
    if nanos < 0:
        raise ValueError(f"not a duration: {nanos} ns")
    secs, sub = divmod(nanos, _NANOS_PER_SEC)
    # Same unit choice as `impl Debug for Duration`: whole seconds first, then the sub-second
    # nanoseconds alone decide between ms, µs and ns.
    if secs > 0:
        return _fmt_decimal(secs, sub, _NANOS_PER_SEC // 10, "s")
    if sub >= _NANOS_PER_MILLI:
        return _fmt_decimal(sub // _NANOS_PER_MILLI, sub % _NANOS_PER_MILLI,
                            _NANOS_PER_MILLI // 10, "ms")
    if sub >= _NANOS_PER_MICRO:
        return _fmt_decimal(sub // _NANOS_PER_MICRO, sub % _NANOS_PER_MICRO,
                            _NANOS_PER_MICRO // 10, "µs")
    return _fmt_decimal(sub, 0, 1, "ns")


def _fmt_decimal(integer: int, fraction: int, divisor: int, unit: str) -> str:
    """Port of Rust's `fmt_decimal` at precision 3.

    Digits are taken one at a time from `fraction` (`divisor` is the place value of the next
    digit). What is left after three digits rounds to nearest, ties to even: Rust's rule since
    rust-lang/rust#147499 (older toolchains rounded ties up; rustc 1.95 here rounds to even).
    A carry out of `999` goes into the integer part, which is why Rust prints `1000.000ms`
    rather than `1.000s`.
    """
    digits = [0] * _PRECISION
    pos = 0
    while fraction > 0 and pos < _PRECISION:
        digits[pos] = fraction // divisor
        fraction %= divisor
        divisor //= 10
        pos += 1
    half = divisor * 5
    if fraction > half or (fraction == half > 0 and digits[pos - 1] % 2 == 1):
        integer += _round_up(digits, pos)
    return f"{integer}.{''.join(map(str, digits))}{unit}"


def _round_up(digits: list[int], pos: int) -> int:
    """Add one to the last written digit in place; return the carry out of the first digit."""
    while pos > 0:
        pos -= 1
        if digits[pos] < 9:
            digits[pos] += 1
            return 0
        digits[pos] = 0
    return 1
