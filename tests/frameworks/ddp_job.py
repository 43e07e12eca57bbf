#!/usr/bin/env python3
"""A DistributedDataParallel job as users write it (the framework suite, tests/frameworks/): an
MLP with BatchNorm (buffers DDP broadcasts before each forward) wrapped in DDP, AdamW,
gradient clipping with error_if_nonfinite=True, and each step a metric gathered from every rank
with torch.distributed.all_gather_object for the log. It starts its own ranks (no torchrun):
run without RANK in the environment it launches --ranks copies of itself on this machine.

    ddp_job.py [--fix NAME,...] [--ranks N] [--backend gloo|nccl] [--wrap ddp|fsdp|fsdp2]
               [--steps N] [--warmup W] [--size small|gpu]

Backend: gloo, every rank on cuda:0 (NCCL refuses two ranks on one GPU); nccl takes one rank
a GPU (one rank on a one-GPU machine: all_gather_object then gathers on the GPU).
--wrap: the model in DDP (the default), FullyShardedDataParallel (fsdp) or fully_shard (fsdp2),
audited here on nccl only; no-broadcast-buffers is DDP's and is refused with FSDP.

  no-broadcast-buffers  DDP(..., broadcast_buffers=False): no broadcast of BatchNorm's
                        buffers before each forward (each rank keeps its own statistics)
  no-nonfinite-check    clip_grad_norm_(..., error_if_nonfinite=False): the norm is not read
                        on the host to raise on inf/NaN
  gather-tensor         the metric all-reduced as a tensor and read every 10th step, for
                        all_gather_object's pickled size and bytes read on the host

Prints fw_common's JSON line (from the launching process: step_us the slowest rank's), with
"ranks" and "backend". Exit 2 when torch has no CUDA device or a rank failed to start."""
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("no-broadcast-buffers", "no-nonfinite-check", "gather-tensor")
SIZES = {"small": dict(width=256, depth=3, batch=128), "gpu": dict(width=2048, depth=6,
                                                                     batch=512)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a):
    """Start a.ranks copies of this program as ranks; print the slowest rank's JSON line."""
    import json
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               WORLD_SIZE=str(a.ranks))
    procs = [subprocess.Popen([sys.executable] + sys.argv, env=dict(env, RANK=str(r),
                              LOCAL_RANK=str(r)), stdout=subprocess.PIPE, text=True)
             for r in range(a.ranks)]
    outs = [p.communicate()[0] for p in procs]
    rcs = [p.returncode for p in procs]
    if any(rcs):
        return max(rcs)
    lines = [json.loads(o.strip().splitlines()[-1]) for o in outs]
    slow = max(lines, key=lambda x: x["step_us"] or 0.0)
    print(json.dumps(slow), flush=True)
    return 0


def wrap(how, model, dev, fixes, torch):
    """The model as the job trains it: DDP, FSDP (FullyShardedDataParallel) or FSDP2
    (fully_shard on each Linear, then the root)."""
    if how == "fsdp":
        from torch.distributed.fsdp import FullyShardedDataParallel
        return FullyShardedDataParallel(model, device_id=dev)
    if how == "fsdp2":
        from torch.distributed.fsdp import fully_shard
        for m in model:
            if isinstance(m, torch.nn.Linear):
                fully_shard(m)
        return fully_shard(model)
    return torch.nn.parallel.DistributedDataParallel(
        model, broadcast_buffers="no-broadcast-buffers" not in fixes)


def train(a, fixes, torch):
    import torch.distributed as dist
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = torch.device("cuda", rank if a.backend == "nccl" else 0)
    torch.cuda.set_device(dev)
    dist.init_process_group(a.backend, rank=rank, world_size=world)
    s = SIZES[a.size]
    torch.manual_seed(0)
    layers = []
    for _ in range(s["depth"]):
        layers += [torch.nn.Linear(s["width"], s["width"]), torch.nn.BatchNorm1d(s["width"]),
                   torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(s["width"], 10)).to(dev)
    ddp = wrap(a.wrap, model, dev, fixes, torch)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    x = torch.randn(s["batch"], s["width"], device=dev)
    y = torch.randint(0, 10, (s["batch"],), device=dev)
    timer = fw_common.StepTimer(torch, a.warmup, a.steps)
    running = torch.zeros((), device=dev)
    for step in range(1, a.steps + 1):
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0,
                                       error_if_nonfinite="no-nonfinite-check" not in fixes)
        opt.step()
        if "gather-tensor" in fixes:
            running += loss.detach()
            if step % 10 == 0:
                dist.all_reduce(running)
                running.zero_()
        else:
            gathered = [None] * world
            dist.all_gather_object(gathered, loss.detach())  # the metric for the log
        if step == a.warmup:
            dist.barrier()
        timer.step_done(step)
    dist.barrier()
    dist.destroy_process_group()
    return fw_common.emit("ddp_job", fixes, a, timer, ranks=world, backend=a.backend, rank=rank,
                          wrap=a.wrap)


def main():
    ap = fw_common.parser(__doc__, FIXES)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    ap.add_argument("--wrap", choices=("ddp", "fsdp", "fsdp2"), default="ddp",
                    help="the model's wrapper")
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES)
    if a.ranks < 1:
        ap.error("--ranks must be at least 1")
    if a.wrap != "ddp" and "no-broadcast-buffers" in fixes:
        ap.error(f"--fix no-broadcast-buffers is DDP's option: not with --wrap {a.wrap}")
    torch = fw_common.need("torch")
    fw_common.cuda_or_exit(torch)
    if "RANK" not in os.environ:
        if a.backend == "nccl" and torch.cuda.device_count() < a.ranks:
            ap.error(f"--backend nccl needs a GPU per rank ({a.ranks} ranks, "
                     f"{torch.cuda.device_count()} GPUs)")
        return launch(a)
    return train(a, fixes, torch)


if __name__ == "__main__":
    sys.exit(main())
