"""The replay across threads on a real PyTorch training loop (tests/audit/torch_train.py):
backward runs on the autograd engine's thread, which the replay does not model (issue 34), so
the `.item()` line's predicted saving must be reported as unknown, never as a confident
near-zero: the table and the gate say "unknown", the JSON flags every saving that removes the
line (threads_unmodelled) and leaves the row's site_save_us empty. Skipped without torch and a
GPU."""
import json

import pytest

from conftest import ROOT, run, torch_python

PY = torch_python()
pytestmark = pytest.mark.skipif(PY is None, reason="no torch with a CUDA device")
TRAIN = str(ROOT / "tests" / "audit" / "torch_train.py")


def test_a_training_loops_item_line_is_unknown_not_near_zero(tmp_path):
    j = tmp_path / "a.json"
    r = run("audit", "--gpu-activity", "--max-syncs", "0", "--json", j, "--", PY, TRAIN,
            "--variant", "sync", "--size", "host", "--steps", "50", "--count-threads",
            timeout=600)
    assert r.returncode == 1, r.stderr
    truth = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert truth["threads"] >= 1
    report = json.loads(j.read_text())
    rows = [x for x in report["rows"] if (x.get("python") or {}).get("source", "").strip()
            .startswith("losses.append(loss.item())")]
    assert rows, [x.get("python") for x in report["rows"]]
    assert all(x["site_save_us"] is None for x in rows), rows
    (p,) = [x for x in report["processes"] if x.get("predicted")]
    assert p["predicted"]["threads_unmodelled"] >= 1, p["predicted"]
    assert "threads not modelled" in r.stderr, r.stderr
    gate = [x for x in r.stderr.splitlines() if x.startswith("audit gate:")]
    assert gate and "unknown (threads not modelled)" in gate[0], gate
