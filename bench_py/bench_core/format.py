"""Durations as printed (Rust's own ``{:.3?}`` of ``std::time::Duration``), run summaries, and
the two output streams: ``emit`` (a contract line on stdout, docs/LINES.md) and ``note`` (a
diagnostic on stderr). The twin of ``bench-core/src/format.rs``; ``exec_jax.py`` prints through
it too, so both Python programs write the same bytes for the same figures.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

OP = "matmul"

NANOS_PER_SEC = 1_000_000_000
NANOS_PER_MILLI = 1_000_000
NANOS_PER_MICRO = 1_000


def format_duration_ns(nanos: int, precision: int = 3) -> str:
    """Format an integer number of nanoseconds exactly as Rust's ``{:.3?}`` on a ``Duration``.

    Emulates ``core::time``'s ``Debug`` impl (``fmt_decimal``), as in the Rust standard library
    this project builds with (rustc 1.95):

    * unit: ``s`` if the whole seconds are > 0, else ``ms`` if the nanoseconds are >= 1e6, else
      ``µs`` (U+00B5) if >= 1e3, else ``ns``;
    * the integer part in that unit, then up to ``precision`` fractional digits taken from the
      remainder (digit generation stops early when the remainder becomes 0; the missing digits
      print as ``0``);
    * rounding on the remainder that was cut off: more than half rounds up, less than half rounds
      down, and an exact half rounds to even (up only if the last written digit is odd). Older
      Rust releases rounded an exact half up; the values checked against
      ``tests/data/durations.tsv`` are what the installed rustc prints;
    * a carry out of the fractional digits goes into the integer part without changing the unit:
      999_999_500 ns prints ``1000.000ms``, 999_999_500_000 ns prints ``1000.000s``.
    """
    if nanos < 0:
        raise ValueError(f"a duration cannot be negative: {nanos} ns")
    secs, sub = divmod(int(nanos), NANOS_PER_SEC)
    if secs > 0:
        integer, fractional, divisor, unit = secs, sub, NANOS_PER_SEC // 10, "s"
    elif sub >= NANOS_PER_MILLI:
        integer, fractional = divmod(sub, NANOS_PER_MILLI)
        divisor, unit = NANOS_PER_MILLI // 10, "ms"
    elif sub >= NANOS_PER_MICRO:
        integer, fractional = divmod(sub, NANOS_PER_MICRO)
        divisor, unit = NANOS_PER_MICRO // 10, "µs"
    else:
        integer, fractional, divisor, unit = sub, 0, 1, "ns"

    digits = [0] * 9
    pos = 0
    while fractional > 0 and pos < precision:
        digits[pos] = fractional // divisor
        fractional %= divisor
        divisor //= 10
        pos += 1

    if fractional > 0 and fractional >= divisor * 5:
        is_tie = fractional == divisor * 5
        last_is_odd = digits[pos - 1] % 2 == 1 if pos > 0 else integer % 2 == 1
        if not is_tie or last_is_odd:
            carry = True
            rev = pos
            while carry and rev > 0:
                rev -= 1
                if digits[rev] < 9:
                    digits[rev] += 1
                    carry = False
                else:
                    digits[rev] = 0
            if carry:
                integer += 1

    end = min(precision, 9)
    frac_text = "".join(str(d) for d in digits[:end]).ljust(precision, "0")
    return f"{integer}.{frac_text}{unit}" if precision > 0 else f"{integer}{unit}"


def seconds_to_ns(seconds: float) -> int:
    """Seconds as the nearest integer number of nanoseconds."""
    return round(seconds * NANOS_PER_SEC)


def format_duration(seconds: float) -> str:
    """Format seconds as Rust's ``{:.3?}`` (rounded to the nearest nanosecond first)."""
    return format_duration_ns(seconds_to_ns(seconds))


def median(values: Sequence[float]) -> float:
    """The median; for an even count, the mean of the two middle values."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2



def emit(line: str) -> None:
    """A contract line on stdout (docs/LINES.md), flushed so a killed run keeps what it printed."""
    print(line, flush=True)


def note(text: str) -> None:
    """A diagnostic on stderr: never a contract line, never a failure."""
    print(f"note: {text}", file=sys.stderr, flush=True)


def report(
    label: str, shape: str, method: str, samples_s: Sequence[float], show_samples: bool
) -> None:
    """One summary line, and with ``--samples`` its ``# samples`` line (seconds)."""
    emit(
        f"{label} {shape} {OP} {method}, {len(samples_s)} runs: "
        f"min {format_duration(min(samples_s))} median {format_duration(median(samples_s))}"
    )
    if show_samples:
        emit(
            f"# samples {label} {shape} {OP} {method}: "
            + " ".join(repr(float(s)) for s in samples_s)
        )


def ns_to_s(values: Sequence[int]) -> list[float]:
    """Integer nanoseconds (``perf_counter_ns`` differences) as float seconds."""
    return [v / NANOS_PER_SEC for v in values]
