"""The default mode's cost within one process (tests/audit/recording_turns.py): under `syncbench
audit`, torch_train.py --recording-turns turns the audit's recording off and on between blocks of
its steps, through the injection library's switch. The off blocks record nothing: the `.item()`
syncs kept are those of the untimed block and the on blocks, and each stretch off is a `pause`
record. Skipped without torch and a GPU."""
import json

import pytest

from conftest import ROOT, run, torch_python

PY = torch_python()
pytestmark = pytest.mark.skipif(PY is None, reason="no torch with a CUDA device")
TRAIN = str(ROOT / "tests" / "audit" / "torch_train.py")
STEPS, BLOCKS = 40, 4


def test_blocks_with_the_recording_off_record_nothing(tmp_path):
    keep = tmp_path / "records"
    r = run("audit", "-q", "--keep", keep, "--", PY, TRAIN, "--variant", "sync", "--size",
            "host", "--steps", str(STEPS), "--recording-turns", str(BLOCKS), timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert out["variant"] == "recording-turns" and out["steps"] == STEPS
    assert [b["recording"] for b in out["blocks"]] == ["on", "off"] * (BLOCKS // 2)
    assert all(b["step_us"] > 0 for b in out["blocks"]) and out["off_us"] > 0
    recs = [json.loads(x) for f in keep.glob("proc-*.jsonl") for x in f.read_text().splitlines()
            if x.strip()]
    syncs = sum(1 for x in recs if x["t"] == "call" and
                x["api"].startswith("cudaStreamSynchronize"))
    # the untimed block and the on blocks: a .item() a step; none of the off blocks' (which
    # would add STEPS * BLOCKS // 2); torch's set-up makes a few more (6 on the H200)
    recorded = STEPS * (1 + BLOCKS // 2)
    assert recorded <= syncs <= recorded + STEPS // 2, syncs
    pauses = [x for x in recs if x["t"] == "pause"]
    assert len(pauses) == 1 + BLOCKS // 2, pauses  # the first turn, then each off block
    assert all(p["end"] > p["start"] for p in pauses)
