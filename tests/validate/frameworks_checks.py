#!/usr/bin/env python3
"""Each framework option the table claims, checked on the GPU, not asserted (issue 44, part 4):
the framework suite's programs (tests/frameworks/) with and without the option, audited once
each (`syncbench audit --gpu-activity --json`), then timed for the saving a step: where the
option switches in place, within one process (in-process toggles), else in plain processes,
alternating.

Per claim (CLAIMS below: the program, its --fix, the framework table's row, the library line the
option removes and the count it leaves):
  line count   the blocking calls made at the claimed line (rows whose `via` site is in the
               module and function; polls and compile-time rows never count), before -> after
  run total    the run's blocking calls (processes' `blocking_calls`), before -> after
  moved        library lines whose count rose by more than 2 with the option (reported)
  measured     the median and [min, max] over the rounds of a saving a step, measured as the
               claim's `timing` says:
               toggle: a round is ONE process of the program's in-process alternation
                 (`--alternate FIX --blocks B --first sync|fixed`, tests/frameworks/fw_common.py):
                 after its warm-up, B blocks (8) of the claim's block_steps steps, FIX switched
                 off and on in place between them, FIX off first in odd rounds and on first in
                 even ones; the round's figure is the program's step_us_saving (the median over
                 its pairs of blocks of off - on, per step), as the replay suite measures
                 (tests/gpu/replay_suite.py). The host's speed moves between processes by 10 to
                 20 % (amp_loop --size gpu: 9.3 to 13.7 ms a step over processes of one
                 variant), far more than a saving of a few hundred us, but holds within one
               plain: per round (baseline, fix 1, fix 2, ... one plain process each) the
                 baseline's step_us minus the fix's
               Where the option changes more than the sync (fused=True also changes AdamW's
               kernels), the claim names a sync-alone variant of the program (the baseline less
               that one sync, same compute): its saving (by toggle) is the one judged, the
               option's own (plain processes) is shown beside it
  predicted    the baseline audit's predicted saving at the line (processes' predicted.lines
               whose via is the line: save_us summed) over the run's steps (warm-up included)

Verdict: PASS when the count target is met (after <= expected; or <= a share of before; or
fewer than before) AND the prediction lies within 25 % of the measured median or inside the
measured [min, max] ("within"), or the spread includes 0 and |predicted| is below its half-width
("below the noise"). A line that made no call before, a missing prediction, or a predicted line
whose `framework` id is not the claimed row is a MISS. A program that exits 2 with fw_common's
line (no CUDA, torch or framework) makes its claims SKIP; the check fails (ERROR) when every
claim skipped: a gate that could not check has not passed.

Budget: the audits first, then rounds across the programs (a program's round: its plain runs,
then its toggled processes); a round is not started past the budget (--budget-s,
SYNCBENCH_FRAMEWORKS_BUDGET_S; 480 s), counting the last round's length, and the table says so;
every program gets at least one round. Rounds: --rounds, SYNCBENCH_FRAMEWORKS_ROUNDS, else
validate's --rounds, else 3. Files (validate's --keep DIR: DIR/frameworks/): every audit's JSON,
frameworks.jsonl (every run, its blocks too, and every claim's figures, a JSON object a line)
and frameworks.md (the table, also printed on stderr).

    frameworks_checks.py [--rounds R] [--budget-s B] [--steps S] [--warmup W] [--blocks B]
                         [--program NAME[,NAME]] [--timing toggle|plain] [--out DIR]

--timing: only the claims whose saving is measured so (plain: the count-only claims too).

run alone on a GPU machine prints the table on stdout; exit 1 on a MISS or ERROR, else 0.
Environment: SYNCBENCH (the binary; build/syncbench), TORCH_PYTHON (the interpreter; python3)."""
import argparse
import dataclasses
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from registry import ROOT, check, workdir  # noqa: E402  (after the path)

GROUP = "frameworks"
SUITE = ROOT / "tests" / "frameworks"

