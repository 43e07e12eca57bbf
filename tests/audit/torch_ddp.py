#!/usr/bin/env python3
"""A DistributedDataParallel training job for the replay's check on a DDP job
(tests/gpu/test_replay.py) and the replay's suite (tests/gpu/replay_suite.py):

    torchrun --standalone --nproc_per_node=2 torch_ddp.py --mode item|drop [--steps N]
    torchrun ... torch_ddp.py --mode alternate [--steps N] [--blocks B] [--first item|drop]

Backend: nccl with one GPU per rank when there are as many GPUs as ranks, else gloo with every
rank on cuda:0 (NCCL refuses two ranks on one GPU); --backend picks one (torchrun_worker.py).

The job has what made the old "could save" of a DDP job mostly start-up: the process group's
set-up, DDP's broadcast of the parameters from rank 0, three warm-up steps and a barrier, all
before the timed loop. Then --steps steps (default 1000) of a 3-layer MLP (128 wide, batch 256,
fp32: a small all-reduce, so that the step is not all gloo's copies and TCP) with DDP's gradient
all-reduce and SGD, then
  item  running_loss += loss.item() each step (the logging line, marked `# SYNC-LINE`: a copy
        and a host sync)
  drop  the loss not logged: the item line removed, what the replay predicts for removing it
  alternate  B blocks (default 8) of N steps each, alternating item and drop, FIRST first
        (alternate.py: after an untimed drop block), the same sequence on every rank: the
        ranks meet in every step's all-reduce, so they must switch in lockstep

Each rank prints, last on its stdout, one JSON object: {"rank":R,"world":W,"backend":B,
"mode":M,"steps":N,"loop_us":T}, T the loop's wall time from after the warm-up's barrier and
sync to the end of the GPU's work. With alternate, each block is timed so (a barrier before
it), N is a block's steps, T the blocks' sum, and alternate.py's fields follow: "first" and
the blocks' "variant" say sync for item and fixed for drop, step_us is this rank's per step (a
job's block takes its slower rank's). Exit 2 on bad usage or outside torchrun, 3 when torch
has no CUDA.
"""
import argparse
import json
import os
import sys
import time

import alternate  # beside this file
import mlp  # beside this file
import torchrun_worker  # beside this file

WIDTH, BATCH = 128, 256
VARIANT_OF = {"item": "sync", "drop": "fixed"}  # --first's names in alternate.py's


def timed(torch, dist, step, steps, item):
    """This rank's wall us of STEPS steps, from after a barrier (the ranks start together) to
    the end of the GPU's work; the loss logged each step (ITEM) or not."""
    torch.cuda.synchronize()
    dist.barrier()
    running = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step()
        if item:
            running += loss.item()  # SYNC-LINE
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("item", "drop", "alternate"), required=True)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--backend", choices=("nccl", "gloo"))
    alternate.add_arguments(ap, first=tuple(VARIANT_OF))
    args = ap.parse_args()
    if args.steps < 1 or args.blocks < 2:
        print("torch_ddp.py: --steps must be at least 1, --blocks 2", file=sys.stderr)
        return 2
    torch, rank, world, backend, dev = torchrun_worker.join("torch_ddp.py", args.backend)
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    # device_id (torch 2.3 and later) sets NCCL's communicator up at once, before the model
    dist.init_process_group(backend, **({"device_id": dev} if backend == "nccl" else {}))

    torch.manual_seed(rank)
    model = mlp.mlp(torch, WIDTH, 1, dev)
    ddp = DDP(model, device_ids=[dev.index])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, device=dev)
    y = torch.randn(BATCH, 1, device=dev)
    step = mlp.stepper(ddp, opt, torch.nn.functional.mse_loss, x, y)

    for _ in range(3):  # warm-up: cuBLAS, the reducer's buckets, the optimizer's state
        step()
    out = {"rank": rank, "world": world, "backend": backend, "mode": args.mode,
           "steps": args.steps}
    if args.mode == "alternate":
        first = VARIANT_OF[args.first]
        blocks = alternate.run(first, args.blocks, lambda sync: timed(
            torch, dist, step, args.steps, sync) / args.steps)
        out["loop_us"] = sum(b["step_us"] for b in blocks) * args.steps
        out.update({k: v for k, v in alternate.summary(first, args.steps, blocks).items()
                    if k not in ("variant", "steps")})
    else:
        out["loop_us"] = timed(torch, dist, step, args.steps, args.mode == "item")
    dist.barrier()
    dist.destroy_process_group()
    sys.stdout.flush()
    # one write: the ranks share the launcher's stdout (a line of 8 blocks is under PIPE_BUF)
    os.write(1, (json.dumps(out) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
