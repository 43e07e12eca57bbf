#!/usr/bin/env bash
# What a window of GPU activity costs outside it, and how its predictions stand against the full
# recording's (issue 49, item 5), on a launch-bound loop: tests/audit/audit_window (STEPS steps,
# each an NVTX range "step" of 8 kernels of 2 us, a 4-byte readback and a stream sync; it times
# the steps of its second half). Each round pairs a plain run with each mode, in alternating
# order (plain first in odd rounds):
#   default   syncbench audit (no GPU activity)
#   gpu       --gpu-activity (the full recording)
#   window    --gpu-activity-range WINDOW (default step:101-130: 30 steps, the typical figure's
#             20 windows, after the loop's first steps; the timed half lies outside it)
# The overhead of a pair is audited / plain - 1 of the program's own median step time; the
# prediction is the audit's saving per call of the loop's sync site (sync_step), scaled from the
# window for the window mode. The calibration is skipped (SYNCBENCH_ACTIVITY_CALIBRATE=0, as
# activity_cost.sh does: 3 to 5 s a run, outside the program's time) unless
# WINDOW_COST_CALIBRATE=1; both predicting modes are treated alike either way.
#   tests/gpu/window_cost.sh OUTDIR [PAIRS]
# PAIRS (default 10): rounds. WINDOW_COST_STEPS (default 4000), WINDOW_COST_WINDOW, and
# WINDOW_COST_PROGRAM (default build/tests/audit_window). Writes in OUTDIR: window_cost.rounds
# (round mode plain_us audited_us ratio save_per_call_us), window_cost.txt (each mode's median
# overhead with its 95 % bootstrap interval, the window's minus the default's in points, the
# window's prediction over the full one's: tests/gpu/cost_stats.py window), reports/ (each
# audited run's --json), window_cost.err (the runs' stderr). SYNCBENCH: the binary (default
# ./build/syncbench). Every run is in the foreground under timeout(1).
set -uo pipefail
out=${1:?usage: window_cost.sh OUTDIR [PAIRS]}
pairs=${2:-10}
B=${SYNCBENCH:-./build/syncbench}
prog=${WINDOW_COST_PROGRAM:-./build/tests/audit_window}
steps=${WINDOW_COST_STEPS:-4000}
window=${WINDOW_COST_WINDOW:-step:101-130}
here=$(cd "$(dirname "$0")" && pwd)
[ "${WINDOW_COST_CALIBRATE:-0}" = 1 ] || export SYNCBENCH_ACTIVITY_CALIBRATE=0
mkdir -p "$out/reports"
err="$out/window_cost.err"
: >"$err"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_one() { # MODE JSON_REPORT: the program's step_us on stdout ("NA" when the run failed)
    local mode=$1 report=$2 opts=()
    case $mode in
        default) opts=(audit -q --) ;;
        gpu) opts=(audit -q --gpu-activity --json "$report" --) ;;
        window) opts=(audit -q --gpu-activity-range "$window" --json "$report" --) ;;
    esac
    echo "== $mode" >>"$err"
    local cmd=("$prog" "$steps")
    [ "$mode" = plain ] || cmd=("$B" "${opts[@]}" "${cmd[@]}")
    timeout -k 5 600 "${cmd[@]}" >"$tmp/line" 2>>"$err" || { echo NA; return; }
    python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["step_us"])' \
        "$tmp/line" 2>>"$err" || echo NA
}

save_per_call() { # JSON_REPORT: the sync site's predicted saving per call, us ("NA": none)
    python3 - "$1" <<'PY' 2>>"$err" || echo NA
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]["predicted"]
(s,) = [s for s in p["sites"] if "sync_step" in s["site"]]
print("%.4f" % (s["save_us"] / s["calls"]) if s["save_us"] is not None else "NA")
PY
}

rounds="$out/window_cost.rounds"
echo "round mode plain_us audited_us ratio save_per_call_us" >"$rounds"
for r in $(seq 1 "$pairs"); do
    for mode in default gpu window; do
        report="$out/reports/$r-$mode.json"
        rm -f "$report"
        if [ $((r % 2)) = 1 ]; then
            p=$(run_one plain -); a=$(run_one "$mode" "$report")
        else
            a=$(run_one "$mode" "$report"); p=$(run_one plain -)
        fi
        pred=NA
        [ "$mode" = default ] || pred=$(save_per_call "$report")
        python3 -c 'import sys; p, a = sys.argv[3:5]; r = "NA" if "NA" in (p, a) else "%.4f" % (float(a) / float(p)); print(*sys.argv[1:5], r, sys.argv[5])' \
            "$r" "$mode" "$p" "$a" "$pred" | tee -a "$rounds"
    done
done
python3 "$here/cost_stats.py" window "$rounds" | tee "$out/window_cost.txt"
