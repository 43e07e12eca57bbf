"""The gate against genuinely slower GPU work: the current run's GEMM is really longer (k=768 in
place of 512: the same output tiles, each with 50 % more of the k loop; a larger m alone can
land in the same tile wave and take no longer, as it did at m=640 on the H100) and labelled
as the baseline's row, so the kernel that is timed is slower, not the numbers edited. compare,
deciding on the raw samples, must call it a REGRESSION; a second clean run of the same row must
not. Skipped where there is no GPU."""
import csv

import pytest

from conftest import gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

ARGS = ["--scenario", "small-gemm", "--variant", "async", "--max-time", "0.5", "--min-reps",
        "20", "--quiet"]


def measure(path, *extra):
    r = run(*ARGS, *extra, "--csv", path, "--samples", path.with_suffix(".samples.csv"))
    assert r.returncode == 0, r.stderr


def relabel(path, old, new):
    """The rows of a run at `old` params presented as `new` params, in the CSV and its samples."""
    for p in (path, path.with_suffix(".samples.csv")):
        rows = list(csv.DictReader(open(p, newline="")))
        for row in rows:
            row["params"] = row["params"].replace(old, new)
        with open(p, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


def verdicts(stdout):
    return {line.split()[3]: line.split()[-1] for line in stdout.splitlines()
            if line.startswith("small-gemm ")}


def test_real_slowdown_is_a_regression_and_a_clean_rerun_is_not(tmp_path):
    base, clean, slow = tmp_path / "base.csv", tmp_path / "clean.csv", tmp_path / "slow.csv"
    measure(base)
    measure(clean)
    measure(slow, "--set", "k=768")
    relabel(slow, "k=768;", "k=512;")

    r = run("compare", base, slow, "--metric", "kernel_us,TFLOPs")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "bootstrap" in r.stdout  # decided on the samples
    v = verdicts(r.stdout)
    assert v["kernel_us"] == "REGRESSION", r.stdout  # (TFLOPs counts the real, bigger work)

    r = run("compare", base, clean, "--metric", "kernel_us,TFLOPs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "REGRESSION" not in verdicts(r.stdout).values(), r.stdout
