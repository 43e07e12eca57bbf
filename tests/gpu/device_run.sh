#!/usr/bin/env bash
# Everything one GPU check needs, in one call: build, `make test` with the GPU tests, then the
# benchmark runs whose figures go into the README and the issues' closing notes.
#   tests/gpu/device_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
# Writes OUTDIR/summary.txt (GPU, torch reference, tables), make_test.log and one CSV per run.
set -uo pipefail
out=${1:?usage: device_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
B=./build/syncbench
sum="$out/summary.txt"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$sum"
make -j"$(nproc)" "$@" all >/tmp/syncbench-build.log 2>&1 || { tail -30 /tmp/syncbench-build.log; exit 1; }
make "$@" test 2>&1 | tee "$out/make_test.log" | grep -E "^(== |\[  PASSED|\[  FAILED)|passed|failed"
test_rc=${PIPESTATUS[0]}

python3 tests/gpu/torch_gemm.py | tee -a "$sum"
$B --scenario small-gemm,big-gemm --csv "$out/gemm.csv" | tee -a "$sum"
python3 tests/gpu/torch_gemm.py | tee -a "$sum"
$B --scenario readback --csv "$out/readback.csv" | tee -a "$sum"
$B --scenario copy --set bytes=4KiB,1MiB,64MiB,256MiB --csv "$out/copy.csv" | tee -a "$sum"
$B --scenario double-buffer --csv "$out/double_buffer.csv" | tee -a "$sum"
echo "make test exit code: $test_rc" | tee -a "$sum"
exit "$test_rc"
