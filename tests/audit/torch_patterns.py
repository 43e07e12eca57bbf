#!/usr/bin/env python3
"""The guides' sync patterns, one per NVTX range, for `syncbench audit`'s Python sites.

    torch_patterns.py [--where main|thread|child|all] [--debug-mode] [--out FILE]

Every line that syncs carries a marker comment `# SYNC:<pattern>`; the GPU tests find the
expected file and line of each pattern from these markers (tests/gpu/test_audit_python.py),
so the program may be edited freely. The patterns run in the main thread (main), in a worker
thread (thread), in a `multiprocessing` child started with "spawn" (child), or all three.
Each pattern runs inside torch.cuda.nvtx.range(NAME) with NAME the pattern's name; the range
"sync_free" makes no sync (its lines carry `# FREE`).

--debug-mode runs the patterns under torch.cuda.set_sync_debug_mode("warn") and writes, for
each warning torch gave, its file and line (--out FILE, JSON: {"warnings": [[file, line],
...]}). Exit 3 when torch has no CUDA.
"""
import argparse
import ctypes
import json
import sys
import threading
import warnings


def patterns(torch):
    """(name, function) pairs; each function makes the pattern's syncs and nothing else."""
    dev = torch.device("cuda")
    x = torch.randn(1024, device=dev)
    m = torch.randn(64, 64, device=dev) + 8 * torch.eye(64, device=dev)
    reps = torch.full((1024,), 2, device=dev, dtype=torch.long)
    pinned = torch.empty(1024, pin_memory=True)
    libcuda = ctypes.CDLL("libcuda.so.1")

    def item():
        return x.sum().item()  # SYNC:item

    def float_():
        return float(x.sum())  # SYNC:float

    def if_tensor():
        if x.sum() > 0:  # SYNC:if_tensor
            return 1
        return 0

    def print_():
        print(x[:2])  # SYNC:print

    def cpu():
        return x.cpu()  # SYNC:cpu

    def numpy():
        return x.cpu().numpy()  # SYNC:numpy

    def tolist():
        return x[:4].tolist()  # SYNC:tolist

    def nonzero():
        return torch.nonzero(x > 0)  # SYNC:nonzero

    def mask():
        return x[x > 0]  # SYNC:mask

    def unique():
        return torch.unique(x)  # SYNC:unique

    def tensor_list():
        return torch.tensor([1.0, 2.0, 3.0], device=dev)  # SYNC:tensor_list

    def any_():
        if (x > 3).any():  # SYNC:any
            return 1
        return 0

    def repeat_interleave():
        return torch.repeat_interleave(x, reps)  # SYNC:repeat_interleave

    def synchronize():
        torch.cuda.synchronize()  # SYNC:synchronize

    def event():
        ev = torch.cuda.Event()
        ev.record()
        ev.synchronize()  # SYNC:event

    def stream():
        torch.cuda.current_stream().synchronize()  # SYNC:stream

    def ctypes_sync():
        libcuda.cuCtxSynchronize()  # SYNC:ctypes_sync

    def empty_cache():
        y = torch.empty(64 << 20, dtype=torch.uint8, device=dev)
        del y
        torch.cuda.empty_cache()  # SYNC:empty_cache

    def linalg():
        return torch.linalg.inv_ex(m, check_errors=True)  # SYNC:linalg

    def sync_free():
        t = x * 2  # FREE
        pinned.copy_(t, non_blocking=True)  # FREE
        return torch.where(t > 0, t, 0).sum()  # FREE

    return [("item", item), ("float", float_), ("if_tensor", if_tensor), ("print", print_),
            ("cpu", cpu), ("numpy", numpy), ("tolist", tolist), ("nonzero", nonzero),
            ("mask", mask), ("unique", unique), ("tensor_list", tensor_list), ("any", any_),
            ("repeat_interleave", repeat_interleave), ("synchronize", synchronize),
            ("event", event), ("stream", stream), ("ctypes_sync", ctypes_sync),
            ("empty_cache", empty_cache), ("linalg", linalg), ("sync_free", sync_free)]


def run_patterns(prefix=""):
    import torch
    todo = patterns(torch)
    for _, f in todo:  # warm-up outside any range: kernels loaded, caches filled
        f()
    torch.cuda.synchronize()
    for name, f in todo:
        with torch.cuda.nvtx.range(prefix + name):
            f()
    torch.cuda.synchronize()


def child_main():
    run_patterns("child:")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--where", choices=("main", "thread", "child", "all"), default="main")
    ap.add_argument("--debug-mode", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_patterns.py: torch has no CUDA device", file=sys.stderr)
        return 3
    seen = []
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        if args.debug_mode:
            torch.cuda.set_sync_debug_mode("warn")
        if args.where in ("main", "all"):
            run_patterns()
        if args.where in ("thread", "all"):
            t = threading.Thread(target=run_patterns, args=("thread:",))
            t.start()
            t.join()
        if args.debug_mode:
            torch.cuda.set_sync_debug_mode(0)
        # torch's sync warnings ("called a synchronizing CUDA operation"), not its notices
        seen = [[w.filename, w.lineno] for w in got
                if "synchronizing CUDA operation" in str(w.message)]
    if args.where in ("child", "all"):
        import multiprocessing as mp
        p = mp.get_context("spawn").Process(target=child_main)
        p.start()
        p.join()
        if p.exitcode:
            return 1
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"warnings": seen}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
