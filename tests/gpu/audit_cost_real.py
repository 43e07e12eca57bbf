#!/usr/bin/env python3
"""What the audit costs real programs (issue 36): a PyTorch training loop (tests/audit/
torch_train.py --size gpu: an MLP, about 7 ms a step on an H100, the loss read back each step)
and a generation loop (tests/audit/hf_generate.py: a transformers GPT-2 from a small config,
greedy with the KV cache, the stop checked each token), each run plain, under `syncbench audit`,
under `syncbench audit --gpu-activity` and with each step inside `syncbench.no_syncs()` (the
programs' --no-syncs ALLOW), every run a process of its own, the modes in a rotating order
round by round. Each program times its steady state itself (after its warm-up; its start-up,
the audit's and the analysis after it are not counted) and prints steps or tokens a second.
--gpu-activity runs without its calibration (SYNCBENCH_ACTIVITY_CALIBRATE=0): it runs before the
program and costs it nothing, but 3 to 5 s a run.

    audit_cost_real.py --out DIR [--rounds 5] [--budget-s 220] [--steps 100]
                       [--generations 1] [--new-tokens 128] [--allow 4] [--only train,generate]
                       [--modes plain,audit,gpu,no_syncs]

--modes may add audit-nowaits (the default mode without the waits library's hand-offs,
SYNCBENCH_ACTIVITY_OFF=waits) and audit-nostacks (--depth 0 --no-python): where the default
mode's cost goes; and audit-turns (the training loops only): the default mode with the recording
on and off in --turn-blocks blocks of the steps within each process (torch_train.py
--recording-turns), whose pairs of blocks, pooled over the runs, give the recording's cost
without the drift between processes (its rate is the recorded blocks').
train-host is the training loop at its host-bound size (torch_train.py --size host: a small MLP,
about 1.2 ms a step on an H200), for the default mode's cost where the host's time is the step's
(issue 49).

A round is started only while it fits the budget (seconds from the start; the previous round's
time as its estimate), and no run starts a minute past it; each run is limited to --run-timeout
seconds (its whole process group killed then). A program that cannot run here (exit 2: no CUDA device for torch, no
transformers) is dropped with its reason. Writes DIR/real.jsonl (every run: program, mode, round,
rate, its JSON line, exit code, seconds), DIR/real.txt (the table: per program and mode, the rate's
median [min, max], and the slowdown against plain: the median [min, max] over rounds of plain's
rate / the mode's - 1) and DIR/real.err (the stderr of failed runs); prints the table.
SYNCBENCH: the binary (default build/syncbench); TORCH_PYTHON: the interpreter with torch (and
transformers) (default python3); python/ goes first on PYTHONPATH (the syncbench package)."""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cost_stats  # noqa: E402  (beside this file)

B = os.environ.get("SYNCBENCH", os.path.join(ROOT, "build", "syncbench"))
PY = os.environ.get("TORCH_PYTHON", "python3")
AUDIT = os.path.join(ROOT, "tests", "audit")
MODES = ("plain", "audit", "gpu", "no_syncs", "audit-nowaits", "audit-nostacks", "audit-turns")
DEFAULT_MODES = MODES[:4]
UNITS = {"train": "steps/s", "train-host": "steps/s", "generate": "tokens/s"}


def program(name, a):
    """The program's command line (its syncing variant: the loop as users write it)."""
    if name in ("train", "train-host"):
        size = "gpu" if name == "train" else "host"
        return [PY, os.path.join(AUDIT, "torch_train.py"), "--variant", "sync", "--size", size,
                "--steps", str(a.steps)]
    return [PY, os.path.join(AUDIT, "hf_generate.py"), "--variant", "sync", "--generations",
            str(a.generations), "--new-tokens", str(a.new_tokens)]


def command(prog, mode, a):
    """(argv, extra environment) of one run."""
    cmd = program(prog, a)
    if mode == "audit":
        return [B, "audit", "-q", "--"] + cmd, {}
    # where the default mode's cost goes: without the hand-offs (the waits library), without
    # the stacks (native and Python); what stays is the CUPTI callbacks' and the records'
    if mode == "audit-nowaits":
        return [B, "audit", "-q", "--"] + cmd, {"SYNCBENCH_ACTIVITY_OFF": "waits"}
    if mode == "audit-turns":
        return [B, "audit", "-q", "--"] + cmd + ["--recording-turns", str(a.turn_blocks)], {}
    if mode == "audit-nostacks":
        return [B, "audit", "-q", "--depth", "0", "--no-python", "--"] + cmd, {}
    if mode == "gpu":
        return [B, "audit", "-q", "--gpu-activity", "--"] + cmd, {
            "SYNCBENCH_ACTIVITY_CALIBRATE": "0"}
    if mode == "no_syncs":
        return cmd + ["--no-syncs", str(a.allow)], {}
    return cmd, {}


def rotated(modes, r):
    """The modes in round r's order: each mode in each place once every len(modes) rounds."""
    k = r % len(modes)
    return list(modes[k:]) + list(modes[:k])


