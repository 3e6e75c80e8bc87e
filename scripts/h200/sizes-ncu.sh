#!/usr/bin/env bash
# Issue 25's independent check on an H200: each accelerator target of `sizes` (PyTorch FP32 and
# TF32, burn cuda) at three sizes under Nsight Compute (`profile: [ncu]`, --clock-control none),
# so the kernels' own time stands beside each program's clocks (report 6b's kernel column; burn's
# size sweep otherwise has its queued device time only). Offline, bounded; results under $OUT.
#   OUT=/dir scripts/h200/sizes-ncu.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
limit=${1:-150}
PYTHON=${PYTHON:-python3}
export PYTHON
mkdir -p "$OUT"
scripts/h200/unpack.sh || exit 2
cat > build/sizes-ncu.yaml <<'YAML'
version: 1
defaults: {reps: 10, timeout_s: 120}
builds:
  cuda: {crate: exec-gpu, features: [cuda], requires: [cuda]}
experiments:
  sizes-ncu:
    title: "Nsight Compute at three sizes: the kernels' own time beside each program's clocks"
    mode: mm
    shapes: [[256, 256], [1024, 1024], [4096, 4096]]
    profile: [ncu]
    targets:
      - {program: torch, device: cuda}
      - {program: torch, device: cuda, precision: tf32}
      - {program: burn, build: cuda, device: cuda}
YAML
start=$(date +%s)
timeout "$limit" scripts/run-offline.sh build/sizes-ncu.yaml build/sizes-ncu --quiet \
    > "$OUT/run-sizes-ncu.log" 2>&1
echo "sizes-ncu: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps-ncu.txt"
# a sweep cut by `timeout` leaves its last runs in the WAL: SQLite's backup copies both
"$PYTHON" scripts/h200/store_copy.py build/sizes-ncu/results.sqlite build/sizes-ncu.sqlite
xz -T0 -c build/sizes-ncu.sqlite > "$OUT/results-sizes-ncu.sqlite.xz"
