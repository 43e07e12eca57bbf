"""The replay's predicted savings on a real GPU: what each prediction is made of (make test), and
the measurements tests/validate/ holds against ground truth (make validate).

Here, correctness only, one audit each, no figure held against another:
1. In one process, synthetic workloads (tests/audit/audit_truth.c) under the audit with
   --gpu-activity: each workload's sync site is found, with the calls the program made
   ((REPS + 1) x N, the recorded repetitions); every unrecorded repetition is a stretch the
   replay knows; each prediction and each measured saving is a number.
2. In one process, fix scenarios with recording turns (SYNCBENCH_RECORDING_TURNS=1,
   engine/measure.h): the per-step site is found, every counted repetition (pair) was an
   unrecorded stretch, the syncs per step the fix removes are read from the scenario's CSV.
3. The PyTorch loop tests/audit/torch_item.py: the site is the .item() line, one sync a step.
4. DistributedDataParallel jobs of 2 and 4 ranks on gloo (tests/audit/torch_ddp.py): on each
   rank the site is the loss.item() line with one sync a step, its figure a prediction: the
   ranks played together, their collectives matched.

The accuracy (tests/validate/replay_checks.py, `make validate`) uses the functions below: each
measurement in ROUNDS processes, medians. The prediction is the replay's typical saving per call
at the site of the per-step sync (the median over windows of the run, replay.h: the measured
saving is a median of repetitions, and a stretch where the VM's host was slow moves the run's
mean, not its median) times the syncs per step the fix removes; the run's mean per call is kept
beside it. The target, the issue's: within 15 % or 2 us per step. Held for the fix scenarios in
one process, where the truth was measured in the audited processes themselves; reported for the
synthetic workloads, across processes (the user's way: the fix measured in one process, its
syncing variant audited in another; the host's speed moves between processes), for the PyTorch
loop and the DDP job, and where the model does not apply (the host needs the value to decide, a
data-dependent size, a fix that removes launches, narrows a wait, keeps one sync of several or
adds work of its own rather than removing a sync).

SYNCBENCH_REPLAY_OUT=DIR keeps the table (replay.json, replay.md) and the record streams."""
import csv
import json
import math
import os
import pathlib
import shutil
import subprocess
from statistics import median

import pytest

from conftest import torch_python, ROOT, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

TORCH_ITEM = str(ROOT / "tests" / "audit" / "torch_item.py")
TORCH_DDP = ROOT / "tests" / "audit" / "torch_ddp.py"
DDP_STEPS = 1000
DDP_ENV = {"NCCL_NVLS_ENABLE": "0"}  # NVLink multicast off (tests/gpu/test_audit_ranks.py)
# The .item() line of the gloo job saves nothing by the replay (GPU-bound), and its windows
# scatter around 0 by about a tenth of a us a call (-0.093 on one rank of one audit on the H100):
# "a saving" is held to 1 us of 0, a twentieth of what the line waits (22 to 29 us a call).
DDP_RESOLUTION_US = 1.0
OUT = os.environ.get("SYNCBENCH_REPLAY_OUT")
MEASURE = ("--min-reps", "50", "--max-time", "2")
ROUNDS = int(os.environ.get("SYNCBENCH_REPLAY_ROUNDS", "3"))
TRUTH = pathlib.Path(os.environ.get("SYNCBENCH_TEST_PROGRAMS", ROOT / "build" / "tests")) / \
    "audit_truth"
AUDITED = ("--min-reps", "3", "--max-reps", "3", "--warmup", "1", "--warmup-time", "0")
# the counted repetitions of a fix scenario audited with recording turns
TURN_REPS = 10

