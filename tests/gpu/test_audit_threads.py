"""The replay across threads on a real PyTorch training loop (tests/audit/torch_train.py):
backward runs on the autograd engine's thread, which the main thread hands the graph to and
waits for. With the hand-offs recorded (the waits library, preloaded with --gpu-activity) the
engine's launches move with the main thread and the `.item()` line gets a prediction: the
autograd engine's thread is tied to the main one by the recorded hand-offs in both directions,
nothing is flagged, and the saving is no near-zero. The same records without their hand-offs
(the `wake` records and the proc record's "waits" taken out, as a program run without the
library records) make the figure unknown, never a confident near-zero: the table and the gate
say "unknown", the JSON flags it and leaves the row's site_save_us empty. Skipped without torch
and a GPU."""
import json

import pytest

from conftest import ROOT, run, torch_python

PY = torch_python()
pytestmark = pytest.mark.skipif(PY is None, reason="no torch with a CUDA device")
TRAIN = str(ROOT / "tests" / "audit" / "torch_train.py")
STEPS = 50
# the wide MLP's steps are GPU-bound: the GPU idles after each .item() until the next step's
# first kernels arrive, tens of microseconds at least (about 250 us on an H100)
LEAST_PER_CALL_US = 5.0


def item_rows(report):
    rows = [x for x in report["rows"] if (x.get("python") or {}).get("source", "").strip()
            .startswith("losses.append(loss.item())")]
    assert rows, [x.get("python") for x in report["rows"]]
    return rows


def sync_line():
    """The line that ends with the marker (the docstring names it too, mid-line)."""
    return next(i for i, text in enumerate(open(TRAIN).read().splitlines(), 1)
                if text.rstrip().endswith("# SYNC-LINE"))


def the_process(report):
    (p,) = [x for x in report["processes"] if x.get("predicted")]
    return p


def test_a_training_loops_item_line_is_predicted_across_threads(tmp_path):
    j, keep = tmp_path / "a.json", tmp_path / "records"
    r = run("audit", "--gpu-activity", "--max-syncs", "0", "--json", j, "--keep", keep, "--",
            PY, TRAIN, "--variant", "sync", "--size", "gpu", "--steps", str(STEPS),
            "--count-threads", timeout=600)
    assert r.returncode == 1, r.stderr
    truth = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    assert truth["threads"] >= 1  # backward ran on a thread of its own
    report = json.loads(j.read_text())
    p = the_process(report)
    assert p["predicted"]["model"]["hand_offs"] >= 2 * STEPS, p["predicted"]["model"]
    # the .item() line's site: a call a step, and under make test's load at times one more
    # (another thread's blocking call tied to the waiting line by the 5 ms windows: 51 once)
    site = [s for s in p["predicted"]["sites"]
            if f"torch_train.py:{sync_line()} " in s["site"]]
    assert site and STEPS <= site[0]["calls"] <= STEPS + 3, p["predicted"]["sites"]
    assert site[0]["threads_unmodelled"] == 0, site
    assert site[0]["save_per_call_us_typical"] >= LEAST_PER_CALL_US, site
    assert all(x["site_save_us"] is not None for x in item_rows(report))
    gate = [x for x in r.stderr.splitlines() if x.startswith("audit gate:")]
    assert gate and "unknown" not in gate[0], gate
    # the same records as a program run without the waits library would leave them
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in keep.iterdir():
        lines = f.read_text().splitlines()
        if f.name.startswith("proc-"):
            lines = [x.replace(',"waits":1', ',"waits":0') for x in lines
                     if not x.startswith('{"t":"wake"')]
        (bare / f.name).write_text("\n".join(lines) + "\n")
    j2 = tmp_path / "b.json"
    r = run("audit", "--from", bare, "--max-syncs", "0", "--json", j2, timeout=600)
    assert r.returncode == 1, r.stderr
    report = json.loads(j2.read_text())
    assert all(x["site_save_us"] is None for x in item_rows(report))
    assert the_process(report)["predicted"]["threads_unmodelled"] >= 1
    assert "hand-offs between threads were not recorded" in r.stderr, r.stderr
    gate = [x for x in r.stderr.splitlines() if x.startswith("audit gate:")]
    assert gate and "unknown (threads not modelled)" in gate[0], gate
