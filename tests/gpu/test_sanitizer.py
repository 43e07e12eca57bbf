"""compute-sanitizer over every scenario, each at a small size: the kernels and the host code
around them are clean, and stay so as scenarios are added (the scenario list comes from the
binary's --list). memcheck runs on every scenario; racecheck and synccheck on every scenario but
the two GEMMs, whose kernels are cuBLAS's (racecheck on them took 47 and 205 s on the H100 with
the tests side by side, and checks NVIDIA's code, not ours). SYNCBENCH_SANITIZER=full runs the
whole matrix, the GEMMs' racecheck and synccheck included (`make validate` runs those in its
--full set). Skipped where there is no GPU."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BIN, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
SANITIZER = shutil.which("compute-sanitizer") or os.path.join(CUDA_HOME, "bin",
                                                              "compute-sanitizer")
# small sizes, so that the instrumented kernels finish in seconds
SMALL = {
    "coalesce": ["--set", "values=8", "--set", "work_us=5"],
    "log-every": ["--set", "every=2", "--set", "kernels=3", "--set", "work_us=2"],
    "graph": ["--set", "kernels=5"],
    "dynamic-shape": ["--set", "n=5000", "--set", "density=30"],
    "device-branch": ["--set", "work_us=2"],
    "small-gemm": ["--set", "m=128", "--set", "n=128", "--set", "k=128"],
    "big-gemm": ["--set", "m=256", "--set", "n=256", "--set", "k=256"],
    "readback": ["--set", "pending_us=200"],
    "copy": ["--set", "bytes=64KiB,1MiB"],
    "double-buffer": ["--set", "bytes=4MiB", "--set", "chunks=4"],
    "busy-stream": ["--set", "other_us=200"],
    "alloc": ["--set", "bytes=64KiB"],
    "small-h2d": [],
    "sched": ["--set", "work_us=50"],
    # several GPUs: skipped (exit 0) where there is one
    "collective": ["--set", "straggler_us=100"],
    "cross-device": ["--set", "bytes=1MiB"],
}
# NCCL probes its own kernels with cudaFuncGetAttributes and handles the "no kernel image"
# (error 209) it gets for the architectures its build left out: on two H100s with the toolkit's
# NCCL 2.28, memcheck reported 110 such API errors, every one inside libnccl.so.2, none in
# syncbench (whose every CUDA call is checked and fails the run itself). For the scenarios that
# call NCCL, memcheck leaves API errors out and still checks every memory access.
NCCL_SCENARIOS = {"collective"}
QUICK = ["--iters", "3", "--warmup", "1", "--warmup-time", "0", "--min-reps", "2",
         "--max-reps", "2", "--quiet"]


def scenarios():
    out = run("list").stdout
    return [line for line in out.splitlines() if line and not line.startswith(" ")]


def test_every_scenario_has_a_small_size():
    assert sorted(scenarios()) == sorted(SMALL)


TOOLS = ["memcheck", "racecheck", "synccheck"]
# cuBLAS's kernels: racecheck and synccheck only in the full matrix
CUBLAS_SCENARIOS = {"small-gemm", "big-gemm"}
FULL = os.environ.get("SYNCBENCH_SANITIZER") == "full"
MATRIX = [(tool, scenario) for scenario in sorted(SMALL) for tool in TOOLS
          if FULL or tool == "memcheck" or scenario not in CUBLAS_SCENARIOS]


@pytest.mark.parametrize("tool,scenario", MATRIX, ids=[f"{s}-{t}" for t, s in MATRIX])
def test_sanitizer_clean(tool, scenario):
    if not os.path.exists(SANITIZER):
        pytest.skip("compute-sanitizer not found")
    api = ["--report-api-errors", "no"] if scenario in NCCL_SCENARIOS else []
    cmd = [SANITIZER, "--tool", tool, *api, "--error-exitcode", "97", BIN, "--scenario", scenario,
           *SMALL[scenario], *QUICK]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    text = r.stdout + r.stderr
    # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with
    # "RACECHECK SUMMARY: N hazards displayed (N errors, N warnings)"
    summary = re.findall(r"(?:ERROR SUMMARY: (\d+) error|RACECHECK SUMMARY: \d+ hazards? "
                         r"displayed \((\d+) error)", text)
    assert r.returncode == 0, text[-3000:]
    assert summary and [n for n in summary[-1] if n] == ["0"], text[-3000:]
