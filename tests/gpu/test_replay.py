"""The replay's predicted savings against ground truth on a real GPU, four ways.

1. In one process, synthetic workloads (tests/audit/audit_truth.c): each workload's syncing and
   sync-free variants timed with the audit's recording on and off in turns; the replay of the
   "on" repetitions predicts what removing each workload's sync site saves, the "off"
   repetitions measure it (medians of paired differences), on the same host at the same speed.
   ROUNDS processes (SYNCBENCH_REPLAY_ROUNDS, 3 by default), medians.
2. In one process, every fix scenario: its syncing and sync-free variants, paired, under the
   audit with recording turns (SYNCBENCH_RECORDING_TURNS=1, engine/measure.h): the recorded
   repetitions give the replay its run, the unrecorded ones the scenario's measured saving.
   ROUNDS processes, medians.
3. Across processes, the user's way: the fix scenario measured in one process, its syncing
   variant audited in another, ROUNDS interleaved rounds, medians; the same for the PyTorch
   loop tests/audit/torch_item.py. The host's speed moves between processes (the
   calibration's plain launch: 5.3, 6.4 and 7.0 us in three audits of one session on the H100
   VM).
4. A 2-rank DistributedDataParallel job (tests/audit/torch_ddp.py), its loss.item() line: per
   rank, the old "could save" beside the replay's figures; measured with a GPU per rank.

The prediction is the replay's typical saving per call at the site of the per-step sync (the
median over windows of the run, replay.h: the measured saving is a median of repetitions, and a
stretch where the VM's host was slow moves the run's mean, not its median) times the syncs per
step the fix removes; the run's mean per call is kept beside it in the table. Held hard: the
site found is the per-step sync with the calls the program made, the prediction is a saving
(>= 0) and, where the model applies and the measured saving is over 5 us, within a factor of 3
of it; for the fix scenarios in one process (2), where the truth was measured in the audited
processes themselves, the issue's target: within 15 % or 2 us per step. For the synthetic
workloads (1) and across processes (3) the target is reported: a case outside it is an expected
failure with its figures. Where the model does not apply (the host
needs the value to decide, a data-dependent size, a fix that removes launches, narrows a wait,
keeps one sync of several or adds work of its own rather than removing a sync) the figures are
reported, not held.

SYNCBENCH_REPLAY_OUT=DIR keeps the table (replay.json, replay.md) and the record streams."""
import csv
import json
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
TRUTH = ROOT / "build" / "tests" / "audit_truth"
AUDITED = ("--min-reps", "3", "--max-reps", "3", "--warmup", "1", "--warmup-time", "0")

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


def tolerance(measured):
    return max(0.15 * abs(measured), 2.0)


def hold(what, predicted, measured, target=True):
    """Held hard where the measured saving is clear (over 5 us per step): the prediction within
    a factor of 3 of it (a model that lost a term, or double counts one, is further off). The
    issue's target, within 15 % or 2 us per step, is held (target) for the fix scenarios where
    the truth was measured in the audited processes themselves: in one process, medians of
    ROUNDS audits. Elsewhere a miss is reported as an expected failure with its figures, so
    the table stays complete: across processes the truth is another process's, whose host runs
    at another speed (the README: one plain process's saving is within the target of another's
    in 88 % of pairs)."""
    if measured > 5:
        assert measured / 3 <= predicted <= 3 * measured, (
            f"{what}: predicted {predicted:.2f} us/step, measured {measured:.2f}")
    if abs(predicted - measured) > tolerance(measured):
        message = (f"{what}: predicted {predicted:.2f} us/step, measured {measured:.2f}: "
                   f"outside 15 % or 2 us")
        if target:
            pytest.fail(message)
        pytest.xfail(message)


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


TRUTH_WORKLOADS = ["launch-bound", "gpu-bound", "short-kernel", "alloc", "non-blocking"]


