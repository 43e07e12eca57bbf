#!/bin/sh
# Times the audit's report of a recorded run, the replay included (`syncbench audit -q --from
# DIR`), on generated record folders (tests/bench/gen_audit_records.py: a launch, its kernel, a
# sync and its record a step, four records). Prints wall time and peak RSS (GNU time -v) per
# size. The target (issue 16): 10 million records within 60 s and linear memory on a 2-core
# machine.
#
#   tests/bench/replay_bench.sh [RECORDS...]     default: 1000000 5000000 10000000
#
# SYNCBENCH: the binary (default build/syncbench); BENCH_DIR: where the folders go (default a
# temporary folder, removed at the end); BENCH_HAND_OFFS=1: each step's kernel launched by a
# second thread the first hands it to (two "wake" records a step, six records a step).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${SYNCBENCH:-$root/build/syncbench}
[ -x "$bin" ] || { echo "replay_bench: $bin not built; run make first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "replay_bench: needs GNU time (/usr/bin/time): apt-get install -y time" >&2; exit 2; }
if [ -n "${BENCH_DIR:-}" ]; then
    dir=$BENCH_DIR; mkdir -p "$dir"
else
    dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fi
[ $# -gt 0 ] || set -- 1000000 5000000 10000000
echo "records wall_s max_rss_MB"
for n in "$@"; do
    d="$dir/r$n"
    rm -rf "$d"
    if [ "${BENCH_HAND_OFFS:-0}" = 1 ]; then
        python3 "$here/gen_audit_records.py" --hand-offs $((n / 6)) "$d"
    else
        python3 "$here/gen_audit_records.py" $((n / 4)) "$d"
    fi
    if ! /usr/bin/time -v "$bin" audit -q --from "$d" >/dev/null 2>"$dir/time.txt"; then
        echo "replay_bench: syncbench audit --from failed on $n records:" >&2
        tail -5 "$dir/time.txt" >&2
        exit 1
    fi
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$dir/time.txt" |
           awk -F: '{s=0; for(i=1;i<=NF;i++) s=s*60+$i; print s}')
    rss=$(awk -F': ' '/Maximum resident set size/{printf "%.0f", $2/1024}' "$dir/time.txt")
    echo "$n $wall $rss"
    rm -rf "$d"
done
