#!/usr/bin/env python3
"""What processes sharing one GPU cost each other (issue 49: a 2-rank gloo job on one GPU), from
the kept records of an audit with --gpu-activity (`syncbench audit --gpu-activity --keep DIR`).
For each process: how often the GPU turned to it from another process's work, and how long
after that work its own started (the GPU's switch between the processes' contexts); and its
operations that started over --late-us after they could have (their launch call returned, the
previous operation of their stream ended), how many of those waited while another process's
operations ran, and how long after the last of those they started. The replay keeps such a
wait where it was recorded (docs/replay.md: ranks sharing one GPU).

    shared_gpu.py DIR [--late-us 100] [--steps N] [--json]

Prints a line a process (with --steps N, the turns and their time a step too) and writes
nothing; --json prints the figures as one JSON object ({pid: {"ops", "turns_in",
"turn_gap_us_median", "late", "late_behind_other", "switch_us_median", "late_us_per_op"}},
with --steps "turns_per_step" and "turn_us_per_step" too). Exit 2 on bad input (no folder,
fewer than two processes with GPU activity, a threshold or steps not above 0). No GPU."""
import argparse
import bisect
import json
import pathlib
import statistics
import sys

import cost_stats  # beside this file

OPS = ("kernel", "copy", "memset")


def process_ops(path):
    """[(start, end, ready)] of one process's GPU operations in start order, ready: when it could
    have started (its launch call's end, its stream's previous operation's end), ns."""
    calls, ops = {}, []
    for r in filter(None, cost_stats.file_records(path)):
        if r.get("t") in ("api", "call") and "corr" in r:
            calls[r["corr"]] = r["end"]
        elif r.get("t") in OPS:
            ops.append(r)
    ops.sort(key=lambda o: o["start"])
    stream_end, out = {}, []
    for o in ops:
        if o.get("corr") not in calls:
            continue
        ready = max(calls[o["corr"]], stream_end.get(o.get("stream"), 0))
        stream_end[o.get("stream")] = o["end"]
        out.append((o["start"], o["end"], ready))
    return out


def switches_in(mine, others):
    """(count, median gap in us) of the GPU's turns to this process: its operations whose
    previous operation on the GPU (every process's, by start) was another process's; the gap:
    from that one's end to this one's start."""
    merged = sorted([(o[0], o[1], 1) for o in mine] + [(o[0], o[1], 0) for o in others])
    gaps = [b[0] - a[1] for a, b in zip(merged, merged[1:]) if b[2] and not a[2]]
    return len(gaps), statistics.median(gaps) / 1e3 if gaps else None


def figures(mine, others, late_ns):
    """One process's figures against the other processes' operations (start-sorted)."""
    starts = [o[0] for o in others]
    late = behind = 0
    switch, waited = [], 0
    for start, _, ready in mine:
        if start - ready <= late_ns:
            continue
        late += 1
        waited += start - ready
        i, j = bisect.bisect_left(starts, ready), bisect.bisect_right(starts, start)
        if j > i:  # another process's work ran while this operation waited
            behind += 1
            switch.append(start - max(o[1] for o in others[i:j]))
    turns, gap = switches_in(mine, others)
    return {"ops": len(mine), "turns_in": turns, "turn_gap_us_median": gap,
            "late": late, "late_behind_other": behind,
            "switch_us_median": statistics.median(switch) / 1e3 if switch else None,
            "late_us_per_op": waited / late / 1e3 if late else None}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a kept record folder (audit --gpu-activity --keep)")
    ap.add_argument("--late-us", type=float, default=100.0,
                    help="an operation is late past this many us (100)")
    ap.add_argument("--steps", type=int, help="the audited run's steps: figures a step too")
    ap.add_argument("--json", action="store_true", help="the figures as one JSON object")
    a = ap.parse_args(argv)
    folder = pathlib.Path(a.folder)
    if not folder.is_dir():
        ap.error(f"no folder {folder}")
    if a.late_us <= 0 or (a.steps is not None and a.steps <= 0):
        ap.error("--late-us and --steps must be above 0")
    procs = {p.stem.split("-", 1)[1]: process_ops(p) for p in sorted(folder.glob("proc-*.jsonl"))}
    procs = {pid: ops for pid, ops in procs.items() if ops}
    if len(procs) < 2:
        ap.error(f"{folder}: {len(procs)} process(es) with GPU activity; two or more share a GPU")
    out = {}
    for pid, mine in procs.items():
        others = sorted(o for q, ops in procs.items() if q != pid for o in ops)
        out[pid] = figures(mine, others, a.late_us * 1e3)
        if a.steps and out[pid]["turn_gap_us_median"] is not None:
            out[pid]["turns_per_step"] = out[pid]["turns_in"] / a.steps
            out[pid]["turn_us_per_step"] = (out[pid]["turns_per_step"] *
                                            out[pid]["turn_gap_us_median"])
    if a.json:
        print(json.dumps(out))
        return 0
    for pid, f in out.items():
        sw = "-" if f["switch_us_median"] is None else f"{f['switch_us_median']:.1f}"
        gap = "-" if f["turn_gap_us_median"] is None else f"{f['turn_gap_us_median']:.1f}"
        print(f"pid {pid}: {f['ops']} operations; the GPU turned to it from another process "
              f"{f['turns_in']} times, a median {gap} us after that one's work; {f['late']} "
              f"started over {a.late_us:g} us late, {f['late_behind_other']} of them while "
              f"another process's ran, a median {sw} us after that work ended" +
              (f"; {f['turns_per_step']:.1f} turns a step, {f['turn_us_per_step']:.0f} us"
               if "turns_per_step" in f else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