# The framework table's row ids (docs/frameworks.md), one place to rename them.
ROW_IDS = {
    "found_inf": "torch.amp.grad_scaler.found_inf",
    "nan_inf_filter": "transformers.trainer.nan_inf_filter",
    "send_to_device": "accelerate.send_to_device",
    "to_item": "lightning.to_item",
    "batch_to": "lightning.batch_to",
    "log_loss": "transformers.trainer.log_loss",
    "validate_args": "torchmetrics.validate_args",
    "object_collectives": "torch.distributed.object_collectives",
    "broadcast_buffers": "torch.ddp.broadcast_buffers",
    "clip_nonfinite": "torch.clip_grad_norm.nonfinite",
}

STEPS, WARMUP, ROUNDS, BUDGET_S = 30, 10, 3, 480.0
BLOCKS = 8         # a toggled process's timed blocks, half with the fix off
TIMINGS = ("toggle", "plain")
TOLERANCE = 0.25   # a prediction within 25 % of the measured median
MOVED_OVER = 2     # a library line "moved" when its count rose by more than this
RUN_TIMEOUT_S = 300


@dataclasses.dataclass(frozen=True)
class Claim:
    program: str         # tests/frameworks/PROGRAM.py
    fix: str             # its --fix name
    row: str             # the framework table's row id
    line: str            # "module/path.py:function" (alternatives: "f|g")
    expect: tuple = ("max", 0)  # ("max", N): after <= N; ("share", x): after <= x * before;
    #                             ("fewer",): after < before
    cls: str = None      # count only the rows of this class
    by_row: bool = False  # count the rows the framework table names by this row id (a sync made
    #                       under the row's frame, below it in torch: torchmetrics' torch.unique)
    count_only: bool = False  # judged on its counts alone (a saving too small a step to time);
    #                           no plain rounds
    sync_alone: str = None  # the --fix of the program's sync-alone variant, timed for the verdict
    timing: str = "plain"   # how the judged saving is measured: "toggle" (in one process, the
    #                         program's --alternate) or "plain" (plain processes, alternating)
    block_steps: int = 20   # toggle: a block's steps (a multiple of the program's period)
    args: tuple = ()  # the program's arguments beside --fix (ddp_job's ranks and backend)
    tag: str = ""     # the program run with ARGS, as its files and rounds know it ("ddp_job-nccl1")

    @property
    def program_key(self):
        return f"{self.program}-{self.tag}" if self.tag else self.program

    @property
    def name(self):
        return f"{self.program_key} {self.fix}"

    @property
    def toggled(self):
        """The --fix whose saving is judged: the sync-alone variant's, else the option's."""
        return self.sync_alone or self.fix

    @property
    def module(self):
        return self.line.rsplit(":", 1)[0]

    @property
    def functions(self):
        return tuple(self.line.rsplit(":", 1)[1].split("|"))


