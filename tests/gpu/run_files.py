#!/usr/bin/env python3
"""Runs pytest jobs side by side, for `make test`: one pytest process per job, at most JOBS at
once, the longest expected first; prints each job's summary line as it ends, the output of every
job that failed, a line with the errors and the jobs that failed, and last, alone on its line,
`N passed, N failed, N skipped` (errors counted as failed). Exit 1 when a job failed (pytest's exit 1 to 4, a signal, or its time limit), else 0.

    run_files.py [-j JOBS] [--timeout S] [--logs DIR] [--] JOB...

A JOB is a test file or a folder; a folder of tests/gpu/ is split into one job per test_*.py
file, a folder named with a trailing '/.' stays one job, except tests/cli/. (CLI_MAKE below). SPLIT below cuts a long file into jobs by -k expression.

Side by side is safe because no GPU test compares a measured time with a threshold or with
another (those are tests/validate/'s, `make validate`): contention makes them slower, never
wrong. Each job gets a --basetemp of its own; its whole output goes to DIR/JOB.log."""
import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

# Seconds a job took, side by side with 16 at a time on the H200 (2026-11-29, second timing; a
# split file's figure is its parts' sum, shared out evenly): the order jobs start in, the longest
# first. The CLI jobs come first too: started last, beside nothing but each other, they had held
# make test past 5 minutes; "cli" is chosen, not measured, to put its parts (160 s each) among
# the first. A file not listed counts 30 s. Each job's log ends with its ten slowest tests.
EXPECTED = {
    "cli": 800, "test_replay.py": 773, "test_sanitizer.py": 292, "test_audit_window.py": 294,
    "test_suite.py": 210, "test_audit_threads.py": 158, "test_gemm.py": 145,
    "test_audit_python.py": 102, "test_audit_fixes.py": 98, "test_baseline_generate.py": 96,
    "test_python_syncs.py": 94, "test_baseline_plugin.py": 84, "test_baseline_train.py": 81,
    "test_fixes_b.py": 39, "test_fixes_a.py": 35, "test_audit_libsites.py": 33,
    "test_ci_annotations.py": 32, "test_audit.py": 52, "test_faults.py": 27,
    "test_baseline_threads.py": 24, "test_audit_ranks.py": 21, "test_audit_jax.py": 19,
    "test_scenarios.py": 10, "test_multi_gpu.py": 8, "test_kill.py": 8, "test_no_cublas.py": 7,
}
# Files cut into several jobs (each a -k expression; together they select every test).
SPLIT = {
    "test_sanitizer.py": ["memcheck or small_size", "racecheck", "synccheck"],
    "test_replay.py": ["truth", "fix", "ddp_job", "not truth and not fix and not ddp_job"],
    "test_audit_window.py": ["scaled", "torch", "not scaled and not torch"],
}
# tests/cli/. alone took over 4 minutes on the H100 beside the GPU jobs (one process, 860 tests):
# it runs as several jobs, the files that run make in one of them (they share build/), the
# others dealt round-robin into CLI_CHUNKS jobs.
CLI_MAKE = ("test_build.py", "test_docs.py", "test_gate.py", "test_man.py",
            "test_python_package.py", "test_wheel.py")
CLI_CHUNKS = 4
COUNTS = ("passed", "failed", "skipped", "errors", "xfailed", "xpassed", "deselected")


class Job:
    def __init__(self, path, expr=None, files=None, part=None):
        """path: a file or a folder; files (with part, its name): those of the folder path."""
        self.path, self.expr, self.files = path, expr, files
        name = path.rstrip("/.").replace("/", "_") + (f"-{part}" if part else "")
        self.name = name + (f"-{re.sub(r'[^a-z0-9]+', '_', expr)}" if expr else "")
        base = os.path.basename(path.rstrip("/."))
        parts = CLI_CHUNKS + 1 if files else len(SPLIT.get(base, [])) or 1
        self.expected = EXPECTED.get(base, 30) / parts
        self.proc = self.log = self.start = None
        self.counts, self.summary, self.rc, self.seconds = {}, "", None, 0.0

    def argv(self, python, basetemp):
        cmd = [python, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider", "--durations=10",
               f"--basetemp={basetemp}"] + (self.files or [self.path.rstrip("/.") or "."])
        return cmd + (["-k", self.expr] if self.expr else [])


