"""What the framework suite's programs share (tests/frameworks/: real client code of Hugging
Face's Trainer and generate(), Lightning and torch.amp, each with the options the framework
table names as switches, docs/frameworks.md): the --fix list, the steady-state step timer, the
in-process alternation and the one JSON line each prints last.

    --fix NAME[,NAME...]   the table's options to apply (each program lists its own)
    --steps N --warmup W   optimizer steps (tokens for generate) and the first W left untimed
    --size small|gpu       host-bound and GPU-bound sizes of the same program
    --alternate FIX --blocks B [--first sync|fixed]
                           (programs with options that switch in place: TOGGLES) after the W
                           warm-up steps, B timed blocks of N steps each, FIX off ("sync") and
                           on ("fixed") in turn, FIRST's first; the program switches FIX in place
                           between blocks, so that the saving is a difference within one process

The line: {"program", "fix": [...], "size", "steps": timed steps, "step_us": wall us per timed
step, the GPU drained at both ends}; with --alternate: {"program", "fix", "size", "alternate":
FIX, "warmup", and tests/audit/alternate.py's summary: "first", "steps" (a block's), "blocks":
[{"variant", "step_us"}, ...], "sync_us", "fixed_us", "saving_us"; "step_us_saving": the same
saving_us, the median over the pairs of blocks of sync - fixed per step}. Exit 2 when torch has
no CUDA device or the framework is missing, with one line on stderr.

Why in one process: on a cloud VM the host's speed moves between processes by 10 to 20 % (on the
H200, amp_loop --size gpu took 9.3 to 13.7 ms a step in plain processes of the same variant), far
more than a saving of a few hundred us, but holds steady within one. The warm-up switches FIX
at every step, so that both variants' first calls (kernels loaded, allocator blocks grown) are
behind the first timed block. No torch is imported here."""
import argparse
import importlib.util
import json
import pathlib
import sys
import time


def _alternate():
    """tests/audit/alternate.py, the replay suite's alternating mode, loaded by its path: putting
    tests/audit/ on sys.path would let its programs (hf_generate.py, ...) shadow ours."""
    path = pathlib.Path(__file__).resolve().parents[1] / "audit" / "alternate.py"
    spec = importlib.util.spec_from_file_location("alternate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


alternate = _alternate()
SYNC, FIXED = alternate.VARIANTS  # FIX off (the syncing variant), FIX on


def parser(doc, fixes, toggles=()):
    """The argparse parser of a suite program whose --fix takes the names in FIXES and whose
    --alternate (when TOGGLES names any) takes those that switch in place."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--fix", default="", help="comma-separated, of: " + ", ".join(fixes))
    ap.add_argument("--steps", type=int, default=60,
                    help="steps (60)" + ("; with --alternate: a block's steps" if toggles else ""))
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--size", choices=("small", "gpu"), default="small")
    if toggles:
        ap.add_argument("--alternate", metavar="FIX", choices=toggles,
                        help="switch FIX in place between timed blocks, of: " +
                             ", ".join(toggles))
        alternate.add_arguments(ap)
    return ap


def fixes_of(ap, a, fixes, period=1):
    """The --fix names as a set; a name not in FIXES is a usage error (exit 2), and so are steps
    that do not fit: with --alternate, a block's steps not a multiple of PERIOD (the steps after
    which the program's per-step work repeats: an epoch, a logging interval), so that every block
    holds the same work, or an odd --blocks (a block of each variant a pair)."""
    got = {f for f in a.fix.split(",") if f}
    bad = sorted(got - set(fixes))
    if bad:
        ap.error(f"unknown --fix {bad[0]!r} (one of: {', '.join(fixes)})")
    if a.warmup < 1:
        ap.error("--warmup must be at least 1")
    if not getattr(a, "alternate", None):
        if a.steps <= a.warmup:
            ap.error("--steps must be above --warmup")
        return got
    if a.alternate in got:
        ap.error(f"--alternate {a.alternate} switches it: leave it out of --fix")
    if a.steps < 1 or a.steps % period:
        ap.error(f"--steps (a block's, with --alternate) must be a positive multiple of {period}")
    alternate.check_blocks(ap, a.blocks)
    if a.blocks % 2:
        ap.error("--blocks must be even (pairs of a block with FIX off and one with it on)")
    return got


def total_steps(a):
    """The steps the program runs: --steps, or with --alternate the warm-up and every block."""
    return a.warmup + a.steps * a.blocks if getattr(a, "alternate", None) else a.steps


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


class Blocks:
    """The alternating timer: after each warm-up step FIX goes on after odd steps and off after
    even ones; at the end of step WARMUP and of each block of STEPS steps the GPU is drained
    (SYNCHRONIZE), the block's wall time taken (CLOCK, seconds), and FIX set (SET_FIX(on)) for
    the next block, ORDER's variants ("sync": off, "fixed": on) in turn. The switch is made
    before the next block's clock starts, the GPU idle at each block's start."""

    def __init__(self, synchronize, warmup, steps, order, set_fix, clock=time.perf_counter):
        self.synchronize, self.clock, self.set_fix = synchronize, clock, set_fix
        self.warmup, self.steps, self.order = warmup, steps, list(order)
        self.blocks = []
        self.t0 = None

    @property
    def total(self):
        return self.warmup + self.steps * len(self.order)

    def step_done(self, step):
        """Call after each step; STEP counts from 1."""
        if step < self.warmup:
            self.set_fix(step % 2 == 1)
            return
        if step > self.total or (step - self.warmup) % self.steps:
            return
        self.synchronize()
        k = (step - self.warmup) // self.steps  # the blocks done
        if k:
            us = (self.clock() - self.t0) * 1e6 / self.steps
            self.blocks.append({"variant": self.order[k - 1], "step_us": us})
        if k < len(self.order):
            self.set_fix(self.order[k] == FIXED)
            self.t0 = self.clock()


def blocks_of(torch, a, set_fix):
    """The Blocks of --alternate's run: A.blocks blocks, A.first's first."""
    return Blocks(torch.cuda.synchronize, a.warmup, a.steps, alternate.order(a.first, a.blocks),
                  set_fix)


def timer_of(torch, a, set_fix=None):
    """StepTimer of a plain run, Blocks of an --alternate one (SET_FIX switches its FIX)."""
    if getattr(a, "alternate", None):
        return blocks_of(torch, a, set_fix)
    return StepTimer(torch, a.warmup, a.steps)


def alternation(fix, first, steps, blocks):
    """The alternating line's figures (the module's docstring) of BLOCKS' records; ValueError
    when they do not alternate or hold no pair."""
    got = alternate.summary(first, steps, blocks)
    return {"alternate": fix, **got, "step_us_saving": got["saving_us"]}


def emit(program, fixes, a, timer, **more):
    """Print the program's JSON line; 0, or 1 when the timer has no figure (a run cut short)."""
    line = {"program": program, "fix": sorted(fixes), "size": a.size}
    if isinstance(timer, Blocks):
        if len(timer.blocks) != a.blocks:
            print(f"error: {len(timer.blocks)} of {a.blocks} blocks timed", file=sys.stderr)
            return 1
        line.update(warmup=a.warmup, **alternation(a.alternate, a.first, a.steps, timer.blocks))
    else:
        line.update(steps=a.steps - a.warmup, step_us=timer.step_us())
    line.update(more)
    print(json.dumps(line), flush=True)
    return 0 if line.get("step_us", 0) is not None else 1
