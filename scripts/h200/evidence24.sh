#!/usr/bin/env bash
# Issue 24 items 5 and 6 on an H200 (engineer evidence; ~4-6 minutes, one device call): bench_py
# by hand (the new lines, captured as parser fixtures), ncu by hand with both cache controls,
# then scripts/h200/evidence24.yaml through the orchestrator (run-offline.sh: needs
# build/bundle.tar.xz or build/wheels; burn's targets also need the bundle's build/bin) with its
# report and CSV. At most 8 files come back: everything small is packed in evidence24.tar.xz.
#   OUT=/some/dir scripts/h200/evidence24.sh
# What to look at (also grepped into $OUT/summary.txt):
#   capture/torch_fp32.log   `# sm clock` lines after each method; `# energy ... idle W over
#                            DUR, net J, busy F` after the energy line (block >= 5 s)
#   capture/acc_*.log        `# kernel cuda NxN matmul accuracy kernel time (cupti): ...: NAME`
#   capture/ncu_none.csv vs ncu_all.csv   the same kernels, flushed ~9% slower at FP32
#   report/report.md         clocks section: rows "kernel time (ncu, L2 warm (--cache-control
#                            none))" and "... L2 flushed (--cache-control all))"; the "Profile
#                            runs" table with burn's autotune kernel and cache proof; the energy
#                            table's idle W / net J / busy; accuracy table's kernel column;
#                            "below its application clock" / "timed block below full clock"
#   dataset.csv              gpu_below_app_clock_s, gpu_sm_clock_run_min_mhz/_max_mhz, ...
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder the results go to}"
PY=${PYTHON:-python3}
work=$(mktemp -d)
cap="$work/capture"
mkdir -p "$cap"
run() { timeout 120 "$PY" bench_py/exec_gpu.py "$@"; }
"$PY" -c 'import pynvml, torch; print("pynvml", pynvml.__file__, "torch", torch.__version__)' \
    > "$cap/versions.txt" 2>&1
for p in fp32 tf32; do
    run --device cuda --mode mm --reps 20 --samples --precision "$p" --energy 5 \
        > "$cap/torch_$p.log" 2> "$cap/torch_$p.err"
done
for s in 256x256 1024x1024; do
    run --device cuda --mode accuracy --shape "$s" --out "$work/acc_$s" \
        > "$cap/acc_$s.log" 2> "$cap/acc_$s.err"
done
if command -v ncu >/dev/null; then
    for c in none all; do
        timeout 180 ncu --clock-control none --cache-control "$c" --profile-from-start off \
            --metrics gpu__time_duration.sum --csv --log-file "$cap/ncu_$c.csv" \
            "$PY" bench_py/exec_gpu.py --device cuda --reps 20 --profile-window \
            > "$cap/ncu_$c.out" 2>&1
    done
fi
res="$work/results"
timeout 420 scripts/run-offline.sh scripts/h200/evidence24.yaml "$res" > "$work/run.log" 2>&1
echo "run-offline: exit $?" >> "$work/steps.txt"
export PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}"
"$PY" -m orchestrator report "$res" --out "$work/report" > "$work/report.log" 2>&1
echo "report: exit $?" >> "$work/steps.txt"
"$PY" -m orchestrator export "$res" --csv "$work/dataset.csv" >> "$work/steps.txt" 2>&1
{
    cat "$work/steps.txt"
    grep -h -E "^# (sm clock|energy)|energy \(nvml\)" "$cap"/torch_*.log
    grep -h "accuracy kernel time" "$cap"/acc_*.log
    grep -h -E "L2 (warm|flushed)|Profile runs|below its application clock|below full clock|idle W|energy not aligned" \
        "$work/report/report.md" 2>/dev/null | head -40
} > "$OUT/summary.txt" 2>&1
xz -T0 -c "$res/results.sqlite" > "$OUT/results.sqlite.xz" 2>/dev/null || true
tar -C "$work" -cJf "$OUT/evidence24.tar.xz" capture report dataset.csv steps.txt run.log \
    report.log 2>/dev/null || tar -C "$work" -cJf "$OUT/evidence24.tar.xz" capture steps.txt
cat "$OUT/summary.txt"
