"""The parser's state as it reads a program's output line by line (data/parse.py is its entry):
the `### ` section and the program header a line falls under, the last labelled line (a
warm-up line names none), the summary lines still waiting for their `# samples` line; one
handler per line form (data/line_forms.py), each emitting figures or saying the line is not
its form (it then goes to `ParseResult.unknown`).
"""

from __future__ import annotations

import re

from orchestrator import programs, vocabulary
from orchestrator.data.durations import UNIT_EXPONENTS as _EXPONENTS
from orchestrator.data.line_forms import (
    ACCURACY,
    AUTOTUNE,
    COMPILE_ARTIFACTS,
    COMPILE_CACHE,
    COMPILE_CACHE_STATS,
    ENERGY,
    ENERGY_MORE,
    KERNEL,
    KERNEL_OPS,
    MAX_REF,
    NO_TIME,
    QUEUED_PROOF,
    SAMPLES,
    SEC_CACHE,
    SEC_PROCESS,
    SEC_THREADS,
    SEC_WARMUP,
    SM_CLOCK,
    SUMMARY,
    VALUE_FORMS,
    WARMUP,
    WROTE,
    clean,
    int_or,
    label_info,
    method_of,
    profiler_of,
    program_words,
    sample_values,
    seconds,
    section_framework,
    section_word,
    warm_program,
)
from orchestrator.records import (
    CacheState,
    Context,
    Figure,
    ParseResult,
    Samples,
    mutable_twin,
)

_FigureTwin = mutable_twin(Figure)
_SamplesTwin = mutable_twin(Samples)


