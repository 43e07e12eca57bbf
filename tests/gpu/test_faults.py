"""Every scenario's check catches a damaged result: SYNCBENCH_FAULT=NAME makes the scenario
damage its own result just before its check (base/fault.h), and the run must fail that check:
exit 1, one line, and no sched helper process left behind. (small-gemm's, which also keeps no
row, is in test_gemm.py.) Fixed repetition counts: nothing here depends on the host's speed.
Skipped where there is no GPU."""
import pytest

from conftest import gpu_available, run
from gpu_common import fixed, leaked_sched_workers

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

FAULTS = [  # scenario, fault, what else the run needs
    ("readback", "readback-value", []),
    ("copy", "copy-data", ["--set", "bytes=1MiB", "--variant", "h2d-pinned"]),
    ("double-buffer", "pipeline-sum", ["--set", "bytes=40MB", "--variant", "double-buffered"]),
    ("coalesce", "coalesce-values", ["--variant", "stacked"]),
    ("log-every", "log-loss", ["--variant", "never"]),
    ("graph", "graph-counter", ["--variant", "graph"]),
    ("dynamic-shape", "compact-output", ["--variant", "fixed-shape"]),
    ("device-branch", "branch-output", ["--variant", "device-select"]),
    ("busy-stream", "busy-stream-mark", ["--variant", "sync-stream"]),
    ("alloc", "alloc-data", ["--variant", "malloc-async"]),
    ("small-h2d", "h2d-data", ["--variant", "pinned-async"]),
    ("sched", "sched-mark", ["--variant", "spin"]),
]


@pytest.mark.parametrize("scenario,fault,extra", FAULTS, ids=[f for _, f, _ in FAULTS])
def test_damaged_results_are_caught(scenario, fault, extra):
    r = run("--scenario", scenario, *extra, *fixed(reps=1, warmup=0),
            env={"SYNCBENCH_FAULT": fault})
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"syncbench: validation failed in {scenario}/"), lines[0]
    assert leaked_sched_workers(marker=f"SYNCBENCH_FAULT={fault}") == []