def run_once(argv, env, timeout):
    """(exit code, stdout, stderr, seconds); on the time limit the whole process group is
    ended (TERM, then KILL) and the exit code is None."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                break
            try:
                out, err = p.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            out, err = "", ""
        rc = None
        err = (err or "") + f"\n(killed after {timeout} s)"
    return rc, out or "", err or "", time.monotonic() - t0


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict):
            return o
    return None


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=220)
    ap.add_argument("--run-timeout", type=float, default=120)
    ap.add_argument("--steps", type=int, default=100, help="the training loop's timed steps")
    ap.add_argument("--generations", type=int, default=1)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--allow", type=int, default=4,
                    help="no_syncs(allow=ALLOW) around each step (the loops' own sync: 1)")
    ap.add_argument("--turn-blocks", type=int, default=8,
                    help="audit-turns: blocks a process, the recording on and off in turns (8)")
    ap.add_argument("--only", default="train,generate")
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help="the modes run (plain always): " + ", ".join(MODES[1:]))
    a = ap.parse_args()
    a.programs = [p for p in a.only.split(",") if p]
    bad = [p for p in a.programs if p not in UNITS]
    if bad:
        ap.error(f"--only: no program {bad[0]} (train, train-host, generate)")
    asked = [m for m in a.modes.split(",") if m]
    bad = [m for m in asked if m not in MODES]
    if bad:
        ap.error(f"--modes: no mode {bad[0]} ({', '.join(MODES)})")
    a.modes = tuple(m for m in MODES if m == "plain" or m in asked)
    if "audit-turns" in a.modes and "generate" in a.programs:
        ap.error("--modes audit-turns: the training loops only (--only train,train-host)")
    if a.turn_blocks < 2:
        ap.error("--turn-blocks must be at least 2 (an on block and an off one)")
    return a


def main():
    a = parse()
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    start, last, results, dropped, runs = time.monotonic(), 0.0, [], {}, []
    with open(os.path.join(a.out, "real.jsonl"), "w") as log, \
            open(os.path.join(a.out, "real.err"), "w") as errlog:
        for r in range(1, a.rounds + 1):
            elapsed = time.monotonic() - start
            if r > 1 and elapsed + last >= a.budget_s:
                print(f"budget: {r - 1} rounds in {elapsed:.0f} s; round {r} would not fit "
                      f"{a.budget_s:.0f} s", flush=True)
                break
            t_round = time.monotonic()
            for prog in a.programs:
                if prog in dropped:
                    continue
                for mode in rotated(a.modes, r):
                    if time.monotonic() - start > a.budget_s + 60:  # a round ran far over
                        break
                    argv, extra = command(prog, mode, a)
                    rc, out, err, secs = run_once(argv, {**env, **extra}, a.run_timeout)
                    o = last_json(out) if rc == 0 else None
                    step_us = o.get("step_us", o.get("on_us")) if o else None
                    rate = 1e6 / step_us if step_us else None
                    results.append((prog, mode, r, rate))
                    runs.append({"program": prog, "mode": mode, "round": r, "rate": rate,
                                 "rc": rc, "seconds": round(secs, 2), "out": o})
                    log.write(json.dumps(runs[-1]) + "\n")
                    log.flush()
                    if rate is None:
                        errlog.write(f"== {prog} {mode} round {r}: exit {rc}\n{err[-3000:]}\n")
                        errlog.flush()
                    # the program says it cannot run here (no CUDA for torch, no transformers)
                    if rc == 2 and os.path.basename(program(prog, a)[1]) + ":" in err:
                        dropped[prog] = (err.strip().splitlines() or ["exit 2"])[-1]
                        break
            last = time.monotonic() - t_round
            print(f"round {r}: {last:.0f} s", flush=True)
    order = {m: i for i, m in enumerate(MODES)}
    kept = sorted((x for x in results if x[0] not in dropped),
                  key=lambda x: (a.programs.index(x[0]), order[x[1]], x[2]))
    rows = cost_stats.rates_rows(kept)
    text = cost_stats.rates_table(rows, UNITS)
    for prog, why in dropped.items():
        text += f"\n{prog}: not run here: {why}"
    for prog in a.programs:
        seen = [o["out"]["syncs_per_block"] for o in runs
                if o["program"] == prog and o["mode"] == "no_syncs" and o["out"]
                and o["out"].get("syncs_per_block") is not None]
        if seen:
            text += (f"\n{prog}: each no_syncs block made %s blocking call(s) (median)"
                     % cost_stats.fmt(cost_stats.spread(seen)[1]))
        turns = cost_stats.turns_summary(o["out"] for o in runs if o["program"] == prog
                                         and o["mode"] == "audit-turns" and o["out"])
        if turns[0]:
            text += (f"\n{prog}: the recording on over off within a process, {turns[0]} pairs of "
                     f"blocks: {cost_stats.pct(1 + turns[1])} (95 % interval "
                     f"[{cost_stats.pct(1 + turns[2])}, {cost_stats.pct(1 + turns[3])}])")
    text += f"\n({time.monotonic() - start:.0f} s; no_syncs(allow={a.allow}) around each step)"
    with open(os.path.join(a.out, "real.txt"), "w") as f:
        f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
