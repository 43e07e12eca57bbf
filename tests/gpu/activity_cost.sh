#!/usr/bin/env bash
# Where --gpu-activity's cost goes on a launch-bound loop (issue 36): small-gemm async (one
# cuBLAS GEMM launch per iteration, no sync) alone and under the audit, paired round by round in
# alternating order (plain first in odd rounds) as tests/gpu/audit_overhead.sh does, for the
# default mode (with and without its hand-offs), --gpu-activity whole, a window of GPU activity
# (--gpu-activity-range warmup: the warm-up's one instance, so that every measured repetition
# runs outside the window, at what the window costs outside it), and --gpu-activity with
# each kind of record turned off in turn, with only the runtime's or only the driver's launch
# records, with kernels alone, with none, with other buffer sizes, no periodic flush, and
# buffers handed over zeroed (the developer knobs of docs/dev/testing.md). The calibration is skipped
# (SYNCBENCH_ACTIVITY_CALIBRATE=0): it runs before the program and costs it nothing, but 3 to
# 5 s a run. Each run measures 0.3 s after a 0.1 s warm-up (about 0.5 s plain, 1 to 2 s
# audited).
#   tests/gpu/activity_cost.sh OUTDIR [PAIRS]
# PAIRS (default 5): rounds, each a pair of every variant (the 17 chosen below;
# ACTIVITY_COST_VARIANTS: those named, space-separated). A round is started only while it fits
# the budget (ACTIVITY_COST_BUDGET_S, default 200 s from the script's start, the census
# included; the previous round's time as its estimate), and no pair starts a minute past it.
# First a census (about 10 s; ACTIVITY_COST_CENSUS=0: none): the records of the loop and of
# small-gemm sync-item (.item()'s copy and sync) kept, with both launch domains, with the
# runtime's only and with the driver's only: the records per kernel of each kind, which API
# record each kernel's and copy's correlation id is found in, and the replay's figures from each
# (is one API record per launch enough?).
# Writes in OUTDIR: runs/ (each run's CSV, and runs/index), activity_cost.rounds (round variant
# plain_us audited_us ratio), activity_cost.txt (the table: per variant, the median overhead of
# its pairs with their min and max, and the median over rounds of its ratio minus
# --gpu-activity's, in points), census.txt, census/ (the kept records and --json reports),
# activity_cost.err (the runs' stderr). SYNCBENCH: the binary (default ./build/syncbench). Every
# run is in the foreground under timeout(1): nothing is left running.
set -uo pipefail
out=${1:?usage: activity_cost.sh OUTDIR [PAIRS]}
pairs=${2:-5}
budget=${ACTIVITY_COST_BUDGET_S:-200}
B=${SYNCBENCH:-./build/syncbench}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/census"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export SYNCBENCH_ACTIVITY_CALIBRATE=0
loop=(--scenario small-gemm --variant async --max-time 0.3 --warmup-time 0.1 -q)
# The census's runs: a fixed, small number of iterations (records of about 1 MB)
fixed=(--iters 200 --min-reps 3 --max-reps 3 --warmup 1 --warmup-time 0 -q)
err="$out/activity_cost.err"
: >"$err"
off=SYNCBENCH_ACTIVITY_OFF
# NAME ENV... (the environment of the audited run; "-" none); "default..." is the audit without
# --gpu-activity (which records the hand-offs too), "gpu-window" --gpu-activity-range warmup, every
# other one is --gpu-activity. The event records, synchronizations and
# streams come once a repetition of 1000 iterations, not an iteration: turned off together by
# default (gpu-no-order), alone when ACTIVITY_COST_VARIANTS names them.
variants=(
    "default -"
    "default-no-waits $off=waits"
    "gpu -"
    "gpu-window -"
    "gpu-no-kernels $off=kernels"
    "gpu-no-copies $off=memcpy,memset"
    "gpu-rt-launches $off=drv-launches"
    "gpu-drv-launches $off=rt-launches"
    "gpu-no-launches $off=rt-launches,drv-launches"
    "gpu-no-order $off=events,syncs,streams"
    "gpu-no-events $off=events"
    "gpu-no-syncs $off=syncs"
    "gpu-no-streams $off=streams"
    "gpu-no-waits $off=waits"
    "gpu-kernels-only $off=memcpy,memset,rt-launches,drv-launches,events,syncs,streams,waits"
    "gpu-none $off=all"
    "gpu-buf1 SYNCBENCH_ACTIVITY_BUFFER_MB=1"
    "gpu-buf64 SYNCBENCH_ACTIVITY_BUFFER_MB=64"
    "gpu-flush0 SYNCBENCH_ACTIVITY_FLUSH_MS=0"
    "gpu-zeroed SYNCBENCH_ACTIVITY_ZEROED=1"
)
chosen=${ACTIVITY_COST_VARIANTS:-default default-no-waits gpu gpu-window gpu-no-kernels gpu-no-copies gpu-rt-launches \
gpu-drv-launches gpu-no-launches gpu-no-order gpu-no-waits gpu-kernels-only gpu-none gpu-buf1 \
gpu-buf64 gpu-flush0 gpu-zeroed}

