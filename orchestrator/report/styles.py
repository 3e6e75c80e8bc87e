"""One colour and one marker per framework and build, the same in every plot of every report.

A build's colour is a function of its name alone (never of its place among the series of one
plot), so `burn Flex, 1 thread` in sizes.png and in cpu_threads.png is one colour, and two
builds never share one by coming first in two plots. The marker says the framework (torch ●,
burn ■, JAX ▲, another ◆); a thread count is the line style (1 thread solid, more dashed) and
TF32 a hollow marker, so neither changes a build's colour.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from orchestrator import programs

# a build no Program names a colour for: one from these by a hash of its name (none of them is a
# known build's: programs/*/ `plot_colors`)
OTHERS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
          "#31a354", "#756bb1", "#636363", "#ad494a", "#5254a3")


def _program(framework: str) -> programs.Program | None:
    # a framework no Program is registered for (a log's, a stand-in's) gets the defaults
    return programs.active().by_name.get(framework.lower())


@dataclass(frozen=True)
class Style:
    color: str
    marker: str
    filled: bool  # hollow: TF32
    linestyle: str  # solid: one thread (or an accelerator); dashed: more threads


def base_label(label: str) -> str:
    """The build without its tags: 'cuda [tf32]' -> 'cuda', 'flex + x86-v4' -> 'flex+x86-v4'."""
    return label.split(" [", 1)[0].replace(" ", "").lower()


def color(framework: str, label: str) -> str:
    key = (framework.lower(), base_label(label))
    program = _program(framework)
    if program is not None and key[1] in program.naming.plot_colors:
        return program.naming.plot_colors[key[1]]
    return OTHERS[zlib.crc32(f"{key[0]}|{key[1]}".encode()) % len(OTHERS)]


def style(framework: str, label: str, threads: object = None) -> Style:
    try:
        many = float(threads) > 1  # type: ignore[arg-type]
    except (TypeError, ValueError):  # None, pd.NA: one thread or an accelerator
        many = False
    program = _program(framework)
    return Style(color(framework, label), program.naming.plot_marker if program else "D",
                 "[tf32]" not in label.lower(), "--" if many else "-")
