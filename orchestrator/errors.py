"""The orchestrator's error types.

One base class, so the CLI can turn every expected failure into a one-line message and an exit
code instead of a traceback (pipx's model). Each error says where (file, line, YAML path) and
what was expected.
"""

from __future__ import annotations


class OrchestratorError(Exception):
    """An expected failure with a message meant for the user."""

    exit_code = 1


class InputError(OrchestratorError):
    """Bad input from the user: experiments file, arguments, a log to parse."""

    exit_code = 2


class ConfigError(InputError):
    """An experiments file that cannot be used; the message names file, line and YAML path."""

    def __init__(self, source: str, line: int | None, path: str, message: str) -> None:
        where = f"{source}:{line}" if line else source
        at = f" at {path}" if path else ""
        super().__init__(f"{where}{at}: {message}")
        self.source = source
        self.line = line
        self.path = path


class CacheSafetyError(OrchestratorError):
    """A cache deletion refused because the path is not exactly burn's cache folder."""


class StoreBusyError(OrchestratorError):
    """Another orchestrator holds the results store: nothing ran, so not 1 (runs failed)."""

    exit_code = 2


class StoreError(OrchestratorError):
    """The results store cannot be opened or written (permissions, full disk, corrupt file)."""
