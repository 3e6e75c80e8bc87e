"""A stand-in `pynvml` that answers with the H200's real readings (tests/data/h200/nvml_probe.json).

The calls and constants are the ones nvidia-ml-py has (the probe used them on the H200). Phase
'idle' gives the probe's idle readings; phase 'load' what it read after its load (SM 1980 MHz,
640 W, 59 °C, no reason) and the energy counter advanced by the probe's twenty real steps.
`values` are the readings (a test may change one), `procs` the pids on the GPU, `unsupported`
the calls that raise NVMLError_NotSupported.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

PROBE = json.loads((Path(__file__).parent.parent / "data" / "h200" / "nvml_probe.json")
                   .read_text())
_POLICIES = {"POWER": 0, "THERMAL": 1, "SYNC_BOOST": 2, "BOARD_LIMIT": 3, "LOW_UTILIZATION": 4,
             "RELIABILITY": 5, "TOTAL_APP_CLOCKS": 10, "TOTAL_BASE_CLOCKS": 11}


class NVMLError(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)


class NVMLError_NotSupported(NVMLError):  # pynvml's own names
    def __init__(self) -> None:
        super().__init__("Not Supported")


class NVMLError_LibraryNotFound(NVMLError):
    def __init__(self) -> None:
        super().__init__("NVML Shared Library Not Found")


class FakeNvml(ModuleType):
    """`pynvml` with the probe's values; set `phase`, `unsupported`, `procs`, `init_error`."""

    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_TEMPERATURE_GPU = 0
    NVMLError = NVMLError
    NVMLError_NotSupported = NVMLError_NotSupported

    def __init__(self) -> None:
        super().__init__("pynvml")
        for name, value in _POLICIES.items():
            setattr(self, f"NVML_PERF_POLICY_{name}", value)
        self.phase = "idle"
        self.unsupported: set[str] = set()
        self.procs: list[int] = [p["pid"] for p in PROBE["procs"]]
        self.init_error: Exception | None = None
        self.extra_violation_ns: dict[str, int] = {}  # phase 'load': grown beyond the probe's
        self.calls: list[str] = []
        self.values: dict[str, Any] = dict(PROBE)  # a test may change a reading

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.unsupported:
            raise NVMLError_NotSupported()

    def nvmlInit(self) -> None:
        self._call("nvmlInit")
        if self.init_error is not None:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self._call("nvmlShutdown")

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return SimpleNamespace(index=index)

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return self.values["uuid"]

    def nvmlDeviceGetName(self, handle: Any) -> str:
        self._call("nvmlDeviceGetName")
        return self.values["name"]

    def _clock(self, prefix: str, kind: int) -> int:
        name = {0: "graphics", 1: "sm", 2: "mem"}[kind]
        if self.phase == "load" and prefix == "clock" and name == "sm":
            return int(self.values["clock_sm_after"])
        return int(self.values[f"{prefix}_{name}"])

    def nvmlDeviceGetClockInfo(self, handle: Any, kind: int) -> int:
        self._call("nvmlDeviceGetClockInfo")
        return self._clock("clock", kind)

    def nvmlDeviceGetMaxClockInfo(self, handle: Any, kind: int) -> int:
        self._call("nvmlDeviceGetMaxClockInfo")
        return self._clock("maxclock", kind)

    def nvmlDeviceGetApplicationsClock(self, handle: Any, kind: int) -> int:
        self._call("nvmlDeviceGetApplicationsClock")
        return self._clock("appclock", kind)

    def nvmlDeviceGetPerformanceState(self, handle: Any) -> int:
        self._call("nvmlDeviceGetPerformanceState")
        return int(self.values["pstate"])

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int:
        self._call("nvmlDeviceGetTemperature")
        return int(self.values["temp_after" if self.phase == "load" else "temp"])

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        self._call("nvmlDeviceGetPowerUsage")
        return int(self.values["power_after" if self.phase == "load" else "power_mw"])

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> int:
        self._call("nvmlDeviceGetEnforcedPowerLimit")
        return int(self.values["power_limit_mw"])

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        self._call("nvmlDeviceGetTotalEnergyConsumption")
        grown = sum(self.values["energy_steps_mj"]) if self.phase == "load" else 0
        return int(self.values["energy_mj"]) + grown

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        self._call("nvmlDeviceGetCurrentClocksEventReasons")
        return int(self.values["reasons_after" if self.phase == "load" else "reasons"])

    def nvmlDeviceGetViolationStatus(self, handle: Any, policy: int) -> Any:
        self._call("nvmlDeviceGetViolationStatus")
        name = next(n for n, v in _POLICIES.items() if v == policy)
        found = self.values[f"violation_{name}"]
        extra = self.extra_violation_ns.get(name.lower(), 0) if self.phase == "load" else 0
        return SimpleNamespace(referenceTime=found["ref_time"],
                               violationTime=found["violation_time"] + extra)

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        self._call("nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=pid, usedGpuMemory=1721761792) for pid in self.procs]
