"""A suite killed with SIGKILL after its second measurement finished: the finished
measurements' rows are in OUT.partial, complete and readable, and OUT was never made. Each
measurement warms up for 2 s at least, so the kill lands inside the third whatever the host's
speed. Skipped where there is no GPU."""
import csv
import signal
import subprocess
import time

import pytest

from conftest import BIN, gpu_available

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

COPY_METRICS = {"GBps", "host_call_us", "wall_us"}


def measurements(path):
    """{params: set of metrics} of the rows in a (partial) CSV."""
    found = {}
    try:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                found.setdefault(r["params"], set()).add(r["metric"])
    except FileNotFoundError:
        pass
    return found


def test_sigkill_keeps_finished_rows(tmp_path):
    out = tmp_path / "out.csv"
    partial = tmp_path / "out.csv.partial"
    sizes = ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB"]
    suite = tmp_path / "suite.ini"
    suite.write_text("[copy]\nvariants = h2d-pinned\nbytes = %s\nmin_reps = 3\nmax_reps = 3\n"
                     "warmup_time = 2\n" % ",".join(sizes))
    proc = subprocess.Popen([BIN, "--config", suite, "--csv", out, "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while len(measurements(partial)) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()
    found = measurements(partial)
    assert len(found) >= 2, found
    assert len(found) < len(sizes)  # killed before the end
    assert "bytes=1MiB" in found and "bytes=2MiB" in found
    for params, metrics in found.items():
        assert metrics == COPY_METRICS, (params, metrics)  # every finished row, no half row
