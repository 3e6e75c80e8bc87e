"""The printed line forms (docs/LINES.md) as patterns, and what their words mean.

Every form the parser (data/parse.py) matches, with `fullmatch` on a line stripped of its
terminal escapes: summary, value, kernel, SM clock, energy, queued-proof, warm-up, samples and
accuracy lines; what a printed METHOD and a label mean (the vocabulary's shared methods, each
program's own: read from the registry and cached, derived again when it changes); the words of
a `### ` section header (program, threads, cache, process, warm-up).
"""

from __future__ import annotations

import re
from functools import lru_cache

from orchestrator import programs, vocabulary
from orchestrator.data.durations import UNIT_EXPONENTS as _EXPONENTS

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
ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")
# a label or op: no white space and no U+FFFD, what bytes that were not UTF-8 decode to (a
# label with them names no device and no run: the line is an unknown one, counted and shown)
_WORD = r"([^\s\ufffd]+)"
_LSO = _WORD + r" ([0-9]{1,9}(?:x[0-9]{1,9})*) " + _WORD + " "  # LABEL SHAPE OP

SUMMARY = re.compile(_LSO + rf"(.+?), {_INT} runs: min {_DUR} median {_DUR}")
NO_TIME = re.compile(
    _LSO + rf"device time \(profile, no flush\): {_INT} of {_INT} read as no time")
# the queued window's proof: `cuda 1024x1024 matmul cuda.Event time (queued): start event
# waited in 20 of 20 runs` (stat queued_waited: the runs whose start event the spin still held);
# burn's METHOD ends `, queued)`: `device time (profile_with flush, queued): start event ...`
QUEUED_PROOF = re.compile(
    _LSO + rf"(.+?[(, ]queued\)): start event waited in {_INT} of {_INT} runs")
WROTE = re.compile(_LSO + r"accuracy: wrote .+")
WARMUP = re.compile(rf"warm-up ([A-Za-z_-]+), timed run {_INT}: after sync {_DUR}")
SAMPLES = re.compile(r"# samples " + _LSO + r"([^:]+):(.*)")
# NAME is everything after the ': ' that follows `median DUR` (it may hold ': ' itself)
KERNEL = re.compile(r"# kernel " + _LSO +
                     rf"([^:]+): {_INT} launches, min {_DUR} median {_DUR}: (.*\S)")
# what computed an accuracy product as a compiled module names it (JAX: `# kernel cpu 256x256
# matmul accuracy kernel (xla): 1 op: __ynn_fusion (f32 x f32 -> f32, precision default)`)
KERNEL_OPS = re.compile(r"# kernel " + _LSO + rf"([^:]+): {_INT} ops?: (.*\S)")
# Inductor's mm autotune in torch.compile's first call: `# kernel cuda 1024x1024 matmul autotune
# (inductor): 19 candidates: triton_mm_7 (template, 28.512µs): ACC_TYPE='tl.float32', ...`
AUTOTUNE = re.compile(r"# kernel " + _LSO + rf"(autotune \(inductor\)): {_INT} candidates?: "
                      r"(.*\S)")
# torch.compile's cache counters in the first call (bench_core/compiled.py)
COMPILE_CACHE = re.compile(_LSO + rf"(compile cache \(inductor\)): fx graph hit {_INT} miss "
                           rf"{_INT}, aot autograd hit {_INT} miss {_INT}, autotune benchmarked "
                           rf"{_INT}")
COMPILE_CACHE_STATS = ("fxgraph_cache_hit", "fxgraph_cache_miss", "autograd_cache_hit",
                       "autograd_cache_miss", "autotune_benchmarked")
# torch.compile's mega-cache blob, loaded before the first compile or saved after the first
# call (bench_core/megacache.py): `cpu 32x32 matmul compile cache artifacts: loaded 163692 bytes
# in 1.023ms, entries aot_autograd 1, inductor 1` (entries `none` when torch read nothing)
COMPILE_ARTIFACTS = re.compile(_LSO + rf"(compile cache artifacts): (loaded|saved) {_INT} bytes "
                               rf"in {_DUR}, entries (none|[a-z_]{{1,40}} {_INT[1:-1]}"
                               rf"(?:, [a-z_]{{1,40}} {_INT[1:-1]}){{0,20}})")
# the profiler a kernel_time (or accuracy_kernel: `accuracy kernel time (cupti)`) names
PROFILER = re.compile(r"kernel time \(([a-z_]+)\)$")
# `# sm clock cuda 1024x1024 matmul with sync: start 1980 MHz, end 1980 MHz` (bench_py)
SM_CLOCK = re.compile(r"# sm clock " + _LSO + rf"([^:]+): start {_INT} MHz, end {_INT} MHz")
# `# energy cuda 1024x1024 matmul energy (nvml): idle 121.250 W over 1.003s, net 2805.112 J,
# busy 0.962` (after its energy line; `busy` only where the kernel time is known)
ENERGY_MORE = re.compile(r"# energy " + _LSO + rf"(energy \([a-z]+\)): idle {_UNSIGNED} W "
                          rf"over {_DUR}, net ([-]?{_UNSIGNED[1:-1]}) J(?:, busy {_UNSIGNED})?")
# NAME must end in a non-space, so a long run of spaces can't make the lazy group quadratic.
ACCURACY = re.compile(
    rf"(.*?\S) +max\|x - f64 ref\| = {_NUM}(?: +max\|x - torch cpu\| = {_NUM})?")
MAX_REF = re.compile(rf"max \|ref\| = {_NUM}")
# `cuda 1024x1024 matmul energy (nvml): 1105.207 J, 35200 runs, 2.001s` (its own block)
ENERGY = re.compile(_LSO + rf"(energy \([a-z]+\)): {_UNSIGNED} J, {_INT} runs, {_DUR}")