# (label, scenario, syncing variant, sync-free variant, --set, why the model does not apply).
# Each prediction drops the readbacks with their syncs, as the fixes do.
CASES = [
    ("no .item() after each GEMM", "small-gemm", "sync-item", "async", None, None),
    ("no blocking readback after each GEMM", "small-gemm", "sync-readback", "async", None, None),
    ("coalesce 8 readbacks into one", "coalesce", "per-value", "stacked", "values=8",
     "the fix keeps one sync of the eight (which then waits for the values' kernel) and adds a "
     "gather kernel; the replay removes every sync of the site"),
    ("log the loss never, not every step", "log-every", "every-step", "never", None, None),
    ("no cudaMalloc/cudaFree in the loop", "alloc", "malloc-free", "reuse", None, None),
    ("pinned staging, async copy", "small-h2d", "pageable", "pinned-async", None,
     "the fix adds calls of its own each step (cudaMemcpyAsync, an event record and query), "
     "whose cost the syncing run does not contain"),
    ("branch on the GPU", "device-branch", "host-branch", "device-select", None,
     "the host needs the value to choose the next launch"),
    ("fixed shapes", "dynamic-shape", "count-readback", "fixed-shape", None,
     "the read-back count sizes the next launch (a data-dependent size)"),
    ("CUDA graph", "graph", "launches", "graph", None,
     "the fix removes launches, not syncs (one sync a step in both)"),
    ("sync the stream, not the device", "busy-stream", "sync-device", "sync-stream", None,
     "the fix narrows the wait to one stream; the sync stays"),
]
CASE_IDS = [f"{c[1]}-{c[2]}" for c in CASES]


def case(case_id):
    """The CASES entry of a "scenario-syncing variant" id."""
    return CASES[CASE_IDS.index(case_id)]


def tolerance(measured):
    return max(0.15 * abs(measured), 2.0)


def within_target(predicted, measured):
    """The issue's target: within 15 % or 2 us per step."""
    return abs(predicted - measured) <= tolerance(measured)


def within_factor_3(predicted, measured):
    """Where the measured saving is clear (over 5 us per step), a prediction within a factor of
    3 of it: a model that lost a term, or double counts one, is further off."""
    return measured <= 5 or measured / 3 <= predicted <= 3 * measured


def is_number(x):
    return isinstance(x, (int, float)) and math.isfinite(x)


def measured_saving(tmp_path, scenario, sync, free, sets):
    """(saving_us of `free` against `sync`, syncs per step of each), one paired run."""
    out = tmp_path / f"{scenario}-measured.csv"
    args = ["--scenario", scenario, "--variant", f"{sync},{free}", *MEASURE, "-q", "--csv", out]
    if sets:
        args += ["--set", sets]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    return read_saving(out, sync, free)


def read_saving(out, sync, free):
    """(saving_us of `free` against `sync`, syncs per step of each) from a paired run's CSV."""
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    med = {(row["variant"], row["metric"]): float(row["median"]) for row in rows}
    if (free, "saving_us") in med:
        return med[(free, "saving_us")], med[(sync, "syncs_per_step")], med[(free, "syncs_per_step")]
    # small-gemm: the syncing variant's overhead_us is its paired difference from async, and
    # each of its iterations makes one sync
    return med[(sync, "overhead_us")], 1.0, 0.0


def keep_dir(name):
    if not OUT:
        return None
    d = pathlib.Path(OUT) / "records" / name
    if d.exists():
        shutil.rmtree(d)
    d.parent.mkdir(parents=True, exist_ok=True)
    return d


