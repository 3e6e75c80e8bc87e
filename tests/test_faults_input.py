"""Fault suite, hostile experiments files: refused at the door with every problem named, and no
small file makes big work.

The cases that provoke unbounded work (bombs, huge counts, FIFOs, files that are not files) run
`python -m orchestrator run FILE` for real, under a memory cap and a timeout; the values that
are plainly wrong (strings, env, YAML features, coercions: refused while the file is read,
before anything runs) go through `cli.main` in this process, with a stand-in Python should one
ever get through. What a user must see: exit 2, `error: FILE:LINE at PATH: what` (a file with
several problems: a summary line, then one line each), no results folder created, nothing run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from .test_faults import (
    TORCH_CPU,
    Fake,
    cli,
    fake,
    in_process,
    orchestrator,
    runs_of,
    wait_for,
    write_yaml,
)

__all__ = ["fake"]  # the fixture, used by name below

ONE = {"version": 1, "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60},
       "experiments": {"first": {"mode": "mm", "targets": TORCH_CPU}}}
HEAD = "version: 1\ndefaults: {shape: [8, 8], reps: 3}\nexperiments:\n"
TORCH = "targets: [{program: torch, device: cpu}]"


def refused(tmp_path: Path, text: str, *words: str, lines: int = 1,
            fake_python: Fake | None = None) -> str:
    """`run` the file: exit 2, `lines` lines on stderr naming the file, no results folder.
    With `fake_python`, in this process (`cli.main`), the runs a wrongly accepted file would
    start being the stand-in's; else `python -m orchestrator`, bounded."""
    exp = tmp_path / "e.yaml"
    exp.write_text(text, encoding="utf-8")
    results = tmp_path / "results"
    argv = ("run", exp, "--results", results, "--quiet")
    if fake_python is not None:
        code, err = in_process(*argv, "--python", fake_python.path)
    else:
        code, err = cli(*argv, memory_mib=1024, timeout=60)
    assert (code, err.count("\n")) == (2, lines), err
    assert err.startswith(f"error: {exp}"), err
    for word in words:
        assert word in err, err
    assert not results.exists()
    return err


# class 3: unbounded work from a small file ----------------------------------------------------
def _bomb(levels: int) -> str:
    text = 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, levels):
        text += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n"
    return text


def _mapping_bomb(levels: int) -> str:
    keys = "abcdefghij"
    text = "m0: &m0 {" + ", ".join(f"{k}: lol" for k in keys) + "}\n"
    for i in range(1, levels):
        text += f"m{i}: &m{i} {{" + ", ".join(f"{k}: *m{i - 1}" for k in keys) + "}\n"
    return text


@pytest.mark.parametrize(("text", "words"), [
    # billion laughs: ten lines, 10**9 strings once expanded
    (HEAD + "  x:\n    mode: mm\n    targets: [{program: torch, device: cpu}]\n"
     + _bomb(9), ("more than 100000 values", "alias bomb")),
    # its other shape: mappings, every key's value the level below, merged in
    (_mapping_bomb(7) + "version: 1\nexperiments: {<<: *m6}\n", ("more than 100000 values",)),
    (HEAD + "  x: " + "[" * 200_000 + "]" * 200_000 + "\n", (":4: nested more than 32 levels",)),
    ("a0: &a0 [1]\n" + "".join(f"a{i + 1}: &a{i + 1} [*a{i}]\n" for i in range(2000)),
     ("nested more than 32 levels deep (aliases followed)",)),
    ("version: 1\nexperiments: [" + "1, " * 300_000 + "1]\n", ("more than 100000 values",)),
    ("# " + "x" * 2**21 + "\n" + HEAD, ("larger than 1 MiB, the limit",)),
])
def test_small_file_big_work_is_refused_quickly(tmp_path: Path, text: str,
                                                words: tuple[str, ...]) -> None:
    refused(tmp_path, text, *words)


