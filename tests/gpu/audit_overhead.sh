#!/usr/bin/env bash
# What `syncbench audit` costs a launch-bound loop: small-gemm async (one cuBLAS GEMM launch per
# iteration, no sync) alone and under the audit, paired round by round in alternating order so
# that the VM's drifts cancel: the default mode (every round), --gpu-activity and --trace (the
# first eight). The figure is the median of the per-pair ratios, with a 95 % bootstrap interval:
# single pairs swing by tens of percent on a VM whose host speed changes between processes.
#   tests/gpu/audit_overhead.sh OUTDIR [ROUNDS [GPU_ROUNDS]]
# Writes OUTDIR/audit_overhead.txt: each round's wall_us_per_iter medians, the ratios, and
# the median ratio of each mode. GPU_ROUNDS (default 8): the rounds of --gpu-activity and
# --trace. SYNCBENCH: the binary (default ./build/syncbench). make validate runs it
# (tests/validate/audit_checks.py).
set -uo pipefail
out=${1:?usage: audit_overhead.sh OUTDIR [ROUNDS [GPU_ROUNDS]]}
rounds=${2:-30}
gpu_rounds=${3:-8}
B=${SYNCBENCH:-./build/syncbench}
mkdir -p "$out"
tmp=$(mktemp -d)
args=(--scenario small-gemm --variant async --max-time 0.5 --warmup-time 0.2 -q)
one() { # one MODE CSV
    case $1 in
        plain) $B "${args[@]}" --csv "$2" ;;
        audit) $B audit -q -- $B "${args[@]}" --csv "$2" ;;
        gpu) $B audit -q --gpu-activity -- $B "${args[@]}" --csv "$2" ;;
        trace) $B audit -q --trace "$tmp/t.json" -- $B "${args[@]}" --csv "$2" ;;
    esac >/dev/null 2>>"$out/audit_overhead.err"
}
median_of() { # the wall_us_per_iter median of a run's CSV
    python3 -c "import csv,sys; print(next(r['median'] for r in csv.DictReader(open(sys.argv[1])) if r['metric']=='wall_us_per_iter'))" "$1"
}
{
echo "round mode plain_us audited_us ratio"
for r in $(seq 1 "$rounds"); do
    for mode in audit gpu trace; do
        [ $mode != audit ] && [ $r -gt "$gpu_rounds" ] && continue
        if [ $((r % 2)) = 1 ]; then one plain $tmp/p.csv; one $mode $tmp/a.csv;
        else one $mode $tmp/a.csv; one plain $tmp/p.csv; fi
        p=$(median_of $tmp/p.csv); a=$(median_of $tmp/a.csv)
        python3 -c "import sys; p,a=float(sys.argv[3]),float(sys.argv[4]); print(sys.argv[1], sys.argv[2], '%.3f %.3f %.4f' % (p, a, a/p))" $r $mode $p $a
    done
done
} | tee "$out/audit_overhead.rounds"
python3 - "$out/audit_overhead.rounds" <<'PY' | tee "$out/audit_overhead.txt"
import random, statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:] if l.strip()]
rng = random.Random(1)
for mode in ("audit", "gpu", "trace"):
    rs = [float(r[4]) for r in rows if r[1] == mode]
    if not rs:
        continue
    boots = sorted(statistics.median(rng.choices(rs, k=len(rs))) for _ in range(5000))
    lo, hi = boots[int(0.025 * len(boots))], boots[int(0.975 * len(boots)) - 1]
    m = statistics.median(rs)
    print("%s: %d pairs, median ratio %.4f (%+.1f %%), 95 %% CI [%+.1f %%, %+.1f %%], "
          "pairs from %.3f to %.3f" % (mode, len(rs), m, 100 * (m - 1), 100 * (lo - 1),
                                       100 * (hi - 1), min(rs), max(rs)))
PY
rm -rf "$tmp"
