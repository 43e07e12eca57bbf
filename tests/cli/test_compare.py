"""`syncbench compare` as CI runs it, without a GPU: options (--run-noise), verdicts for zero
baselines, the GPU warning, input limits (NUL bytes, endless lines, huge files), errors that
name physical lines, integer checks, duplicate columns, and that a large comparison is fast."""
import os
import threading
import time

import pytest

from conftest import assert_one_line, run

HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")


def row(scenario="small-gemm", variant="async", params="m=512", metric="kernel_us",
        better="lower", median=10.0, cv=1.0, gpu="NVIDIA H100 80GB HBM3", reps="20",
        stddev=None):
    if stddev is None:
        stddev = median * cv / 100 if isinstance(median, (int, float)) else 0
    sd = stddev
    return (f"r,t,h,{gpu},580,13.0,{scenario},{variant},{params},10,{reps},{metric},us,{better},"
            f"{median},{median},{sd},{median},{median},{median},{median},{cv},\n")


def write(path, *rows, header=HEADER):
    path.write_text(header + "".join(rows))
    return path


def one_line_error(r, message):
    assert_one_line(r, 2, message)


# ---- options ----

def test_run_noise_is_an_option(tmp_path):
    # 6 % slower in quiet runs: inside the default 2 % run noise, a regression without it
    base = write(tmp_path / "base.csv", row(median=10, cv=0.1))
    cur = write(tmp_path / "cur.csv", row(median=10.6, cv=0.1))
    r = run("compare", base, cur)
    assert r.returncode == 0, r.stderr
    assert "run noise 2 %" in r.stdout
    r = run("compare", base, cur, "--run-noise", "0")
    assert r.returncode == 1, r.stderr
    assert "run noise 0 %" in r.stdout
    assert run("compare", base, cur, "--run-noise=0.5", "-q").returncode == 1
    one_line_error(run("compare", base, cur, "--run-noise", "x"),
                   "compare: --run-noise x: not a number (expected a number from 0 to 1000000)")
    one_line_error(run("compare", base, cur, "--run-noise"),
                   "compare: option '--run-noise' needs a value")


def test_help_documents_options_and_verdicts():
    r = run("compare", "--help")
    assert r.returncode == 0
    for word in ["--threshold", "--noise-k", "--run-noise", "--metric", "--markdown", "--quiet",
                 "no-baseline", "256 MiB", "64 KiB"]:
        assert word in r.stdout, word


@pytest.mark.parametrize("metric,message", [
    ("a,,b", "compare: --metric a,,b: empty metric name"),
    (",".join(["m"] * 65), "compare: --metric: more than 64 metrics"),
])
def test_bad_metric_lists(tmp_path, metric, message):
    base = write(tmp_path / "base.csv", row())
    one_line_error(run("compare", base, base, "--metric", metric), message)


# ---- verdicts ----

def test_zero_baseline_is_no_baseline_not_a_regression(tmp_path):
    base = write(tmp_path / "base.csv", row(metric="overhead_us", median=0, cv=0),
                 row(metric="wait_us", median=0, cv=0),
                 row(metric="delta_us", median=-0.5, stddev=1, cv=0))
    cur = write(tmp_path / "cur.csv", row(metric="overhead_us", median=3, cv=1),
                row(metric="wait_us", median=0, cv=0),
                row(metric="delta_us", median=0.5, stddev=1, cv=0))
    r = run("compare", base, cur)
    assert r.returncode == 0, r.stdout + r.stderr
    table = {line.split()[3]: line.split() for line in r.stdout.splitlines()
             if line.startswith("small-gemm")}
    assert table["overhead_us"][-1] == "no-baseline"
    assert table["overhead_us"][6:8] == ["-", "-"]  # no change, no noise band
    assert table["wait_us"][-1] == "same"
    assert table["delta_us"][-1] == "same"  # both within their stddev of zero
    assert "0 REGRESSION" in r.stdout and "2 same, 1 no-baseline" in r.stdout


def test_gpu_mismatch_warns_and_goes_on(tmp_path):
    base = write(tmp_path / "base.csv", row(gpu="NVIDIA H100 80GB HBM3"))
    cur = write(tmp_path / "cur.csv", row(gpu="NVIDIA H200"))
    r = run("compare", base, cur)
    assert r.returncode == 0
    assert r.stderr.splitlines() == [
        "syncbench: compare: warning: baseline is from GPU NVIDIA H100 80GB HBM3, current from "
        "GPU NVIDIA H200"]
    assert "1 same" in r.stdout
    assert run("compare", base, base).stderr == ""


