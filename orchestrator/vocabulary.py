"""The measurement vocabulary: every timing method, stat and dataset column, each named once.

A self-describing registry in the manner of nvbench's summaries (tag, name, description,
formatting hint) and pyperf's `_metadata.py`: the parser, the programs, the dataset, the
report's tables, clocks, ratios and checks, compare, the progress headline, the CSV sidecar and
the README's data dictionary all read these entries, so a new method is one `Method` here (plus
the line of the program that prints it) and a new dataset column is one `Column` here.

Order is meaning: table 1 lists its methods, the clocks section its clocks and the dataset its
columns in the order of these tuples.

Imports nothing of the package: every layer may use it (tests/test_layers.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    """One timing method (the dataset's `method`): what it is and where it is shown."""

    key: str  # the dataset's `method`
    words: str  # how every table, warning and comparison names it (one spelling)
    description: str  # what it measures: the data dictionary's words
    section: str  # the report section that shows it (compare's section of its figures)
    printed: tuple[str, ...] = ()  # the METHOD text every program prints for it (parse)
    unit: str = "s"  # its figures' unit: 's' (Rust's `{:.3?}` duration) or '' (counts, errors)
    table1: bool = False  # a row of table 1 (the chapter's timing methods)
    first_call_column: bool = False  # a column of table 2 (first call across processes)
    clock: str = ""  # the clocks section's words for what its clock holds ('': not a clock)
    profiled: bool = False  # a clock per profiler (PROFILERS), its figures name one
    # its printed METHOD ends in the profiler that took it (`... (cupti)`): column `profiler`
    names_profiler: bool = False
    # its min enters the candidate / reference ratio table, in this place (1 first: the
    # headline, the kernels' own time); 0: not a ratio method
    ratio: int = 0
    headline: bool = False  # its min/value is in the progress line a person watching sees
    time: bool = False  # a time of the matmul compared between result sets (compare)
    throughput: bool = False  # a time of the whole matmul: compare gives TFLOP/s from it
    breakdown: bool = False  # a column of the first call taken apart (JAX's three stages)
    # the growth tables' basis (report/sizes.py): its short name there, and its preference
    # (1 first: the clock closest to the kernels' own time); '' / 0: not a basis
    size_basis: str = ""
    size_rank: int = 0
    # the CPU tables' basis (table 3, its plot and ratios): the first each build has, in this
    # preference (1 first); 0: not a basis
    cpu_rank: int = 0


@dataclass(frozen=True)
class Profiler:
    """A profiler whose figures are method `kernel_time` (column `profiler`)."""

    key: str  # the dataset's `profiler`
    words: str  # 'CUPTI': the clocks table's 'kernel time (CUPTI)'
    clock: str  # what its clock holds
    # a profile run's profiler (experiments file `profile: [...]`): the value of ncu's
    # `--cache-control` it runs with ('none': L2 as the kernel finds it; 'all': flushed)
    cache_control: str = ""
    # the name in a ratio's method cell ('kernel time (ncu / ncu)'), where the label's cache
    # words would make a column of parentheses; '' = `words`
    short: str = ""


@dataclass(frozen=True)
class Stat:
    """One statistic (the dataset's `stat`): what `value_s` holds for it."""

    key: str
    description: str
    unit: str = "s"  # 's': a duration; 'count', 'J', '': a plain number
    time: bool = False  # a time the checks can find impossible (zero, negative, not finite)


@dataclass(frozen=True)
class Column:
    """One column of the dataset's figures (DataFrame and CSV), in the CSV's order."""

    key: str
    # its pandas dtype: 'str' (text), 'Int64' (whole numbers), 'float64', 'bool' (object
    # where a row has none: a captured log's figures)
    dtype: str
    description: str
    group: str = "figure"  # figure, run, state (data/state_columns), cache, precision, ...


FIRST = "first call"
METHODS: tuple[Method, ...] = (
    Method("no_sync", "no sync", "host clock around the call alone", "methods", ("no sync",),
           table1=True, clock="the host's call only: the GPU has not run the matmul yet",
           time=True, cpu_rank=2),
    Method("with_sync", "with sync", "host clock around the call and a sync", "methods",
           ("with sync",), table1=True,
           clock="host clock around matmul + sync: launch, kernel, wake-up", ratio=3,
           headline=True, time=True, throughput=True, size_basis="with sync", size_rank=3,
           cpu_rank=1),
    Method("device_time", "device time", "the framework's device timer", "methods",
           table1=True, clock="the framework's device timer, as the chapter took it",
           ratio=4, headline=True, time=True, throughput=True),
    # no throughput: without the flush the window closes before the matmul has run (the
    # chapter's point), so 2·n³ over it read 1706 TFLOP/s for burn on the H200
    Method("device_time_no_flush", "device time without flush",
           "the device timer without a flush", "methods", table1=True, time=True),
    Method("device_time_queued", "device time queued",
           "the device timer with the launch gap kept out", "methods",
           clock="the same timer with the launch gap kept out (stream held busy before the "
                 "start)", ratio=2, time=True, throughput=True, size_basis="queued",
           size_rank=2),
    Method("readback", "read-back", "matmul, sum and the copy of one number to the host",
           "methods", table1=True, clock="matmul + sum + copy of one number to the host",
           ratio=5, time=True, throughput=True),
    Method("timer", "benchmark.Timer", "the benchmark module's own timer", "methods",
           table1=True, time=True, throughput=True),
    Method("kernel_time", "kernel time",
           "the GPU time of the kernels themselves, from a profiler (column `profiler`)",
           "methods", profiled=True, names_profiler=True, ratio=1, time=True,
           throughput=True, size_basis="kernel", size_rank=1),
    Method("first_call", "first call", "the first matmul of a process", FIRST, headline=True,
           time=True),
    Method("device_init", "device init", "the device's initialisation", FIRST,
           first_call_column=True, time=True),
    Method("first_call_returned", "first call returned", "when the first call returned", FIRST,
           first_call_column=True, time=True),
    Method("first_call_after_sync", "first call after sync",
           "when a sync after the first call returned", FIRST, first_call_column=True,
           headline=True, time=True),
    Method("first_call_lower", "trace and lower",
           "the first call taken apart: tracing and lowering", FIRST, breakdown=True),
    Method("first_call_compile", "compile", "the first call taken apart: compiling", FIRST,
           breakdown=True),
    # torch.compile's first call (bench_core/compiled.py): Dynamo, then its backend
    Method("first_call_dynamo", "Dynamo trace", "a compiled mode's first call taken apart: "
           "Dynamo's bytecode trace and guards", FIRST, breakdown=True),
    Method("first_call_inductor", "Inductor compile", "a compiled mode's first call taken "
           "apart: AOTAutograd and Inductor (autotuning, Triton or C++ compiles, cache reads)",
           FIRST, breakdown=True),
    Method("first_call_run", "first run", "the first call taken apart: the first run", FIRST,
           breakdown=True),
    # CUDA graph replay's first call: warm-up on a side stream, capture, first replay
    Method("first_call_graph_warmup", "graph warm-up", "a CUDA graph's first call taken "
           "apart: the eager warm-up calls on a side stream", FIRST, breakdown=True),
    Method("first_call_capture", "graph capture", "a CUDA graph's first call taken apart: "
           "capturing the matmul", FIRST, breakdown=True),
    Method("first_call_replay", "first replay", "a CUDA graph's first call taken apart: the "
           "first replay, to its sync", FIRST, breakdown=True),
    Method("compile_autotune", "autotune (Inductor)", "Inductor's mm autotune in the first "
           "call: the candidates it timed (stat `candidates`), the winner in column `kernel`",
           FIRST, printed=("autotune (inductor)",), unit=""),
    Method("compile_cache", "compile cache (Inductor)", "a compiled mode's cache counters in "
           "the first call (stats `fxgraph_cache_hit`, ..., `autotune_benchmarked`)", FIRST,
           printed=("compile cache (inductor)",), unit=""),
    Method("compile_artifacts", "compile cache artifacts (mega-cache)", "a compiled mode's "
           "mega-cache blob, loaded before the first compile or saved after the first call "
           "(stats `loaded_bytes`, `load_s`, `loaded_entries`; `saved_...`, `save_s`)", FIRST,
           printed=("compile cache artifacts",), unit=""),
    Method("warmup_timed_run", "timed run", "a timed run after the warm-up (column `iteration`)",
           "warm-up", headline=True, time=True),
    Method("accuracy", "accuracy", "the accuracy table's errors", "accuracy", unit=""),
    Method("energy", "energy", "the GPU's energy over a block of matmuls", "methods", unit="J"),
    Method("accuracy_kernel", "accuracy kernel",
           "the kernel that computed an accuracy run's product (column `kernel`: profiler "
           "`cupti`, or stat `kernel_ops` where a compiled module names the op)",
           "accuracy", printed=("accuracy kernel time (cupti)",), names_profiler=True),
    Method("sm_clock", "SM clock", "the SM clock at the start and end of a timed block "
           "(`method_text`: the block's method as printed)", "methods", unit="MHz"),
)
PROFILERS: tuple[Profiler, ...] = (
    Profiler("cupti", "CUPTI",
             "GPU time of the matmul's kernels, torch.profiler (bench_py's own block)"),
    Profiler("ncu", "ncu, L2 warm (--cache-control none)",
             "GPU time of the matmul's kernels, Nsight Compute (a profile run; L2 as the "
             "previous launch left it, as in the timed runs)", cache_control="none", short="ncu"),
    Profiler("ncu_flushed", "ncu, L2 flushed (--cache-control all)",
             "GPU time of the matmul's kernels, Nsight Compute (a profile run; caches flushed "
             "before every kernel: inputs from HBM)", cache_control="all",
             short="ncu flushed"),
)
STATS: tuple[Stat, ...] = (
    Stat("min", "the minimum of the timed runs", time=True),
    Stat("median", "the median of the timed runs", time=True),
    Stat("value", "one duration (first call, device init, a warm-up's timed run)", time=True),
    Stat("no_time_count", "the runs a profile read as no time", unit="count"),
    Stat("queued_waited", "the runs whose start event the spin still held", unit="count"),
    Stat("kernel_min", "one kernel's minimum (column `kernel`)", time=True),
    Stat("kernel_median", "one kernel's median (column `kernel`)", time=True),
    Stat("kernel_ops", "the ops of one name that compute an accuracy product, as the compiled "
         "module names them (column `kernel`)", unit="count"),
    Stat("candidates", "the candidates Inductor's autotune timed for the mm (column `kernel`: "
         "the winner)", unit="count"),
    Stat("fxgraph_cache_hit", "Inductor's FX graph cache hits in the first call", unit="count"),
    Stat("fxgraph_cache_miss", "Inductor's FX graph cache misses in the first call",
         unit="count"),
    Stat("autograd_cache_hit", "AOTAutograd's cache hits in the first call", unit="count"),
    Stat("autograd_cache_miss", "AOTAutograd's cache misses in the first call", unit="count"),
    Stat("autotune_benchmarked", "the autotune benchmarks run in the first call (0: none, or "
         "every choice read from the autotune cache)", unit="count"),
    Stat("loaded_bytes", "the size of the mega-cache blob a compiled run loaded", unit="B"),
    Stat("load_s", "how long loading the mega-cache blob into the caches took"),
    Stat("loaded_entries", "the cache entries the loaded blob held", unit="count"),
    Stat("saved_bytes", "the size of the mega-cache blob a compiled run saved", unit="B"),
    Stat("save_s", "how long serializing the caches into the blob took"),
    Stat("saved_entries", "the cache entries the saved blob held", unit="count"),
    Stat("max_err_f64_ref", "max|c - f64 ref|", unit=""),
    Stat("max_diff_torch_cpu", "max|c - the reference build's c|", unit=""),
    Stat("max_abs_ref", "max|ref|", unit=""),
    Stat("inputs_match_torch_cpu", "the inputs equal the reference build's", unit=""),
    Stat("bitwise_group", "the group of builds with bitwise equal c", unit=""),
    Stat("max_err_tf32_inputs", "max|P - f64 ref|, P from the inputs rounded to TF32", unit=""),
    Stat("max_diff_tf32_product", "max|c - P|", unit=""),
    Stat("max_err_f32_numpy", "numpy's own f32 product's error", unit=""),
    Stat("joules", "the energy of an energy block", unit="J"),
    Stat("seconds", "the energy block's wall time"),
    Stat("joules_net", "the energy block's joules less idle power times its wall time",
         unit="J"),
    Stat("idle_watts", "the GPU's idle power, measured just before the energy block", unit="W"),
    Stat("idle_seconds", "how long that idle power was measured over"),
    Stat("busy_fraction", "the share of the energy block the GPU ran kernels (runs x kernel "
         "median / wall time)", unit=""),
    Stat("block_start", "the SM clock when a timed block started", unit="MHz"),
    Stat("block_end", "the SM clock when a timed block ended", unit="MHz"),
)


def _int(key: str, description: str, group: str = "figure") -> Column:
    return Column(key, "Int64", description, group)


def _text(key: str, description: str, group: str = "figure") -> Column:
    return Column(key, "str", description, group)


def _float(key: str, description: str, group: str = "figure") -> Column:
    return Column(key, "float64", description, group)


COLUMNS: tuple[Column, ...] = (
    _text("run_id", "the run's id"),
    _text("experiment", "the experiment's name"),
    _text("framework", "the program"),
    _text("label", "the label as printed"),
    _text("device", "what the label runs on"),
    _text("shape", "the matrices' shape"),
    _text("op", "the operation"),
    _text("method", "the timing method (METHODS)"),
    _text("stat", "the statistic (STATS)"),
    _float("value_s", "the figure: seconds, or the stat's unit"),
    _int("runs", "the timed runs (kernel figures: launches)"),
    _int("threads", "the threads the line reported"),
    _text("cache", "the cache state"),
    _int("process", "the process of a repeated run"),
    _text("warmup", "the warm-up kind"),
    _int("iteration", "the warm-up puzzle's timed run"),
    Column("load1_before", "float64", "1-minute load before the run", "run"),
    Column("load1_after", "float64", "1-minute load after the run", "run"),
    _text("status", "the run's status", "run"),
    _text("reason", "why it failed or was skipped", "run"),
    _text("method_text", "the method as printed"),
    _int("threads_requested", "the threads asked for", "run"),
    _text("build", "the build", "run"),
    _text("features", "the build's features", "run"),
    _text("role", "measure, priming or profile", "run"),
    Column("expect_failure", "bool", "the run is expected to fail", "run"),
    _text("sweep_id", "the sweep's id", "run"),
    _text("section", "the captured log's last ### header"),
    _int("line_no", "the line of the figure"),
    _int("gpu_sm_clock_mhz", "SM clock before the run", "state"),
    _int("gpu_sm_clock_max_mhz", "its max", "state"),
    _int("gpu_app_clock_mhz", "the application clock", "state"),
    _int("gpu_mem_clock_mhz", "memory clock before the run", "state"),
    _int("gpu_pstate", "performance state before the run", "state"),
    _int("gpu_temp_c", "GPU temperature before (°C)", "state"),
    _int("gpu_temp_after_c", "GPU temperature after (°C)", "state"),
    Column("gpu_power_w", "float64", "power draw before the run (W)", "state"),
    Column("gpu_power_limit_w", "float64", "the enforced power limit (W)", "state"),
    _text("gpu_reasons_before", "clock-event reasons before", "state"),
    _text("gpu_reasons_after", "clock-event reasons after", "state"),
    Column("gpu_energy_j", "float64", "energy between the snapshots (J)", "state"),
    Column("gpu_throttle_s", "float64", "time the clocks were held down (s)", "state"),
    _int("gpu_other_processes", "other compute processes on the GPU", "state"),
    _text("gpu_other_pids", "their pids", "state"),
    _text("gpu_state_reason", "why the GPU values are empty", "state"),
    _text("cpu_governor", "the CPU's frequency governor", "state"),
    Column("cpu_freq_mhz", "float64", "mean current frequency (MHz)", "state"),
    _text("cpu_boost", "boost/turbo on/off", "state"),
    _text("autotune_kernel", "the kernel the autotuner chose", "cache"),
    Column("autotune_median_s", "float64", "that kernel's median as autotune measured it",
           "cache"),
    _text("cache_proof", "what the run's caches were, proven", "cache"),
    _text("precision", "the run's f32 matmul arithmetic", "precision"),
    _text("precision_source", "printed, inferred, kernel name or disputed: ...",
          "precision"),
    _text("profiler", "the profiler of a kernel_time figure"),
    _text("kernel", "the kernel of a kernel_min/kernel_median figure"),
    _text("profile_of", "a profile run's measured run", "run"),
    _text("host", "the host the sweep ran on", "run"),
    _text("measure_env", "the run's measurement-changing environment variables", "run"),
    # kept as text ('' where none): the exports always wrote them so
    _text("seed", "the seed of the sweep's interleaved order ('' for file order)", "run"),
    _text("stop_reason", "why a series run to a stopping target stopped", "run"),
    _text("half_width", "its achieved relative 95% half-width", "run"),
    _text("stop_target", "the stopping target it was run to", "run"),
    _text("variant", "the A/B variant of an experiment measured in one sweep", "run"),
    # the clock during a run: after the older columns, so the CSV's
    # earlier columns keep their places
    Column("gpu_below_app_clock_s", "float64", "time the clocks were below the application "
           "clock during the run, any cause, idle included (s)", "state"),
    Column("gpu_below_base_clock_s", "float64", "time the clocks were below the base clock "
           "during the run (s)", "state"),
    Column("gpu_low_utilization_s", "float64", "time the clocks were held down for low "
           "utilization (idle) during the run (s)", "state"),
    Column("gpu_power_throttle_s", "float64", "power-cap violation time during the run (s)",
           "state"),
    Column("gpu_thermal_throttle_s", "float64", "thermal violation time during the run (s)",
           "state"),
    _int("gpu_sm_clock_run_min_mhz", "lowest SM clock NVML gave while the run ran", "state"),
    _int("gpu_sm_clock_run_max_mhz", "highest SM clock NVML gave while the run ran", "state"),
    _int("gpu_sm_clock_samples", "NVML SM-clock readings taken while the run ran", "state"),
    # how the matmul ran (last, so the CSV's earlier columns keep their places)
    _text("exec_mode", "how the program ran the matmul: 'compile', "
          "'compile:max-autotune', 'cudagraph', ... ('' = the program's own way: eager)",
          "run"),
)



_index: tuple[tuple[Method, ...], dict[str, Method]] = ((), {})


# the active registry's (programs/registry.use): what the functions here read
_columns: tuple[Column, ...] = COLUMNS
_methods: tuple[Method, ...] = METHODS


def activate(columns: tuple[Column, ...], methods: tuple[Method, ...]) -> None:
    """Make these the dataset columns and timing methods the functions here read: the active
    registry's (only programs/registry.py calls it, as a registry becomes active or stops)."""
    global _columns, _methods
    _columns, _methods = columns, methods


def methods() -> tuple[Method, ...]:
    return _methods


def columns() -> tuple[Column, ...]:
    return _columns


def method(key: str) -> Method | None:
    """The catalogue's entry for a dataset method, None when the vocabulary lacks it."""
    global _index
    if _index[0] is not _methods:  # indexed again when another registry is active
        _index = (_methods, {m.key: m for m in _methods})
    return _index[1].get(key)


def is_time(key: str) -> bool:
    """A time of the matmul (compare judges it, gives a ratio)."""
    entry = method(key)
    return entry is not None and entry.time


def names_profiler(key: str) -> bool:
    """Its figures carry the profiler that took them (`... (cupti)`: column `profiler`)."""
    entry = method(key)
    return entry is not None and entry.names_profiler


def is_first_call(key: str) -> bool:
    """A time of section 2, the first call across processes."""
    entry = method(key)
    return entry is not None and entry.time and entry.section == FIRST


def words(key: str) -> str:
    """How the report names a method: its catalogue words, else its key as words."""
    entry = method(key)
    return entry.words if entry is not None else str(key).replace("_", " ")


def method_keys(**flags: bool | str) -> list[str]:
    """The methods whose fields equal `flags` (`table1=True`, `section='first call'`), in
    catalogue order."""
    return [m.key for m in _methods if all(getattr(m, k) == v for k, v in flags.items())]


def steady_methods() -> list[str]:
    """The steady-state times of a matmul (section `methods`, times): what a stopping target
    stops on and an A/A test holds to its verdicts."""
    return method_keys(section="methods", time=True)


def cpu_methods() -> list[str]:
    """The CPU tables' basis methods, the preferred first (with sync, then no sync)."""
    return [m.key for m in sorted((m for m in _methods if m.cpu_rank), key=lambda m: m.cpu_rank)]


def printed_methods() -> dict[str, str]:
    """Printed METHOD -> dataset method, for what every program prints alike."""
    return {text: m.key for m in _methods for text in m.printed}


def clocks() -> list[tuple[str, str, str, str]]:
    """The clocks section's rows: (method, profiler, row name, what the clock holds); a
    profiled method (kernel_time) has one row per profiler."""
    rows = []
    for m in _methods:
        if m.profiled:
            rows += [(m.key, p.key, f"{m.words} ({p.words})", p.clock) for p in PROFILERS]
        elif m.clock:
            rows.append((m.key, "", m.words, m.clock))
    return rows


def profiler_words(key: object, short: bool = False) -> str:
    """How the report names a profiler ('' for none): its catalogue words (`short`: its short
    name, for ratio cells), else its key."""
    if not isinstance(key, str) or not key:
        return ""
    found = next((p for p in PROFILERS if p.key == key), None)
    if found is None:
        return key
    return (found.short or found.words) if short else found.words


def figure_words(key: str, profiler: object = "", short: bool = False) -> str:
    """A figure's method as the report names it: one whose figures name a profiler, with it
    ('kernel time (ncu, L2 warm (--cache-control none))'; `short`: 'kernel time (ncu)')."""
    name = profiler_words(profiler, short)
    return f"{words(key)} ({name})" if name and names_profiler(key) else words(key)


def profile_profilers() -> dict[str, Profiler]:
    """The profilers of profile runs (ncu's variants), by key."""
    return {p.key: p for p in PROFILERS if p.cache_control}


def time_stats() -> list[str]:
    return [s.key for s in STATS if s.time]


def column_keys(group: str | None = None) -> list[str]:
    """The dataset's columns (of one group), in the CSV's order."""
    return [c.key for c in _columns if group is None or c.group == group]


def dtypes() -> dict[str, str]:
    """Column -> pandas dtype."""
    return {c.key: c.dtype for c in _columns}


def ratio_methods() -> list[str]:
    """The ratio table's methods, the headline first (the kernels' own time, then the device
    time with the launch gap kept out, then the chapter's clocks)."""
    return [m.key for m in sorted((m for m in _methods if m.ratio), key=lambda m: m.ratio)]


def size_bases() -> list[tuple[str, str]]:
    """The growth tables' bases, (method, short name), the preferred first."""
    ranked = sorted((m for m in _methods if m.size_rank), key=lambda m: m.size_rank)
    return [(m.key, m.size_basis) for m in ranked]


def breakdown_columns() -> dict[str, str]:
    """The first call taken apart: its methods -> their column words, in catalogue order."""
    return {m.key: m.words for m in _methods if m.breakdown}


def first_call_columns() -> dict[str, str]:
    """Table 2's first-call methods -> their column words, in catalogue order."""
    return {m.key: m.words for m in _methods if m.first_call_column}