def audited(tmp_path, name, *cmd, env=None):
    """The audit's JSON report of CMD run with --gpu-activity (records kept under OUT), with
    the completed process."""
    j = tmp_path / f"{name}.json"
    keep = keep_dir(name)
    opts = ["--keep", keep] if keep else []
    r = run("audit", "-q", "--gpu-activity", "--top", "20", "--json", j, *opts, "--", *cmd,
            timeout=600, env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(j.read_text()), r


def step_site(report):
    """The replayed site with the most blocking calls: the per-step sync."""
    procs = [p for p in report["processes"] if p["predicted"]]
    assert procs, "no process was replayed (launches not recorded?)"
    sites = [s for p in procs for s in p["predicted"]["sites"]]
    return max(sites, key=lambda s: s["calls"])


def old_could_save(report, pid=None):
    """The figure the replay replaced: the bubbles' sum capped at the GPU's idle time, of the
    process PID or of them all."""
    total = 0.0
    for p in report["processes"]:
        if pid is not None and p["pid"] != pid:
            continue
        bubbles = sum(r["bubble_total_us"] or 0 for r in report["rows"] if r["pid"] == p["pid"])
        idle = p["lifetime_s"] * 1e6 * (1 - (p["gpu_busy_pct"] or 0) / 100)
        total += min(bubbles, max(idle, 0))
    return total


RESULTS = []


def record(row):
    """Adds a row to the table kept under SYNCBENCH_REPLAY_OUT (replay.json, replay.md)."""
    RESULTS.append(row)
    if not OUT:
        return
    pathlib.Path(OUT).mkdir(parents=True, exist_ok=True)
    (pathlib.Path(OUT) / "replay.json").write_text(json.dumps(RESULTS, indent=1))
    lines = ["| fix | measured µs/step | predicted µs/step | error µs | run's mean µs/step "
             "| model |",
             "| --- | ---: | ---: | ---: | ---: | --- |"]
    for x in RESULTS:
        m = x["measured"]
        measured = "-" if m is None else f"{m:.2f}"
        error = "-" if m is None else f"{x['predicted'] - m:+.2f}"
        lines.append(f"| {x['label']} | {measured} | {x['predicted']:.2f} | {error} | "
                     f"{x['predicted_mean']:.2f} | "
                     f"{'applies' if not x['why_not'] else 'does not apply: ' + x['why_not']} |")
    (pathlib.Path(OUT) / "replay.md").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------
# 1. audit_truth: synthetic workloads, the truth measured in the audited process

TRUTH_WORKLOADS = ["launch-bound", "gpu-bound", "short-kernel", "alloc", "non-blocking"]


def truth_round(tmp_path, name, n=200, reps=15):
    """audit_truth N REPS under the audit: {workload: its figures}, each workload's site checked
    (found once, with the calls of the recorded repetitions)."""
    report, r = audited(tmp_path, name, str(TRUTH), str(n), str(reps))
    truth = json.loads(r.stdout.strip().splitlines()[-1])
    assert (truth["n"], truth["reps"]) == (n, reps), truth
    procs = [p for p in report["processes"] if p["predicted"]]
    assert len(procs) == 1, "the truth program was not replayed"
    model = procs[0]["predicted"]["model"]
    # each "off" repetition is a stretch the replay knows was not recorded
    assert model["unrecorded_stretches"] >= reps, model
    out = {}
    for workload in TRUTH_WORKLOADS:
        w = truth["workloads"][workload]
        found = [s for s in procs[0]["predicted"]["sites"] if f"!{w['site']} (" in s["site"]]
        assert len(found) == 1, (workload, [s["site"] for s in procs[0]["predicted"]["sites"]])
        site = found[0]
        iters = site["calls"] / w["syncs_per_iter"]
        assert iters == (reps + 1) * n, (workload, site["calls"])  # the "on" repetitions
        kept = "_readbacks_kept" if w["kept"] else ""
        out[workload] = {"predicted": site[f"save_per_call_us{kept}_typical"] * w["syncs_per_iter"],
                         "predicted_mean": site[f"save_wall_us{kept}"] / iters,
                         "measured": w["saving_off"], "measured_recorded": w["saving_on"],
                         "site": site, "model": model}
    return out


def truth_figures(rounds, workload):
    """The medians over audit_truth's rounds of one workload's figures, recorded in the table."""
    xs = [x[workload] for x in rounds]
    site = xs[0]["site"]
    row = {"label": f"in one process: {workload}", "scenario": "audit_truth", "sync": "sync",
           "free": "free", "measured": median(x["measured"] for x in xs),
           "predicted": median(x["predicted"] for x in xs),
           "predicted_mean": median(x["predicted_mean"] for x in xs),
           "measured_recorded": median(x["measured_recorded"] for x in xs),
           "site": site["site"], "calls": site["calls"], "bound": site["bound"],
           "model": xs[0]["model"], "why_not": None,
           "rounds": [{"measured": x["measured"], "predicted": x["predicted"]} for x in xs],
           "all_savings": all(x["predicted"] >= 0 for x in xs)}
    record(row)
    return row


def test_truth_sites_and_calls(tmp_path):
    """One short audit of audit_truth: every workload's site and calls, numbers throughout."""
    figures = truth_round(tmp_path, "truth", n=50, reps=3)
    for workload, x in figures.items():
        for key in ("predicted", "predicted_mean", "measured", "measured_recorded"):
            assert is_number(x[key]), (workload, key, x[key])


# ---------------------------------------------------------------------------------------------
# 2. the fix scenarios in one process, with recording turns

def syncbench_cmd(scenario, variants, sets, *more):
    cmd = [str(pathlib.Path(os.environ.get("SYNCBENCH", ROOT / "build" / "syncbench"))),
           "--scenario", scenario, "--variant", variants, *more, "-q"]
    return cmd + (["--set", sets] if sets else [])


def fix_round(report, measured, spv_sync, spv_free):
    """One audit of a fix scenario's syncing variant beside its measured saving: the per-step
    site's typical saving per call times the syncs per step the fix removes."""
    site = step_site(report)
    removed = max(spv_sync - spv_free, 0)
    return {"measured": measured, "removed": removed, "site": site,
            "predicted": site["save_per_call_us_typical"] * removed,
            "per_call": site["save_per_call_us_typical"],
            "per_call_mean": site["save_per_call_us"],
            "per_call_kept": site.get("save_per_call_us_readbacks_kept_typical"),
            "model": report["processes"][0]["predicted"]["model"]}


def fix_turns_round(tmp_path, case_id, k):
    """Round K of a fix scenario in one process: its syncing and sync-free variants, paired,
    under the audit with recording turns; the recorded repetitions give the replay its run, the
    unrecorded ones the measured saving."""
    _, scenario, sync, free, sets, _ = case(case_id)
    csv_out = tmp_path / f"{scenario}-turns-{k}.csv"
    cmd = syncbench_cmd(scenario, f"{sync},{free}", sets, "--min-reps", str(TURN_REPS),
                        "--max-reps", str(TURN_REPS), "--warmup", "1", "--warmup-time", "0",
                        "--csv", str(csv_out))
    name = f"{scenario}-{sync}-turns-{k}"
    report, _ = audited(tmp_path, name, *cmd, env={"SYNCBENCH_RECORDING_TURNS": "1"})
    if OUT:  # the unrecorded repetitions' figures beside the records
        shutil.copy(csv_out, pathlib.Path(OUT) / "records" / f"{name}.csv")
    measured, spv_sync, spv_free = read_saving(csv_out, sync, free)
    # each counted repetition (pair) was unrecorded: the replay knows where
    assert report["processes"][0]["predicted"]["model"]["unrecorded_stretches"] >= TURN_REPS
    return fix_round(report, measured, spv_sync, spv_free)


def fix_summary(case_id, rounds, label, across=False):
    """The medians of a fix scenario's rounds, recorded in the table."""
    label_, scenario, sync, free, _, why_not = case(case_id)
    per_call = median(x["per_call"] for x in rounds)
    removed = median(x["removed"] for x in rounds)
    # across processes the prediction is the median per call times the median removed
    predicted = per_call * removed if across else median(x["predicted"] for x in rounds)
    site = rounds[0]["site"]
    row = {"label": label, "scenario": scenario, "sync": sync, "free": free,
           "measured": median(x["measured"] for x in rounds), "predicted": predicted,
           "predicted_mean": (median(x["per_call_mean"] for x in rounds) * removed if across
                              else median(x["per_call_mean"] * x["removed"] for x in rounds)),
           "per_call": per_call,
           "per_call_kept": median(x["per_call_kept"] or 0 for x in rounds),
           "removed_per_step": removed, "site": site["site"], "calls": site["calls"],
           "blocked_per_call": site["blocked_us"] / site["calls"], "bound": site["bound"],
           "model": rounds[0]["model"], "why_not": why_not,
           "rounds": [{"measured": x["measured"],
                       "predicted": x["removed"] * x["per_call"] if across else x["predicted"]}
                      for x in rounds],
           "all_savings": all(x["predicted"] >= 0 for x in rounds)}
    record(row)
    return row


def fix_in_one_process(tmp_path, case_id, rounds=ROUNDS):
    label = case(case_id)[0]
    xs = [fix_turns_round(tmp_path, case_id, k + 1) for k in range(rounds)]
    return fix_summary(case_id, xs, f"{label} (in one process)")


def fix_across_processes(tmp_path, case_id, rounds=ROUNDS):
    """The user's way: the saving measured in one process, the audit of the syncing variant in
    another, ROUNDS interleaved rounds (the host's speed moves between processes)."""
    label, scenario, sync, free, sets, _ = case(case_id)
    cmd = syncbench_cmd(scenario, sync, sets, *AUDITED)
    xs = []
    for k in range(rounds):
        measured, spv_sync, spv_free = measured_saving(tmp_path, scenario, sync, free, sets)
        report, _ = audited(tmp_path, f"{scenario}-{sync}-{k + 1}", *cmd)
        xs.append(fix_round(report, measured, spv_sync, spv_free))
    return fix_summary(case_id, xs, label, across=True)


# make test: one case through the GEMM path (cuBLAS, a readback), one through allocations
TURN_CASES = ["small-gemm-sync-item", "alloc-malloc-free"]


@pytest.mark.parametrize("case_id", TURN_CASES)
def test_fix_in_one_process_site_and_turns(tmp_path, case_id):
    x = fix_turns_round(tmp_path, case_id, 1)
    assert x["site"]["calls"] > 0 and x["site"]["site"], x["site"]
    assert x["removed"] == 1, x  # one sync a step in the syncing variant, none in the fix
    for key in ("measured", "predicted", "per_call", "per_call_mean"):
        assert is_number(x[key]), (key, x[key])


# ---------------------------------------------------------------------------------------------
# 3. the PyTorch loop

def loop_us(py, mode, steps):
    r = subprocess.run([py, TORCH_ITEM, "--mode", mode, "--steps", str(steps)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])["loop_us"]


def torch_item_audit(tmp_path, py, name, steps):
    """An audit of the .item() loop: (report, the per-step site), the site checked: the .item()
    line, one sync a step."""
    report, _ = audited(tmp_path, name, py, TORCH_ITEM, "--mode", "item", "--steps", steps)
    site = step_site(report)
    assert site["calls"] == steps, site
    assert "torch_item.py:" in site["site"], site
    return report, site


def torch_loop(tmp_path, py, rounds=ROUNDS, steps=2000):
    """Reported, not held: the fix the issue names, item vs free (the running loss kept on the
    GPU), and the line removed (drop). In torch, .item() is its two CUDA calls and its own host
    work around them (Python, the dispatcher, the CPU scalar), which no CUDA call records and
    the replay cannot remove; free adds work of its own (an add launched each step). Returns
    the two rows (free, drop)."""
    loop_us(py, "item", 50)  # the first start of torch on this machine is the slowest
    # interleaved rounds, medians: the loop's time moves with the host CPU
    runs = {"item": [], "free": [], "drop": []}
    audits = []
    for k in range(max(rounds, 3)):
        for mode in runs:
            runs[mode].append(loop_us(py, mode, steps))
        if k < rounds:
            audits.append(torch_item_audit(tmp_path, py, f"torch-item-{k + 1}", steps))
    med = {mode: median(v) for mode, v in runs.items()}
    predicted = median([site["save_per_call_us_typical"] for _, site in audits])
    report, site = audits[0]
    common = {"scenario": "torch_item.py", "sync": "item", "predicted": predicted,
              "predicted_mean": median([x["save_per_call_us"] for _, x in audits]),
              "per_call": predicted,
              "per_call_kept": median([x["save_per_call_us_readbacks_kept_typical"]
                                       for _, x in audits]),
              "removed_per_step": 1, "site": site["site"], "calls": site["calls"],
              "blocked_per_call": site["blocked_us"] / site["calls"], "bound": site["bound"],
              "model": report["processes"][0]["predicted"]["model"],
              "old_could_save_us": median([old_could_save(r) for r, _ in audits]),
              "predicted_all_us": median([r["processes"][0]["predicted"]["save_wall_us"]
                                          for r, _ in audits])}
    free = {"label": "PyTorch loop: the loss summed on the GPU, not .item()", "free": "free",
            "measured": (med["item"] - med["free"]) / steps,
            "why_not": "torch's own host work for .item() (Python, dispatcher, the CPU scalar) "
                       "is outside any CUDA call, not recorded; the fix adds a launch of its own",
            **common}
    drop = {"label": "PyTorch loop: the loss.item() line removed", "free": "drop",
            "measured": (med["item"] - med["drop"]) / steps,
            "why_not": "removing the line also removes torch's own host work for .item() "
                       "(dispatcher, Python), outside any CUDA call: not recorded", **common}
    record(free)
    record(drop)
    return free, drop


def test_torch_loop_site(tmp_path):
    py = torch_python()
    if not py:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    report, site = torch_item_audit(tmp_path, py, "torch-item", 200)
    assert is_number(site["save_per_call_us_typical"]), site


# ---------------------------------------------------------------------------------------------
# 4. a DDP job on gloo, its ranks played together

def ddp_cmd(py, mode, steps=DDP_STEPS, ranks=2):
    """A DDP job of RANKS ranks on gloo, every rank on one GPU: the collectives the replay
    recognises (gloo's of CUDA tensors) and plays together (docs/replay.md)."""
    return [py, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}",
            str(TORCH_DDP), "--backend", "gloo", "--mode", mode, "--steps", str(steps)]