def cli_jobs(path):
    """tests/cli/. as CLI_CHUNKS + 1 jobs (CLI_MAKE's files in one)."""
    files = sorted(str(f) for f in pathlib.Path(path[:-2]).glob("test_*.py"))
    make = [f for f in files if os.path.basename(f) in CLI_MAKE]
    rest = [f for f in files if f not in make]
    chunks = [rest[i::CLI_CHUNKS] for i in range(CLI_CHUNKS)]
    return [Job(path, files=make, part="make")] + [
        Job(path, files=c, part=str(i + 1)) for i, c in enumerate(chunks) if c]


def jobs_of(paths):
    jobs = []
    for p in paths:
        if p.endswith("/.") or os.path.isfile(p):
            jobs.append(p)
        elif os.path.isdir(p):
            jobs += sorted(str(f) for f in pathlib.Path(p).glob("test_*.py"))
        else:
            sys.exit(f"run_files.py: {p}: no such file or folder")
    out = []
    for p in jobs:
        if p.endswith("/.") and os.path.basename(p[:-2]) == "cli":
            out += cli_jobs(p)
            continue
        exprs = SPLIT.get(os.path.basename(p))
        out += [Job(p, e) for e in exprs] if exprs else [Job(p)]
    return out


def parse(text):
    """(counts, summary line) of pytest -q's output: its last line that counts anything."""
    for line in reversed(text.splitlines()):
        found = re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)",
                           line)
        if found:
            counts = {}
            for n, what in found:
                what = "errors" if what.startswith("error") else what
                counts[what] = counts.get(what, 0) + int(n)
            return counts, line.strip("= ").strip()
        if "no tests ran" in line:
            return {}, line.strip("= ").strip()
    return {}, "(no summary line)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-j", "--jobs", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=900, help="seconds a job may take")
    ap.add_argument("--logs", default=None, help="folder for each job's output")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    jobs = jobs_of(a.paths)
    todo = sorted(jobs, key=lambda j: -j.expected)
    logs = pathlib.Path(a.logs or tempfile.mkdtemp(prefix="syncbench-tests-"))
    logs.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="syncbench-pytest-"))
    running, done = [], []
    t0 = time.monotonic()
    print(f"run_files.py: {len(jobs)} jobs, {a.jobs} at a time; logs in {logs}", flush=True)
    try:
        while todo or running:
            while todo and len(running) < max(a.jobs, 1):
                job = todo.pop(0)
                job.log = open(logs / f"{job.name}.log", "w+")
                job.start = time.monotonic()
                job.proc = subprocess.Popen(job.argv(a.python, tmp / job.name), stdout=job.log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
                running.append(job)
            time.sleep(0.2)
            for job in list(running):
                rc = job.proc.poll()
                late = time.monotonic() - job.start > a.timeout
                if rc is None and not late:
                    continue
                if rc is None:
                    os.killpg(job.proc.pid, signal.SIGKILL)
                    job.proc.wait()
                    rc = -signal.SIGKILL
                    job.log.write(f"\nrun_files.py: killed after {a.timeout:.0f} s\n")
                running.remove(job)
                done.append(job)
                job.rc, job.seconds = rc, time.monotonic() - job.start
                job.log.flush()
                job.log.seek(0)
                text = job.log.read()
                job.log.close()
                job.counts, job.summary = parse(text)
                # 0: passed; 5: nothing collected (a -k that selects nothing here)
                ok = rc in (0, 5)
                which = job.path + (f" -k {job.expr!r}" if job.expr else "")
                print(f"{'ok  ' if ok else 'FAIL'} {which}: {job.summary} [{job.seconds:.1f} s]",
                      flush=True)
                if not ok:
                    print(f"---- {job.name}: exit {rc}, its output ({logs / (job.name + '.log')}):")
                    print(text[-20000:], flush=True)
                    print(f"---- end of {job.name}", flush=True)
    except KeyboardInterrupt:
        for job in running:
            os.killpg(job.proc.pid, signal.SIGKILL)
        raise
    total = {k: sum(j.counts.get(k, 0) for j in done) for k in COUNTS}
    failed = [j for j in done if j.rc not in (0, 5)]
    extra = "".join(f", {total[k]} {k}" for k in ("xfailed", "xpassed") if total[k])
    print(f"run_files: {total['errors']} errors{extra}, {len(failed)} of {len(done)} jobs "
          f"failed, in {time.monotonic() - t0:.1f} s")
    # last, alone on its line: the closing line CI systems read
    print(f"{total['passed']} passed, {total['failed'] + total['errors']} failed, "
          f"{total['skipped']} skipped", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
