#!/usr/bin/env python3
"""`make validate`: the accuracy and cost figures, each measured on this machine's GPU and held
against its target, in one table (Markdown, aligned: | check | measured | target | result |).
`make test` checks correctness only; a figure that a slow or busy host can move belongs here.

    validate.py [--list] [--only PATTERN[,PATTERN...]] [--full] [--rounds N] [--keep DIR]
                [--json FILE]

The checks (tests/validate/*_checks.py; --list names them all):
  scenarios  the figures the scenarios promise (a sync costs small-gemm >= 2 us/iter, big-gemm
             < 10 %; readbacks wait for pending work; pinned beats pageable at 64 MiB; double
             buffering < 0.8 x serial; each fix saves), and big-gemm against torch.mm (the floor)
  audit      how long recorded syncs blocked, the bubble, the straggler's wait across ranks,
             what recording costs (tests/gpu/audit_overhead.sh, tests/gpu/audit_pycost.py)
  python     what a no_syncs() block costs
  replay     the replay's predicted savings against measured ones (tests/gpu/test_replay.py)
  gate       compare on real runs: back-to-back ci.ini runs clean, slowdowns a REGRESSION
  multi-gpu  collective and cross-device (2 or more GPUs)
  floor      the harness against a plain floor: each primitive the scenarios time, timed by
             build/syncbench-floor plainly and as the scenario, beside syncbench, in pairs
             (SYNCBENCH_FLOOR_PAIRS, 8); as the scenario <= 1.10 x (tests/validate/floor_checks.py)
  sanitizer  compute-sanitizer's GEMM racecheck and synccheck (--full)
  frameworks each option the framework table claims, on the GPU (tests/frameworks/): the
             claimed library line's calls audited before and after, the predicted saving a step
             against the measured one (tests/validate/frameworks_checks.py; about 8 minutes)

--only: the checks of the groups named, or whose name contains the pattern (case-insensitive;
long ones included: `--only train-gpu` runs that entry of the replay's suite);
--full: the long checks too (the replay across processes, of the scenarios the model does not
cover, of the PyTorch loop and a DDP job, the suite of real programs; the GEMM sanitizer
runs); --rounds: the replay's processes per figure (SYNCBENCH_REPLAY_ROUNDS, 3; the suite's
entries: their own, 5 or 3); --keep DIR: every measurement's files (and the replay's table and
records under DIR/replay); --json FILE: the rows.

Each row's result:
  PASS   a held figure within its target
  MISS   a held figure outside its target
  NOTE   a reported figure, never a failure: an open issue's target (shown as within or
         outside), or a figure the model does not claim (a held check whose ok is None: the
         replay flagged its figure as not modelled)
  SKIP   the check does not apply to this machine (the multi-GPU checks with one GPU)
  ERROR  the check could not run (a run failed; torch, compute-sanitizer or a build missing)
Progress goes to stderr, the table and a last line of counts to stdout. Exit 1 when a row is MISS
or ERROR (or the run was interrupted: the rows so far are printed), 0 otherwise. On a machine
with no NVIDIA GPU at all nothing can be validated: one line says so and the exit is 0 (a CPU
machine running make validate has not failed; CI on one must not read it as a pass of the
figures). Environment: SYNCBENCH (the binary), SYNCBENCH_FLOOR (the floor; default: beside the
binary), SYNCBENCH_TEST_PROGRAMS, SYNCBENCH_AUDIT_LIB, TORCH_PYTHON, as for the tests."""
import argparse
import importlib
import json
import os
import pathlib
import shutil
import signal
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

MODULES = ["scenario_checks", "audit_checks", "python_checks", "replay_checks", "gate_checks",
           "multi_gpu_checks", "sanitizer_checks", "floor_checks", "frameworks_checks"]
RESULTS = ("PASS", "MISS", "NOTE", "SKIP", "ERROR")
NO_GPU = "validate: no NVIDIA GPU on this machine (nvidia-smi -L): nothing was validated"


def load():
    import registry
    for name in MODULES:
        importlib.import_module(name)
    return registry


def selected(checks, only, full):
    """The checks to run: a pattern that names a group selects that group (its long checks with
    --full only), any other the checks whose name contains it (case-insensitive), long ones
    included: a check named is a check asked for."""
    pats = [p.strip().lower() for p in (only or "").split(",") if p.strip()]
    groups = {c.group for c in checks}

    def by_group(c):
        return c.group in pats and (full or not c.full)

    def by_name(c):
        return any(p not in groups and p in c.name.lower() for p in pats)
    if not pats:
        return [c for c in checks if full or not c.full]
    return [c for c in checks if by_group(c) or by_name(c)]


