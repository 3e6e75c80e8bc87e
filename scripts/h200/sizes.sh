#!/usr/bin/env bash
# Issue 25 on the H200: the size sweep (experiments `sizes`, `sizes-cpu`), a Nsight Compute
# cross-check of two sizes, and the report's "How cost grows" section, all under $OUT.
# Needs build/bundle.tar.xz (on the build box: CUDARC_CUDA_VERSION=13000
# .venv/bin/python -m orchestrator bundle experiments.yaml) and runs offline
# (scripts/run-offline.sh). Bounded to about 6 minutes: each step has its own timeout, a step
# cut short keeps every finished run (the store commits each run as it ends), and running the
# script again resumes each sweep where it stopped (docs/running.md: resume is automatic).
#   OUT=/some/dir scripts/h200/sizes.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
PYTHON=${PYTHON:-python3}
export PYTHON
mkdir -p "$OUT"
start=$(date +%s)
{ nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,memory.total --format=csv || true; } \
    > "$OUT/gpu.csv" 2>&1
# 1. the sweep: 13 sizes x (torch FP32, torch TF32, burn cuda) and the CPU builds x threads
timeout 210 scripts/run-offline.sh experiments.yaml "$OUT/results" --only sizes \
    > "$OUT/run-sizes.log" 2>&1
echo "sizes: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
timeout 60 scripts/run-offline.sh experiments.yaml "$OUT/results-cpu" --only sizes-cpu \
    > "$OUT/run-sizes-cpu.log" 2>&1
echo "sizes-cpu: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
# 2. an independent profiler at a launch-bound and a compute-bound size: ncu's kernel time
#    beside the programs' own clocks (report section 1b and 6b read both)
cat > "$OUT/sizes-ncu.yaml" <<'YAML'
version: 1
defaults: {reps: 10, timeout_s: 120}
builds:
  cuda: {crate: exec-gpu, features: [cuda], requires: [cuda]}
experiments:
  sizes-ncu:
    title: "Nsight Compute at two sizes: the kernels' own time"
    mode: mm
    shapes: [[256, 256], [4096, 4096]]
    profile: [ncu]
    targets:
      - {program: torch, device: cuda}
      - {program: torch, device: cuda, precision: tf32}
      - {program: burn, build: cuda, device: cuda}
YAML
timeout 60 scripts/run-offline.sh "$OUT/sizes-ncu.yaml" "$OUT/results-ncu" \
    > "$OUT/run-ncu.log" 2>&1
echo "ncu: exit $? after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
# 3. the reports (PYTHONPATH: the wheels run-offline.sh unpacked)
export PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}"
for name in results results-cpu results-ncu; do
    [ -f "$OUT/$name/results.sqlite" ] || continue
    "$PYTHON" -m orchestrator report "$OUT/$name" --out "$OUT/report-$name" \
        > "$OUT/report-$name.log" 2>&1
    "$PYTHON" -m orchestrator export "$OUT/$name" --csv "$OUT/$name.csv" >> "$OUT/steps.txt" 2>&1
done
echo "done after $(( $(date +%s) - start )) s" | tee -a "$OUT/steps.txt"
