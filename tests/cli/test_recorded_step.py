"""tests/gpu/recorded_step.py without a GPU, over a synthetic kept folder: the step between the
line's calls (warm-up and end left out, its most called API only, other lines' calls not
counted), a job's slowest process, and its refusals (exit 2)."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = str(ROOT / "tests" / "gpu" / "recorded_step.py")


def write(folder, pid, step_us, n, copies=0):
    """A process: N syncs at torch_train.py:74 STEP_US apart (the first 30 and the last 5 twice
    as far apart: a warm-up and an end that must not count), COPIES copies there, and a sync a
    step at another line."""
    recs = [{"t": "pystack", "id": 0, "frames": [["/a/torch_train.py", "timed", 74],
                                                 ["/a/torch_train.py", "main", 120]]},
            {"t": "pystack", "id": 1, "frames": [["/a/torch_train.py", "timed", 75]]}]
    t = 0
    for k in range(n):
        t += int((2 if k <= 30 or k > n - 5 else 1) * step_us * 1000)
        recs.append({"t": "call", "api": "cudaStreamSynchronize", "py": 0, "start": t - 10,
                     "end": t})
        recs.append({"t": "call", "api": "cudaStreamSynchronize", "py": 1, "start": t + 1,
                     "end": t + 2})
        if k < copies:
            recs.append({"t": "call", "api": "cudaMemcpyAsync", "py": 0, "start": t, "end": t})
    (folder / f"proc-{pid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_the_step_between_the_lines_calls(tmp_path):
    write(tmp_path, 1, 1000.0, 60, copies=20)
    write(tmp_path, 2, 1500.0, 50)
    r = run(tmp_path, "torch_train.py:74", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["processes"] == {"1": 1000.0, "2": 1500.0}
    assert out["step_us"] == 1500.0  # a job is paced by its slowest rank
    assert "step: 1500.0 us" in run(tmp_path, "torch_train.py:74").stdout


def test_refusals(tmp_path):
    r = run(tmp_path / "nope", "torch_train.py:74")
    assert r.returncode == 2 and "no folder" in r.stderr
    r = run(tmp_path, "torch_train.py")
    assert r.returncode == 2 and "not FILE.py:LINE" in r.stderr
    write(tmp_path, 1, 1000.0, 39)  # one call short
    r = run(tmp_path, "torch_train.py:74")
    assert r.returncode == 2 and "no process made 40 blocking calls at" in r.stderr