class Parser:
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
        self.sec = (section_framework(words) or ctx.framework,
                    int_or(section_word(SEC_THREADS, words), ctx.threads),
                    CacheState.of(section_word(SEC_CACHE, words) or ctx.cache),
                    int_or(section_word(SEC_PROCESS, words), ctx.process),
                    section_word(SEC_WARMUP, words) or ctx.warmup)
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
        line = clean(raw)
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
        match = SUMMARY.fullmatch(line)
        return self._summary(n, match) if match is not None else self._other(n, line)

    def _other(self, n: int, line: str) -> bool:
        for needle, pattern, methods in VALUE_FORMS:
            if needle in line:
                match = pattern.fullmatch(line)
                return match is not None and self._values(n, match.groups(), methods)
        if " compile cache (inductor): " in line:
            return self._compile_cache(n, line)
        if " compile cache artifacts: " in line:
            return self._compile_artifacts(n, line)
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
        if line.startswith(program_words()[2]) and self._header(n, line):
            return True
        if " accuracy: wrote " in line and WROTE.fullmatch(line):
            self.result.info.append((n, line))
            return True
        return False

    def _emit(self, label: str, shape: str | None, op: str | None, method: str, text: str,
              hint: str | None, n: int, stats: tuple[tuple[str, float], ...],
              runs: int | None = None, iteration: int | None = None,
              warmup: str | None = None, kernel: str = "") -> None:
        """Append one figure per (stat, value); `hint` is the framework the method implies."""
        device, implied = label_info(label)
        framework = self.framework or implied or hint
        threads, cache, process, run_warmup = self.run
        warmup, section, append = warmup or run_warmup, self.section, self.figures.append
        profiler = profiler_of(text) if vocabulary.names_profiler(method) else ""
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
        found = method_of(text)
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
        match = KERNEL.fullmatch(line)
        if match is None:
            return self._kernel_ops(n, line)
        found = match and method_of(match.group(4))
        if not found or not vocabulary.names_profiler(found[0]):
            return False
        label, shape, op, text, launches, num1, unit1, num2, unit2, name = match.groups()
        stats = (("kernel_min", seconds(num1, unit1)), ("kernel_median", seconds(num2, unit2)))
        self._emit(label, shape, op, found[0], text, found[1], n, stats, int(launches),
                   kernel=name)
        return True

    def _kernel_ops(self, n: int, line: str) -> bool:
        """Stat `kernel_ops` (the ops of that name), column `kernel`, no profiler."""
        if " autotune (inductor): " in line:
            return self._autotune(n, line)
        match = KERNEL_OPS.fullmatch(line)
        found = match and method_of(match.group(4))
        if not found or found[0] != "accuracy_kernel":
            return False
        label, shape, op, text, count, name = match.groups()
        self._emit(label, shape, op, found[0], text, found[1], n, (("kernel_ops", float(count)),),
                   int(count), kernel=name)
        return True

    def _autotune(self, n: int, line: str) -> bool:
        """Inductor's mm autotune: stat `candidates`, column `kernel` the winner's words."""
        match = AUTOTUNE.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, count, winner = match.groups()
        self._emit(label, shape, op, "compile_autotune", text, None, n,
                   (("candidates", float(count)),), int(count), kernel=winner)
        return True

    def _compile_cache(self, n: int, line: str) -> bool:
        """torch.compile's cache counters in the first call: one count per stat."""
        match = COMPILE_CACHE.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, *counts = match.groups()
        stats = tuple((stat, float(c)) for stat, c in zip(COMPILE_CACHE_STATS, counts,
                                                          strict=True))
        self._emit(label, shape, op, "compile_cache", text, None, n, stats)
        return True

    def _compile_artifacts(self, n: int, line: str) -> bool:
        """torch.compile's mega-cache blob: stats `loaded_bytes`, `load_s`, `loaded_entries`
        (or `saved_...`, `save_s`): its size, the load's (save's) time, its entries."""
        match = COMPILE_ARTIFACTS.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, verb, size, num, unit, entries = match.groups()
        count = sum(int(part.rsplit(" ", 1)[1]) for part in entries.split(", ")
                    if part != "none")
        stem = "load" if verb == "loaded" else "save"
        stats = ((f"{verb}_bytes", float(size)), (f"{stem}_s", seconds(num, unit)),
                 (f"{verb}_entries", float(count)))
        self._emit(label, shape, op, "compile_artifacts", text, None, n, stats)
        return True

    def _sm_clock(self, n: int, line: str) -> bool:
        """Method `sm_clock`, stats `block_start` / `block_end` (MHz); `method_text` is the
        timed block's method as printed."""
        match = SM_CLOCK.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, start, end = match.groups()
        self._emit(label, shape, op, "sm_clock", text, None, n,
                   (("block_start", float(start)), ("block_end", float(end))))
        return True

    def _energy_more(self, n: int, line: str) -> bool:
        """Method `energy`: stats `idle_watts`, `idle_seconds`, `joules_net`, and
        `busy_fraction` where printed (the `# energy` line after the energy line)."""
        match = ENERGY_MORE.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, watts, num, unit, net, busy = match.groups()
        last = self.energy_line
        if last is None or last[:3] != (label, shape, op):
            return False  # it completes the energy line before it: alone it is not a figure
        stats = [("idle_watts", float(watts)), ("idle_seconds", seconds(num, unit)),
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
            value = seconds(durations[i], durations[i + 1])
            self._emit(label, shape or None, op or None, method, text, None, n, (("value", value),))
        return True

    def _no_time(self, n: int, line: str) -> bool:
        match = NO_TIME.fullmatch(line)
        if match is None:
            return False
        label, shape, op, empty, runs = match.groups()
        if int(empty) > int(runs):  # '21 of 20': no program prints that, so not this form
            return False
        text = "device time (profile, no flush)"
        self._emit(label, shape, op, "device_time_no_flush", text,
                   (method_of(text) or ("", None))[1], n, (("no_time_count", float(empty)),),
                   int(runs))
        return True

    def _queued_proof(self, n: int, line: str) -> bool:
        """Method device_time_queued, stat `queued_waited` (runs whose start event waited),
        runs = N."""
        match = QUEUED_PROOF.fullmatch(line)
        found = match and method_of(match.group(4))
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
        match = ENERGY.fullmatch(line)
        if match is None:
            return False
        label, shape, op, text, joules, runs, num, unit = match.groups()
        self._emit(label, shape, op, "energy", text, None, n,
                   (("joules", float(joules)), ("seconds", seconds(num, unit))), int(runs))
        self.energy_line = (label, shape, op, n, int(runs))
        return True

    def _warmup(self, n: int, line: str) -> bool:
        match = WARMUP.fullmatch(line)
        if match is None:
            return False
        kind, index, num, unit = match.groups()
        # The line names no label: it belongs to the program whose labelled line came last.
        label, shape, op = self.last or ("", None, None)
        self._emit(label, shape, op, "warmup_timed_run", f"warm-up {kind}", warm_program(), n,
                   (("value", seconds(num, unit)),), iteration=int(index), warmup=kind)
        return True

    def _samples(self, n: int, line: str) -> bool:
        match = SAMPLES.fullmatch(line)
        found = match and method_of(match.group(4))
        if not found:
            return False
        label, shape, op, text, values = match.groups()
        framework = self.framework or label_info(label)[1] or found[1]
        numbers = sample_values(values)
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
        match = ACCURACY.fullmatch(line)
        if match is None:
            return False
        name, err, diff = match.groups()
        first, _, rest = name.partition(" ")
        named = first.lower() if first.lower() in programs.active().by_name else None
        device, implied = label_info(rest.split(" ", 1)[0] if named else first)
        self._table(named or implied, name, device, "max|x - f64 ref|", "max_err_f64_ref",
                    float(err), n)
        if diff is not None:
            self._table(named or implied, name, device, "max|x - torch cpu|",
                        "max_diff_torch_cpu", float(diff), n)
        return True

    def _max_ref(self, n: int, line: str) -> bool:
        match = MAX_REF.fullmatch(line)
        if match is not None:
            self._table(None, "", "", "max |ref|", "max_abs_ref", float(match.group(1)), n)
        return match is not None

    def _header(self, n: int, line: str) -> bool:
        program = programs.active().by_name.get(line.split(" ", 1)[0])
        header = program.parse_header(line, n) if program is not None else None
        if program is None or header is None:
            return False
        self.result.headers.append(header)
        if header.kind == program.name:
            self._set_header(program.name, header.threads)
        else:  # a second header of the same program (torch BLAS_INFO=...): it says who, only
            self.framework = program.name
        return True
