#!/usr/bin/env python3
"""A validation loop as users write it, for the replay's suite (tests/gpu/replay_suite.py): a
small CNN in model.eval() under torch.no_grad(), over batches already on the GPU, counting the
correct predictions.

    torch_eval.py [--variant sync|fixed|alternate] [--batches N] [--blocks B] [--first sync|fixed]

  sync   `correct += (logits.argmax(1) == y).sum().item()` each batch (the line marked
         `# SYNC-LINE`): a readback and a sync a batch
  fixed  `correct += (logits.argmax(1) == y).sum()`: the count stays a GPU tensor, read once
         after the loop
  alternate  B blocks (default 8) of N batches each, alternating sync and fixed, FIRST first
         (alternate.py: after an untimed fixed block; each block timed as the loop alone, its
         final read included)

The model: four conv-BN-ReLU blocks (3 -> 64 -> 128 -> 256 -> 256 channels, two of stride 2),
average pooling and a linear layer, on CIFAR-sized images (3 x 32 x 32, batch 256); 20 random
batches made on the GPU beforehand, cycled (N batches, default 2000). 20 warm-up batches the
fixed way (cuDNN's and cuBLAS's set-up; the marked line runs only in the timed loop).

Prints one JSON line: {"variant": ..., "steps": N, "step_us": wall us per batch (the final
read and a torch.cuda.synchronize() included), "correct": ...}; with alternate, alternate.py's
line (blocks, sync_us, fixed_us, saving_us; steps: batches a block). Exit 2 when torch has no
CUDA device."""
import argparse
import json
import sys
import time

import alternate  # beside this file

BATCH, BATCHES_HELD, WARMUP = 256, 20, 20


def cnn(nn):
    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]
    return nn.Sequential(*block(3, 64, 1), *block(64, 128, 2), *block(128, 256, 2),
                         *block(256, 256, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(256, 10))


def evaluate(model, batches, n, sync):
    """The correct predictions over N batches (cycled), counted on the host each batch (sync)
    or on the GPU and read once."""
    correct = 0
    for i in range(n):
        x, y = batches[i % len(batches)]
        logits = model(x)
        if sync:
            correct += (logits.argmax(1) == y).sum().item()  # SYNC-LINE
        else:
            correct += (logits.argmax(1) == y).sum()
    return int(correct)


def timed(torch, model, batches, n, sync):
    """(wall us per batch, correct) of evaluate()'s N batches, the final read and a
    torch.cuda.synchronize() included."""
    t0 = time.perf_counter()
    correct = evaluate(model, batches, n, sync)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6, correct


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed", "alternate"), default="sync")
    ap.add_argument("--batches", type=int, default=2000)
    alternate.add_arguments(ap)
    args = ap.parse_args()
    if args.batches < 1:
        ap.error("--batches must be at least 1")
    alternate.check_blocks(ap, args.blocks)
    import torch
    if not torch.cuda.is_available():
        print("torch_eval.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = cnn(torch.nn).cuda().eval()
    batches = [(torch.randn(BATCH, 3, 32, 32, device="cuda"),
                torch.randint(0, 10, (BATCH,), device="cuda")) for _ in range(BATCHES_HELD)]
    with torch.no_grad():
        evaluate(model, batches, WARMUP, sync=False)
        torch.cuda.synchronize()
        if args.variant == "alternate":
            blocks = alternate.run(args.first, args.blocks, lambda sync: timed(
                torch, model, batches, args.batches, sync)[0])
            out = alternate.summary(args.first, args.batches, blocks)
        else:
            step_us, correct = timed(torch, model, batches, args.batches,
                                     args.variant == "sync")
            out = {"variant": args.variant, "steps": args.batches, "step_us": step_us,
                   "correct": correct}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
