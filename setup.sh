#!/usr/bin/env bash
# Set up everything the project needs on a fresh machine: a virtual environment (.venv) with the
# orchestrator, its dependencies, PyTorch and the test tools. Idempotent: a second run only
# checks. The packages are installed by uv (from PyPI, into the venv first): it downloads in
# parallel and keeps unpacked wheels in its cache (~/.cache/uv), which a second clone links
# from: PyTorch's Linux wheels are several GB, and pip took 97 s for them on every clone here
# (its cache stayed empty) where uv takes ~19 s cold and ~2 s warm (BENCHMARKS.md). Where uv
# cannot be installed, pip does the same install.
# The burn crates are built by the orchestrator itself (`run` and `build`), with cargo; their
# crates are downloaded here, in the background while pip installs.
# `./setup.sh --tests` (README command 2) also sets up the outside programs the tests drive
# (sshd, rsync, Slurm, munge, Chromium): installed where it can (root with apt-get), else it says
# which tests will be skipped; with CI=true a part it cannot install fails it (tests/parts.py).
set -euo pipefail
cd "$(dirname "$0")"

tests=
for arg in "$@"; do
    case "$arg" in
        --tests) tests=1 ;;
        *) echo "usage: ./setup.sh [--tests]   (unknown argument '$arg')" >&2; exit 2 ;;
    esac
done

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup.sh: Python 3.11 or newer is needed (tried '$PYTHON'; set PYTHON=...)" >&2
    exit 2
fi
# cargo's crate downloads (a cold registry: the index and a few hundred crates) go on in the
# background while pip installs, so that the first build compiles at once; joined below
fetch=
if command -v cargo >/dev/null 2>&1; then
    mkdir -p build
    host=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
    (cd bench_rust && exec cargo fetch --quiet ${host:+--target "$host"}) \
        > build/cargo-fetch.log 2>&1 &
    fetch=$!
    trap 'kill "$fetch" 2>/dev/null || true' EXIT  # setup failed before joining it: not left behind
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.setup-stamp
# hashlib, not sha256sum: macOS has no sha256sum (the same hex digest either way)
want="$("$PYTHON" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' pyproject.toml) bytecode"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    if .venv/bin/python -m pip install --quiet 'uv>=0.5,<1' 2>/dev/null; then
        .venv/bin/python -m uv pip install --quiet --python .venv/bin/python -e '.[bench,test]'
    else
        echo "setup.sh: uv could not be installed; pip installs instead (slower)" >&2
        .venv/bin/python -m pip install --quiet --upgrade pip
        .venv/bin/python -m pip install --quiet -e '.[bench,test]'
    fi
    # Every module compiled to bytecode now, as pip does on install and uv does not: where
    # PYTHONDONTWRITEBYTECODE is set (this box sets it) no process ever writes a .pyc, and each
    # one compiled pandas, torch, ... from source again: importing pandas took 2.3 s of CPU
    # instead of 0.7 s, a CLI test file 127 s instead of 53 s (BENCHMARKS.md). The orchestrator's
    # own sources too; an edited one is compiled afresh (Python checks each .pyc's source time).
    # A file that does not compile (a package's Python 2 example) costs nothing: no exit here.
    .venv/bin/python -m compileall -q -j 0 .venv/lib orchestrator bench bench_py >/dev/null 2>&1 || true
    echo "$want" > "$stamp"
fi
if [ -z "$fetch" ]; then
    echo "setup.sh: cargo not found: burn experiments will be recorded as failed builds" \
         "unless binaries built elsewhere are in build/bin (docs/gpu.md)" >&2
elif ! wait "$fetch"; then  # no failure of setup: the builds fetch again and say why they fail
    echo "setup.sh: cargo fetch failed (build/cargo-fetch.log); the builds will try again" >&2
fi
if [ -n "$tests" ]; then
    .venv/bin/python -m tests.parts  # SETUP_TESTS_DRY_RUN=1: says what it would install
fi
echo "setup.sh: ready (.venv/bin/python -m orchestrator --help)"
