#!/usr/bin/env bash
# Everything the audit's GPU check needs, in one call: build, the audit's tests, the reports
# the README and the closing note show, the timeline figure and the overhead benchmark.
#   tests/gpu/audit_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
set -uo pipefail
out=${1:?usage: audit_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
B=./build/syncbench
make -j"$(nproc)" "$@" all >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
command -v addr2line >/dev/null && echo "addr2line: yes" || echo "addr2line: no"
echo "== tests"
SYNCBENCH=$PWD/$B python3 -m pytest -q -rs tests/gpu/test_audit.py tests/gpu/test_audit_fixes.py \
    tests/cli/test_audit_cli.py \
    tests/cli/test_timeline.py tests/cli/test_no_cuda.py >"$out/tests.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$out/tests.log"; tail -3 "$out/tests.log"
echo "== torch .item() loop, 100 steps: the default mode, then --gpu-activity"
$B audit --csv "$out/torch_item_default.csv" -- python3 tests/audit/torch_item.py \
    --mode item --steps 100 2>&1 | tee "$out/torch_item_default.txt"
$B audit --gpu-activity --csv "$out/torch_item_gpu.csv" -- python3 tests/audit/torch_item.py \
    --mode item --steps 100 2>&1 | tee "$out/torch_item_gpu.txt"
$B audit --csv "$out/torch_item.csv" --json "$out/torch_item.json" \
    --trace "$out/torch_item.trace.json" -- python3 tests/audit/torch_item.py --mode item --steps 100 \
    2>&1 | tee "$out/torch_item.txt"
echo "exit ${PIPESTATUS[0]}"
python3 plot/timeline.py "$out/torch_item.trace.json" -o "$out/timeline.png" 2>&1
echo "== the gate: sync-free twin, then one print(tensor)"
for mode in free print; do
    $B audit -q --range train_step --max-syncs 0 -- python3 tests/audit/torch_item.py --mode $mode --steps 100 \
        >"$out/gate_$mode.txt" 2>&1
    echo "$mode: exit $?"; cat "$out/gate_$mode.txt" | tail -8
done
echo "== syncbench's own scenario"
$B audit --gpu-activity --csv "$out/scenario.csv" -- $B --scenario small-gemm --variant sync-device,sync-item \
    --iters 200 --min-reps 5 --max-reps 5 -q 2>&1 | tee "$out/scenario.txt"
echo "== overhead"
tests/gpu/audit_overhead.sh "$out" 30 2>&1 | tail -3
# everything but the summary in one archive (the device returns few files)
cd "$out" && tar czf audit_outputs.tar.gz --exclude=audit_outputs.tar.gz --exclude=run.log \
    --exclude=timeline.png * && find . -mindepth 1 -maxdepth 1 ! -name audit_outputs.tar.gz \
    ! -name run.log ! -name timeline.png -exec rm -rf {} +
