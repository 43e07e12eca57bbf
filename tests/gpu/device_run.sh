#!/usr/bin/env bash
# Everything one GPU check needs, in one call: build, `make test` with the GPU tests, then the
# benchmark runs whose figures go into the README and the issues' closing notes.
#   tests/gpu/device_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
# Writes OUTDIR/summary.txt (GPU, torch reference, tables, suite times, compares),
# OUTDIR/make_test.log and OUTDIR/results.tar.gz (every CSV, JSON and Markdown file).
set -uo pipefail
out=${1:?usage: device_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
res=$(mktemp -d)
export PYTHONUNBUFFERED=1
B=./build/syncbench
sum="$out/summary.txt"
say() { echo "== $*" | tee -a "$sum"; }
timed() { # timed NAME command...: wall time of a suite into the summary
    local t0=$EPOCHREALTIME; "${@:2}" | tee -a "$sum"; local rc=${PIPESTATUS[0]}
    python3 -c "import sys; print('%s: %.1f s (exit %s)' % (sys.argv[1], float(sys.argv[3]) - float(sys.argv[2]), sys.argv[4]))" \
        "$1" "$t0" "$EPOCHREALTIME" "$rc" | tee -a "$sum"
}
make_vars=("$@")

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$sum"
make -j"$(nproc)" "$@" all >/tmp/syncbench-build.log 2>&1 || { tail -30 /tmp/syncbench-build.log; exit 1; }
make "$@" test 2>&1 | tee "$out/make_test.log" | grep -E "^(== |\[  PASSED|\[  FAILED)|passed|failed"
test_rc=${PIPESTATUS[0]}

say "torch reference, syncbench GEMMs, torch again"
python3 tests/gpu/torch_gemm.py | tee -a "$sum"
$B --scenario small-gemm,big-gemm --csv "$res/gemm.csv" | tee -a "$sum"
python3 tests/gpu/torch_gemm.py | tee -a "$sum"
say "scenarios"
$B --scenario readback --csv "$res/readback.csv" | tee -a "$sum"
$B --scenario copy --set bytes=4KiB,1MiB,64MiB,256MiB --csv "$res/copy.csv" | tee -a "$sum"
$B --scenario double-buffer --csv "$res/double_buffer.csv" | tee -a "$sum"

say "suites"
timed default.ini $B --config configs/default.ini --csv "$res/default.csv" --json "$res/default.json" --quiet
timed seeds.ini $B --config configs/seeds.ini --csv "$res/seeds.csv"
for i in 1 2 3; do
    timed "ci.ini run $i" $B --config configs/ci.ini --csv "$res/ci$i.csv" --samples "$res/ci$i.samples.csv" \
        --markdown "$res/ci$i.md" --quiet
done
say "pairwise compare of the three ci.ini runs on their samples (perf-check's metrics, then every metric)"
metrics=$(make -s perf-metrics)
for pair in 1:2 1:3 2:3; do
    a=${pair%:*} b=${pair#*:}
    $B compare "$res/ci$a.csv" "$res/ci$b.csv" --metric "$metrics" -q 2>&1 | sed "s/^/ci$a vs ci$b: /" | tee -a "$sum"
    $B compare "$res/ci$a.csv" "$res/ci$b.csv" -q 2>&1 | sed "s/^/ci$a vs ci$b (all metrics): /" | tee -a "$sum"
done
say "detection power of the gate: tests/gate/power.py on ci1 vs ci2 (200 trials)"
python3 tests/gate/power.py "$res/ci1.csv" "$res/ci2.csv" --trials 200 --csv "$res/power.csv" 2>&1 | tee -a "$sum"
say "a slower variant swapped in: h2d-pinned reports what h2d-pageable measured (summary rule: no samples)"
$B --scenario copy --variant h2d-pageable --set bytes=64MiB --max-time 0.3 --csv "$res/pageable.csv" --quiet
python3 - "$res/ci2.csv" "$res/ci2-slowed.csv" "$res/pageable.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
slow = {r["metric"]: r for r in csv.DictReader(open(sys.argv[3], newline=""))}
for r in rows:
    if r["scenario"] == "copy" and r["variant"] == "h2d-pinned" and r["metric"] == "GBps":
        r.update({k: slow["GBps"][k] for k in ("median", "mean", "stddev", "min", "max", "p05", "p95", "cv")})
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0]))
w.writeheader(); w.writerows(rows)
PY
echo "\$ syncbench compare ci1.csv ci2-slowed.csv --metric $metrics" | tee -a "$sum"
$B compare "$res/ci1.csv" "$res/ci2-slowed.csv" --metric "$metrics" 2>&1 | grep -E "REGRESSION|^compare|^syncbench" | tee -a "$sum"
echo "exit code: ${PIPESTATUS[0]}" | tee -a "$sum"
say "make perf-check against run 1 (its samples: bootstrap CI, confirmation run)"
make "${make_vars[@]}" perf-check BASELINE="$res/ci1.csv" PERF_MARKDOWN="$res/perf-check.md" 2>&1 | grep -E "^(perf-check|compare|syncbench|  )" | tee -a "$sum"
cp "$res/ci1.csv" "$res/baseline-h100.csv"
echo "make test exit code: $test_rc" | tee -a "$sum"
tar -C "$res" -czf "$out/results.tar.gz" .
exit "$test_rc"
