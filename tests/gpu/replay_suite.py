#!/usr/bin/env python3
"""The replay's suite of real programs (issue 34): for each PyTorch program of tests/audit/, the
saving of removing ONE line (marked `# SYNC-LINE` in the program; `# SYNC-LINE TAG` where one
program holds the lines of several pairs of variants, the entry's marker) measured within one
process, beside what the replay predicts for that line from an audit of the syncing variant.

    replay_suite.py [--only NAME,...] [--rounds N] [--blocks B] [--audits K] [--out DIR]
                    [--python PY]

Per entry: ROUNDS rounds (3), each ONE plain process of the program's alternating variant
(`--variant alternate --blocks B --first sync|fixed`, tests/audit/alternate.py): after its
warm-up, B blocks (8) of the entry's steps, alternating the syncing and the fixed variant,
sync first in odd rounds and fixed first in even ones. The round's figure is its in-process
saving per unit (a step, a batch or a token): the median over its pairs of blocks of sync -
fixed; the measured saving is the rounds' median, the spread their [min, max]. Why in one
process: on a cloud VM the host's speed moves between processes by 10 to 20 % (on the H100,
train-host's step took 1073 to 1208 us syncing and 932 to 1199 fixed over three rounds of
separate processes), far more than a host-bound program's saving, but holds steady within
one. No separate warm-up process: every figure is a difference within a process, after the
program's own warm-up (torch.compile compiles there, the DataLoader's workers start there) and
an untimed block, so nothing of a process's start reaches it; train-compile's first round
compiles (30 to 60 s more, untimed) and fills inductor's on-disk cache, which its later rounds
and the audit load.

Then K audits (1) of the syncing variant alone, as many steps as a round's blocks together:
    syncbench audit -q --gpu-activity --top 20 --json OUT/records/NAME-k.json \
        --keep OUT/records/NAME-k -- CMD
and in every replayed process the marked line's site (`file.py:LINE`): its calls, per step,
the typical saving per call times the calls per step the fix removes (kept_fraction: the
calls the fixed variant still makes, as a check every 16 tokens), the same with the readbacks
kept, the mean-based figure, the lower figure where a thread feeding the syncing one through a
queue held it back (save_per_call_us_typical_producer_bound: what the fix saves if that
feeder cannot keep up) and threads_unmodelled. A job of several ranks is replayed with its ranks
played together (docs/replay.md): its figure is its slowest rank's, the process whose site says
job_figure (the rank saving least where none does: an older syncbench); a job whose ranks could
not be played together is flagged (ranks_unmodelled, ranks_model says why). Each of a job's
blocks counts its slower rank's time. The verdict: verdict() below. Each audit's own step (the
program's, recorded; a job's: its slower rank's loop over the steps) over the plain syncing step
(the rounds' median; a job's: each block's slower rank), in % (audit_slowdown_pct, the table's
last column): what recording cost that run, with the host's drift between processes in it (10
to 20 % on a VM), so telling only where well above that drift or on a GPU-bound entry, whose
step the host's speed moves little. An audit's figure rises with it where the saving is
host-paced work after the sync.

Writes OUT/suite.json (every figure, every block of every round) and OUT/suite.md (one
Markdown table), after each entry; the table goes to stdout last, progress to stderr. A
program that fails (exit != 0, no JSON line, the marked line's site missing) is an ERROR row
with the last lines of its stderr; the other entries still run. Exit 1 when a row is ERROR,
else 0 (a miss is a finding, not a failure of the suite). Environment: SYNCBENCH (the binary,
default build/syncbench), TORCH_PYTHON (the Python with torch; default this one); make
validate runs each entry as a check of the replay group (tests/validate/replay_checks.py,
--full).

Time on an H100, default rounds (measured 2026-11-27: the six entries before ddp took 7 minutes
with 8 blocks a round; ddp, 3 rounds of 8 blocks on gloo, about 2; the host-bound entries now
run 16 and 24 shorter blocks). Per entry, estimated: a plain process costs its start (torch's import
and CUDA's set-up, 3 to 5 s), its warm-up, the untimed block and 2 to 3 s of timed blocks; an
audit (as long a loop) adds its 3 to 5 s calibration and the replay of its records:
    train-gpu      50 steps a block (about 7 ms a step): 3 processes and an audit, about 35 s
    train-host     300 steps a block (about 1.1 ms): about 35 s
    train-compile  400 steps a block: the first round compiles (30 to 60 s), the others and
                   the audit load inductor's cache (5 s more a process): about 80 s (45 s
                   with the cache already filled)
    loader         200 steps a block (an epoch; about 1.5 ms a step), the workers' start: 40 s
    eval           400 batches a block (under 1 ms a batch): about 35 s
    hf-generate    1 generation of 128 tokens a block; transformers' import adds 2 to 3 s a
                   process: about 45 s
    ddp            torchrun and two ranks on gloo (7 to 8 s a job), 150 steps a block (about
                   3.5 s of blocks on one GPU): about 50 s
    ddp4           the same with four ranks on gloo, one GPU: about 80 s (estimated)
in all about 10 minutes: run it in two calls of a 10-minute limit (--only)."""
import argparse
import dataclasses
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from statistics import median

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
AUDIT_DIR = ROOT / "tests" / "audit"
# as tests/conftest.py finds it (importing conftest needs pytest)
BIN = os.environ.get("SYNCBENCH", str(ROOT / "build" / "syncbench"))
MARKER = "# SYNC-LINE"
TOLERANCE = 0.25  # of the measured saving
STDERR_LINES = 5  # of a failed program's stderr, in its ERROR row
FEEDER_NOTE = "if the feeder cannot keep up"


