#!/usr/bin/env python3
"""Detection power of the regression gate, measured on two real clean runs.

    tests/gate/power.py BASE.csv CURRENT.csv [--metrics LIST] [--trials N] [--csv OUT]

Both runs need their samples files beside them (X.samples.csv: `syncbench --samples`), e.g. two
back-to-back runs of configs/ci.ini on one machine. For every gated row (metric in --metrics,
default `make -s perf-metrics`; in both runs, with samples in both) and every trial, the current
run's samples are resampled with replacement (one resample per trial), then each slowdown s of
--slowdowns (default 0,2,5,10,20 %) is injected: every sample multiplied by 1 + s for a
lower-is-better metric, divided by it for a higher-is-better one. The CSV's statistics are
recomputed from the new samples, all gated rows go into one file per trial and slowdown, and
`syncbench compare BASE TRIAL --subset` judges them. Printed per row and slowdown: the share of
trials that came out REGRESSION (at 0 %: the false REGRESSION rate), and which rows reach
>= 95 % at 10 % and at 5 %. --csv writes the same as a tidy CSV (with the inconclusive share).

Python 3 only (no numpy). Trials run in parallel (--jobs, default the CPU count); a fixed
--seed gives the same table for the same files."""
import argparse
import concurrent.futures
import csv
import math
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLOWDOWNS = [0.0, 2.0, 5.0, 10.0, 20.0]


def fail(msg):
    print(f"power.py: {msg}", file=sys.stderr)
    sys.exit(2)


def samples_path(csv_path):
    p = str(csv_path)
    return pathlib.Path((p[:-4] if p.endswith(".csv") else p) + ".samples.csv")


def key_of(r):
    return (r["scenario"], r["variant"], r["params"], r["metric"])


def read_run(path):
    """(header, {key: row}, {key: [samples in rep order]})"""
    path = pathlib.Path(path)
    sp = samples_path(path)
    if not path.is_file():
        fail(f"{path}: no such file")
    if not sp.is_file():
        fail(f"{path}: no samples file beside it ({sp}); run syncbench with --samples {sp}")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        rows = {key_of(r): r for r in reader}
    samples = {}
    with open(sp, newline="") as f:
        for r in csv.DictReader(f):
            samples.setdefault(key_of(r), []).append((int(r["rep"]), float(r["value"])))
    return header, rows, {k: [v for _, v in sorted(xs)] for k, xs in samples.items()}


def percentile(sorted_xs, q):
    """Linear interpolation, as syncbench's p05/p95."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def summary_row(row, xs):
    """row with its statistics recomputed from xs."""
    s = sorted(xs)
    mean = statistics.fmean(xs)
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    out = dict(row)
    out.update(median=repr(statistics.median(xs)), mean=repr(mean), stddev=repr(sd),
               cv=repr(100 * sd / abs(mean) if mean else 0.0))
    for col, val in (("min", s[0]), ("max", s[-1]), ("p05", percentile(s, 0.05)),
                     ("p95", percentile(s, 0.95)), ("reps", len(xs))):
        if col in out:
            out[col] = repr(val) if isinstance(val, float) else str(val)
    return out


def parse_markdown(path):
    """compare's Markdown table: {key: verdict}."""
    verdicts, head = {}, None
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if head is None:
            head = cells
            continue
        if set(cells[0]) <= set("-: "):
            continue
        verdicts[tuple(cells[:4])] = cells[-1].strip("*")
    return verdicts


