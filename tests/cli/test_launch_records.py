"""One API record per launch (issue 36): with the driver's launch records on, CUPTI records a
runtime launch twice, the runtime's call and the driver's inside it, and the GPU work carries the
driver's id. The analyzer uses the record whose id the work carries; the runtime's is never
read. So records without the runtime's (SYNCBENCH_ACTIVITY_OFF=rt-launches) give the same
figures: the classes, the rows, the gate and every prediction of the replay, with hand-offs
between threads and .item()'s readbacks too (tests/bench/gen_audit_records.py writes both forms).
Only the process's span may shrink, by the first launch's runtime prologue (its percentages
with it)."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, run

GEN = ROOT / "tests" / "bench" / "gen_audit_records.py"


def report(tmp_path, name, *gen_args):
    d = tmp_path / name
    subprocess.run([sys.executable, str(GEN), *gen_args, "120", str(d)], check=True)
    r = run("audit", "--from", d, "--json", tmp_path / f"{name}.json")
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / f"{name}.json").read_text()), r.stderr


def figures(o):
    """What the analysis found: every field but the span's (lifetime_s and percentages of it)."""
    if isinstance(o, dict):
        return {k: figures(v) for k, v in o.items()
                if not (k.endswith("_pct") or k == "lifetime_s")}
    if isinstance(o, list):
        return [figures(x) for x in o]
    return o


@pytest.mark.parametrize("extra", [(), ("--hand-offs",), ("--readback",),
                                   ("--hand-offs", "--readback")])
def test_without_the_runtimes_launch_records_the_figures_are_the_same(tmp_path, extra):
    both, table_both = report(tmp_path, "both", "--launches", "both", *extra)
    drv, table_drv = report(tmp_path, "drv", "--launches", "drv", *extra)
    keys = ("processes", "total", "rows", "ranges", "gate")
    assert figures({k: both[k] for k in keys}) == figures({k: drv[k] for k in keys})
    (p,) = both["processes"]
    model = p["predicted"]["model"]
    # a real prediction: every operation placed at its launch, every sync's target known
    assert model["operations_unplaced"] == 0 and model["syncs_untargeted"] == 0
    assert model["gpu_operations"] == 120 * (2 if "--readback" in extra else 1)
    assert p["predicted"]["save_us"] > 0
    if "--hand-offs" in extra:
        assert model["hand_offs"] == 240 and p["predicted"]["threads_unmodelled"] == 0
    # the span differs by the first launch's prologue (0.5 us) at most
    assert abs(p["lifetime_s"] - drv["processes"][0]["lifetime_s"]) <= 0.5e-6


def test_the_comparison_sees_a_launch_taken_from_another_record(tmp_path):
    """The control: launches timed by the runtime's records alone (its calls start 0.5 us
    before the driver's) are predicted otherwise, so equal figures above are no accident."""
    both, _ = report(tmp_path, "both", "--launches", "both")
    rt, _ = report(tmp_path, "rt", "--launches", "rt")
    m_both = both["processes"][0]["predicted"]["model"]
    m_rt = rt["processes"][0]["predicted"]["model"]
    assert m_rt["launch_latency_us"] == pytest.approx(m_both["launch_latency_us"] + 0.5)
    assert figures(both["processes"]) != figures(rt["processes"])
