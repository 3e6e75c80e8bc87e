"""Parse what the benchmark programs print (docs/LINES.md) into tidy figures.

Reads a program's stdout, or a log a person captured by hand such as the chapter's listings:
summary, first-call, device-init and warm-up lines, `# samples` lines, program headers, `### `
section headers (context for the lines under them) and the accuracy table. Each figure becomes a
`Figure` (one future dataset row); a line of no known form is kept in `ParseResult.unknown`,
never dropped, and no input makes the parser raise.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from orchestrator import programs, vocabulary
from orchestrator.data.durations import UNIT_EXPONENTS as _EXPONENTS
from orchestrator.errors import InputError
from orchestrator.records import (
    CacheState,
    Context,
    Figure,
    Header,
    ParseResult,
    Samples,
    mutable_twin,
)

__all__ = ["Context", "Figure", "Header", "ParseResult", "Samples", "parse_lines", "parse_text",
           "read_log", "wrote_label"]


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


_FigureTwin = mutable_twin(Figure)
_SamplesTwin = mutable_twin(Samples)

# ---- line forms (docs/LINES.md), matched with fullmatch on the stripped line -----------------
# Digits are spelled [0-9] (\d would take any script's digits) rather than using re.ASCII,
# which makes the summary regex measurably slower.

_DUR = r"([0-9]{1,20}(?:\.[0-9]{0,20})?) ?(s|ms|µs|μs|us|ns)"
_NUM = r"([-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?nan|[-+]?inf)"
_INT = r"([0-9]{1,9})"
# a count, a time in seconds, energy in joules: never negative, never nan or inf
_UNSIGNED = r"((?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?)"
# a `# samples` line's values, checked in one match (a regex per value halves the speed)
_SAMPLE_LIST = re.compile(r"(?:[ \t]*(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4})?"
                          r"(?=[ \t]|$))*[ \t]*")
_INF = float("inf")
# Terminal escape sequences a captured log may hold (`script`, `tee` of a coloured terminal):
# CSI (colours, cursor: ESC [ ... final byte), OSC (titles, links: ESC ] ... BEL or ESC \), and
# the short forms (ESC, intermediates, a final byte: `ESC ( B`, `ESC =`). Removed before matching;
# none of them spans a line.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")
_LSO = r"(\S+) ([0-9]{1,9}(?:x[0-9]{1,9})*) (\S+) "  # LABEL SHAPE OP

_SUMMARY = re.compile(_LSO + rf"(.+?), {_INT} runs: min {_DUR} median {_DUR}")
_NO_TIME = re.compile(
    _LSO + rf"device time \(profile, no flush\): {_INT} of {_INT} read as no time")
# the queued window's proof: `cuda 1024x1024 matmul cuda.Event time (queued): start event
# waited in 20 of 20 runs` (stat queued_waited: the runs whose start event the spin still held);
# burn's METHOD ends `, queued)`: `device time (profile_with flush, queued): start event ...`
_QUEUED_PROOF = re.compile(
    _LSO + rf"(.+?[(, ]queued\)): start event waited in {_INT} of {_INT} runs")
_WROTE = re.compile(_LSO + r"accuracy: wrote .+")
_WARMUP = re.compile(rf"warm-up ([A-Za-z_-]+), timed run {_INT}: after sync {_DUR}")
_SAMPLES = re.compile(r"# samples " + _LSO + r"([^:]+):(.*)")
# NAME is everything after the ': ' that follows `median DUR` (it may hold ': ' itself)
_KERNEL = re.compile(r"# kernel " + _LSO +
                     rf"([^:]+): {_INT} launches, min {_DUR} median {_DUR}: (.*\S)")
# what computed an accuracy product as a compiled module names it (JAX: `# kernel cpu 256x256
# matmul accuracy kernel (xla): 1 op: __ynn_fusion (f32 x f32 -> f32, precision default)`)
_KERNEL_OPS = re.compile(r"# kernel " + _LSO + rf"([^:]+): {_INT} ops?: (.*\S)")
# the profiler a kernel_time (or accuracy_kernel: `accuracy kernel time (cupti)`) names
_PROFILER = re.compile(r"kernel time \(([a-z_]+)\)$")
# `# sm clock cuda 1024x1024 matmul with sync: start 1980 MHz, end 1980 MHz` (bench_py)
_SM_CLOCK = re.compile(r"# sm clock " + _LSO + rf"([^:]+): start {_INT} MHz, end {_INT} MHz")
# `# energy cuda 1024x1024 matmul energy (nvml): idle 121.250 W over 1.003s, net 2805.112 J,
# busy 0.962` (after its energy line; `busy` only where the kernel time is known)
_ENERGY_MORE = re.compile(r"# energy " + _LSO + rf"(energy \([a-z]+\)): idle {_UNSIGNED} W "
                          rf"over {_DUR}, net ([-]?{_UNSIGNED[1:-1]}) J(?:, busy {_UNSIGNED})?")
# NAME must end in a non-space, so a long run of spaces can't make the lazy group quadratic.
_ACCURACY = re.compile(
    rf"(.*?\S) +max\|x - f64 ref\| = {_NUM}(?: +max\|x - torch cpu\| = {_NUM})?")
_MAX_REF = re.compile(rf"max \|ref\| = {_NUM}")
# `cuda 1024x1024 matmul energy (nvml): 1105.207 J, 35200 runs, 2.001s` (its own block)
_ENERGY = re.compile(_LSO + rf"(energy \([a-z]+\)): {_UNSIGNED} J, {_INT} runs, {_DUR}")

# Lines of one or two plain durations: (substring that selects the form, its regex, then
# (method, method_text) per duration). Device init has no SHAPE OP.
_VALUE_FORMS = (
    (" first call: returned ",
     re.compile(_LSO + rf"first call: returned {_DUR}, after sync {_DUR}"),
     (("first_call_returned", "first call: returned"),
      ("first_call_after_sync", "first call: after sync"))),
    # jax: the first call through jit's AOT path, timed apart (before the plain form)
    (" first call breakdown: ",
     re.compile(_LSO + rf"first call breakdown: trace and lower {_DUR}, compile {_DUR}, "
                rf"first run {_DUR}"),
     (("first_call_lower", "first call: trace and lower"),
      ("first_call_compile", "first call: compile"),
      ("first_call_run", "first call: first run"))),
    (" first call: ", re.compile(_LSO + rf"first call: {_DUR}"), (("first_call", "first call"),)),
    (": device init ", re.compile(rf"(\S+)()(): device init {_DUR}"),
     (("device_init", "device init"),)),
)


# Printed METHOD -> dataset method: the methods every program prints are the vocabulary's
# (`Method.printed`); the others are each program's own (programs/*.py: Program.methods), which
# then also tell the framework.


@programs.derived
@lru_cache(maxsize=256)
def _method(text: str) -> tuple[str, str | None] | None:
    """(dataset method, the framework that alone prints it or None) of a printed METHOD."""
    shared = vocabulary.printed_methods()
    if text in shared:
        return shared[text], None
    return next(((method, p.name) for p in programs.REGISTRY.values()
                 if (method := p.method_of(text)) is not None), None)


@programs.derived
@lru_cache(maxsize=256)
def _label_info(label: str) -> tuple[str, str | None]:
    """(device, framework) a label implies; 'cpu' and 'cuda' are printed by both frameworks."""
    return next(((device, p.name) for p in programs.REGISTRY.values()
                 if (device := p.device_of(label)) is not None), (label, None))


@programs.derived
@lru_cache(maxsize=1)
def _warm_program() -> str | None:
    """The program warm-up lines imply when nothing else says: the first registered with a
    'warm' mode (burn, the puzzle's program; a JAX log's header names JAX, which wins)."""
    having = [p.name for p in programs.REGISTRY.values() if "warm" in p.modes]
    return having[0] if having else None


@programs.derived
@lru_cache(maxsize=1)
def _program_words() -> tuple[re.Pattern[str], dict[str, str], tuple[str, ...]]:
    """A section header's framework words, word -> program, and header line prefixes."""
    words = {word: p.name for p in programs.REGISTRY.values() for word in (p.name, *p.aliases)}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
    return pattern, words, tuple(f"{name} " for name in programs.REGISTRY)


