"""`syncbench audit` across ranks on a real GPU: a 2-rank torchrun job whose last rank arrives
late at every step by 2 ms of GPU work (tests/audit/torch_ranks.py: nccl with a GPU per rank,
gloo on cuda:0 with one GPU) is named as the straggler of train_step, in the report and in the
table, with every instance of the range seen on both ranks; the same report split into one
report per rank and merged gives the same view. One GPU is enough. Skipped without a GPU or
torch with CUDA.

How often it arrived last and how long the others waited for it are timings:
tests/validate/'s (`make validate`: in at least 80 % of the instances, the others' median wait
within [0.5 x E, 1.5 x E + 500 us] of E, the straggler's own extra time per step)."""
import json

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
    ranks = rep["ranks"]
    assert [x["rank"] for x in ranks["ranks"]] == [0, 1]
    g = train_step(ranks)
    assert g["ranks"] == [0, 1] and g["instances"] == STEPS, g
    assert len(g["instance_wait_us"]) == STEPS, g
    top = g["stragglers"][0]
    assert top["rank"] == 1, g["stragglers"]  # 2 ms late at every step: the others wait for it
    assert 1 <= top["instances"] <= STEPS, g["stragglers"]
    assert top["wait_median_us"] >= 0, top
    # the table says so
    assert f"train_step: rank 1 arrived last in {top['instances']} of {STEPS} instances" \
        in r.stderr, r.stderr[-4000:]


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
