#!/usr/bin/env bash
# The GPU check of the audit's Python sites and of its lost-records guard, in one call: build,
# the audit's GPU and CPU tests, the README's table, the relative --keep and full-disk cases on
# a real program, the per-sync cost of the Python stack and the overhead on small-gemm.
#   tests/gpu/audit_python_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
set -uo pipefail
out=${1:?usage: audit_python_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
B=$PWD/build/syncbench
export PYTHONUNBUFFERED=1
make -j"$(nproc)" "$@" all >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== tests"
SYNCBENCH=$B python3 -m pytest -q -rs tests/gpu/test_audit_python.py tests/gpu/test_audit_libsites.py tests/gpu/test_audit.py \
    tests/gpu/test_audit_fixes.py tests/cli/test_audit_launcher.py tests/cli/test_pyframes.py \
    tests/cli/test_audit_cli.py tests/cli/test_escaping.py >"$out/tests.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$out/tests.log"; tail -2 "$out/tests.log"
echo "== the guides' patterns, main thread (the README's table)"
$B audit --top 40 --csv "$out/patterns.csv" --json "$out/patterns.json" -- python3 tests/audit/torch_patterns.py --where main \
    >/dev/null 2>"$out/patterns.txt"; echo "exit $?"
echo "== torch's warnings beside the audit's sites"
$B audit -q --py-site innermost --csv "$out/warn_audit.csv" -- python3 tests/audit/torch_patterns.py \
    --where main --debug-mode --out "$out/warn_torch.json" >/dev/null 2>&1; echo "exit $?"
echo "== syncs inside a library: transformers' generate() beside torch's warnings (issue 35)"
$B audit --keep "$out/hf_recs" --json "$out/hf.json" -- python3 tests/audit/hf_lib_generate.py --warn \
    >"$out/hf_stdout.txt" 2>"$out/hf.txt"; echo "exit $?"; tail -1 "$out/hf_stdout.txt"
echo "== the gate on a print(tensor) step names the Python line"
$B audit -q --range train_step --max-syncs 0 -- python3 tests/audit/torch_item.py --mode print \
    --steps 10 >/dev/null 2>"$out/gate_print.txt"; echo "exit $?"; cat "$out/gate_print.txt"
echo "== relative --keep with cd (issue 19 item 2)"
t=$(mktemp -d); mkdir -p "$t/model"; cp tests/audit/torch_item.py "$t/model/"
(cd "$t" && $B audit -q --keep recs --max-syncs 0 -- sh -c 'cd model && python3 torch_item.py --mode item --steps 5' >/dev/null 2>"$out/keep_rel.txt"); echo "exit $? (1: the gate saw the syncs)"
cat "$out/keep_rel.txt"; ls "$t/recs" "$t/model" | head
echo "== full disk (issue 19 item 3)"
mkdir -p /mnt/sbfull && if mount -t tmpfs -o size=256k tmpfs /mnt/sbfull 2>"$out/mount.err"; then
    mkdir /mnt/sbfull/recs; dd if=/dev/zero of=/mnt/sbfull/fill bs=4k 2>/dev/null
    df -h /mnt/sbfull | tail -1
    $B audit -q --keep /mnt/sbfull/recs --max-syncs 1000 -- python3 tests/audit/torch_item.py \
        --mode item --steps 5 >/dev/null 2>"$out/full.txt"; echo "exit $? (want 1)"; cat "$out/full.txt"
    ls -la /mnt/sbfull/recs; umount /mnt/sbfull
else echo "tmpfs mount refused: $(cat "$out/mount.err")"; fi
echo "== NVTX: every kind of range"
$B audit --json "$out/nvtx.json" -- build/tests/audit_nvtx 2>"$out/nvtx.txt"; echo "exit $?"
python3 -c "import json,sys; [print(r['name'], r['domain'], r['instances'], r['total_blocking']) for r in json.load(open(sys.argv[1]))['ranges']]" "$out/nvtx.json"
echo "== the cost of the Python stack per sync"
python3 tests/gpu/audit_pycost.py --rounds 10 --items 5000 --depth 10 | tee "$out/pycost.json"
echo "== overhead on small-gemm (default mode)"
tests/gpu/audit_overhead.sh "$out" "${ROUNDS:-30}" 2>&1 | tail -4
# everything in one archive (the device returns few files)
(cd "$out" && tar czf all.tar.gz --exclude=all.tar.gz * && find . -mindepth 1 -maxdepth 1 ! -name all.tar.gz -exec rm -rf {} +)
