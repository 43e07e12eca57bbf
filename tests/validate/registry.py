"""The checks of `make validate` and what they share: the registry (@check), the measurements
several checks read (@shared: made once, on first use), and running syncbench for its medians.

A check is a small function with its name, its target and what it measured: it returns
(measured, ok), `measured` a short text with the figures and `ok` whether they meet the target
(None where a reported figure has no target, or where a held figure's model disclaims it this
time: a NOTE either way). It raises Skip where it does not apply to this
machine (fewer than 2 GPUs); anything else it raises means it could not run (ERROR)."""
import csv
import dataclasses
import functools
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent
for p in (TESTS, TESTS / "gpu"):  # tests/conftest.py, tests/gpu/'s helpers and measurements
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from conftest import BIN, ROOT, run, torch_python  # noqa: E402  (after the path)


class Skip(Exception):
    """The check does not apply to this machine (SKIP: not a failure)."""


@dataclasses.dataclass
class Check:
    name: str
    group: str
    target: str
    func: object
    held: bool = True   # False: reported (NOTE), never a failure
    full: bool = False  # only with --full (long)


CHECKS = []


def check(name, target, group, held=True, full=False):
    """Registers FUNC(): (measured text, ok) as a check."""
    def deco(func):
        CHECKS.append(Check(name, group, target, func, held, full))
        return func
    return deco


_memo = {}


def shared(func):
    """A measurement several checks read: made once, on first use; if it fails, every check
    that reads it reports the same error."""
    @functools.wraps(func)
    def wrapper(*args):
        key = (func.__name__, args)
        if key not in _memo:
            try:
                _memo[key] = (True, func(*args))
            except Exception as e:  # noqa: BLE001 (kept for the other readers)
                _memo[key] = (False, e)
        ok, value = _memo[key]
        if ok:
            return value
        raise value
    return wrapper


_work = None


def workdir(name):
    """A fresh folder for one measurement's files, under --keep DIR or a temporary folder."""
    global _work
    if _work is None:
        _work = pathlib.Path(os.environ.get("SYNCBENCH_VALIDATE_KEEP") or
                             tempfile.mkdtemp(prefix="syncbench-validate-"))
    d = _work / name
    n = 1
    while d.exists():
        n += 1
        d = _work / f"{name}-{n}"
    d.mkdir(parents=True)
    return d


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def measure(name, *args, env=None):
    """{(variant, params, metric): median} of one syncbench run, which must succeed."""
    out = workdir(name) / "out.csv"
    r = run(*args, "--csv", out, "-q", env=env)
    if r.returncode != 0:
        raise RuntimeError(f"syncbench {' '.join(map(str, args))}: exit {r.returncode}: "
                           f"{r.stderr.strip()[-300:]}")
    return {(row["variant"], row["params"], row["metric"]): float(row["median"])
            for row in rows_of(out)}


def need_torch():
    """A Python with torch and CUDA, or an error saying how to name one."""
    py = torch_python()
    if not py:
        raise RuntimeError("no Python with torch and CUDA here (set TORCH_PYTHON)")
    return py


def gpu_count():
    import shutil
    import subprocess
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    out = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout
    n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        n = min(n, len([d for d in visible.split(",") if d.strip()]))
    return n


def pct(x):
    return f"{x:+.1f} %"


__all__ = ["BIN", "ROOT", "Skip", "check", "shared", "measure", "workdir", "rows_of", "run",
           "need_torch", "gpu_count", "pct", "CHECKS"]