CLAIMS = [
    # fused does not switch in place (amp_loop.py says why): the sync alone (no-check) is
    # toggled, the option timed in plain processes; blocks: a multiple of amp_loop's epoch (8)
    Claim("amp_loop", "fused", ROW_IDS["found_inf"],
          "torch/amp/grad_scaler.py:_maybe_opt_step|<genexpr>", sync_alone="no-check",
          timing="toggle", block_steps=16),
    # blocks: a multiple of the Trainer's logging_steps (5)
    Claim("hf_trainer", "nan-filter-off", ROW_IDS["nan_inf_filter"],
          "transformers/trainer.py:_run_epoch", timing="toggle", block_steps=20),
    Claim("hf_trainer", "non-blocking", ROW_IDS["send_to_device"],
          "accelerate/utils/operations.py:send_to_device"),
    # the loss read at each logging step (one in 5): counts only
    Claim("hf_trainer", "log-less", ROW_IDS["log_loss"],
          "transformers/trainer.py:_maybe_log_save_evaluate", by_row=True, count_only=True),
    # blocks: a multiple of lightning_fit's epoch (16)
    Claim("lightning_fit", "prog-bar-off", ROW_IDS["to_item"],
          "lightning/fabric/utilities/apply_func.py:to_item", timing="toggle", block_steps=16),
    Claim("lightning_fit", "pinned", ROW_IDS["batch_to"],
          "lightning/fabric/utilities/apply_func.py:batch_to", expect=("fewer",),
          cls="copy-pageable"),
    Claim("lightning_fit", "metric-no-validate", ROW_IDS["validate_args"],
          "torchmetrics/functional/classification/stat_scores.py:"
          "_multiclass_stat_scores_tensor_validation", by_row=True, count_only=True),
    # DDP: one rank on nccl (the replay prices a job of one rank); the buffers' broadcast waits
    # on the host only on gloo (2 ranks on one GPU: ranks are not priced yet, counts only)
    Claim("ddp_job", "gather-tensor", ROW_IDS["object_collectives"],
          "torch/distributed/distributed_c10d.py:all_gather_object|_object_to_tensor|"
          "_tensor_to_object", by_row=True, args=("--ranks", "1", "--backend", "nccl"),
          tag="nccl1"),
    Claim("ddp_job", "no-nonfinite-check", ROW_IDS["clip_nonfinite"],
          "torch/nn/utils/clip_grad.py:_get_total_norm|clip_grad_norm_",
          args=("--ranks", "1", "--backend", "nccl"), tag="nccl1"),
    Claim("ddp_job", "no-broadcast-buffers", ROW_IDS["broadcast_buffers"],
          "torch/nn/parallel/distributed.py:_distributed_broadcast_coalesced", count_only=True,
          args=("--ranks", "2", "--backend", "gloo"), tag="gloo2"),
]
# amp_loop bf16 and lightning_fit log-every: their counts are in docs/frameworks.md (40 -> 0,
# 120 -> 9); left out here for the device time a run of this check may take


# ---- what one audit's JSON says ----

def site_function(site):
    """The function of a site text "path.py:LINE in FUNC" (None when it names none)."""
    m = re.search(r" in (\S+)$", site or "")
    return m.group(1) if m else None


def in_module(site, module):
    """Whether SITE ("transformers/trainer.py:1847 in _run_epoch") is a line of MODULE; a site
    given with more of its path (".../site-packages/transformers/...") counts too."""
    site = site or ""
    return site.startswith(module + ":") or ("/" + module + ":") in site


def line_matches(via, claim):
    """Whether a row's via (None, a dict with "site"/"function", or a site text) is the claimed
    line: in its module, one of its functions."""
    if not via:
        return False
    if isinstance(via, str):
        site, func = via, site_function(via)
    else:
        site, func = via.get("site"), via.get("function") or site_function(via.get("site"))
    return in_module(site, claim.module) and func in claim.functions


def counted(row):
    """A report row that counts: a blocking call of the run (no poll, no compile time)."""
    return (row.get("phase") != "compile" and row.get("group") != "poll" and
            row.get("class") != "poll")


def row_named(row, claim):
    fw = row.get("framework")
    return bool(fw) and fw.get("id") == claim.row


def line_count(report, claim):
    """The blocking calls at the claimed line (of the claimed class, where it names one), or
    those the claimed row names (by_row)."""
    return sum(int(r.get("count") or 0) for r in report.get("rows") or []
               if counted(r) and (row_named(r, claim) if claim.by_row else
                                  line_matches(r.get("via"), claim)) and
               (claim.cls is None or r.get("class") == claim.cls))


def run_total(report):
    return sum(int(p.get("blocking_calls") or 0) for p in report.get("processes") or [])


def library_lines(report):
    """{via site: blocking calls} of every library line of the run."""
    out = {}
    for r in report.get("rows") or []:
        via = r.get("via")
        if counted(r) and via and via.get("site"):
            out[via["site"]] = out.get(via["site"], 0) + int(r.get("count") or 0)
    return out


def moved(before, after, over=MOVED_OVER):
    """[(site, count before, count after)] of the library lines whose count rose by more than
    OVER from report BEFORE to report AFTER, the largest rise first."""
    b, a = library_lines(before), library_lines(after)
    rows = [(s, b.get(s, 0), n) for s, n in a.items() if n - b.get(s, 0) > over]
    return sorted(rows, key=lambda x: (x[1] - x[2], x[0]))


