"""What the GPU tests share beside tests/conftest.py: fixed repetition counts and the sched
helper processes a run left behind.

The GPU tests check correctness only (exact counts, schema, exit codes, damaged results caught),
never a measured time against a threshold or against another: those figures are
tests/validate/'s (`make validate`). A count must not depend on how fast the host is, so every
run that a count is read from measures a fixed number of repetitions (FIXED) instead of stopping
on time or on its cv."""
import os
import time

from conftest import BIN


def fixed(reps=3, warmup=1):
    """Exactly `warmup` warm-up repetitions and `reps` measured ones, whatever the host's
    speed (--warmup-time 0: no time floor on the warm-up)."""
    return ("--min-reps", str(reps), "--max-reps", str(reps), "--warmup", str(warmup),
            "--warmup-time", "0")


FIXED = fixed()


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _is_syncbench(pid):
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(BIN)
    except OSError:
        return False


def _orphan_workers(marker):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"__sched-worker" not in f.read():
                    continue
            if marker is not None:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if marker.encode() not in f.read().split(b"\0"):
                        continue
        except OSError:
            continue
        parent = _ppid(pid)
        if parent is not None and not _is_syncbench(parent):
            found.append(int(pid))
    return found


def leaked_sched_workers(marker=None, grace_s=2.0):
    """The sched scenario's helper processes whose syncbench is gone (orphans): what a run that
    ended left behind. A worker of a run still going (another test file's, when make test runs
    files side by side) has its syncbench as its parent and is not counted; MARKER ("NAME=VALUE"
    in the worker's environment, which it inherits from the run) keeps to this test's runs. One
    found is looked at again for GRACE_S: another run's worker that outlives its syncbench by a
    moment while it exits (seen on the H200 with 16 test files side by side) is gone by then."""
    found = _orphan_workers(marker)
    deadline = time.monotonic() + grace_s
    while found and time.monotonic() < deadline:
        time.sleep(0.1)
        found = [p for p in _orphan_workers(marker) if p in found]
    return found
