"""The figures the scenarios promise (docs/scenarios.md, docs/run.md), measured as the GPU tests
measured them before they became correctness tests: short time-budgeted runs, medians. And the
harness against a plain floor where one exists: big-gemm's TFLOP/s against torch.mm's on the
same shape, dtype and data (tests/gpu/torch_gemm.py)."""
import re
import subprocess

from registry import ROOT, check, measure, need_torch, shared

GROUP = "scenarios"
FAST = ("--max-time", "0.5", "--warmup-time", "0.1")     # the fix scenarios' old budget
SCENARIO = ("--max-time", "0.5", "--warmup-time", "0.2")  # readback, copy, double-buffer

SYNC_VARIANTS = ["sync-device", "sync-stream", "sync-event", "sync-readback", "sync-item"]
SMALL = "m=512;n=512;k=512;dtype=fp16;tf32=0"
BIG = "m=8192;n=8192;k=8192;dtype=fp16;tf32=0"


@shared
def gemm():
    return measure("gemm", "--scenario", "small-gemm,big-gemm", "--max-time", "1")


@check("small-gemm: a sync per iteration costs >= 2 us (each of the 5 sync variants: "
       "wall us/iter over async's, and the paired overhead_us)", ">= 2 us/iter", GROUP)
def small_gemm_sync_cost():
    m = gemm()
    base = m[("async", SMALL, "wall_us_per_iter")]
    least = min(SYNC_VARIANTS, key=lambda v: min(m[(v, SMALL, "wall_us_per_iter")] - base,
                                                 m[(v, SMALL, "overhead_us")]))
    wall = m[(least, SMALL, "wall_us_per_iter")] - base
    over = m[(least, SMALL, "overhead_us")]
    return (f"least: {least} {wall:.2f} (wall) / {over:.2f} (paired) us/iter",
            min(wall, over) >= 2.0)


@check("big-gemm: sync-device's overhead", "< 10 %", GROUP)
def big_gemm_overhead():
    x = gemm()[("sync-device", BIG, "overhead_pct")]
    return f"{x:.2f} %", x < 10.0


@check("big-gemm is compute-bound: async TFLOP/s over small-gemm's", "> 2 x", GROUP)
def big_gemm_compute_bound():
    m = gemm()
    ratio = m[("async", BIG, "TFLOPs")] / m[("async", SMALL, "TFLOPs")]
    return (f"{ratio:.1f} x ({m[('async', BIG, 'TFLOPs')]:.1f} vs "
            f"{m[('async', SMALL, 'TFLOPs')]:.1f})", ratio > 2)


@check("big-gemm async: GPU us/iter against the kernel's (no launch gaps)", "within 5 %", GROUP)
def big_gemm_no_gaps():
    m = gemm()
    gpu, kernel = m[("async", BIG, "gpu_us_per_iter")], m[("async", BIG, "kernel_us")]
    off = abs(gpu - kernel) / kernel
    return f"{gpu:.1f} vs {kernel:.1f} us ({100 * off:.2f} %)", off < 0.05


