#!/usr/bin/env python3
"""A training step with a boolean mask in its loss, mid-forward, for the replay's suite
(tests/gpu/replay_suite.py, issue 49): the MLP of mlp.py, AdamW, and the loss taken over the
samples whose label is not ignored, `logits[keep]`, as users write a padding or ignore mask.
Boolean indexing sizes its result from the mask: torch counts the mask on the host (a nonzero,
a copy and a sync) before the loss, the backward pass and the optimizer can be launched.

    torch_mask.py [--variant sync|fixed|alternate] [--size gpu|host] [--pair index|count]
                  [--steps N] [--blocks B] [--first sync|fixed]

  --pair index (the default): the fix changes more than the sync
    sync   loss = cross_entropy(logits[keep], y[keep]) (the line marked `# SYNC-LINE`)
    fixed  the same loss with the mask as weights, no host count: cross_entropy(logits, y,
           reduction="none") times keep, summed, over keep's sum (the fix). Boolean indexing
           also dispatches a count, an allocation and gather kernels, forward and backward,
           which the fix drops with the sync
  --pair count: the two differ by the sync alone (the count's 8-byte copy to the host and the
           stream sync), the same kernels otherwise, the count's reduction in both
    sync   n = int(keep.sum()) (the line marked `# SYNC-LINE count`), then the weighted loss:
           cross_entropy(logits, y, reduction="none") times keep, summed, over n
    fixed  n = keep.sum(), kept on the GPU, then the same weighted loss over n
  alternate  B blocks (default 8) of N steps each, alternating sync and fixed, FIRST first
  gpu      a wide MLP (GPU-bound steps); host: a narrow one (launch-bound)

Prints one JSON line: {"variant", "size", "pair", "steps", "step_us", "last_loss"}; with
alternate, alternate.py's line (blocks, sync_us, fixed_us, saving_us) with size and pair.
Exit 2 on bad usage (argparse's, before torch is imported) or when torch has no CUDA
device."""
import argparse
import json
import sys
import time

import alternate  # beside this file
import mlp  # beside this file


def build(torch, size, pair="index"):
    """step(sync) -> the step's loss on the GPU, PAIR's syncing or fixed variant."""
    width, batch = (4096, 2048) if size == "gpu" else (256, 64)
    model = mlp.mlp(torch, width, 10, "cuda")
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    keep = torch.rand(batch, device="cuda") > 0.1  # about 10 % of the labels ignored
    f = torch.nn.functional

    def step(sync):
        opt.zero_grad(set_to_none=True)
        logits = model(x)
        if pair == "count":
            loss = count_loss(f, logits, y, keep, sync)
        elif sync:
            loss = f.cross_entropy(logits[keep], y[keep])  # SYNC-LINE
        else:
            w = keep.to(logits.dtype)
            loss = (f.cross_entropy(logits, y, reduction="none") * w).sum() / w.sum()
        loss.backward()
        opt.step()
        return loss
    return step


def count_loss(f, logits, y, keep, sync):
    """The count pair's loss: the weighted loss over keep's count, read on the host (SYNC) or
    kept on the GPU; the same kernels either way."""
    w = keep.to(logits.dtype)
    if sync:
        n = int(keep.sum())  # SYNC-LINE count
    else:
        n = keep.sum()
    return (f.cross_entropy(logits, y, reduction="none") * w).sum() / n


def timed(torch, step, steps, sync):
    """(wall us per step, the last loss) of STEPS steps, nothing read back in the loop; the
    final torch.cuda.synchronize() included."""
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step(sync)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e6, float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed", "alternate"), default="sync")
    ap.add_argument("--size", choices=("gpu", "host"), default="gpu")
    ap.add_argument("--pair", choices=("index", "count"), default="index",
                    help="index: boolean indexing against the mask as weights (the default); "
                         "count: the mask's count read on the host or kept on the GPU")
    ap.add_argument("--steps", type=int, default=200)
    alternate.add_arguments(ap)
    args = ap.parse_args()
    alternate.check_blocks(ap, args.blocks)
    import torch
    if not torch.cuda.is_available():
        print("torch_mask.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    step = build(torch, args.size, args.pair)
    for i in range(20):
        step(i % 2 == 0)  # both variants warmed
    torch.cuda.synchronize()
    if args.variant == "alternate":
        blocks = alternate.run(args.first, args.blocks,
                               lambda sync: timed(torch, step, args.steps, sync)[0])
        out = {**alternate.summary(args.first, args.steps, blocks), "size": args.size,
               "pair": args.pair}
    else:
        step_us, last = timed(torch, step, args.steps, args.variant == "sync")
        out = {"variant": args.variant, "size": args.size, "pair": args.pair, "steps": args.steps,
               "step_us": step_us, "last_loss": last}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