class Trials:
    def __init__(self, args, base_path, cur_header, cur_rows, cur_samples, gated, workdir):
        self.args = args
        self.base = base_path
        self.header = cur_header
        self.rows = cur_rows
        self.samples = cur_samples
        self.gated = gated
        self.workdir = workdir

    def run(self, trial, slowdown):
        """One trial at one slowdown: {key: verdict}."""
        rng = random.Random(f"{self.args.seed}-{trial}")  # the same resample at every slowdown
        stem = self.workdir / f"t{trial}-s{slowdown:g}"
        csv_path = stem.with_name(stem.name + ".csv")
        md = stem.with_name(stem.name + ".md")
        run_id = f"power-{trial}"
        with open(csv_path, "w", newline="") as f, \
                open(samples_path(csv_path), "w", newline="") as sf:
            w = csv.DictWriter(f, fieldnames=self.header, lineterminator="\n")
            w.writeheader()
            sw = csv.writer(sf, lineterminator="\n")
            sw.writerow(["run_id", "scenario", "variant", "params", "metric", "rep", "value"])
            for key in self.gated:
                row = self.rows[key]
                xs = rng.choices(self.samples[key], k=len(self.samples[key]))
                factor = 1 + slowdown / 100
                xs = [x / factor if row["better"] == "higher" else x * factor for x in xs]
                out = summary_row(row, xs)
                if "run_id" in out:
                    out["run_id"] = run_id
                w.writerow(out)
                for i, x in enumerate(xs):
                    sw.writerow([run_id, *key, i + 1, repr(x)])
        cmd = [self.args.syncbench, "compare", str(self.base), str(csv_path), "--subset", "-q",
               "--markdown", str(md), "--threshold", str(self.args.threshold),
               "--confidence", str(self.args.confidence)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
        verdicts = parse_markdown(md)
        if not self.args.keep:
            for p in (csv_path, samples_path(csv_path), md):
                p.unlink()
        return verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", help="baseline run (its .samples.csv beside it)")
    ap.add_argument("current", help="current clean run (its .samples.csv beside it)")
    ap.add_argument("--metrics", help="gated metrics, comma-separated "
                    "(default: make -s perf-metrics)")
    ap.add_argument("--trials", type=int, default=200, help="trials per slowdown (default 200)")
    ap.add_argument("--slowdowns", default=",".join(f"{s:g}" for s in SLOWDOWNS),
                    help="injected slowdowns in percent (default 0,2,5,10,20)")
    ap.add_argument("--threshold", type=float, default=5, help="compare --threshold (default 5)")
    ap.add_argument("--confidence", type=float, default=99,
                    help="compare --confidence (default 99)")
    ap.add_argument("--seed", type=int, default=1, help="resampling seed (default 1)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="compares at a time (default: the CPU count)")
    ap.add_argument("--syncbench", default=os.environ.get("SYNCBENCH",
                                                          str(ROOT / "build" / "syncbench")),
                    help="the binary (default $SYNCBENCH or build/syncbench)")
    ap.add_argument("--csv", help="also write the rates as a tidy CSV")
    ap.add_argument("--keep", help="keep the trial files in this folder")
    args = ap.parse_args()
    if args.trials < 1:
        fail("--trials must be at least 1")
    try:
        slowdowns = [float(s) for s in args.slowdowns.split(",")]
    except ValueError:
        fail(f"--slowdowns {args.slowdowns}: expected numbers, comma-separated")
    if any(s < 0 for s in slowdowns):
        fail("--slowdowns: a slowdown is not negative")
    if not os.access(args.syncbench, os.X_OK):
        fail(f"{args.syncbench}: not built (make) or not executable; see --syncbench")
    metrics = args.metrics
    if metrics is None:
        r = subprocess.run(["make", "-s", "--no-print-directory", "perf-metrics"], cwd=ROOT,
                           capture_output=True, text=True)
        metrics = r.stdout.strip()
        if r.returncode or not metrics:
            fail("make -s perf-metrics failed; give --metrics LIST")
    metrics = [m for m in metrics.split(",") if m]

    _, base_rows, base_samples = read_run(args.base)
    cur_header, cur_rows, cur_samples = read_run(args.current)
    gated = [k for k in cur_rows if k[3] in metrics and k in base_rows
             and cur_samples.get(k) and base_samples.get(k)]
    if not gated:
        fail(f"no rows with metrics {','.join(metrics)} and samples in both runs")

    workdir = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(
        prefix="syncbench-power-"))
    workdir.mkdir(parents=True, exist_ok=True)
    t = Trials(args, pathlib.Path(args.base), cur_header, cur_rows, cur_samples, gated, workdir)
    counts = {(k, s): {"REGRESSION": 0, "inconclusive": 0} for k in gated for s in slowdowns}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(t.run, trial, s): s
                       for trial in range(args.trials) for s in slowdowns}
            for fut in concurrent.futures.as_completed(futures):
                s = futures[fut]
                verdicts = fut.result()
                for k in gated:
                    v = verdicts.get(k)
                    if v is None:
                        raise RuntimeError(f"compare left out {' '.join(k)}")
                    if v in counts[(k, s)]:
                        counts[(k, s)][v] += 1
    except RuntimeError as e:
        fail(str(e))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    def rate(k, s, what="REGRESSION"):
        return 100.0 * counts[(k, s)][what] / args.trials

    names = {k: " ".join(k) for k in gated}
    width = max(len(n) for n in names.values())
    print(f"detection power of `syncbench compare` (threshold {args.threshold:g} %, "
          f"{args.confidence:g} % CI): {args.trials} trials per slowdown")
    print(f"baseline {args.base}, current {args.current} (resampled with replacement per trial)")
    print("share of trials that came out REGRESSION, in percent; at 0 %: false REGRESSIONs\n")
    heads = ["reps b/c"] + [f"{s:g} %" for s in slowdowns]
    print(f"{'row':<{width}}  " + "  ".join(f"{h:>8}" for h in heads))
    for k in gated:
        reps = f"{len(base_samples[k])}/{len(cur_samples[k])}"
        print(f"{names[k]:<{width}}  {reps:>8}  " +
              "  ".join(f"{rate(k, s):8.1f}" for s in slowdowns))
    for s in (10.0, 5.0):
        if s not in slowdowns:
            continue
        good = [names[k] for k in gated if rate(k, s) >= 95]
        print(f"\nrows detecting a {s:g} % slowdown in >= 95 % of trials: {len(good)} of "
              f"{len(gated)}")
        for n in good:
            print(f"  {n}")
    if 0.0 in slowdowns:
        false = [(names[k], rate(k, 0.0)) for k in gated if counts[(k, 0.0)]["REGRESSION"]]
        print(f"\nrows with false REGRESSIONs at 0 %: {len(false)} of {len(gated)}")
        for n, r in false:
            print(f"  {n}: {r:.1f} %")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["scenario", "variant", "params", "metric", "base_reps", "current_reps",
                        "slowdown_pct", "trials", "regression_pct", "inconclusive_pct"])
            for k in gated:
                for s in slowdowns:
                    w.writerow([*k, len(base_samples[k]), len(cur_samples[k]), f"{s:g}",
                                args.trials, f"{rate(k, s):.1f}",
                                f"{rate(k, s, 'inconclusive'):.1f}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
