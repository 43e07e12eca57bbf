#!/usr/bin/env bash
# The GPU check of the Python package (issue 17), in one call: the package's GPU tests
# (tests/gpu/test_python_syncs.py: the suite's outcomes, the report, inside syncbench audit,
# beside torch's sync debug mode, threads, fork, the profiler, memory), what a block costs
# (make validate's python checks), then the audit's own GPU tests (the injection library they
# share; AUDIT_TESTS="FILES" runs those instead).
#   tests/gpu/python_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
set -uo pipefail
out=${1:?usage: python_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
B=$PWD/build/syncbench
export PYTHONUNBUFFERED=1
if [ "$#" -gt 0 ] || [ ! -x "$B" ]; then
  make -j"$(nproc)" "$@" all >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
echo "== the package"
SYNCBENCH=$B SYNCBENCH_PY_OUT="$out" python3 -m pytest -q -rs tests/gpu/test_python_syncs.py \
    >"$out/python.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$out/python.log" | head -20; tail -2 "$out/python.log"
for f in profiler.txt; do [ -f "$out/$f" ] && { echo "-- $f"; cat "$out/$f"; }; done
echo "== what a block costs"
SYNCBENCH=$B python3 tests/validate/validate.py --only python --json "$out/pycost.json" 2>/dev/null
[ -f "$out/pyside.json" ] && python3 -c "
import json; rows = json.load(open('$out/pyside.json'))
for r in rows: print(f\"{r['function']:18} syncbench {r['syncbench']} {r['syncbench_classes']}  torch: {r['torch']}\")"
echo "== the audit's GPU tests"
SYNCBENCH=$B python3 -m pytest -q -rs ${AUDIT_TESTS:-tests/gpu/test_audit.py tests/gpu/test_audit_fixes.py \
    tests/gpu/test_audit_python.py} >"$out/audit.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$out/audit.log" | head -20; tail -2 "$out/audit.log"
