#!/usr/bin/env python3
"""Threads that sync, for `syncbench audit`'s stress tests (tests/gpu/test_audit_python.py).

    torch_threads.py --mode stress|exit|hardexit|kill [--threads 8] [--items 10000]

  stress  THREADS threads each call .item() ITEMS times (the line marked `# ITEM`), then join;
          prints {"items": THREADS * ITEMS}
  exit      daemon threads call .item() in a loop; the main thread returns while they do (the
            interpreter finalizes with syncs in flight: torch 2.11 itself then aborts, 134)
  hardexit  as exit, but os._exit(0) while they do (no interpreter finalization, no atexit)
  kill      as exit, but the process sends itself SIGTERM while they do; dies of it (143)
"""
import argparse
import json
import os
import signal
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("stress", "exit", "hardexit", "kill"), required=True)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--items", type=int, default=10000)
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_threads.py: torch has no CUDA device", file=sys.stderr)
        return 3
    x = torch.ones(16, device="cuda")
    x.sum().item()  # warm-up: the kernels loaded before the threads start
    torch.cuda.synchronize()

    def worker(n):
        s = 0.0
        for _ in range(n):
            s += x.sum().item()  # ITEM
        return s

    if args.mode == "stress":
        ts = [threading.Thread(target=worker, args=(args.items,)) for _ in range(args.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print(json.dumps({"items": args.threads * args.items}))
        return 0
    for _ in range(args.threads):
        threading.Thread(target=worker, args=(10 ** 9,), daemon=True).start()
    time.sleep(1.0)  # every thread is in its loop of syncs
    if args.mode == "kill":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
    if args.mode == "hardexit":
        sys.stdout.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
