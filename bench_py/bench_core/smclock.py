"""The SM clock at the start and end of each timed block, from NVML (docs/LINES.md, ``# sm
clock`` lines), CUDA only. One NVML read before a block's first timed call and one after its
last (outside every timed interval: a read is a driver call of some µs), so a figure can be
told apart from one taken while the clock ramped or was held down. ``pynvml`` is imported here
only; where it or NVML is missing, one ``note:`` and no lines (the figures are unchanged).
torch's device is matched to NVML's by UUID; JAX's (``exec_jax.py``) by the PCI bus id the CUDA
driver gives for its ordinal (``bus_id_handle``), as burn's twin (bench-core's ``smclock.rs``)
matches cubecl's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import format as fmt
from .format import OP


class SmClock:
    """Reads the SM clock (MHz) of torch's CUDA device; `read()` is None where it cannot."""

    def __init__(self, read: Callable[[], int] | None,
                 close: Callable[[], None] | None = None) -> None:
        self._read, self._close = read, close

    def read(self) -> int | None:
        if self._read is None:
            return None
        try:
            value = int(self._read())
        except Exception:  # NVML stopped answering mid-run: no more lines, never a failure
            self._read = None
            return None
        return value if 0 <= value <= 100_000 else None

    def close(self) -> None:
        if self._close is not None:
            self._close()
            self._close = None


def open_clock(label: str, index: int, nvml: Any = None,
               find: Callable[[Any], Any] | None = None) -> SmClock:
    """NVML's SM clock of CUDA device ``index`` (torch's, matched by UUID; ``find(pynvml)``
    gives another program's handle), or a clock that reads None (with a note) off CUDA,
    without pynvml, or where NVML does not start."""
    if label != "cuda":
        return SmClock(None)
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            fmt.note("pynvml (nvidia-ml-py) is not installed: no `# sm clock` lines")
            return SmClock(None)
    try:
        nvml.nvmlInit()
    except Exception as exc:
        fmt.note(f"NVML did not start ({exc}): no `# sm clock` lines")
        return SmClock(None)
    if find is None:
        from .energy import nvml_handle  # torch's device matched to NVML's by UUID

        def find(lib: Any) -> Any:
            return nvml_handle(lib, index)

    try:
        handle = find(nvml)
    except Exception as exc:
        fmt.note(f"NVML has no handle for cuda:{index} ({exc}): no `# sm clock` lines")
        nvml.nvmlShutdown()
        return SmClock(None)
    kind = getattr(nvml, "NVML_CLOCK_SM", 1)
    return SmClock(lambda: nvml.nvmlDeviceGetClockInfo(handle, kind), nvml.nvmlShutdown)


def clock_line(label: str, shape: str, method: str, start: int | None, end: int | None) -> None:
    """``# sm clock LABEL SHAPE OP METHOD: start N MHz, end N MHz`` where both were read."""
    if start is not None and end is not None:
        fmt.emit(f"# sm clock {label} {shape} {OP} {method}: start {start} MHz, end {end} MHz")


def cuda_pci_bus_id(ordinal: int) -> str | None:
    """The PCI bus id (``0000:19:00.0``) of CUDA device ``ordinal`` as this process sees it
    (CUDA_VISIBLE_DEVICES applied), from the driver (``cuDeviceGetPCIBusId``); None where the
    driver cannot say."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        device = ctypes.c_int()
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
            return None
        buffer = ctypes.create_string_buffer(64)
        if cuda.cuDeviceGetPCIBusId(buffer, len(buffer), device) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return buffer.value.decode() or None


def bus_id_handle(nvml: Any, bus_id: str | None, what: str) -> Any:
    """The NVML device at ``bus_id``; NVML's device 0, with a note, where it is unknown."""
    if bus_id:
        return nvml.nvmlDeviceGetHandleByPciBusId(bus_id.encode())
    fmt.note(f"{what}: the CUDA driver gave no PCI bus id; reading NVML device 0's SM clock")
    return nvml.nvmlDeviceGetHandleByIndex(0)
