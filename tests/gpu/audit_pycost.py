#!/usr/bin/env python3
"""What taking the Python stack adds to each sync: a torch loop of .item() calls (a 16-float
sum and its readback), timed inside the program, run alone, under `syncbench audit` and under
`syncbench audit --no-python`, paired round by round in alternating order. Prints the median
microseconds per .item() of each mode, and the median per-round difference (Python frames on
minus off) with a 95 % bootstrap interval.
    tests/gpu/audit_pycost.py [--rounds 10] [--items 5000] [--depth 10]
--depth: Python frames above the .item() line (a user's call chain). --with-writer: also the
stacks read by CPython's traceback writer at every call (SYNCBENCH_PY_WALK=0). SYNCBENCH: the binary
(default build/syncbench). make validate runs it (tests/validate/audit_checks.py)."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
B = os.environ.get("SYNCBENCH", os.path.join(ROOT, "build", "syncbench"))
LOOP = r"""
import json, sys, time, torch
x = torch.ones(16, device="cuda")
def nest(d, n):
    if d:
        return nest(d - 1, n)
    t0 = time.perf_counter()
    for _ in range(n):
        x.sum().item()
    return time.perf_counter() - t0
x.sum().item(); torch.cuda.synchronize()
n, d = int(sys.argv[1]), int(sys.argv[2])
nest(d, 200)
print(json.dumps({"us_per_item": nest(d, n) / n * 1e6}))
"""


def once(mode, items, depth):
    cmd = [sys.executable, "-c", LOOP, str(items), str(depth)]
    env = dict(os.environ)
    if mode in ("python", "writer"):
        cmd = [B, "audit", "-q", "--"] + cmd
    elif mode == "nopython":
        cmd = [B, "audit", "-q", "--no-python", "--"] + cmd
    if mode == "writer":  # CPython's traceback writer at every call, as before issue 36
        env["SYNCBENCH_PY_WALK"] = "0"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != 0:
        sys.exit(f"audit_pycost: {mode}: exit {r.returncode}: {r.stderr[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])["us_per_item"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--with-writer", action="store_true",
                    help="also time stacks read by CPython's traceback writer at every call "
                         "(SYNCBENCH_PY_WALK=0, the reader before the raw one)")
    a = ap.parse_args()
    modes_all = ["plain", "python", "nopython"] + (["writer"] if a.with_writer else [])
    res = {m: [] for m in modes_all}
    for r in range(a.rounds):
        modes = list(modes_all)
        if r % 2:
            modes.reverse()
        for m in modes:
            res[m].append(once(m, a.items, a.depth))
    diff = [p - q for p, q in zip(res["python"], res["nopython"])]
    rng = random.Random(1)
    boot = sorted(statistics.median(rng.choices(diff, k=len(diff))) for _ in range(2000))
    out = {m: statistics.median(v) for m, v in res.items()}
    if a.with_writer:
        out["per_sync_writer_us"] = statistics.median(
            p - q for p, q in zip(res["writer"], res["nopython"]))
    out.update(per_sync_python_us=statistics.median(diff), ci95=[boot[50], boot[1949]],
               spread=[min(diff), max(diff)],
               rounds=a.rounds, items=a.items, depth=a.depth, raw=res)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
