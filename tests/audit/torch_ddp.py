#!/usr/bin/env python3
"""A DistributedDataParallel training job for the replay's check on a DDP job
(tests/gpu/test_replay.py):

    torchrun --standalone --nproc_per_node=2 torch_ddp.py --mode item|drop [--steps N]

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

Each rank prints, last on its stdout, one JSON object: {"rank":R,"world":W,"backend":B,
"mode":M,"steps":N,"loop_us":T}, T the loop's wall time from after the warm-up's barrier and
sync to the end of the GPU's work. Exit 2 on bad usage or outside torchrun, 3 when torch has no
CUDA.
"""
import argparse
import json
import os
import sys
import time

import mlp  # beside this file
import torchrun_worker  # beside this file

WIDTH, BATCH = 128, 256


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("item", "drop"), required=True)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--backend", choices=("nccl", "gloo"))
    args = ap.parse_args()
    if args.steps < 1:
        print("torch_ddp.py: --steps must be at least 1", file=sys.stderr)
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
    torch.cuda.synchronize()
    dist.barrier()

    running = 0.0
    t0 = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
        if args.mode == "item":
            running += loss.item()  # SYNC-LINE
    torch.cuda.synchronize()
    loop_us = (time.perf_counter() - t0) * 1e6
    dist.barrier()
    dist.destroy_process_group()
    line = json.dumps({"rank": rank, "world": world, "backend": backend, "mode": args.mode,
                       "steps": args.steps, "loop_us": loop_us})
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())  # one write: the ranks share the launcher's stdout
    return 0


if __name__ == "__main__":
    sys.exit(main())
