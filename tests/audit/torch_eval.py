#!/usr/bin/env python3
"""A validation loop as users write it, for the replay's suite (tests/gpu/replay_suite.py): a
small CNN in model.eval() under torch.no_grad(), over batches already on the GPU, counting the
correct predictions.

    torch_eval.py [--variant sync|fixed] [--batches N]

  sync   `correct += (logits.argmax(1) == y).sum().item()` each batch (the line marked
         `# SYNC-LINE`): a readback and a sync a batch
  fixed  `correct += (logits.argmax(1) == y).sum()`: the count stays a GPU tensor, read once
         after the loop

The model: four conv-BN-ReLU blocks (3 -> 64 -> 128 -> 256 -> 256 channels, two of stride 2),
average pooling and a linear layer, on CIFAR-sized images (3 x 32 x 32, batch 256); 20 random
batches made on the GPU beforehand, cycled (N batches, default 2000). 20 warm-up batches the
fixed way (cuDNN's and cuBLAS's set-up; the marked line runs only in the timed loop).

Prints one JSON line: {"variant": ..., "steps": N, "step_us": wall us per batch (the final
read and a torch.cuda.synchronize() included), "correct": ...}. Exit 2 when torch has no CUDA
device."""
import argparse
import json
import sys
import time

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed"), default="sync")
    ap.add_argument("--batches", type=int, default=2000)
    args = ap.parse_args()
    if args.batches < 1:
        ap.error("--batches must be at least 1")
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
        t0 = time.perf_counter()
        correct = evaluate(model, batches, args.batches, sync=args.variant == "sync")
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    print(json.dumps({"variant": args.variant, "steps": args.batches,
                      "step_us": wall / args.batches * 1e6, "correct": correct}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
