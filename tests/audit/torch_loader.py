#!/usr/bin/env python3
"""A training loop fed by a DataLoader as users write it, for the replay's suite
(tests/gpu/replay_suite.py): TensorDataset of CPU tensors, two worker processes, pinned
batches moved with .cuda(non_blocking=True), and an accuracy computed every step.

    torch_loader.py [--variant sync|fixed|alternate] [--steps N] [--blocks B] [--first sync|fixed]

  sync   `accs.append(acc.cpu())` each step (the line marked `# SYNC-LINE`): the metric read
         back, a sync a step
  fixed  `accs.append(acc.detach())`: the metrics kept on the GPU, read once after the loop
  alternate  B blocks (default 8) of N steps each, alternating sync and fixed, FIRST first
         (alternate.py: after an untimed fixed block; each block timed as the loop alone, its
         final read included), the loader's iterator going on from block to block

DataLoader(TensorDataset(x, y), batch_size=128, shuffle=True, drop_last=True, num_workers=2,
pin_memory=True, persistent_workers=True) over 25600 samples of 64 features (200 batches an
epoch, in memory), cycled over epochs. The model: Linear(64, 8192), ReLU, Linear(8192, 8192),
ReLU, Linear(8192, 10), cross-entropy, SGD: about 1.5 ms of GPU work a step on an H100, so that
the loader (about 1 ms a batch per worker) keeps up. 50 warm-up steps the fixed way (the
workers started, cuBLAS set up; the marked line runs only in the timed loop), then N steps
(default 800).

Prints one JSON line: {"variant": ..., "steps": N, "step_us": wall us per step (the final
read and a torch.cuda.synchronize() included), "accuracy": ...}; with alternate, alternate.py's
line (blocks, sync_us, fixed_us, saving_us). Exit 2 when torch has no CUDA device."""
import argparse
import json
import sys
import time

import alternate  # beside this file

FEATURES, HIDDEN, CLASSES, BATCH, BATCHES_PER_EPOCH, WARMUP = 64, 8192, 10, 128, 200, 50


def loader(torch):
    from torch.utils.data import DataLoader, TensorDataset
    n = BATCH * BATCHES_PER_EPOCH
    data = TensorDataset(torch.randn(n, FEATURES), torch.randint(0, CLASSES, (n,)))
    return DataLoader(data, batch_size=BATCH, shuffle=True, drop_last=True, num_workers=2,
                      pin_memory=True, persistent_workers=True)


def batches(dl):
    """The loader's batches, epoch after epoch, on the GPU."""
    while True:
        for x, y in dl:
            yield x.cuda(non_blocking=True), y.cuda(non_blocking=True)


def stepper(torch):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN),
                          nn.ReLU(), nn.Linear(HIDDEN, CLASSES)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step(x, y):
        """One training step; its accuracy, a tensor on the GPU."""
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        torch.nn.functional.cross_entropy(logits, y).backward()
        opt.step()
        return (logits.argmax(1) == y).float().mean()
    return step


def train(torch, step, feed, n, sync):
    """N steps; their mean accuracy, each step's read back each step (sync) or at the end."""
    accs = []
    for _ in range(n):
        acc = step(*next(feed))
        if sync:
            accs.append(acc.cpu())  # SYNC-LINE
        else:
            accs.append(acc.detach())
    return torch.stack(accs).mean().item()


def timed(torch, step, feed, n, sync):
    """(wall us per step, mean accuracy) of train()'s N steps, the final read and a
    torch.cuda.synchronize() included."""
    t0 = time.perf_counter()
    accuracy = train(torch, step, feed, n, sync)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6, accuracy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed", "alternate"), default="sync")
    ap.add_argument("--steps", type=int, default=800)
    alternate.add_arguments(ap)
    args = ap.parse_args()
    if args.steps < 1:
        ap.error("--steps must be at least 1")
    alternate.check_blocks(ap, args.blocks)
    import torch
    if not torch.cuda.is_available():
        print("torch_loader.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    step = stepper(torch)
    feed = batches(loader(torch))
    train(torch, step, feed, WARMUP, sync=False)
    torch.cuda.synchronize()
    if args.variant == "alternate":
        blocks = alternate.run(args.first, args.blocks,
                               lambda sync: timed(torch, step, feed, args.steps, sync)[0])
        out = alternate.summary(args.first, args.steps, blocks)
    else:
        step_us, accuracy = timed(torch, step, feed, args.steps, args.variant == "sync")
        out = {"variant": args.variant, "steps": args.steps, "step_us": step_us,
               "accuracy": accuracy}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