run() { # run TIMEOUT_S CMD...: stderr to the err file, stdout dropped
    echo "== $*" >>"$err"
    timeout -k 5 "$@" >/dev/null 2>>"$err"
}
one() { # one VARIANT CSV
    rm -f "$2"
    local name=${1%% *} envs=${1#"${1%% *}"} gpu=--gpu-activity
    envs=${envs# }
    [ "$envs" = - ] && envs=
    case $name in default*) gpu= ;; gpu-window) gpu="--gpu-activity-range warmup" ;; esac
    if [ "$name" = plain ]; then
        run 60 "$B" "${loop[@]}" --csv "$2"
    else
        run 90 env $envs "$B" audit -q $gpu -- "$B" "${loop[@]}" --csv "$2"
    fi
}

# The census (ACTIVITY_COST_CENSUS=0: none)
[ "${ACTIVITY_COST_CENSUS:-1}" = 0 ] || for wl in async sync-item; do
    for cfg in "full -" "rt-only $off=drv-launches" "drv-only $off=rt-launches"; do
        name=${cfg%% *} envs=${cfg#* }
        [ "$envs" = - ] && envs=
        d="$out/census/$wl-$name"
        rm -rf "$d" "$d.json"
        run 90 env $envs "$B" audit -q --gpu-activity --keep "$d" --json "$d.json" -- \
            "$B" --scenario small-gemm --variant "$wl" "${fixed[@]}" ||
            echo "census $wl $name: exit $?" >>"$err"
    done
done
[ "${ACTIVITY_COST_CENSUS:-1}" = 0 ] && : >"$out/census.txt" ||
    python3 "$here/cost_stats.py" census "$out"/census/*-full "$out"/census/*-rt-only \
        "$out"/census/*-drv-only >"$out/census.txt" 2>>"$err"

# Each pair's two CSVs go to OUTDIR/runs/ (R-VARIANT-plain.csv, R-VARIANT-audited.csv), listed
# in runs/index in the order they ran; the pairs file and the table are made from them at the end
# (a call cut short leaves them for `cost_stats.py runs`).
runs="$out/runs"
rm -rf "$runs"
mkdir -p "$runs"
last=0
for r in $(seq 1 "$pairs"); do
    if [ "$r" -gt 1 ] && [ $((SECONDS + last)) -ge "$budget" ]; then
        echo "budget: $((r - 1)) rounds in ${SECONDS} s; round $r would not fit ${budget} s" |
            tee -a "$err"
        break
    fi
    start=$SECONDS
    for v in "${variants[@]}"; do
        case " $chosen " in *" ${v%% *} "*) ;; *) continue ;; esac
        [ "$SECONDS" -gt $((budget + 60)) ] && break # a round ran far over
        p="$runs/$r-${v%% *}-plain.csv" a="$runs/$r-${v%% *}-audited.csv"
        if [ $((r % 2)) = 1 ]; then one plain "$p"; one "$v" "$a"
        else one "$v" "$a"; one plain "$p"; fi
        echo "$r ${v%% *}" >>"$runs/index"
    done
    last=$((SECONDS - start))
    echo "round $r: $last s"
done
python3 "$here/cost_stats.py" runs "$runs" "$out/activity_cost.rounds" >"$out/activity_cost.txt"
cat "$out/census.txt" "$out/activity_cost.txt"
echo "activity_cost: ${SECONDS} s"
