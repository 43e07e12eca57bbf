"""The audit's gate when CUPTI's one subscription is taken before the audit's library gets it
(issue 32, item 1): tests/audit/audit_subscriber subscribes first, as the PyTorch profiler,
Nsight or a monitoring agent may, then makes 3 stream syncs. The gate must fail in one line
saying nothing was checked (it passed with "0 blocking calls"), the JSON must mark the process
incomplete; the same program alone is counted and gated as before. Skipped without a GPU."""
import json
import os

import pytest

from conftest import ROOT, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

PROGRAMS = os.environ.get("SYNCBENCH_TEST_PROGRAMS", str(ROOT / "build" / "tests"))
SUBSCRIBER = os.path.join(PROGRAMS, "audit_subscriber")


def audit(tmp_path, mode, max_syncs):
    j = tmp_path / f"{mode}.json"
    r = run("audit", "--json", j, "--max-syncs", max_syncs, "--", SUBSCRIBER, mode, timeout=300)
    truth = json.loads([x for x in r.stdout.splitlines() if x.startswith("{")][-1])
    return r, json.loads(j.read_text()), truth


def gate_lines(stderr):
    return [x for x in stderr.splitlines() if x.startswith("audit gate:")]


def test_another_subscriber_first_fails_the_gate(tmp_path):
    r, report, truth = audit(tmp_path, "first", 0)
    assert truth["subscribed"], "the program could not take CUPTI's subscription first"
    assert r.returncode == 1, r.stderr
    (line,) = gate_lines(r.stderr)
    assert "FAILED" in line and "nothing was checked" in line, line
    assert "another CUPTI subscriber" in line, line
    (p,) = report["processes"]
    assert p["complete"] is False and p["records_incomplete"], p


def test_the_same_program_alone_is_counted_and_gated(tmp_path):
    """3 stream syncs and the cudaFree: 4 blocking calls, the gate passes at 4, fails at 3."""
    r, report, truth = audit(tmp_path, "alone", 4)
    assert not truth["subscribed"]
    assert r.returncode == 0, r.stderr
    assert gate_lines(r.stderr) == ["audit gate: passed: 4 blocking calls (max 4)"], r.stderr
    (p,) = report["processes"]
    assert p["complete"] is True and p["records_incomplete"] is None, p
    r, _, _ = audit(tmp_path, "alone", 3)
    assert r.returncode == 1, r.stderr
    assert gate_lines(r.stderr)[0].startswith("audit gate: FAILED: 4 blocking calls"), r.stderr
