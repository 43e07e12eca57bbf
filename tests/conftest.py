"""Shared helpers for the CLI and GPU tests: where the binary is, how to run it, whether a GPU
is here, how a usage error looks, a short measurement's CSV rows, the sched scenario's helper
processes, and how to read what the NVTX recording library wrote."""
import csv
import os
import pathlib
import shutil
import subprocess

import pytest

# The tests hold their own CI environment: run by a GitHub Actions job (gpu-perf.yml), the
# binary's annotations and step summary (docs/ci.md) would land in every command's stdout and in
# that job's summary. A test that wants them sets these itself.
for _name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE"):
    os.environ.pop(_name, None)

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = os.environ.get("SYNCBENCH", str(ROOT / "build" / "syncbench"))
# The plain floor make validate holds the harness to (tests/floor/): SYNCBENCH_FLOOR, or
# syncbench-floor beside the binary under test.
FLOOR = os.environ.get("SYNCBENCH_FLOOR") or str(pathlib.Path(BIN).parent / "syncbench-floor")
# the audit's CSV header (src/report/out_csv.c), held by the CLI tests and the GPU tests alike
AUDIT_CSV_COLUMNS = ("pid,rank,local_rank,group,class,range,site,count,blocked_total_us,"
                     "blocked_median_us,blocked_p95_us,bubble_total_us,py_file,py_line,"
                     "py_function,source,operation,fix,scenario,native_site,site_save_us,"
                     "via_file,via_line,via_function,via_source,library,phase,site_from,"
                     "waiter_tid,via_save_us,framework,fix_at,gpu_window")
NVTX_LIB = os.environ.get("NVTX_RECORD_LIB", str(ROOT / "build" / "tests" / "libnvtx_record.so"))
MEASURE_TEST = str(ROOT / "build" / "tests" / "test_measure")
# Every GPU hidden: a binary that touched CUDA before checking its input would exit 3, not 2.
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}
# A short measurement: enough for the GPU tests' margins.
FAST = ("--max-time", "0.5", "--warmup-time", "0.1")


def run(*args, env=None, timeout=900, **kw):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True,
                          env=full_env, timeout=timeout, **kw)


def gpu_available():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return r.returncode == 0 and "GPU" in r.stdout


def torch_python():
    """A Python with torch and a CUDA device for it (TORCH_PYTHON, this one, python3), or None."""
    import sys
    for py in (os.environ.get("TORCH_PYTHON"), sys.executable, shutil.which("python3")):
        if py and subprocess.run([py, "-c", "import torch, sys; "
                                  "sys.exit(0 if torch.cuda.is_available() else 1)"],
                                 capture_output=True).returncode == 0:
            return py
    return None


def require_built(*paths, how="make test-programs"):
    """Fails (never skips) when a program or library the tests build is not there."""
    for need in paths:
        if not os.access(need, os.R_OK):
            pytest.fail(f"{need} not built; run {how}")


def assert_one_line(r, code, message, prog="syncbench"):
    """Exit `code` with one line on stderr, "PROG: ..." holding `message`."""
    assert r.returncode == code, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"{prog}: ")
    assert message in lines[0], lines[0]


def assert_usage_error(r, message, prog="syncbench"):
    """Exit 2 with one line, "PROG: ..." holding `message`, and nothing on stdout."""
    assert_one_line(r, 2, message, prog)
    assert r.stdout == ""


def measure_rows(tmp_path, *args, fast=FAST, env=None):
    """{(variant, params, metric): CSV row} of one short run, which must succeed."""
    out = tmp_path / "out.csv"
    r = run(*args, *fast, "--csv", out, env=env)
    assert r.returncode == 0, r.stderr
    with open(out, newline="") as f:
        return {(row["variant"], row["params"], row["metric"]): row for row in csv.DictReader(f)}


def measure_medians(tmp_path, *args, fast=FAST, env=None):
    """{(variant, params, metric): median} of one short run, which must succeed."""
    rows = measure_rows(tmp_path, *args, fast=fast, env=env)
    return {key: float(row["median"]) for key, row in rows.items()}


def sched_workers():
    """Processes running the sched scenario's helper subcommand, from /proc."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if b"__sched-worker" in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def nvtx_tree(path):
    """Nested ranges from a recording: [(domain, name, colour, [children...]), ...]."""
    root = []
    stack = [root]
    for line in pathlib.Path(path).read_text().splitlines():
        parts = line.split("\t")
        if parts[0] == "push":
            node = (parts[1], parts[2], parts[3], [])
            stack[-1].append(node)
            stack.append(node[3])
        elif parts[0] == "pop":
            assert len(stack) > 1, "pop without push"
            stack.pop()
    assert len(stack) == 1, "ranges left open"
    return root


@pytest.fixture(scope="session", autouse=True)
def built_binary():
    if not os.path.exists(BIN):
        pytest.exit(f"{BIN} not built; run make first", returncode=2)


def capped(seconds=60):
    """preexec_fn for a child that must not take the machine's memory: 1 GiB of address space
    and `seconds` of CPU, so that an old plot tool reading /dev/zero died of MemoryError rather
    than read until the memory ran out."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    return limit


def plot_tool_patched(module, limit_name, limit, args, stdin=None):
    """plot/MODULE.py's main with its size limit LIMIT_NAME set to limit (the real ones take
    seconds to reach), under capped()."""
    import sys
    code = (f"import sys; sys.path.insert(0, {str(ROOT / 'plot')!r}); import {module}\n"
            f"{module}.{limit_name} = {limit}\n"
            f"sys.exit({module}.main({[str(a) for a in args]!r}))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          stdin=stdin, timeout=120, preexec_fn=capped())

