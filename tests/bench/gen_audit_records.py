#!/usr/bin/env python3
"""Writes a record folder for the replay benchmark: one process recorded with --gpu-activity,
a loop of STEPS steps, each a kernel launch (its API record), its kernel, and a stream sync (its
call record and CUPTI's synchronization record): four records a step, as records.h writes them.
The sync's call site changes every 4 steps, round 8 sites, so the replay plays several sites.
With --hand-offs, the kernel is launched by a second thread that the first hands the step to
and waits for, as PyTorch's autograd engine is (two "wake" records a step: six a step).

    gen_audit_records.py [--hand-offs] STEPS DIR"""
import argparse
import os

US = 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int)
    ap.add_argument("dir")
    ap.add_argument("--hand-offs", action="store_true")
    a = ap.parse_args()
    launcher, waits = (2, 1) if a.hand_offs else (1, 0)
    os.makedirs(a.dir, exist_ok=True)
    with open(os.path.join(a.dir, "proc-100.jsonl"), "w") as f:
        w = f.write
        w('{"t":"proc","v":1,"pid":100,"ppid":1,"rank":-1,"local_rank":-1,"cmd":"bench",'
          f'"clock_ns":0,"mono_ns":1000000,"mode":"count","kernels":1,"launches":1,'
          f'"waits":{waits}}}\n')
        for k in range(8):
            w(f'{{"t":"stack","id":{k},"frames":[["/app","site{k}",{16 * k},0]]}}\n')
        for i in range(a.steps):
            h, c = 40 * i * US, 2 * i + 1
            if a.hand_offs:  # thread 1 hands the step over at h - 1 us, waits until h + 2.5
                w(f'{{"t":"wake","tid":2,"start":{max(h - 20 * US, 0)},"end":{h},"by":1,'
                  f'"at":{max(h - US, 0)},"obj":"cond"}}\n')
                w(f'{{"t":"wake","tid":1,"start":{max(h - US, 0)},"end":{h + 2500},"by":2,'
                  f'"at":{h + 2 * US},"obj":"cond"}}\n')
            w(f'{{"t":"api","api":"cudaLaunchKernel_v7000","dom":"rt","tid":{launcher},'
              f'"corr":{c},"start":{h},"end":{h + 2 * US}}}\n')
            w(f'{{"t":"kernel","dev":0,"ctx":1,"stream":7,"corr":{c},"start":{h + 5 * US},'
              f'"end":{h + 25 * US}}}\n')
            w(f'{{"t":"call","api":"cudaStreamSynchronize_v3020","dom":"rt","tid":1,"ctx":1,'
              f'"corr":{c + 1},"start":{h + 3 * US},"end":{h + 28 * US},"oh":{US},'
              f'"ranges":[],"stack":{(i // 4) % 8}}}\n')
            w(f'{{"t":"sync","type":"stream","ctx":1,"stream":7,"corr":{c + 1},"sync_id":-1,'
              f'"start":{h + 3 * US},"end":{h + 28 * US}}}\n')
        t = 40 * a.steps * US
        w(f'{{"t":"end","clock_ns":{t},"mono_ns":{1000000 + t},"why":"exit","dropped":0}}\n')


if __name__ == "__main__":
    main()
