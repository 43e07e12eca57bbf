"""What torch_ranks.py and torch_ddp.py do first as torchrun workers: this worker's rank, the
backend and its GPU.

Backend: nccl with one GPU per rank when there are as many GPUs as ranks, else gloo with every
rank on cuda:0 (NCCL refuses two ranks on one GPU); asked for by name, nccl without a GPU per
rank is refused. Bad usage ends the program with one line on stderr naming PROG: exit 2 outside
torchrun or for nccl without a GPU per rank, 3 when torch has no CUDA."""
import os
import sys


def fail(prog, message, code):
    print(f"{prog}: {message}", file=sys.stderr)
    raise SystemExit(code)


def join(prog, backend=None):
    """(torch, rank, world, backend, device) of this worker, the device made current; BACKEND
    None or "auto" picks one. The process group is the caller's to create."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        fail(prog, "run it under torchrun (RANK and WORLD_SIZE unset)", 2)
    import torch
    if not torch.cuda.is_available():
        fail(prog, "torch has no CUDA device", 3)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    gpus = torch.cuda.device_count()
    if backend in (None, "auto"):
        backend = "nccl" if gpus >= world else "gloo"
    if backend == "nccl" and gpus < world:
        fail(prog, f"--backend nccl needs a GPU per rank ({world} ranks, {gpus} GPUs)", 2)
    dev = torch.device("cuda", local if backend == "nccl" else 0)
    torch.cuda.set_device(dev)
    return torch, rank, world, backend, dev
