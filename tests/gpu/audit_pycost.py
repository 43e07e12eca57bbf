#!/usr/bin/env python3
"""What taking the Python stack adds to each sync: a torch loop of .item() calls (a 16-float
sum and its readback), timed inside the program, run alone, under `syncbench audit` and under
`syncbench audit --no-python`, paired round by round in alternating order. Prints the median
microseconds per .item() of each mode, and the median per-round difference (Python frames on
minus off) with a 95 % bootstrap interval.
    tests/gpu/audit_pycost.py [--rounds 10] [--items 5000] [--depth 10]
--depth: Python frames above the .item() line (a user's call chain). SYNCBENCH: the binary
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
    if mode == "python":
        cmd = [B, "audit", "-q", "--"] + cmd
    elif mode == "nopython":
        cmd = [B, "audit", "-q", "--no-python", "--"] + cmd
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"audit_pycost: {mode}: exit {r.returncode}: {r.stderr[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])["us_per_item"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--depth", type=int, default=10)
    a = ap.parse_args()
    res = {"plain": [], "python": [], "nopython": []}
    for r in range(a.rounds):
        modes = ["plain", "python", "nopython"]
        if r % 2:
            modes.reverse()
        for m in modes:
            res[m].append(once(m, a.items, a.depth))
    diff = [p - q for p, q in zip(res["python"], res["nopython"])]
    rng = random.Random(1)
    boot = sorted(statistics.median(rng.choices(diff, k=len(diff))) for _ in range(2000))
    out = {m: statistics.median(v) for m, v in res.items()}
    out.update(per_sync_python_us=statistics.median(diff), ci95=[boot[50], boot[1949]],
               rounds=a.rounds, items=a.items, depth=a.depth, raw=res)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