def ddp_ranks(stdout, ranks=2):
    """The ranks' JSON lines of torch_ddp.py, by rank."""
    lines = sorted((json.loads(x) for x in stdout.splitlines() if x.startswith("{")),
                   key=lambda x: x["rank"])
    assert [x["rank"] for x in lines] == list(range(ranks)), stdout
    assert all(x["backend"] == "gloo" for x in lines), lines
    return lines


def ddp_item_line():
    """The loss.item() line's number (its code, the `# SYNC-LINE` marker left out)."""
    lines = [x.partition("#")[0].strip() for x in TORCH_DDP.read_text().splitlines()]
    return 1 + lines.index("running += loss.item()")


def ddp_rank_figures(report, line, steps=DDP_STEPS, ranks=2):
    """Per rank of an audited job: the loss.item() line's prediction and how the ranks were
    modelled, and the process's old "could save" beside the replay's figure for every sync
    removed; each rank's site checked: the line, one sync a step."""
    procs = sorted((p for p in report["processes"] if p["rank"] >= 0), key=lambda p: p["rank"])
    assert [p["rank"] for p in procs] == list(range(ranks)), \
        [p["rank"] for p in report["processes"]]
    figures = []
    for p in procs:
        assert p["predicted"], f"rank {p['rank']} was not replayed"
        found = [s for s in p["predicted"]["sites"] if f"torch_ddp.py:{line} " in s["site"]]
        assert len(found) == 1, (p["rank"], [s["site"] for s in p["predicted"]["sites"]])
        site = found[0]
        assert site["calls"] == steps, site  # one sync a step
        figures.append({"rank": p["rank"], "site": site["site"],
                        "per_call": site["save_per_call_us_typical"],
                        "per_call_mean": site["save_per_call_us"],
                        "blocked_per_call": site["blocked_us"] / site["calls"],
                        "bound": site["bound"], "model": p["predicted"]["model"],
                        "ranks_unmodelled": site.get("ranks_unmodelled", 0),
                        "ranks_model": site.get("ranks_model"),
                        "ranks_played": site.get("ranks_played", 0),
                        "collectives": site.get("collectives_matched", 0),
                        "job_figure": bool(site.get("job_figure")),
                        "threads_unmodelled": site["threads_unmodelled"],
                        "predicted_all_us": p["predicted"]["save_wall_us"],
                        "old_could_save_us": old_could_save(report, p["pid"]),
                        "blocked_us": p["blocked_us"], "lifetime_s": p["lifetime_s"]})
    return figures


