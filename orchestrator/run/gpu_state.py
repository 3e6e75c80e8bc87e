"""The GPU's state around a run, from NVML: clocks, throttle reasons, power, counters.

A figure means little without the state of the GPU that produced it: on the H200 the SM clock
idles at 345 MHz and runs at 1980 MHz; a clock-event (throttle) reason, a lowered application
clock or another process on the GPU changes every figure silently. `snapshot` reads NVML once
before a run is spawned and once after it exited (nothing runs in the orchestrator while the
program does); `delta` turns NVML's cumulative counters (total energy in mJ, violation times in
ns) into the energy of the run and the time it spent throttled (and each violation counter's
growth, kept as dataset columns: time below the application clock, ...). `Sampler` reads the SM
clock every 200 ms in a thread while an NVIDIA run runs (min, max, count; bounded like a
snapshot), for programs that cannot read it per timed block themselves (burn).

`pynvml` (the nvidia-ml-py package) is imported lazily: a CPU box, macOS or a broken driver
gives a state with a `reason` and no values, never a failed run. A field the GPU does not
support (NVMLError_NotSupported) is left out and named in `missing` with NVML's words.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

# NVML's clock-event reason bits (nvml.h, nvmlClocksEventReason*; the same as the older
# nvmlClocksThrottleReason*): fixed by the ABI, so decoded without the module's constants.
REASONS: tuple[tuple[str, int], ...] = (
    ("gpu_idle", 0x1), ("applications_clocks_setting", 0x2), ("sw_power_cap", 0x4),
    ("hw_slowdown", 0x8), ("sync_boost", 0x10), ("sw_thermal", 0x20), ("hw_thermal", 0x40),
    ("hw_power_brake", 0x80), ("display_clock_setting", 0x100))
# nvmlPerfPolicyType_t: cumulative time (ns) the clocks were held down for each cause
VIOLATIONS: dict[str, int] = {
    "power": 0, "thermal": 1, "sync_boost": 2, "board_limit": 3, "low_utilization": 4,
    "reliability": 5, "total_app_clocks": 10, "total_base_clocks": 11}
# The violations that mean throttling; low_utilization and the totals grow while it idles.
THROTTLE_VIOLATIONS = ("power", "thermal", "board_limit", "reliability")
_CLOCKS = (("sm", "NVML_CLOCK_SM", 1), ("mem", "NVML_CLOCK_MEM", 2))


def decode_reasons(mask: int) -> list[str]:
    """Names of the set bits, e.g. 5 -> ['gpu_idle', 'sw_power_cap']; unknown bits as bit_N."""
    names = [name for name, bit in REASONS if mask & bit]
    known = sum(bit for _, bit in REASONS)
    names += [f"bit_{n}" for n in range(64) if mask & ~known & (1 << n)]
    return names


def _load_nvml() -> tuple[ModuleType | None, str | None]:
    """(pynvml, None) with NVML started, or (None, why not)."""
    try:
        nvml = importlib.import_module("pynvml")
    except ImportError:
        return None, "pynvml (the nvidia-ml-py package) is not installed"
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ... (no GPU)
        return None, f"NVML did not start: {_words(exc)}"
    return nvml, None


def _words(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def device_index(nvml: ModuleType, env: Mapping[str, str]) -> tuple[Any, int] | str:
    """(handle, NVML index) of the GPU the run's cuda:0 is, or why there is none.

    CUDA_VISIBLE_DEVICES's first entry is the run's device 0: an index (NVML counts in PCI
    order, as CUDA does with CUDA_DEVICE_ORDER=PCI_BUS_ID) or a UUID prefix."""
    visible = env.get("CUDA_VISIBLE_DEVICES")
    first = visible.split(",")[0].strip() if visible is not None else "0"
    if not first or first == "-1":
        return "CUDA_VISIBLE_DEVICES hides every GPU"
    count = nvml.nvmlDeviceGetCount()
    if first.isdigit():
        index = int(first)
        if index >= count:
            return f"CUDA_VISIBLE_DEVICES names GPU {index}; NVML sees {count}"
        return nvml.nvmlDeviceGetHandleByIndex(index), index
    for index in range(count):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        uuid = nvml.nvmlDeviceGetUUID(handle)
        if (uuid.decode() if isinstance(uuid, bytes) else str(uuid)).startswith(first):
            return handle, index
    return f"no GPU with the UUID {first} of CUDA_VISIBLE_DEVICES"


class _Reader:
    """Reads NVML fields one by one; a field that raises is named in `missing`."""

    def __init__(self, nvml: ModuleType, handle: Any) -> None:
        self.nvml, self.handle = nvml, handle
        self.missing: dict[str, str] = {}

    def get(self, field: str, call: Callable[..., Any], *args: Any) -> Any:
        try:
            value = call(self.handle, *args)
        except Exception as exc:  # NVMLError_NotSupported, _NoPermission, _GpuIsLost, ...
            self.missing[field] = _words(exc)
            return None
        bound = _BOUNDS.get(field)
        if bound is not None and not _whole_within(value, bound):
            # a string clock, NaN power, a pstate past int64: kept out, never stored unchecked
            self.missing[field] = f"NVML gave {_shown(value)}, not a whole number in " \
                                  f"0..{bound}"
            return None
        return value

    def function(self, *names: str) -> Callable[..., Any] | None:
        """The first of `names` this pynvml has (newer names first)."""
        return next((getattr(self.nvml, n) for n in names if hasattr(self.nvml, n)), None)


# What each numeric field may hold (NVML's units): a value outside is not a reading
_BOUNDS: dict[str, int] = {
    **{f"{c}_{k}": 100_000 for c in ("sm", "mem") for k in ("clock_mhz", "clock_max_mhz",
                                                             "app_clock_mhz")},
    "pstate": 32, "temp_c": 1_000, "power_w": 10**8, "power_limit_w": 10**8,  # mW
    "reasons": 2**64 - 1, "energy_mj": 2**63 - 1}


def _whole_within(value: Any, bound: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= bound


def _shown(value: Any) -> str:
    text = repr(value)
    return (text if len(text) <= 40 else text[:37] + "...") + f" ({type(value).__name__})"


def _read_gpu(nvml: ModuleType, handle: Any, index: int, ours: set[int]) -> dict[str, Any]:
    r = _Reader(nvml, handle)
    name = r.get("name", nvml.nvmlDeviceGetName)
    name = name.decode("utf-8", "replace") if isinstance(name, bytes) else name
    state: dict[str, Any] = {"index": index,
                             "name": name[:200] if isinstance(name, str) else None}
    for clock, const, fallback in _CLOCKS:
        kind = getattr(nvml, const, fallback)
        state[f"{clock}_clock_mhz"] = r.get(f"{clock}_clock_mhz", nvml.nvmlDeviceGetClockInfo,
                                            kind)
        state[f"{clock}_clock_max_mhz"] = r.get(f"{clock}_clock_max_mhz",
                                                nvml.nvmlDeviceGetMaxClockInfo, kind)
        state[f"{clock}_app_clock_mhz"] = r.get(f"{clock}_app_clock_mhz",
                                                nvml.nvmlDeviceGetApplicationsClock, kind)
    state["pstate"] = r.get("pstate", nvml.nvmlDeviceGetPerformanceState)
    state["temp_c"] = r.get("temp_c", nvml.nvmlDeviceGetTemperature,
                            getattr(nvml, "NVML_TEMPERATURE_GPU", 0))
    power = r.get("power_w", nvml.nvmlDeviceGetPowerUsage)
    limit = r.get("power_limit_w", nvml.nvmlDeviceGetEnforcedPowerLimit)
    state["power_w"] = None if power is None else power / 1000
    state["power_limit_w"] = None if limit is None else limit / 1000
    reasons_call = r.function("nvmlDeviceGetCurrentClocksEventReasons",
                              "nvmlDeviceGetCurrentClocksThrottleReasons")
    reasons = r.get("reasons", reasons_call) if reasons_call else None
    state["reasons"] = reasons
    state["reason_names"] = None if reasons is None else decode_reasons(int(reasons))
    state["energy_mj"] = r.get("energy_mj", nvml.nvmlDeviceGetTotalEnergyConsumption)
    state["violations_ns"] = _violations(r)
    procs = r.get("processes", nvml.nvmlDeviceGetComputeRunningProcesses)
    others = sorted({p.pid for p in procs or [] if _whole_within(getattr(p, "pid", None),
                                                                  2**31)} - ours)
    state["other_pids"] = None if procs is None else others
    state["missing"] = r.missing
    return state


def _violations(r: _Reader) -> dict[str, int]:
    found = {}
    for name, fallback in VIOLATIONS.items():
        policy = getattr(r.nvml, f"NVML_PERF_POLICY_{name.upper()}", fallback)
        status = r.get(f"violation_{name}", r.nvml.nvmlDeviceGetViolationStatus, policy)
        ns = getattr(status, "violationTime", None) if status is not None else None
        if _whole_within(ns, 2**63 - 1):
            found[name] = ns
        elif status is not None:
            r.missing[f"violation_{name}"] = f"NVML gave {_shown(ns)}, not a count of ns"
    return found


NVML_TIMEOUT_S = 10.0  # a snapshot takes milliseconds; a hung driver must not hang the sweep
_hung: list[threading.Thread] = []  # a snapshot that never returned: no second one is started


def snapshot(env: Mapping[str, str], ours: set[int] | None = None,
             timeout_s: float = NVML_TIMEOUT_S) -> dict[str, Any]:
    """The state of the run's GPU now: {'gpu': {...}} or {'reason': why there is none}.

    `ours`: pids that are not 'another process' (the orchestrator and the run's group). NVML
    is read in a daemon thread given `timeout_s`: a call that blocks (a hung driver) gives a
    state with the reason, and later snapshots say so at once while it still hangs."""
    if any(thread.is_alive() for thread in _hung):
        return {"reason": "NVML did not answer an earlier call (still blocked): not read"}
    _hung.clear()
    found: list[dict[str, Any]] = []
    thread = threading.Thread(target=lambda: found.append(_snapshot(env, ours)),
                              name="nvml-snapshot", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        _hung.append(thread)
        return {"reason": f"NVML did not answer within {timeout_s:g} s (a hung driver?)"}
    return found[0] if found else {"reason": "NVML failed: no answer"}


def _snapshot(env: Mapping[str, str], ours: set[int] | None) -> dict[str, Any]:
    nvml, why = _load_nvml()
    if nvml is None:
        return {"reason": why}
    try:
        found = device_index(nvml, env)
        if isinstance(found, str):
            return {"reason": found}
        handle, index = found
        return {"gpu": _read_gpu(nvml, handle, index, {os.getpid(), *(ours or set())})}
    except Exception as exc:  # a device that vanished between calls: no state, no failure
        return {"reason": f"NVML failed: {_words(exc)}"}
    finally:
        with contextlib.suppress(Exception):  # shutting down cannot make the state wrong
            nvml.nvmlShutdown()


def delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """What the counters say about the run between two snapshots: energy, throttled time.

    {'energy_j', 'throttle_s', 'violations_s'}; a value neither snapshot has is None."""
    b, a = before.get("gpu"), after.get("gpu")
    if not b or not a or b.get("index") != a.get("index"):
        return {"energy_j": None, "throttle_s": None, "violations_s": {},
                "reason": before.get("reason") or after.get("reason") or "no GPU state"}
    energy = None
    if b.get("energy_mj") is not None and a.get("energy_mj") is not None:
        energy = (a["energy_mj"] - b["energy_mj"]) / 1000
    grown = {name: (a["violations_ns"][name] - ns) / 1e9
             for name, ns in b.get("violations_ns", {}).items()
             if name in a.get("violations_ns", {})}
    # NVML's counters only grow: one that went backwards (a driver reload, a reset GPU, a
    # wrapped or bogus value) measured nothing, and is kept out with its name, never stored
    # as a negative energy or time
    backwards = [name for name, value in (("energy", energy), *grown.items())
                 if value is not None and value < 0]
    energy = None if "energy" in backwards else energy
    grown = {name: value for name, value in grown.items() if name not in backwards}
    throttled = [grown[n] for n in THROTTLE_VIOLATIONS if n in grown]
    # the causes overlap in time (power and thermal at once): the largest, not the sum
    found = {"energy_j": energy, "throttle_s": max(throttled) if throttled else None,
             "violations_s": grown}
    if backwards:
        found["backwards"] = backwards
    return found


SAMPLE_INTERVAL_S = 0.2  # one NVML clock read per interval: a driver call, no GPU work
MAX_SAMPLES = 100_000  # a week-long run at the interval; past it the sampler stops reading


class Sampler:
    """The SM clock while a run runs, from NVML in a daemon thread: min, max, count.

    For programs that cannot read it themselves (burn; bench_py prints its own per timed
    block). Bounded: one read per SAMPLE_INTERVAL_S, at most MAX_SAMPLES, kept as three
    numbers; `stop` waits at most `timeout_s` for the thread (a hung NVML call leaves it
    behind, said in the result's `reason`), and never raises."""

    def __init__(self, env: Mapping[str, str], interval_s: float = SAMPLE_INTERVAL_S,
                 timeout_s: float = NVML_TIMEOUT_S) -> None:
        self.env, self.interval_s, self.timeout_s = dict(env), interval_s, timeout_s
        self.stopped = threading.Event()
        self.clocks: list[int] = []  # min and max so far (two numbers, not every reading)
        self.samples = 0
        self.reason: str | None = None
        self.thread = threading.Thread(target=self._run, name="nvml-sampler", daemon=True)

    def start(self) -> Sampler:
        if any(thread.is_alive() for thread in _hung):
            self.reason = "NVML did not answer an earlier call (still blocked): not sampled"
        else:
            self.thread.start()
        return self

    def _run(self) -> None:
        nvml, why = _load_nvml()
        if nvml is None:
            self.reason = why
            return
        try:
            found = device_index(nvml, self.env)
            if isinstance(found, str):
                self.reason = found
                return
            kind = getattr(nvml, "NVML_CLOCK_SM", 1)
            while not self.stopped.is_set() and self.samples < MAX_SAMPLES:
                value = nvml.nvmlDeviceGetClockInfo(found[0], kind)
                if _whole_within(value, _BOUNDS["sm_clock_mhz"]):
                    low, high = self.clocks or (value, value)
                    self.clocks = [min(low, value), max(high, value)]
                    self.samples += 1
                self.stopped.wait(self.interval_s)
        except Exception as exc:  # a device that vanished mid-run: what was read is kept
            self.reason = f"NVML failed while sampling: {_words(exc)}"
        finally:
            with contextlib.suppress(Exception):
                nvml.nvmlShutdown()

    def stop(self) -> dict[str, Any]:
        """{'sm_clock_min_mhz', 'sm_clock_max_mhz', 'samples', 'interval_s'} (+ 'reason')."""
        self.stopped.set()
        if self.thread.ident is not None:
            self.thread.join(self.timeout_s)
            if self.thread.is_alive():
                _hung.append(self.thread)
                self.reason = f"NVML did not answer within {self.timeout_s:g} s while sampling"
        low, high = self.clocks or (None, None)
        out: dict[str, Any] = {"sm_clock_min_mhz": low, "sm_clock_max_mhz": high,
                               "samples": self.samples, "interval_s": self.interval_s}
        if self.reason:
            out["reason"] = self.reason
        return out