def torch_mm_tflops(py):
    r = subprocess.run([py, str(ROOT / "tests" / "gpu" / "torch_gemm.py")], capture_output=True,
                       text=True, timeout=600)
    found = re.search(r"TFLOPs=([\d.]+)", r.stdout)
    if r.returncode != 0 or not found:
        raise RuntimeError(f"torch_gemm.py: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return float(found.group(1))


@check("the harness against a plain floor: big-gemm async TFLOP/s over torch.mm's (8192^3 "
       "fp16, the same data; torch, syncbench, torch in a row)", ">= 0.95 x", GROUP)
def big_gemm_floor():
    py = need_torch()
    before = torch_mm_tflops(py)
    ours = measure("gemm-floor", "--scenario", "big-gemm", "--variant", "async", "--max-time",
                   "1")[("async", BIG, "TFLOPs")]
    after = torch_mm_tflops(py)
    ratio = ours / ((before + after) / 2)
    return f"{ratio:.3f} x ({ours:.1f} vs torch.mm {before:.1f}, {after:.1f})", ratio >= 0.95


# ---- readback, copy, double-buffer ----

RB = "pending_us=1000;pending=spin;print_elems=16"


@shared
def readback():
    return measure("readback", "--scenario", "readback", *SCENARIO)


@check("readback: with 1 ms of GPU work pending, the wait (pending-pageable, pending-pinned)",
       "900-1100 us", GROUP)
def readback_wait():
    m = readback()
    waits = {mem: m[(f"pending-{mem}", RB, "wait_us")] for mem in ("pageable", "pinned")}
    return (", ".join(f"{k} {v:.0f} us" for k, v in waits.items()),
            all(900 <= v <= 1100 for v in waits.values()))


@check("readback: a readback with 1 ms pending is 1 ms plus the idle readback (pageable, "
       "pinned)", "within 10 %", GROUP)
def readback_pending_is_the_work_and_the_idle_one():
    m = readback()
    worst, text = 0.0, []
    for mem in ("pageable", "pinned"):
        pending = m[(f"pending-{mem}", RB, "readback_us")]
        idle = m[(f"idle-{mem}", RB, "readback_us")]
        off = abs(pending - (1000 + idle)) / (1000 + idle)
        worst = max(worst, off)
        text.append(f"{mem} {pending:.0f} vs 1000 + {idle:.1f} us")
    return "; ".join(text), worst <= 0.10


@check("readback: an idle readback (idle-pageable, idle-pinned, print-idle)", "< 100 us", GROUP)
def readback_idle():
    m = readback()
    xs = {v: m[(v, RB, "readback_us")] for v in ("idle-pageable", "idle-pinned", "print-idle")}
    return ", ".join(f"{k} {v:.1f} us" for k, v in xs.items()), max(xs.values()) < 100


@check("readback: print() with 1 ms pending waits for it", ">= 900 us", GROUP)
def readback_print_waits():
    x = readback()[("print-pending", RB, "wait_us")]
    return f"{x:.0f} us", x >= 900


@check("readback behind an 8192^3 GEMM (about 1.6 ms) waits for it", "> 500 us", GROUP)
def readback_behind_gemm():
    m = measure("readback-gemm", "--scenario", "readback", "--variant", "pending-pageable",
                "--set", "pending=gemm", "--iters", "5", *SCENARIO)
    x = m[("pending-pageable", "pending_us=1000;pending=gemm;print_elems=16", "wait_us")]
    return f"{x:.0f} us", x > 500


@shared
def copies():
    return measure("copy", "--scenario", "copy", "--set", "bytes=64MiB", *SCENARIO)


@check("copy: pinned beats pageable at 64 MiB (h2d, d2h)", "pinned GB/s > pageable's", GROUP)
def pinned_beats_pageable():
    m = copies()
    text, ok = [], True
    for d in ("h2d", "d2h"):
        pinned, pageable = m[(f"{d}-pinned", "bytes=64MiB", "GBps")], \
            m[(f"{d}-pageable", "bytes=64MiB", "GBps")]
        text.append(f"{d} {pinned:.1f} vs {pageable:.1f} GB/s")
        ok = ok and pinned > pageable
    return "; ".join(text), ok


@check("copy: a pinned copy call of 64 MiB returns at once (h2d, d2h)", "< 100 us", GROUP)
def pinned_call_returns():
    m = copies()
    xs = {d: m[(f"{d}-pinned", "bytes=64MiB", "host_call_us")] for d in ("h2d", "d2h")}
    return ", ".join(f"{k} {v:.1f} us" for k, v in xs.items()), max(xs.values()) < 100


@check("copy: a pageable copy call of 64 MiB blocks for the transfer (h2d, d2h)",
       ">= 0.5 x the transfer's time", GROUP)
def pageable_call_blocks():
    m = copies()
    text, ok = [], True
    for d in ("h2d", "d2h"):
        transfer_us = (64 << 20) / (m[(f"{d}-pageable", "bytes=64MiB", "GBps")] * 1e9) * 1e6
        call = m[(f"{d}-pageable", "bytes=64MiB", "host_call_us")]
        text.append(f"{d} {call / transfer_us:.2f} x")
        ok = ok and call >= 0.5 * transfer_us
    return ", ".join(text), ok


DB = "bytes=400MB;chunks=10;compute_us=0"


@shared
def pipeline():
    return measure("double-buffer", "--scenario", "double-buffer", *SCENARIO)


@check("double-buffer: double-buffered total time over serial-pinned's (400 MB, 10 chunks), "
       "and its efficiency higher", "< 0.8 x", GROUP)
def double_buffer_overlaps():
    m = pipeline()
    db, serial = m[("double-buffered", DB, "total_ms")], m[("serial-pinned", DB, "total_ms")]
    eff = (m[("double-buffered", DB, "efficiency")], m[("serial-pinned", DB, "efficiency")])
    return (f"{db / serial:.2f} x ({db:.2f} vs {serial:.2f} ms; efficiency {eff[0]:.2f} vs "
            f"{eff[1]:.2f})", db < 0.8 * serial and eff[0] > eff[1])


@check("double-buffer: balanced work, compute over copy time per chunk", "0.7-1.4", GROUP)
def double_buffer_balanced():
    m = pipeline()
    ratio = m[("double-buffered", DB, "compute_ms")] / m[("double-buffered", DB, "copy_ms")]
    return f"{ratio:.2f}", 0.7 < ratio < 1.4


# ---- the fix scenarios: each saving, against what one idle .item() costs ----

@shared
def idle_readback_us():
    """What one .item() costs with nothing pending: readback's idle-pinned readback_us."""
    m = measure("idle-readback", "--scenario", "readback", "--variant", "idle-pinned", "--set",
                "pending_us=100", *FAST)
    return m[("idle-pinned", "pending_us=100;pending=spin;print_elems=16", "readback_us")]


COALESCE = "values=8;work_us=20"


@check("coalesce (8 values): stacked saves at least half of the 7 readbacks it drops, and its "
       "step is shorter", ">= 3.5 x an idle readback", GROUP)
def coalesce_saves():
    m = measure("coalesce", "--scenario", "coalesce", "--set", "values=8", *FAST)
    idle = idle_readback_us()
    saving = m[("stacked", COALESCE, "saving_us")]
    shorter = m[("stacked", COALESCE, "step_us")] < m[("per-value", COALESCE, "step_us")]
    return (f"{saving:.1f} us = {saving / idle:.1f} x {idle:.1f} us",
            saving >= 7 * idle * 0.5 and shorter)


LOG = "every=100;kernels=8;work_us=5"


@check("log-every: every-n and never save at least half an idle readback a step, and their "
       "steps are shorter", ">= 0.5 x an idle readback", GROUP)
def log_every_saves():
    m = measure("log-every", "--scenario", "log-every", *FAST)
    idle = idle_readback_us()
    savings = {v: m[(v, LOG, "saving_us")] for v in ("every-n", "never")}
    shorter = all(m[(v, LOG, "step_us")] < m[("every-step", LOG, "step_us")] for v in savings)
    return (", ".join(f"{k} {v:.1f} us" for k, v in savings.items()) + f" (idle {idle:.1f} us)",
            min(savings.values()) >= 0.5 * idle and shorter)


GRAPH = "kernels=20;work_us=2"


@check("graph (20 kernels): the graph saves > 10 % of the step and its launch takes < half "
       "the 20 launches'", "> 10 %; < 0.5 x", GROUP)
def graph_saves():
    m = measure("graph", "--scenario", "graph", *FAST)
    saving, step = m[("graph", GRAPH, "saving_us")], m[("launches", GRAPH, "step_us")]
    launch = m[("graph", GRAPH, "launch_us")] / m[("launches", GRAPH, "launch_us")]
    return (f"{100 * saving / step:.1f} % of {step:.1f} us; launch {launch:.2f} x",
            saving > 0.1 * step and launch < 0.5)


READBACK_PER_STEP = {
    "dynamic-shape": ("n=1048576;density=50", "fixed-shape"),
    "device-branch": ("work_us=10", "device-select"),
}


def fix_saves_the_readback(scenario):
    params, fix = READBACK_PER_STEP[scenario]
    saving = measure(scenario, "--scenario", scenario, *FAST)[(fix, params, "saving_us")]
    idle = idle_readback_us()
    return f"{saving:.1f} us (idle readback {idle:.1f} us)", saving >= 0.5 * idle


for _scenario in sorted(READBACK_PER_STEP):
    check(f"{_scenario}: {READBACK_PER_STEP[_scenario][1]} saves the readback a step",
          ">= 0.5 x an idle readback", GROUP)(
              lambda s=_scenario: fix_saves_the_readback(s))


BS = "other_us=1000;work_us=10"


@shared
def busy():
    return measure("busy-stream", "--scenario", "busy-stream", *FAST)


@check("busy-stream: a device sync waits for the other stream's 1 ms (wait and step)",
       ">= 900 us", GROUP)
def device_sync_waits():
    m = busy()
    wait, step = m[("sync-device", BS, "wait_us")], m[("sync-device", BS, "step_us")]
    return f"wait {wait:.0f}, step {step:.0f} us", min(wait, step) >= 900


@check("busy-stream: a stream or event sync does not (wait < 500 us, saving >= 500 us and "
       ">= 50 %)", "wait < 500 us; saving >= 500 us, 50 %", GROUP)
def stream_sync_does_not():
    m = busy()
    text, ok = [], True
    for v in ("sync-stream", "sync-event"):
        wait, saving, share = (m[(v, BS, k)] for k in ("wait_us", "saving_us", "saving_pct"))
        text.append(f"{v} wait {wait:.0f}, saves {saving:.0f} us ({share:.0f} %)")
        ok = ok and wait < 500 and saving >= 500 and share >= 50
    return "; ".join(text), ok


AL = "bytes=1MiB"


@check("alloc (1 MiB a step): cudaMalloc/cudaFree is slower than reuse and than the "
       "stream-ordered pool", "step longer; savings > 0", GROUP)
def alloc_saves():
    m = measure("alloc", "--scenario", "alloc", *FAST)
    mf = m[("malloc-free", AL, "step_us")]
    ok = all(mf > m[(v, AL, "step_us")] and m[(v, AL, "saving_us")] > 0
             for v in ("reuse", "malloc-async"))
    return (f"malloc-free {mf:.1f}, reuse {m[('reuse', AL, 'step_us')]:.1f}, malloc-async "
            f"{m[('malloc-async', AL, 'step_us')]:.1f} us", ok)


SH = "bytes=4KiB"


@check("small-h2d (4 KiB): pinned-async is faster than pageable, and its call returns sooner",
       "step and call shorter; saving > 0", GROUP)
def small_h2d_saves():
    m = measure("small-h2d", "--scenario", "small-h2d", *FAST)
    step = (m[("pinned-async", SH, "step_us")], m[("pageable", SH, "step_us")])
    call = (m[("pinned-async", SH, "call_us")], m[("pageable", SH, "call_us")])
    saving = m[("pinned-async", SH, "saving_us")]
    return (f"step {step[0]:.1f} vs {step[1]:.1f}, call {call[0]:.1f} vs {call[1]:.1f} us",
            step[0] < step[1] and call[0] < call[1] and saving > 0)


SC = "work_us=200"
WORK_US = 200
MODES = ["auto", "spin", "yield", "blocking-sync"]


@shared
def sched():
    return measure("sched", "--scenario", "sched", *FAST)


@check("sched: each mode's step holds its 200 us of work and a sync under 1 ms",
       "step >= 200 us; 0 < sync < 1000 us", GROUP)
def sched_step():
    m = sched()
    ok = all(m[(x, SC, "step_us")] >= WORK_US and 0 < m[(x, SC, "sync_us")] < 1000
             for x in MODES)
    return ", ".join(f"{x} {m[(x, SC, 'step_us')]:.0f}/{m[(x, SC, 'sync_us')]:.0f}"
                     for x in MODES) + " us (step/sync)", ok


@check("sched: spin burns the CPU while it waits", ">= 100 us CPU a step", GROUP)
def sched_spin_burns():
    x = sched()[("spin", SC, "host_cpu_us")]
    return f"{x:.0f} us", x >= 0.5 * WORK_US


@check("sched: blocking-sync sleeps: its CPU time over spin's", "< 0.5 x", GROUP)
def sched_blocking_sleeps():
    m = sched()
    ratio = m[("blocking-sync", SC, "host_cpu_us")] / m[("spin", SC, "host_cpu_us")]
    return f"{ratio:.2f} x", ratio < 0.5


@check("sched: spin wakes no later than blocking-sync (sync us)", "spin <= blocking-sync",
       GROUP)
def sched_spin_wakes_first():
    m = sched()
    spin, blocking = m[("spin", SC, "sync_us")], m[("blocking-sync", SC, "sync_us")]
    return f"{spin:.1f} vs {blocking:.1f} us", spin <= blocking
