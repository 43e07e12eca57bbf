#!/usr/bin/env python3
"""Writes a record folder for the replay benchmark: one process recorded with --gpu-activity,
a loop of STEPS steps, each a kernel launch (its API record), its kernel, and a stream sync (its
call record and CUPTI's synchronization record): four records a step, as records.h writes them.
The sync's call site changes every 4 steps, round 8 sites, so the replay plays several sites.
With --hand-offs, the kernel is launched by a second thread that the first hands the step to
and waits for, as PyTorch's autograd engine is (two "wake" records a step: six a step).

The launch records, for what one API record per launch is worth (issue 36): --launches rt (the
default) records the runtime's cudaLaunchKernel, whose id the kernel carries; --launches both
records them as CUPTI does with the driver's launch records on too: inside the runtime's call the
driver's cuLaunchKernel, the kernel carrying the driver's id; --launches drv the same without
the runtime's records (SYNCBENCH_ACTIVITY_OFF=rt-launches). --readback adds .item()'s copy to
each step before the sync: cudaMemcpyAsync's call record, its API records (the driver's
cuMemcpyDtoHAsync_v2 inside it with both or drv) and the 4-byte copy (corr the driver's id,
rcorr the runtime's; with rt, CUPTI gives it the runtime's id and leaves rcorr 0).

    gen_audit_records.py [--hand-offs] [--launches rt|both|drv] [--readback] STEPS DIR"""
import argparse
import os

US = 1000


def step_records(i, a):
    """The lines of step i (its own ids: 10 a step)."""
    h, c = 40 * i * US, 10 * i + 1
    launcher = 2 if a.hand_offs else 1
    out = []
    if a.hand_offs:  # thread 1 hands the step over at h - 1 us, waits until h + 2.5
        out.append(f'{{"t":"wake","tid":2,"start":{max(h - 20 * US, 0)},"end":{h},"by":1,'
                   f'"at":{max(h - US, 0)},"obj":"cond"}}')
        out.append(f'{{"t":"wake","tid":1,"start":{max(h - US, 0)},"end":{h + 2500},"by":2,'
                   f'"at":{h + 2 * US},"obj":"cond"}}')
    rt, drv = a.launches in ("rt", "both"), a.launches in ("both", "drv")
    if rt:
        out.append(f'{{"t":"api","api":"cudaLaunchKernel_v7000","dom":"rt","tid":{launcher},'
                   f'"corr":{c},"start":{h},"end":{h + 2 * US}}}')
    if drv:  # inside the runtime's call
        out.append(f'{{"t":"api","api":"cuLaunchKernel","dom":"drv","tid":{launcher},'
                   f'"corr":{c + 1},"start":{h + 500},"end":{h + 1500}}}')
    k = c + 1 if drv else c
    out.append(f'{{"t":"kernel","dev":0,"ctx":1,"stream":7,"corr":{k},"start":{h + 5 * US},'
               f'"end":{h + 25 * US}}}')
    if a.readback:  # the copy queued behind the kernel at h + 2.6 us
        r = h + 2600
        out.append(f'{{"t":"call","api":"cudaMemcpyAsync_v3020","dom":"rt","tid":1,"ctx":1,'
                   f'"corr":{c + 2},"start":{r},"end":{r + 300},"oh":0,"ranges":[],'
                   f'"stack":-1,"copy":"DtoH","host":"pinned"}}')
        if rt:
            out.append(f'{{"t":"api","api":"cudaMemcpyAsync_v3020","dom":"rt","tid":1,'
                       f'"corr":{c + 2},"start":{r},"end":{r + 300}}}')
        if drv:
            out.append(f'{{"t":"api","api":"cuMemcpyDtoHAsync_v2","dom":"drv","tid":1,'
                       f'"corr":{c + 3},"start":{r + 100},"end":{r + 250}}}')
        corr, rcorr = (c + 3, c + 2) if drv else (c + 2, 0)
        out.append(f'{{"t":"copy","dev":0,"ctx":1,"stream":7,"corr":{corr},"rcorr":{rcorr},'
                   f'"start":{h + 26 * US},"end":{h + 27 * US},"bytes":4,"kind":"DtoH",'
                   f'"src":"device","dst":"pinned"}}')
    out.append(f'{{"t":"call","api":"cudaStreamSynchronize_v3020","dom":"rt","tid":1,"ctx":1,'
               f'"corr":{c + 4},"start":{h + 3 * US},"end":{h + 28 * US},"oh":{US},'
               f'"ranges":[],"stack":{(i // 4) % 8}}}')
    out.append(f'{{"t":"sync","type":"stream","ctx":1,"stream":7,"corr":{c + 4},"sync_id":-1,'
               f'"start":{h + 3 * US},"end":{h + 28 * US}}}')
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int)
    ap.add_argument("dir")
    ap.add_argument("--hand-offs", action="store_true")
    ap.add_argument("--launches", choices=("rt", "both", "drv"), default="rt")
    ap.add_argument("--readback", action="store_true")
    a = ap.parse_args()
    waits = 1 if a.hand_offs else 0
    os.makedirs(a.dir, exist_ok=True)
    with open(os.path.join(a.dir, "proc-100.jsonl"), "w") as f:
        w = f.write
        w('{"t":"proc","v":1,"pid":100,"ppid":1,"rank":-1,"local_rank":-1,"cmd":"bench",'
          f'"clock_ns":0,"mono_ns":1000000,"mode":"count","kernels":1,"launches":1,'
          f'"waits":{waits}}}\n')
        for k in range(8):
            w(f'{{"t":"stack","id":{k},"frames":[["/app","site{k}",{16 * k},0]]}}\n')
        for i in range(a.steps):
            w("\n".join(step_records(i, a)) + "\n")
        t = 40 * a.steps * US
        w(f'{{"t":"end","clock_ns":{t},"mono_ns":{1000000 + t},"why":"exit","dropped":0}}\n')


if __name__ == "__main__":
    main()
