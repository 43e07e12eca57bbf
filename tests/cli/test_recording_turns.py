"""tests/audit/recording_turns.py without a GPU: the blocks' order and the turns around them, the
cost of the pairs, the switch found in the library CUDA loaded (the real injection library, which
refuses without a record file) and torch_train.py's --recording-turns refused before torch is
imported. What it measures runs on the GPU (tests/gpu/audit_cost_real.py --modes audit-turns)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "audit"))
import recording_turns  # noqa: E402

LIB = ROOT / "build" / "libsyncbench_audit.so"


def test_pairs_turn_both_ways_after_an_untimed_block_so_a_drift_cancels():
    state, turns, timed = [1], [], []

    def recording(on):
        state[0] = on
        turns.append(on)
        return 0

    def time_block():  # 10 us a step more with the recording on; 1 us more each block (a drift)
        timed.append(state[0])
        return 100.0 + 10 * state[0] + len(timed)

    blocks = recording_turns.run(4, time_block, recording)
    assert [b["recording"] for b in blocks] == ["on", "off", "off", "on"]
    assert timed == [1, 1, 0, 0, 1]  # the untimed block first, recording on
    assert turns == [0, 1, 1, 0, 0, 1, 1]  # a turn off and on first, back on at the end
    s = recording_turns.summary(50, blocks)
    # on - off of each pair: 112 - 103 and 115 - 104; on always first would give 9 (the drift)
    assert s["cost_us"] == pytest.approx(10.0)
    assert s["on_us"] == pytest.approx(113.5) and s["off_us"] == pytest.approx(103.5)
    assert s["cost_pct"] == pytest.approx(100 * 10.0 / 103.5)
    assert s["variant"] == "recording-turns" and s["steps"] == 50
    assert [recording_turns.state_of(k) for k in range(6)] == [
        "on", "off", "off", "on", "on", "off"]


def test_an_odd_last_block_counts_in_nothing():
    blocks = [{"recording": "on", "step_us": 110.0}, {"recording": "off", "step_us": 100.0},
              {"recording": "off", "step_us": 101.0}, {"recording": "on", "step_us": 113.0},
              {"recording": "on", "step_us": 500.0}]  # unpaired: would move on_us to 113
    s = recording_turns.summary(10, blocks)
    assert s["on_us"] == pytest.approx(111.5) and s["off_us"] == pytest.approx(100.5)
    assert s["cost_us"] == pytest.approx(11.0)  # 10 and 12


def test_a_refused_turn_or_blocks_without_a_pair_are_errors():
    with pytest.raises(RuntimeError, match="refused"):
        recording_turns.run(2, lambda: 1.0, lambda on: -1)
    with pytest.raises(ValueError, match="no pair"):
        recording_turns.summary(5, [{"recording": "on", "step_us": 1.0}])
    with pytest.raises(ValueError, match="do not alternate"):
        recording_turns.summary(5, [{"recording": "on", "step_us": 1.0},
                                    {"recording": "on", "step_us": 2.0}])


def test_the_switch_is_the_loaded_librarys():
    if not LIB.exists():
        pytest.skip("build/libsyncbench_audit.so not built")
    probe = (
        "import ctypes, os, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import recording_turns as rt\n"
        "print(rt.switch()[1])\n"
        "ctypes.CDLL(os.environ['CUDA_INJECTION64_PATH'], mode=os.RTLD_NOW)\n"
        "fn, why = rt.switch()\n"
        "print(why, fn(1))\n")
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    r = subprocess.run([sys.executable, "-c", probe, str(ROOT / "tests" / "audit")],
                       capture_output=True, text=True, env={**env, "CUDA_INJECTION64_PATH":
                                                            str(LIB)}, timeout=60)
    assert r.returncode == 0, r.stderr
    not_loaded, loaded = r.stdout.splitlines()
    assert not_loaded.startswith(f"no recording switch in {LIB}")
    assert loaded == "None -1"  # found; no record file here: refused
    r = subprocess.run([sys.executable, "-c", probe, str(ROOT / "tests" / "audit")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert "not under syncbench audit" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--recording-turns", "4"], "not under syncbench audit"),
    (["--recording-turns", "1"], "B >= 2"),
    (["--recording-turns", "4", "--variant", "fixed"], "with --variant sync"),
])
def test_torch_train_refuses_turns_before_torch(args, message):
    env = {k: v for k, v in os.environ.items() if k != "CUDA_INJECTION64_PATH"}
    env["PYTHONPATH"] = "/nonexistent"  # torch is never reached
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "audit" / "torch_train.py"), *args],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2
    last = r.stderr.strip().splitlines()[-1]  # argparse's usage, then the error
    assert last.startswith("torch_train.py: error: --recording-turns") and message in last