@pytest.fixture(scope="module")
def truth_runs(tmp_path_factory):
    """audit_truth run ROUNDS times, each under the audit: [(its JSON report, its truth line)]."""
    runs = []
    for k in range(ROUNDS):
        report, r = audited(tmp_path_factory.mktemp("truth"), f"truth-{k + 1}", str(TRUTH), "200",
                            "15")
        runs.append((report, json.loads(r.stdout.strip().splitlines()[-1])))
    return runs


@pytest.mark.parametrize("name", TRUTH_WORKLOADS)
def test_predicted_saving_in_one_process(truth_runs, name):
    """The replay's saving per iteration of a workload's sync site against the saving the same
    process measured with the recording off; medians of ROUNDS processes."""
    rounds = []
    for report, truth in truth_runs:
        w = truth["workloads"][name]
        procs = [p for p in report["processes"] if p["predicted"]]
        assert len(procs) == 1, "the truth program was not replayed"
        found = [s for s in procs[0]["predicted"]["sites"] if f"!{w['site']} (" in s["site"]]
        assert len(found) == 1, (name, [s["site"] for s in procs[0]["predicted"]["sites"]])
        site = found[0]
        iters = site["calls"] / w["syncs_per_iter"]
        assert iters == (truth["reps"] + 1) * truth["n"], (name, site["calls"])  # the "on" reps
        # each "off" repetition is a stretch the replay knows was not recorded
        assert procs[0]["predicted"]["model"]["unrecorded_stretches"] >= truth["reps"]
        kept = "_readbacks_kept" if w["kept"] else ""
        rounds.append({"predicted": site[f"save_per_call_us{kept}_typical"] * w["syncs_per_iter"],
                       "predicted_mean": site[f"save_wall_us{kept}"] / iters,
                       "measured": w["saving_off"], "measured_recorded": w["saving_on"],
                       "site": site, "model": procs[0]["predicted"]["model"]})
    predicted = median([x["predicted"] for x in rounds])
    measured = median([x["measured"] for x in rounds])
    on = median([x["measured_recorded"] for x in rounds])
    site = rounds[0]["site"]
    record({"label": f"in one process: {name}", "scenario": "audit_truth", "sync": "sync",
            "free": "free", "measured": measured, "predicted": predicted,
            "predicted_mean": median([x["predicted_mean"] for x in rounds]),
            "measured_recorded": on, "site": site["site"], "calls": site["calls"],
            "bound": site["bound"], "model": rounds[0]["model"], "why_not": None,
            "rounds": [{"measured": x["measured"], "predicted": x["predicted"]} for x in rounds]})
    assert all(x["predicted"] >= 0 for x in rounds), rounds
    # reported against the target, not held: these synthetic workloads are not the issue's
    # fixes, and two of them (eight short kernels; eight readbacks in a row, kept) move by more
    # than the target between processes (README, runs K and L)
    hold(f"{name} in one process, medians of {len(rounds)} (measured with the recording: "
         f"{on:.2f} us)", predicted, measured, target=False)


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


@pytest.mark.parametrize("label,scenario,sync,free,sets,why_not", CASES,
                         ids=[f"{c[1]}-{c[2]}" for c in CASES])
