"""What the framework suite's programs share (tests/frameworks/: real client code of Hugging
Face's Trainer and generate(), Lightning and torch.amp, each with the options the framework
table names as switches, docs/frameworks.md): the --fix list, the steady-state step timer and
the one JSON line each prints last.

    --fix NAME[,NAME...]   the table's options to apply (each program lists its own)
    --steps N --warmup W   optimizer steps (tokens for generate) and the first W left untimed
    --size small|gpu       host-bound and GPU-bound sizes of the same program

The line: {"program", "fix": [...], "size", "steps": timed steps, "step_us": wall us per timed
step, the GPU drained at both ends}. Exit 2 when torch has no CUDA device or the framework is
missing, with one line on stderr."""
import argparse
import json
import sys
import time


def parser(doc, fixes):
    """The argparse parser of a suite program whose --fix takes the names in FIXES."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--fix", default="", help="comma-separated, of: " + ", ".join(fixes))
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--size", choices=("small", "gpu"), default="small")
    return ap


def fixes_of(ap, a, fixes):
    """The --fix names as a set; a name not in FIXES is a usage error (exit 2)."""
    got = {f for f in a.fix.split(",") if f}
    bad = sorted(got - set(fixes))
    if bad:
        ap.error(f"unknown --fix {bad[0]!r} (one of: {', '.join(fixes)})")
    if a.steps <= a.warmup or a.warmup < 1:
        ap.error("--steps must be above --warmup, and --warmup at least 1")
    return got


def need(module):
    """Import MODULE or exit 2 with one line: the suite skips a program that cannot run."""
    try:
        return __import__(module)
    except ImportError as e:
        print(f"error: {module} is not installed: {e}", file=sys.stderr)
        sys.exit(2)


def cuda_or_exit(torch):
    if not torch.cuda.is_available():
        print("error: torch sees no CUDA device", file=sys.stderr)
        sys.exit(2)


class StepTimer:
    """Wall time from the end of step WARMUP to the end of the last step, the GPU drained at both
    ends (the drains are outside the steps they bound)."""

    def __init__(self, torch, warmup, steps):
        self.torch, self.warmup, self.steps = torch, warmup, steps
        self.t0 = self.t1 = None

    def step_done(self, step):
        """Call after each step; STEP counts from 1."""
        if step == self.warmup:
            self.torch.cuda.synchronize()
            self.t0 = time.perf_counter()
        elif step == self.steps:
            self.torch.cuda.synchronize()
            self.t1 = time.perf_counter()

    def step_us(self):
        if self.t0 is None or self.t1 is None:
            return None
        return (self.t1 - self.t0) * 1e6 / (self.steps - self.warmup)


def emit(program, fixes, a, timer, **more):
    line = {"program": program, "fix": sorted(fixes), "size": a.size,
            "steps": a.steps - a.warmup, "step_us": timer.step_us()}
    line.update(more)
    print(json.dumps(line), flush=True)
    return 0 if line["step_us"] is not None else 1
