"""The audit's timings and costs: how long the syncs it records blocked (known waits of the test
programs and scenarios), the bubble it measures with --gpu-activity, the straggler's wait across
ranks, and what recording costs: the launch-bound loop under each mode
(tests/gpu/audit_overhead.sh) and the Python stack per sync (tests/gpu/audit_pycost.py).

Targets: the default mode's overhead is held (docs/audit.md: "within a few percent"; missed only
when its 95 % interval lies above 5 %: single pairs swing by tens of percent on a VM); the
targets of issue 36 (--gpu-activity <= 15 %, a Python stack <= 5 us a sync) are reported, not
held, until that issue is done. A window of GPU activity (tests/gpu/window_cost.sh) is held the
same way: its cost outside it over the default mode's (<= 3 points) missed when the interval
lies above, its prediction over the full recording's (within 10 %) when the interval lies
outside; the default mode on a host-bound PyTorch loop (<= 3 %, issue 49) is reported, and the
library's own time in its callbacks on that loop (the records' "oh") is held to 1.5 % of a
step."""
import csv
import json
import os
import pathlib
import re
import subprocess

from registry import BIN, ROOT, check, need_torch, run, shared, workdir

GROUP = "audit"
PROGRAMS = pathlib.Path(os.environ.get("SYNCBENCH_TEST_PROGRAMS", ROOT / "build" / "tests"))
FIXED = ("--min-reps", "3", "--max-reps", "3", "--warmup", "1", "--warmup-time", "0")