def _beside_the_programs(name):
    """The module NAME of tests/audit/, loaded by its path: putting tests/audit/ on sys.path
    would let its programs' helpers (mlp, ...) shadow other modules of the importer."""
    spec = importlib.util.spec_from_file_location(name, AUDIT_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


alternate = _beside_the_programs("alternate")  # the programs' alternating mode, read back


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    label: str              # the fix, in words
    script: str             # the program (in tests/audit/ unless absolute), its line marked
    args: tuple             # the arguments every variant takes
    steps: int              # a block's steps (batches, generations): STEPS_FLAG's value
    steps_flag: str = "--steps"
    unit: str = "step"      # what step_us is per: step, batch or token
    rounds: int = 3
    blocks: int = alternate.BLOCKS
    timeout: int = 180      # seconds a process may take
    ranks: int = 0          # a torchrun job of this many ranks (0: one process)
    kept_fraction: float = 0.0  # of the marked line's calls that the fixed variant still makes
    env: tuple = ()         # (name, value) pairs for every process
    # the option choosing the variant, then its syncing and its fixed one's names
    switch: tuple = ("--variant", "sync", "fixed")
    marker: str = MARKER    # the comment that marks the line; tagged where a program has two


ENTRIES = [
    Entry("train-gpu", "training loop (GPU-bound MLP): the loss kept on the GPU, not .item()",
          "torch_train.py", ("--size", "gpu"), 50),
    # host-bound entries: many short blocks. On the H100 VM a host-bound block of 0.3 s moved by
    # up to 20 % from one to the next, in one process, far more than the line saves; pairs of
    # short neighbouring blocks share the host's speed, and their median drops the outliers
    Entry("train-host", "training loop (launch-bound MLP): the loss kept on the GPU, not .item()",
          "torch_train.py", ("--size", "host"), 100, blocks=24),
    # issue 49: a boolean mask in the loss mid-forward (the host counts the mask before the rest
    # of the step can be launched), GPU-bound and launch-bound
    Entry("mask-gpu", "loss over a boolean mask: the mask as weights, no host count",
          "torch_mask.py", ("--size", "gpu"), 50),
    Entry("mask-host", "loss over a boolean mask (launch-bound): the mask as weights",
          "torch_mask.py", ("--size", "host"), 100, blocks=24),
    # the same loss with a pair of variants that differ by the sync alone (--pair count): the
    # mask's count read on the host, int(keep.sum()), or kept on the GPU, the weighted loss over
    # it in both; what mask-host's fix changes besides the sync is left out
    Entry("mask-count-gpu", "loss over a mask's count: the count kept on the GPU, not int()",
          "torch_mask.py", ("--size", "gpu", "--pair", "count"), 50,
          marker=MARKER + " count"),
    Entry("mask-count-host", "loss over a mask's count (launch-bound): the count kept on the GPU",
          "torch_mask.py", ("--size", "host", "--pair", "count"), 100, blocks=24,
          marker=MARKER + " count"),
    Entry("train-compile", "training loop compiled with torch.compile: the loss kept on the GPU",
          "torch_train.py", ("--size", "host", "--compile"), 400, timeout=600),
    Entry("loader", "DataLoader-fed training: the accuracy kept on the GPU, not .cpu()",
          "torch_loader.py", (), 200),
    Entry("eval", "validation loop: the correct count kept on the GPU, not .item()",
          "torch_eval.py", (), 400, steps_flag="--batches", unit="batch"),
    Entry("hf-generate", "GPT-2 greedy decoding: the stop checked every 16 tokens, not each",
          "hf_generate.py", (), 1, steps_flag="--generations", unit="token", blocks=16,
          kept_fraction=1 / 16),  # the fixed variant checks every 16 tokens (CHECK_EVERY)
    # gloo, every rank on one GPU: the ranks' collectives the replay plays together
    Entry("ddp", "2-rank DDP job on gloo: the loss.item() logging line removed", "torch_ddp.py",
          ("--backend", "gloo"), 150, timeout=300, ranks=2, env=(("NCCL_NVLS_ENABLE", "0"),),
          switch=("--mode", "item", "drop")),
    Entry("ddp4", "4-rank DDP job on gloo: the loss.item() logging line removed",
          "torch_ddp.py", ("--backend", "gloo"), 150, timeout=400, ranks=4,
          env=(("NCCL_NVLS_ENABLE", "0"),), switch=("--mode", "item", "drop")),
]


class ProgramFailed(Exception):
    """A run of the entry could not give its figures (the message says why)."""


def log(msg):
    print(f"replay_suite: {msg}", file=sys.stderr, flush=True)


def script_path(entry):
    return AUDIT_DIR / entry.script


def marked_line(path, marker=MARKER):
    """(line number, code) of the one line of PATH that ends with MARKER, the whole comment
    (`# SYNC-LINE count` is not `# SYNC-LINE`)."""
    found = []
    for n, text in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        code, _, comment = text.partition("#")
        if code.strip() and "# " + comment.strip() == marker:
            found.append((n, code.strip()))
    if len(found) != 1:
        raise ProgramFailed(f"{path}: {len(found)} lines marked '{marker}' (one expected)")
    return found[0]


def command(entry, python, variant, blocks=None, first="sync"):
    """The argv of the entry's VARIANT: "sync" or "fixed" alone, as many steps as BLOCKS
    blocks (the entry's unless given) in one loop, or "alternate", BLOCKS blocks, FIRST's
    ("sync" or "fixed") first."""
    flag, sync_name, fixed_name = entry.switch
    blocks = blocks or entry.blocks
    head = [python]
    if entry.ranks:
        head += ["-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={entry.ranks}"]
    head += [str(script_path(entry)), *entry.args]
    if variant == "alternate":
        tail_args = [flag, "alternate", entry.steps_flag, entry.steps, "--blocks", blocks,
                     "--first", sync_name if first == "sync" else fixed_name]
    else:
        tail_args = [flag, sync_name if variant == "sync" else fixed_name, entry.steps_flag,
                     entry.steps * blocks]
    return head + [str(x) for x in tail_args]


def json_lines(stdout):
    out = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def step_figures(entry, stdout):
    """(us per step, steps) of one run's stdout: the last JSON line's step_us, or for a job of
    ranks its slower rank's loop_us per step (the job is paced by it)."""
    lines = json_lines(stdout)
    if entry.ranks:
        ranks = {x["rank"]: x for x in lines if "rank" in x and "loop_us" in x}
        if sorted(ranks) != list(range(entry.ranks)):
            raise ProgramFailed(f"ranks' JSON lines missing (got ranks {sorted(ranks)})")
        steps = ranks[0]["steps"]
        return max(x["loop_us"] for x in ranks.values()) / steps, steps
    if not lines or "step_us" not in lines[-1]:
        raise ProgramFailed("no JSON line with step_us on stdout")
    return float(lines[-1]["step_us"]), int(lines[-1]["steps"])


def job_blocks(entry, lines):
    """(steps a block, blocks, {rank: [us per step of each block]}) of a job's ranks' JSON
    LINES, each block its slower rank's us per step (the job is paced by it)."""
    ranks = {x["rank"]: x for x in lines if "rank" in x and "blocks" in x}
    if sorted(ranks) != list(range(entry.ranks)):
        raise ProgramFailed(f"ranks' JSON lines with blocks missing (got ranks {sorted(ranks)})")
    order = [b["variant"] for b in ranks[0]["blocks"]]
    if any([b["variant"] for b in x["blocks"]] != order for x in ranks.values()):
        raise ProgramFailed("the ranks ran different blocks (they must switch in lockstep)")
    blocks = [{"variant": v, "step_us": max(x["blocks"][k]["step_us"] for x in ranks.values())}
              for k, v in enumerate(order)]
    per_rank = {r: [b["step_us"] for b in x["blocks"]] for r, x in sorted(ranks.items())}
    return ranks[0]["steps"], blocks, per_rank


def alternate_figures(entry, stdout, first):
    """alternate.py's summary of one alternating run's stdout (recomputed from its blocks:
    for a job of ranks, the job's blocks), FIRST checked against its first block."""
    lines = json_lines(stdout)
    extra = {}
    if entry.ranks:
        steps, blocks, extra["rank_blocks"] = job_blocks(entry, lines)
    elif lines and "blocks" in lines[-1]:
        steps, blocks = int(lines[-1]["steps"]), lines[-1]["blocks"]
    else:
        raise ProgramFailed("no JSON line with blocks on stdout")
    if not blocks or blocks[0]["variant"] != first:
        raise ProgramFailed(f"the first block is not {first}'s: "
                            f"{[b['variant'] for b in blocks[:2]]}")
    try:
        return {**alternate.summary(first, steps, blocks), **extra}
    except ValueError as e:
        raise ProgramFailed(str(e)) from None


def tail(text, n=STDERR_LINES):
    return "\n".join(text.strip().splitlines()[-n:])


def execute(entry, argv, what, timeout=None):
    """The completed process of ARGV (the entry's env; its timeout unless TIMEOUT);
    ProgramFailed unless exit 0."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **dict(entry.env)}
    timeout = timeout or entry.timeout
    try:
        r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProgramFailed(f"{what}: timed out after {timeout} s") from None
    if r.returncode != 0:
        raise ProgramFailed(f"{what}: exit {r.returncode}: {tail(r.stderr)}")
    return r


def alternating(entry, python, blocks, first):
    """alternate_figures() of one plain process alternating BLOCKS blocks, FIRST's first."""
    what = f"{entry.name} alternate, {first} first"
    r = execute(entry, command(entry, python, "alternate", blocks, first), what)
    try:
        return alternate_figures(entry, r.stdout, first)
    except ProgramFailed as e:
        raise ProgramFailed(f"{what}: {e}; stderr: {tail(r.stderr)}") from None


def measure(entry, python, rounds, blocks=None):
    """The rounds, one alternating process each, sync's blocks first in odd rounds and fixed's
    in even ones: [{round, first, steps, blocks, sync_us, fixed_us, saving_us}]."""
    out = []
    for k in range(rounds):
        first = "sync" if k % 2 == 0 else "fixed"  # round k + 1
        got = alternating(entry, python, blocks, first)
        log(f"{entry.name}: round {k + 1}/{rounds} ({first} first): sync {got['sync_us']:.2f}, "
            f"fixed {got['fixed_us']:.2f}, saving {got['saving_us']:.2f} us/{entry.unit}")
        got.pop("variant")
        out.append({"round": k + 1, **got})
    return out


def site_pattern(script, line):
    # the site names the file (maybe by its path) and the line: "dir/x.py:52 in main"
    return re.compile(r"(^|[/\s])" + re.escape(pathlib.Path(script).name) + f":{line}(?!\\d)")


def scaled(x, factor):
    return None if x is None else x * factor


def process_figures(proc, site, steps, kept_fraction):
    """One replayed process's figures for the marked line's site, per step."""
    per_step_calls = site["calls"] / steps
    removed = per_step_calls * (1 - kept_fraction)  # calls a step the fix removes
    typical, kept, mean, feeder = (site.get(f"save_per_call_us{x}") for x in (
        "_typical", "_readbacks_kept_typical", "", "_typical_producer_bound"))
    return {"pid": proc.get("pid"), "rank": proc.get("rank", -1), "site": site["site"],
            "calls": site["calls"], "calls_per_step": per_step_calls,
            "removed_per_step": removed,
            "per_call_typical": typical, "per_call_kept": kept, "per_call_mean": mean,
            "per_call_producer_bound": feeder,  # absent (None) unless a feeder held it back
            "per_step": scaled(typical, removed), "per_step_kept": scaled(kept, removed),
            "per_step_mean": scaled(mean, removed),
            "per_step_producer_bound": scaled(feeder, removed),
            "threads_unmodelled": site.get("threads_unmodelled") or 0,
            "ranks_unmodelled": site.get("ranks_unmodelled") or 0,
            "ranks_model": site.get("ranks_model"), "job_figure": bool(site.get("job_figure")),
            "bound": site.get("bound"), "blocked_us": site.get("blocked_us"),
            "records_incomplete": proc.get("records_incomplete")}


def line_figures(report, entry, line, steps):
    """[process figures] of every replayed process holding the marked line's site; every rank
    of a job must hold it. ProgramFailed when none (or a rank) does."""
    pattern = site_pattern(entry.script, line)
    out, seen = [], []
    for p in report.get("processes", []):
        if not p.get("predicted"):
            continue
        sites = p["predicted"].get("sites") or []
        seen += [s["site"] for s in sites]
        found = [s for s in sites if pattern.search(s["site"])]
        if found:
            out.append(process_figures(p, max(found, key=lambda s: s["calls"]), steps,
                                       entry.kept_fraction))
    if not out or (entry.ranks and len(out) != entry.ranks):
        raise ProgramFailed(f"{entry.name}: the site of {entry.script}:{line} is in "
                            f"{len(out)} replayed processes (sites: {seen[:8]})")
    return out


def audit_notes(stderr):
    """The audit's own lines that say a figure is unknown or not modelled."""
    return [x.strip() for x in stderr.splitlines()
            if "unknown" in x or "not modelled" in x][:5]


def figure_process(procs):
    """The process whose figures are the prediction: a job's slowest rank (its site says
    job_figure: the ranks were played together), else the process saving least."""
    job = [x for x in procs if x.get("job_figure")]
    if job:
        return job[0]
    return min(procs, key=lambda x: float("inf") if x["per_step"] is None else x["per_step"])


def audit_once(entry, python, out, k, line, bin_path=None, blocks=None):
    """Audit K (from 1) of the syncing variant alone, BLOCKS blocks' steps in one loop:
    {audit: K, steps, step_us: the audited run's own step (step_figures), processes: [figures],
    figure: the process whose figures are the prediction (figure_process), notes, json,
    records}."""
    name = f"{entry.name}-{k}"
    records = out / "records"
    keep, report_path = records / name, records / f"{name}.json"
    if keep.exists():
        shutil.rmtree(keep)
    records.mkdir(parents=True, exist_ok=True)
    argv = [bin_path or BIN, "audit", "-q", "--gpu-activity", "--top", "20",
            "--json", report_path, "--keep", keep, "--", *command(entry, python, "sync", blocks)]
    # the audit calibrates first (3 to 5 s) and recording slows the program
    r = execute(entry, argv, f"{entry.name} audit {k}", timeout=2 * entry.timeout)
    step, steps = step_figures(entry, r.stdout)
    procs = line_figures(json.loads(report_path.read_text()), entry, line, steps)
    return {"audit": k, "steps": steps, "step_us": step, "processes": procs,
            "figure": figure_process(procs),
            "notes": audit_notes(r.stderr), "json": str(report_path), "records": str(keep)}


def recording_slowdowns(row):
    """Each audit's own step (the program's, recorded) over the plain syncing step (the rounds'
    median), in %: what recording cost that run, the drift between processes in it. Where the
    line's saving is host-paced work after the sync (the rest of a forward launched op by op),
    the replay prices that work as recorded, so an audit's figure rises with its slowdown. None
    for an audit without a step (older rows)."""
    plain = median(x["sync_us"] for x in row["rounds"])
    return [None if a.get("step_us") is None or not plain else 100 * (a["step_us"] / plain - 1)
            for a in row["audits"]]


def audits_text(row):
    """Each audit's figure with its slowdown: "324 (+0.4 %); 301 (-0.1 %)"."""
    slow = row.get("audit_slowdown_pct") or [None] * len(row["audits"])
    if len(slow) != len(row["audits"]):
        raise ValueError(f"{len(slow)} slowdowns for {len(row['audits'])} audits")
    return "; ".join(fmt(a["figure"]["per_step"], 0) +
                     ("" if d is None else f" ({d:+.1f} %)") for a, d in zip(row["audits"], slow))


def median_of(xs):
    xs = [x for x in xs if x is not None]
    return median(xs) if xs else None


def prediction(audits):
    """The audits' figures in one: medians over audits of each one's figure process's
    (figure_process)."""
    figures = [a["figure"] for a in audits]
    flags = max(x["threads_unmodelled"] for a in audits for x in a["processes"])
    ranks = max(x.get("ranks_unmodelled", 0) for a in audits for x in a["processes"])
    models = sorted({x["ranks_model"] for a in audits for x in a["processes"]
                     if x.get("ranks_model")})
    return {"per_step": median_of([x["per_step"] for x in figures]),
            "per_step_kept": median_of([x["per_step_kept"] for x in figures]),
            "per_step_mean": median_of([x["per_step_mean"] for x in figures]),
            "per_step_producer_bound": median_of([x["per_step_producer_bound"]
                                                  for x in figures]),
            "calls_per_step": median_of([x["calls_per_step"] for x in figures]),
            "per_call_typical": median_of([x["per_call_typical"] for x in figures]),
            "threads_unmodelled": flags, "ranks_unmodelled": ranks, "ranks_model": models,
            "rank": figures[0]["rank"], "site": figures[0]["site"],
            "records_incomplete": [x["records_incomplete"] for a in audits
                                   for x in a["processes"] if x["records_incomplete"]],
            "notes": sorted({n for a in audits for n in a["notes"]})}


def flag_of(pred):
    """Why the prediction is no prediction, or None."""
    if pred["threads_unmodelled"]:
        return f"threads not modelled: {pred['threads_unmodelled']}"
    if pred.get("ranks_unmodelled"):
        why = "; ".join(x for x in pred.get("ranks_model") or [] if x.startswith("ranks not"))
        return why or (f"ranks not modelled: {pred['ranks_unmodelled'] + 1} ranks meet in "
                       "collectives the replay keeps where they were recorded")
    if pred["per_step"] is None:
        return "no figure"
    return None


def verdict(measured, spread, predicted, flag=None, lower=None):
    """`within` when PREDICTED lies within 25 % of MEASURED or inside the measured SPREAD
    [min, max]; `not modelled (FLAG)` when the replay flags its figure (or has none). With a
    LOWER figure (the saving if the thread feeding the syncing one cannot keep up), `within
    range` when MEASURED lies between LOWER x 0.75 and PREDICTED x 1.25. Else, on PREDICTED:
    `miss`, or `miss >2x` when off by more than a factor 2 or of the other sign."""
    if flag:
        return f"not modelled ({flag})"
    if predicted is None or measured is None:
        return "not modelled (no figure)"
    lo, hi = spread
    if abs(predicted - measured) <= TOLERANCE * abs(measured) or lo <= predicted <= hi:
        return "within"
    if lower is not None:
        low, high = sorted((lower, predicted))  # the lower one is meant to be lower
        if low * (1 - TOLERANCE) <= measured <= high * (1 + TOLERANCE):
            return "within range"
    if predicted * measured <= 0 or not 0.5 <= predicted / measured <= 2:
        return "miss >2x"
    return "miss"


def outcome(v):
    """validate's ok for a verdict: True within (a range too), False a miss, None not
    modelled."""
    return True if v in ("within", "within range") else False if v.startswith("miss") else None


def error_pct(predicted, measured):
    if predicted is None or not measured:
        return None
    return 100 * (predicted - measured) / abs(measured)


def run_entry(entry, python, out, rounds=None, audits=1, bin_path=None, blocks=None):
    """One entry's row: every figure, its verdict; an ERROR row (with why) if a run failed.
    ROUNDS and BLOCKS: the entry's unless given."""
    out = pathlib.Path(out).resolve()
    blocks = blocks or entry.blocks
    row = {"name": entry.name, "label": entry.label, "unit": entry.unit,
           "script": entry.script, "steps": entry.steps, "blocks": blocks,
           "alternate": command(entry, python, "alternate", blocks),  # round 1's
           "sync": command(entry, python, "sync", blocks),  # the audited one
           "kept_fraction": entry.kept_fraction}
    try:
        line, code = marked_line(script_path(entry), entry.marker)
        row.update(line=line, code=code)
        row["rounds"] = measure(entry, python, rounds or entry.rounds, blocks)
        savings = [x["saving_us"] for x in row["rounds"]]
        row["measured"], row["spread"] = median(savings), [min(savings), max(savings)]
        row["audits"] = []
        for k in range(1, audits + 1):
            log(f"{entry.name}: audit {k}/{audits}")
            row["audits"].append(audit_once(entry, python, out, k, line, bin_path, blocks))
    except ProgramFailed as e:
        log(f"{entry.name}: ERROR: {e}")
        return {**row, "verdict": "ERROR", "error": str(e)}
    pred = row["predicted"] = prediction(row["audits"])
    row["audit_slowdown_pct"] = recording_slowdowns(row)
    row["error_pct"] = error_pct(pred["per_step"], row["measured"])
    row["verdict"] = verdict(row["measured"], row["spread"], pred["per_step"], flag_of(pred),
                             pred["per_step_producer_bound"])
    log(f"{entry.name}: measured {row['measured']:.2f} us/{entry.unit}, predicted "
        f"{predicted_text(pred)}: {row['verdict']}")
    return row


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def predicted_text(pred):
    """The typical figure, and the lower one where a feeder held the syncing thread back:
    "X (Y if the feeder cannot keep up)"."""
    lower = pred.get("per_step_producer_bound")
    text = fmt(pred["per_step"])
    return text if lower is None else f"{text} ({fmt(lower)} {FEEDER_NOTE})"


def cell(text):
    return " ".join(str(text).split()).replace("|", "/")


def table(rows):
    """The Markdown table of ROWS."""
    lines = ["| program | the line | measured µs/unit [min, max] of the rounds | predicted "
             "µs/unit (typical; readbacks kept) | error % | verdict | each audit's figure "
             "(its step over the plain syncing step) |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        where = f"`{r['code']}` ({r['script']}:{r['line']})" if "line" in r else r["script"]
        if r["verdict"] == "ERROR":
            lines.append(f"| {r['name']} | {cell(where)} | - | - | - | "
                         f"ERROR: {cell(r['error'])} | - |")
            continue
        lo, hi = r["spread"]
        p = r["predicted"]
        lines.append(f"| {r['name']} | {cell(where)} | {fmt(r['measured'])} [{fmt(lo)}, "
                     f"{fmt(hi)}] µs/{r['unit']} | {predicted_text(p)}; "
                     f"{fmt(p['per_step_kept'])} | {fmt(r['error_pct'], 1)} | "
                     f"{cell(r['verdict'])} | {audits_text(r)} |")
    return "\n".join(lines) + "\n"


def write(rows, out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "suite.json").write_text(json.dumps(rows, indent=1) + "\n")
    (out / "suite.md").write_text(table(rows))


def run_entries(entries, python, out, rounds=None, audits=1, bin_path=None, blocks=None):
    """Every entry in turn, the files rewritten after each: the rows."""
    rows = []
    for e in entries:
        rows.append(run_entry(e, python, out, rounds, audits, bin_path, blocks))
        write(rows, out)
    return rows


def reanalyze(rows, records, out, bin_path=None):
    """The rows of an earlier suite.json with their predictions made again from the audits'
    kept records (under RECORDS: NAME-K/) by this syncbench (`audit --from`): what an analyzer
    change does to the figures, on the same recorded runs and the same measured savings."""
    out = pathlib.Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    entries = {e.name: e for e in ENTRIES}
    again = []
    for row in rows:
        if row.get("verdict") == "ERROR" or row["name"] not in entries:
            again.append(row)
            continue
        entry, audits = entries[row["name"]], []
        for a in row["audits"]:
            name = f"{row['name']}-{a['audit']}"
            report = out / f"{name}.json"
            argv = [bin_path or BIN, "audit", "-q", "--top", "20", "--from",
                    pathlib.Path(records) / name, "--json", report]
            r = subprocess.run([str(x) for x in argv], capture_output=True, text=True)
            if r.returncode not in (0, 1):
                raise ProgramFailed(f"{name}: audit --from: exit {r.returncode}: {tail(r.stderr)}")
            procs = line_figures(json.loads(report.read_text()), entry, row["line"], a["steps"])
            audits.append({**a, "processes": procs, "figure": figure_process(procs),
                           "notes": audit_notes(r.stderr), "json": str(report)})
        pred = prediction(audits)
        again.append({**row, "audits": audits, "predicted": pred,
                      "audit_slowdown_pct": recording_slowdowns({**row, "audits": audits}),
                      "error_pct": error_pct(pred["per_step"], row["measured"]),
                      "verdict": verdict(row["measured"], row["spread"], pred["per_step"],
                                         flag_of(pred), pred["per_step_producer_bound"])})
    write(again, out)
    return again


def select(only):
    """The entries named (comma-separated), all when ONLY is empty; ValueError for a name
    that is none."""
    names = [x.strip() for x in (only or "").split(",") if x.strip()]
    known = {e.name: e for e in ENTRIES}
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"no entry {', '.join(bad)} (entries: {', '.join(known)})")
    return [known[n] for n in names] if names else list(ENTRIES)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="the entries to run, comma-separated (default: all)")
    ap.add_argument("--rounds", type=int,
                    help="rounds, one alternating process each (default: the entry's, 3)")
    ap.add_argument("--blocks", type=int,
                    help=f"timed blocks a round, half of them syncing ({alternate.BLOCKS})")
    ap.add_argument("--audits", type=int, default=1, help="audits of the syncing variant (1)")
    ap.add_argument("--out", default=str(ROOT / "build" / "replay-suite"),
                    help="where suite.json, suite.md and the records go")
    ap.add_argument("--python", default=os.environ.get("TORCH_PYTHON") or sys.executable,
                    help="the Python with torch (TORCH_PYTHON, else this one)")
    ap.add_argument("--reanalyze", metavar="SUITE_JSON",
                    help="no GPU: an earlier run's rows, predicted again from their kept "
                         "records (--records) by this syncbench, into --out")
    ap.add_argument("--records", help="with --reanalyze: the folder of the kept records")
    a = ap.parse_args(argv)
    if a.reanalyze:
        if not a.records:
            ap.error("--reanalyze needs --records DIR")
        rows = reanalyze(json.loads(pathlib.Path(a.reanalyze).read_text()), a.records, a.out,
                         os.path.abspath(BIN))
        sys.stdout.write(table(rows))
        return 0
    try:
        entries = select(a.only)
    except ValueError as e:
        ap.error(str(e))
    if (a.rounds is not None and a.rounds < 1) or a.audits < 1:
        ap.error("--rounds and --audits must be at least 1")
    if a.blocks is not None and a.blocks < 2:
        ap.error("--blocks must be at least 2 (a pair of a syncing and a fixed block)")
    rows = run_entries(entries, a.python, a.out, a.rounds, a.audits,
                       os.path.abspath(BIN), a.blocks)
    sys.stdout.write(table(rows))
    return 1 if any(r["verdict"] == "ERROR" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
