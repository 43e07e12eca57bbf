"""tests/gpu/shared_gpu.py without a GPU, over a synthetic kept folder of two processes: the
GPU's turns from one process to the other and their gaps, the operations that started late
while the other's work ran, and its refusals (exit 2)."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = str(ROOT / "tests" / "gpu" / "shared_gpu.py")


def write(folder, pid, records):
    (folder / f"proc-{pid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def api(corr, end):
    return {"t": "api", "api": "cudaLaunchKernel", "corr": corr, "start": end - 500, "end": end}


def kernel(corr, start, end, stream=7):
    return {"t": "kernel", "corr": corr, "stream": stream, "start": start, "end": end}


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_turns_and_late_operations(tmp_path):
    # process 1: a kernel at once, then one launched at 2.1 us that starts at 400 us, 137 us
    # after process 2's kernel (10 to 263 us) ended; process 2's kernel waited 8 us
    write(tmp_path, 1, [api(1, 1000), kernel(1, 1100, 2000), api(2, 2100),
                        kernel(2, 400_000, 401_000)])
    write(tmp_path, 2, [api(1, 2000), kernel(1, 10_000, 263_000), {"t": "end"}])
    r = run(tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)
    assert f["1"] == {"ops": 2, "turns_in": 1, "turn_gap_us_median": 137.0, "late": 1,
                      "late_behind_other": 1, "switch_us_median": 137.0,
                      "late_us_per_op": pytest.approx(397.9)}
    assert f["2"]["turns_in"] == 1 and f["2"]["turn_gap_us_median"] == 8.0
    assert f["2"]["late"] == 0 and f["2"]["switch_us_median"] is None
    # a higher threshold: nothing of process 1's is late
    assert json.loads(run(tmp_path, "--json", "--late-us", 500).stdout)["1"]["late"] == 0
    text = run(tmp_path).stdout
    assert "pid 1: 2 operations; the GPU turned to it from another process 1 times, a " \
           "median 137.0 us after" in text
    f = json.loads(run(tmp_path, "--json", "--steps", 2).stdout)["1"]
    assert f["turns_per_step"] == 0.5 and f["turn_us_per_step"] == 68.5
    assert "; 0.5 turns a step, 68 us" in run(tmp_path, "--steps", 2).stdout


def test_an_operation_is_ready_after_its_streams_previous_one(tmp_path):
    # process 1's second kernel was launched at 2.1 us, behind its stream's first (to 300 us):
    # it could start at 300 us, so 350 is not late; on another stream, nothing ahead, it would be
    # 347.9 us late, with no work of process 2 in its wait (which ran before it was launched)
    for stream, late in ((7, 0), (8, 1)):
        write(tmp_path, 1, [api(1, 1000), kernel(1, 1100, 300_000), api(2, 2100),
                            kernel(2, 350_000, 351_000, stream=stream)])
        write(tmp_path, 2, [api(1, 500), kernel(1, 600, 1000)])
        f = json.loads(run(tmp_path, "--json").stdout)["1"]
        assert f["late"] == late and f["late_behind_other"] == 0
        assert f["switch_us_median"] is None


def test_refusals(tmp_path):
    r = run(tmp_path / "nope")
    assert r.returncode == 2 and "no folder" in r.stderr
    write(tmp_path, 1, [api(1, 1000), kernel(1, 1100, 2000)])
    write(tmp_path, 2, [api(1, 1000)])  # no GPU activity
    r = run(tmp_path)
    assert r.returncode == 2 and "1 process(es) with GPU activity" in r.stderr
    for bad in (("--late-us", 0), ("--steps", 0)):
        r = run(tmp_path, *bad)
        assert r.returncode == 2 and "must be above 0" in r.stderr
