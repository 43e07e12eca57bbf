"""Synthetic syncbench runs for the gate's CPU tests: a CSV (the real schema, statistics computed
from the samples) and the samples file beside it, and compare's table read back."""
import pathlib
import random
import statistics

HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")
SAMPLES_HEADER = "run_id,scenario,variant,params,metric,rep,value\n"


def noise(center, spread, n=40, seed=0):
    """n samples uniform in center * (1 +- spread)."""
    r = random.Random(seed)
    return [center * (1 + spread * (2 * r.random() - 1)) for _ in range(n)]


def row(scenario, variant, params, metric, better, values, iters=10):
    return dict(scenario=scenario, variant=variant, params=params, metric=metric, better=better,
                values=list(values), iters=iters)


def write_run(stem, rows, run_id="r1", samples=True):
    """stem.csv and (with samples) stem.samples.csv; returns the CSV's path."""
    stem = pathlib.Path(stem)
    csv_path = stem.with_name(stem.name + ".csv")
    samples_path = stem.with_name(stem.name + ".samples.csv")
    lines, sample_lines = [HEADER], [SAMPLES_HEADER]
    for r in rows:
        xs = r["values"]
        med, mean = statistics.median(xs), statistics.fmean(xs)
        sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
        cv = 100 * sd / abs(mean) if mean else 0.0
        lines.append(f"{run_id},t,h,NVIDIA H100 80GB HBM3,580,13.0,{r['scenario']},{r['variant']},"
                     f"{r['params']},{r['iters']},{len(xs)},{r['metric']},us,{r['better']},"
                     f"{med!r},{mean!r},{sd!r},{min(xs)!r},{max(xs)!r},{min(xs)!r},{max(xs)!r},"
                     f"{cv!r},\n")
        for i, x in enumerate(xs):
            sample_lines.append(f"{run_id},{r['scenario']},{r['variant']},{r['params']},"
                                f"{r['metric']},{i + 1},{x!r}\n")
    csv_path.write_text("".join(lines))
    if samples:
        samples_path.write_text("".join(sample_lines))
    elif samples_path.exists():
        samples_path.unlink()
    return csv_path


def verdicts(stdout):
    """compare's table: {(scenario, variant, params, metric): (cells, verdict)}."""
    out, in_table = {}, False
    for line in stdout.splitlines():
        if line.startswith("scenario "):
            in_table = True
            continue
        if in_table and not line.strip():
            break
        if in_table:
            cells = line.split()
            out[tuple(cells[:4])] = (cells, cells[-1])
    return out