def predicted(report, claim, steps):
    """(predicted saving at the claimed line in us a step, or None when no predicted line is
    the claimed one; [framework ids named by those lines and the line's report rows that are
    not the claimed row])."""
    total, hits, wrong = 0.0, 0, []
    for p in report.get("processes") or []:
        for x in ((p.get("predicted") or {}).get("lines") or []):
            if line_matches(x.get("via"), claim):
                hits += 1
                total += float(x.get("save_us") or 0.0)
                fw = x.get("framework")
                if fw and fw.get("id") != claim.row:
                    wrong.append(fw.get("id"))
    for r in report.get("rows") or []:
        fw = r.get("framework")
        if fw and counted(r) and line_matches(r.get("via"), claim) and fw.get("id") != claim.row:
            wrong.append(fw.get("id"))
    return (total / steps if hits else None), sorted(set(map(str, wrong)))


# ---- the rules ----

def count_target(claim, before, after):
    """(met, the target as text): after <= expected, a share of before, or fewer than before.
    A line that made no call before cannot show the option removing it: not met."""
    kind = claim.expect[0]
    if kind == "max":
        text, ok = f"<= {claim.expect[1]}", after <= claim.expect[1]
    elif kind == "share":
        text = f"<= {100 * claim.expect[1]:g} % of {before}"
        ok = after <= claim.expect[1] * before
    elif kind == "fewer":
        text, ok = f"< {before}", after < before
    else:
        raise ValueError(f"unknown target {claim.expect!r}")
    if not before:
        return False, text + " (no call before)"
    return ok, text


def spread(diffs):
    """(median, min, max) of the measured savings a step, or Nones."""
    if not diffs:
        return None, None, None
    return statistics.median(diffs), min(diffs), max(diffs)


def error_pct(pred, measured):
    if pred is None or not measured:
        return None
    return 100 * (pred - measured) / abs(measured)


def saving_verdict(pred, diffs):
    """(ok, text) of a predicted saving against the measured ones: below the noise (the spread
    includes 0 and |pred| is below its half-width), within (25 % of the median or inside
    [min, max]), else a miss; no prediction or no measurement is a miss."""
    med, lo, hi = spread(diffs)
    if pred is None:
        return False, "no predicted line"
    if med is None:
        return False, "not measured"
    if lo <= 0 <= hi and abs(pred) < (hi - lo) / 2:
        return True, "below the noise"
    if abs(pred - med) <= TOLERANCE * abs(med) or lo <= pred <= hi:
        return True, "within"
    return False, "predicted off"


def judge(claim, data):
    """One claim's row from DATA: {"skip": reason} or {"error": text}, else the figures
    {"before", "after", "total_before", "total_after", "moved", "predicted", "ids", "diffs"}.
    Its "result" is PASS, MISS, SKIP or ERROR, "verdict" the reason."""
    row = {"claim": claim.name, "program": claim.program, "fix": claim.fix, "row": claim.row,
           "line": claim.line, "timing": claim.timing, "sync_alone": claim.sync_alone,
           "count_only": claim.count_only, **data}
    if data.get("skip"):
        return {**row, "result": "SKIP", "verdict": f"SKIP: {data['skip']}"}
    if data.get("error"):
        return {**row, "result": "ERROR", "verdict": f"ERROR: {data['error']}"}
    why = []
    ok_count, target = count_target(claim, data["before"], data["after"])
    row["target"] = target
    if not ok_count:
        why.append(f"count {data['after']} not {target}")
    if data.get("ids"):
        why.append(f"framework id {', '.join(data['ids'])} is not {claim.row}")
    ok_save, text = saving_verdict(data.get("predicted"), data.get("diffs") or [])
    if claim.count_only:
        ok_save, text = True, "counts only"
    if not ok_save:
        why.append(text)
    med, _, _ = spread(data.get("diffs") or [])
    row["error_pct"] = error_pct(data.get("predicted"), med)
    if why:
        return {**row, "result": "MISS", "verdict": "MISS: " + "; ".join(why)}
    return {**row, "result": "PASS", "verdict": f"PASS: {text}"}


