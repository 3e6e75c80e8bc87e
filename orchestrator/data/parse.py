"""Parse what the benchmark programs print (docs/LINES.md) into tidy figures.

Reads a program's stdout, or a log a person captured by hand such as the chapter's listings:
summary, first-call, device-init and warm-up lines, `# samples` lines, program headers, `### `
section headers (context for the lines under them) and the accuracy table. Each figure becomes a
`Figure` (one future dataset row); a line of no known form is kept in `ParseResult.unknown`,
never dropped, and no input makes the parser raise. This module is the entry (a log read
bounded, text or lines parsed); the line forms are data/line_forms.py, the parser's state and
its handler per form data/parser.py.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from pathlib import Path

from orchestrator.data.line_forms import WROTE, clean, program_words
from orchestrator.data.parser import Parser
from orchestrator.errors import InputError
from orchestrator.records import Context, Figure, Header, ParseResult, Samples

__all__ = ["Context", "Figure", "Header", "ParseResult", "Samples", "headers_of", "parse_lines",
           "parse_text", "read_log", "wrote_label"]


# A captured log is a few MiB at most (the H200 sweep's largest stdout is under 1 MiB); a cap
# keeps `parse /dev/zero` or a mistaken disk image from taking all memory. Parsing takes about
# 17 times a log's size (15 MiB of summary lines: 260 MiB), so 16 MiB keeps it near 300 MiB.
LOG_CAP = 16 * 2**20
_CHUNK = 2**20  # reads this size apart, so Ctrl-C and SIGTERM act between them


SQLITE_MAGIC = b"SQLite format 3\x00"


def read_log(path: Path, cap: int = LOG_CAP) -> str:
    """A captured log's text (undecodable bytes replaced), read bounded: an InputError naming
    the file when it cannot be read or holds more than `cap` bytes."""
    too_big = InputError(f"{path}: larger than the {cap // 2**20} MiB a captured log may be; "
                         "give parse/report/compare a log, or split this one")
    try:
        with path.open("rb") as file:
            if path.is_file() and path.stat().st_size > cap:
                raise too_big  # a regular file says its size: no need to read it
            chunks, size = [], 0
            # non-regular files (/dev/zero, a pipe) say nothing: read in chunks up to the cap
            while chunk := file.read(min(_CHUNK, cap + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    raise too_big
    except OSError as exc:
        raise InputError(f"{path}: cannot read log: {exc.strerror or exc}") from None
    data = b"".join(chunks)
    if data.startswith(SQLITE_MAGIC):  # `report r/results.sqlite`: a store, not a log
        raise InputError(f"{path} is an SQLite database (a results store?), not a captured "
                         f"log; name its results folder instead ({path.parent})")
    return data.decode("utf-8", "replace")



# ---- entry points ----------------------------------------------------------------------------


def wrote_label(line: str) -> str | None:
    """The label of an `LABEL SHAPE OP accuracy: wrote DIR` line, else None."""
    match = WROTE.fullmatch(clean(line))
    return match.group(1) if match else None


def parse_text(text: str, context: Context | None = None) -> ParseResult:
    """Parse a whole log; lines split on '\\n' only, so line numbers match an editor's."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends the last line, it does not start another
    return parse_lines(lines, context)


def parse_lines(lines: Iterable[str], context: Context | None = None) -> ParseResult:
    """Parse lines (with or without their newline), e.g. an open text file."""
    parser = Parser(context or Context())
    feed, count = parser.feed, 0
    # The parser makes no reference cycles, but every figure is a GC-tracked object, and the
    # collections triggered while a large log's figures pile up about halve the parse speed.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for count, line in enumerate(lines, 1):
            feed(count, line)
    finally:
        if gc_was_enabled:
            gc.enable()
    parser.result.line_count = count
    return parser.result


def headers_of(text: str) -> list[Header]:
    """`parse_text(text).headers`, from the lines that can be a header alone: a header line
    starts with a program's name (parser._header), and whether a line so starting is a header
    depends on that line only, never on the lines before it; the others are skipped unparsed
    (compare read every run's headers by parsing all of its stdout: 2 s at 5000 runs)."""
    prefixes = program_words()[2]
    parser = Parser(Context())
    for n, line in enumerate(text.split("\n"), 1):
        # a terminal escape may split a program's name: such a line is always parsed
        if "\x1b" in line or any(p in line for p in prefixes):
            parser.feed(n, line)
    return parser.result.headers