def audit_rows(name, *cmd, opts=()):
    """The CSV rows of `syncbench audit OPTS -- CMD`, which must succeed."""
    d = workdir(name)
    r = run("audit", "-q", "--csv", d / "a.csv", *opts, "--", *cmd, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"audit of {name}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    with open(d / "a.csv", newline="") as f:
        return list(csv.DictReader(f))


def only(rows, cls, rng):
    hits = [row for row in rows if (row["class"], row["range"]) == (cls, rng)]
    if len(hits) != 1:
        raise RuntimeError(f"{len(hits)} rows of class {cls} in range {rng!r}")
    return hits[0]


@check("audit: an explicit sync right after a 200 us spin blocks for it (audit_counts, "
       "phase_a: device, stream, event; median)", ">= 100 us", GROUP)
def sync_after_spin():
    rows = audit_rows("counts", PROGRAMS / "audit_counts", 5)
    xs = {c: float(only(rows, c, "phase_a")["blocked_median_us"])
          for c in ("sync-device", "sync-stream", "sync-event")}
    return ", ".join(f"{k} {v:.0f} us" for k, v in xs.items()), min(xs.values()) >= 100


PENDING_US = 2000


def scenario_cmd(*args, iters=5):
    return (BIN, *args, "--iters", iters, *FIXED, "-q")


@check("audit: idle readback behind 2 ms of pending work: the stream sync blocks for the work, "
       "the copy after it does not (medians)", "sync 0.9-1.3 x 2 ms (+100 us); copy < 500 us",
       GROUP)
def idle_readback_waits():
    rows = audit_rows("idle-readback", *scenario_cmd("--scenario", "readback", "--variant",
                                                     "idle-pageable", "--set",
                                                     f"pending_us={PENDING_US}"))
    sync = float(only(rows, "sync-stream", "measure")["blocked_median_us"])
    copy = float(only(rows, "copy-sync", "measure")["blocked_median_us"])
    return (f"sync {sync:.0f} us, copy {copy:.1f} us",
            0.9 * PENDING_US <= sync <= 1.3 * PENDING_US + 100 and copy < PENDING_US / 4)


@check("audit: pending readback (2 ms pending): its 15 waiting copies block 2 ms each (total, "
       "and p95 of all 45 copies)", "0.9-1.3 x 15 x 2 ms (+3 ms); p95 0.9-1.3 x 2 ms (+100 us)",
       GROUP)
def pending_readback_blocks():
    rows = audit_rows("pending-readback", *scenario_cmd("--scenario", "readback", "--variant",
                                                        "pending-pageable", "--set",
                                                        f"pending_us={PENDING_US}"))
    copy = only(rows, "copy-sync", "measure")
    total, p95 = float(copy["blocked_total_us"]), float(copy["blocked_p95_us"])
    return (f"total {total / 1e3:.1f} ms, p95 {p95:.0f} us",
            0.9 * 15 * PENDING_US <= total <= 1.3 * 15 * PENDING_US + 3000 and
            0.9 * PENDING_US <= p95 <= 1.3 * PENDING_US + 100)


@check("audit --gpu-activity: the bubble after each device sync of small-gemm (the next GEMM's "
       "launch)", "0.5-500 us a sync", GROUP)
def bubble_per_sync():
    rows = audit_rows("bubbles", *scenario_cmd("--scenario", "small-gemm", "--variant",
                                               "sync-device", iters=20),
                      opts=("--gpu-activity",))
    row = only(rows, "sync-device", "measure")
    per_sync = float(row["bubble_total_us"]) / int(row["count"])
    return f"{per_sync:.2f} us", 0.5 <= per_sync <= 500


STRAGGLER_US, STEPS = 2000, 50


@check("audit across ranks: a rank 2 ms late at every step (torchrun, 2 ranks) is named in "
       "most steps, and the others' median wait is its lateness E",
       ">= 80 % of 50; wait 0.5-1.5 x E (+500 us)", GROUP)
def straggler_wait():
    py = need_torch()
    d = workdir("ranks")
    r = run("audit", "-q", "--json", d / "R.json", "--", py, "-m", "torch.distributed.run",
            "--standalone", "--nproc_per_node=2", ROOT / "tests" / "audit" / "torch_ranks.py",
            "--straggler-us", STRAGGLER_US, "--steps", STEPS,
            env={"NCCL_NVLS_ENABLE": "0", "TORCH_NCCL_BLOCKING_WAIT": "0"}, timeout=900,
            cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"torch_ranks.py audited: exit {r.returncode}: {r.stderr[-300:]}")
    facts = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")][-1]
    (g,) = [x for x in json.loads((d / "R.json").read_text())["ranks"]["ranges"]
            if x["name"] == "train_step"]
    extra, top = facts["extra_us"], g["stragglers"][0]
    waited = sum(1 for w in g["instance_wait_us"] if w is not None and w >= 0.5 * extra)
    ok = (top["rank"] == 1 and extra >= 0.5 * STRAGGLER_US and top["instances"] >= 0.8 * STEPS
          and 0.5 * extra <= top["wait_median_us"] <= 1.5 * extra + 500
          and waited >= 0.8 * STEPS)
    return (f"{facts['backend']}: rank {top['rank']} last in {top['instances']} of {STEPS}; wait "
            f"{top['wait_median_us'] / 1e3:.2f} ms, E {extra / 1e3:.2f} ms; {waited} steps "
            f"waited >= E/2", ok)


# ---- what recording costs ----

OVERHEAD_PAIRS, OVERHEAD_GPU_PAIRS = 16, 5


@shared
def overhead():
    """{mode: (pairs, median ratio, CI low, CI high)} from tests/gpu/audit_overhead.sh."""
    d = workdir("overhead")
    r = subprocess.run(["bash", str(ROOT / "tests" / "gpu" / "audit_overhead.sh"), str(d),
                        str(OVERHEAD_PAIRS), str(OVERHEAD_GPU_PAIRS)], capture_output=True,
                       text=True, cwd=ROOT, env={**os.environ, "SYNCBENCH": str(BIN)},
                       timeout=1800)
    text = (d / "audit_overhead.txt").read_text() if (d / "audit_overhead.txt").exists() else ""
    out = {}
    for line in text.splitlines():
        m = re.match(r"(\w+): (\d+) pairs, median ratio ([\d.]+) .*CI \[([-+\d.]+) %, "
                     r"([-+\d.]+) %\]", line)
        if m:
            out[m.group(1)] = (int(m.group(2)), 100 * (float(m.group(3)) - 1),
                               float(m.group(4)), float(m.group(5)))
    if not out:
        raise RuntimeError(f"audit_overhead.sh: exit {r.returncode}, no figures: "
                           f"{(r.stderr or r.stdout).strip()[-300:]}")
    return out


def overhead_row(mode, limit):
    if mode not in overhead():
        raise RuntimeError(f"audit_overhead.sh measured no {mode} pair")
    n, m, lo, hi = overhead()[mode]
    text = f"{m:+.1f} % (median of {n} pairs, 95 % CI [{lo:+.1f} %, {hi:+.1f} %])"
    return text, None if limit is None else m <= limit


@check("audit's cost, default mode: small-gemm async (launch-bound) audited over plain, "
       "paired in alternating order", "<= 5 % (missed when the CI lies above)", GROUP)
def overhead_default():
    text, _ = overhead_row("audit", None)
    n, m, lo, hi = overhead()["audit"]
    return text, lo <= 5.0


@check("audit's cost, --gpu-activity: small-gemm async audited over plain",
       "<= 15 % (issue 36, open: reported)", GROUP, held=False)
def overhead_gpu_activity():
    return overhead_row("gpu", 15.0)


@check("audit's cost, --trace: small-gemm async audited over plain", "reported", GROUP,
       held=False)
def overhead_trace():
    return overhead_row("trace", None)


@check("audit's cost of a Python stack per sync: a .item() loop 10 frames deep, recorded vs "
       "--no-python (median of 6 alternating rounds)", "<= 5 us", GROUP)
def python_stack_cost():
    py = need_torch()
    r = subprocess.run([py, str(ROOT / "tests" / "gpu" / "audit_pycost.py"), "--rounds", "6",
                        "--items", "2000", "--depth", "10"], capture_output=True, text=True,
                       env={**os.environ, "SYNCBENCH": str(BIN)}, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"audit_pycost.py: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    x = json.loads(r.stdout.strip().splitlines()[-1])
    per, (lo, hi) = x["per_sync_python_us"], x["ci95"]
    return (f"{per:.1f} us [{lo:.1f}, {hi:.1f}] ({x['plain']:.1f} us plain, "
            f"{x['nopython']:.1f} --no-python, {x['python']:.1f} with stacks)", per <= 5.0)


# ---- a window of GPU activity; the default mode on a host-bound PyTorch loop (issue 49) ----

WINDOW_ROUNDS, HOST_ROUNDS = 8, 8


@shared
def window_cost():
    """window_cost.sh's summary (tests/gpu/cost_stats.py window_summary): the launch-bound
    loop of tests/audit/audit_window plain, audited, fully recorded and recorded in a window."""
    import cost_stats
    d = workdir("window")
    r = subprocess.run(["bash", str(ROOT / "tests" / "gpu" / "window_cost.sh"), str(d),
                        str(WINDOW_ROUNDS)], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "SYNCBENCH": str(BIN),
                            "WINDOW_COST_PROGRAM": str(PROGRAMS / "audit_window")},
                       timeout=900)
    rounds = d / "window_cost.rounds"
    if not rounds.exists():
        raise RuntimeError(f"window_cost.sh: exit {r.returncode}, no rounds: "
                           f"{(r.stderr or r.stdout).strip()[-300:]}")
    return cost_stats.window_summary(cost_stats.read_window_rounds(
        rounds.read_text().splitlines()))


@check("--gpu-activity-range's cost outside its window: the launch-bound loop's overhead "
       "minus the default mode's, paired rounds",
       "<= 3 points (missed when the 95 % interval lies above)", GROUP)
def window_outside_cost():
    d, lo, hi, n = window_cost()["window_vs_default"]
    if d is None:
        raise RuntimeError("window_cost.sh: no round with both the window and the default mode")
    return f"{100 * d:+.1f} points [{100 * lo:+.1f}, {100 * hi:+.1f}] ({n} rounds)", lo <= 0.03


@check("--gpu-activity-range's prediction per sync, scaled from the window, over the full "
       "recording's", "within 10 % (missed when the 95 % interval lies outside)", GROUP)
def window_prediction():
    p, lo, hi, n = window_cost()["prediction"]
    if p is None:
        raise RuntimeError("window_cost.sh: no round with both predictions")
    return (f"{100 * p:+.1f} % [{100 * lo:+.1f} %, {100 * hi:+.1f} %] ({n} rounds)",
            lo <= 0.10 and hi >= -0.10)


HOST_STEPS = 2000


@shared
def host_bound_rows():
    """audit_cost_real.py's rows (cost_stats.rates_rows) for the host-bound torch loop, plain and
    under the default mode in alternating processes, {mode: row}, and under "turns" the
    recording on over off within each audited process (cost_stats.turns_summary)."""
    import cost_stats
    py = need_torch()
    d = workdir("host_bound")
    r = subprocess.run([py, str(ROOT / "tests" / "gpu" / "audit_cost_real.py"), "--out", str(d),
                        "--only", "train-host", "--modes", "audit,audit-turns", "--rounds",
                        str(HOST_ROUNDS),
                        "--steps", str(HOST_STEPS), "--budget-s", "300"], capture_output=True,
                       text=True, env={**os.environ, "SYNCBENCH": str(BIN), "TORCH_PYTHON": py},
                       timeout=900)
    runs = [json.loads(x) for x in (d / "real.jsonl").read_text().splitlines()] \
        if (d / "real.jsonl").exists() else []
    rows = {x["mode"]: x for x in cost_stats.rates_rows(
        [(x["program"], x["mode"], x["round"], x["rate"]) for x in runs])}
    if "audit" not in rows or rows["audit"]["slowdown"][0] is None:
        raise RuntimeError(f"audit_cost_real.py: exit {r.returncode}, no pair: "
                           f"{(r.stderr or r.stdout).strip()[-300:]}")
    rows["turns"] = cost_stats.turns_summary(x["out"] for x in runs if x["mode"] == "audit-turns")
    return rows


@check("audit's cost, default mode, on a host-bound PyTorch loop (torch_train.py --size host, "
       ".item() each step), alternating processes", "<= 3 % (issue 49, open: reported)", GROUP,
       held=False)
def host_bound_default_cost():
    a = host_bound_rows()["audit"]
    (m, _, _), (lo, hi) = a["slowdown"], a["interval"]
    ci = "" if lo is None else f", 95 % interval [{100 * lo:+.1f} %, {100 * hi:+.1f} %]"
    return f"{100 * m:+.1f} % (median of {a['pairs']} paired rounds{ci})", m <= 0.03


@check("audit's cost, default mode, on the host-bound PyTorch loop within one process: the "
       "recording on over off in alternating blocks (callbacks and records; CUPTI loaded and the "
       "waits library's hooks stay)", "<= 3 % (issue 49, open: reported)", GROUP, held=False)
def host_bound_turns_cost():
    n, m, lo, hi = host_bound_rows()["turns"]
    if not n:
        raise RuntimeError("audit_cost_real.py: no pair of recorded and unrecorded blocks")
    return (f"{100 * m:+.1f} % (median of {n} pairs of blocks, 95 % interval "
            f"[{100 * lo:+.1f} %, {100 * hi:+.1f} %])", hi <= 0.03)


@shared
def host_bound_callbacks():
    """The library's own time in its callbacks a step (cost_stats.callback_time) of one audited
    run of the host-bound loop, its records kept, and "plain_step_us": the step of one plain
    run just before (the program's own timing)."""
    import cost_stats
    py = need_torch()
    d = workdir("host_bound_callbacks")
    prog = [py, str(ROOT / "tests" / "audit" / "torch_train.py"), "--variant", "sync", "--size",
            "host", "--steps", str(HOST_STEPS)]
    plain = subprocess.run(prog, capture_output=True, text=True, timeout=300)
    out = [x for x in plain.stdout.splitlines() if x.startswith("{")]
    if plain.returncode != 0 or not out:
        raise RuntimeError(f"torch_train.py: exit {plain.returncode}: "
                           f"{plain.stderr.strip()[-300:]}")
    r = run("audit", "-q", "--keep", d / "records", "--", *prog, timeout=300)
    if r.returncode != 0 or not (d / "records").is_dir():
        raise RuntimeError(f"audit of torch_train.py: exit {r.returncode}: "
                           f"{r.stderr.strip()[-300:]}")
    return {**cost_stats.callback_time(str(d / "records"), HOST_STEPS),
            "plain_step_us": json.loads(out[-1])["step_us"]}


CALLBACK_SHARE = 1.5


@check("audit's own time in its callbacks a step, default mode, on the host-bound PyTorch loop "
       "(the records' \"oh\", warm means: a lower bound of its in-process cost), over a plain "
       "run's step",
       f"<= {CALLBACK_SHARE} % (half the default mode's 3 %)", GROUP)
def host_bound_callback_time():
    c = host_bound_callbacks()
    step_us = c["plain_step_us"]
    if not step_us or not c["calls"]:
        raise RuntimeError("no plain step or no call made each step: nothing to compare")
    share = 100 * c["us_per_step"] / step_us
    calls = ", ".join(f"{api} {n:.1f}x {us:.1f} us" for api, (n, us) in sorted(c["calls"].items()))
    return (f"{c['us_per_step']:.1f} us of a {step_us:.0f} us step: {share:.2f} % ({calls})",
            share <= CALLBACK_SHARE)
