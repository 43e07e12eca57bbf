"""Suites, outputs and the regression gate's plumbing on a real GPU: configs/ci.ini run twice (a
fixed 10 repetitions a measurement), compare reads back the samples a real run writes and a
--rerun suite it writes runs, the JSON carries the environment record, the Markdown the table,
and the progress line shows on a terminal. No verdict on measured times is held here: that two
back-to-back runs compare clean and that a slower variant or a real slowdown is a REGRESSION are
tests/validate/'s (`make validate`). Skipped where there is no GPU."""
import csv
import json
import os
import pty
import re
import subprocess

import pytest

from conftest import BIN, ROOT, gpu_available, run
from gpu_common import fixed

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


# 10: enough samples for compare's bootstrap (it wants 5 a row at least)
CI_REPS = fixed(reps=10)


@pytest.fixture(scope="module")
def ci_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("ci")
    # samples in a folder of their own, not beside the CSVs: the tests that compare the CSVs
    # alone get the summary rule, those that want the samples name them
    (d / "samples").mkdir()
    first = run("--config", ROOT / "configs/ci.ini", *CI_REPS, "--csv", d / "{gpu}-{date}.csv",
                "--json", d / "run1.json", "--markdown", d / "run1.md", "--quiet",
                "--samples", d / "samples" / "run1.samples.csv")
    assert first.returncode == 0, first.stderr
    second = run("--config", ROOT / "configs/ci.ini", *CI_REPS, "--csv", d / "run2.csv",
                 "--quiet", "--samples", d / "samples" / "run2.samples.csv")
    assert second.returncode == 0, second.stderr
    named = [f for f in os.listdir(d) if re.fullmatch(r"[a-z0-9-]+-\d{8}-\d{6}\.csv", f)]
    assert len(named) == 1, os.listdir(d)  # {gpu} and {date} were filled in
    return {"dir": d, "run1": d / named[0], "run2": d / "run2.csv",
            "samples1": d / "samples" / "run1.samples.csv",
            "samples2": d / "samples" / "run2.samples.csv"}


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_gate_on_real_samples_and_a_confirmation_run(ci_runs, tmp_path):
    """The samples a real run writes are read back: every gated row is decided on them; a
    --rerun suite (forced: --threshold 0 makes nearly every kernel_us row REGRESSION or
    inconclusive) passes --dry-run, runs, and its run compares with --subset."""
    metrics = subprocess.run(["make", "-s", "perf-metrics"], cwd=ROOT, capture_output=True,
                             text=True).stdout.strip()
    both = ("--base-samples", ci_runs["samples1"], "--current-samples", ci_runs["samples2"])
    r = run("compare", ci_runs["run1"], ci_runs["run2"], "--metric", metrics, *both)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "statistics: bootstrap CI of the change of medians on samples (99 %)" in r.stdout
    assert "summary rule for" not in r.stdout  # every row has its samples
    suite = tmp_path / "rerun.ini"
    # one direction has rows to confirm even if every GEMM of run 2 is faster than run 1's
    for base, base_samples, cur, cur_samples in (
            (ci_runs["run1"], ci_runs["samples1"], ci_runs["run2"], ci_runs["samples2"]),
            (ci_runs["run2"], ci_runs["samples2"], ci_runs["run1"], ci_runs["samples1"])):
        r = run("compare", base, cur, "--metric", "kernel_us", "--threshold", "0",
                "--rerun", suite, "--rerun-reps", "10", "--base-samples", base_samples,
                "--current-samples", cur_samples)
        assert r.returncode in (0, 1), r.stderr
        if "[confirm-1]" in suite.read_text():
            break
    assert "[confirm-1]" in suite.read_text(), r.stdout
    assert run("--config", suite, "--dry-run").returncode == 0
    confirm = tmp_path / "confirm.csv"
    c = run("--config", suite, *CI_REPS, "--csv", confirm, "--samples",
            tmp_path / "confirm.samples.csv", "--quiet")
    assert c.returncode == 0, c.stderr
    r = run("compare", base, confirm, "--subset", "--metric", "kernel_us",
            "--base-samples", base_samples)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "statistics: bootstrap CI" in r.stdout and "--subset:" in r.stdout
    assert " 0 missing" in r.stdout


def test_json_has_rows_and_environment(ci_runs):
    doc = json.loads((ci_runs["dir"] / "run1.json").read_text())
    assert len(doc["rows"]) == len(rows(ci_runs["run1"]))
    env = doc["environment"]
    gpu = env["gpu"]
    assert gpu["name"] and gpu["sm_count"] > 0
    assert re.fullmatch(r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", gpu["uuid"])
    assert re.fullmatch(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d", gpu["pci_bus_id"])
    assert gpu["clocks_mhz"]["sm_max"] > 0 and gpu["clocks_mhz"]["memory_max"] > 0
    assert "pcie" in gpu
    for k in ("driver", "cuda_runtime", "cuda_driver", "cublas", "host", "cpu", "kernel"):
        assert env[k], k
    assert doc["syncbench"]["version"] and doc["syncbench"]["git_revision"]
    assert "--config" in doc["command_line"]
    row = doc["rows"][0]
    assert set(row) >= {"scenario", "variant", "params", "metric", "unit", "better", "median",
                        "cv", "flags"}
    assert isinstance(row["flags"], list)


def test_markdown_table(ci_runs):
    md = (ci_runs["dir"] / "run1.md").read_text()
    assert md.startswith("### syncbench on ")
    assert "| scenario | variant | params |" in md
    assert "| copy | h2d-pinned | bytes=64MiB |" in md


def test_flags_column(ci_runs):
    for r in rows(ci_runs["run1"]):
        assert set(filter(None, r["flags"].split(";"))) <= {"throttled", "noisy"}


def test_progress_line_on_a_terminal(tmp_path):
    master, slave = pty.openpty()
    p = subprocess.Popen([BIN, "--scenario", "small-gemm", "--variant", "sync-stream",
                          *fixed(reps=3)],
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert p.wait(timeout=120) == 0
    text = out.decode(errors="replace")
    assert "[1/2] small-gemm async m=512;n=512;k=512;dtype=fp16;tf32=0" in text
    assert "[2/2] small-gemm sync-stream" in text


def test_no_progress_line_when_not_a_terminal():
    r = run("--scenario", "small-gemm", "--variant", "async", *fixed(reps=3))
    assert r.returncode == 0
    assert "[1/1]" not in r.stderr
