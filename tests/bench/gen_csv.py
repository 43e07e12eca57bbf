#!/usr/bin/env python3
"""Writes a syncbench CSV of N rows for the compare benchmark: the real schema, realistic
scenarios, variants, params and metrics, every key distinct. --seed and --drift make the
"current" file of a pair: the same keys with medians moved by up to +-drift percent, a few rows
dropped and a few new ones added.

    gen_csv.py ROWS OUT.csv [--seed S] [--drift PCT]"""
import argparse
import random

HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")
# (scenario, variants, metrics: (name, unit, better))
SHAPES = [
    ("small-gemm", ["async", "sync-device", "sync-stream", "sync-event", "sync-readback"],
     [("wall_us_per_iter", "us", "lower"), ("gpu_us_per_iter", "us", "lower"),
      ("kernel_us", "us", "lower"), ("TFLOPs", "TFLOP/s", "higher")]),
    ("copy", ["h2d-pageable", "h2d-pinned", "d2h-pageable", "d2h-pinned"],
     [("GBps", "GB/s", "higher"), ("host_call_us", "us", "lower"), ("wall_us", "us", "lower")]),
    ("readback", ["pending-pageable", "pending-pinned", "idle-pageable", "idle-pinned"],
     [("readback_us", "us", "lower"), ("wait_us", "us", "lower")]),
]


def rows(n):
    """(scenario, variant, params, metric, unit, better), n of them, all distinct."""
    k = 0
    while True:
        for scenario, variants, metrics in SHAPES:
            params = (f"m={512 + k % 4096};n={512 + (k // 4096) % 4096};k={k // 16777216 + 1};"
                      "dtype=fp16;tf32=0")
            for variant in variants:
                for metric, unit, better in metrics:
                    yield scenario, variant, params, metric, unit, better
                    n -= 1
                    if n == 0:
                        return
            k += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--drift", type=float, default=0.0)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    gpu = "NVIDIA H100 80GB HBM3"
    out = []
    new = []
    for i, (s, v, p, m, u, b) in enumerate(rows(a.rows)):
        if a.drift and i % 1000 == 7:  # dropped from the current run: missing
            new.append((s, v, p.replace("dtype=fp16", "dtype=bf16"), m, u, b))
            continue
        med = 10.0 + (i % 97)
        if a.drift:
            med *= 1 + rnd.uniform(-a.drift, a.drift) / 100
        out.append((s, v, p, m, u, b, med))
    out += [(*r, 50.0) for r in new]  # new in the current run
    with open(a.out, "w") as f:
        f.write(HEADER)
        for s, v, p, m, u, b, med in out:
            cv = 1.0
            sd = med * cv / 100
            f.write(f"20261122T165503Z-{a.seed},2026-11-22T16:55:03Z,host,{gpu},580.95,13.0,"
                    f"{s},{v},{p},1000,20,{m},{u},{b},{med:.6g},{med:.6g},{sd:.6g},"
                    f"{med * 0.98:.6g},{med * 1.02:.6g},{med * 0.99:.6g},{med * 1.01:.6g},"
                    f"{cv:.6g},\n")


if __name__ == "__main__":
    main()
