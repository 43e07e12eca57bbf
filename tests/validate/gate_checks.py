"""The regression gate on real measurements (docs/compare.md): two back-to-back runs of
configs/ci.ini compare clean on perf-check's metrics; the pageable copy's figures swapped in for
the pinned one's are a REGRESSION; a GEMM really made slower (k=768 in place of 512: the same
output tiles, each with 50 % more of the k loop), labelled as the baseline's row, is a
REGRESSION on its samples, and a clean rerun of the same row is not."""
import csv
import re
import subprocess

from registry import ROOT, check, rows_of, run, shared, workdir

GROUP = "gate"


def compare_line(stdout):
    found = [line for line in stdout.splitlines() if line.startswith("compare: ")]
    return (found or stdout.strip().splitlines() or ["(no summary)"])[-1]


@shared
def ci_runs():
    d = workdir("ci")
    for name in ("run1", "run2"):
        r = run("--config", ROOT / "configs" / "ci.ini", "--csv", d / f"{name}.csv", "--quiet")
        if r.returncode != 0:
            raise RuntimeError(f"configs/ci.ini: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return d


def perf_metrics():
    return subprocess.run(["make", "-s", "perf-metrics"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()


@check("compare: configs/ci.ini twice back to back, on perf-check's metrics", "0 REGRESSION",
       GROUP)
def back_to_back_clean():
    d = ci_runs()
    r = run("compare", d / "run1.csv", d / "run2.csv", "--metric", perf_metrics())
    if r.returncode not in (0, 1):
        raise RuntimeError(f"compare: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return compare_line(r.stdout), r.returncode == 0 and " 0 REGRESSION" in r.stdout


@check("compare: the pageable copy's GB/s swapped in for h2d-pinned's (64 MiB) in run 2",
       "REGRESSION", GROUP)
def slower_variant_swapped_in():
    d = ci_runs()
    out = workdir("pageable") / "pageable.csv"
    r = run("--scenario", "copy", "--variant", "h2d-pageable", "--set", "bytes=64MiB",
            "--max-time", "0.3", "--csv", out, "--quiet")
    if r.returncode != 0:
        raise RuntimeError(f"copy h2d-pageable: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    slower = {row["metric"]: row for row in rows_of(out)}
    current = rows_of(d / "run2.csv")
    for row in current:  # h2d-pinned now reports what the pageable copy measured
        if (row["scenario"], row["variant"], row["metric"]) == ("copy", "h2d-pinned", "GBps"):
            for k in ("median", "mean", "stddev", "min", "max", "p05", "p95", "cv"):
                row[k] = slower["GBps"][k]
    slowed = d / "slowed.csv"
    with open(slowed, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(current[0]))
        w.writeheader()
        w.writerows(current)
    r = run("compare", d / "run1.csv", slowed, "--metric", "GBps")
    line = [x for x in r.stdout.splitlines() if x.startswith("copy") and "h2d-pinned" in x]
    verdict = line[0].split()[-1] if line else "(no row)"
    return f"{verdict} (exit {r.returncode})", r.returncode == 1 and verdict == "REGRESSION"


ARGS = ["--scenario", "small-gemm", "--variant", "async", "--max-time", "0.5", "--min-reps",
        "20", "--quiet"]


def gemm_run(path, *extra):
    r = run(*ARGS, *extra, "--csv", path, "--samples", path.with_suffix(".samples.csv"))
    if r.returncode != 0:
        raise RuntimeError(f"small-gemm: exit {r.returncode}: {r.stderr.strip()[-300:]}")


def relabel(path, old, new):
    """The rows of a run at `old` params presented as `new` params, in the CSV and its samples."""
    for p in (path, path.with_suffix(".samples.csv")):
        rows = rows_of(p)
        for row in rows:
            row["params"] = row["params"].replace(old, new)
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def verdicts(stdout):
    return {line.split()[3]: line.split()[-1] for line in stdout.splitlines()
            if line.startswith("small-gemm ")}


@check("compare on samples: small-gemm at k=768 labelled k=512 (really slower GPU work) is a "
       "REGRESSION on kernel_us; a clean rerun of k=512 is not",
       "REGRESSION; clean rerun: none", GROUP)
def real_slowdown():
    d = workdir("gate-real")
    base, clean, slow = d / "base.csv", d / "clean.csv", d / "slow.csv"
    gemm_run(base)
    gemm_run(clean)
    gemm_run(slow, "--set", "k=768")
    relabel(slow, "k=768;", "k=512;")
    r_slow = run("compare", base, slow, "--metric", "kernel_us,TFLOPs")
    r_clean = run("compare", base, clean, "--metric", "kernel_us,TFLOPs")
    v_slow, v_clean = verdicts(r_slow.stdout), verdicts(r_clean.stdout)
    change = re.search(r"kernel_us\s+\S+\s+\S+\s+([-+][\d.]+)",
                       next((x for x in r_slow.stdout.splitlines()
                             if x.startswith("small-gemm ") and " kernel_us " in x), ""))
    ok = (r_slow.returncode == 1 and "bootstrap" in r_slow.stdout and
          v_slow.get("kernel_us") == "REGRESSION" and r_clean.returncode == 0 and
          "REGRESSION" not in v_clean.values())
    return (f"k=768: {v_slow.get('kernel_us', '?')}"
            f"{' (' + change.group(1) + ' %)' if change else ''}; clean rerun: "
            f"{', '.join(f'{k} {v}' for k, v in sorted(v_clean.items())) or '?'}", ok)
