#!/usr/bin/env bash
# Run a sweep on a machine with a GPU but without cargo or network (docs/gpu.md).
# Needs what `python -m orchestrator bundle` left in build/bundle.tar.xz,
# and a Python with torch, pandas, numpy, psutil and PyYAML already installed (and JAX, for
# the jax targets: the machine's own JAX, with its CUDA plugin, is the one the runs import).
#   scripts/run-offline.sh [EXPERIMENTS.yaml] [RESULTS_DIR] [extra `run` options...]
set -euo pipefail
cd "$(dirname "$0")/.."
experiments=${1:-experiments.yaml}
results=${2:-results}
shift $(( $# > 2 ? 2 : $# ))
PYTHON=${PYTHON:-python3}
if [ -f build/bundle.tar.xz ] && [ ! -f build/.bundle-unpacked ]; then
    "$PYTHON" -m tarfile -e build/bundle.tar.xz .
    touch build/.bundle-unpacked
fi
if ! ls build/wheels/*.whl >/dev/null 2>&1; then
    echo "run-offline.sh: build/wheels is missing: run" \
         "'python -m orchestrator bundle $experiments' on a machine with cargo first" >&2
    exit 2
fi
# A plan of torch runs only bundles no binary: no build/bin is then what the bundle is, and a
# burn run such a sweep still plans fails its build (no cargo here) with that reason, recorded.
if [ ! -d build/bin ]; then
    echo "run-offline.sh: note: no build/bin (a torch-only bundle): burn runs will fail to build" >&2
fi
# Wheels are zip files: unpacking them needs neither pip nor venv nor a network, and the
# machine's own torch and JAX stay the ones bench_py imports (PYTHONPATH is not passed to programs).
site=build/offline-site
if [ ! -f "$site/.unpacked" ]; then
    rm -rf "$site" && mkdir -p "$site"
    for wheel in build/wheels/*.whl; do
        "$PYTHON" -m zipfile -e "$wheel" "$site"
    done
    touch "$site/.unpacked"
fi
# exec: a `timeout` (or Ctrl-C) around this script reaches the orchestrator itself, which
# ends its sweep before the script's caller goes on (a wrapper shell died at once, so a store
# copied next was caught mid-teardown, its sweep still `running`)
PYTHONPATH="$PWD/$site${PYTHONPATH:+:$PYTHONPATH}" \
    exec "$PYTHON" -m orchestrator run "$experiments" --results "$results" "$@"