def skip_reason(rc, stderr):
    """The reason a suite program gave for not running (exit 2 with fw_common's line: no CUDA
    device, torch or the framework), else None (an exit 2 of a usage error is no skip)."""
    if rc != 2:
        return None
    for line in reversed((stderr or "").splitlines()):
        m = re.search(r"error: (\S+ is not installed|torch sees no CUDA device)", line)
        if m:
            return m.group(1)
    return None


def overall(rows, note=""):
    """validate's (measured, ok) of all the claims' rows: ok when none is MISS or ERROR and
    some ran; every claim skipped raises (ERROR: nothing was checked)."""
    n = {k: sum(1 for r in rows if r["result"] == k) for k in ("PASS", "MISS", "SKIP", "ERROR")}
    if rows and n["SKIP"] == len(rows):
        reasons = sorted({r["skip"] for r in rows})
        raise RuntimeError(f"every claim skipped ({'; '.join(reasons)}): nothing was checked")
    bad = [r["claim"] for r in rows if r["result"] in ("MISS", "ERROR")]
    text = (f"{len(rows)} claims: {n['PASS']} PASS, {n['MISS']} MISS, {n['SKIP']} SKIP, "
            f"{n['ERROR']} ERROR" + (f" ({', '.join(bad)})" if bad else "") + note)
    return text, not bad


# ---- the table ----

def fmt(x, digits=1):
    return "-" if x is None else f"{x:.{digits}f}"


def figures_text(diffs):
    """"median [min, max] (rounds)" of DIFFS, or "-"."""
    med, lo, hi = spread(diffs or [])
    return "-" if med is None else f"{med:.1f} [{lo:.1f}, {hi:.1f}] ({len(diffs)})"


def measured_text(r):
    """The measured cell: the judged saving, how it was measured (in-process, B blocks; or
    plain processes), and the option's own beside a sync-alone variant's."""
    text = figures_text(r.get("diffs"))
    if r.get("timing") == "toggle":
        text = f"in-process, {r.get('blocks', BLOCKS)} blocks: {text}"
    if r.get("sync_alone"):
        text = (f"sync alone ({r['sync_alone']}), {text}; the option, plain processes: "
                f"{figures_text(r.get('option_diffs'))}")
    return text


def cells(r):
    if r["result"] in ("SKIP", "ERROR"):
        return [r["claim"], r["row"], "-", "-", "-", "-", "-", "-", r["verdict"]]
    mv = ", ".join(f"{s} {b}->{a}" for s, b, a in r.get("moved") or []) or "none"
    measured = measured_text(r) if not r.get("count_only") else "-"
    err = r.get("error_pct")
    return [r["claim"], r["row"], f"{r['before']} -> {r['after']} ({r.get('target', '')})",
            f"{r['total_before']} -> {r['total_after']}", mv, measured, fmt(r.get("predicted")),
            "-" if err is None else f"{err:+.0f} %", r["verdict"]]


HEAD = ("claim", "row id", "line count before -> after", "run total before -> after",
        "moved lines", "measured us/step median [min, max] (rounds)", "predicted us/step",
        "error", "verdict")


def table(rows, note=""):
    body = [[" ".join(str(c).split()).replace("|", "/") for c in cells(r)] for r in rows]
    width = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(HEAD)]
    line = lambda xs: "| " + " | ".join(x.ljust(w) for x, w in zip(xs, width)) + " |"  # noqa
    out = [line(HEAD), line(["-" * w for w in width])] + [line(b) for b in body]
    return "\n".join(out + ([note.strip()] if note else []))


# ---- running the programs ----

def subprocess_runner(cmd, timeout):
    """(exit code, stdout, stderr) of CMD."""
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       cwd=ROOT)
    return r.returncode, r.stdout, r.stderr