# Lines of one or two plain durations: (substring that selects the form, its regex, then
# (method, method_text) per duration). Device init has no SHAPE OP.
VALUE_FORMS = (
    (" first call: returned ",
     re.compile(_LSO + rf"first call: returned {_DUR}, after sync {_DUR}"),
     (("first_call_returned", "first call: returned"),
      ("first_call_after_sync", "first call: after sync"))),
    # jax: the first call through jit's AOT path, timed apart (before the plain form)
    (" first call breakdown: trace ",
     re.compile(_LSO + rf"first call breakdown: trace and lower {_DUR}, compile {_DUR}, "
                rf"first run {_DUR}"),
     (("first_call_lower", "first call: trace and lower"),
      ("first_call_compile", "first call: compile"),
      ("first_call_run", "first call: first run"))),
    # torch.compile's first call: Dynamo, then AOTAutograd and Inductor, then the first run
    (" first call breakdown: dynamo ",
     re.compile(_LSO + rf"first call breakdown: dynamo trace {_DUR}, inductor compile {_DUR}, "
                rf"first run {_DUR}"),
     (("first_call_dynamo", "first call: dynamo trace"),
      ("first_call_inductor", "first call: inductor compile"),
      ("first_call_run", "first call: first run"))),
    # a CUDA graph's first call: warm-up on a side stream, capture, the first replay
    (" first call breakdown: warm-up ",
     re.compile(_LSO + rf"first call breakdown: warm-up {_DUR}, graph capture {_DUR}, "
                rf"first replay {_DUR}"),
     (("first_call_graph_warmup", "first call: warm-up"),
      ("first_call_capture", "first call: graph capture"),
      ("first_call_replay", "first call: first replay"))),
    (" first call: ", re.compile(_LSO + rf"first call: {_DUR}"), (("first_call", "first call"),)),
    (": device init ", re.compile(_WORD + rf"()(): device init {_DUR}"),
     (("device_init", "device init"),)),
)


# Printed METHOD -> dataset method: the methods every program prints are the vocabulary's
# (`Method.printed`); the others are each program's own (programs/*.py: Program.methods), which
# then also tell the framework.


@programs.derived
@lru_cache(maxsize=256)
def method_of(text: str) -> tuple[str, str | None] | None:
    """(dataset method, the framework that alone prints it or None) of a printed METHOD."""
    shared = vocabulary.printed_methods()
    if text in shared:
        return shared[text], None
    return next(((method, p.name) for p in programs.active().programs
                 if (method := p.method_of(text)) is not None), None)


@programs.derived
@lru_cache(maxsize=256)
def label_info(label: str) -> tuple[str, str | None]:
    """(device, framework) a label implies; 'cpu' and 'cuda' are printed by both frameworks."""
    return next(((device, p.name) for p in programs.active().programs
                 if (device := p.device_of(label)) is not None), (label, None))


@programs.derived
@lru_cache(maxsize=1)
def warm_program() -> str | None:
    """The program warm-up lines imply when nothing else says: the first registered with a
    'warm' mode (burn, the puzzle's program; a JAX log's header names JAX, which wins)."""
    having = [p.name for p in programs.active().programs if "warm" in p.modes]
    return having[0] if having else None


@programs.derived
@lru_cache(maxsize=1)
def program_words() -> tuple[re.Pattern[str], dict[str, str], tuple[str, ...]]:
    """A section header's framework words, word -> program, and header line prefixes."""
    words = {word: p.name for p in programs.active().programs for word in (p.name, *p.aliases)}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b", re.IGNORECASE)
    return pattern, words, tuple(f"{name} " for name in programs.active().by_name)


def profiler_of(text: str) -> str:
    """'cupti' of `kernel time (cupti)`: the profiler a kernel-time figure came from."""
    match = PROFILER.search(text)
    return match.group(1) if match else ""


def sample_values(text: str) -> tuple[float, ...] | None:
    """The seconds of a `# samples` line: ASCII decimals only (float() would also take '١',
    '５', '1_000', 'nan', '-1'), finite and not negative; None if any is not."""
    if _SAMPLE_LIST.fullmatch(text) is None:
        return None
    numbers = tuple(map(float, text.split()))
    return None if _INF in numbers else numbers  # 1e999: digits, but no time


def seconds(number: str, unit: str) -> float:
    return float(number + _EXPONENTS[unit])


def clean(raw: str) -> str:
    """The line without its terminal escapes and surrounding white space."""
    return (ANSI.sub("", raw) if "\x1b" in raw else raw).strip()


# ---- section headers -------------------------------------------------------------------------

SEC_PROCESS = re.compile(r"\bprocess\s*#?\s*([0-9]{1,9})\b", re.IGNORECASE)
# No \b before 'threads': it must also match RAYON_NUM_THREADS=8 and OMP_NUM_THREADS=8.
SEC_THREADS = re.compile(r"threads\s*[=:]?\s*([0-9]{1,9})\b", re.IGNORECASE)
SEC_CACHE = re.compile(r"\b(cold|warm)[ -]cache\b", re.IGNORECASE)
SEC_WARMUP = re.compile(r"\bwarm-?up (dropped|kept)\b", re.IGNORECASE)


def section_framework(text: str) -> str | None:
    """'burn' or 'torch' when the header names exactly one program (or its alias)."""
    pattern, words, _prefixes = program_words()
    found = {words[name.lower()] for name in pattern.findall(text)}
    return found.pop() if len(found) == 1 else None


def section_word(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1).lower() if match else None


def int_or(value: str | None, default: int | None) -> int | None:
    return default if value is None else int(value)
