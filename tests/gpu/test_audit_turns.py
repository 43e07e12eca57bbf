"""The default mode's cost within one process (tests/audit/recording_turns.py): under `syncbench
audit`, torch_train.py --recording-turns turns the audit's recording off and on between blocks of
its steps, through the injection library's switch. The off blocks record nothing: the `.item()`
syncs kept are those of the untimed block and the on blocks, and each stretch off is a `pause`
record. Skipped without torch and a GPU."""
import json
import sys

import pytest

from conftest import ROOT, run, torch_python

sys.path.insert(0, str(ROOT / "tests" / "audit"))
import recording_turns  # noqa: E402

PY = torch_python()
pytestmark = pytest.mark.skipif(PY is None, reason="no torch with a CUDA device")
TRAIN = str(ROOT / "tests" / "audit" / "torch_train.py")
STEPS, BLOCKS = 40, 6  # on, off, off, on, on, off: two stretches off


def test_blocks_with_the_recording_off_record_nothing(tmp_path):
    keep = tmp_path / "records"
    r = run("audit", "-q", "--keep", keep, "--", PY, TRAIN, "--variant", "sync", "--size",
            "host", "--steps", str(STEPS), "--recording-turns", str(BLOCKS), timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert out["variant"] == "recording-turns" and out["steps"] == STEPS
    order = ["on", "off", "off", "on", "on", "off"]  # pairs in both orders
    assert [recording_turns.state_of(k) for k in range(BLOCKS)] == order
    assert [b["recording"] for b in out["blocks"]] == order
    assert all(b["step_us"] > 0 for b in out["blocks"]) and out["off_us"] > 0
    recs = [json.loads(x) for f in keep.glob("proc-*.jsonl") for x in f.read_text().splitlines()
            if x.strip()]
    syncs = sum(1 for x in recs if x["t"] == "call" and
                x["api"].startswith("cudaStreamSynchronize"))
    # the untimed block and the on blocks: a .item() a step; none of the off blocks' (which
    # would add STEPS * order.count("off")); torch's set-up makes a few more (6 on the H200)
    recorded = STEPS * (1 + order.count("on"))
    assert recorded <= syncs <= recorded + STEPS // 2, syncs
    pauses = [x for x in recs if x["t"] == "pause"]
    # the first turn, then each stretch of off blocks (two off blocks in a row are one)
    assert len(pauses) == 3, pauses
    assert all(p["end"] > p["start"] for p in pauses)