@pytest.mark.parametrize(("key", "value", "words"), [
    ("processes", 10**20, "at most 1000 (the limit), got 100000000000000000000"),
    ("threads", [10**20], "thread counts must be at most 4096"),
    ("reps", 10**20, "experiments.first.reps: expected at most 100000"),
    ("repeat", 10**6, "at most 1000"),
    ("timed_runs", 10**9, "at most 10000"),
    ("timeout_s", 1e300, "at most 86400"),
    ("timeout_s", float("inf"), "expected a finite number"),
    ("energy_s", 1e9, "at most 3600"),
    ("shapes", [[10**20, 8]], "each side at most 1048576"),
    ("shapes", [[65536, 65536]], "M x N at most 1073741824"),
])
def test_counts_and_sizes_past_their_limit(tmp_path: Path, key: str, value: object,
                                           words: str) -> None:
    doc = {**ONE, "experiments": {"first": {"mode": "mm", "targets": TORCH_CPU, key: value}}}
    text = write_yaml(tmp_path / "doc.yaml", doc).read_text()
    refused(tmp_path, text, f"at experiments.first.{key}", words)


def test_plan_past_the_run_limit_is_refused(tmp_path: Path) -> None:
    """Every count within its limit, their product not: the plan stops, it does not hang."""
    burn = {"program": "burn", "build": "b", "device": "cuda"}
    exp = write_yaml(tmp_path / "e.yaml", {
        "version": 1, "builds": {"b": {"crate": "exec-gpu", "features": ["cuda"]}},
        "experiments": {"many": {"mode": "mm", "processes": 1000, "repeat": 1000,
                                 "cache": ["cold"], "targets": [burn]}}})
    code, err = cli("plan", exp, "--assume", "cuda", memory_mib=1024, timeout=60)
    assert (code, err) == (2, "error: experiment 'many' takes the plan past 100000 runs, the "
                           "limit for one sweep: fewer processes, repeats, thread counts, "
                           "shapes or targets\n")


# class 5: values no program can start with, refused before the sweep starts ------------------
@pytest.mark.parametrize(("env", "words"), [
    ('{FAULT: "a\\0b"}', "at experiments.second.env.FAULT: 'a\\x00b' contains a NUL byte"),
    ('{"A=B": x}', "at experiments.second.env.A=B: environment variable name 'A=B' cannot"),
    ('{"": x}', "at experiments.second.env['']: environment variable name '' cannot"),
    ('{"A\\0": x}', "at experiments.second.env: 'A\\x00' contains a NUL byte"),
    ('{X: "\\udc80"}', "contains a lone surrogate ('\\udc80')"),
    ('{"\\ud800": x}', "contains a lone surrogate ('\\ud800')"),
    ("{X: 3}", "at experiments.second.env.X: expected a valid string (got 3)"),
    ("{X: " + "y" * 200_000 + "}", "environment value of 200000 bytes: a program can be "
     "given at most 131008"),
])
def test_env_no_program_can_take_is_refused_before_any_run(tmp_path: Path, fake: Fake,
                                                          env: str, words: str) -> None:
    good = "  first: {mode: mm, targets: [{program: torch, device: cpu}]}\n"
    text = HEAD + good + f"  second:\n    mode: mm\n    env: {env}\n" \
        "    targets: [{program: torch, device: cpu}]\n"
    refused(tmp_path, text, ":7 at ", words, fake_python=fake)


