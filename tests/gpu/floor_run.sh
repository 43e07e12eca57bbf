#!/usr/bin/env bash
# The harness against a plain floor (issue 36), in one call:
#   tests/gpu/floor_run.sh OUTDIR [make variables, e.g. CUDA_ARCHS=90]
# Builds, then runs make validate's floor checks (tests/validate/floor_checks.py): build/syncbench-
# floor and the syncbench runs that time the same primitives, in 8 pairs in alternating order
# (SYNCBENCH_FLOOR_PAIRS). Prints the floor's table and
# validate's; writes OUTDIR/validate.txt (both tables), OUTDIR/validate.err (progress),
# OUTDIR/floor.json (validate's rows), OUTDIR/gpu.txt, and keeps every run's files in
# OUTDIR/validate/floor/ (floor-N.csv and .txt, syncbench-N.csv, floor.ini, floor.md).
# Exit: validate's (1 on a MISS or an ERROR).
set -uo pipefail
out=${1:?usage: floor_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
make -j"$(nproc)" "$@" all >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv | tee "$out/gpu.txt"
make --no-print-directory "$@" validate \
    VALIDATE_ARGS="--only floor --keep $out/validate --json $out/floor.json" \
    >"$out/validate.txt" 2>"$out/validate.err"
rc=$?
cat "$out/validate.txt"
echo "validate exit $rc (progress: $out/validate.err; files: $out/validate/floor/)"
exit $rc