def _profiler(text: str) -> str:
    """'cupti' of `kernel time (cupti)`: the profiler a kernel-time figure came from."""
    match = _PROFILER.search(text)
    return match.group(1) if match else ""


def _sample_values(text: str) -> tuple[float, ...] | None:
    """The seconds of a `# samples` line: ASCII decimals only (float() would also take '١',
    '５', '1_000', 'nan', '-1'), finite and not negative; None if any is not."""
    if _SAMPLE_LIST.fullmatch(text) is None:
        return None
    numbers = tuple(map(float, text.split()))
    return None if _INF in numbers else numbers  # 1e999: digits, but no time


def _seconds(number: str, unit: str) -> float:
    return float(number + _EXPONENTS[unit])


# ---- section headers -------------------------------------------------------------------------

_SEC_PROCESS = re.compile(r"\bprocess\s*#?\s*([0-9]{1,9})\b", re.IGNORECASE)
# No \b before 'threads': it must also match RAYON_NUM_THREADS=8 and OMP_NUM_THREADS=8.
_SEC_THREADS = re.compile(r"threads\s*[=:]?\s*([0-9]{1,9})\b", re.IGNORECASE)
_SEC_CACHE = re.compile(r"\b(cold|warm)[ -]cache\b", re.IGNORECASE)
_SEC_WARMUP = re.compile(r"\bwarm-?up (dropped|kept)\b", re.IGNORECASE)