def test_predicted_saving_of_each_fix_in_one_process(tmp_path, label, scenario, sync, free, sets,
                                                     why_not):
    """The scenario's syncing and sync-free variants, paired, under the audit with recording
    turns (SYNCBENCH_RECORDING_TURNS, engine/measure.h): the recorded repetitions give the
    replay its run, the unrecorded ones the measured saving, in one process; ROUNDS processes,
    medians."""
    rounds = []
    for k in range(ROUNDS):
        csv_out = tmp_path / f"{scenario}-turns-{k + 1}.csv"
        cmd = syncbench_cmd(scenario, f"{sync},{free}", sets, "--min-reps", "10", "--max-reps",
                            "10", "--warmup", "1", "--warmup-time", "0", "--csv", str(csv_out))
        name = f"{scenario}-{sync}-turns-{k + 1}"
        report, _ = audited(tmp_path, name, *cmd, env={"SYNCBENCH_RECORDING_TURNS": "1"})
        if OUT:  # the unrecorded repetitions' figures beside the records
            shutil.copy(csv_out, pathlib.Path(OUT) / "records" / f"{name}.csv")
        measured, spv_sync, spv_free = read_saving(csv_out, sync, free)
        # each counted repetition (pair) was unrecorded: the replay knows where
        assert report["processes"][0]["predicted"]["model"]["unrecorded_stretches"] >= 10
        rounds.append(fix_round(report, measured, spv_sync, spv_free))
    predicted = median([x["predicted"] for x in rounds])
    measured = median([x["measured"] for x in rounds])
    removed = median([x["removed"] for x in rounds])
    per_call = median([x["per_call"] for x in rounds])
    site = rounds[0]["site"]
    record({"label": f"{label} (in one process)", "scenario": scenario, "sync": sync,
            "free": free, "measured": measured, "predicted": predicted,
            "predicted_mean": median([x["per_call_mean"] * x["removed"] for x in rounds]),
            "per_call": per_call,
            "per_call_kept": median([x["per_call_kept"] or 0 for x in rounds]),
            "removed_per_step": removed, "site": site["site"], "calls": site["calls"],
            "blocked_per_call": site["blocked_us"] / site["calls"], "bound": site["bound"],
            "model": rounds[0]["model"], "why_not": why_not,
            "rounds": [{"measured": x["measured"], "predicted": x["predicted"]} for x in rounds]})
    assert all(x["predicted"] >= 0 for x in rounds), rounds
    if why_not:
        return  # reported beside the others; the model does not hold it
    hold(f"{label} in one process (site {site['site']}: {per_call:.2f} us per call x "
         f"{removed:.2f}, medians of {len(rounds)})", predicted, measured)


@pytest.mark.parametrize("label,scenario,sync,free,sets,why_not", CASES,
                         ids=[f"{c[1]}-{c[2]}" for c in CASES])
def test_predicted_saving_of_each_fix_across_processes(tmp_path, label, scenario, sync, free,
                                                       sets, why_not):
    """The user's way: the saving measured in one process, the audit of the syncing variant in
    another, ROUNDS interleaved rounds, medians."""
    cmd = syncbench_cmd(scenario, sync, sets, *AUDITED)
    rounds = []
    for k in range(ROUNDS):  # interleaved: the host's speed moves between processes
        measured, spv_sync, spv_free = measured_saving(tmp_path, scenario, sync, free, sets)
        report, _ = audited(tmp_path, f"{scenario}-{sync}-{k + 1}", *cmd)
        rounds.append(fix_round(report, measured, spv_sync, spv_free))
    per_call = median([x["per_call"] for x in rounds])
    removed = median([x["removed"] for x in rounds])
    predicted = per_call * removed
    measured = median([x["measured"] for x in rounds])
    site = rounds[0]["site"]
    record({"label": label, "scenario": scenario, "sync": sync, "free": free,
            "measured": measured, "predicted": predicted,
            "predicted_mean": median([x["per_call_mean"] for x in rounds]) * removed,
            "per_call": per_call,
            "per_call_kept": median([x["per_call_kept"] or 0 for x in rounds]),
            "removed_per_step": removed, "site": site["site"], "calls": site["calls"],
            "blocked_per_call": site["blocked_us"] / site["calls"], "bound": site["bound"],
            "model": rounds[0]["model"], "why_not": why_not,
            "rounds": [{"measured": x["measured"], "predicted": x["removed"] * x["per_call"]}
                       for x in rounds]})
    assert predicted >= 0, predicted
    if why_not:
        return  # reported beside the others; the model does not hold it
    hold(f"{label} (site {site['site']}: {per_call:.2f} us per call x {removed:.2f}, medians "
         f"of {ROUNDS} rounds)", predicted, measured, target=False)


