"""The hosts file: each host's name, how to reach it, its Python and work folder, and how work
is placed there (directly, or through Slurm on a cluster's login node).

Validated like the experiments file (pydantic, unknown keys are errors), with every problem
named by file, line and YAML path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from orchestrator.experiments.messages import problems
from orchestrator.experiments.yamlsource import load_yaml, problems_error

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_TIME = re.compile(r"(\d+-)?\d+(:\d{2}){0,2}")  # Slurm's --time: MM, HH:MM:SS, D-HH:MM


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Slurm(_Strict):
    """`sbatch --wait --exclusive` on the login node the host names."""

    partition: str | None = None
    gpus: int | None = Field(None, ge=0, le=64)
    node: str | None = None  # --nodelist
    time: str | None = None  # --time of the measuring job
    build_time: str | None = None  # --time of the (non-exclusive) build job
    options: list[str] = []  # further sbatch options, e.g. ["--account=abc"]

    @field_validator("time", "build_time")
    @classmethod
    def _slurm_time(cls, value: str | None) -> str | None:
        if value is not None and not _TIME.fullmatch(value):
            raise ValueError("expected Slurm's --time, e.g. 30, 2:00:00 or 1-00:00")
        return value


class Host(_Strict):
    ssh: str = Field(min_length=1)  # an OpenSSH destination: user@host or a ~/.ssh/config alias
    ssh_options: list[str] = []  # e.g. ["-F", "ssh_config"] or ["-p", "2222"]
    python: str = "python3"  # the Python that runs the orchestrator there
    cargo: str = "cargo"  # cargo there, for setup.sh (a name on its PATH, or a path)
    workdir: str = Field(min_length=1)  # the project's folder there (created)
    setup: Literal["setup.sh", "bundle", "none"] = "setup.sh"
    push: Literal["auto", "tar"] = "auto"  # auto: rsync where both ends have it, else tar
    place: Literal["direct", "slurm"] = "direct"
    slurm: Slurm | None = None

    @field_validator("ssh")
    @classmethod
    def _destination(cls, value: str) -> str:
        if value.startswith("-") or any(c.isspace() for c in value):
            raise ValueError("expected an OpenSSH destination (user@host or a config alias)")
        if "://" in value:  # ssh takes ssh://host:port, rsync reads it as a host named 'ssh'
            raise ValueError("an ssh:// address is not taken (rsync would read it as a host "
                             "named 'ssh'): write user@host, the port in ssh_options "
                             "[\"-p\", \"PORT\"] or in ~/.ssh/config")
        return value

    @field_validator("workdir")
    @classmethod
    def _absolute(cls, value: str) -> str:
        # '~' would reach the host quoted (a folder named '~'), and Slurm's -D needs a full path
        if not value.startswith("/"):
            raise ValueError("expected an absolute path on the host (no '~')")
        return value

    def slurm_or_default(self) -> Slurm:
        return self.slurm or Slurm()


class HostsFile(_Strict):
    version: Literal[1] = 1
    hosts: dict[str, Host] = Field(min_length=1)

    @field_validator("hosts")
    @classmethod
    def _names(cls, value: dict[str, Host]) -> dict[str, Host]:
        for name in value:
            if not _NAME.fullmatch(name):
                raise ValueError(f"host name {name!r}: expected letters, digits, '.', '_', '-' "
                                 "(it names a folder)")
        return value


def load(path: Path, only: list[str] | None = None) -> HostsFile:
    """Read and validate a hosts file; ConfigError (exit 2) naming every problem."""
    located = load_yaml(path)
    found = located.problems
    if not isinstance(located.data, dict):
        raise problems_error(located.source, found or [(1, (), "expected a mapping with "
                                                           "'version' and 'hosts'")])
    try:
        hosts = HostsFile.model_validate(located.data)
    except ValidationError as exc:
        known = [p for _line, p, _what in found]
        found += [(located.line_of(loc), loc, message) for loc, message in problems(exc.errors())
                  if not any(loc[:len(p)] == p for p in known)]
        raise problems_error(located.source, found) from None
    if found:
        raise problems_error(located.source, found)
    missing = [n for n in only or [] if n not in hosts.hosts]
    if missing:
        raise problems_error(located.source, [(None, ("hosts",), f"no host named {missing[0]!r} "
                                               f"(its hosts: {', '.join(hosts.hosts)})")])
    if only:
        return HostsFile(hosts={n: h for n, h in hosts.hosts.items() if n in only})
    return hosts