def ddp_job(tmp_path, py, rounds=ROUNDS, steps=DDP_STEPS):
    """Reported, not held: a 2-rank DistributedDataParallel job on gloo, both ranks on one GPU
    (tests/audit/torch_ddp.py), the loss.item() logging line removed, and per rank the old
    "could save" (mostly the GPU's idle time after start-up syncs: the process group, DDP's
    broadcast of the parameters, the warm-up) beside the replay's figure for every sync
    removed.

    The ranks are played together (their collectives matched, each completing when the last
    rank's part does): the prediction is the job's figure, its slowest rank's (the rank whose
    site says job_figure), per audit; the median over the audits. Nothing is measured here: in
    separate processes the step (gloo's, about 3 ms on the H100 VM with its copies to the host
    and TCP) moves by far more than the line saves; the replay suite (replay_suite.py, ddp and
    ddp4) measures the line within one process. Returns the row; its "least_per_call" is every
    audit's smallest typical saving per call of a rank (held to DDP_RESOLUTION_US of 0 or above
    by the validation: where the line saves nothing, the typical figure scatters around 0)."""
    line = ddp_item_line()
    audits, audited_loops = [], []
    for k in range(max(rounds, 1)):
        report, r = audited(tmp_path, f"ddp-item-{k + 1}", *ddp_cmd(py, "item", steps),
                            env=DDP_ENV)
        audited_loops.append([x["loop_us"] for x in ddp_ranks(r.stdout)])
        audits.append(ddp_rank_figures(report, line, steps))
    # each audit's job figure (the rank saving least where the ranks were not played together)
    shown_of = [next((x for x in a if x["job_figure"]), min(a, key=lambda x: x["per_call"]))
                for a in audits]
    predicted = median([x["per_call"] for x in shown_of])
    shown = min(shown_of, key=lambda x: abs(x["per_call"] - predicted))  # the median's rank
    row = {"label": "DDP job, 2 ranks (gloo, one GPU): the loss.item() line removed",
           "scenario": "torch_ddp.py", "sync": "item", "free": "drop", "measured": None,
           "predicted": predicted,
           "predicted_mean": median([x["per_call_mean"] for x in shown_of]),
           "per_call": predicted, "removed_per_step": 1, "site": shown["site"],
           "calls": steps, "blocked_per_call": shown["blocked_per_call"],
           "bound": shown["bound"], "model": shown["model"], "ranks": audits,
           "ranks_model": shown["ranks_model"], "audited_loops_us": audited_loops,
           "why_not": "measured by the replay suite (replay_suite.py --only ddp,ddp4), within "
                      "one process: across processes the step moves by far more than the line "
                      "saves",
           "least_per_call": min(x["per_call"] for a in audits for x in a)}
    record(row)
    return row