def loop_us(py, mode, steps):
    r = subprocess.run([py, TORCH_ITEM, "--mode", mode, "--steps", str(steps)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])["loop_us"]


def test_predicted_saving_of_the_torch_loop(tmp_path):
    """Reported, not held: the fix the issue names, item vs free (the running loss kept on the
    GPU), and the line removed (drop). In torch, .item() is its two CUDA calls and its own host
    work around them (Python, the dispatcher, the CPU scalar), which no CUDA call records and
    the replay cannot remove; free adds work of its own (an add launched each step). Held: the
    site is the .item() line, with one sync a step, and the prediction is a saving."""
    py = torch_python()
    if not py:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    steps = 2000
    loop_us(py, "item", 50)  # the first start of torch on this machine is the slowest
    # interleaved rounds, medians: the loop's time moves with the host CPU
    runs = {"item": [], "free": [], "drop": []}
    audits = []
    for k in range(max(ROUNDS, 3)):
        for mode in runs:
            runs[mode].append(loop_us(py, mode, steps))
        if k < ROUNDS:
            report, _ = audited(tmp_path, f"torch-item-{k + 1}", py, TORCH_ITEM, "--mode",
                                "item", "--steps", steps)
            site = step_site(report)
            assert site["calls"] == steps, site  # the .item() line: one sync a step
            audits.append((report, site))
    med = {mode: median(v) for mode, v in runs.items()}
    measured = (med["item"] - med["free"]) / steps
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
    record({"label": "PyTorch loop: the loss summed on the GPU, not .item()", "free": "free",
            "measured": measured,
            "why_not": "torch's own host work for .item() (Python, dispatcher, the CPU scalar) "
                       "is outside any CUDA call, not recorded; the fix adds a launch of its own",
            **common})
    record({"label": "PyTorch loop: the loss.item() line removed", "free": "drop",
            "measured": (med["item"] - med["drop"]) / steps,
            "why_not": "removing the line also removes torch's own host work for .item() "
                       "(dispatcher, Python), outside any CUDA call: not recorded", **common})
    assert predicted >= 0, predicted


def ddp_cmd(py, mode):
    return [py, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
            str(TORCH_DDP), "--mode", mode, "--steps", str(DDP_STEPS)]


def ddp_ranks(stdout):
    """The ranks' JSON lines of torch_ddp.py, by rank."""
    ranks = sorted((json.loads(x) for x in stdout.splitlines() if x.startswith("{")),
                   key=lambda x: x["rank"])
    assert [x["rank"] for x in ranks] == [0, 1], stdout
    return ranks


def ddp_loop_us(py, mode):
    """The job's loop time (its slower rank's) of one unaudited run."""
    r = subprocess.run(ddp_cmd(py, mode), capture_output=True, text=True, timeout=300,
                       env={**os.environ, **DDP_ENV}, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-4000:]
    return max(x["loop_us"] for x in ddp_ranks(r.stdout))


def ddp_rank_figures(report, line):
    """Per rank of an audited job: the loss.item() line's prediction, and the process's old
    "could save" beside the replay's figure for every sync removed."""
    ranks = sorted((p for p in report["processes"] if p["rank"] >= 0), key=lambda p: p["rank"])
    assert [p["rank"] for p in ranks] == [0, 1], [p["rank"] for p in report["processes"]]
    figures = []
    for p in ranks:
        assert p["predicted"], f"rank {p['rank']} was not replayed"
        found = [s for s in p["predicted"]["sites"] if f"torch_ddp.py:{line} " in s["site"]]
        assert len(found) == 1, (p["rank"], [s["site"] for s in p["predicted"]["sites"]])
        site = found[0]
        assert site["calls"] == DDP_STEPS, site  # one sync a step
        assert site["save_per_call_us_typical"] >= -DDP_RESOLUTION_US, site
        figures.append({"rank": p["rank"], "site": site["site"],
                        "per_call": site["save_per_call_us_typical"],
                        "per_call_mean": site["save_per_call_us"],
                        "blocked_per_call": site["blocked_us"] / site["calls"],
                        "bound": site["bound"], "model": p["predicted"]["model"],
                        "predicted_all_us": p["predicted"]["save_wall_us"],
                        "old_could_save_us": old_could_save(report, p["pid"]),
                        "blocked_us": p["blocked_us"], "lifetime_s": p["lifetime_s"]})
    return figures