@pytest.mark.parametrize(("where", "text", "words"), [
    ("defaults", 'version: 1\ndefaults: {env: {"X=": "1"}}\nexperiments:\n'
     "  a: {mode: mm, targets: [{program: torch, device: cpu}]}\n",
     ":2 at defaults.env.X=: environment variable name"),
    ("builds", 'version: 1\nbuilds: {b: {crate: exec-cpu, env: {RUSTFLAGS: "-C\\0x"}}}\n'
     "experiments:\n  a: {mode: mm, targets: [{program: burn, build: b, device: flex}]}\n",
     ":2 at builds.b.env.RUSTFLAGS: '-C\\x00x' contains a NUL byte"),
    ("title", HEAD + '  a: {title: "\\udcff", mode: mm, targets: [{program: torch, device: '
     "cpu}]}\n", ":4 at experiments.a.title: '\\udcff' contains a lone surrogate"),
    ("feature", 'version: 1\nbuilds: {b: {crate: exec-cpu, features: ["cuda\\0"]}}\n'
     "experiments:\n  a: {mode: mm, targets: [{program: burn, build: b, device: flex}]}\n",
     ":2 at builds.b.features[0]: 'cuda\\x00' contains a NUL byte"),
    ("name", HEAD + '  "a b\\0": {mode: mm, targets: [{program: torch, device: cpu}]}\n',
     ":4 at experiments: 'a b\\x00' contains a NUL byte"),
])
def test_strings_no_program_can_take_anywhere(tmp_path: Path, fake: Fake, where: str,
                                              text: str, words: str) -> None:
    refused(tmp_path, text, words, fake_python=fake)


# class 5 and 6: the experiments file is read once, bounded, outside any deferred section ------
def _fifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "experiments.fifo"
    os.mkfifo(fifo)
    return fifo


def _blocked_on_fifo(pid: int) -> bool:
    with contextlib.suppress(FileNotFoundError):
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        return "partner" in wchan or "fifo" in wchan  # Linux: open() waits for a writer
    return False


