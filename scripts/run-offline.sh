#!/usr/bin/env bash
# Run a sweep on a machine with a GPU but without cargo or network (README: Running on an
# NVIDIA GPU). Needs what `python -m orchestrator bundle` left in build/bin and build/wheels,
# and a Python with torch, pandas, numpy, psutil and PyYAML already installed.
#   scripts/run-offline.sh [EXPERIMENTS.yaml] [RESULTS_DIR] [extra `run` options...]
set -euo pipefail
cd "$(dirname "$0")/.."
experiments=${1:-experiments.yaml}
results=${2:-results}
shift $(( $# > 2 ? 2 : $# ))
PYTHON=${PYTHON:-python3}
if [ ! -d build/bin ] || [ ! -d build/wheels ]; then
    echo "run-offline.sh: build/bin and build/wheels are missing: run" \
         "'python -m orchestrator bundle $experiments' on a machine with cargo first" >&2
    exit 2
fi
# A venv that sees the machine's own torch (--system-site-packages) plus the carried wheels.
if [ ! -x .venv-offline/bin/python ]; then
    "$PYTHON" -m venv --system-site-packages .venv-offline
fi
.venv-offline/bin/python -m pip install --quiet --no-index --find-links build/wheels pydantic rich
.venv-offline/bin/python -m orchestrator run "$experiments" --results "$results" "$@"