@pytest.mark.parametrize("ranks", [2, 4])
def test_ddp_job_is_played_together(tmp_path, ranks):
    """One audit of a short DDP job on gloo (every rank on one GPU): on each rank the
    loss.item() line, one sync a step, its figure a prediction, not unknown: the ranks played
    together, every step's all-reduce (and DDP's broadcast, the warm-up's) matched across
    them; one rank's figure is the job's, and the run's sums take it once."""
    py = torch_python()
    if not py:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    steps = 100
    report, r = audited(tmp_path, f"ddp{ranks}-item", *ddp_cmd(py, "item", steps, ranks),
                        env=DDP_ENV)
    ddp_ranks(r.stdout, ranks)
    figures = ddp_rank_figures(report, ddp_item_line(), steps, ranks)
    for x in figures:
        assert is_number(x["per_call"]), x
        assert x["ranks_unmodelled"] == 0 and x["threads_unmodelled"] == 0, x
        assert x["ranks_played"] == ranks, x
        assert x["collectives"] >= steps, x  # an all-reduce a step at least
        assert x["ranks_model"] == (f"ranks played together: {ranks} ranks, "
                                    f"{x['collectives']} collectives matched"), x
    assert len({x["collectives"] for x in figures}) == 1, figures
    assert sum(x["job_figure"] for x in figures) == 1, figures
    assert "ranks not modelled" not in r.stderr
