#!/usr/bin/env bash
# docs/results/h200 re-made (issues 23 and 24): call 1 captures the programs' new lines by hand
# (burn's queued proof with and without CUDA_LAUNCH_BLOCKING, bench_py's SM-clock, energy and
# accuracy-kernel lines, ncu with both cache controls) as parser fixtures, then starts the
# default experiments.yaml's accelerator phase (full.sh gpu) with the time left; later calls
# resume it (full.sh gpu, then full.sh rest) on the same warm machine.
#   OUT=/some/dir scripts/h200/remake.sh capture SECONDS   # call 1
#   OUT=/some/dir scripts/h200/full.sh gpu|rest SECONDS    # calls 2, 3
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
limit=${2:-560}
start=$(date +%s)
PY=${PYTHON:-python3}
mkdir -p "$OUT"
if [ -f build/bundle.tar.xz ] && [ ! -f build/.bundle-unpacked ]; then
    "$PY" -m tarfile -e build/bundle.tar.xz . && touch build/.bundle-unpacked
fi
cap=$(mktemp -d)/capture
mkdir -p "$cap"
bin=$(ls -d "$PWD"/build/bin/exec-gpu+cuda/exec-gpu 2>/dev/null || true)
if [ -n "$bin" ]; then
    (cd bench_rust/exec-gpu &&
     for shape in 1024x1024 256x256; do
         timeout 90 "$bin" --device cuda --mode mm --shape "$shape" --reps 20 --samples \
             > "$cap/burn-${shape%%x*}.out" 2> "$cap/burn-${shape%%x*}.err"
     done
     CUDA_LAUNCH_BLOCKING=1 timeout 90 "$bin" --device cuda --mode mm --shape 1024x1024 \
         --reps 20 --samples > "$cap/burn-1024-blocking.out" 2> "$cap/burn-1024-blocking.err")
fi
for p in fp32 tf32; do
    timeout 120 "$PY" bench_py/exec_gpu.py --device cuda --mode mm --reps 20 --samples \
        --precision "$p" --energy 5 > "$cap/torch_$p.log" 2> "$cap/torch_$p.err"
done
for s in 256x256 1024x1024; do
    timeout 60 "$PY" bench_py/exec_gpu.py --device cuda --mode accuracy --shape "$s" \
        --out "$cap/acc_$s" > "$cap/acc_$s.log" 2> "$cap/acc_$s.err"
    rm -rf "$cap/acc_$s"
done
for c in none all; do
    timeout 120 ncu --clock-control none --cache-control "$c" --profile-from-start off \
        --metrics gpu__time_duration.sum --csv --log-file "$cap/ncu_$c.csv" \
        "$PY" bench_py/exec_gpu.py --device cuda --reps 20 --profile-window \
        > "$cap/ncu_$c.out" 2>&1
done
echo "captures: $(( $(date +%s) - start )) s" > "$cap/steps.txt"
tar -C "$(dirname "$cap")" -cJf "$OUT/capture.tar.xz" capture
left=$(( limit - ($(date +%s) - start) - 45 ))
scripts/h200/full.sh gpu "$left"
