#!/usr/bin/env bash
# The GPU check of the replay (issue 16), in one call: build; the validation against every fix
# scenario, the PyTorch loop and the DDP job (make validate's replay checks with --full,
# tests/validate/replay_checks.py: its table and the record streams kept); what recording the
# launches costs on the launch-bound small-gemm loop (plain, the default audit, --gpu-activity,
# --trace; three interleaved rounds); the replay's and the audit's GPU tests.
#   tests/gpu/replay_run.sh OUTDIR [make variables, e.g. DEPS_PREFIX=$PWD/.deps]
set -uo pipefail
out=${1:?usage: replay_run.sh OUTDIR [make variables]}
shift
mkdir -p "$out"
B=$PWD/build/syncbench
export PYTHONUNBUFFERED=1
make -j"$(nproc)" "$@" all >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== validation"
SYNCBENCH=$B python3 tests/validate/validate.py --only replay --full --keep "$out/validate" \
    >"$out/replay.log" 2>"$out/replay.err"
echo "validate exit $?"; cat "$out/replay.log"
cat "$out/validate/replay/replay.md"
echo "== overhead of recording on small-gemm async (wall us/iter, median of 10 reps of 1000 iters)"
sg=(--scenario small-gemm --variant async --iters 1000 --min-reps 10 --max-reps 10 -q)
for round in 1 2 3; do
  for mode in plain default gpu-activity trace; do
    f="$out/oh-$mode-$round.csv"
    case $mode in
      plain) $B "${sg[@]}" --csv "$f" >/dev/null 2>&1;;
      default) $B audit -q -- $B "${sg[@]}" --csv "$f" >/dev/null 2>&1;;
      gpu-activity) $B audit -q --gpu-activity -- $B "${sg[@]}" --csv "$f" >/dev/null 2>&1;;
      trace) $B audit -q --trace /dev/null -- $B "${sg[@]}" --csv "$f" >/dev/null 2>&1;;
    esac
    printf '%s %s %s\n' "$round" "$mode" "$(awk -F, 'NR==1{for(i=1;i<=NF;i++)h[$i]=i} $h["metric"]=="wall_us_per_iter"{print $h["median"]}' "$f")"
  done
done | tee "$out/overhead.txt"
echo "== the audit's GPU tests"
SYNCBENCH=$B python3 -m pytest -q -rs tests/gpu/test_replay.py tests/gpu/test_audit.py \
    tests/cli/test_audit_cli.py >"$out/tests.log" 2>&1
echo "pytest exit $?"; grep -E "^(FAILED|ERROR)" "$out/tests.log"; tail -2 "$out/tests.log"
# one archive: the device tool returns few files
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" && ls -la "$out.tgz"
