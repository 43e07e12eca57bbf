#!/usr/bin/env python3
"""An audited run's step from its kept records (issue 49), where the program's own figure was
not kept (a replay suite's rows before audit_slowdown_pct): per process, the time from the
line's 31st blocking call to its 5th-last over the calls between (of the API called there most),
taken as one a step (the warm-up and the end left out). A job's step is its slowest rank's.

    recorded_step.py DIR FILE.py:LINE [--json]

Prints a line a process holding the line, then the step; --json prints {"processes": {pid:
us}, "step_us": us}. Exit 2 on bad input (no folder, no FILE:LINE, no process with 40 calls at
the line). No GPU."""
import argparse
import json
import pathlib
import sys

import cost_stats  # beside this file

SKIP_FIRST, SKIP_LAST = 30, 5


def line_calls(path, file, line):
    """The end times (ns, in order) of one process's blocking calls made at FILE:LINE (a frame
    of their Python stack: the file by its name), of the API it called there most (a `.item()`
    into pageable memory is a copy and a sync: one a step)."""
    stacks, ends = set(), {}
    for r in filter(None, cost_stats.file_records(path)):
        if r.get("t") == "pystack" and any(pathlib.Path(fr[0]).name == file and fr[2] == line
                                           for fr in r.get("frames") or []):
            stacks.add(r["id"])
        elif r.get("t") == "call" and r.get("py") in stacks:
            ends.setdefault(r.get("api"), []).append(r["end"])
    return sorted(max(ends.values(), key=len)) if ends else []


def step_us(ends):
    """The us a step between the kept calls, or None with too few."""
    if len(ends) < SKIP_FIRST + SKIP_LAST + 5:
        return None
    a, b = ends[SKIP_FIRST], ends[-SKIP_LAST]
    return (b - a) / (len(ends) - SKIP_FIRST - SKIP_LAST) / 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="a kept record folder (syncbench audit --keep)")
    ap.add_argument("site", help="the line: FILE.py:LINE")
    ap.add_argument("--json", action="store_true", help="the figures as one JSON object")
    a = ap.parse_args(argv)
    folder = pathlib.Path(a.folder)
    file, _, line = a.site.rpartition(":")
    if not folder.is_dir():
        ap.error(f"no folder {folder}")
    if not file.endswith(".py") or not line.isdigit():
        ap.error(f"not FILE.py:LINE: {a.site}")
    steps = {p.stem.split("-", 1)[1]: step_us(line_calls(p, pathlib.Path(file).name, int(line)))
             for p in sorted(folder.glob("proc-*.jsonl"))}
    steps = {pid: s for pid, s in steps.items() if s is not None}
    if not steps:
        ap.error(f"{folder}: no process made {SKIP_FIRST + SKIP_LAST + 5} blocking calls at "
                 f"{a.site}")
    out = {"processes": steps, "step_us": max(steps.values())}
    if a.json:
        print(json.dumps(out))
        return 0
    for pid, s in steps.items():
        print(f"pid {pid}: {s:.1f} us a step")
    print(f"step: {out['step_us']:.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
