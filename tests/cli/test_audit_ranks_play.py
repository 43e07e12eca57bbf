"""`syncbench audit --from` on the records of a 2-rank job whose collectives are gloo's of CUDA
tensors (docs/replay.md, "Ranks played together"): the ranks are played together and each
rank's figure is a prediction, the table and the JSON say how the ranks were modelled and
whose figure is the job's, and the run's sums take it once; a rank with one collective fewer
makes every figure unknown, with why. The records are a writer's (held to the record table).

Each step (200 us) of rank 0: the main thread launches its kernel ([h+5, h+15) on stream 7) and
hands the collective to gloo's worker at h+3; the worker syncs stream 7 until h+17, waits for
the peer's data until h+68 (woken by gloo's transport thread) and copies the result back to the
GPU at h+69. Rank 1 first waits for a 50 us kernel (its sync [h+3, h+57), train.py:41), so its
worker's data is ready at h+65, the last rank's. Without that sync both ranks go on 48 us a step
sooner (tests/unit/test_replay_ranks.c works the figures by hand)."""
import json

from conftest import run

US = 1000
STEPS = 40


def proc(pid, rank):
    return [{"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": rank, "local_rank": rank,
             "cmd": "python3 train.py", "clock_ns": 0, "mono_ns": 1000000, "mode": "count",
             "kernels": 1, "launches": 1, "waits": 1, "symsize": 1},
            {"t": "pystack", "id": 1, "frames": [["/job/train.py", "step", 41]]},
            {"t": "pystack", "id": 2, "frames": [["/job/train.py", "step", 50]]}]


def kernel(corr, t, stream, k0, k1):
    return [{"t": "api", "api": "cudaLaunchKernel_v7000", "dom": "rt", "tid": 1, "corr": corr,
             "start": t * US, "end": (t + 2) * US},
            {"t": "kernel", "dev": 0, "ctx": 1, "stream": stream, "corr": corr,
             "start": k0 * US, "end": k1 * US}]


def sync(tid, corr, t0, t1, stream, py):
    return [{"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt", "tid": tid,
             "ctx": 1, "corr": corr, "start": t0 * US, "end": t1 * US, "ranges": [],
             "stack": -1, "py": py},
            {"t": "sync", "type": "stream", "ctx": 1, "stream": stream, "corr": corr,
             "sync_id": -1, "start": t0 * US, "end": t1 * US}]


def copy_back(corr, t):
    """gloo's worker (thread 2) copies the result back to the GPU."""
    return [{"t": "call", "api": "cudaMemcpyAsync_v3020", "dom": "rt", "tid": 2, "ctx": 1,
             "corr": corr, "start": t * US, "end": (t + 2) * US, "ranges": [], "stack": -1,
             "copy": "HtoD", "host": "pinned"},
            {"t": "api", "api": "cudaMemcpyAsync_v3020", "dom": "rt", "tid": 2, "corr": corr,
             "start": t * US, "end": (t + 2) * US},
            {"t": "copy", "dev": 0, "ctx": 1, "stream": 8, "corr": corr, "rcorr": corr,
             "start": (t + 3) * US, "end": (t + 4) * US, "bytes": 4096, "kind": "HtoD",
             "src": "pinned", "dst": "device"}]


def wake(tid, t0, t1, by, at, py=None):
    w = {"t": "wake", "tid": tid, "start": t0 * US, "end": t1 * US, "by": by, "at": at * US,
         "obj": "cond"}
    return [dict(w, py=py) if py is not None else w]


def end(steps):
    return [{"t": "end", "clock_ns": 200 * steps * US, "mono_ns": 1000000 + 200 * steps * US,
             "why": "exit", "dropped": 0}]


def rank0(steps):
    recs = proc(200, 0)
    for i in range(steps):
        h, c = 200 * i, 10 * i
        recs += (kernel(c + 1, h, 7, h + 5, h + 15) + wake(2, h - 128 if i else 0, h + 4, 1, h + 3)
                 + sync(2, c + 2, h + 5, h + 17, 7, -1) + wake(2, h + 18, h + 68, 3, h + 67)
                 + copy_back(c + 3, h + 69) + wake(1, h + 6, h + 74, 2, h + 73, 2))
    return recs + end(steps)


def rank1(steps):
    recs = proc(201, 1)
    for i in range(steps):
        h, c = 200 * i, 10 * i
        recs += (kernel(c + 1, h, 9, h + 5, h + 55) + sync(1, c + 2, h + 3, h + 57, 9, 1)
                 + kernel(c + 3, h + 58, 7, h + 61, h + 63)
                 + wake(2, h - 129 if i else 0, h + 61, 1, h + 60)
                 + sync(2, c + 4, h + 62, h + 65, 7, -1) + copy_back(c + 5, h + 68)
                 + wake(1, h + 62, h + 73, 2, h + 72, 2))
    return recs + end(steps)


def audit(tmp_path, steps1):
    recs = tmp_path / "records"
    recs.mkdir()
    for pid, lines in ((200, rank0(STEPS)), (201, rank1(steps1))):
        f = recs / f"proc-{pid}.jsonl"
        f.write_text("".join(json.dumps(x) + "\n" for x in lines))
        check = run("__record-schema", "--check", f, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
    out = tmp_path / "report.json"
    r = run("audit", "--from", recs, "--json", out, timeout=120)
    assert r.returncode == 0, r.stderr
    return r, json.loads(out.read_text())


def test_a_gloo_jobs_ranks_are_played_together(tmp_path):
    r, rep = audit(tmp_path, STEPS)
    model = f"ranks played together: 2 ranks, {STEPS} collectives matched"
    assert f"pid 200: {model}; the job's figure is rank 1's (pid 201)" in r.stderr, r.stderr
    assert f"pid 201: {model}; this rank's play ends last: its figure is the job's" in r.stderr
    assert "unknown" not in r.stderr, r.stderr
    procs = {p["rank"]: p["predicted"] for p in rep["processes"]}
    for pred in procs.values():
        assert pred["ranks_model"] == model and pred["ranks_unmodelled"] == 0
        assert pred["ranks_played"] == 2 and pred["collectives_matched"] == STEPS
    assert procs[1]["job_figure"] and not procs[0]["job_figure"]
    (site,) = [s for s in procs[1]["sites"] if "train.py:41" in s["site"]]
    assert site["save_per_call_us_typical"] == 48.0  # 54 alone: rank 0 then arrives last
    assert rep["total"]["predicted_save_us"] == procs[1]["save_us"]  # the job's once


def test_a_missing_collective_makes_every_figure_unknown(tmp_path):
    r, rep = audit(tmp_path, STEPS - 1)
    why = (f"the ranks' collectives differ in number: rank 1 has {STEPS - 1}, rank 0 {STEPS}")
    assert f"would save: unknown: ranks not modelled (one of 2 ranks, not played together: " \
           f"{why};" in r.stderr, r.stderr
    for p in rep["processes"]:
        assert p["predicted"]["ranks_model"] == "ranks not modelled: " + why
        assert p["predicted"]["ranks_unmodelled"] == 1 and not p["predicted"]["job_figure"]