def test_predicted_saving_of_a_ddp_job(tmp_path):
    """Reported, not held: a 2-rank DistributedDataParallel job (tests/audit/torch_ddp.py), the
    loss.item() logging line removed, and per rank the old "could save" (mostly the GPU's idle
    time after start-up syncs: the process group, DDP's broadcast of the parameters, the
    warm-up) beside the replay's figure for every sync removed. Held: on each rank the site is
    the .item() line with one sync a step, and its prediction is a saving (to within
    DDP_RESOLUTION_US: where the line saves nothing, the typical figure scatters around 0).

    The job's step is paced by its slower rank (the ranks meet in every step's all-reduce), so
    the job saves what the rank that saves least saves: the prediction is the smaller of the
    two ranks' typical saving per call (that rank's figures go with it in the table). With a
    GPU per rank (nccl) the line's removal is measured (interleaved rounds, medians) and
    reported as the torch loop's is: removing the line also removes torch's own host work for
    .item(), which no CUDA call records. With one GPU (gloo, both ranks on cuda:0) nothing is
    measured: the step is gloo's, about 3 ms on the H100 VM with its copies to the host and
    TCP, and moves between processes by a hundred times what the line can save."""
    py = torch_python()
    if not py:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    lines = [x.strip() for x in TORCH_DDP.read_text().splitlines()]
    line = 1 + lines.index("running += loss.item()")
    runs = {"item": [], "drop": []}
    audits, audited_loops = [], []
    for k in range(max(ROUNDS, 1)):  # interleaved rounds, medians
        report, r = audited(tmp_path, f"ddp-item-{k + 1}", *ddp_cmd(py, "item"), env=DDP_ENV)
        ranks = ddp_ranks(r.stdout)
        backend = ranks[0]["backend"]
        audited_loops.append([x["loop_us"] for x in ranks])
        audits.append(ddp_rank_figures(report, line))
        if backend == "nccl":
            for mode in runs:
                runs[mode].append(ddp_loop_us(py, mode))
    least = [min(a, key=lambda x: x["per_call"]) for a in audits]  # each audit's rank saving least
    predicted = median([x["per_call"] for x in least])
    shown = min(least, key=lambda x: abs(x["per_call"] - predicted))  # the median's rank
    measured = ((median(runs["item"]) - median(runs["drop"])) / DDP_STEPS
                if backend == "nccl" else None)
    why_not = ("removing the line also removes torch's own host work for .item() (dispatcher, "
               "Python), outside any CUDA call: not recorded" if backend == "nccl" else
               "both ranks on one GPU (gloo): not measured, the step is gloo's (copies to the "
               "host, TCP) and moves between processes by far more than the line can save")
    record({"label": f"DDP job, 2 ranks ({backend}): the loss.item() line removed",
            "scenario": "torch_ddp.py", "sync": "item", "free": "drop", "measured": measured,
            "predicted": predicted,
            "predicted_mean": median([min(x["per_call_mean"] for x in a) for a in audits]),
            "per_call": predicted, "removed_per_step": 1, "site": shown["site"],
            "calls": DDP_STEPS, "blocked_per_call": shown["blocked_per_call"],
            "bound": shown["bound"], "model": shown["model"], "ranks": audits,
            "loops_us": runs, "audited_loops_us": audited_loops, "why_not": why_not})
    assert predicted >= -DDP_RESOLUTION_US, predicted