def last_json(stdout):
    """The JSON object a suite program prints last, or None."""
    for line in reversed((stdout or "").splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def step_us_of(stdout):
    """The step_us of the JSON line a suite program prints last, or None."""
    return (last_json(stdout) or {}).get("step_us")


def toggle_saving(stdout, first, blocks):
    """(the step_us_saving of a toggled process's last JSON line, None), or (None, why not):
    no such line, other than BLOCKS blocks, or a first block not FIRST's ("sync": the fix off,
    "fixed": on)."""
    line = last_json(stdout) or {}
    got = line.get("blocks") or []
    if line.get("step_us_saving") is None:
        return None, "no step_us_saving in its last JSON line"
    if len(got) != blocks:
        return None, f"{len(got)} blocks, not {blocks}"
    if got[0].get("variant") != first:
        return None, f"the first block is {got[0].get('variant')!r}, not {first!r}"
    return float(line["step_us_saving"]), None


def first_of(rnd):
    """The variant of round RND's first block (from 1): the fix off in odd rounds, on in even."""
    return "sync" if rnd % 2 else "fixed"


def plain_variants(claim):
    """[(key of the round's figures, --fix)] of CLAIM's plain runs a round, each against the
    round's plain baseline: the option's own ("option_diffs") beside a sync-alone variant, and
    the judged one ("diffs") unless a toggled process measures it."""
    if claim.count_only:
        return []
    out = [("option_diffs", claim.fix)] if claim.sync_alone else []
    if claim.timing == "plain":
        out.append(("diffs", claim.toggled))
    return out


class Suite:
    """The runs of the claims' programs: the audits, then the rounds across programs within the
    budget (a program's round: its plain runs, then a toggled process per toggle claim); RUNNER
    and CLOCK are the test's to replace."""

    def __init__(self, claims, out, python=None, binary=None, steps=STEPS, warmup=WARMUP,
                 rounds=ROUNDS, budget_s=BUDGET_S, runner=subprocess_runner,
                 clock=time.monotonic, log=None, blocks=BLOCKS):
        self.claims, self.out = claims, pathlib.Path(out)
        self.python = python or os.environ.get("TORCH_PYTHON") or "python3"
        self.binary = binary or os.environ.get("SYNCBENCH") or str(ROOT / "build" / "syncbench")
        self.steps, self.warmup, self.rounds, self.budget_s = steps, warmup, rounds, budget_s
        self.blocks = blocks
        self.runner, self.clock = runner, clock
        self.log = log or (lambda text: print(f"frameworks: {text}", file=sys.stderr,
                                              flush=True))
        self.records = []
        self.note = ""

    def program_cmd(self, key, fix, toggle=None):
        """The command of the program KEY names (a claim's program_key) with FIX: a plain run's,
        or with TOGGLE (the claim, the round's first variant) a toggled process's, the claim's
        fix switched between BLOCKS blocks of its block_steps."""
        program, args = next((c.program, c.args) for c in self.claims if c.program_key == key)
        head = [self.python, SUITE / f"{program}.py", *args, "--size", "gpu"]
        if toggle:
            claim, first = toggle
            return head + ["--steps", claim.block_steps, "--warmup", self.warmup, "--alternate",
                           claim.toggled, "--blocks", self.blocks, "--first", first]
        cmd = head + ["--steps", self.steps, "--warmup", self.warmup]
        return cmd + (["--fix", fix] if fix else [])

    def record(self, **x):
        self.records.append(x)
        with open(self.out / "frameworks.jsonl", "a") as f:
            f.write(json.dumps(x, default=str) + "\n")

    def command(self, kind, program, fix, toggle):
        """(the command, the audit's JSON path or None) of one run."""
        if kind != "audit":
            return self.program_cmd(program, fix, toggle), None
        path = self.out / f"{program}-{fix or 'baseline'}.json"
        return [self.binary, "audit", "-q", "--gpu-activity", "--json", path, "--",
                *self.program_cmd(program, fix)], path

    def run(self, kind, program, fix, rnd=None, toggle=None):
        """(rc, stderr, value) of one audited ("audit": the report), plain ("plain": its
        step_us) or toggled run ("toggle": its step_us_saving; TOGGLE: the claim and the
        round's first variant)."""
        label = f"{program}{' --fix ' + fix if fix else ''}"
        if toggle:
            label = f"{program} --alternate {toggle[0].toggled}, {toggle[1]} first"
        t = self.clock()
        cmd, path = self.command(kind, program, fix, toggle)
        self.log(f"{kind} {label}" + (f" (round {rnd})" if rnd else ""))
        try:
            rc, stdout, stderr = self.runner(cmd, RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            rc, stdout, stderr = 124, "", f"timed out after {RUN_TIMEOUT_S} s"
        value, why = None, None
        if rc == 0 and kind == "audit":
            try:
                value = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                why = f"the audit's JSON: {e}"
        elif rc == 0 and kind == "toggle":
            value, why = toggle_saving(stdout, toggle[1], self.blocks)
        elif rc == 0:
            value = step_us_of(stdout)
            why = None if value is not None else "no step_us in its last JSON line"
        if why:
            rc, stderr = 1, f"{stderr}\n{why}"
        tail = " ".join((stderr or "").strip().splitlines()[-2:])[-300:]
        self.record(kind=kind, program=program, fix=toggle[0].toggled if toggle else fix or None,
                    round=rnd, first=toggle[1] if toggle else None, rc=rc,
                    seconds=round(self.clock() - t, 2), cmd=" ".join(map(str, cmd)),
                    step_us=value if kind == "plain" else None,
                    step_us_saving=value if kind == "toggle" else None,
                    blocks=(last_json(stdout) or {}).get("blocks") if kind == "toggle" else None,
                    json=str(path) if path else None, stderr=tail)
        return rc, stderr, value

    @staticmethod
    def failure(kind, fix, rc, stderr):
        """{"skip": ...} or {"error": ...} of a run that failed."""
        reason = skip_reason(rc, stderr)
        if reason:
            return {"skip": reason}
        tail = " ".join((stderr or "").strip().splitlines()[-1:])[-200:]
        return {"error": f"{kind} of {fix or 'the baseline'}: exit {rc}: {tail}"}

    def audit(self, programs):
        """{claim: data for judge()} from the audits: a program's baseline, then each fix."""
        data = {}
        for prog in programs:
            mine = [c for c in self.claims if c.program_key == prog]
            rc, err, base = self.run("audit", prog, None)
            if rc != 0:
                for c in mine:
                    data[c] = self.failure("the audit", None, rc, err)
                continue
            for c in mine:
                rc, err, rep = self.run("audit", prog, c.fix)
                if rc != 0:
                    data[c] = self.failure("the audit", c.fix, rc, err)
                    continue
                pred, ids = predicted(base, c, self.steps)
                data[c] = {"before": line_count(base, c), "after": line_count(rep, c),
                           "total_before": run_total(base), "total_after": run_total(rep),
                           "moved": moved(base, rep), "predicted": pred, "ids": ids,
                           "diffs": []}
                if c.timing == "toggle":
                    data[c]["blocks"] = self.blocks
        return data

    def timed(self, prog, data):
        """PROG's claims (by program_key) still to time: audited, not failed since, not
        count-only."""
        return [c for c in self.claims if c.program_key == prog and "diffs" in data[c]
                and not c.count_only]

    def measure(self):
        """{claim: data for judge()}."""
        t0 = self.clock()
        programs = list(dict.fromkeys(c.program_key for c in self.claims))
        data = self.audit(programs)
        live = [p for p in programs if self.timed(p, data)]
        done, last = {p: 0 for p in live}, {}
        for rnd in range(1, self.rounds + 1):
            for prog in live:
                mine = self.timed(prog, data)
                if not mine:
                    continue
                elapsed = self.clock() - t0
                if rnd > 1 and elapsed + last.get(prog, 0.0) > self.budget_s:
                    self.note = (f"budget {self.budget_s:.0f} s: rounds stopped at "
                                 f"{elapsed:.0f} s; rounds run: " +
                                 ", ".join(f"{p} {done[p]} of {self.rounds}" for p in live))
                    self.log(self.note)
                    return data
                t = self.clock()
                self.time_round(prog, mine, data, rnd)
                done[prog], last[prog] = rnd, self.clock() - t
        return data

    def time_round(self, prog, mine, data, rnd):
        """Round RND of PROG's claims MINE: a plain baseline and the plain runs the claims need,
        then one toggled process per toggle claim, its first block the round's (first_of)."""
        plain = [c for c in mine if plain_variants(c)]
        if plain:
            rc, err, base_us = self.run("plain", prog, None, rnd)
            for c in plain:
                if rc != 0:
                    data[c] = self.failure("a plain run", None, rc, err)
                else:
                    self.time_variants(c, data, prog, base_us, rnd)
        for c in mine:
            if c.timing != "toggle" or "diffs" not in data[c]:
                continue
            rc, err, saving = self.run("toggle", prog, None, rnd, toggle=(c, first_of(rnd)))
            if rc != 0:
                data[c] = self.failure("a toggled run", c.toggled, rc, err)
            else:
                data[c]["diffs"].append(saving)

    def time_variants(self, claim, data, prog, base_us, rnd):
        """One round's plain runs of CLAIM (plain_variants): the savings against BASE_US go to
        data[claim][key]."""
        for key, fix in plain_variants(claim):
            rc, err, fix_us = self.run("plain", prog, fix, rnd)
            if rc != 0:
                data[claim] = self.failure("a plain run", fix, rc, err)
                return
            data[claim].setdefault(key, []).append(base_us - fix_us)

    def rows(self):
        data = self.measure()
        rows = [judge(c, data[c]) for c in self.claims]
        for r in rows:
            self.record(kind="claim", **{k: v for k, v in r.items() if k != "kind"})
        text = table(rows, self.note)
        (self.out / "frameworks.md").write_text(text + "\n")
        return rows, text


def rounds_default():
    for var in ("SYNCBENCH_FRAMEWORKS_ROUNDS", "SYNCBENCH_REPLAY_ROUNDS"):
        if os.environ.get(var):
            return int(os.environ[var])
    return ROUNDS


@check("frameworks: each option the framework table claims, on the GPU (tests/frameworks/: "
       "the claimed line's calls, before -> after, audited; the predicted saving a step "
       "against the measured one: toggled in one process where the option switches in "
       "place, else plain runs alternating)",
       "count after <= the claim's; predicted within 25 % or the measured [min, max] (or "
       "below the noise); every claim skipped fails", GROUP)
def frameworks():
    suite = Suite(CLAIMS, workdir("frameworks"), rounds=rounds_default(),
                  budget_s=float(os.environ.get("SYNCBENCH_FRAMEWORKS_BUDGET_S") or BUDGET_S))
    rows, text = suite.rows()
    print(text, file=sys.stderr, flush=True)
    return overall(rows, f"; {suite.note}" if suite.note else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=rounds_default())
    ap.add_argument("--budget-s", type=float,
                    default=float(os.environ.get("SYNCBENCH_FRAMEWORKS_BUDGET_S") or BUDGET_S))
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--warmup", type=int, default=WARMUP)
    ap.add_argument("--blocks", type=int, default=BLOCKS,
                    help=f"a toggled process's timed blocks, even ({BLOCKS})")
    ap.add_argument("--program", help="only these programs' claims (comma-separated)")
    ap.add_argument("--timing", choices=TIMINGS,
                    help="only the claims whose saving is measured so")
    ap.add_argument("--out", help="where the files go (a temporary folder)")
    a = ap.parse_args(argv)
    if a.blocks < 2 or a.blocks % 2:
        ap.error("--blocks must be even and at least 2 (pairs of the fix off and on)")
    claims = CLAIMS
    if a.program:
        names = set(a.program.split(","))
        claims = [c for c in CLAIMS if c.program in names or c.program_key in names]
        if not claims:
            ap.error(f"no claim of {a.program!r}")
    if a.timing:
        claims = [c for c in claims if c.timing == a.timing]
        if not claims:
            ap.error(f"no claim timed by {a.timing}")
    out = pathlib.Path(a.out) if a.out else workdir("frameworks")
    out.mkdir(parents=True, exist_ok=True)
    suite = Suite(claims, out, steps=a.steps, warmup=a.warmup, rounds=a.rounds,
                  budget_s=a.budget_s, blocks=a.blocks)
    rows, text = suite.rows()
    print(text)
    try:
        measured, ok = overall(rows)
    except RuntimeError as e:
        measured, ok = str(e), False
    print(f"frameworks: {measured}; files in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