def _section_framework(text: str) -> str | None:
    """'burn' or 'torch' when the header names exactly one program (or its alias)."""
    pattern, words, _prefixes = _program_words()
    found = {words[name.lower()] for name in pattern.findall(text)}
    return found.pop() if len(found) == 1 else None


def _section_word(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1).lower() if match else None


def _int_or(value: str | None, default: int | None) -> int | None:
    return default if value is None else int(value)


# ---- entry points ----------------------------------------------------------------------------


def wrote_label(line: str) -> str | None:
    """The label of an `LABEL SHAPE OP accuracy: wrote DIR` line, else None."""
    match = _WROTE.fullmatch(_clean(line))
    return match.group(1) if match else None


def _clean(raw: str) -> str:
    """The line without its terminal escapes and surrounding white space."""
    return (_ANSI.sub("", raw) if "\x1b" in raw else raw).strip()


def parse_text(text: str, context: Context | None = None) -> ParseResult:
    """Parse a whole log; lines split on '\\n' only, so line numbers match an editor's."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the final newline ends the last line, it does not start another
    return parse_lines(lines, context)


def parse_lines(lines: Iterable[str], context: Context | None = None) -> ParseResult:
    """Parse lines (with or without their newline), e.g. an open text file."""
    parser = _Parser(context or Context())
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


# ---- the parser ------------------------------------------------------------------------------


class _Parser:
    """Parsing state: the section and header context, and the last labelled line."""

    __slots__ = ("ctx", "energy_line", "figures", "framework", "last", "result", "run", "sec",
                 "section", "unsampled")

    def __init__(self, context: Context) -> None:
        self.ctx, self.result = context, ParseResult()
        self.figures = self.result.figures
        # summary lines not yet followed by their `# samples` line, oldest first, per
        # (label, shape, method): the n-th sample set belongs to the n-th summary line
        self.unsampled: dict[tuple[str, str | None, str], list[int]] = {}
        self._enter_section(None)

    def _enter_section(self, text: str | None) -> None:
        """A section's own words first, the caller's Context under them."""
        ctx, words = self.ctx, text or ""
        self.section = text
        self.sec = (_section_framework(words) or ctx.framework,
                    _int_or(_section_word(_SEC_THREADS, words), ctx.threads),
                    CacheState.of(_section_word(_SEC_CACHE, words) or ctx.cache),
                    _int_or(_section_word(_SEC_PROCESS, words), ctx.process),
                    _section_word(_SEC_WARMUP, words) or ctx.warmup)
        self._set_header(None, None)  # a section is a new run: the last program's are over

    def _set_header(self, framework: str | None, threads: int | None) -> None:
        """A program header speaks for its program's lines, so it beats the section."""
        sec_framework, sec_threads, cache, process, warmup = self.sec
        self.framework = framework or sec_framework
        self.run = (sec_threads if threads is None else threads, cache, process, warmup)
        self.last: tuple[str, str | None, str | None] | None = None
        # the last energy line (label, shape, op, line, runs): its `# energy` line completes it
        self.energy_line: tuple[str, str, str, int, int] | None = None

    def feed(self, n: int, raw: str) -> None:
        """Parse line number `n`; whatever is not understood goes to `unknown`."""
        line = _clean(raw)
        if not line:
            return
        try:
            handled = self._dispatch(n, line)
        except (ValueError, OverflowError):  # e.g. a sample that is not a float: not our form
            handled = False
        if not handled:
            self.result.unknown.append((n, line))

    def _dispatch(self, n: int, line: str) -> bool:
        # Summary lines are the bulk of a log: one first-character test, then their regex.
        head = line[0]
        if head == "#":
            if line.startswith("# samples "):
                return self._samples(n, line)
            if line.startswith("# kernel "):
                return self._kernel(n, line)
            if line.startswith("# sm clock "):
                return self._sm_clock(n, line)
            if line.startswith("# energy "):
                return self._energy_more(n, line)
            if line == "###" or line.startswith("### "):
                self._enter_section(line[4:].strip())
                return True
            return False
        if head == "w" and line.startswith("warm-up "):
            return self._warmup(n, line)
        match = _SUMMARY.fullmatch(line)
        return self._summary(n, match) if match is not None else self._other(n, line)

    def _other(self, n: int, line: str) -> bool:
        for needle, pattern, methods in _VALUE_FORMS:
            if needle in line:
                match = pattern.fullmatch(line)
                return match is not None and self._values(n, match.groups(), methods)
        if line.endswith(" read as no time"):
            return self._no_time(n, line)
        if " start event waited in " in line:
            return self._queued_proof(n, line)
        if " energy (" in line:
            return self._energy(n, line)
        if "max|x - f64 ref|" in line:
            return self._accuracy(n, line)
        if line.startswith("max |ref|"):
            return self._max_ref(n, line)
        if line.startswith(_program_words()[2]) and self._header(n, line):
            return True
        if " accuracy: wrote " in line and _WROTE.fullmatch(line):
            self.result.info.append((n, line))
            return True
        return False

    def _emit(self, label: str, shape: str | None, op: str | None, method: str, text: str,
              hint: str | None, n: int, stats: tuple[tuple[str, float], ...],
              runs: int | None = None, iteration: int | None = None,
              warmup: str | None = None, kernel: str = "") -> None:
        """Append one figure per (stat, value); `hint` is the framework the method implies."""
        device, implied = _label_info(label)
        framework = self.framework or implied or hint
        threads, cache, process, run_warmup = self.run
        warmup, section, append = warmup or run_warmup, self.section, self.figures.append
        profiler = _profiler(text) if vocabulary.names_profiler(method) else ""
        for stat, value in stats:
            figure = _FigureTwin(
                framework=framework, label=label, device=device, shape=shape, op=op,
                method=method, method_text=text, stat=stat, value=value, runs=runs,
                threads=threads, cache=cache, process=process, warmup=warmup,
                iteration=iteration, section=section, line_no=n, profiler=profiler,
                kernel=kernel)
            figure.__class__ = Figure
            append(figure)
        self.last = (label, shape, op)

    def _summary(self, n: int, match: re.Match[str]) -> bool:
        label, shape, op, text, runs, num1, unit1, num2, unit2 = match.groups()
        found = _method(text)
        if found is None:  # the form of a summary line, a method we don't know: keep as unknown
            return False
        stats = (("min", float(num1 + _EXPONENTS[unit1])),
                 ("median", float(num2 + _EXPONENTS[unit2])))
        self._emit(label, shape, op, found[0], text, found[1], n, stats, int(runs))
        self.unsampled.setdefault((label, shape, found[0]), []).append(n)
        return True

    def _kernel(self, n: int, line: str) -> bool:
        """`# kernel ... kernel time (cupti): N launches, min DUR median DUR: NAME`, or the
        compiled module's op: `# kernel ... accuracy kernel (xla): N op(s): NAME`."""
        match = _KERNEL.fullmatch(line)
        if match is None:
            return self._kernel_ops(n, line)
        found = match and _method(match.group(4))
        if not found or not vocabulary.names_profiler(found[0]):
            return False
        label, shape, op, text, launches, num1, unit1, num2, unit2, name = match.groups()
        stats = (("kernel_min", _seconds(num1, unit1)), ("kernel_median", _seconds(num2, unit2)))
        self._emit(label, shape, op, found[0], text, found[1], n, stats, int(launches),
                   kernel=name)
        return True

    def _kernel_ops(self, n: int, line: str) -> bool:
        """Stat `kernel_ops` (the ops of that name), column `kernel`, no profiler."""
        match = _KERNEL_OPS.fullmatch(line)
        found = match and _method(match.group(4))
        if not found or found[0] != "accuracy_kernel":
            return False
        label, shape, op, text, count, name = match.groups()
        self._emit(label, shape, op, found[0], text, found[1], n, (("kernel_ops", float(count)),),
                   int(count), kernel=name)
        return True

    def _sm_clock(self, n: int, line: str) -> bool:
        """Method `sm_clock`, stats `block_start` / `block_end` (MHz); `method_text` is the
        timed block's method as printed."""
        match = _SM_CLOCK.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, start, end = match.groups()
        self._emit(label, shape, op, "sm_clock", text, None, n,
                   (("block_start", float(start)), ("block_end", float(end))))
        return True

    def _energy_more(self, n: int, line: str) -> bool:
        """Method `energy`: stats `idle_watts`, `idle_seconds`, `joules_net`, and
        `busy_fraction` where printed (the `# energy` line after the energy line)."""
        match = _ENERGY_MORE.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, watts, num, unit, net, busy = match.groups()
        last = self.energy_line
        if last is None or last[:3] != (label, shape, op):
            return False  # it completes the energy line before it: alone it is not a figure
        stats = [("idle_watts", float(watts)), ("idle_seconds", _seconds(num, unit)),
                 ("joules_net", float(net))]
        if busy is not None:
            stats.append(("busy_fraction", float(busy)))
        # the energy line's number and runs: the report reads one block per energy line
        self._emit(label, shape, op, "energy", text, None, last[3], tuple(stats), last[4])
        return True

    def _values(self, n: int, groups: tuple[str, ...],
                methods: tuple[tuple[str, str], ...]) -> bool:
        label, shape, op, *durations = groups
        for (method, text), i in zip(methods, range(0, len(durations), 2), strict=True):
            value = _seconds(durations[i], durations[i + 1])
            self._emit(label, shape or None, op or None, method, text, None, n, (("value", value),))
        return True

    def _no_time(self, n: int, line: str) -> bool:
        match = _NO_TIME.fullmatch(line)
        if match is None:
            return False
        label, shape, op, empty, runs = match.groups()
        if int(empty) > int(runs):  # '21 of 20': no program prints that, so not this form
            return False
        text = "device time (profile, no flush)"
        self._emit(label, shape, op, "device_time_no_flush", text, (_method(text) or ("", None))[1],
                   n, (("no_time_count", float(empty)),), int(runs))
        return True

    def _queued_proof(self, n: int, line: str) -> bool:
        """Method device_time_queued, stat `queued_waited` (runs whose start event waited),
        runs = N."""
        match = _QUEUED_PROOF.fullmatch(line)
        found = match and _method(match.group(4))
        if not found or found[0] != "device_time_queued":
            return False
        label, shape, op, text, waited, runs = match.groups()
        if int(waited) > int(runs):  # '21 of 20': no program prints that, so not this form
            return False
        self._emit(label, shape, op, "device_time_queued", text, found[1], n,
                   (("queued_waited", float(waited)),), int(runs))
        return True

    def _energy(self, n: int, line: str) -> bool:
        """Method `energy`: stat `joules` (J) and `seconds` (the block's wall time), runs = N."""
        match = _ENERGY.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, joules, runs, num, unit = match.groups()
        self._emit(label, shape, op, "energy", text, None, n,
                   (("joules", float(joules)), ("seconds", _seconds(num, unit))), int(runs))
        self.energy_line = (label, shape, op, n, int(runs))
        return True

    def _warmup(self, n: int, line: str) -> bool:
        match = _WARMUP.fullmatch(line)
        if match is None:
            return False
        kind, index, num, unit = match.groups()
        # The line names no label: it belongs to the program whose labelled line came last.
        label, shape, op = self.last or ("", None, None)
        self._emit(label, shape, op, "warmup_timed_run", f"warm-up {kind}", _warm_program(), n,
                   (("value", _seconds(num, unit)),), iteration=int(index), warmup=kind)
        return True

    def _samples(self, n: int, line: str) -> bool:
        match = _SAMPLES.fullmatch(line)
        found = match and _method(match.group(4))
        if not found:
            return False
        label, shape, op, text, values = match.groups()
        framework = self.framework or _label_info(label)[1] or found[1]
        numbers = _sample_values(values)
        if numbers is None:  # not this form, nor linked to its summary line
            return False
        waiting = self.unsampled.get((label, shape, found[0]))
        summary = waiting.pop(0) if waiting else None
        samples = _SamplesTwin(label=label, shape=shape, op=op, method=found[0],
                               method_text=text, values=numbers, line_no=n,
                               section=self.section, framework=framework, summary_line=summary)
        samples.__class__ = Samples
        self.result.samples.append(samples)
        self.last = (label, shape, op)
        return True

    def _table(self, framework: str | None, label: str, device: str, text: str, stat: str,
               value: float, n: int) -> None:
        # The accuracy table compares many builds at once, so one run's threads, cache, process
        # or warm-up would be false for most of its rows: only the section is kept.
        self.figures.append(Figure(
            framework=framework, label=label, device=device, shape=None, op=None,
            method="accuracy", method_text=text, stat=stat, value=value, runs=None,
            threads=None, cache=CacheState.NONE, process=None, warmup=None, iteration=None,
            section=self.section, line_no=n))

    def _accuracy(self, n: int, line: str) -> bool:
        match = _ACCURACY.fullmatch(line)
        if match is None:
            return False
        name, err, diff = match.groups()
        first, _, rest = name.partition(" ")
        named = first.lower() if first.lower() in programs.REGISTRY else None
        device, implied = _label_info(rest.split(" ", 1)[0] if named else first)
        self._table(named or implied, name, device, "max|x - f64 ref|", "max_err_f64_ref",
                    float(err), n)
        if diff is not None:
            self._table(named or implied, name, device, "max|x - torch cpu|",
                        "max_diff_torch_cpu", float(diff), n)
        return True

    def _max_ref(self, n: int, line: str) -> bool:
        match = _MAX_REF.fullmatch(line)
        if match is not None:
            self._table(None, "", "", "max |ref|", "max_abs_ref", float(match.group(1)), n)
        return match is not None

    def _header(self, n: int, line: str) -> bool:
        program = programs.REGISTRY.get(line.split(" ", 1)[0])
        header = program.parse_header(line, n) if program is not None else None
        if program is None or header is None:
            return False
        self.result.headers.append(header)
        if header.kind == program.name:
            self._set_header(program.name, header.threads)
        else:  # a second header of the same program (torch BLAS_INFO=...): it says who, only
            self.framework = program.name
        return True
