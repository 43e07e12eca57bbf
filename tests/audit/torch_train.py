#!/usr/bin/env python3
"""A PyTorch training loop as users write it, for the replay across threads (issue 34) and the
replay's suite (tests/gpu/replay_suite.py): an MLP, `loss.backward()`, `optimizer.step()`, and
the loss read back every step. PyTorch runs every backward pass of a CUDA model on its autograd
engine's own thread, so the loop's kernels are launched by two host threads.

    torch_train.py [--variant sync|fixed] [--size gpu|host] [--steps N] [--compile]
                   [--count-threads]

  sync     `losses.append(loss.item())` each step (the line marked `# SYNC-LINE`): a sync a step
  fixed    the losses kept on the GPU and read once after the loop: the fix
  gpu      a wide MLP (GPU-bound steps, about 7 ms on an H100); host: a narrow one (launch-bound)
  compile  the model wrapped in torch.compile (default mode), compiled in the warm-up (30 steps
           instead of 20), so that the timed steps run the compiled forward and backward
  count-threads  a hook on the first layer's weight gradient counts the host threads that ran a
           backward pass; off by default: a Python hook on the engine's thread takes the GIL
           each step, which a user's loop does not

Prints one JSON line: {"variant": ..., "size": ..., "compile": ..., "steps": N, "step_us": wall
us per step (after the warm-up, the final torch.cuda.synchronize() included), "threads": the
host threads that ran a backward pass (null without --count-threads), "last_loss": ...}. Exit 2
when torch has no CUDA device."""
import argparse
import json
import sys
import threading
import time

import mlp  # beside this file


def build(torch, args):
    """(step function, the set the thread hook fills or None) for the chosen size."""
    width, batch = (4096, 2048) if args.size == "gpu" else (256, 64)
    model = mlp.mlp(torch, width, 10, "cuda")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    threads = None
    if args.count_threads:  # on the plain module: the compiled wrapper is not indexable
        threads = set()
        model[0].weight.register_hook(lambda g: threads.add(threading.get_ident()))
    if args.compile:
        model = torch.compile(model)
    return mlp.stepper(model, opt, torch.nn.functional.cross_entropy, x, y), threads


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed"), default="sync")
    ap.add_argument("--size", choices=("gpu", "host"), default="gpu")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--count-threads", action="store_true")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_train.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    step, threads = build(torch, args)

    for _ in range(30 if args.compile else 20):  # torch.compile compiles on the first steps
        step()
    torch.cuda.synchronize()
    losses = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
        if args.variant == "sync":
            losses.append(loss.item())  # SYNC-LINE
        else:
            losses.append(loss.detach())
    if args.variant == "fixed":
        losses = torch.stack(losses).tolist()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(json.dumps({"variant": args.variant, "size": args.size, "compile": args.compile,
                      "steps": args.steps, "step_us": wall / args.steps * 1e6,
                      "threads": None if threads is None else len(threads),
                      "last_loss": losses[-1]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
