#!/usr/bin/env bash
# The benchmark runs behind the README's H100 figures and the closing notes, in one call:
#   tests/gpu/bench_run.sh OUTDIR
# (after `make all`). Writes OUTDIR/summary.txt and OUTDIR/runs.tar.gz (every CSV, samples CSV
# and JSON): configs/fixes.ini twice (the price list, and how well it repeats), seeds.ini,
# default.ini, three ci.ini runs with samples (the gate's clean runs), and small-gemm async
# with and without --cpu (the cv the scheduler adds).
set -uo pipefail
out=${1:?usage: bench_run.sh OUTDIR}
B=./build/syncbench
r=$(mktemp -d)
sum="$out/summary.txt"
mkdir -p "$out"
timed() { # timed NAME command...
    local t0=$EPOCHREALTIME
    "${@:2}"
    local rc=$?
    echo "$1: $(python3 -c "print('%.1f' % ($EPOCHREALTIME - $t0))") s (exit $rc)" | tee -a "$sum"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv |
    tee "$sum"
for i in 1 2; do
    timed "fixes.ini run $i" $B --config configs/fixes.ini --csv "$r/fixes$i.csv" \
        --samples "$r/fixes$i.samples.csv" --quiet
done
timed seeds.ini $B --config configs/seeds.ini --csv "$r/seeds.csv" --quiet
timed default.ini $B --config configs/default.ini --csv "$r/default.csv" --json "$r/default.json" --quiet
for i in 1 2 3; do
    timed "ci.ini run $i" $B --config configs/ci.ini --csv "$r/ci$i.csv" --samples "$r/ci$i.samples.csv" --quiet
done
echo "small-gemm async wall_us_per_iter, 5 runs each: not pinned, then --cpu 2" | tee -a "$sum"
for cpu in "" 2; do
    for i in 1 2 3 4 5; do
        $B --scenario small-gemm --variant async ${cpu:+--cpu $cpu} --max-time 1 --csv - --quiet |
            python3 -c "import csv,sys
for row in csv.DictReader(sys.stdin):
    if row['metric'] == 'wall_us_per_iter':
        print('cpu=%s median=%s cv=%s reps=%s' % ('$cpu' or '-', row['median'], row['cv'], row['reps']))" |
            tee -a "$sum"
    done
done
tar -C "$r" -czf "$out/runs.tar.gz" .