def test_order_is_baseline_then_new(tmp_path):
    base = write(tmp_path / "base.csv", *(row(params=f"m={m}") for m in (5, 3, 9, 1)))
    cur = write(tmp_path / "cur.csv", *(row(params=f"m={m}") for m in (7, 1, 2, 9, 3)))
    r = run("compare", base, cur)
    body = [line.split() for line in r.stdout.splitlines() if line.startswith("small-gemm")]
    assert [(b[2], b[-1]) for b in body] == [("m=5", "missing"), ("m=3", "same"),
                                             ("m=9", "same"), ("m=1", "same"), ("m=7", "new"),
                                             ("m=2", "new")]


# ---- input errors: one line, exit 2, the physical line ----

def test_errors_name_physical_lines(tmp_path):
    split = row(params='"m=1\nn=2"')  # a quoted field with a line break: lines 2 and 3
    bad = write(tmp_path / "bad.csv", split, row(params="m=2", median="fast"))
    one_line_error(run("compare", bad, bad), f"{bad}:4: median 'fast' is not a number")
    dup = write(tmp_path / "dup.csv", split, "\n", row(params="m=3"), row(params='"m=1\nn=2"'))
    one_line_error(run("compare", dup, dup),
                   f"{dup}:6: duplicate row for small-gemm async m=1\\nn=2 kernel_us "
                   "(first at line 2)")


@pytest.mark.parametrize("reps", ["1e10", "-5", "1.5", "0", "2147483648", "ten"])
def test_reps_must_be_an_integer(tmp_path, reps):
    bad = write(tmp_path / "bad.csv", row(params="m=1"), row(params="m=2", reps=reps))
    one_line_error(run("compare", bad, bad),
                   f"{bad}:3: reps '{reps}' is not an integer from 1 to 2147483647")


def test_duplicate_columns_are_refused(tmp_path):
    bad = write(tmp_path / "bad.csv", row().rstrip("\n") + ",20\n",
                header=HEADER.rstrip("\n") + ",median\n")
    one_line_error(run("compare", bad, bad),
                   f"{bad}:1: duplicate column 'median' (columns 15 and 24)")


def test_dev_zero_fails_fast():
    t0 = time.monotonic()
    r = run("compare", "/dev/zero", "/dev/zero", timeout=20)
    assert time.monotonic() - t0 < 5
    one_line_error(r, "/dev/zero:1: binary data (a NUL byte): not a CSV file")


def test_endless_line_fails_fast(tmp_path):
    """A stream with one line that never ends: refused after 64 KiB, not read to the end."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer():
        with open(fifo, "wb") as f:
            try:
                while not stop.is_set():
                    f.write(b"a" * 65536)
            except BrokenPipeError:
                pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        r = run("compare", fifo, fifo, timeout=20)
    finally:
        stop.set()
    one_line_error(r, f"{fifo}:1: record longer than 64 KiB (the limit)")


def test_long_record_and_many_fields(tmp_path):
    long = write(tmp_path / "long.csv", row(), row(params="p" * 70000))
    one_line_error(run("compare", long, long), f"{long}:3: record longer than 64 KiB")
    wide = write(tmp_path / "wide.csv", header=",".join(["c"] * 65) + "\n")
    one_line_error(run("compare", wide, wide), f"{wide}:1: more than 64 fields")


def test_file_over_256_mib_is_refused_before_reading(tmp_path):
    huge = tmp_path / "huge.csv"
    with open(huge, "wb") as f:
        f.write(HEADER.encode())
        f.truncate((256 << 20) + 1)  # sparse: no disk used
    one_line_error(run("compare", huge, huge, timeout=20),
                   f"{huge}: larger than 256 MiB, the most compare reads")


# ---- scale ----

def test_large_files_compare_quickly(tmp_path):
    """100k rows against 100k: well under a second now; the old all-pairs reader took minutes."""
    n = 100000
    for name, slow in (("base.csv", None), ("cur.csv", 4242)):
        with open(tmp_path / name, "w") as f:
            f.write(HEADER)
            for i in range(n):
                f.write(row(params=f"m={i // 4};n={i % 4}", median=13 if i == slow else 10))
    t0 = time.monotonic()
    r = run("compare", tmp_path / "base.csv", tmp_path / "cur.csv", "-q", timeout=60)
    elapsed = time.monotonic() - t0
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith(f"compare: {n} rows: 1 REGRESSION, 0 slower, 0 faster, {n - 1} same")
    assert elapsed < 15, elapsed