def _write_once(fifo: Path, text: str) -> None:
    """Open for writing only once the orchestrator has it open for reading (a plain open
    would wait forever for an orchestrator that died first), write, close: end of file."""
    fds: list[int] = []

    def opened() -> bool:
        with contextlib.suppress(OSError):  # ENXIO: no reader yet
            fds.append(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        return bool(fds)
    wait_for(opened, "the orchestrator opening the FIFO")
    os.write(fds[0], text.encode())  # a few hundred bytes: the pipe takes them at once
    os.close(fds[0])


def _config_texts(results: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        return [row[0] for row in db.execute("SELECT config_text FROM sweeps")]


def test_fifo_nobody_writes_stops_at_once_on_sigterm(tmp_path: Path) -> None:
    fifo, results = _fifo(tmp_path), tmp_path / "results"
    proc = orchestrator("run", fifo, "--results", results, "--quiet")
    wait_for(lambda: _blocked_on_fifo(proc.pid), "the orchestrator opening the FIFO")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=10)  # at once: not minutes in a deferred section
    assert "Traceback" not in err, err
    assert (proc.returncode, err) == (130, "interrupted\n")
    assert not results.exists()


def test_fifo_written_once_runs_and_the_store_keeps_its_text(tmp_path: Path,
                                                             fake: Fake) -> None:
    fifo, results = _fifo(tmp_path), tmp_path / "results"
    text = write_yaml(tmp_path / "e.yaml", ONE).read_text()
    proc = orchestrator("run", fifo, "--results", results, "--quiet", "--python", fake.path)
    _write_once(fifo, text)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert [r["status"] for r in runs_of(results).values()] == ["ok"]
    assert _config_texts(results) == [text]


def test_fifo_that_never_ends_is_refused_at_the_size_limit(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path)
    with subprocess.Popen(["sh", "-c", f"yes '# comment' > {fifo}"]) as writer:
        try:
            code, err = cli("run", fifo, "--results", tmp_path / "results",
                            memory_mib=1024, timeout=60)
        finally:
            writer.kill()
    assert (code, err) == (2, f"error: {fifo}: larger than 1 MiB, the limit for an "
                           "experiments file (is it the right file?)\n")


@pytest.mark.parametrize(("make", "words"), [
    (lambda tmp: Path("/dev/zero"), "/dev/zero: larger than 1 MiB, the limit"),
    (lambda tmp: tmp, "cannot read: [Errno 21] Is a directory"),
    (lambda tmp: (tmp / "bin.yaml", (tmp / "bin.yaml").write_bytes(b"version: 1\n\xff\n"))[0],
     "bin.yaml:2: cannot read: 'utf-8' codec can't decode byte 0xff"),
])
def test_experiments_file_that_is_not_one(tmp_path: Path, make: Callable[[Path], Path],
                                          words: str) -> None:
    code, err = cli("run", make(tmp_path), "--results", tmp_path / "results",
                    memory_mib=1024, timeout=60)
    assert (code, err.count("\n")) == (2, 1) and words in err, err
    assert not (tmp_path / "results").exists()


def test_experiments_on_stdin_are_stored_as_read(tmp_path: Path, fake: Fake) -> None:
    exp = write_yaml(tmp_path / "e.yaml", ONE)
    results = tmp_path / "results"
    with exp.open() as stdin:
        code, err = cli("run", "/dev/stdin", "--results", results, "--quiet",
                        "--python", fake.path, stdin=stdin)
    assert code == 0, err
    assert _config_texts(results) == [exp.read_text()]


# class 7: YAML's own features, each a sentence ----------------------------------------------
@pytest.mark.parametrize(("text", "words"), [
    (HEAD + "  a: &a {mode: mm, targets: [*a]}\n",
     ":4 at experiments.a.targets[0]: recursive alias: the value anchored at line 4 contains "
     "itself"),
    (HEAD + "  a: &a\n    mode: mm\n    targets: [{program: torch, device: cpu}]\n"
     "    b: {<<: *a}\n", "recursive alias"),
    (HEAD + '  a: {mode: mm, reps: !!int "x", targets: [{program: torch, device: cpu}]}\n',
     ":4 at experiments.a.reps: 'x' is not a valid !!int"),
    (HEAD + "  a: {mode: !foo mm, targets: [{program: torch, device: cpu}]}\n",
     ":4 at experiments.a.mode: YAML tag !foo is not supported"),
    (HEAD + "  a: {mode: mm, targets: !!python/object/apply:os.system [ls]}\n",
     ":4 at experiments.a.targets: YAML tag !!python/object/apply:os.system is not supported"),
    (HEAD + "  a: {mode: mm, reps: !!python/name:os.system '', " + TORCH + "}\n",
     "YAML tag !!python/name:os.system is not supported"),
    (HEAD + "  a: {mode: mm, threads: !!set {1: null}, " + TORCH + "}\n",
     "YAML tag !!set is not supported here"),
    (HEAD + "  a: {mode: mm, title: !!binary aGVsbG8=, " + TORCH + "}\n",
     "YAML tag !!binary is not supported"),
    (HEAD + "  a: {mode: =, targets: [{program: torch, device: cpu}]}\n",
     "YAML tag !!value is not supported (plain values only: write the value, quoted"),
    (HEAD + "  a: {mode: mm, reps: " + "9" * 5000 + ", " + TORCH + "}\n", "is not a valid !!int"),
    (HEAD + "  a: {<<: [1], mode: mm, targets: [{program: torch, device: cpu}]}\n",
     "'<<' (YAML's merge key) takes a mapping or a list of mappings"),
    (HEAD + "  b: &b {mode: mm, " + TORCH + "}\n  a: {<<: *b, <<: *b}\n",
     ":5 at experiments.a: duplicate key '<<' (first at line 5)"),
    ("--- {version: 1}\n--- {version: 1}\n", "expected a single document"),
])
def test_yaml_features_are_a_sentence_not_a_traceback(tmp_path: Path, fake: Fake, text: str,
                                                      words: str) -> None:
    refused(tmp_path, text, words, fake_python=fake)


def test_merge_keys_work_and_keys_written_out_win(tmp_path: Path, fake: Fake) -> None:
    """Merge keys are supported (a sweep is often one experiment and its variants); the merged
    experiment is validated like any other, its lines are the anchor's."""
    exp = tmp_path / "e.yaml"
    exp.write_text(HEAD + "  base: &base {mode: mm, threads: [1], targets: "
                   "[{program: torch, device: cpu}]}\n"
                   "  two: {<<: *base, threads: [2]}\n"
                   "  three:\n    <<: [*base, {threads: [9], reps: 5}]\n", encoding="utf-8")
    results = tmp_path / "results"
    code, err = cli("run", exp, "--results", results, "--quiet", "--python", fake.path)
    assert code == 0, err
    runs = {r["experiment"]: json.loads(r["definition_json"]) for r in runs_of(results).values()}
    # written out wins; of two merged mappings, the first wins; what only one has is kept
    assert {name: (run["threads"], run["reps"]) for name, run in runs.items()} == {
        "base": (1, 3), "two": (2, 3), "three": (1, 5)}
    # the anchored value's own mistake is named where it is written, not once per merge
    exp.write_text(exp.read_text().replace("mode: mm", "mode: mn"), encoding="utf-8")
    code, err = cli("run", exp, "--results", tmp_path / "again")
    assert code == 2 and "expected 'mm', 'warm' or 'accuracy' (got 'mn')" in err, err


def test_every_problem_of_a_file_is_named(tmp_path: Path) -> None:
    text = (HEAD + "  a:\n    mode: fast\n    treads: [1]\n    targets: [{program: torch, "
            "device: gpu}]\n  b: {mode: mm, mode: warm, " + TORCH + "}\n")
    err = refused(tmp_path, text, lines=5)
    exp = tmp_path / "e.yaml"
    assert err.splitlines() == [
        f"error: {exp}: 4 problems:",
        f"  {exp}:5 at experiments.a.mode: expected 'mm', 'warm' or 'accuracy' (got 'fast')",
        f"  {exp}:6 at experiments.a.treads: unknown key (a typo?)",
        f"  {exp}:7 at experiments.a.targets[0]: unknown torch device 'gpu' (expected one of "
        "cpu, cuda, mps, auto)",
        f"  {exp}:8 at experiments.b.mode: duplicate key 'mode' (first at line 8)",
    ]


# class 8: no silent coercions --------------------------------------------------------------
@pytest.mark.parametrize(("old", "new", "words"), [
    ("shape: [8, 8]", "shape: [8.7, 8]", ":2 at defaults.shape: expected a shape [M, N] or "
     "'MxN' with positive sizes, got [8.7, 8]"),
    ("shape: [8, 8]", "shape: [true, 8]", "got [True, 8]"),
    ("shape: [8, 8]", "shape: ['8', '8']", "got ['8', '8']"),
    ("shape: [8, 8]", "shape: '١x8'", "got '١x8'"),
    ("shape: [8, 8]", "shape: 8x8.5", "got '8x8.5'"),
    ("version: 1", "version: true", ":1 at version: expected 1 (got True)"),
    ("version: 1", "version: 1.0", ":1 at version: expected 1 (got 1.0)"),
    ("reps: 3", "reps: 3.0", ":2 at defaults.reps: expected a valid integer (got 3.0)"),
    ("reps: 3", "reps: '3'", "expected a valid integer (got '3')"),
    ("reps: 3", "reps: true", "expected a valid integer (got True)"),
    ("reps: 3", "samples: 1", ":2 at defaults.samples: expected a valid boolean (got 1)"),
    ("reps: 3", "timeout_s: true", "at defaults.timeout_s: expected a valid number (got True)"),
    ("reps: 3", "timeout_s: '60'", "at defaults.timeout_s: expected a valid number"),
    ("mode: mm", "mode: mm, threads: [2.0]", "expected a valid integer or 'auto' (got 2.0)"),
    ("mode: mm", "mode: mm, processes: true", "expected a valid integer (got True)"),
])
def test_no_silent_coercions(tmp_path: Path, fake: Fake, old: str, new: str,
                             words: str) -> None:
    text = HEAD + "  a: {mode: mm, targets: [{program: torch, device: cpu}]}\n"
    assert old in text
    refused(tmp_path, text.replace(old, new, 1), words, fake_python=fake)
