"""Tests of orchestrator.durations: Rust's `{:.3?}` Duration format, both ways."""

from __future__ import annotations

import math

import pytest

from orchestrator.data.durations import format_duration, format_nanos, parse_duration

from ..conftest import PROJECT

DATA = PROJECT / "tests" / "data"

# Printed by rustc 1.95.0 for `format!("{:.3?}", Duration::from_nanos(n))`: unit changes,
# carries into the integer part, and ties (which round to even since rust-lang/rust#147499).
RUST_CASES = [
    (0, "0.000ns"),
    (1, "1.000ns"),
    (791, "791.000ns"),
    (999, "999.000ns"),
    (1000, "1.000µs"),
    (1499, "1.499µs"),
    (10875, "10.875µs"),
    (28166, "28.166µs"),
    (999499, "999.499µs"),
    (999999, "999.999µs"),
    (1000000, "1.000ms"),
    (1000499, "1.000ms"),
    (1000500, "1.000ms"),
    (1001500, "1.002ms"),
    (1118000, "1.118ms"),
    (1999999, "2.000ms"),
    (999000500, "999.000ms"),
    (999001500, "999.002ms"),
    (999999499, "999.999ms"),
    (999999500, "1000.000ms"),
    (999999999, "1000.000ms"),
    (1000000000, "1.000s"),
    (1000500000, "1.000s"),
    (1000500001, "1.001s"),
    (1001500000, "1.002s"),
    (1002500000, "1.002s"),
    (3600000000, "3.600s"),
    (59999999999999, "60000.000s"),
    (9223372036854775807, "9223372036.855s"),
]


@pytest.mark.parametrize(("nanos", "text"), RUST_CASES)
def test_format_nanos_matches_rust(nanos: int, text: str) -> None:
    assert format_nanos(nanos) == text


@pytest.mark.parametrize(("nanos", "text"), RUST_CASES)
def test_format_duration_rounds_seconds_to_nanoseconds(nanos: int, text: str) -> None:
    if nanos < 2**50:  # beyond that a float of seconds no longer holds every nanosecond
        assert format_duration(nanos / 1e9) == text


def test_reference_table_from_rust() -> None:
    table = DATA / "durations.tsv"
    if not table.exists():
        pytest.skip("tests/data/durations.tsv not generated yet")
    rows = [line.split("\t") for line in table.read_text(encoding="utf-8").splitlines() if line]
    assert rows
    wrong = [(n, want, format_nanos(int(n))) for n, want in rows if format_nanos(int(n)) != want]
    assert wrong == []


def test_format_duration_of_chapter_values() -> None:
    assert format_duration(28.166e-6) == "28.166µs"
    assert format_duration(3.6) == "3.600s"
    assert format_duration(0.0) == "0.000ns"
    assert format_duration(1.2345e-9) == "1.000ns"  # 1.2345 ns is 1 whole nanosecond


@pytest.mark.parametrize("bad", [-1e-9, math.nan, math.inf])
def test_format_duration_rejects_non_durations(bad: float) -> None:
    with pytest.raises(ValueError):
        format_duration(bad)


def test_format_nanos_rejects_negative() -> None:
    with pytest.raises(ValueError):
        format_nanos(-1)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3.600s", 3.6),
        ("1.118ms", 1.118e-3),
        ("28.166µs", 28.166e-6),  # U+00B5 MICRO SIGN, what Rust prints
        ("28.166μs", 28.166e-6),  # U+03BC GREEK SMALL LETTER MU
        ("28.166us", 28.166e-6),
        ("791.000ns", 791e-9),
        ("0.000ns", 0.0),
        ("651.666µs", 651.666e-6),
        ("1000.000ms", 1.0),
        ("12s", 12.0),
        ("5.ms", 5e-3),
        (".5s", 0.5),
        ("  2.016ms \r", 2.016e-3),
        ("1.5 ms", 1.5e-3),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    # Exact equality: the printed decimal is converted once, not scaled by a rounded factor.
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "ms", "3.600", "3.600 sec", "-1ms", "1e-3s", "3.6m", "3.600S", "1,5ms", "1.2.3ms",
     "1ms 2ms", "nan s", "inf s", "١٢ms", "\x00"],
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_parse_error_names_the_text() -> None:
    with pytest.raises(ValueError, match=r"'3\.6 parsecs'"):
        parse_duration("3.6 parsecs")


@pytest.mark.parametrize("nanos", [0, 791, 28166, 1118000, 3600000000, 123456789012])
def test_round_trip_within_print_precision(nanos: int) -> None:
    text = format_nanos(nanos)
    assert parse_duration(text) == pytest.approx(nanos / 1e9, rel=5e-4, abs=1e-12)
