"""A machine made of recorded command outputs (tests/data/macos/*.txt), for detection tests.

A transcript is `$ command` lines, each followed by the command's stdout; `#` lines are its
header. `host(name)` gives a detect.Host whose system and machine are what the transcript's
`platform` command printed and whose commands answer from it: a command not in the transcript
fails (None), as a missing command or an unknown sysctl name does. Every command asked is kept
in `asked`, so a test can say which commands detection needed.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.run.detect import Host

FOLDER = Path(__file__).resolve().parent / "data" / "macos"
PLATFORM = "python -c 'import platform; print(platform.system(), platform.machine())'"
PYTHON = "python"  # how transcripts write the interpreter a probe runs in


def read(name: str) -> dict[str, str]:
    """command -> stdout, from tests/data/macos/NAME.txt."""
    outputs: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in (FOLDER / f"{name}.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") and current is None:
            continue
        if line.startswith("$ "):
            current = outputs.setdefault(line[2:], [])
        elif current is not None:
            current.append(line)
    return {command: "\n".join(lines).strip() for command, lines in outputs.items()}


@dataclass
class Transcript:
    outputs: dict[str, str]
    asked: list[str] = field(default_factory=list)

    def __call__(self, argv: list[str]) -> str | None:
        command = shlex.join(argv)
        self.asked.append(command)
        return self.outputs.get(command)


def host(name: str) -> tuple[Host, Transcript]:
    """The transcript's machine, and the runner that records what was asked."""
    transcript = Transcript(read(name))
    system, machine = transcript.outputs[PLATFORM].split()
    transcript.asked.clear()
    return Host(system, machine, transcript), transcript
