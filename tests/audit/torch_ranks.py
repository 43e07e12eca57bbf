#!/usr/bin/env python3
"""A torch.distributed job with a straggler, for `syncbench audit`'s view across ranks
(tests/gpu/test_audit_ranks.py):

    torchrun --standalone --nproc_per_node=2 torch_ranks.py [--straggler-us 2000] [--steps 50]

Backend: nccl with one GPU per rank when there are as many GPUs as ranks, else gloo with every
rank on cuda:0 (NCCL refuses two ranks on one GPU); --backend picks one.

Two warm-up steps outside any range (cuBLAS, the communicator, pinned buffers), then --steps
steps, each inside torch.cuda.nvtx.range("train_step"): a 512x512 matmul and its mean (the
loss). The straggler, the last rank, then spins its GPU for --straggler-us
(torch.cuda._sleep, calibrated at the start) and waits for it by polling an event
(cudaEventQuery: a poll, never a blocking call), so that it reaches the collective late, as a
rank whose extra work keeps its host busy; then the ranks meet:

  nccl  all_reduce(loss), then loss.item(): each other rank's .item() waits for its NCCL
        kernel, which waits for the straggler.
  gloo  gloo waits for a late peer on the CPU, inside gloo's own threads, in no CUDA call: the
        audit cannot see that wait. So the ranks first meet on the GPU, as NCCL's would: each
        other rank's stream waits, in a host function (cuLaunchHostFunc running libc's
        sem_wait), until the straggler posts a named semaphore when it arrives; then
        loss.item() (the others block there for the straggler) and all_reduce(loss) over gloo.

The straggler prints, last on stdout, one JSON object: {"backend":B,"world":W,"steps":N,
"straggler":R,"straggler_us":S,"extra_us":E}, E the median of its host time per step in the
spin and the polling (what it arrived late by). Exit 2 on bad usage or outside torchrun, 3
when torch has no CUDA.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torchrun_worker  # beside this file


def cycles_per_us(torch):
    """The GPU's torch.cuda._sleep cycles per microsecond, timed with events once the clocks
    are up (a spin of about 50 ms first: a GPU coming out of idle runs slower for a while)."""
    torch.cuda._sleep(100_000_000)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    cycles = 20_000_000
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    end.synchronize()
    return cycles / (start.elapsed_time(end) * 1e3)


def arrive_late(torch, cycles):
    """The straggler's extra work: its GPU spins, its host polls until the GPU is done."""
    torch.cuda._sleep(cycles)
    done = torch.cuda.Event()
    done.record()
    while not done.query():
        time.sleep(50e-6)


class GpuMeeting:
    """gloo's stand-in for NCCL's wait on the GPU: the others' streams wait, in a host function,
    for the straggler's post of a named semaphore (one per job: the launcher's pid)."""

    def __init__(self, torch, dist, straggler):
        self.torch, self.straggler = torch, straggler
        self.others = dist.get_world_size() - 1
        libc = ctypes.CDLL(None, use_errno=True)
        if not hasattr(libc, "sem_open"):  # glibc before 2.34: in libpthread
            libc = ctypes.CDLL("libpthread.so.0", use_errno=True)
        libc.sem_open.restype = ctypes.c_void_p
        libc.sem_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
        libc.sem_post.argtypes = [ctypes.c_void_p]
        libc.sem_close.argtypes = [ctypes.c_void_p]
        libc.sem_unlink.argtypes = [ctypes.c_char_p]
        self.libc = libc
        self.name = f"/syncbench-ranks-{os.getppid()}".encode()
        if straggler:
            libc.sem_unlink(self.name)  # a stale one of an earlier job with this pid
            self.sem = libc.sem_open(self.name, os.O_CREAT | os.O_EXCL, 0o600, 0)
        dist.barrier()  # created before the others open it
        if not straggler:
            self.sem = libc.sem_open(self.name, 0, 0, 0)
        if not self.sem or self.sem == ctypes.c_void_p(-1).value:  # SEM_FAILED
            raise OSError(ctypes.get_errno(), f"sem_open {self.name.decode()}")
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.cuda.cuLaunchHostFunc.argtypes = [ctypes.c_void_p] * 3
        self.cuda.cuLaunchHostFunc.restype = ctypes.c_int
        self.sem_wait = ctypes.cast(libc.sem_wait, ctypes.c_void_p).value

    def meet(self):
        if self.straggler:
            for _ in range(self.others):
                self.libc.sem_post(self.sem)
            return
        stream = self.torch.cuda.current_stream().cuda_stream
        rc = self.cuda.cuLaunchHostFunc(stream, self.sem_wait, self.sem)
        if rc != 0:
            raise RuntimeError(f"cuLaunchHostFunc: CUresult {rc}")

    def close(self, dist):
        dist.barrier()
        self.libc.sem_close(self.sem)
        if self.straggler:
            self.libc.sem_unlink(self.name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--straggler-us", type=float, default=2000)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    args = ap.parse_args()
    if args.steps < 1 or args.straggler_us < 0:
        ap.error("--steps must be at least 1 and --straggler-us at least 0")
    torch, rank, world, backend, dev = torchrun_worker.join("torch_ranks.py", args.backend)
    import torch.distributed as dist
    dist.init_process_group(backend=backend)
    straggler = rank == world - 1
    cycles = int(args.straggler_us * cycles_per_us(torch)) if straggler else 0
    meeting = GpuMeeting(torch, dist, straggler) if backend == "gloo" else None

    torch.manual_seed(rank)
    a = torch.randn(512, 512, device=dev)
    b = torch.randn(512, 512, device=dev) / 32
    extra = []

    def step():
        loss = (a @ b).mean()
        if straggler:
            t0 = time.perf_counter()
            arrive_late(torch, cycles)
            extra.append((time.perf_counter() - t0) * 1e6)
        if meeting:  # meet on the GPU, then read, then reduce
            meeting.meet()
            value = loss.item()
            dist.all_reduce(loss)
        else:  # NCCL: reduce, then read (the read waits for the collective)
            dist.all_reduce(loss)
            value = loss.item()
        return value

    for _ in range(2):  # warm-up, outside any range
        step()
    torch.cuda.synchronize()
    extra.clear()
    for _ in range(args.steps):
        with torch.cuda.nvtx.range("train_step"):
            step()
    torch.cuda.synchronize()
    if meeting:
        meeting.close(dist)
    dist.barrier()
    dist.destroy_process_group()
    if straggler:
        print(json.dumps({"backend": backend, "world": world, "steps": args.steps,
                          "straggler": rank, "straggler_us": args.straggler_us,
                          "extra_us": statistics.median(extra) if extra else 0}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
