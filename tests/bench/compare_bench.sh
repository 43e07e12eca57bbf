#!/bin/sh
# Times `syncbench compare` on generated syncbench CSVs: a baseline and a current file of N rows
# each (tests/bench/gen_csv.py: every key distinct, medians moved by up to +-8 %, 0.1 % of the
# rows missing and as many new), full table to a file, then with -q. Prints wall time and peak
# RSS (GNU time -v) for each size.
#
#   tests/bench/compare_bench.sh [ROWS...]     default: 10000 100000 1000000
#
# SYNCBENCH: the binary (default build/syncbench); BENCH_DIR: where the CSVs go (default a
# temporary folder, removed at the end). The target: 1M rows against 1M within 10 s and 1 GB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${SYNCBENCH:-$root/build/syncbench}
[ -x "$bin" ] || { echo "compare_bench: $bin not built; run make first" >&2; exit 2; }
if [ ! -x /usr/bin/time ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get install -y -qq time >/dev/null || { apt-get update -qq && apt-get install -y -qq time >/dev/null; }
    else
        echo "compare_bench: needs GNU time (/usr/bin/time): apt-get install -y time" >&2; exit 2
    fi
fi
if [ -n "${BENCH_DIR:-}" ]; then
    dir=$BENCH_DIR; mkdir -p "$dir"
else
    dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fi
[ $# -gt 0 ] || set -- 10000 100000 1000000

# "label wall_s cpu_s max_rss_MB exit summary"
measure() {
    label=$1; shift
    set +e
    /usr/bin/time -v -o "$dir/time.txt" "$@" >"$dir/out.txt" 2>"$dir/err.txt"
    rc=$?
    set -e
    if [ $rc -gt 1 ]; then
        echo "compare_bench: $label: exit $rc: $(cat "$dir/err.txt")" >&2; exit 1
    fi
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt" |
           awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$dir/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
    printf '%-16s %7s s wall %7s s cpu %8.1f MB max RSS   exit %d   %s\n' "$label" "$wall" \
        "$cpu" "$(echo "$rss" | awk '{ print $1 / 1024 }')" "$rc" \
        "$(tail -n 1 "$dir/out.txt" | cut -d'(' -f1)"
}

echo "syncbench compare benchmark: $bin ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "(the binary alone, loading cuBLAS, has a max RSS of $("$bin" --version >/dev/null; /usr/bin/time -f %M "$bin" --version 2>&1 >/dev/null | awk '{ printf "%.1f MB", $1 / 1024 }'))"
for n in "$@"; do
    python3 "$here/gen_csv.py" "$n" "$dir/base.csv"
    python3 "$here/gen_csv.py" "$n" "$dir/cur.csv" --seed 2 --drift 8
    size=$(du -m "$dir/base.csv" | cut -f1)
    echo "-- $n rows against $n (${size} MB per file)"
    measure "$n table" "$bin" compare "$dir/base.csv" "$dir/cur.csv"
    measure "$n -q" "$bin" compare "$dir/base.csv" "$dir/cur.csv" -q
done
