"""tests/gate/power.py on synthetic runs, with a few trials: the table's shape (one line per gated
row, one column per slowdown), a tight metric that catches 20 % in every trial and never gives
a false REGRESSION at 0 %, the tidy CSV, and its errors."""
import csv
import subprocess
import sys

from conftest import BIN, ROOT
from synth_runs import noise, row, write_run

POWER = ROOT / "tests" / "gate" / "power.py"
P = "m=512;n=512;k=512;dtype=fp16;tf32=0"


def runs(tmp_path):
    def rows(seed):
        return [row("small-gemm", "sync-stream", P, "kernel_us", "lower",
                    noise(100, 0.01, 40, seed)),
                row("copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher",
                    noise(50, 0.01, 30, seed + 1)),
                row("readback", "pending-pinned", "pending_us=1000", "wait_us", "lower",
                    noise(100, 0.8, 20, seed + 2)),
                # not gated: not in --metrics
                row("small-gemm", "sync-stream", P, "wall_us_per_iter", "lower",
                    noise(100, 0.01, 40, seed + 3))]
    return (write_run(tmp_path / "run1", rows(1), run_id="a"),
            write_run(tmp_path / "run2", rows(100), run_id="b"))


def power(*args):
    return subprocess.run([sys.executable, str(POWER), *map(str, args), "--syncbench", BIN],
                          capture_output=True, text=True, timeout=300)


def test_power_table(tmp_path):
    base, cur = runs(tmp_path)
    out = tmp_path / "power.csv"
    r = power(base, cur, "--trials", "5", "--metrics", "kernel_us,GBps,wait_us", "--csv", out)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("row "))
    assert lines[head].split()[1:] == ["reps", "b/c", "0", "%", "2", "%", "5", "%", "10", "%",
                                       "20", "%"]
    table = {}
    for line in lines[head + 1:]:
        if not line.strip():
            break
        cells = line.split()
        table[cells[3]] = [float(c) for c in cells[5:]]
    assert set(table) == {"kernel_us", "GBps", "wait_us"}  # wall_us_per_iter is not gated
    assert all(len(v) == 5 for v in table.values())
    tight = table["kernel_us"]
    assert tight[0] == 0.0  # no false REGRESSION at 0 %
    assert tight[4] == 100.0  # 20 % in every trial
    assert table["GBps"][0] == 0.0 and table["GBps"][4] == 100.0  # higher is better: divided
    assert "rows detecting a 10 % slowdown in >= 95 % of trials:" in r.stdout
    assert "rows detecting a 5 % slowdown in >= 95 % of trials:" in r.stdout
    assert "rows with false REGRESSIONs at 0 %: 0 of 3" in r.stdout
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3 * 5
    assert {r["slowdown_pct"] for r in rows} == {"0", "2", "5", "10", "20"}
    assert all(r["trials"] == "5" for r in rows)
    k20 = [r for r in rows if r["metric"] == "kernel_us" and r["slowdown_pct"] == "20"]
    assert k20[0]["regression_pct"] == "100.0"


def test_power_is_reproducible_and_uses_perf_metrics(tmp_path):
    base, cur = runs(tmp_path)
    a = power(base, cur, "--trials", "3", "--slowdowns", "0,10")
    b = power(base, cur, "--trials", "3", "--slowdowns", "0,10")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    # the default metric list is make perf-metrics': kernel_us, GBps, wait_us, not wall_us
    assert "wall_us_per_iter" not in a.stdout and "kernel_us" in a.stdout


def test_power_errors(tmp_path):
    base, cur = runs(tmp_path)
    (tmp_path / "run2.samples.csv").unlink()
    r = power(base, cur, "--trials", "2")
    assert r.returncode == 2 and "no samples file beside it" in r.stderr
    base, cur = runs(tmp_path)
    r = power(base, cur, "--trials", "2", "--metrics", "nosuch")
    assert r.returncode == 2 and "no rows with metrics nosuch" in r.stderr
