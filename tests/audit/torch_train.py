#!/usr/bin/env python3
"""A PyTorch training loop as users write it, for the replay across threads (issue 34): an MLP,
`loss.backward()`, `optimizer.step()`, and the loss read back every step. PyTorch runs every
backward pass of a CUDA model on its autograd engine's own thread, so the loop's kernels are
launched by two host threads.

    torch_train.py [--variant item|fixed] [--size gpu|host] [--steps N]

  item   `losses.append(loss.item())` each step (the line marked `# ITEM`): a sync a step
  fixed  the losses kept on the GPU and read once after the loop: the fix
  gpu    a wide MLP (GPU-bound steps, about 2 ms on an H100); host: a narrow one (launch-bound)

Prints one JSON line: {"variant": ..., "size": ..., "steps": N, "step_us": wall us per step
(after 20 warm-up steps), "threads": the host threads that ran a backward pass}."""
import argparse
import json
import sys
import threading
import time

import mlp  # beside this file


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("item", "fixed"), default="item")
    ap.add_argument("--size", choices=("gpu", "host"), default="gpu")
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("torch_train.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    width, batch = (4096, 2048) if args.size == "gpu" else (256, 64)
    model = mlp.mlp(torch, width, 10, "cuda")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    backward_threads = set()
    model[0].weight.register_hook(lambda g: backward_threads.add(threading.get_ident()))
    step = mlp.stepper(model, opt, torch.nn.functional.cross_entropy, x, y)

    for _ in range(20):
        step()
    torch.cuda.synchronize()
    losses = []
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
        if args.variant == "item":
            losses.append(loss.item())  # ITEM
        else:
            losses.append(loss.detach())
    if args.variant == "fixed":
        losses = torch.stack(losses).tolist()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(json.dumps({"variant": args.variant, "size": args.size, "steps": args.steps,
                      "step_us": wall / args.steps * 1e6, "threads": len(backward_threads),
                      "last_loss": losses[-1]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
