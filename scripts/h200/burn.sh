#!/usr/bin/env bash
# Issue 24, burn side, on an H200 (no cargo: the CUDA bundle's build/bin must hold exec-gpu+cuda):
#   OUT=/some/dir scripts/h200/burn.sh
# 1. the binary itself, 1024² and 256², stdout/stderr kept: the capture for
#    tests/data/test_burn_queued_capture.py::test_a_named_capture (BURN_CUDA_CAPTURE=...), and the
#    stderr notes (calibration rounds: round 0 is the first queued window, with its lead)
# 2. the same with CUDA_LAUNCH_BLOCKING=1: the proof line must say `waited in 0 of 20`
# 3. scripts/h200/burn.yaml through the orchestrator, and its report: the header's
#    `burn CUDA backend:` line, the clocks table's queued row (proof failed for the blocking
#    experiment only), the accuracy table's `autotune kernel` column for burn cuda
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder for the results}"
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
bin=$(ls -d "$PWD"/build/bin/*/exec-gpu 2>/dev/null | while read -r b; do
    "$b" --help >/dev/null 2>&1 && "$b" --device cuda --mode mm --shape 8x8 --reps 1 \
        >/dev/null 2>&1 && echo "$b" && break; done || true)
: "${bin:?no exec-gpu in build/bin runs on cuda}"
echo "binary: $bin"
cd bench_rust/exec-gpu   # cubecl's cache beside the crate, as the orchestrator starts it
for shape in 1024x1024 256x256; do
    "$bin" --device cuda --mode mm --shape "$shape" --reps 20 --samples \
        >"$OUT/burn-${shape%%x*}.out" 2>"$OUT/burn-${shape%%x*}.err" || echo "exit $? ($shape)"
done
CUDA_LAUNCH_BLOCKING=1 "$bin" --device cuda --mode mm --shape 1024x1024 --reps 20 --samples \
    >"$OUT/burn-1024-blocking.out" 2>"$OUT/burn-1024-blocking.err" || echo "exit $? (blocking)"
cd ../..
grep -h "queued\|burn backend" "$OUT"/burn-*.out "$OUT"/burn-*.err || true
for f in burn-1024.out burn-256.out burn-1024-blocking.out; do
    BURN_CUDA_CAPTURE="$OUT/$f" "$PYTHON" -m pytest -q -p no:cacheprovider \
        tests/data/test_burn_queued_capture.py -rs 2>&1 | tail -2 | sed "s/^/$f: /"
done
status=0
"$PYTHON" -m orchestrator run scripts/h200/burn.yaml --results "$OUT/results" \
    >"$OUT/sweep.log" 2>&1 || status=$?
"$PYTHON" -m orchestrator report "$OUT/results" --out "$OUT/report" >>"$OUT/sweep.log" 2>&1 \
    || status=$?
grep -E "burn CUDA backend|queued|autotune kernel|matmul_" "$OUT/report/report.md" | head -40 || true
exit $status
