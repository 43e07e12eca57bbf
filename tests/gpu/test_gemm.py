"""GEMM scenarios on a real GPU: the CSV schema, every variant's metrics, the table, NVTX ranges,
validation (a damaged result caught; dtypes and shapes checked), oversized requests and Ctrl-C.
Fixed repetition counts, no timing: the figures the guides promise (a sync costs small-gemm
>= 2 us, big-gemm < 10 %, compute-bound) are tests/validate/'s (`make validate`). Skipped where
there is no GPU."""
import csv
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import BIN, NVTX_LIB, gpu_available, nvtx_tree, run
from gpu_common import FIXED, fixed

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

COLUMNS = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
           "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags").split(",")
SYNC_VARIANTS = ["sync-device", "sync-stream", "sync-event", "sync-readback", "sync-item"]
SMALL = "m=512;n=512;k=512;dtype=fp16;tf32=0"
BIG = "m=8192;n=8192;k=8192;dtype=fp16;tf32=0"
REPS = 3


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """One run of both GEMM scenarios, every variant, recorded through NVTX."""
    d = tmp_path_factory.mktemp("suite")
    env = {"NVTX_INJECTION64_PATH": NVTX_LIB, "NVTX_RECORD_OUT": str(d / "nvtx.tsv")}
    r = run("--scenario", "small-gemm,big-gemm", *fixed(reps=REPS), "--csv", d / "out.csv",
            env=env)
    assert r.returncode == 0, r.stderr
    with open(d / "out.csv", newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames
        rows = list(reader)
    return {"proc": r, "header": header, "rows": rows, "nvtx": nvtx_tree(d / "nvtx.tsv")}


def test_csv_schema_and_environment(suite):
    assert suite["header"] == COLUMNS
    rows = suite["rows"]
    assert rows
    for r in rows:
        assert r["gpu"] and r["driver"] and r["host"]
        assert re.fullmatch(r"\d+\.\d+", r["cuda_runtime"])
        assert r["better"] in ("lower", "higher")
        assert int(r["reps"]) == REPS  # --min-reps = --max-reps
        for k in ("median", "mean", "stddev", "min", "max", "p05", "p95", "cv"):
            float(r[k])
        assert float(r["min"]) <= float(r["median"]) <= float(r["max"])
    assert len({r["run_id"] for r in rows}) == 1


def test_every_variant_has_its_metrics(suite):
    got = {}
    for r in suite["rows"]:
        got.setdefault((r["scenario"], r["variant"]), set()).add(r["metric"])
    base = {"wall_us_per_iter", "gpu_us_per_iter", "kernel_us", "TFLOPs"}
    for scenario in ("small-gemm", "big-gemm"):
        assert got[(scenario, "async")] == base
        for v in SYNC_VARIANTS:
            assert got[(scenario, v)] == base | {"overhead_us", "overhead_pct"}


def test_table_on_stdout(suite):
    out = suite["proc"].stdout
    for head in ["scenario", "variant", "params", "wall µs/iter", "GPU µs/iter", "overhead µs",
                 "overhead %", "TFLOP/s", "cv %"]:
        assert head in out
    assert out.count("small-gemm  ") >= 5


def test_nvtx_ranges_per_measurement(suite):
    ranges = suite["nvtx"]
    names = [n for d, n, _, _ in ranges if d == "syncbench"]
    for scenario, params in (("small-gemm", SMALL), ("big-gemm", BIG)):
        for v in ["async"] + SYNC_VARIANTS:
            assert f"{scenario}/{v} {params}" in names
    for d, name, colour, children in ranges:
        assert d == "syncbench"
        assert colour == ("FF76B900" if "/async " in name else "FFD62728")
        assert [c[1] for c in children] == ["warmup", "measure"]


def test_corrupted_result_is_caught(tmp_path):
    out = tmp_path / "out.csv"
    r = run("--scenario", "small-gemm", "--variant", "async", *fixed(reps=2), "--csv", out,
            env={"SYNCBENCH_FAULT": "gemm-output"})
    assert r.returncode == 1
    assert len(r.stderr.splitlines()) == 1
    assert "validation failed in small-gemm/async" in r.stderr
    assert not out.exists()  # nothing was measured: no file (an earlier one would stay as it was)
    assert not (tmp_path / "out.csv.partial").exists()


@pytest.mark.parametrize("sets", [
    ["--set", "dtype=fp16,bf16,fp32"],
    ["--set", "dtype=fp32", "--set", "tf32=1"],
    ["--set", "m=100", "--set", "n=37", "--set", "k=513,2048"],
])
def test_dtypes_and_shapes_validate(sets):
    r = run("--scenario", "small-gemm", "--variant", "sync-stream", "--iters", "50", *FIXED,
            *sets)
    assert r.returncode == 0, r.stderr


def test_size_that_does_not_fit_is_exit_2_before_measuring(tmp_path):
    out = tmp_path / "out.csv"
    r = run("--scenario", "big-gemm", "--set", "m=262144", "--set", "n=262144", "--set",
            "k=262144", "--csv", out)
    assert r.returncode == 2
    assert re.search(r"big-gemm m=262144;.*: needs 384\.\d GiB of GPU memory, [\d.]+ GiB free on ",
                     r.stderr), r.stderr
    assert not out.exists()


def test_device_out_of_range():
    r = run("--device", "99")
    assert r.returncode == 2
    assert "--device 99: out of range" in r.stderr


def finished_variants(path):
    """The variants whose rows a (partial) CSV holds."""
    try:
        with open(path, newline="") as f:
            return {r["variant"] for r in csv.DictReader(f)}
    except FileNotFoundError:
        return set()


def test_ctrl_c_writes_finished_rows(tmp_path):
    """SIGINT once the first measurement's rows are out (OUT.partial), during the second's
    warm-up (2 s at least): exit 130, and OUT holds the finished rows, not the rest."""
    out = tmp_path / "out.csv"
    p = subprocess.Popen([BIN, "--scenario", "small-gemm", "--warmup-time", "2", *FIXED[:4],
                          "--csv", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 300
    while "async" not in finished_variants(f"{out}.partial") and time.monotonic() < deadline:
        assert p.poll() is None, p.communicate()[1]
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 130, stderr
    assert "interrupted" in stderr
    variants = finished_variants(out)
    assert "async" in variants
    assert len(variants) < 5
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
