"""`syncbench compare` against what issue 19 found (item 7): a signal during the bootstrap
leaves no empty .partial file; a --threshold-for metric that no file has is an error; a closed
pipe is one line and exit 1; values too large for the statistics are refused by name; a file
mixing runs or GPUs is refused; the committed baseline compared with itself passes --strict;
--verdicts writes every verdict as CSV."""
import csv
import os
import signal
import subprocess
import time

import pytest

from conftest import BIN, ROOT, run
from synth_runs import HEADER, noise, row, write_run

BASELINE = ROOT / "results" / "baselines" / "h100.csv"


def one_line_error(r, code, message):
    assert r.returncode == code, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0], lines[0]


def big_pair(tmp_path, nrows=3000):
    def rows(seed):
        return [row("small-gemm", "async", f"m={i}", "kernel_us", "lower",
                    noise(10, 0.05, 40, seed + i)) for i in range(nrows)]
    return (write_run(tmp_path / "a", rows(0), "r1"),
            write_run(tmp_path / "b", rows(10 ** 6), "r2"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_bootstrap_leaves_no_partial_file(tmp_path, sig):
    a, b = big_pair(tmp_path)
    before = set(os.listdir(tmp_path))
    p = subprocess.Popen([BIN, "compare", str(a), str(b), "-q", "--markdown",
                          str(tmp_path / "o.md"), "--rerun", str(tmp_path / "o.ini"),
                          "--verdicts", str(tmp_path / "o.csv")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    assert p.poll() is None, "the bootstrap ended before the signal: make the files larger"
    p.send_signal(sig)
    p.wait(timeout=60)
    assert set(os.listdir(tmp_path)) == before


def test_threshold_for_a_metric_no_file_has(tmp_path):
    one_line_error(run("compare", BASELINE, BASELINE, "--threshold-for", "GBpz=12"), 2,
                   "--threshold-for GBpz: neither file has metric GBpz")
    r = run("compare", BASELINE, BASELINE, "--threshold-for", "GBps=12", "-q")
    assert r.returncode == 0, r.stderr


def test_a_closed_pipe_is_one_line_and_exit_1():
    rd, wr = os.pipe()
    os.close(rd)
    r = subprocess.run([BIN, "compare", str(BASELINE), str(BASELINE)], stdout=wr,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    os.close(wr)
    one_line_error(r, 1, "cannot write to standard output")


@pytest.mark.parametrize("median", ["1e63", "-2e15", "1e308"])
def test_medians_too_large_are_refused(tmp_path, median):
    text = HEADER + (f"r,t,h,GPU,580,13.0,copy,h2d-pinned,bytes=1,10,20,GBps,GB/s,higher,"
                     f"{median},1,0.1,1,1,1,1,1,\n")
    f = tmp_path / "a.csv"
    f.write_text(text)
    one_line_error(run("compare", f, f), 2, f"median '{median}' is out of range")


def test_samples_too_large_are_refused(tmp_path):
    xs = noise(10, 0.05, 10)
    a = write_run(tmp_path / "a", [row("copy", "p", "b=1", "GBps", "higher", xs)])
    b = write_run(tmp_path / "b", [row("copy", "p", "b=1", "GBps", "higher", xs)])
    s = (tmp_path / "b.samples.csv")
    s.write_text(s.read_text().replace(repr(xs[3]), "1e308"))
    r = run("compare", a, b)
    one_line_error(r, 2, "value '1e308' is not a finite number below 1e+15 in magnitude")


@pytest.mark.parametrize("what", ["run_id", "gpu"])
def test_a_file_mixing_runs_or_gpus_is_refused(tmp_path, what):
    line1 = "r1,t,h,GPU A,580,13.0,copy,p,bytes=1,10,20,GBps,GB/s,higher,10,10,0.1,10,10,10,10,1,\n"
    line2 = line1.replace("bytes=1", "bytes=2")
    line2 = line2.replace("r1,", "r2,", 1) if what == "run_id" else line2.replace("GPU A", "GPU B")
    f = tmp_path / "mixed.csv"
    f.write_text(HEADER + line1 + line2)
    want = "run_id 'r2' is not line 2's 'r1'" if what == "run_id" else \
        "gpu 'GPU B' is not line 2's 'GPU A'"
    one_line_error(run("compare", f, f), 2, f"mixed.csv:3: {want}: one file holds one run")


def test_the_committed_baseline_compared_with_itself_passes_strict(tmp_path):
    v = tmp_path / "v.csv"
    r = run("compare", BASELINE, BASELINE, "--strict", "--verdicts", v)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    with open(v, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 42
    assert {x["verdict"] for x in rows} == {"same"}
    assert all(x["rule"] == "samples" and float(x["change_pct"]) == 0 for x in rows)


def test_verdicts_csv(tmp_path):
    base = [row("small-gemm", "async", "m=1", "kernel_us", "lower", noise(10, 0.01, 40, 1)),
            row("small-gemm", "async", "m=2", "kernel_us", "lower", noise(10, 0.01, 40, 2)),
            row("copy", "p", "b=1", "GBps", "higher", noise(50, 0.01, 40, 3))]
    cur = [row("small-gemm", "async", "m=1", "kernel_us", "lower", noise(12, 0.01, 40, 4)),
           row("small-gemm", "async", "m=2", "kernel_us", "lower", noise(10, 0.01, 40, 5)),
           row("copy", "p", "b=2", "GBps", "higher", noise(50, 0.01, 40, 6))]
    a, b = write_run(tmp_path / "a", base, "r1"), write_run(tmp_path / "b", cur, "r2")
    v = tmp_path / "v.csv"
    r = run("compare", a, b, "--verdicts", v, "--threshold-for", "GBps=12")
    assert r.returncode == 1, r.stderr  # the regression
    with open(v, newline="") as f:
        got = {(x["params"], x["metric"]): x for x in csv.DictReader(f)}
    assert got[("m=1", "kernel_us")]["verdict"] == "REGRESSION"
    assert 15 < float(got[("m=1", "kernel_us")]["change_pct"]) < 25
    lo, hi = float(got[("m=1", "kernel_us")]["ci_lo_pct"]), float(got[("m=1", "kernel_us")]["ci_hi_pct"])
    assert lo <= float(got[("m=1", "kernel_us")]["change_pct"]) <= hi
    assert got[("m=2", "kernel_us")]["verdict"] == "same"
    assert got[("b=1", "GBps")]["verdict"] == "missing" and got[("b=1", "GBps")]["current"] == ""
    assert got[("b=2", "GBps")]["verdict"] == "new"
    assert got[("b=2", "GBps")]["threshold_pct"] == "12"
    # an output that is an input is refused
    r = run("compare", a, b, "--verdicts", a)
    one_line_error(r, 2, "is also an input")
