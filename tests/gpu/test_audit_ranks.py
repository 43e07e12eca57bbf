"""`syncbench audit` across ranks on a real GPU: a 2-rank torchrun job whose last rank arrives
late at every step (tests/audit/torch_ranks.py: nccl with a GPU per rank, gloo on cuda:0 with
one GPU) is named as the straggler of train_step, with the others' wait per step about what it
was late by; the same report split into one report per rank and merged gives the same view.
One GPU is enough. Skipped without a GPU or torch with CUDA.

Tolerance: the straggler is the last rank in at least 80 % of the 50 instances (a step where
the fast rank blocks for reasons of its own, a late wake-up, may name the other), and the
others' median wait per instance lies within [0.5 x E, 1.5 x E + 500 us], E the straggler's own
median extra time per step (its GPU spin of --straggler-us and the polling that waits for it,
timed by the program itself). The wait is E less what the fast rank did meanwhile outside a
sync, plus wake-ups and, in gloo mode, the host function's hand-off: tens of microseconds
against E of 2 ms. TORCH_NCCL_BLOCKING_WAIT=0 (torch's default) keeps NCCL's wait on the GPU:
with 1, work.wait() polls the event (cudaEventQuery, a poll), and the wait is in no blocking
call."""
import json
import os

import pytest

from conftest import ROOT, gpu_available, run, torch_python

PROGRAM = ROOT / "tests" / "audit" / "torch_ranks.py"
STRAGGLER_US = 2000
STEPS = 50

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The audited job: (the audit's result, its --json report, the program's JSON line)."""
    py = torch_python()
    if py is None:
        pytest.skip("no torch with CUDA")
    tmp = tmp_path_factory.mktemp("ranks")
    report = tmp / "R.json"
    r = run("audit", "--json", report, "--", py, "-m", "torch.distributed.run", "--standalone",
            "--nproc_per_node=2", PROGRAM, "--straggler-us", STRAGGLER_US, "--steps", STEPS,
            env={"NCCL_NVLS_ENABLE": "0", "TORCH_NCCL_BLOCKING_WAIT": "0"}, timeout=600,
            cwd=ROOT)
    assert r.returncode == 0, r.stderr[-4000:]
    facts = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert len(facts) == 1, r.stdout
    return r, json.loads(report.read_text()), facts[0], tmp


def train_step(ranks):
    (g,) = [x for x in ranks["ranges"] if x["name"] == "train_step"]
    return g


def test_the_straggler_is_named_with_the_wait_it_caused(job):
    r, rep, facts, _ = job
    assert facts["straggler"] == 1 and facts["world"] == 2
    extra = facts["extra_us"]
    assert extra >= 0.5 * STRAGGLER_US, facts  # the straggler was late (about as told)
    ranks = rep["ranks"]
    assert [x["rank"] for x in ranks["ranks"]] == [0, 1]
    g = train_step(ranks)
    assert g["ranks"] == [0, 1] and g["instances"] == STEPS, g
    top = g["stragglers"][0]
    assert top["rank"] == 1, g["stragglers"]
    assert top["instances"] >= 0.8 * STEPS, g["stragglers"]
    assert 0.5 * extra <= top["wait_median_us"] <= 1.5 * extra + 500, (top, facts)
    # the fast rank blocked about the straggler's lateness in every step it waited
    assert sum(1 for w in g["instance_wait_us"] if w >= 0.5 * extra) >= 0.8 * STEPS
    # the table says so
    assert f"train_step: rank 1 arrived last in {top['instances']} of {STEPS} instances" \
        in r.stderr, r.stderr[-4000:]
    print(f"{facts['backend']}: rank 1 arrived last in {top['instances']} of {STEPS}; wait "
          f"{top['wait_median_us']:.0f} us per step (median); its extra time {extra:.0f} us")


def test_the_report_split_by_rank_merges_back(job):
    """One report per rank, as two machines would write them: the merge gives the same view."""
    _, rep, _, tmp = job
    files = []
    for rank in (0, 1):
        part = dict(rep)
        part["ranks"] = {"ranks": [dict(x, host=f"node-{rank}") for x in rep["ranks"]["ranks"]
                                   if x["rank"] == rank], "ranges": []}
        path = tmp / f"rank{rank}.json"
        path.write_text(json.dumps(part))
        files.append(path)
    merged = tmp / "merged.json"
    r = run("audit", "--merge", *files, "--json", merged)
    assert r.returncode == 0, r.stderr
    assert "node-0" in r.stdout and "node-1" in r.stdout
    g, want = train_step(json.loads(merged.read_text())["ranks"]), train_step(rep["ranks"])
    assert g["stragglers"] == want["stragglers"]
    assert g["instance_straggler"] == want["instance_straggler"]