def run_one(registry, c):
    """(measured, result) of one check."""
    try:
        measured, ok = c.func()
    except registry.Skip as e:
        return str(e), "SKIP"
    except Exception as e:  # noqa: BLE001 (the check could not run: a row, not a crash)
        traceback.print_exc(file=sys.stderr)
        text = " ".join(str(e).split()) or type(e).__name__
        return f"{type(e).__name__}: {text}"[:240], "ERROR"
    if ok is None:  # a reported figure with no target, or a held one its model disclaims
        return measured, "NOTE"
    if c.held:
        return measured, "PASS" if ok else "MISS"
    return measured, f"NOTE: {'within' if ok else 'outside'}"


def cell(text):
    return " ".join(str(text).split()).replace("|", "/")


def table(rows):
    head = ("check", "measured", "target", "result")
    body = [tuple(cell(r[k]) for k in ("check", "measured", "target", "result")) for r in rows]
    width = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
    line = lambda xs: "| " + " | ".join(x.ljust(w) for x, w in zip(xs, width)) + " |"  # noqa
    return "\n".join([line(head), line(["-" * w for w in width])] + [line(b) for b in body])


def counts(rows):
    n = {k: 0 for k in RESULTS}
    for r in rows:
        n[r["result"].split(":")[0]] += 1
    return n


def exit_code(rows, interrupted=False):
    """1 when a row is MISS or ERROR or the run was cut short, else 0 (NOTE and SKIP never
    fail)."""
    n = counts(rows)
    return 1 if n["MISS"] or n["ERROR"] or interrupted else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="name every check and exit")
    ap.add_argument("--only", help="the checks whose group or name contains one of these")
    ap.add_argument("--full", action="store_true", help="the long checks too")
    ap.add_argument("--rounds", type=int, help="the replay's processes per figure (3)")
    ap.add_argument("--keep", help="keep every measurement's files in this folder")
    ap.add_argument("--json", help="write the rows to this file")
    a = ap.parse_args()
    if a.rounds:
        os.environ["SYNCBENCH_REPLAY_ROUNDS"] = str(a.rounds)
    if a.keep:
        keep = pathlib.Path(a.keep).resolve()
        keep.mkdir(parents=True, exist_ok=True)
        os.environ["SYNCBENCH_VALIDATE_KEEP"] = str(keep)
        os.environ["SYNCBENCH_REPLAY_OUT"] = str(keep / "replay")
    registry = load()
    checks = selected(registry.CHECKS, a.only, a.full)
    if a.list:
        for c in checks:
            kind = ("held" if c.held else "reported") + (", --full" if c.full else "")
            print(f"{c.group}: {c.name} [target: {c.target}; {kind}]")
        return 0
    if not checks:
        print(f"validate: no check matches --only {a.only!r} (see --list)", file=sys.stderr)
        return 2
    from conftest import BIN, gpu_available
    if not gpu_available():
        print(NO_GPU)
        return 0
    if not os.access(BIN, os.X_OK):
        print(f"validate: {BIN} not built; run make first", file=sys.stderr)
        return 2

    def stop(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    rows, t0, interrupted = [], time.monotonic(), False
    try:
        for i, c in enumerate(checks, 1):
            t = time.monotonic()
            print(f"validate: [{i}/{len(checks)}] {c.group}: {c.name}", file=sys.stderr,
                  flush=True)
            measured, result = run_one(registry, c)
            rows.append({"group": c.group, "check": c.name, "measured": measured,
                         "target": c.target, "result": result, "held": c.held,
                         "seconds": round(time.monotonic() - t, 1)})
            print(f"validate:   {result}: {measured} ({time.monotonic() - t:.1f} s)",
                  file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        interrupted = True
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")
    if not a.keep and registry._work is not None:
        shutil.rmtree(registry._work, ignore_errors=True)
    print(table(rows))
    n = counts(rows)
    tail = f"; interrupted after {len(rows)} of {len(checks)} checks" if interrupted else ""
    print(f"validate: {n['PASS']} PASS, {n['MISS']} MISS, {n['NOTE']} NOTE, {n['SKIP']} SKIP, "
          f"{n['ERROR']} ERROR in {time.monotonic() - t0:.0f} s{tail}", flush=True)
    return exit_code(rows, interrupted)


if __name__ == "__main__":
    sys.exit(main())
