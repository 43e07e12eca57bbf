"""collective and cross-device on 2 or more GPUs (docs/scenarios.md): the straggler's extra time
in the fast GPUs' wait, what the sync-free variants save, what each way of waiting costs, peer to
peer against staged copies. SKIP on a machine with fewer than 2 GPUs."""
from registry import Skip, check, measure, run, shared

import test_multi_gpu as tmg

GROUP = "multi-gpu"
REPS = ("--min-reps", "20", "--max-time", "1", "--warmup-time", "0.3")


def two_gpus(nccl=False):
    if tmg.GPUS < 2:
        raise Skip(f"needs 2 or more GPUs ({tmg.GPUS} here)")
    if nccl and tmg.NCCL is None:
        raise RuntimeError("no NCCL found (set SYNCBENCH_NCCL_LIB)")


@shared
def coll():
    return measure("collective", "--scenario", "collective", "--set", "straggler_us=0,100,1000",
                   *REPS)


@check("collective: a straggler's extra time shows in every fast GPU's wait and in the step "
       "(straggler_us 100 and 1000)", "wait +s within 10 %; step >= +0.9 s", GROUP)
def fast_gpus_wait():
    two_gpus(nccl=True)
    m, p = coll(), tmg.cparams
    text, ok = [], True
    for s in (100, 1000):
        grew = [m[("every-step", p(s), f"wait_gpu{g}_us")] - m[("every-step", p(0),
                                                               f"wait_gpu{g}_us")]
                for g in range(tmg.N - 1)]
        grew.append(m[("every-step", p(s), "fast_wait_us")] - m[("every-step", p(0),
                                                                 "fast_wait_us")])
        step = m[("every-step", p(s), "step_us")] - m[("every-step", p(0), "step_us")]
        text.append(f"s={s}: waits +{min(grew):.0f}..+{max(grew):.0f}, step +{step:.0f} us")
        ok = ok and all(abs(x - s) <= 0.1 * s for x in grew) and step >= 0.9 * s
    return "; ".join(text), ok


@check("collective: every-n and never save against every-step (each straggler_us)",
       "saving > 0; step shorter", GROUP)
def sync_free_save():
    two_gpus(nccl=True)
    m, p = coll(), tmg.cparams
    least = min(m[(v, p(s), "saving_us")] for v in ("every-n", "never") for s in (0, 100, 1000))
    shorter = all(m[(v, p(s), "step_us")] < m[("every-step", p(s), "step_us")]
                  for v in ("every-n", "never") for s in (0, 100, 1000))
    return f"least saving {least:.1f} us", least > 0 and shorter


@check("cross-device: each way of waiting for every GPU (sync-each, event-each, wait-one): the "
       "step is the 100 us of work and the wait's own cost, the wait holds most of the work",
       "100 <= step < 1000 us; wait > 30 us", GROUP)
def waits_priced():
    two_gpus()
    m = measure("cross-device-waits", "--scenario", "cross-device", "--variant",
                "sync-each,event-each,wait-one", "--set", "bytes=4", *REPS)
    p = tmg.xparams(4)
    xs = {v: (m[(v, p, "step_us")], m[(v, p, "wait_us")])
          for v in ("sync-each", "event-each", "wait-one")}
    return (", ".join(f"{v} {s:.0f}/{w:.0f}" for v, (s, w) in xs.items()) + " us (step/wait)",
            all(100 <= s < 1000 and w > 30 for s, w in xs.values()))


@check("cross-device: peer to peer against staged copies at 64 MiB (and both > 0.5 GB/s at 1 "
       "and 64 MiB)", "p2p GB/s > staged; saving > 0", GROUP)
def p2p_beats_staged():
    two_gpus()
    r = run("--scenario", "cross-device", "--variant", "copy-p2p", "--set", "bytes=1MiB",
            "--min-reps", "1", "--max-reps", "1", "--warmup", "0", "--warmup-time", "0",
            "--quiet")
    if r.returncode == 3 and "cannot reach" in r.stderr:
        raise Skip("these GPUs have no peer-to-peer path")
    m = measure("cross-device-copies", "--scenario", "cross-device", "--variant", "copy-p2p",
                "--set", "bytes=1MiB,64MiB", *REPS)
    big = tmg.xparams("64MiB")
    p2p, staged = m[("copy-p2p", big, "GBps")], m[("copy-staged", big, "GBps")]
    slowest = min(m[(v, tmg.xparams(b), "GBps")] for v in ("copy-p2p", "copy-staged")
                  for b in ("1MiB", "64MiB"))
    return (f"{p2p:.1f} vs {staged:.1f} GB/s; slowest {slowest:.1f}",
            p2p > staged and m[("copy-p2p", big, "saving_us")] > 0 and slowest > 0.5)
