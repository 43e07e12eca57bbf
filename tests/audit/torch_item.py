#!/usr/bin/env python3
"""A PyTorch training-like loop for `syncbench audit`'s GPU tests: where `.item()` and
`print(tensor)` sync, and the sync-free way of keeping a running loss.

    torch_item.py --mode item|free|drop|print [--steps N]

One warm-up step outside any NVTX range (cuBLAS handle, kernels loaded, allocator cache
filled; it ends with a torch.cuda.synchronize()), then N steps (default 10), each inside
torch.cuda.nvtx.range("train_step"): a 256x256 fp32 matmul and a scalar loss (its mean), then
  item   loss.item(): a 4-byte cudaMemcpyAsync into pinned memory + cudaStreamSynchronize,
         so exactly N host syncs (sync-stream) in train_step, one per instance
  free   the loss added to a running total on the GPU, no sync in the loop (0 in
         train_step); one total.item() after the loop, outside any range
  drop   the loss not logged at all: the item line removed (what the audit's replay predicts
         for removing it), no sync in the loop
  print  as free, plus print(total) inside the range on step N // 2: a sync in train_step
Last line on stdout, one JSON object: {"mode":M,"steps":N,"train_step_syncs":K,"total":X,
"loop_us":T} (T: the loop's wall time, from after the warm-up's sync to the end of the GPU's
work, the final total.item() in free mode included)
(K: host syncs the loop makes inside train_step; in print mode at least 1: the printed tensor's
copy and sync, so the test asserts only that the gate fails). Nothing else is printed but the
tensor in print mode. Exit 2 on bad usage, 3 when torch has no CUDA.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("item", "free", "drop", "print"), required=True)
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    if args.steps < 1:
        ap.error("--steps must be at least 1")
    import torch
    if not torch.cuda.is_available():
        print("torch_item.py: torch has no CUDA device", file=sys.stderr)
        return 3
    dev = torch.device("cuda")
    torch.manual_seed(0)
    x = torch.randn(256, 256, device=dev)
    w = torch.randn(256, 256, device=dev) / 16
    total = torch.zeros((), device=dev)

    def step():
        return (x @ w).relu().mean()

    # warm-up outside any range: everything created once is created here
    loss = step()
    total += loss * 0
    total.item()
    torch.cuda.synchronize()

    logged = 0.0
    t0 = time.perf_counter()
    for i in range(args.steps):
        with torch.cuda.nvtx.range("train_step"):
            loss = step()
            if args.mode == "item":
                logged += loss.item()
            elif args.mode != "drop":
                total += loss
                if args.mode == "print" and i == args.steps // 2:
                    print(total)
    if args.mode in ("free", "print"):
        logged = total.item()
    torch.cuda.synchronize()
    loop_us = (time.perf_counter() - t0) * 1e6
    syncs = args.steps if args.mode == "item" else (1 if args.mode == "print" else 0)
    print(json.dumps({"mode": args.mode, "steps": args.steps, "train_step_syncs": syncs,
                      "total": logged, "loop_us": loop_us}))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
